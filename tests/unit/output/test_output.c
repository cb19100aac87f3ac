// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Plain and folded formatting on hand-built records. */
#include <stdlib.h>
#include "unit.h"
#include "output/output.h"
#include "trace/symbolize.h"
#include "stacks.h"


static STACK(kst, 2);
static STACK(ust, 2);
static STACK(ust2, 2);

static void setup(void)
{
	kst.frames[0] = (struct frame){ .name = "kleaf", .kind = FRAME_KERNEL, .addr = 0xffffffff81000010, .offset = 0x10 };
	kst.frames[1] = (struct frame){ .name = "kroot", .kind = FRAME_KERNEL, .addr = 0xffffffff81000100, .module = "ext4", .offset = 4 };
	ust.frames[0] = (struct frame){ .name = "func_b", .addr = 0x401000, .module = "/bin/burn", .offset = 0 };
	ust.frames[1] = (struct frame){ .name = "main", .addr = 0x402000, .module = "/bin/burn", .offset = 8 };
	ust2.frames[0] = (struct frame){ .name = NULL, .addr = 0x7f0000 };
	ust2.frames[1] = (struct frame){ .name = "main", .addr = 0x402000 };
}

static char *render(struct record *recs, size_t nr, struct output_opts *o)
{
	struct records p = { .recs = recs, .nr = nr };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK_INT(output__write(f, &p, o), 0);
	fclose(f);
	return buf;
}

#define rec test_record

TEST(folded_basic)
{
	struct output_opts o = { .folded = true, .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = {
		rec("burn", 10, 5, &ust, PART_OK, &kst, PART_OK),
		rec("burn", 11, 2, &ust, PART_OK, &kst, PART_OK),	/* merges: same text */
		rec("idle", 0, 3, NULL, PART_ABSENT, &kst, PART_OK),
		rec("lost", 12, 1, NULL, PART_MISSED, NULL, PART_MISSED),
	};
	char *out = render(r, 4, &o);

	CHECK_STR(out,
		  "lost;[Missed User Stack];[Missed Kernel Stack] 1\n"
		  "idle;kroot;kleaf 3\n"
		  "burn;main;func_b;kroot;kleaf 7\n");
	free(out);
}

TEST(folded_delimiter_annotations)
{
	struct output_opts o = { .folded = true, .view.delimited = true, .annotations = true,
				 .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = {
		rec("a", 1, 1, &ust, PART_OK, &kst, PART_OK),
		rec("b", 2, 1, &ust, PART_OK, NULL, PART_ABSENT),	/* no "-": one stack */
		rec("c", 3, 1, &ust2, PART_OK, NULL, PART_MISSED),
	};
	char *out = render(r, 3, &o);

	CHECK_STR(out,
		  "a;main;func_b;-;kroot_[k];kleaf_[k] 1\n"
		  "b;main;func_b 1\n"
		  "c;main;[unknown];[Missed Kernel Stack] 1\n");
	free(out);
}

TEST(folded_user_only)
{
	struct output_opts o = { .folded = true, .view.delimited = true, .view.parts[PART_USER] = true };
	struct record r[] = { rec("a;b", 1, 4, &ust, PART_OK, NULL, PART_ABSENT) };
	char *out = render(r, 1, &o);

	CHECK_STR(out, "a_b;main;func_b 4\n");
	free(out);
}

TEST(plain_basic)
{
	struct output_opts o = { .view.delimited = true, .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = {
		rec("burn", 10, 9, &ust, PART_OK, &kst, PART_OK),
		rec("burn", 11, 2, &ust, PART_OK, NULL, PART_MISSED),
	};
	char *out = render(r, 2, &o);

	CHECK_STR(out,
		  "    [Missed Kernel Stack]\n"
		  "    func_b\n"
		  "    main\n"
		  "    -                burn (11)\n"
		  "        2\n"
		  "\n"
		  "    kleaf\n"
		  "    kroot\n"
		  "    --\n"
		  "    func_b\n"
		  "    main\n"
		  "    -                burn (10)\n"
		  "        9\n"
		  "\n");
	free(out);
}

TEST(plain_verbose)
{
	struct output_opts o = { .verbose = true, .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = { rec("x", 1, 1, &ust2, PART_OK, &kst, PART_OK) };
	char *out = render(r, 1, &o);

	CHECK_STR(out,
		  "    ffffffff81000010 kleaf+0x10 [kernel.kallsyms]\n"
		  "    ffffffff81000100 kroot+0x4 [ext4]\n"
		  "    7f0000 [unknown]\n"
		  "    402000 main+0x0\n"
		  "    -                x (1)\n"
		  "        1\n\n");
	free(out);
}

TEST(ties_sorted_by_text)
{
	struct output_opts o = { .folded = true, .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = {
		rec("zz", 1, 3, NULL, PART_ABSENT, &kst, PART_OK),
		rec("aa", 2, 3, NULL, PART_ABSENT, &kst, PART_OK),
		rec("mm", 3, 1, NULL, PART_ABSENT, &kst, PART_OK),
	};
	char *out = render(r, 3, &o);

	CHECK_STR(out, "mm;kroot;kleaf 1\naa;kroot;kleaf 3\nzz;kroot;kleaf 3\n");
	free(out);
}

TEST(write_error_reported)
{
	struct output_opts o = { .folded = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = { rec("a", 1, 1, NULL, PART_ABSENT, &kst, PART_OK) };
	struct records p = { .recs = r, .nr = 1 };
	FILE *f = fopen("/dev/full", "w");

	CHECK(f != NULL);
	if (f) {
		CHECK(output__write(f, &p, &o) < 0);
		fclose(f);
	}
}

TEST(per_cpu_per_thread)
{
	struct output_opts o = { .folded = true, .view.parts[PART_USER] = true, .per_cpu = true,
				 .per_thread = true };
	struct record r[] = { rec("burn", 10, 4, &ust, PART_OK, NULL, PART_ABSENT),
			      rec("burn", 10, 2, &ust, PART_OK, NULL, PART_ABSENT) };
	char *out;

	r[0].tid = 11;
	r[0].cpu = 1;
	r[1].tid = 12;
	out = render(r, 2, &o);
	CHECK_STR(out, "cpu_0;burn-10/12;main;func_b 2\ncpu_1;burn-10/11;main;func_b 4\n");
	free(out);
	o.folded = false;
	out = render(r, 1, &o);
	CHECK_STR(out, "    func_b\n    main\n    -                burn (10/11) CPU#1\n        4\n\n");
	free(out);
}

/*
 * Names cannot forge lines or frames: ';' in a frame name becomes ':', in
 * a comm '_' as does a space (FlameGraph's rules); controls become '?'
 * even if a source let them through.
 */
TEST(unsafe_names)
{
	struct output_opts o = { .folded = true, .view.parts[PART_USER] = true };
	STACK(evil, 1);
	struct record r[1];
	char *out;

	evil.frames[0] = (struct frame){ .name = "evil 999999\nfakeroot;injected_frame;z",
					 .addr = 0x401000, .module = "/tmp/a\033[2J" };
	r[0] = rec("a b;c\033]0;x\a", 10, 3, &evil, PART_OK, NULL, PART_ABSENT);
	out = render(r, 1, &o);
	CHECK_STR(out, "a_b_c?]0_x?;evil 999999?fakeroot:injected_frame:z 3\n");
	free(out);
	o.folded = false;
	out = render(r, 1, &o);
	CHECK_STR(out, "    evil 999999?fakeroot;injected_frame;z\n"
		       "    -                a b;c?]0;x? (10)\n        3\n\n");
	free(out);
	o.verbose = true;
	out = render(r, 1, &o);
	CHECK_STR(out, "    401000 evil 999999?fakeroot;injected_frame;z+0x0 [/tmp/a?[2J]\n"
		       "    -                a b;c?]0;x? (10)\n        3\n\n");
	free(out);
}

/*
 * Folded: no frame ends in white space and what a reader takes for a
 * count (flamegraph.pl: a differential line); other spaces stay.  Plain
 * output keeps the names as they are.
 */
TEST(folded_no_count_in_names)
{
	struct output_opts o = { .folded = true, .view.parts[PART_USER] = true };
	STACK(s, 10);
	struct record r[1];
	char *out;

	s.frames[0] = (struct frame){ .name = "f 1000000000" };
	s.frames[1] = (struct frame){ .name = "g 12.5" };
	s.frames[2] = (struct frame){ .name = "h\u00a0123" };	/* no-break space */
	s.frames[3] = (struct frame){ .name = "k 1\u3000\u0661\u0662" };	/* Arabic-Indic */
	s.frames[4] = (struct frame){ .name = "func (file.py)" };
	s.frames[5] = (struct frame){ .name = "v 1.2 x" };
	s.frames[6] = (struct frame){ .name = "a .5" };
	s.frames[7] = (struct frame){ .name = "x 12;y 3" };
	s.frames[8] = (struct frame){ .name = "t 99 " };	/* inferno trims the space */
	s.frames[9] = (struct frame){ .name = "u 7\u3000 " };
	r[0] = rec("c\u00a09", 1, 7, &s, PART_OK, NULL, PART_ABSENT);
	out = render(r, 1, &o);
	CHECK_STR(out, "c_9;u 7__;t 99_;x 12:y_3;a .5;v 1.2 x;func (file.py);k 1_\u0661\u0662;"
		       "h_123;g_12.5;f_1000000000 7\n");
	free(out);
	o.folded = false;
	out = render(r, 1, &o);
	CHECK_STR(out, "    f 1000000000\n    g 12.5\n    h\u00a0123\n"
		       "    k 1\u3000\u0661\u0662\n    func (file.py)\n    v 1.2 x\n"
		       "    a .5\n    x 12;y 3\n    t 99 \n    u 7\u3000 \n"
		       "    -                c\u00a09 (1)\n        7\n\n");
	free(out);
}

/* Unnamed frames of every kind, leaf first: a library, the vdso, JIT, none. */
static STACK(unnamed, 5);
static STACK(kunnamed, 1);

static void setup_unnamed(void)
{
	unnamed.frames[0] = (struct frame){ .addr = 0x7f1000, .offset = 0x1a2b,
					    .module = "/usr/lib/libx.so.1" };
	unnamed.frames[1] = (struct frame){ .addr = 0x7ffd00, .offset = 0x9a0, .module = "[vdso]" };
	unnamed.frames[2] = (struct frame){ .addr = 0x500000, .offset = 0x40, .module = "[anon]",
					    .kind = FRAME_JIT };
	unnamed.frames[3] = (struct frame){ .addr = 0x600000 };
	unnamed.frames[4] = (struct frame){ .name = "main", .addr = 0x402000, .offset = 8,
					    .module = "/bin/burn" };
	kunnamed.frames[0] = (struct frame){ .addr = 0xffffffff81000010, .kind = FRAME_KERNEL };
}

/* bcc's [unknown] by default; --unknown=module: the module's label. */
TEST(folded_unknown_styles)
{
	struct output_opts o = { .folded = true, .annotations = true,
				 .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = { rec("burn", 1, 2, &unnamed, PART_OK, &kunnamed, PART_OK) };
	char *out = render(r, 1, &o);

	CHECK_STR(out, "burn;main;[unknown];[unknown];[unknown];[unknown];[unknown]_[k] 2\n");
	free(out);
	o.module_labels = true;
	out = render(r, 1, &o);
	CHECK_STR(out, "burn;main;[unknown];[anon];[vdso];[libx.so.1];[kernel]_[k] 2\n");
	free(out);
	o.folded = false;
	o.annotations = false;
	out = render(r, 1, &o);
	CHECK_STR(out, "    [kernel]\n    [libx.so.1]\n    [vdso]\n    [anon]\n    [unknown]\n"
		       "    main\n    -                burn (1)\n        2\n\n");
	free(out);
}

/* A module's name is one frame too: ';' becomes ':', controls '?'. */
TEST(folded_unknown_module_sanitized)
{
	struct output_opts o = { .folded = true, .module_labels = true, .view.parts[PART_USER] = true };
	STACK(evil, 1);
	struct record r[1];
	char *out;

	evil.frames[0] = (struct frame){ .addr = 0x401000, .module = "/tmp/a;b\nc 1" };
	r[0] = rec("x", 1, 3, &evil, PART_OK, NULL, PART_ABSENT);
	out = render(r, 1, &o);
	CHECK_STR(out, "x;[a:b?c 1] 3\n");
	free(out);
}

/* -v: the label and the offset in the module's file, with or without --unknown. */
TEST(plain_verbose_unnamed)
{
	struct output_opts o = { .verbose = true, .view.parts[PART_USER] = true,
				 .view.parts[PART_KERNEL] = true };
	struct record r[] = { rec("burn", 1, 2, &unnamed, PART_OK, &kunnamed, PART_OK) };
	char *out = render(r, 1, &o);

	CHECK_STR(out,
		  "    ffffffff81000010 [kernel] [kernel.kallsyms]\n"
		  "    7f1000 [libx.so.1]+0x1a2b [/usr/lib/libx.so.1]\n"
		  "    7ffd00 [vdso]+0x9a0 [vdso]\n"
		  "    500000 [anon]+0x40 [anon]\n"
		  "    600000 [unknown]\n"
		  "    402000 main+0x8 [/bin/burn]\n"
		  "    -                burn (1)\n"
		  "        2\n\n");
	free(out);
}

/*
 * Short names: only demangled names are shortened, equal short names merge,
 * and the full names stay unless asked.
 */
TEST(short_names)
{
	struct output_opts o = { .folded = true, .view.parts[PART_USER] = true };
	STACK(s1, 3);
	STACK(s2, 3);
	struct record r[2];
	char *out;

	s1.frames[0] = (struct frame){ .name = "ns::Foo<int>::f(int) const", .flags = FRAME_DEMANGLED };
	s1.frames[1] = (struct frame){ .name = "func (file.py:12)", .kind = FRAME_INTERP };
	s1.frames[2] = (struct frame){ .name = "void run<int>(int)", .flags = FRAME_DEMANGLED };
	s2.frames[0] = (struct frame){ .name = "ns::Foo<long>::f(long) const", .flags = FRAME_DEMANGLED };
	s2.frames[1] = s1.frames[1];
	/* Not from the demangler (a perf map, a C name): as it is. */
	s2.frames[2] = (struct frame){ .name = "void run<int>(int)" };
	r[0] = rec("cxx", 1, 3, &s1, PART_OK, NULL, PART_ABSENT);
	r[1] = rec("cxx", 1, 4, &s2, PART_OK, NULL, PART_ABSENT);
	out = render(r, 2, &o);
	CHECK_STR(out, "cxx;void run<int>(int);func (file.py:12);ns::Foo<int>::f(int) const 3\n"
		       "cxx;void run<int>(int);func (file.py:12);ns::Foo<long>::f(long) const 4\n");
	free(out);
	o.short_names = true;
	out = render(r, 2, &o);
	CHECK_STR(out, "cxx;run;func (file.py:12);ns::Foo::f 3\n"
		       "cxx;void run<int>(int);func (file.py:12);ns::Foo::f 4\n");
	free(out);
	s2.frames[2].flags = FRAME_DEMANGLED;
	r[1] = rec("cxx", 1, 4, &s2, PART_OK, NULL, PART_ABSENT);
	out = render(r, 2, &o);
	CHECK_STR(out, "cxx;run;func (file.py:12);ns::Foo::f 7\n");
	free(out);
	o.folded = false;
	o.verbose = true;
	s1.frames[0].addr = 0x401010;
	s1.frames[0].offset = 0x10;
	s1.frames[0].module = "/bin/cxx";
	r[0] = rec("cxx", 1, 3, &s1, PART_OK, NULL, PART_ABSENT);
	out = render(r, 1, &o);
	CHECK_STR(out, "    401010 ns::Foo::f+0x10 [/bin/cxx]\n"
		       "    func (file.py:12)\n"
		       "    0 run+0x0\n"
		       "    -                cxx (1)\n        3\n\n");
	free(out);
}

/* A record of off-CPU time: count is nanoseconds. */
static struct record off(const char *comm, __u32 pid, __u64 ns, const void *user,
			 const void *kern)
{
	struct record r = rec(comm, pid, ns, user, user ? PART_OK : PART_ABSENT,
			      kern, kern ? PART_OK : PART_ABSENT);

	r.what = COUNT_OFF_CPU;
	return r;
}

/*
 * --off-cpu, folded: bcc offcputime -f's microseconds, summed in
 * nanoseconds first and then rounded (600 + 700 ns is 1 us, not 2); a
 * stack under half a microsecond in all still prints, as bcc prints
 * every stack it counted.
 */
TEST(folded_off_cpu_us)
{
	struct output_opts o = { .folded = true, .kind = PROFILE_OFF_CPU,
				 .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = {
		off("burn", 10, 600, &ust, &kst),
		off("burn", 11, 700, &ust, &kst),	/* merges with the one above */
		off("idle", 0, 2500000, NULL, &kst),
		off("x", 3, 1499, &ust2, NULL),
		off("y", 4, 499, &ust2, NULL),
	};
	char *out = render(r, 5, &o);

	CHECK_STR(out,
		  "y;main;[unknown] 0\n"
		  "burn;main;func_b;kroot;kleaf 1\n"
		  "x;main;[unknown] 1\n"
		  "idle;kroot;kleaf 2500\n");
	free(out);
}

/*
 * --wall: on-CPU samples weigh period_ns each, off-CPU stacks end with
 * [off-cpu] above their kernel frames; the same stack on and off the CPU
 * stays two lines, both in microseconds.
 */
TEST(folded_wall_marker)
{
	struct output_opts o = { .folded = true, .kind = PROFILE_WALL, .period_ns = 10101010,
				 .view.mark_off_cpu = true, .view.delimited = true,
				 .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = {
		rec("burn", 10, 3, &ust, PART_OK, NULL, PART_ABSENT),
		off("burn", 10, 45000000, &ust, &kst),
		off("burn", 10, 1000, &ust, NULL),
	};
	char *out = render(r, 3, &o);

	CHECK_STR(out,
		  "burn;main;func_b;[off-cpu] 1\n"
		  "burn;main;func_b 30303\n"
		  "burn;main;func_b;-;kroot;kleaf;[off-cpu] 45000\n");
	free(out);
}

/*
 * An off-CPU block's kernel stack with the tracepoint's iterator at its
 * leaf (another program attached to sched_exit_tp) prints as the same
 * block without it, and merges with it; a CPU sample keeps the frame.
 */
TEST(folded_off_cpu_traceiter)
{
	struct output_opts o = { .folded = true, .kind = PROFILE_OFF_CPU,
				 .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	STACK(kit, 3);
	struct record r[2];
	char *out;

	kit.frames[0] = (struct frame){ .name = "__traceiter_sched_exit_tp", .kind = FRAME_KERNEL };
	kit.frames[1] = kst.frames[0];
	kit.frames[2] = kst.frames[1];
	r[0] = off("burn", 10, 3000, &ust, &kit);
	r[1] = off("burn", 10, 2000, &ust, &kst);
	out = render(r, 2, &o);
	CHECK_STR(out, "burn;main;func_b;kroot;kleaf 5\n");
	free(out);
	o.kind = PROFILE_CPU;
	r[0] = rec("burn", 10, 4, &ust, PART_OK, &kit, PART_OK);
	out = render(r, 1, &o);
	CHECK_STR(out, "burn;main;func_b;kroot;kleaf;__traceiter_sched_exit_tp 4\n");
	free(out);
}

/* --off-cpu, plain: bcc offcputime's stacks, its total in microseconds. */
TEST(plain_off_cpu_us)
{
	struct output_opts o = { .kind = PROFILE_OFF_CPU, .view.delimited = true,
				 .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct record r[] = { off("sleep", 7, 1000500, &ust, &kst) };
	char *out = render(r, 1, &o);

	CHECK_STR(out,
		  "    kleaf\n"
		  "    kroot\n"
		  "    --\n"
		  "    func_b\n"
		  "    main\n"
		  "    -                sleep (7)\n"
		  "        1001\n"
		  "\n");
	free(out);
}

int main(void)
{
	setup();
	setup_unnamed();
	RUN(folded_basic);
	RUN(folded_delimiter_annotations);
	RUN(folded_user_only);
	RUN(plain_basic);
	RUN(plain_verbose);
	RUN(ties_sorted_by_text);
	RUN(write_error_reported);
	RUN(per_cpu_per_thread);
	RUN(unsafe_names);
	RUN(folded_no_count_in_names);
	RUN(folded_unknown_styles);
	RUN(folded_unknown_module_sanitized);
	RUN(plain_verbose_unnamed);
	RUN(short_names);
	RUN(folded_off_cpu_us);
	RUN(folded_wall_marker);
	RUN(folded_off_cpu_traceiter);
	RUN(plain_off_cpu_us);
	return unit_summary();
}
