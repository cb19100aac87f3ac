// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The perf-report-style table on hand-built records. */
#include <stdlib.h>
#include "unit.h"
#include "output/output.h"
#include "output/report.h"
#include "trace/symbolize.h"
#include "stacks.h"
#include "bpf/interp/python/pyframe.h"	/* PY_KIND */

#define HEADER "#\n#    Self  Children    Samples  Command          Shared Object            Symbol\n"

static STACK(kst, 2);
static STACK(ust, 2);
static STACK(urec, 3);
static STACK(unamed, 2);

static void setup(void)
{
	kst.frames[0] = (struct frame){ .name = "kleaf", .kind = FRAME_KERNEL, .addr = 0xffffffff81000010 };
	kst.frames[1] = (struct frame){ .name = "kroot", .kind = FRAME_KERNEL, .module = "ext4" };
	ust.frames[0] = (struct frame){ .name = "func_b", .addr = 0x401000, .module = "/bin/burn" };
	ust.frames[1] = (struct frame){ .name = "main", .addr = 0x402000, .module = "/bin/burn" };
	urec.frames[0] = ust.frames[0];	/* recursion: func_b calls itself */
	urec.frames[1] = ust.frames[0];
	urec.frames[1].addr += 8;
	urec.frames[2] = ust.frames[1];
	unamed.frames[0] = (struct frame){ .addr = 0x7f0000 };	/* no name, no module */
	unamed.frames[1] = ust.frames[1];
}

static struct record rec(const char *comm, __u64 count, const void *user, __u8 us,
			 const void *kern, __u8 ks)
{
	return test_record(comm, 1, count, user, us, kern, ks);
}

static char *render(struct record *recs, size_t nr, const struct output_opts *o, size_t limit)
{
	struct records p = { .recs = recs, .nr = nr };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK_INT(report__write(f, &p, o, limit), 0);
	fclose(f);
	return buf;
}

static struct record recs[6];

static void make_recs(void)
{
	recs[0] = rec("burn", 5, &ust, PART_OK, &kst, PART_OK);
	recs[1] = rec("burn", 3, &ust, PART_OK, NULL, PART_ABSENT);
	recs[2] = rec("idle", 2, NULL, PART_ABSENT, &kst, PART_OK);
	recs[3] = rec("burn", 1, &urec, PART_OK, NULL, PART_ABSENT);
	recs[4] = rec("lost", 4, NULL, PART_MISSED, NULL, PART_MISSED);
	recs[5] = rec("burn", 2, &unamed, PART_OK, NULL, PART_ABSENT);
}

/*
 * Self: the leaf of the kernel stack if any, else of the user one; total:
 * every function of a sample once, however often it recurs.  A sample with
 * no stack counts for [unknown].  Sorted by self, total, symbol, comm.
 */
TEST(self_and_children)
{
	struct output_opts o = { .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	char *out = render(recs, 6, &o, 0);

	CHECK_STR(out,
		  "# Samples: 17\n" HEADER
		  "   29.41%    29.41%          5  burn             [kernel]                 kleaf\n"
		  "   23.53%    52.94%          4  burn             burn                     func_b\n"
		  "   23.53%    23.53%          4  lost             [unknown]                [unknown]\n"
		  "   11.76%    11.76%          2  burn             [unknown]                [unknown]\n"
		  "   11.76%    11.76%          2  idle             [kernel]                 kleaf\n"
		  "    0.00%    64.71%          0  burn             burn                     main\n"
		  "    0.00%    29.41%          0  burn             [kernel]                 kroot\n"
		  "    0.00%    11.76%          0  idle             [kernel]                 kroot\n");
	free(out);
}

/* Without kernel stacks, the user leaf is self; the limit cuts the lines. */
TEST(user_only_limit)
{
	struct output_opts o = { .view.parts[PART_USER] = true };
	char *out = render(recs, 6, &o, 3);

	CHECK_STR(out,
		  "# Samples: 17\n" HEADER
		  "   52.94%    52.94%          9  burn             burn                     func_b\n"
		  "   23.53%    23.53%          4  lost             [unknown]                [unknown]\n"
		  "   11.76%    11.76%          2  burn             [unknown]                [unknown]\n");
	free(out);
}

TEST(empty)
{
	struct output_opts o = { .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	char *out = render(NULL, 0, &o, 0);

	CHECK_STR(out, "# Samples: 0\n" HEADER);
	free(out);
}

/* Many distinct functions: the table grows and keeps every count apart. */
TEST(many_functions)
{
	enum { N = 3000 };
	static char names[N][16];
	static struct record many[N];
	static struct { __u32 nr; struct frame frames[1]; } sts[N];
	struct output_opts o = { .view.parts[PART_USER] = true };
	const char *top = "# Samples: 4501500\n" HEADER
		"    0.07%     0.07%       3000  a                libx.so                  fn2999\n"
		"    0.07%     0.07%       2999  b                libx.so                  fn2998\n";
	const char *line;
	size_t lines = 0;
	char *out;

	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "fn%zu", i);
		sts[i].nr = 1;
		sts[i].frames[0] = (struct frame){ .name = names[i], .module = "/lib/libx.so" };
		many[i] = rec(i % 2 ? "a" : "b", i + 1, &sts[i], PART_OK, NULL, PART_ABSENT);
	}
	out = render(many, N, &o, 0);
	CHECK(out != NULL);
	if (!out)
		return;
	for (line = out; (line = strchr(line, '\n')); line++)
		lines++;
	CHECK_INT(lines, 3 + N);
	CHECK(!strncmp(out, top, strlen(top)));
	CHECK(strstr(out, "       1  b                libx.so                  fn0\n") != NULL);
	CHECK(strstr(out, "fn0\n") == out + strlen(out) - 4);
	free(out);
}

/* The last check before a terminal: a control that got this far is '?'. */
TEST(unsafe_names)
{
	struct output_opts o = { .view.parts[PART_USER] = true };
	STACK(evil, 1);
	struct record r[1];
	char *out;

	evil.frames[0] = (struct frame){ .name = "f\033[2J", .addr = 0x401000,
					 .module = "/tmp/m\n" };
	r[0] = rec("c\033]0;x\a", 1, &evil, PART_OK, NULL, PART_ABSENT);
	out = render(r, 1, &o, 0);
	CHECK_STR(out,
		  "# Samples: 1\n" HEADER
		  "  100.00%   100.00%          1  c?]0;x?          m?                       f?[2J\n");
	free(out);
}

/*
 * Unnamed frames are their module's label, [gzip], and two addresses in
 * one module are one line; a kernel frame without a name is [kernel].
 */
TEST(unnamed_frames_by_module)
{
	struct output_opts o = { .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	STACK(u1, 2);
	STACK(u2, 2);
	STACK(uv, 2);
	STACK(k, 1);
	struct record r[3];
	char *out;

	u1.frames[0] = (struct frame){ .addr = 0x5000, .module = "/usr/bin/gzip" };
	u1.frames[1] = (struct frame){ .name = "main", .addr = 0x4000, .module = "/usr/bin/gzip" };
	u2.frames[0] = u1.frames[0];
	u2.frames[0].addr = 0x6000;
	u2.frames[1] = u1.frames[1];
	uv.frames[0] = (struct frame){ .addr = 0x7000, .module = "[vdso]" };
	uv.frames[1] = u1.frames[1];
	k.frames[0] = (struct frame){ .addr = 0xffffffff81000010, .kind = FRAME_KERNEL };
	r[0] = rec("gzip", 3, &u1, PART_OK, NULL, PART_ABSENT);
	r[1] = rec("gzip", 1, &u2, PART_OK, &k, PART_OK);
	r[2] = rec("gzip", 2, &uv, PART_OK, NULL, PART_ABSENT);
	out = render(r, 3, &o, 0);
	CHECK_STR(out,
		  "# Samples: 6\n" HEADER
		  "   50.00%    66.67%          3  gzip             gzip                     [gzip]\n"
		  "   33.33%    33.33%          2  gzip             [vdso]                   [vdso]\n"
		  "   16.67%    16.67%          1  gzip             [kernel]                 [kernel]\n"
		  "    0.00%   100.00%          0  gzip             gzip                     main\n");
	free(out);
}

/*
 * A Python frame runs in the interpreter: its object is [python], not the
 * base name of its source file, which its author chose ("libc.so.6").
 */
TEST(interp_frames_object)
{
	struct output_opts o = { .view.parts[PART_USER] = true };
	STACK(u, 2);
	struct record r[1];
	char *out;

	u.frames[0] = (struct frame){ .name = "spin (libc.so.6)", .func = "spin",
				      .module = "/home/u/libc.so.6", .addr = 0x7f0000,
				      .kind = FRAME_INTERP, .interp = PY_KIND };
	u.frames[1] = ust.frames[1];
	r[0] = rec("python3", 4, &u, PART_OK, NULL, PART_ABSENT);
	out = render(r, 1, &o, 0);
	CHECK_STR(out,
		  "# Samples: 4\n" HEADER
		  "  100.00%   100.00%          4  python3          [python]                 spin (libc.so.6)\n"
		  "    0.00%   100.00%          0  python3          burn                     main\n");
	free(out);
}

/*
 * A long module widens its column (to 40 at most) and is cut with an
 * ellipsis past that; the Symbol column still starts at one place on every line,
 * counted in characters, and is never cut.
 */
TEST(columns_fit_content)
{
	struct output_opts o = { .view.parts[PART_USER] = true };
	STACK(mid, 1);
	STACK(lng, 1);
	STACK(wide, 1);
	struct record r[3];
	char *out;

	mid.frames[0] = (struct frame){ .name = "f1", .addr = 0x1000,
					.module = "/x/libmiddle-sized-name-of-30.so" };
	lng.frames[0] = (struct frame){ .name = "jit_entry_with_a_long_name_that_is_never_cut",
					.addr = 0x2000,
					.module = "/memfd:sealed-jit-cache-of-a-runtime-with-a-long-name (deleted)" };
	wide.frames[0] = (struct frame){ .name = "f3", .addr = 0x3000, .module = "/x/caf\xc3\xa9.so" };
	r[0] = rec("a", 3, &mid, PART_OK, NULL, PART_ABSENT);
	r[1] = rec("b", 2, &lng, PART_OK, NULL, PART_ABSENT);
	r[2] = rec("c", 1, &wide, PART_OK, NULL, PART_ABSENT);
	out = render(r, 3, &o, 0);
	CHECK_STR(out,
		  "# Samples: 6\n"
		  "#\n#    Self  Children    Samples  Command          Shared Object                            Symbol\n"
		  "   50.00%    50.00%          3  a                libmiddle-sized-name-of-30.so            f1\n"
		  "   33.33%    33.33%          2  b                memfd:sealed-jit-cache-of-a-runtime-wit\xe2\x80\xa6 "
		  "jit_entry_with_a_long_name_that_is_never_cut\n"
		  "   16.67%    16.67%          1  c                caf\xc3\xa9.so                                  f3\n");
	free(out);
}

#define TIME_HEADER "#\n#    Self  Children  Time (us)  Command          Shared Object            Symbol\n"

static struct record off(const char *comm, __u64 ns, const void *user, const void *kern)
{
	struct record r = rec(comm, ns, user, user ? PART_OK : PART_ABSENT,
			      kern, kern ? PART_OK : PART_ABSENT);

	r.what = COUNT_OFF_CPU;
	return r;
}

/* --off-cpu: the header and the column are time, in microseconds. */
TEST(off_cpu_time)
{
	struct output_opts o = { .kind = PROFILE_OFF_CPU,
				 .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = {
		off("sleep", 3000400, &ust, &kst),
		off("sleep", 1000000, &ust, NULL),
	};
	char *out = render(r, 2, &o, 0);

	CHECK_STR(out,
		  "# Off-CPU time: 4000 us\n" TIME_HEADER
		  "   75.00%    75.00%       3000  sleep            [kernel]                 kleaf\n"
		  "   25.00%   100.00%       1000  sleep            burn                     func_b\n"
		  "    0.00%   100.00%          0  sleep            burn                     main\n"
		  "    0.00%    75.00%          0  sleep            [kernel]                 kroot\n");
	free(out);
}

/*
 * --wall: on-CPU samples weigh period_ns; [off-cpu] is the self row of
 * all blocked time, and the functions keep their wall-clock totals.
 */
TEST(wall_time)
{
	struct output_opts o = { .kind = PROFILE_WALL, .period_ns = 1000000,
				 .view.mark_off_cpu = true, .view.parts[PART_USER] = true,
				 .view.parts[PART_KERNEL] = true };
	struct record r[] = {
		rec("app", 1, &ust, PART_OK, NULL, PART_ABSENT),
		off("app", 3000000, &ust, &kst),
	};
	char *out = render(r, 2, &o, 0);

	CHECK_STR(out,
		  "# Wall-clock time: 4000 us\n" TIME_HEADER
		  "   75.00%    75.00%       3000  app              [off-cpu]                [off-cpu]\n"
		  "   25.00%   100.00%       1000  app              burn                     func_b\n"
		  "    0.00%   100.00%          0  app              burn                     main\n"
		  "    0.00%    75.00%          0  app              [kernel]                 kleaf\n"
		  "    0.00%    75.00%          0  app              [kernel]                 kroot\n");
	free(out);
}

int main(void)
{
	setup();
	make_recs();
	RUN(self_and_children);
	RUN(user_only_limit);
	RUN(empty);
	RUN(many_functions);
	RUN(unsafe_names);
	RUN(unnamed_frames_by_module);
	RUN(interp_frames_object);
	RUN(columns_fit_content);
	RUN(off_cpu_time);
	RUN(wall_time);
	return unit_summary();
}
