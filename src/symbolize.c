// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"
#include "session.h"
#include "ksyms.h"
#include "usyms.h"

/* Open-addressing table of symbolized stacks, keyed by (pid, src, id). */
struct cache_ent {
	__u64 id;
	__u32 pid;		/* 0 for kernel stacks */
	__u32 src;		/* 0: empty slot */
	struct stack *st;
};

struct stack_cache {
	struct cache_ent *ents;
	size_t cap, used;
};

static __u64 mix(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static struct cache_ent *cache_slot(struct stack_cache *c, __u32 pid,
				    __u32 src, __u64 id)
{
	size_t mask = c->cap - 1;
	size_t i = mix(id ^ ((__u64)pid << 32) ^ src) & mask;

	while (c->ents[i].src &&
	       (c->ents[i].pid != pid || c->ents[i].src != src || c->ents[i].id != id))
		i = (i + 1) & mask;
	return &c->ents[i];
}

static int cache_init(struct stack_cache *c, size_t expect)
{
	c->cap = 64;
	while (c->cap < expect * 2)
		c->cap *= 2;
	c->ents = calloc(c->cap, sizeof(*c->ents));
	return c->ents ? 0 : -ENOMEM;
}

static void resolve_kernel(const struct ksyms *ks, struct frame *f, __u64 pc)
{
	struct ksym sym;

	f->kernel = true;
	if (ks && ksyms__find(ks, pc, &sym)) {
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
static struct stack *symbolize_stack(const struct symbolizer *sym, __u32 pid,
				     bool kernel, const __u64 *ips, int n)
{
	struct stack *st;

	st = calloc(1, sizeof(*st) + n * sizeof(st->frames[0]));
	if (!st)
		return NULL;
	st->nr = n;
	for (int i = 0; i < n; i++) {
		struct frame *f = &st->frames[i];
		__u64 pc = i ? ips[i] - 1 : ips[i];

		f->addr = ips[i];
		if (kernel)
			resolve_kernel(sym->ksyms, f, pc);
		else
			resolve_user(sym->usyms, pid, f, pc);
	}
	return st;
}

/* Look a stack up in the cache, reading and symbolizing it on a miss. */
static int get_stack(struct profile *p, const struct symbolizer *sym, __u32 pid,
		     bool kernel, const struct stack_ref *ref,
		     const struct stack **out)
{
	__u64 ips[MAX_STACK_DEPTH];
	struct cache_ent *e;
	int n;

	e = cache_slot(p->cache, kernel ? 0 : pid, ref->src, ref->id);
	if (!e->src) {
		n = session__stack(sym->session, ref, ips);
		if (n < 0)
			return n;
		e->st = symbolize_stack(sym, pid, kernel, ips, n);
		if (!e->st)
			return -ENOMEM;
		e->pid = kernel ? 0 : pid;
		e->src = ref->src;
		e->id = ref->id;
		p->cache->used++;
	}
	*out = e->st;
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

int profile_build(struct profile *p, const struct symbolizer *sym,
		  const struct sample *samples, size_t nr)
{
	memset(p, 0, sizeof(*p));
	p->cache = calloc(1, sizeof(*p->cache));
	p->recs = calloc(nr ? nr : 1, sizeof(*p->recs));
	if (!p->cache || !p->recs || cache_init(p->cache, nr * 2)) {
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
	if (p->cache) {
		for (size_t i = 0; i < p->cache->cap && p->cache->ents; i++)
			free(p->cache->ents[i].st);
		free(p->cache->ents);
		free(p->cache);
	}
	free(p->recs);
	memset(p, 0, sizeof(*p));
}
