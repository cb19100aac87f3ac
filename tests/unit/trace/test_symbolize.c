// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The symbolizer on synthetic traces, with no BPF session: a fake trace
 * source hands out stored stacks by reference, fake resolvers name frames
 * by kind, and the records are read back through the writers' iterator and
 * the folded writer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "stacks.h"
#include "trace/symbolize.h"
#include "output/output.h"
#include "interp/interp.h"
#include "bpf/interp/python/pyframe.h"

/* ---- a trace source of stored stacks ---- */

struct stored {
	__u8 src;
	__u64 id;
	int nr;			/* < 0: read() fails with this errno */
	struct trace_frame frames[8];
	int reads;
};

struct fake_source {
	struct stored *stacks;
	int nr;
};

static int fake_read(void *ctx, const struct stack_ref *ref, struct trace_frame *frames)
{
	struct fake_source *fs = ctx;

	for (int i = 0; i < fs->nr; i++) {
		struct stored *st = &fs->stacks[i];

		if (st->src != ref->src || st->id != ref->id)
			continue;
		st->reads++;
		if (st->nr < 0)
			return st->nr;
		for (int j = 0; j < st->nr; j++) {
			frames[j] = st->frames[j];
			/* What the session does: the kind comes with the reference. */
			if (!frames[j].kind)
				frames[j].kind = ref->kind;
			if (j)
				frames[j].flags |= FRAME_RETADDR;
		}
		return st->nr;
	}
	return -ENOENT;
}

/* ---- resolvers that name a frame after its kind, process and pc ---- */

struct fake_names {
	char names[64][48];
	int nr;
	int resolves;
	int prepares, prepared_pcs;
	__u64 last_pcs[8];
	bool jit_unnamed;	/* JIT code not in its perf map yet */
	bool jit_gone;		/* ... nor mapped any more: nothing found */
};

static const char *keep(struct fake_names *fn, const char *s)
{
	if (fn->nr == 64)
		abort();
	snprintf(fn->names[fn->nr], sizeof(fn->names[0]), "%s", s);
	return fn->names[fn->nr++];
}

static void fake_prepare(void *ctx, const __u64 *pcs, int n)
{
	struct fake_names *fn = ctx;

	fn->prepares++;
	fn->prepared_pcs += n;
	memcpy(fn->last_pcs, pcs, (n < 8 ? n : 8) * sizeof(*pcs));
}

/* Kernel text at 0xffff...: "k<pc>"; anything else is not kernel text. */
static void fake_kernel(void *ctx, __u32 pid, __u32 start, struct frame *f,
			struct frame_mapping *map)
{
	struct fake_names *fn = ctx;
	char buf[48];

	fn->resolves++;
	snprintf(buf, sizeof(buf), "k%llx", (unsigned long long)frame__pc(f));
	f->name = keep(fn, buf);
	f->offset = f->addr & 0xf;
}

/* User code: "u<pid>_<pc>" in /bin/x; above 0x7000 it is JIT code. */
static void fake_native(void *ctx, __u32 pid, __u32 start, struct frame *f,
			struct frame_mapping *map)
{
	struct fake_names *fn = ctx;
	char buf[48];

	fn->resolves++;
	if (f->addr == 0xdead)
		return;		/* mapped, but no symbol */
	if ((f->addr & ~0xffull) == 0xe00) {
		f->name = "_PyEval_EvalFrameDefault";
		return;
	}
	if (f->addr >= 0x7000 && fn->jit_gone)
		return;
	if (f->addr >= 0x7000 && fn->jit_unnamed) {
		f->module = "[anon]";
		f->kind = FRAME_JIT;
		return;
	}
	snprintf(buf, sizeof(buf), "u%u_%llx", pid, (unsigned long long)frame__pc(f));
	f->name = keep(fn, buf);
	f->module = f->addr >= 0x7000 ? "[anon]" : "/bin/x";
	if (f->addr >= 0x7000)
		f->kind = FRAME_JIT;
	else
		*map = (struct frame_mapping){ .file = "/bin/x", .build_id = "b1d",
					       .start = 0x1000, .limit = 0x2000, .pgoff = 0x3000 };
}

/* An interpreter's frames: the code object and the instruction offset. */
static void fake_interp(void *ctx, __u32 pid, __u32 start, struct frame *f,
			struct frame_mapping *map)
{
	struct fake_names *fn = ctx;
	char buf[48];

	fn->resolves++;
	if (f->aux >> 32)
		snprintf(buf, sizeof(buf), "py_%llx.%llx (main.py)", (unsigned long long)f->addr,
			 (unsigned long long)(f->aux >> 32));
	else
		snprintf(buf, sizeof(buf), "py_%llx (main.py)", (unsigned long long)f->addr);
	f->name = keep(fn, buf);
}


/* ---- fixtures ---- */

#define KSTACK 1	/* ids of the stored stacks */
#define USTACK 2
#define USTACK2 3
#define BROKEN 4

static struct stored stored[] = {
	{ .src = STACK_MAP, .id = KSTACK, .nr = 3,
	  .frames = { { .addr = 0xffff0010 }, { .addr = 0xffff0020 }, { .addr = 0xffff0030 } } },
	{ .src = STACK_MAP, .id = USTACK, .nr = 3,
	  .frames = { { .addr = 0x1010 }, { .addr = 0x7020 }, { .addr = 0x1030 } } },
	{ .src = STACK_HASHED, .id = USTACK2, .nr = 2,
	  .frames = { { .addr = 0xdead }, { .addr = 0x1030 } } },
	{ .src = STACK_MAP, .id = BROKEN, .nr = -EIO },
};

struct fixture {
	struct fake_source src;
	struct fake_names names;
	struct symbolizer sym;
};

static void fixture_init(struct fixture *fx, struct sym_cache *cache)
{
	struct trace_source ts = { .read = fake_read, .ctx = &fx->src };

	for (size_t i = 0; i < sizeof(stored) / sizeof(stored[0]); i++)
		stored[i].reads = 0;
	memset(fx, 0, sizeof(*fx));
	fx->src = (struct fake_source){ stored, sizeof(stored) / sizeof(stored[0]) };
	symbolizer__init(&fx->sym, &ts, NULL, NULL, cache);
	fx->sym.resolvers[FRAME_KERNEL] = (struct resolver){
		.prepare = fake_prepare, .resolve = fake_kernel, .ctx = &fx->names };
	fx->sym.resolvers[FRAME_NATIVE] = (struct resolver){
		.resolve = fake_native, .ctx = &fx->names };
	fx->sym.resolvers[FRAME_JIT] = fx->sym.resolvers[FRAME_NATIVE];
}

static struct stack_ref ref(__u8 src, __u8 kind, __u64 id, __s32 err)
{
	return (struct stack_ref){ .src = src, .kind = kind, .id = id, .err = err };
}

static struct sample sample(__u32 pid, const char *comm, __u64 count,
			    struct stack_ref user, struct stack_ref kern)
{
	struct sample s = { .count = count };

	s.key.pid = pid;
	s.key.parts[PART_USER] = user;
	s.key.parts[PART_KERNEL] = kern;
	snprintf(s.key.comm, sizeof(s.key.comm), "%s", comm);
	return s;
}

static const struct trace_view both = {
	.parts = { [PART_KERNEL] = true, [PART_USER] = true },
};

/* A record's frames root first, ";"-joined, as the writers see them. */
static void path(const struct record *r, const struct trace_view *v, char *buf, size_t sz)
{
	struct trace_iter it;
	size_t n = 0;

	buf[0] = '\0';
	trace_iter__init(&it, r, v);
	for (__u32 i = 0; i < it.len && n < sz; i++) {
		const struct frame *f = trace_iter__frame(&it, i);

		n += snprintf(buf + n, sz - n, "%s%s", i ? ";" : "",
			      f->name ? f->name : "[unknown]");
	}
}

/* ---- tests ---- */

/*
 * Frames come out root first: user root..leaf, then kernel root..leaf.
 * Every frame but a stack's leaf is named at its address - 1.
 */
TEST(names_by_kind_root_first)
{
	struct sample s[] = {
		sample(42, "burn", 7, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
	};
	struct records rs;
	struct fixture fx;
	char buf[512];

	fixture_init(&fx, NULL);
	CHECK_INT(records__build(&rs, &fx.sym, s, 1), 0);
	CHECK_INT(rs.nr, 1);
	CHECK_INT(rs.recs[0].count, 7);
	CHECK_STR(rs.recs[0].comm, "burn");
	path(&rs.recs[0], &both, buf, sizeof(buf));
	CHECK_STR(buf, "u42_102f;u42_701f;u42_1010;kffff002f;kffff001f;kffff0010");
	/* The JIT frame was refined by its resolver; the others keep their kind. */
	CHECK_INT(rs.recs[0].parts[PART_USER].stack->frames[1]->kind, FRAME_JIT);
	CHECK_INT(rs.recs[0].parts[PART_USER].stack->frames[0]->kind, FRAME_NATIVE);
	CHECK_INT(rs.recs[0].parts[PART_KERNEL].stack->frames[0]->kind, FRAME_KERNEL);
	/* The kernel resolver was told the whole stack's pcs in one go. */
	CHECK_INT(fx.names.prepares, 1);
	CHECK_INT(fx.names.prepared_pcs, 3);
	CHECK(fx.names.last_pcs[0] == 0xffff0010 && fx.names.last_pcs[2] == 0xffff002f);
	CHECK_INT(rs.missed_stacks, 0);
	records__free(&rs);
}

/* Each stack is read once per process (kernel stacks once), each frame named once. */
TEST(stacks_and_frames_cached)
{
	struct sample s[] = {
		sample(1, "a", 1, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
		sample(1, "a", 2, ref(STACK_HASHED, FRAME_NATIVE, USTACK2, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
		sample(2, "b", 4, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
	};
	struct records rs;
	struct fixture fx;
	char buf[512];

	fixture_init(&fx, NULL);
	s[2].key.what = COUNT_OFF_CPU;	/* a record says what its key counted */
	CHECK_INT(records__build(&rs, &fx.sym, s, 3), 0);
	CHECK_INT(rs.recs[1].what, COUNT_ON_CPU);
	CHECK_INT(rs.recs[2].what, COUNT_OFF_CPU);
	CHECK_INT(stored[0].reads, 1);		/* the kernel stack */
	CHECK_INT(stored[1].reads, 2);		/* USTACK in pid 1 and pid 2 */
	CHECK_INT(stored[2].reads, 1);
	/* 3 kernel + 3 (pid 1) + 2 new (pid 1: 0xdead leaf; 0x1030 as a
	 * return address again is cached) + 3 (pid 2) frames. */
	CHECK_INT(fx.names.resolves, 3 + 3 + 1 + 3);
	CHECK(rs.recs[0].parts[PART_KERNEL].stack == rs.recs[2].parts[PART_KERNEL].stack);
	CHECK(rs.recs[0].parts[PART_USER].stack->frames[2] ==
	      rs.recs[1].parts[PART_USER].stack->frames[1]);
	path(&rs.recs[1], &both, buf, sizeof(buf));
	CHECK_STR(buf, "u1_102f;[unknown];kffff002f;kffff001f;kffff0010");
	path(&rs.recs[2], &both, buf, sizeof(buf));
	CHECK_STR(buf, "u2_102f;u2_701f;u2_1010;kffff002f;kffff001f;kffff0010");
	records__free(&rs);
}

/* A resolver's mapping is kept once, whatever the frames or processes in it. */
TEST(frames_share_their_mapping)
{
	struct sample s[] = {
		sample(1, "a", 1, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
		sample(2, "b", 1, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, 0)),
	};
	const struct stack *u1, *u2;
	const struct frame_mapping *m;
	struct records rs;
	struct fixture fx;

	fixture_init(&fx, NULL);
	CHECK_INT(records__build(&rs, &fx.sym, s, 2), 0);
	u1 = rs.recs[0].parts[PART_USER].stack;
	u2 = rs.recs[1].parts[PART_USER].stack;
	m = u1->frames[0]->mapping;
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(m->file, "/bin/x");
		CHECK_STR(m->build_id, "b1d");
		CHECK(m->start == 0x1000 && m->limit == 0x2000 && m->pgoff == 0x3000);
	}
	CHECK(u1->frames[2]->mapping == m);
	CHECK(u2->frames[0]->mapping == m && u2->frames[2]->mapping == m);
	/* JIT code in no mapping the resolver knows, and kernel frames: none. */
	CHECK(u1->frames[1]->mapping == NULL);
	CHECK(rs.recs[0].parts[PART_KERNEL].stack->frames[0]->mapping == NULL);
	records__free(&rs);
}

/* Lost, unreadable and absent stacks; the counts that go with them. */
TEST(missed_and_absent_parts)
{
	struct sample s[] = {
		sample(1, "a", 1, ref(STACK_MISSED, FRAME_NATIVE, 0, -ENOMEM),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
		sample(1, "a", 1, ref(STACK_MAP, FRAME_NATIVE, BROKEN, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT)),
		sample(1, "a", 1, ref(STACK_MAP, FRAME_NATIVE, 99, 0),
		       ref(STACK_MISSED, FRAME_KERNEL, 0, -EEXIST)),
	};
	struct records rs;
	struct fixture fx;
	char buf[512];

	fixture_init(&fx, NULL);
	CHECK_INT(records__build(&rs, &fx.sym, s, 3), 0);
	CHECK_INT(rs.recs[0].parts[PART_USER].state, PART_MISSED);
	CHECK_INT(rs.recs[0].parts[PART_USER].err, -ENOMEM);
	CHECK_INT(rs.recs[1].parts[PART_USER].state, PART_MISSED);
	CHECK_INT(rs.recs[1].parts[PART_USER].err, -EIO);
	CHECK_INT(rs.recs[1].parts[PART_KERNEL].state, PART_ABSENT);
	CHECK_INT(rs.recs[2].parts[PART_USER].err, -ENOENT);
	CHECK_INT(rs.missed_stacks, 4);
	CHECK(rs.missed_enomem);
	path(&rs.recs[0], &both, buf, sizeof(buf));
	CHECK_STR(buf, "[Missed User Stack];kffff002f;kffff001f;kffff0010");
	path(&rs.recs[1], &both, buf, sizeof(buf));
	CHECK_STR(buf, "[Missed User Stack]");
	path(&rs.recs[2], &both, buf, sizeof(buf));
	CHECK_STR(buf, "[Missed User Stack];[Missed Kernel Stack]");
	records__free(&rs);
}

/* The view: hidden parts, and the delimiter only between two read parts. */
TEST(iterator_views)
{
	struct sample s[] = {
		sample(1, "a", 1, ref(STACK_HASHED, FRAME_NATIVE, USTACK2, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
		sample(1, "a", 1, ref(STACK_MISSED, FRAME_NATIVE, 0, -EEXIST),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
	};
	struct trace_view delim = both, user = { .parts = { [PART_USER] = true },
						 .delimited = true };
	struct records rs;
	struct fixture fx;
	struct trace_iter it;
	char buf[512];

	delim.delimited = true;
	fixture_init(&fx, NULL);
	CHECK_INT(records__build(&rs, &fx.sym, s, 2), 0);
	path(&rs.recs[0], &delim, buf, sizeof(buf));
	CHECK_STR(buf, "u1_102f;[unknown];-;kffff002f;kffff001f;kffff0010");
	trace_iter__init(&it, &rs.recs[0], &delim);
	CHECK_INT(it.len, 6);
	CHECK(trace_iter__frame(&it, 2)->flags & FRAME_DELIMITER);
	CHECK(trace_iter__frame(&it, 6) == NULL);
	CHECK(!(trace_iter__frame(&it, 5)->flags & FRAME_RETADDR));	/* the leaf */
	CHECK(trace_iter__frame(&it, 4)->flags & FRAME_RETADDR);
	path(&rs.recs[1], &delim, buf, sizeof(buf));
	CHECK_STR(buf, "[Missed User Stack];kffff002f;kffff001f;kffff0010");
	path(&rs.recs[0], &user, buf, sizeof(buf));
	CHECK_STR(buf, "u1_102f;[unknown]");
	records__free(&rs);
}

/* A prefetch fills the shared cache: the report reads nothing again. */
TEST(prefetch_then_build)
{
	struct sample s[] = {
		sample(1, "a", 3, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
	};
	struct sym_cache *cache = sym_cache__new();
	struct records rs;
	struct fixture fx;
	int resolves;

	CHECK(cache != NULL);
	fixture_init(&fx, cache);
	CHECK_INT(symbolizer__prefetch(&fx.sym, s, 1), 0);
	CHECK_INT(stored[0].reads + stored[1].reads, 2);
	resolves = fx.names.resolves;
	CHECK_INT(records__build(&rs, &fx.sym, s, 1), 0);
	CHECK_INT(stored[0].reads + stored[1].reads, 2);
	CHECK_INT(fx.names.resolves, resolves);
	CHECK(!rs.own_cache);
	records__free(&rs);
	sym_cache__free(cache);
}

/* What want() was told, call by call: each reference's id. */
struct wants {
	struct fake_source src;
	int calls;
	__u64 ids[4][8];
	int n[4];
};

static int wants_read(void *ctx, const struct stack_ref *ref, struct trace_frame *frames)
{
	struct wants *w = ctx;

	return fake_read(&w->src, ref, frames);
}

static void wants_want(void *ctx, const struct stack_ref *refs, size_t n)
{
	struct wants *w = ctx;
	int c = w->calls++;

	for (size_t i = 0; c < 4 && i < n && i < 8; i++)
		w->ids[c][w->n[c]++] = refs[i].id;
}

/*
 * The source is told the stacks a pass is about to read before it reads
 * them, so that it can fetch them in one go: every stored stack not named
 * yet, never one the cache has, nor a part that holds no stack.
 */
TEST(want_unnamed_stacks_first)
{
	struct sample s[] = {
		sample(1, "a", 3, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
		sample(1, "a", 1, ref(STACK_HASHED, FRAME_NATIVE, USTACK2, 0),
		       ref(STACK_NONE, 0, 0, 0)),
	};
	struct wants w = { .src = { stored, sizeof(stored) / sizeof(stored[0]) } };
	struct trace_source ts = { .read = wants_read, .want = wants_want, .ctx = &w };
	struct sym_cache *cache = sym_cache__new();
	struct symbolizer sym;
	struct records rs;

	CHECK(cache != NULL);
	for (size_t i = 0; i < sizeof(stored) / sizeof(stored[0]); i++)
		stored[i].reads = 0;
	symbolizer__init(&sym, &ts, NULL, NULL, cache);
	CHECK_INT(symbolizer__prefetch(&sym, s, 1), 0);
	CHECK_INT(w.calls, 1);
	CHECK_INT(w.n[0], 2);
	CHECK(w.ids[0][0] + w.ids[0][1] == USTACK + KSTACK && w.ids[0][0] != w.ids[0][1]);
	/* The report: only the stack the prefetch did not name. */
	CHECK_INT(records__build(&rs, &sym, s, 2), 0);
	CHECK_INT(w.calls, 2);
	CHECK_INT(w.n[1], 1);
	CHECK(w.ids[1][0] == USTACK2);
	CHECK_INT(stored[0].reads + stored[1].reads + stored[2].reads, 3);
	/* All named: nothing to want, no call. */
	records__free(&rs);
	CHECK_INT(records__build(&rs, &sym, s, 2), 0);
	CHECK_INT(w.calls, 2);
	records__free(&rs);
	sym_cache__free(cache);
}

/*
 * A prefetch names stacks while the process runs on: a frame in JIT code
 * its perf map does not name yet is named again by the report, once the
 * map does, without reading the stack again; once, and then it stays.  A
 * lookup that still finds no name leaves the frame as it was.
 */
TEST(report_renames_unnamed_jit)
{
	struct sample s[] = {
		sample(1, "a", 3, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
	};
	struct sym_cache *cache = sym_cache__new();
	struct trace_iter it;
	struct records rs;
	struct fixture fx;
	char buf[256];
	int resolves;

	CHECK(cache != NULL);
	fixture_init(&fx, cache);
	fx.names.jit_unnamed = true;
	CHECK_INT(symbolizer__prefetch(&fx.sym, s, 1), 0);
	fx.names.jit_unnamed = false;
	CHECK_INT(records__build(&rs, &fx.sym, s, 1), 0);
	CHECK_INT(stored[0].reads + stored[1].reads, 2);	/* cached */
	path(&rs.recs[0], &both, buf, sizeof(buf));
	CHECK_STR(buf, "u1_102f;u1_701f;u1_1010;kffff002f;kffff001f;kffff0010");
	records__free(&rs);
	resolves = fx.names.resolves;
	CHECK_INT(records__build(&rs, &fx.sym, s, 1), 0);
	CHECK_INT(fx.names.resolves, resolves);
	records__free(&rs);
	sym_cache__free(cache);

	/* Gone by the report (the lookup finds nothing): as the prefetch left it. */
	cache = sym_cache__new();
	CHECK(cache != NULL);
	fixture_init(&fx, cache);
	fx.names.jit_unnamed = true;
	CHECK_INT(symbolizer__prefetch(&fx.sym, s, 1), 0);
	fx.names.jit_gone = true;
	CHECK_INT(records__build(&rs, &fx.sym, s, 1), 0);
	path(&rs.recs[0], &both, buf, sizeof(buf));
	CHECK_STR(buf, "u1_102f;[unknown];u1_1010;kffff002f;kffff001f;kffff0010");
	trace_iter__init(&it, &rs.recs[0], &both);
	CHECK_STR(trace_iter__frame(&it, 1)->module, "[anon]");
	records__free(&rs);
	sym_cache__free(cache);
}

/* No resolver for a kind: its frames are [unknown], never dropped. */
TEST(no_resolvers)
{
	struct sample s[] = {
		sample(1, "a", 1, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_MAP, FRAME_KERNEL, KSTACK, 0)),
	};
	struct fake_source src = { stored, sizeof(stored) / sizeof(stored[0]) };
	struct trace_source ts = { .read = fake_read, .ctx = &src };
	struct symbolizer sym;
	struct records rs;
	char *out;

	symbolizer__init(&sym, &ts, NULL, NULL, NULL);
	CHECK_INT(records__build(&rs, &sym, s, 1), 0);
	out = folded(&rs, &both);
	CHECK_STR(out, "a;[unknown];[unknown];[unknown];[unknown];[unknown];[unknown] 1\n");
	free(out);
	records__free(&rs);
}

/* Any process names itself: the comm is made safe to print. */
TEST(unsafe_comm)
{
	struct sample s[] = {
		sample(1, "\033]0;owned\a\033[2J", 1, ref(STACK_NONE, 0, 0, 0),
		       ref(STACK_NONE, 0, 0, 0)),
		sample(2, "x\xef\xbf\xbf\xc3", 1, ref(STACK_NONE, 0, 0, 0),
		       ref(STACK_NONE, 0, 0, 0)),
	};
	struct fake_source src = { stored, sizeof(stored) / sizeof(stored[0]) };
	struct trace_source ts = { .read = fake_read, .ctx = &src };
	struct symbolizer sym;
	struct records rs;

	symbolizer__init(&sym, &ts, NULL, NULL, NULL);
	CHECK_INT(records__build(&rs, &sym, s, 2), 0);
	CHECK_STR(rs.recs[0].comm, "?]0;owned??[2J");
	CHECK_STR(rs.recs[1].comm, "x????");
	records__free(&rs);
}

/*
 * The folded output of samples s[0..n) over the stored stacks st[0..nr),
 * named by the fake native and interpreter resolvers, which count their
 * calls in names.
 */
static char *folded_mixed(struct stored *st, size_t nr, const struct sample *s, size_t n,
			  struct fake_names *names)
{
	struct fake_source src = { st, nr };
	struct trace_source ts = { .read = fake_read, .ctx = &src };
	struct symbolizer sym;
	struct records rs;
	char *out = NULL;

	symbolizer__init(&sym, &ts, NULL, NULL, NULL);
	sym.resolvers[FRAME_NATIVE] = (struct resolver){ .resolve = fake_native, .ctx = names };
	sym.resolvers[FRAME_INTERP] = (struct resolver){ .resolve = fake_interp, .ctx = names };
	CHECK_INT(records__build(&rs, &sym, s, n), 0);
	out = folded(&rs, &both);
	records__free(&rs);
	return out;
}

/*
 * A new kind of frame needs a resolver and nothing else: interpreter frames
 * stored among native ones are named by theirs, and the folded writer,
 * which knows nothing of them, prints them in place.
 */
#define MIXED 5
TEST(new_kind_needs_only_a_resolver)
{
	struct stored mixed[] = {
		{ .src = STACK_HASHED, .id = MIXED, .nr = 4, .frames = {
			{ .addr = 0x1010, .kind = FRAME_NATIVE },
			{ .addr = 0xc0de01, .aux = 12, .kind = FRAME_INTERP },
			{ .addr = 0xc0de02, .aux = 40, .kind = FRAME_INTERP },
			{ .addr = 0x1030, .kind = FRAME_NATIVE } } },
	};
	struct sample s[] = {
		sample(5, "python3", 9, ref(STACK_HASHED, FRAME_NONE, MIXED, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT)),
	};
	struct fake_names names = {};
	char *out = folded_mixed(mixed, 1, s, 1, &names);

	CHECK_STR(out, "python3;u5_102f;py_c0de02 (main.py);py_c0de01 (main.py);u5_1010 9\n");
	free(out);
}

/*
 * Interpreter frames at one address and instruction whose aux words differ
 * above the instruction (CPython: code objects of different identities made
 * at one address) are different frames, each named by its own.
 */
#define SAME_LOW 7
TEST(interp_frames_differ_by_whole_aux)
{
	struct stored two[] = {
		{ .src = STACK_HASHED, .id = MIXED, .nr = 1, .frames = {
			{ .addr = 0xc0de01, .aux = 12, .kind = FRAME_INTERP } } },
		{ .src = STACK_HASHED, .id = SAME_LOW, .nr = 1, .frames = {
			{ .addr = 0xc0de01, .aux = 12 | 0xabcull << 32, .kind = FRAME_INTERP } } },
	};
	struct sample s[] = {
		sample(5, "python3", 2, ref(STACK_HASHED, FRAME_NONE, MIXED, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT)),
		sample(5, "python3", 3, ref(STACK_HASHED, FRAME_NONE, SAME_LOW, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT)),
		sample(5, "python3", 4, ref(STACK_HASHED, FRAME_NONE, MIXED, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT)),
	};
	struct fake_names names = {};
	char *out = folded_mixed(two, 2, s, 3, &names);

	CHECK_STR(out, "python3;py_c0de01.abc (main.py) 3\npython3;py_c0de01 (main.py) 6\n");
	CHECK_INT(names.resolves, 2);
	free(out);
}

/* A stack cut at the depth limit counts its samples, once per record part. */
#define CUT 6
TEST(truncated_stacks_counted)
{
	struct stored cut[] = {
		{ .src = STACK_MAP, .id = CUT, .nr = 2, .frames = {
			{ .addr = 0x1010 }, { .addr = 0x1020, .flags = FRAME_TRUNCATED } } },
		{ .src = STACK_MAP, .id = USTACK, .nr = 1, .frames = { { .addr = 0x1010 } } },
	};
	struct fake_source src = { cut, 2 };
	struct trace_source ts = { .read = fake_read, .ctx = &src };
	struct sample s[] = {
		sample(1, "a", 5, ref(STACK_MAP, FRAME_NATIVE, CUT, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT)),
		sample(2, "b", 3, ref(STACK_MAP, FRAME_NATIVE, CUT, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT)),
		sample(1, "a", 7, ref(STACK_MAP, FRAME_NATIVE, USTACK, 0),
		       ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT)),
	};
	struct symbolizer sym;
	struct records rs;

	symbolizer__init(&sym, &ts, NULL, NULL, NULL);
	CHECK_INT(records__build(&rs, &sym, s, 3), 0);
	CHECK_INT(rs.truncated, 5 + 3);
	CHECK(rs.recs[0].parts[PART_USER].stack->frames[1]->flags & FRAME_TRUNCATED);
	records__free(&rs);
}

/* ---- Python frames folded into native stacks ---- */

#define PY_E(a) { .addr = (a), .aux = PY_WORD_ENTRY, .kind = FRAME_INTERP, \
		   .flags = FRAME_INTERP_ENTRY, .interp = PY_KIND }
#define PY_F(a) { .addr = (a), .kind = FRAME_INTERP, .interp = PY_KIND }

static struct stored py_stored[] = {
	/* Leaf first: C code, the loop running A and B, C code, the loop running C, main. */
	{ .src = STACK_HASHED, .id = 1, .nr = 5,
	  .frames = { { .addr = 0x1010 }, { .addr = 0xe01 }, { .addr = 0x1030 },
		      { .addr = 0xe02 }, { .addr = 0x1050 } } },
	{ .src = STACK_HASHED, .id = 2, .nr = 3, .frames = { PY_F(0xa), PY_E(0xb), PY_E(0xc) } },
	/* The native walk stopped after one loop frame. */
	{ .src = STACK_HASHED, .id = 3, .nr = 2, .frames = { { .addr = 0x1010 }, { .addr = 0xe01 } } },
	/* A thread without the GIL: the marker comes first. */
	{ .src = STACK_HASHED, .id = 4, .nr = 2,
	  .frames = { { .addr = PY_MARK_NO_GIL, .kind = FRAME_NONE, .flags = FRAME_INTERP_MARK,
			.interp = PY_KIND }, PY_E(0xa) } },
};

/* CPython's row of the registry, not started: it names marks and its loop. */
static struct interps *py_fixture(struct fixture *fx)
{
	struct interp_config ic = {};
	struct interps *ints = interps__new(interp_registry, interp_registry_len, &ic);

	if (!ints)
		abort();
	fixture_init(fx, NULL);
	fx->src = (struct fake_source){ py_stored, sizeof(py_stored) / sizeof(py_stored[0]) };
	symbolizer__set_interps(&fx->sym, ints);
	fx->sym.resolvers[FRAME_INTERP] = (struct resolver){
		.resolve = fake_interp, .ctx = &fx->names };
	return ints;
}

static struct sample py_sample(__u64 user, __u8 user_src, __u64 py)
{
	struct sample s = sample(7, "python3", 1, ref(user_src, FRAME_NATIVE, user, -ENOMEM),
				 ref(STACK_NONE, FRAME_KERNEL, 0, -EFAULT));

	s.key.parts[PART_INTERP] = ref(py ? STACK_HASHED : STACK_NONE, FRAME_INTERP, py, 0);
	return s;
}

/*
 * Each _PyEval_EvalFrameDefault frame gives way to the Python frames it ran,
 * up to and with the one flagged as its entry; natives between stay.  One
 * loop frame more than calls: the innermost is entering or leaving and
 * stays; fewer: [python: unaligned], no guess.
 */
TEST(python_frames_in_place_of_the_loop)
{
	struct sample s[] = {
		py_sample(1, STACK_HASHED, 2),	/* as many loops as calls */
		py_sample(3, STACK_HASHED, 2),	/* fewer loops: not aligned, marked */
		py_sample(1, STACK_HASHED, 4),	/* one loop more: the innermost enters; no GIL */
		py_sample(1, STACK_HASHED, 0),	/* no Python frames: native as is */
		py_sample(1, STACK_MISSED, 2),	/* a lost user stack stays lost */
		py_sample(1, STACK_HASHED, 2),	/* the first pair again */
	};
	const struct trace_view user = { .parts = { [PART_USER] = true } };
	struct interps *ints;
	struct records rs;
	struct fixture fx;
	char buf[512];

	ints = py_fixture(&fx);
	CHECK_INT(records__build(&rs, &fx.sym, s, 6), 0);
	path(&rs.recs[0], &user, buf, sizeof(buf));
	CHECK_STR(buf, "u7_104f;py_c (main.py);u7_102f;py_b (main.py);py_a (main.py);u7_1010");
	path(&rs.recs[1], &user, buf, sizeof(buf));
	CHECK_STR(buf, "py_c (main.py);py_b (main.py);py_a (main.py);[python: unaligned];"
		       "_PyEval_EvalFrameDefault;u7_1010");
	path(&rs.recs[2], &user, buf, sizeof(buf));
	CHECK_STR(buf, "u7_104f;py_a (main.py);[GIL released];u7_102f;_PyEval_EvalFrameDefault;u7_1010");
	path(&rs.recs[3], &user, buf, sizeof(buf));
	CHECK_STR(buf, "u7_104f;_PyEval_EvalFrameDefault;u7_102f;_PyEval_EvalFrameDefault;u7_1010");
	CHECK_INT(rs.recs[4].parts[PART_USER].state, PART_MISSED);
	/* The Python part is never a part of its own. */
	for (int i = 0; i < 6; i++)
		CHECK_INT(rs.recs[i].parts[PART_INTERP].state, PART_ABSENT);
	/* The same pair of stacks is folded once, another pair apart. */
	CHECK(rs.recs[0].parts[PART_USER].stack == rs.recs[5].parts[PART_USER].stack);
	CHECK(rs.recs[0].parts[PART_USER].stack != rs.recs[2].parts[PART_USER].stack);
	records__free(&rs);
	interps__free(ints);
}

/* ---- CPython's stored words, read through its row of the registry ---- */

struct py_words {
	__u64 id;
	int n;
	__u32 end;
	__u64 words[8];
};

/* As the walker stores them: two words a frame, innermost first. */
static const struct py_words py_words[] = {
	/* a, b (its loop's entry), c (entry); no GIL, cut at the walk's depth. */
	{ .id = 10, .n = 6, .end = INTERP_END(PY_KIND, (PY_END_DEPTH + 1) | PY_END_NO_GIL),
	  .words = { 0xa0, 5, 0xb0, 7 | PY_WORD_ENTRY, 0xc0, 9 | PY_WORD_ENTRY } },
	/* One frame, the whole stack, the GIL held; a half frame after it. */
	{ .id = 11, .n = 3, .end = INTERP_END(PY_KIND, PY_END_ROOT + 1),
	  .words = { 0xa0, 3 | PY_WORD_ENTRY, 0xd0 } },
};

struct py_words_source {
	struct fake_source *native;
	const struct interps *ints;
};

/* The interpreter part decoded as the session decodes it; the rest stored. */
static int py_words_read(void *ctx, const struct stack_ref *ref, struct trace_frame *frames)
{
	struct py_words_source *pws = ctx;

	if (ref->kind != FRAME_INTERP)
		return fake_read(pws->native, ref, frames);
	for (size_t i = 0; i < sizeof(py_words) / sizeof(py_words[0]); i++)
		if (py_words[i].id == ref->id)
			return interps__decode(pws->ints, py_words[i].words, py_words[i].n,
					       py_words[i].end, frames);
	return -ENOENT;
}

static void check_py_frame(const struct trace_frame *f, __u64 addr, __u32 instr, bool entry)
{
	CHECK_INT(f->addr, addr);
	CHECK_INT(f->aux & PY_INSTR_MASK, instr);
	CHECK_INT(f->kind, FRAME_INTERP);
	CHECK_INT(f->flags, entry ? FRAME_INTERP_ENTRY : 0);
	CHECK_INT(f->interp, PY_KIND);
}

static void check_py_mark(const struct trace_frame *f, __u64 mark)
{
	CHECK_INT(f->addr, mark);
	CHECK_INT(f->kind, FRAME_NONE);
	CHECK_INT(f->flags, FRAME_INTERP_MARK);
	CHECK_INT(f->interp, PY_KIND);
}

/*
 * CPython's decode: a frame of every two words, the entry bit its flag;
 * the GIL mark before the frames, the depth mark after them.
 */
TEST(python_words_decoded)
{
	struct interp_config ic = {};
	struct interps *ints = interps__new(interp_registry, interp_registry_len, &ic);
	struct trace_frame fr[MAX_STACK_DEPTH];
	const __u64 *w = py_words[0].words;
	const __u64 ident_words[] = {
		py_word_code(0x7f00c0de0010ull, 0xfedcba987654ull),
		py_word_instr(5 | PY_WORD_ENTRY, 0xfedcba987654ull),
	};

	CHECK(ints != NULL);
	if (!ints)
		return;
	memset(fr, 0xff, sizeof(fr));
	CHECK_INT(interps__decode(ints, w, 6, py_words[0].end, fr), 5);
	check_py_mark(&fr[0], PY_MARK_NO_GIL);
	check_py_frame(&fr[1], 0xa0, 5, false);
	check_py_frame(&fr[2], 0xb0, 7, true);
	check_py_frame(&fr[3], 0xc0, 9, true);
	check_py_mark(&fr[4], PY_MARK_CUT);
	/* Each end reason alone; another reason gives no mark. */
	CHECK_INT(interps__decode(ints, w, 6, INTERP_END(PY_KIND, PY_END_DEPTH + 1), fr), 4);
	check_py_frame(&fr[0], 0xa0, 5, false);
	check_py_mark(&fr[3], PY_MARK_CUT);
	CHECK_INT(interps__decode(ints, w, 6, INTERP_END(PY_KIND, (PY_END_ROOT + 1) | PY_END_NO_GIL),
				  fr), 4);
	check_py_mark(&fr[0], PY_MARK_NO_GIL);
	check_py_frame(&fr[3], 0xc0, 9, true);
	CHECK_INT(interps__decode(ints, w, 6, INTERP_END(PY_KIND, PY_END_UNREADABLE + 1), fr), 3);
	check_py_frame(&fr[2], 0xc0, 9, true);
	/* A half frame is no frame. */
	CHECK_INT(interps__decode(ints, py_words[1].words, 3, py_words[1].end, fr), 1);
	check_py_frame(&fr[0], 0xa0, 3, true);
	/* The code object's 48-bit identity, in both words, comes back whole. */
	CHECK_INT(interps__decode(ints, ident_words, 2, INTERP_END(PY_KIND, PY_END_ROOT + 1), fr), 1);
	CHECK_INT(fr[0].addr & PY_CODE_MASK, 0x7f00c0de0010ull);
	CHECK_INT(fr[0].aux & PY_INSTR_MASK, 5);
	CHECK(fr[0].flags == FRAME_INTERP_ENTRY);
	CHECK_INT(py_words_ident(fr[0].addr, fr[0].aux), 0xfedcba987654ull);
	/* Identities spread over all 48 bits, and are never 0 (none). */
	for (__u64 i = 0, top = 0; i < 4096; i++) {
		__u64 id = py_code_ident(0x7f0000000000ull + 64 * i, 0x7f0000100000ull,
					 0x7f0000200000ull, 1, i);

		CHECK(id && id < 1ull << PY_IDENT_BITS);
		top |= id;
		if (i == 4095)
			CHECK_INT(top, (1ull << PY_IDENT_BITS) - 1);
	}
	/* The marks' names, as printed. */
	CHECK_STR(interps__mark_name(ints, PY_KIND, PY_MARK_NO_GIL), "[GIL released]");
	CHECK_STR(interps__mark_name(ints, PY_KIND, PY_MARK_CUT), "[python: more frames]");
	interps__free(ints);
}

/* The decoded frames and marks, folded as a user reads them. */
TEST(python_words_folded)
{
	struct sample s[] = {
		py_sample(1, STACK_HASHED, 10),	/* two loops, three frames, both marks */
		py_sample(1, STACK_HASHED, 11),	/* two loops, one call: the innermost enters */
	};
	struct py_words_source pws;
	struct trace_source ts = { .read = py_words_read, .ctx = &pws };
	struct interps *ints;
	struct records rs;
	struct fixture fx;
	char *out;

	ints = py_fixture(&fx);
	pws = (struct py_words_source){ .native = &fx.src, .ints = ints };
	fx.sym.source = ts;
	CHECK_INT(records__build(&rs, &fx.sym, s, 2), 0);
	out = folded(&rs, &both);
	CHECK_STR(out, "python3;[python: more frames];u7_104f;py_c0 (main.py);u7_102f;py_b0 (main.py);py_a0 (main.py);[GIL released];u7_1010 1\n"
		       "python3;u7_104f;py_a0 (main.py);u7_102f;_PyEval_EvalFrameDefault;u7_1010 1\n");
	free(out);
	records__free(&rs);
	interps__free(ints);
}

int main(void)
{
	RUN(names_by_kind_root_first);
	RUN(stacks_and_frames_cached);
	RUN(frames_share_their_mapping);
	RUN(missed_and_absent_parts);
	RUN(iterator_views);
	RUN(prefetch_then_build);
	RUN(want_unnamed_stacks_first);
	RUN(report_renames_unnamed_jit);
	RUN(no_resolvers);
	RUN(unsafe_comm);
	RUN(python_frames_in_place_of_the_loop);
	RUN(python_words_decoded);
	RUN(python_words_folded);
	RUN(new_kind_needs_only_a_resolver);
	RUN(interp_frames_differ_by_whole_aux);
	RUN(truncated_stacks_counted);
	return unit_summary();
}
