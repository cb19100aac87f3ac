/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The processes or threads named with -p or -L: one warning when one of
 * them exits.  Its samples so far are printed at the end.  With -p, once
 * every process has exited the run ends as Ctrl-C would end it (perf and
 * py-spy do the same): nothing is left to sample.  -L goes on until the
 * duration, as bcc's tools do.
 *
 * A CPU profile of -p processes at -F on a clock, on every CPU, is also
 * checked against an account kept apart from every profiler's: the CPU
 * time the kernel charged the processes (/proc/PID/stat) while sampling,
 * within its noise.
 * Samples that time should have given and that never reached the BPF
 * program (a CPU's timer throttled or stopped, seen with several
 * profilers on one host) are reported, never lost silently.
 */
#ifndef TARGETS_H
#define TARGETS_H

#include <stdbool.h>
#include "cli/opts.h"
#include "lib/report_pass.h"

struct targets {
	const __u32 *ids;	/* the -p PIDs, else the -L TIDs */
	size_t nr;
	bool pids;
	bool *gone;		/* per id: its exit was reported */
	size_t nr_gone;
	/* The CPU-time account; rate 0: not kept. */
	double rate;		/* samples a CPU second gives (-F) */
	__u64 *ticks0;		/* per id: utime + stime when sampling began */
	long ticks_per_s;
	double cpu_s;		/* CPU seconds used while sampling */
	__u64 due, counted;	/* samples cpu_s should give; those counted */
	__u64 dropped;		/* ... and those taken but dropped (count map full) */
	bool judged;
};

/* 0, or -ENOMEM after printing so. */
int targets__init(struct targets *t, const struct options *o);

/*
 * Look for the targets that exited since the last call, and say so.
 * true when the run should end: every -p process has exited.
 */
bool targets__check(struct targets *t);

/* Sampling starts: note each -p process's CPU time, when it is to be kept. */
void targets__mark(struct targets *t, const struct options *o);

/* Sampling stops: the CPU time used since targets__mark(), when every process lived. */
void targets__stop(struct targets *t);

/*
 * The samples that reached the program (counted, or dropped for a full
 * count map: lost already, and said so) against that time's due.  The
 * kernel charges CPU time at its tick and the timer samples on its own:
 * two samplings of one time, which differ by about sqrt(due).  Short is
 * under TARGETS_SHORT of the due and over TARGETS_SIGMAS deviations
 * under it, with at least TARGETS_MIN_DUE due; returns the samples short
 * then, else 0.
 */
#define TARGETS_SHORT 0.8
#define TARGETS_SIGMAS 4.0
#define TARGETS_MIN_DUE 100.0
__u64 targets__judge(struct targets *t, __u64 counted, __u64 dropped);

/* REPORT_WARN: a shortfall; REPORT_STATS: the account, judged or not. */
void targets__report(const struct targets *t, enum report_pass pass);

void targets__free(struct targets *t);

#endif /* TARGETS_H */
