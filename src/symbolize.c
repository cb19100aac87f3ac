// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"
#include "session.h"
#include "knames.h"
#include "usyms.h"
#include "htab.h"

/*
 * Two htab tables map (k1, k2) keys to pointers: stacks by
 * (reference id, process and source), frames by (address, process and
 * leafness).  Stacks and frames live in a bump arena, freed all at once.
 */
struct arena_block {
	struct arena_block *next;
	size_t used, size;
	char data[];
};

struct sym_cache {
	struct htab stacks, frames;
	struct arena_block *arena;
};

static void *arena_alloc(struct sym_cache *c, size_t size)
{
	struct arena_block *b = c->arena;
	size_t bsize = 256 * 1024;
	void *p;

	size = (size + 7) & ~(size_t)7;
	if (!b || b->used + size > b->size) {
		if (size > bsize)
			bsize = size;
		b = malloc(sizeof(*b) + bsize);
		if (!b)
			return NULL;
		b->next = c->arena;
		b->used = 0;
		b->size = bsize;
		c->arena = b;
	}
	p = b->data + b->used;
	b->used += size;
	return p;
}

static void resolve_kernel(struct knames *kn, struct frame *f, __u64 pc)
{
	struct ksym sym;

	if (knames__find(kn, pc, &sym)) {
		f->name = sym.name;
		f->module = sym.module;
		f->offset = f->addr - sym.addr;
	}
}

static void resolve_user(struct usyms *us, __u32 pid, struct frame *f, __u64 pc)
{
	struct usym sym;

	if (!us || usyms__resolve(us, pid, pc, &sym))
		return;
	f->name = sym.name;
	f->module = sym.module;
	if (sym.name)
		f->offset = sym.offset + (f->addr - pc);
}

/*
 * Every frame but the leaf is a return address: the call it belongs to is
 * the instruction before it, so look up addr - 1.  Otherwise a call at the
 * very end of a function is charged to whatever follows it.
 */
static __u64 frame_pc(__u64 addr, bool leaf)
{
	return leaf ? addr : addr - 1;
}

static const struct frame *get_frame(struct sym_cache *c, const struct symbolizer *sym,
				     __u32 pid, bool kernel, __u64 addr, bool leaf)
{
	__u64 b = ((__u64)(kernel ? 0 : pid) << 2) | (kernel << 1) | leaf;
	__u64 pc = frame_pc(addr, leaf);
	struct frame *f;
	struct hent *s;

	s = htab__slot(&c->frames, addr, b, NULL, NULL);
	if (!s)
		return NULL;
	if (s->val)
		return s->val;
	f = arena_alloc(c, sizeof(*f));
	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->kernel = kernel;
	if (kernel)
		resolve_kernel(sym->knames, f, pc);
	else
		resolve_user(sym->usyms, pid, f, pc);
	s->k1 = addr;
	s->k2 = b;
	s->val = f;
	c->frames.nr++;
	return f;
}

static struct stack *symbolize_stack(struct sym_cache *c, const struct symbolizer *sym,
				     __u32 pid, bool kernel, const __u64 *ips, int n)
{
	struct stack *st;

	st = arena_alloc(c, sizeof(*st) + n * sizeof(st->frames[0]));
	if (!st)
		return NULL;
	st->nr = n;
	if (kernel && sym->knames && n <= MAX_STACK_DEPTH) {
		/* One kernel call names the whole stack's new addresses. */
		__u64 pcs[MAX_STACK_DEPTH];

		for (int i = 0; i < n; i++)
			pcs[i] = frame_pc(ips[i], i == 0);
		knames__prepare(sym->knames, pcs, n);
	}
	for (int i = 0; i < n; i++) {
		st->frames[i] = get_frame(c, sym, pid, kernel, ips[i], i == 0);
		if (!st->frames[i])
			return NULL;
	}
	return st;
}

/* Look a stack up in the cache, reading and symbolizing it on a miss. */
static int get_stack(struct profile *p, const struct symbolizer *sym, __u32 pid,
		     bool kernel, const struct stack_ref *ref,
		     const struct stack **out)
{
	struct sym_cache *c = p->cache;
	__u64 ips[MAX_STACK_DEPTH];
	__u64 b = ((__u64)(kernel ? 0 : pid) << 8) | ref->src;
	struct hent *s;
	int n;

	s = htab__slot(&c->stacks, ref->id, b, NULL, NULL);
	if (!s)
		return -ENOMEM;
	if (!s->val) {
		n = session__stack(sym->session, ref, ips);
		if (n < 0)
			return n;
		s->val = symbolize_stack(c, sym, pid, kernel, ips, n);
		if (!s->val)
			return -ENOMEM;
		s->k1 = ref->id;
		s->k2 = b;
		c->stacks.nr++;
	}
	*out = s->val;
	return 0;
}

static void set_part(struct profile *p, const struct symbolizer *sym, __u32 pid,
		     bool kernel, const struct stack_ref *ref, __u8 *state,
		     __s32 *err, const struct stack **st)
{
	int ret;

	*err = ref->err;
	switch (ref->src) {
	case STACK_NONE:
		*state = STATE_NONE;
		return;
	case STACK_MAP:
	case STACK_HASHED:
		ret = get_stack(p, sym, pid, kernel, ref, st);
		if (!ret) {
			*state = STATE_OK;
			return;
		}
		*err = ret;
		break;
	}
	*state = STATE_MISSED;
}

static void note_missed(struct profile *p, __u8 state, __s32 err)
{
	if (state != STATE_MISSED)
		return;
	p->missed_stacks++;
	if (err == -ENOMEM)
		p->missed_enomem = true;
}

struct sym_cache *sym_cache__new(void)
{
	return calloc(1, sizeof(struct sym_cache));
}

void sym_cache__free(struct sym_cache *c)
{
	struct arena_block *b, *next;

	if (!c)
		return;
	for (b = c->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	htab__free(&c->stacks);
	htab__free(&c->frames);
	free(c);
}

int symbolize_prefetch(const struct symbolizer *sym, const struct sample *samples,
		       size_t nr)
{
	struct profile p = { .cache = sym->cache };
	const struct stack *st;
	int err;

	for (size_t i = 0; i < nr; i++) {
		const struct count_key *k = &samples[i].key;

		if (k->user.src == STACK_MAP || k->user.src == STACK_HASHED) {
			err = get_stack(&p, sym, k->pid, false, &k->user, &st);
			if (err == -ENOMEM)
				return err;
		}
		if (k->kern.src == STACK_MAP || k->kern.src == STACK_HASHED) {
			err = get_stack(&p, sym, k->pid, true, &k->kern, &st);
			if (err == -ENOMEM)
				return err;
		}
	}
	return 0;
}

int profile_build(struct profile *p, const struct symbolizer *sym,
		  const struct sample *samples, size_t nr)
{
	memset(p, 0, sizeof(*p));
	p->own_cache = !sym->cache;
	p->cache = sym->cache ? sym->cache : sym_cache__new();
	p->recs = calloc(nr ? nr : 1, sizeof(*p->recs));
	if (!p->cache || !p->recs) {
		profile_free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct count_key *k = &samples[i].key;
		struct record *r = &p->recs[i];

		r->pid = k->pid;
		r->tid = k->tid;
		r->cpu = k->cpu;
		memcpy(r->comm, k->comm, sizeof(r->comm));
		r->comm[sizeof(r->comm) - 1] = '\0';
		r->count = samples[i].count;
		set_part(p, sym, k->pid, false, &k->user, &r->user_state,
			 &r->user_err, &r->user);
		set_part(p, sym, k->pid, true, &k->kern, &r->kern_state,
			 &r->kern_err, &r->kern);
		note_missed(p, r->user_state, r->user_err);
		note_missed(p, r->kern_state, r->kern_err);
	}
	p->nr = nr;
	return 0;
}

void profile_free(struct profile *p)
{
	if (p->own_cache)
		sym_cache__free(p->cache);
	free(p->recs);
	memset(p, 0, sizeof(*p));
}
