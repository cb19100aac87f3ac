// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/symbolize.h"
#include "unwind/unwind.h"
#include "interp/interp.h"
#include "symbols/knames.h"
#include "symbols/usyms.h"
#include "symbols/dwlines.h"
#include "lib/htab.h"
#include "lib/text.h"
#include "lib/util.h"

/*
 * Two htab tables map (k1, k2) keys to pointers: stacks by
 * (reference id, process, kind and source), frames by (address, process,
 * kind and flags).  Stacks and frames live in an arena, freed all at once.
 */
struct sym_cache {
	struct htab stacks, frames;
	/*
	 * (pid, start): an id for the process, 1-based, in place of its pid
	 * in the keys of its stacks and frames.
	 */
	struct htab procs;
	size_t nr_procs;
	struct htab interp_frames;	/* (address, interp_frame_key()) */
	struct htab merged;		/* (user stack, interpreter stack): stack */
	struct htab mappings;		/* frame mappings, by content */
	struct arena mem;
};

/* ---- resolvers, one per frame kind ---- */

static void kernel_prepare(void *ctx, const __u64 *pcs, int n)
{
	knames__prepare(ctx, pcs, n);
}

static void kernel_resolve(void *ctx, __u32 pid, __u32 start, struct frame *f,
			   struct frame_mapping *map)
{
	struct ksym sym;

	if (knames__find(ctx, frame__pc(f), &sym)) {
		f->name = sym.name;
		f->module = sym.module;
		f->offset = f->addr - sym.addr;
	}
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Anonymous executable memory, or a perf map (/tmp/perf-PID.map) naming it. */
static bool is_jit_module(const char *module)
{
	return !module || !strcmp(module, "[anon]") ||
	       (strstr(module, "perf-") && ends_with(module, ".map"));
}

static void native_resolve(void *ctx, __u32 pid, __u32 start, struct frame *f,
			   struct frame_mapping *map)
{
	__u64 pc = frame__pc(f);
	struct usym sym;

	if (usyms__resolve_start(ctx, pid, start, pc, &sym))
		return;
	f->name = sym.name;
	f->module = sym.module;
	*map = (struct frame_mapping){
		.file = sym.module ? sym.module : "",
		.build_id = sym.build_id,
		.start = sym.map_start,
		.limit = sym.map_end,
		.pgoff = sym.map_pgoff,
	};
	/* Unnamed: where it is in its module's file, for -v and the SVG. */
	if (!sym.name) {
		f->offset = sym.file_offset + (f->addr - pc);
		return;
	}
	f->offset = sym.offset + (f->addr - pc);
	if (sym.demangled)
		f->flags |= FRAME_DEMANGLED;
	if (is_jit_module(sym.module))
		f->kind = FRAME_JIT;
}

static void interp_resolve(void *ctx, __u32 pid, __u32 start, struct frame *f,
			   struct frame_mapping *map)
{
	interps__resolve(ctx, pid, f);
}

void symbolizer__set_interps(struct symbolizer *sym, const struct interps *ints)
{
	sym->interps = ints;
	if (ints)
		sym->resolvers[FRAME_INTERP] = (struct resolver){
			.resolve = interp_resolve, .ctx = (void *)ints };
}

void symbolizer__init(struct symbolizer *sym, const struct trace_source *source,
		      struct knames *kn, struct usyms *us, struct sym_cache *cache)
{
	memset(sym, 0, sizeof(*sym));
	sym->source = *source;
	sym->cache = cache;
	if (kn)
		sym->resolvers[FRAME_KERNEL] = (struct resolver){
			.prepare = kernel_prepare, .resolve = kernel_resolve, .ctx = kn };
	if (us) {
		sym->resolvers[FRAME_NATIVE] = (struct resolver){
			.resolve = native_resolve, .ctx = us };
		sym->resolvers[FRAME_JIT] = sym->resolvers[FRAME_NATIVE];
	}
	sym->lines = NULL;
	sym->inlines = false;
}

void symbolizer__set_lines(struct symbolizer *sym, struct usyms *us)
{
	sym->lines = us;
}

void symbolizer__set_inlines(struct symbolizer *sym, bool inlines)
{
	sym->inlines = inlines;
}

/* ---- stacks and frames, cached ---- */

/* The pseudo-frame that says why a walk ended early (--unwind-debug). */
static const char *unwind_end_label(struct sym_cache *c, __u64 end)
{
	size_t len = 48;
	char *label = arena__alloc(&c->mem, len, 1);

	if (label)
		snprintf(label, len, "[unwind: %s]", unwind__end_name(end));
	return label;
}

static bool mapping_eq(const void *val, const void *ctx)
{
	const struct frame_mapping *a = val, *b = ctx;

	return a->start == b->start && a->limit == b->limit && a->pgoff == b->pgoff &&
	       a->file == b->file && a->build_id == b->build_id;
}

/*
 * The cache's copy of m, made on first sight: one per distinct mapping,
 * not per frame.  The strings are the resolver's, compared by address.
 */
static const struct frame_mapping *keep_mapping(struct sym_cache *c,
						const struct frame_mapping *m)
{
	__u64 k1 = htab__hash(m->start, m->limit);
	__u64 k2 = htab__hash(m->pgoff, (uintptr_t)m->file ^ (uintptr_t)m->build_id);
	struct frame_mapping *copy;
	struct hent *s;

	s = htab__slot(&c->mappings, k1, k2, mapping_eq, m);
	if (!s)
		return NULL;
	if (s->val)
		return s->val;
	copy = arena__alloc(&c->mem, sizeof(*copy), _Alignof(struct frame_mapping));
	if (!copy)
		return NULL;
	*copy = *m;
	htab__fill(&c->mappings, s, k1, k2, copy);
	return copy;
}

static const struct resolver *resolver_for(const struct symbolizer *sym, __u8 kind)
{
	return kind < NR_FRAME_KINDS ? &sym->resolvers[kind] : NULL;
}

/*
 * An interpreter's frame is its code object (the other key) and, packed
 * here, the process (pids stay below 2^22, the kernel's PID_MAX_LIMIT),
 * the interpreter's kind, the frame's flags (one code object is the entry
 * of an evaluation-loop call in one stack and not in another) and the low
 * half of its aux word, the instruction.  The high half (CPython's: more
 * of the code object's identity) is compared by interp_frame_eq().
 */
#define PID_BITS 22
_Static_assert(MAX_INTERP_KINDS < 1 << 3 && PID_BITS + 3 + FRAME_FLAG_BITS + 32 <= 64,
	       "an interpreter frame's key holds pid, kind, flags and instruction");

static __u64 interp_frame_key(__u32 pid, const struct trace_frame *tf)
{
	return (__u64)(pid & ((1u << PID_BITS) - 1)) << (64 - PID_BITS) |
	       (__u64)(tf->interp & 7) << (32 + FRAME_FLAG_BITS) |
	       (__u64)tf->flags << 32 | (__u32)tf->aux;
}

static bool interp_frame_eq(const void *val, const void *ctx)
{
	const struct frame *f = val;
	const struct trace_frame *tf = ctx;

	return f->aux == tf->aux;
}

/*
 * Whose stack: the process, and its id in the cache's keys (0 for kernel
 * stacks, the same in every process).
 */
struct owner {
	__u32 pid, start;
	__u64 id;
};

/* The cache's id of process (pid, start), made on first sight; 0: -ENOMEM. */
static __u64 proc_id(struct sym_cache *c, __u32 pid, __u32 start)
{
	struct hent *s = htab__slot(&c->procs, pid, start, NULL, NULL);

	if (!s)
		return 0;
	if (!s->val)
		htab__fill(&c->procs, s, pid, start, htab__id_val(++c->nr_procs));
	return htab__val_id(s->val);
}

/*
 * A named native frame's source line, and with inlines the functions
 * inlined where it is, as frames of their own: from DWARF, once per
 * frame.  0 or -ENOMEM.
 */
static int add_lines(struct sym_cache *c, const struct symbolizer *sym,
		     const struct owner *o, struct frame *f)
{
	struct dwline dl[DWLINES_MAX_DEPTH];
	const struct frame **inl;
	struct frame *v;
	int n, nr = 0;

	if (!sym->lines || f->kind != FRAME_NATIVE || !f->name ||
	    (f->flags & (FRAME_UNWIND_END | FRAME_INTERP_MARK | FRAME_MISSED)))
		return 0;
	n = usyms__lines(sym->lines, o->pid, o->start, frame__pc(f), dl, DWLINES_MAX_DEPTH);
	if (n <= 0)
		return 0;
	/* The last is the function the code is in: named by its symbol. */
	f->file = dl[n - 1].file;
	f->line = dl[n - 1].line;
	if (n == 1)
		return 0;
	v = arena__alloc(&c->mem, (n - 1) * sizeof(*v), _Alignof(struct frame));
	inl = arena__alloc(&c->mem, (n - 1) * sizeof(*inl), _Alignof(struct frame *));
	if (!v || !inl)
		return -ENOMEM;
	for (int i = 0; i < n - 1; i++) {
		if (!dl[i].name)
			continue;
		v[nr] = *f;
		v[nr].name = dl[i].name;
		v[nr].file = dl[i].file;
		v[nr].line = dl[i].line;
		v[nr].offset = 0;
		v[nr].flags = (f->flags & ~FRAME_DEMANGLED) |
			      (dl[i].demangled ? FRAME_DEMANGLED : 0);
		v[nr].inl = NULL;
		v[nr].nr_inl = 0;
		v[nr].inlined = true;
		inl[nr] = &v[nr];
		nr++;
	}
	f->inl = inl;
	f->nr_inl = nr;
	return 0;
}

/*
 * The cache's slot of tf's frame in process o: its table and second key
 * in *table and *k2.  NULL when out of memory.
 */
static struct hent *frame_slot(struct sym_cache *c, const struct owner *o,
			       const struct trace_frame *tf, struct htab **table, __u64 *k2)
{
	htab_eq_fn eq = NULL;

	*table = &c->frames;
	*k2 = ((__u64)tf->interp << 48) | (o->id << 16) | ((__u64)tf->kind << 8) | tf->flags;
	if (tf->kind == FRAME_INTERP) {
		*table = &c->interp_frames;
		*k2 = interp_frame_key(o->pid, tf);
		eq = interp_frame_eq;
	}
	return htab__slot(*table, tf->addr, *k2, eq, tf);
}

/* early: for a prefetch; a frame the report makes is looked up once only. */
static const struct frame *get_frame(struct sym_cache *c, const struct symbolizer *sym,
				     const struct owner *o, const struct trace_frame *tf,
				     bool early)
{
	__u32 pid = o->pid;
	struct frame_mapping map = {};
	const struct resolver *res;
	struct htab *h;
	struct frame *f;
	struct hent *s;
	__u64 k2;

	s = frame_slot(c, o, tf, &h, &k2);
	if (!s)
		return NULL;
	if (s->val)
		return s->val;
	f = arena__alloc(&c->mem, sizeof(*f), _Alignof(struct frame));
	if (!f)
		return NULL;
	*f = (struct frame){ .addr = tf->addr, .aux = tf->aux, .kind = tf->kind,
			     .flags = tf->flags, .interp = tf->interp, .renamed = !early };
	res = resolver_for(sym, tf->kind);
	if (tf->flags & FRAME_UNWIND_END)
		f->name = unwind_end_label(c, tf->addr);
	else if (tf->flags & FRAME_INTERP_MARK)
		f->name = interps__mark_name(sym->interps, tf->interp, tf->addr);
	else if (res && res->resolve)
		res->resolve(res->ctx, pid, o->start, f, &map);
	if (map.file) {
		f->mapping = keep_mapping(c, &map);
		if (!f->mapping)
			return NULL;
	}
	if (add_lines(c, sym, o, f))
		return NULL;
	htab__fill(h, s, tf->addr, k2, f);
	return f;
}

/* Tell each kind's resolver the pcs it is about to be asked for. */
static void prepare_stack(const struct symbolizer *sym, const struct trace_frame *tfs, int n)
{
	__u64 pcs[MAX_STACK_DEPTH];
	int kind = n ? tfs[0].kind : FRAME_NONE;
	const struct resolver *res = resolver_for(sym, kind);

	if (!res || !res->prepare)
		return;
	for (int i = 0; i < n; i++) {
		struct frame f = { .addr = tfs[i].addr, .flags = tfs[i].flags };

		if (tfs[i].kind != kind)
			return;		/* mixed kinds: one by one */
		pcs[i] = frame__pc(&f);
	}
	res->prepare(res->ctx, pcs, n);
}

static struct stack *symbolize_stack(struct sym_cache *c, const struct symbolizer *sym,
				     const struct owner *o, const struct trace_frame *tfs, int n,
				     bool early)
{
	const struct frame *fs[MAX_STACK_DEPTH];
	struct stack *st;
	__u32 nr = 0;

	prepare_stack(sym, tfs, n);
	for (int i = 0; i < n; i++) {
		fs[i] = get_frame(c, sym, o, &tfs[i], early);
		if (!fs[i])
			return NULL;
		nr += 1 + fs[i]->nr_inl;
	}
	st = arena__alloc(&c->mem, sizeof(*st) + nr * sizeof(st->frames[0]),
			  _Alignof(struct stack));
	if (!st)
		return NULL;
	/*
	 * Leaf first: with inlines, a frame's inlined functions, innermost
	 * first, then it.  Without, they stay with the frame (pprof's lines).
	 */
	st->nr = 0;
	for (int i = 0; i < n; i++) {
		for (__u8 j = 0; sym->inlines && j < fs[i]->nr_inl; j++)
			st->frames[st->nr++] = fs[i]->inl[j];
		st->frames[st->nr++] = fs[i];
	}
	return st;
}

/*
 * A frame in JIT code that a prefetch left unnamed, named again by the
 * report: the runtime's perf map may name it since (it is read again at
 * most once a second).  Once per frame and cache, and only to a name in
 * anonymous memory still: a lookup that finds nothing, or finds the
 * address mapped otherwise (the process has exec'd), leaves the frame as
 * it was.  The frames are the cache's own, shared by its stacks: each is
 * named in place.
 */
static int rename_jit(struct sym_cache *c, const struct symbolizer *sym,
		      const struct owner *o, const struct stack *st)
{
	for (__u32 i = 0; i < st->nr; i++) {
		struct frame *f = (struct frame *)st->frames[i];
		const struct resolver *res = resolver_for(sym, f->kind);
		struct frame_mapping map = {};
		struct frame t;

		if (f->renamed || !frame__is_unnamed_jit(f) || !res || !res->resolve)
			continue;
		f->renamed = true;
		t = *f;
		t.module = NULL;
		t.offset = 0;
		res->resolve(res->ctx, o->pid, o->start, &t, &map);
		if (!t.name || !t.module || strcmp(t.module, f->module))
			continue;
		if (map.file && !t.mapping) {
			t.mapping = keep_mapping(c, &map);
			if (!t.mapping)
				return -ENOMEM;
		}
		*f = t;
	}
	return 0;
}

/*
 * The process a stack is named for (none for kernel stacks, the same in
 * every process), and the second half of its key in the cache (*k2).
 * 0 or -ENOMEM.
 */
static int stack_owner(struct sym_cache *c, const struct count_key *k,
		       const struct stack_ref *ref, struct owner *o, __u64 *k2)
{
	*o = (struct owner){};
	if (ref->kind != FRAME_KERNEL) {
		*o = (struct owner){ .pid = k->pid, .start = k->start,
				     .id = proc_id(c, k->pid, k->start) };
		if (!o->id)
			return -ENOMEM;
	}
	*k2 = (o->id << 16) | ((__u64)ref->kind << 8) | ref->src;
	return 0;
}

/*
 * Look a stack up in the cache, reading and symbolizing it on a miss;
 * early: for a prefetch, whose JIT frames the report names again
 * (rename_jit()).
 */
static int get_stack(struct sym_cache *c, const struct symbolizer *sym,
		     const struct count_key *k, const struct stack_ref *ref, bool early,
		     const struct stack **out)
{
	struct trace_frame tfs[MAX_STACK_DEPTH];
	struct owner o;
	struct stack *st;
	struct hent *s;
	__u64 k2;
	int n;

	if (stack_owner(c, k, ref, &o, &k2))
		return -ENOMEM;
	s = htab__slot(&c->stacks, ref->id, k2, NULL, NULL);
	if (!s)
		return -ENOMEM;
	if (!s->val) {
		n = sym->source.read(sym->source.ctx, ref, tfs);
		if (n < 0)
			return n;
		if (n > MAX_STACK_DEPTH)
			n = MAX_STACK_DEPTH;
		st = symbolize_stack(c, sym, &o, tfs, n, early);
		if (!st)
			return -ENOMEM;
		htab__fill(&c->stacks, s, ref->id, k2, st);
	}
	/* Its frames may come from a prefetch's stacks, cached or not. */
	if (!early && ref->kind != FRAME_KERNEL) {
		int err = rename_jit(c, sym, &o, s->val);

		if (err)
			return err;
	}
	*out = s->val;
	return 0;
}

static bool is_stored(const struct stack_ref *ref)
{
	return ref->src == STACK_MAP || ref->src == STACK_HASHED;
}

/* Samples named a chunk at a time, each chunk's unnamed stacks wanted first. */
#define WANT_CHUNK 1024

/*
 * Tell the source the stored stacks of samples[0..nr) (at most WANT_CHUNK)
 * that get_stack() has not named yet; early: not interpreter stacks, as
 * symbolizer__prefetch() names none.  Failures only cost time.
 */
static void want_stacks(struct sym_cache *c, const struct symbolizer *sym,
			const struct sample *samples, size_t nr, bool early)
{
	struct stack_ref *refs;
	struct owner o;
	size_t n = 0;
	__u64 k2;

	if (!sym->source.want)
		return;
	refs = malloc(WANT_CHUNK * NR_PARTS * sizeof(*refs));
	if (!refs)
		return;
	for (size_t i = 0; i < nr && i < WANT_CHUNK; i++) {
		const struct count_key *k = &samples[i].key;

		for (int p = 0; p < NR_PARTS; p++) {
			const struct stack_ref *ref = &k->parts[p];

			if (!is_stored(ref) || (early && p == PART_INTERP) ||
			    stack_owner(c, k, ref, &o, &k2))
				continue;
			if (!htab__get(&c->stacks, ref->id, k2))
				refs[n++] = *ref;
		}
	}
	if (n)
		sym->source.want(sym->source.ctx, refs, n);
	free(refs);
}

static bool is_truncated(const struct stack *st)
{
	return st->nr && (st->frames[st->nr - 1]->flags & FRAME_TRUNCATED);
}

static void set_part(struct records *rs, const struct symbolizer *sym,
		     const struct sample *s, int i, struct part *part)
{
	const struct stack_ref *ref = &s->key.parts[i];
	int err;

	part->err = ref->err;
	if (ref->src == STACK_NONE) {
		part->state = PART_ABSENT;
		return;
	}
	part->state = PART_MISSED;
	if (is_stored(ref)) {
		err = get_stack(rs->cache, sym, &s->key, ref, false, &part->stack);
		if (!err)
			part->state = PART_OK;
		else
			part->err = err;
	}
	if (part->state == PART_OK) {
		if (is_truncated(part->stack))
			rs->truncated += s->count;
		return;
	}
	rs->missed_stacks++;
	if (part->err == -ENOMEM)
		rs->missed_enomem = true;
}

/* ---- interpreter frames in place of their evaluation loop's ---- */

/* Is frame i of an interpreter stack the last of its evaluation loop's call? */
static bool ends_call(const struct stack *in, __u32 i)
{
	return in->frames[i]->kind == FRAME_INTERP && (in->frames[i]->flags & FRAME_INTERP_ENTRY);
}

/*
 * The interpreter stack's evaluation-loop calls: how many (*calls), and
 * whether they are all there, down to the thread's first frame (the last
 * frame ends a call and no mark says frames were left out).
 */
static bool interp_calls(const struct stack *in, __u32 *calls)
{
	__u32 last = 0, n = 0;
	bool cut = false;

	for (__u32 i = 0; i < in->nr; i++) {
		if (in->frames[i]->kind != FRAME_INTERP) {
			cut |= i > 0;	/* a mark after the frames: cut there */
			continue;
		}
		n += ends_call(in, i);
		last = i;
	}
	*calls = n;
	return n && ends_call(in, last) && !cut;
}

/* The mark that says a stack's interpreter frames could not be placed. */
static const struct frame *unaligned_mark(struct sym_cache *c, const struct interps *ints,
					  __u8 kind)
{
	struct frame *f = arena__alloc(&c->mem, sizeof(*f), _Alignof(struct frame));

	if (!f)
		return NULL;
	*f = (struct frame){ .addr = INTERP_MARK_UNALIGNED, .kind = FRAME_NONE,
			     .flags = FRAME_INTERP_MARK, .interp = kind,
			     .name = interps__mark_name(ints, kind, INTERP_MARK_UNALIGNED) };
	return f;
}

/*
 * The user stack with each native frame of the interpreter's evaluation
 * loop replaced by the interpreter frames it ran, innermost first on both
 * sides.
 *
 * Only the innermost native call of the loop changes the interpreter's
 * frame chain, and it does so after its native frame is made and before
 * it is gone: at any moment the interpreter's calls are those of every
 * native evaluation frame but perhaps the innermost, which may be entering
 * or leaving (its frames not linked yet, or unlinked already).  So with
 * the whole interpreter stack, N native evaluation frames face N calls, or
 * N - 1 and the innermost native one stays as it is.  Any other count
 * means a walk stopped early where it cannot be told which: the stack
 * keeps its native frames and gets the interpreter's above a mark, rather
 * than a guess.  A cut interpreter stack (too deep, or a walk ended
 * early) is placed from the innermost call, as it is all there is.
 */
static struct stack *merge_interp(struct sym_cache *c, const struct interps *ints,
				  const struct stack *user, const struct stack *in)
{
	__u32 nu = user ? user->nr : 0, n = 0, j = 0, evals = 0, calls, skip = 0;
	__u8 kind = in->nr ? in->frames[0]->interp : 0;
	bool whole = interp_calls(in, &calls);
	const struct frame *mark = NULL;
	struct stack *st;

	for (__u32 i = 0; i < nu; i++)
		evals += interps__is_eval_frame(ints, kind, user->frames[i]);
	if (whole && evals == calls + 1)
		skip = 1;
	else if (whole && evals && evals != calls) {
		mark = unaligned_mark(c, ints, kind);
		if (!mark)
			return NULL;
	}
	st = arena__alloc(&c->mem, sizeof(*st) + (nu + in->nr + 1) * sizeof(st->frames[0]),
			  _Alignof(struct stack));
	if (!st)
		return NULL;
	for (__u32 i = 0; i < nu; i++) {
		if (interps__is_shim_frame(ints, kind, user->frames[i]))
			continue;
		if (mark || j == in->nr || !interps__is_eval_frame(ints, kind, user->frames[i])) {
			st->frames[n++] = user->frames[i];
			continue;
		}
		if (skip) {
			skip = 0;
			st->frames[n++] = user->frames[i];
			continue;
		}
		do
			st->frames[n++] = in->frames[j];
		while (!ends_call(in, j++) && j < in->nr);
	}
	/* Interpreter frames left over (the native walk stopped early) go outermost. */
	if (mark && j < in->nr)
		st->frames[n++] = mark;
	while (j < in->nr)
		st->frames[n++] = in->frames[j++];
	st->nr = n;
	return st;
}

/*
 * Fold the record's interpreter part into its user part, once per pair of
 * stacks.  A lost user stack stays lost: the interpreter frames alone
 * would read as a whole stack.
 */
static int fold_interp(struct sym_cache *c, const struct interps *ints, struct record *r)
{
	struct part *user = &r->parts[PART_USER], *in = &r->parts[PART_INTERP];
	const struct stack *u = user->state == PART_OK ? user->stack : NULL;
	struct stack *st;
	struct hent *s;

	if (in->state != PART_OK || user->state == PART_MISSED) {
		in->state = PART_ABSENT;
		return 0;
	}
	s = htab__slot(&c->merged, (__u64)(uintptr_t)u, (__u64)(uintptr_t)in->stack, NULL, NULL);
	if (!s)
		return -ENOMEM;
	if (!s->val) {
		st = merge_interp(c, ints, u, in->stack);
		if (!st)
			return -ENOMEM;
		htab__fill(&c->merged, s, (__u64)(uintptr_t)u, (__u64)(uintptr_t)in->stack, st);
	}
	user->stack = s->val;
	user->state = PART_OK;
	in->state = PART_ABSENT;
	return 0;
}

struct sym_cache *sym_cache__new(void)
{
	struct sym_cache *c = calloc(1, sizeof(*c));

	if (c)
		c->mem.block_size = 256 * 1024;
	return c;
}

void sym_cache__forget(struct sym_cache *c)
{
	htab__free(&c->stacks);
	htab__free(&c->frames);
	htab__free(&c->interp_frames);
	htab__free(&c->merged);
	htab__free(&c->mappings);
	htab__free(&c->procs);
	c->nr_procs = 0;
}

void sym_cache__free(struct sym_cache *c)
{
	if (!c)
		return;
	sym_cache__forget(c);
	arena__free(&c->mem);
	free(c);
}

int symbolizer__prefetch(const struct symbolizer *sym, const struct sample *samples,
			 size_t nr)
{
	const struct stack *st;
	int err;

	for (size_t i = 0; i < nr; i++) {
		const struct count_key *k = &samples[i].key;

		if (i % WANT_CHUNK == 0)
			want_stacks(sym->cache, sym, samples + i, nr - i, true);

		/*
		 * Not interpreter stacks: what names them may not be read yet,
		 * and a frame named now is named for good.
		 */
		for (int p = 0; p < NR_PARTS; p++) {
			if (!is_stored(&k->parts[p]) || p == PART_INTERP)
				continue;
			err = get_stack(sym->cache, sym, k, &k->parts[p], true, &st);
			if (err == -ENOMEM)
				return err;
		}
	}
	return 0;
}

int records__init(struct records *rs, const struct symbolizer *sym)
{
	memset(rs, 0, sizeof(*rs));
	rs->own_cache = !sym->cache;
	rs->cache = sym->cache ? sym->cache : sym_cache__new();
	return rs->cache ? 0 : -ENOMEM;
}

int records__add(struct records *rs, const struct symbolizer *sym,
		 const struct sample *samples, size_t nr)
{
	if (util__grow_array((void **)&rs->recs, &rs->cap, rs->nr + nr, sizeof(*rs->recs)))
		goto nomem;
	for (size_t i = 0; i < nr; i++) {
		const struct count_key *k = &samples[i].key;
		struct record *r = &rs->recs[rs->nr];

		if (i % WANT_CHUNK == 0)
			want_stacks(rs->cache, sym, samples + i, nr - i, false);

		*r = (struct record){ .pid = k->pid, .tid = k->tid, .cpu = k->cpu,
				      .what = k->what, .count = samples[i].count };
		memcpy(r->comm, k->comm, sizeof(r->comm));
		r->comm[sizeof(r->comm) - 1] = '\0';
		text__sanitize_str(r->comm);	/* any process names itself */
		for (int p = 0; p < NR_PARTS; p++)
			set_part(rs, sym, &samples[i], p, &r->parts[p]);
		if (fold_interp(rs->cache, sym->interps, r))
			goto nomem;
		rs->nr++;
	}
	return 0;
nomem:
	records__free(rs);
	return -ENOMEM;
}

int records__build(struct records *rs, const struct symbolizer *sym,
		   const struct sample *samples, size_t nr)
{
	int err = records__init(rs, sym);

	return err ? err : records__add(rs, sym, samples, nr);
}

void records__free(struct records *rs)
{
	if (rs->own_cache)
		sym_cache__free(rs->cache);
	free(rs->recs);
	memset(rs, 0, sizeof(*rs));
}
