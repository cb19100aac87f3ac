/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Stack completeness: the share of sampled user stacks that reach the
 * root frame of their thread, and where the others stop.  A stack is
 * complete when one of its three outermost frames is a thread's first
 * function (_start, __libc_start_main, start_thread, clone3, Go's
 * runtime.goexit, ...): a stripped _start has no name, but the libc
 * frames above it do.
 */
#ifndef COMPLETENESS_H
#define COMPLETENESS_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/report_pass.h"

struct records;

#define COMPLETENESS_MODULES 32		/* places of incomplete stacks kept */

struct completeness {
	/*
	 * What is counted: CPU samples, or (an --off-cpu profile) off-CPU
	 * time in microseconds; never the two added up (--wall: samples).
	 */
	bool off_cpu;
	__u64 samples;		/* samples with a user stack (or microseconds) */
	__u64 complete;		/* ... that reach a root frame */
	__u64 frames;		/* user frames in all of them */
	__u32 nr_modules;
	struct {
		char name[128];	/* the object of the outermost frame */
		__u64 samples;
	} modules[COMPLETENESS_MODULES];
	__u64 other;		/* incomplete samples in no kept module */
	const char *advice;	/* the warning's last words: what would help */
};

/* Count the user stacks of one report's records. */
void completeness__add(struct completeness *c, const struct records *rs);

/* Is name a thread's first function? */
bool completeness__is_root(const char *name);

/*
 * The most common places incomplete stacks stop, as "a (80%), b (15%)",
 * at most n of them, into buf.
 */
void completeness__worst(const struct completeness *c, int n, char *buf, size_t len);

/*
 * The run's last words (lib/report_pass.h): a warning when most stacks stop
 * short, with c->advice; at -v, the share that reach a root frame.
 */
void completeness__report(const struct completeness *c, enum report_pass pass);

#endif /* COMPLETENESS_H */
