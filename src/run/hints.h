/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Hints that save an hour: at the end of a run, one warning line per
 * process (the few with the most such samples) whose user time is mostly
 * in JIT code nothing names (unnamed frames in anonymous executable
 * memory), with the fix for its runtime: a perf map from the JVM (jcmd PID
 * Compiler.perfmap) or from node (--perf-basic-prof), else
 * /tmp/perf-PID.map written by the runtime itself.
 *
 * A process qualifies with at least HINTS_MIN_SAMPLES samples that have a
 * user leaf frame, at least half of them unnamed in anonymous memory; a
 * java or node process also with HINTS_RUNTIME_PCT% of them that have
 * such a frame anywhere on the stack (a JVM without frame pointers stops
 * its stacks at the first JIT frame, leaving others in libjvm; node's
 * leaves are often its named builtins, under unnamed JavaScript).
 */
#ifndef HINTS_H
#define HINTS_H

#include <stdbool.h>
#include <stddef.h>
#include "trace/trace.h"

#define HINTS_MIN_SAMPLES	100
#define HINTS_MAX_LINES		3
#define HINTS_RUNTIME_PCT	25

enum hint_runtime {
	HINT_RT_OTHER,
	HINT_RT_JAVA,
	HINT_RT_NODE,
};

struct hint_proc {
	__u32 pid;
	char comm[TASK_COMM_LEN];
	bool main_comm;		/* comm is the main thread's (tid == pid) */
	__u8 runtime;		/* enum hint_runtime */
	const char *module;	/* the last module note_runtime() read, this report */
	__u64 user;		/* samples with a user leaf frame */
	__u64 anon;		/* ... unnamed, in anonymous memory */
	__u64 jit;		/* ... with such a frame anywhere on the stack */
};

struct hints {
	struct hint_proc *procs;
	size_t nr, cap;
	struct htab by_pid;	/* pid -> id into procs */
	const char *proc_root;	/* NULL: "/proc"; tests point it elsewhere */
};

/* Count one report's records (best effort: out of memory, it skips). */
void hints__add(struct hints *h, const struct records *rs);

/*
 * The hint line for p, into buf (size bytes); the caller prints it.
 * Returns buf.
 */
const char *hints__line(const struct hint_proc *p, char *buf, size_t size);

/*
 * The processes that qualify, the most such samples first (then by PID):
 * the first max of them into out.  Returns how many qualify in all.
 */
size_t hints__pick(const struct hints *h, const struct hint_proc **out, size_t max);

/*
 * Print the hints, once, as warnings (the first HINTS_MAX_LINES, then how
 * many more): the run's last words on stderr.
 */
void hints__warn(const struct hints *h);

void hints__free(struct hints *h);

#endif /* HINTS_H */
