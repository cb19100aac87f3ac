// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The interpreter interface with a test double: a fake runtime, registered
 * only here, whose stacks flow from a trace source (read the way the BPF
 * session reads them, through interps__decode()) through the symbolizer
 * to the folded writer; and the registry's dispatch of the tracker's and
 * the run loop's hooks by kind.  Nothing here knows CPython.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "stacks.h"
#include "interp/interp.h"
#include "trace/symbolize.h"
#include "output/output.h"

/* ---- the fake runtime ---- */

#define FAKE_KIND 2
/* A word is a code object; this bit marks the outermost of a loop's call. */
#define FAKE_ENTRY (1ull << 63)
/* End bits: the walk was cut (a mark on the outer end). */
#define FAKE_END_CUT 1
#define FAKE_MARK_CUT 7

struct fake {
	int started, detects, mapped, execs, forgets, notes, settles, reaps, resolves;
	__u32 last_pid;
	size_t last_note_len;
	const __u64 *counters;
	__u64 slices[MAX_INTERP_KINDS + 1][NR_INTERP_COUNTERS];	/* as reported */
	bool reported_verbose, reported_warnings;
	char names[16][32];
	int nr_names;
};

static struct fake fake;

static void *fake_start(struct profile_bpf *skel, const struct interp_config *cfg)
{
	(void)skel;
	(void)cfg;
	fake.started++;
	return &fake;
}

static bool fake_wants_mapping(const char *path)
{
	return strstr(path, "/libfake.") != NULL;
}

static void fake_detect(void *ctx, __u32 pid)
{
	((struct fake *)ctx)->detects++;
	fake.last_pid = pid;
}

static void fake_mapped(void *ctx, __u32 pid)
{
	((struct fake *)ctx)->mapped++;
	fake.last_pid = pid;
}

static void fake_exec(void *ctx, __u32 pid)
{
	((struct fake *)ctx)->execs++;
	fake.last_pid = pid;
}

static void fake_forget(void *ctx, __u32 pid)
{
	((struct fake *)ctx)->forgets++;
	fake.last_pid = pid;
}

static void fake_note(void *ctx, const void *note, size_t len)
{
	(void)note;
	((struct fake *)ctx)->notes++;
	fake.last_note_len = len;
}

static void fake_settle(void *ctx, unsigned int timeout_ms)
{
	(void)timeout_ms;
	((struct fake *)ctx)->settles++;
}

static void fake_reap(void *ctx)
{
	((struct fake *)ctx)->reaps++;
}

/* One word a frame, innermost first; a cut walk ends with a mark. */
static int fake_decode(const __u64 *ips, int n, __u32 end, struct trace_frame *frames)
{
	int nr = 0;

	for (int i = 0; i < n; i++)
		frames[nr++] = (struct trace_frame){
			.addr = ips[i] & ~FAKE_ENTRY, .kind = FRAME_INTERP,
			.flags = ips[i] & FAKE_ENTRY ? FRAME_INTERP_ENTRY : 0 };
	if (end & FAKE_END_CUT)
		frames[nr++] = (struct trace_frame){ .addr = FAKE_MARK_CUT, .kind = FRAME_NONE,
						     .flags = FRAME_INTERP_MARK };
	return nr;
}

static void fake_resolve(void *ctx, __u32 pid, struct frame *f)
{
	struct fake *fk = ctx;

	if (fk->nr_names == 16)
		abort();
	snprintf(fk->names[fk->nr_names], sizeof(fk->names[0]), "fake_%llx@%u",
		 (unsigned long long)f->addr, pid);
	f->name = fk->names[fk->nr_names++];
	fk->resolves++;
}

static const char *fake_mark_name(__u64 mark)
{
	return mark == FAKE_MARK_CUT ? "[fake: more frames]" : NULL;
}

static bool fake_is_eval_frame(const struct frame *f)
{
	return f->kind == FRAME_NATIVE && f->name && !strcmp(f->name, "fake_eval_loop");
}

static void fake_report(void *ctx, const __u64 *counters, enum report_pass pass)
{
	(void)ctx;
	fake.counters = counters;
	memcpy(fake.slices[FAKE_KIND], counters, sizeof(fake.slices[0]));
	if (pass == REPORT_STATS)
		fake.reported_verbose = true;
	else
		fake.reported_warnings = true;
}

static const struct interp_ops fake_interp = {
	.name = "fake",
	.kind = FAKE_KIND,
	.start = fake_start,
	.wants_mapping = fake_wants_mapping,
	.detect = fake_detect,
	.mapped = fake_mapped,
	.exec = fake_exec,
	.forget = fake_forget,
	.note = fake_note,
	.settle = fake_settle,
	.reap = fake_reap,
	.decode = fake_decode,
	.resolve = fake_resolve,
	.mark_name = fake_mark_name,
	.is_eval_frame = fake_is_eval_frame,
	.report = fake_report,
};

static const struct interp_ops *const fake_table[] = { &fake_interp };

/* A second runtime, only to tell the rows' counters apart. */
#define OTHER_KIND 4

static void other_report(void *ctx, const __u64 *counters, enum report_pass pass)
{
	(void)ctx;
	(void)pass;
	memcpy(fake.slices[OTHER_KIND], counters, sizeof(fake.slices[0]));
}

static const struct interp_ops other_interp = {
	.name = "other",
	.kind = OTHER_KIND,
	.report = other_report,
};

static struct interps *fake_interps(void)
{
	static const __u32 pids[] = { 41, 42 };
	struct interp_config ic = { .pids = pids, .nr_pids = 2 };
	struct interps *ints;

	memset(&fake, 0, sizeof(fake));
	ints = interps__new(fake_table, 1, &ic);
	if (!ints)
		abort();
	/* No BPF here: the fake needs no skeleton. */
	interps__start(ints, NULL);
	return ints;
}

/* ---- a trace source: stored words, read as the session reads them ---- */

#define USER_ID 1
#define INTERP_ID 2
#define OTHER_KIND_ID 3
#define INTERP2_ID 4

struct source {
	const struct interps *ints;
};

static int source_read(void *ctx, const struct stack_ref *ref, struct trace_frame *frames)
{
	/* Leaf first: C code, the loop running a and b, C code, the loop running c, main. */
	static const __u64 user[] = { 0x1010, 0xe01, 0x1030, 0xe02, 0x1050 };
	static const __u64 words[] = { 0xa, 0xb | FAKE_ENTRY, 0xc | FAKE_ENTRY };
	/* The same code objects, a the entry now and b not. */
	static const __u64 words2[] = { 0xb, 0xa | FAKE_ENTRY, 0xc | FAKE_ENTRY };
	const struct source *src = ctx;
	int n = 0;

	switch (ref->id) {
	case USER_ID:
		for (size_t i = 0; i < sizeof(user) / sizeof(user[0]); i++)
			frames[n++] = (struct trace_frame){ .addr = user[i], .kind = FRAME_NATIVE,
							    .flags = i ? FRAME_RETADDR : 0 };
		return n;
	case INTERP_ID:
		return interps__decode(src->ints, words, 3, INTERP_END(FAKE_KIND, FAKE_END_CUT),
				       frames);
	case INTERP2_ID:
		return interps__decode(src->ints, words2, 3, INTERP_END(FAKE_KIND, 0), frames);
	case OTHER_KIND_ID:
		/* A kind no row has: no frames. */
		return interps__decode(src->ints, words, 3, INTERP_END(FAKE_KIND + 1, 0), frames);
	default:
		return -ENOENT;
	}
}

/* Native code: the fake's loop at 0xe00, anything else "n_<pc>". */
static char native_names[8][16];
static void native_resolve(void *ctx, __u32 pid, __u32 start, struct frame *f,
			   struct frame_mapping *map)
{
	__u64 pc = frame__pc(f);
	int *nr = ctx;

	(void)pid;
	if ((pc & ~0xffull) == 0xe00) {
		f->name = "fake_eval_loop";
		return;
	}
	if (*nr == 8)
		abort();
	snprintf(native_names[*nr], sizeof(native_names[0]), "n_%llx", (unsigned long long)pc);
	f->name = native_names[(*nr)++];
}

static struct sample sample(__u64 interp_id)
{
	struct sample s = { .count = 3 };

	s.key.pid = 9;
	snprintf(s.key.comm, sizeof(s.key.comm), "fakeprog");
	s.key.parts[PART_USER] = (struct stack_ref){ .src = STACK_HASHED, .kind = FRAME_NATIVE,
						     .id = USER_ID };
	s.key.parts[PART_KERNEL] = (struct stack_ref){ .src = STACK_NONE, .kind = FRAME_KERNEL,
						       .err = -EFAULT };
	s.key.parts[PART_INTERP] = (struct stack_ref){ .src = STACK_HASHED, .kind = FRAME_INTERP,
						       .id = interp_id };
	return s;
}

static const struct trace_view both = {
	.parts = { [PART_KERNEL] = true, [PART_USER] = true },
};

/* Records of a sample for each of n interpreter stacks, all of one pid. */
static void build_n(const struct interps *ints, const __u64 *interp_ids, int n,
		    struct records *rs)
{
	struct source src = { .ints = ints };
	struct trace_source ts = { .read = source_read, .ctx = &src };
	struct sample s[4];
	struct symbolizer sym;
	int nr_native = 0;

	memset(native_names, 0, sizeof(native_names));
	symbolizer__init(&sym, &ts, NULL, NULL, NULL);
	sym.resolvers[FRAME_NATIVE] = (struct resolver){ .resolve = native_resolve,
							 .ctx = &nr_native };
	symbolizer__set_interps(&sym, ints);
	if (n > 4)
		abort();
	for (int i = 0; i < n; i++)
		s[i] = sample(interp_ids[i]);
	CHECK_INT(records__build(rs, &sym, s, n), 0);
}

static void build(const struct interps *ints, __u64 interp_id, struct records *rs)
{
	build_n(ints, &interp_id, 1, rs);
}

/* ---- tests ---- */

/*
 * The fake's frames take the place of its loop's native frames, named by
 * the fake; its mark, named by the fake, goes on the outer end.
 */
TEST(fake_frames_reach_the_folded_writer)
{
	struct interps *ints = fake_interps();
	struct records rs;
	char *out;

	build(ints, INTERP_ID, &rs);
	out = folded(&rs, &both);
	CHECK_STR(out, "fakeprog;[fake: more frames];n_104f;fake_c@9;n_102f;fake_b@9;fake_a@9;n_1010 3\n");
	free(out);
	CHECK_INT(fake.resolves, 3);
	/* The frames carry their interpreter's kind. */
	CHECK_INT(rs.recs[0].parts[PART_USER].stack->frames[1]->interp, FAKE_KIND);
	records__free(&rs);
	interps__free(ints);
}

/*
 * One code object, the entry of its loop's call in one stack and not in
 * the other: each stack is merged by its own flags, whichever was first.
 */
TEST(one_code_object_entry_in_one_stack_only)
{
	static const __u64 ids[] = { INTERP_ID, INTERP2_ID };
	static const __u64 ids_reversed[] = { INTERP2_ID, INTERP_ID };
	struct interps *ints = fake_interps();
	struct records rs;
	char *out;

	for (int pass = 0; pass < 2; pass++) {
		build_n(ints, pass ? ids_reversed : ids, 2, &rs);
		out = folded(&rs, &both);
		CHECK_STR(out, "fakeprog;[fake: more frames];n_104f;fake_c@9;n_102f;fake_b@9;fake_a@9;n_1010 3\n"
			       "fakeprog;n_104f;fake_c@9;n_102f;fake_a@9;fake_b@9;n_1010 3\n");
		free(out);
		records__free(&rs);
	}
	interps__free(ints);
}

/* A stack of a kind no row has: no frames; the native stack as is. */
TEST(unknown_kind_decodes_to_nothing)
{
	struct interps *ints = fake_interps();
	struct records rs;
	char *out;

	build(ints, OTHER_KIND_ID, &rs);
	out = folded(&rs, &both);
	CHECK_STR(out, "fakeprog;n_104f;fake_eval_loop;n_102f;fake_eval_loop;n_1010 3\n");
	free(out);
	CHECK_INT(fake.resolves, 0);
	records__free(&rs);
	interps__free(ints);
}

/* Without interpreters, the symbolizer leaves the loop's frames as they are. */
TEST(no_interps_no_merge)
{
	struct records rs;
	char *out;

	build(NULL, INTERP_ID, &rs);
	out = folded(&rs, &both);
	CHECK_STR(out, "fakeprog;n_104f;fake_eval_loop;n_102f;fake_eval_loop;n_1010 3\n");
	free(out);
	records__free(&rs);
}

/* The tracker's and the run loop's hooks reach the row of the kind. */
TEST(hooks_dispatched_by_kind)
{
	struct interps *ints = fake_interps();
	__u64 counters[NR_COUNTERS] = {};
	struct note_hdr note = { .type = NOTE_INTERP_STACK, .kind = FAKE_KIND, .pid = 5 };
	static const __u16 bad_kinds[] = { 0, MAX_INTERP_KINDS + 1, 0xffff };
	char buf[sizeof(note) + 16] = {};

	/* Started, with the -p targets looked for and waited on. */
	CHECK_INT(fake.started, 1);
	CHECK_INT(fake.detects, 2);
	CHECK_INT(fake.settles, 1);
	interps__detect(ints, 7);
	interps__exec(ints, 8);
	interps__forget(ints, 9);
	CHECK_INT(fake.detects, 3);
	CHECK_INT(fake.execs, 1);
	CHECK_INT(fake.forgets, 1);
	CHECK_INT(fake.last_pid, 9);
	/* Only the mappings it wants, to its own hook. */
	interps__mapping(ints, 10, "/usr/lib/libc.so.6");
	CHECK_INT(fake.mapped, 0);
	interps__mapping(ints, 11, "/usr/lib/libfake.so.1");
	CHECK_INT(fake.mapped, 1);
	CHECK_INT(fake.detects, 3);
	CHECK_INT(fake.last_pid, 11);
	/* Notes by their tag and kind, at any alignment. */
	memcpy(buf + 1, &note, sizeof(note));
	interps__note(ints, buf + 1, sizeof(note) + 8);
	CHECK_INT(fake.notes, 1);
	CHECK_INT(fake.last_note_len, sizeof(note) + 8);
	note.kind = FAKE_KIND + 1;
	memcpy(buf, &note, sizeof(note));
	interps__note(ints, buf, sizeof(note));
	note.kind = FAKE_KIND;
	note.type = NOTE_PROCESS;
	memcpy(buf, &note, sizeof(note));
	interps__note(ints, buf, sizeof(note));
	CHECK_INT(fake.notes, 1);
	/* Shorter than a header, or of a kind out of range: not dispatched. */
	note.type = NOTE_INTERP_STACK;
	memcpy(buf, &note, sizeof(note));
	interps__note(ints, buf, sizeof(note) - 1);
	interps__note(ints, buf, 0);
	interps__note(ints, NULL, 0);
	for (unsigned int i = 0; i < sizeof(bad_kinds) / sizeof(bad_kinds[0]); i++) {
		note.kind = bad_kinds[i];
		memcpy(buf, &note, sizeof(note));
		interps__note(ints, buf, sizeof(buf));
	}
	CHECK_INT(fake.notes, 1);
	interps__settle(ints, 10);
	interps__reap(ints);
	CHECK_INT(fake.settles, 2);
	CHECK_INT(fake.reaps, 1);
	/* Its own counters' area, warnings and -v lines apart. */
	interps__report(ints, counters, REPORT_WARN);
	CHECK(fake.reported_warnings && !fake.reported_verbose);
	interps__report(ints, counters, REPORT_STATS);
	CHECK(fake.reported_verbose);
	CHECK(fake.counters == counters + CNT_INTERP(FAKE_KIND));
	CHECK_STR(interps__off_options(ints), " --fake=off");
	CHECK_STR(interps__mark_name(ints, FAKE_KIND, FAKE_MARK_CUT), "[fake: more frames]");
	CHECK(interps__mark_name(ints, FAKE_KIND + 1, FAKE_MARK_CUT) == NULL);
	interps__free(ints);
	/* NULL: nothing to tell. */
	interps__detect(NULL, 1);
	interps__note(NULL, buf, sizeof(note));
	CHECK_STR(interps__off_options(NULL), "");
}

/*
 * Each runtime reads its own kind's counters: every kind's area holds
 * values of its own, and each row sees exactly its kind's.
 */
TEST(counters_by_kind)
{
	static const struct interp_ops *const table[] = { &fake_interp, &other_interp };
	struct interp_config ic = {};
	__u64 counters[NR_COUNTERS];
	struct interps *ints;

	memset(&fake, 0, sizeof(fake));
	for (int i = 0; i < NR_COUNTERS; i++)
		counters[i] = 0xdead;
	for (int k = 1; k <= MAX_INTERP_KINDS; k++)
		for (int j = 0; j < NR_INTERP_COUNTERS; j++)
			counters[CNT_INTERP(k) + j] = k * 100 + j;
	ints = interps__new(table, 2, &ic);
	CHECK(ints != NULL);
	if (!ints)
		return;
	interps__report(ints, counters, REPORT_STATS);
	for (int j = 0; j < NR_INTERP_COUNTERS; j++) {
		CHECK_INT(fake.slices[FAKE_KIND][j], FAKE_KIND * 100 + j);
		CHECK_INT(fake.slices[OTHER_KIND][j], OTHER_KIND * 100 + j);
	}
	interps__free(ints);
}

/* Two rows of one kind, or a kind out of range, make no registry. */
TEST(registry_rejects_bad_rows)
{
	const struct interp_ops *twice[] = { &fake_interp, &fake_interp };
	struct interp_ops bad = fake_interp;
	const struct interp_ops *out_of_range[] = { &bad };
	struct interp_config ic = {};

	errno = 0;
	CHECK(interps__new(twice, 2, &ic) == NULL && errno == EINVAL);
	bad.kind = MAX_INTERP_KINDS + 1;
	CHECK(interps__new(out_of_range, 1, &ic) == NULL);
	bad.kind = 0;
	CHECK(interps__new(out_of_range, 1, &ic) == NULL);
}

/* profile's own registry: one row per kind, each kind in range. */
TEST(profile_registry_is_sound)
{
	struct interp_config ic = {};
	struct interps *ints = interps__new(interp_registry, interp_registry_len, &ic);

	CHECK(interp_registry_len >= 1);
	CHECK(ints != NULL);
	for (size_t i = 0; i < interp_registry_len; i++)
		CHECK(interp_registry[i]->decode && interp_registry[i]->configure &&
		      interp_registry[i]->name);
	interps__free(ints);
}

int main(void)
{
	RUN(fake_frames_reach_the_folded_writer);
	RUN(one_code_object_entry_in_one_stack_only);
	RUN(unknown_kind_decodes_to_nothing);
	RUN(no_interps_no_merge);
	RUN(hooks_dispatched_by_kind);
	RUN(counters_by_kind);
	RUN(registry_rejects_bad_rows);
	RUN(profile_registry_is_sound);
	return unit_summary();
}
