// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The JIT hint: who qualifies, in what order, and the exact lines. */
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "run/hints.h"
#include "stacks.h"

static STACK(anon_leaf, 2);	/* unnamed in [anon], under main */
static STACK(named_leaf, 2);	/* a named leaf */
static STACK(jvm_anon, 2);	/* unnamed in [anon], under libjvm.so */
static STACK(memfd_leaf, 1);
static STACK(jvm_only, 2);	/* libjvm.so's own code, named */
static STACK(node_js, 3);	/* a named builtin of node over unnamed JS */
static STACK(node_named, 2);	/* JS named by --perf-basic-prof's map */

static void setup(void)
{
	anon_leaf.frames[0] = (struct frame){ .addr = 0x7f0000001000, .module = "[anon]",
					      .offset = 0x10 };
	anon_leaf.frames[1] = (struct frame){ .name = "main", .module = "/usr/bin/app" };
	named_leaf.frames[0] = (struct frame){ .name = "work", .module = "/usr/bin/app" };
	named_leaf.frames[1] = (struct frame){ .name = "main", .module = "/usr/bin/app" };
	jvm_anon.frames[0] = anon_leaf.frames[0];
	jvm_anon.frames[1] = (struct frame){ .name = "JavaCalls::call_helper",
					     .module = "/usr/lib/jvm/lib/server/libjvm.so" };
	memfd_leaf.frames[0] = (struct frame){ .addr = 0x7f0000002000, .module = "/memfd:jit" };
	jvm_only.frames[0] = (struct frame){ .name = "G1ParScanThreadState::trim_queue",
					     .module = "/usr/lib/jvm/lib/server/libjvm.so" };
	jvm_only.frames[1] = jvm_anon.frames[1];
	node_js.frames[0] = (struct frame){ .name = "Builtins_JsonStringify", .module = "/usr/bin/node" };
	node_js.frames[1] = anon_leaf.frames[0];
	node_js.frames[2] = (struct frame){ .name = "main", .module = "/usr/bin/node" };
	node_named.frames[0] = (struct frame){ .name = "LazyCompile:*work /tmp/a.js:2",
					       .module = "[anon]", .addr = 0x7f0000003000 };
	node_named.frames[1] = node_js.frames[2];
}

static struct record rec_tid(const char *comm, __u32 pid, __u32 tid, __u64 count,
			     const void *user)
{
	struct record r = test_record(comm, pid, count, user, PART_OK, NULL, PART_ABSENT);

	r.tid = tid;
	return r;
}

static void add(struct hints *h, struct record *r, size_t nr)
{
	struct records rs = { .recs = r, .nr = nr };

	hints__add(h, &rs);
}

/* Half or more of at least 100 samples: in; 99 samples, or under half: out. */
TEST(threshold)
{
	struct hints h = { .proc_root = "/nonexistent" };
	struct record r[] = {
		rec_tid("app", 10, 10, 50, &anon_leaf),
		rec_tid("app", 10, 11, 50, &named_leaf),	/* 50 of 100: in */
		rec_tid("few", 20, 20, 99, &anon_leaf),	/* 99 samples: out */
		rec_tid("most", 30, 30, 49, &anon_leaf),
		rec_tid("most", 30, 30, 51, &named_leaf),	/* 49 of 100: out */
		/* Kernel-only samples do not count. */
		test_record("kern", 40, 500, NULL, PART_ABSENT, &anon_leaf, PART_OK),
	};
	const struct hint_proc *top[3];

	add(&h, r, sizeof(r) / sizeof(*r));
	CHECK_INT(hints__pick(&h, top, 3), 1);
	CHECK_INT(top[0]->pid, 10);
	CHECK_INT(top[0]->user, 100);
	CHECK_INT(top[0]->anon, 50);
	hints__free(&h);
}

/* Counts add up over reports (-i); the most such samples first. */
TEST(order_and_intervals)
{
	struct hints h = { .proc_root = "/nonexistent" };
	struct record a[] = {
		rec_tid("one", 1, 1, 60, &anon_leaf),
		rec_tid("two", 2, 2, 300, &memfd_leaf),
		rec_tid("three", 3, 3, 200, &anon_leaf),
		rec_tid("four", 4, 4, 150, &anon_leaf),
	};
	struct record b[] = { rec_tid("one", 1, 1, 60, &anon_leaf) };
	const struct hint_proc *top[3];

	add(&h, a, 4);
	add(&h, b, 1);
	CHECK_INT(hints__pick(&h, top, 3), 4);
	CHECK_INT(top[0]->pid, 2);
	CHECK_INT(top[1]->pid, 3);
	CHECK_INT(top[2]->pid, 4);
	hints__free(&h);
}

/* The fix for each runtime, word for word; the main thread names the process. */
TEST(lines)
{
	struct hints h = { .proc_root = "/nonexistent" };
	struct record r[] = {
		rec_tid("C2 CompilerThre", 100, 101, 10, &named_leaf),
		rec_tid("java", 100, 100, 190, &anon_leaf),
		rec_tid("worker", 200, 201, 150, &jvm_anon),
		rec_tid("node", 300, 300, 120, &anon_leaf),
		rec_tid("luajit\x1b[2J", 400, 400, 110, &anon_leaf),
	};
	const struct hint_proc *top[4];
	char buf[512];

	add(&h, r, sizeof(r) / sizeof(*r));
	CHECK_INT(hints__pick(&h, top, 4), 4);
	CHECK_STR(hints__line(top[0], buf, sizeof(buf)),
		  "java (PID 100): 95% of its user-space samples are in unnamed JIT code (anonymous memory); "
		  "run jcmd 100 Compiler.perfmap while it runs and profile again, and start java with "
		  "-XX:+PreserveFramePointer for whole stacks");
	/* Java by its libjvm.so, whatever the thread is called. */
	CHECK_STR(hints__line(top[1], buf, sizeof(buf)),
		  "worker (PID 200): 100% of its user-space samples are in unnamed JIT code (anonymous memory); "
		  "run jcmd 200 Compiler.perfmap while it runs and profile again, and start java with "
		  "-XX:+PreserveFramePointer for whole stacks");
	CHECK_STR(hints__line(top[2], buf, sizeof(buf)),
		  "node (PID 300): 100% of its user-space samples are in unnamed JIT code (anonymous memory); "
		  "start node with --perf-basic-prof (and --interpreted-frames-native-stack) and profile again");
	CHECK_STR(hints__line(top[3], buf, sizeof(buf)),
		  "luajit?[2J (PID 400): 100% of its user-space samples are in unnamed JIT code (anonymous memory); "
		  "have its runtime write /tmp/perf-400.map (the perf JIT map format; often a runtime flag) "
		  "and profile again");
	/* Too small a buffer: cut, still a string. */
	CHECK_INT(strlen(hints__line(top[0], buf, 10)), 9);
	hints__free(&h);
}

/*
 * java and node: stacks through unnamed JIT code count, not only leaves
 * (a JVM without frame pointers: java;[unknown] in 43% of the samples, the
 * rest in libjvm; node: named builtins over unnamed JS), from
 * HINTS_RUNTIME_PCT% of the samples.  Not another program; not below the
 * share; not once the JIT code has names.
 */
TEST(runtimes)
{
	struct hints h = { .proc_root = "/nonexistent" };
	struct record r[] = {
		rec_tid("java", 100, 100, 43, &jvm_anon),
		rec_tid("GC Thread#0", 100, 101, 57, &jvm_only),
		rec_tid("node", 200, 200, 474, &node_js),
		rec_tid("node", 200, 200, 2, &named_leaf),
		rec_tid("app", 300, 300, 43, &anon_leaf),
		rec_tid("app", 300, 300, 57, &named_leaf),
		rec_tid("java", 400, 400, 20, &jvm_anon),
		rec_tid("java", 400, 400, 80, &jvm_only),
		rec_tid("node", 500, 500, 300, &node_named),
	};
	const struct hint_proc *top[4];
	char buf[512];

	add(&h, r, sizeof(r) / sizeof(*r));
	/* The most samples with an unnamed leaf first, then through one. */
	CHECK_INT(hints__pick(&h, top, 4), 2);
	CHECK_STR(hints__line(top[1], buf, sizeof(buf)),
		  "node (PID 200): 99% of its user-space samples pass through unnamed JIT code (anonymous memory); "
		  "start node with --perf-basic-prof (and --interpreted-frames-native-stack) and profile again");
	CHECK_STR(hints__line(top[0], buf, sizeof(buf)),
		  "java (PID 100): 43% of its user-space samples pass through unnamed JIT code (anonymous memory); "
		  "run jcmd 100 Compiler.perfmap while it runs and profile again, and start java with "
		  "-XX:+PreserveFramePointer for whole stacks");
	hints__free(&h);
}

/*
 * A module's string freed after one report and its memory reused for
 * another module's in the next (usyms interns them per report): the
 * module read last is forgotten between reports, so the new name is read.
 */
TEST(runtime_from_a_reused_module_string)
{
	static char module[64];
	static STACK(jit, 2);
	static STACK(named, 1);
	struct hints h = { .proc_root = "/nonexistent" };
	const struct hint_proc *top[2];
	struct record r;
	char buf[512];

	jit.frames[0] = anon_leaf.frames[0];
	jit.frames[1] = (struct frame){ .name = "main", .module = module };
	named.frames[0] = jit.frames[1];
	strcpy(module, "/usr/bin/svc");
	r = rec_tid("svc", 600, 600, 60, &jit);
	add(&h, &r, 1);
	/* The next report: the same address, now libjvm.so's name, read first. */
	strcpy(module, "/usr/lib/jvm/lib/server/libjvm.so");
	r = rec_tid("svc", 600, 600, 50, &named);
	add(&h, &r, 1);
	CHECK_INT(hints__pick(&h, top, 2), 1);
	CHECK_STR(hints__line(top[0], buf, sizeof(buf)),
		  "svc (PID 600): 54% of its user-space samples are in unnamed JIT code (anonymous memory); "
		  "run jcmd 600 Compiler.perfmap while it runs and profile again, and start java with "
		  "-XX:+PreserveFramePointer for whole stacks");
	hints__free(&h);
}

int main(void)
{
	setup();
	RUN(threshold);
	RUN(order_and_intervals);
	RUN(lines);
	RUN(runtimes);
	RUN(runtime_from_a_reused_module_string);
	return unit_summary();
}
