/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The run's own account of its reports, and its words on them: the
 * warning for a run with far fewer samples than its rate and length
 * promise, and the one line after writing files:
 * "profile: wrote cpu.svg, cpu.folded: 4,521 samples, 312 distinct stacks, 0 lost"
 */
#ifndef SUMMARY_H
#define SUMMARY_H

#include <stddef.h>
#include <time.h>
#include <linux/types.h>
#include "cli/opts.h"
#include "loader/session.h"

struct records;
struct tracker;
struct writers;

struct summary {
	struct sample_tally tally;	/* over all intervals */
	size_t stacks;			/* distinct stacks: most in one report */
	unsigned int reports;
	struct timespec sample_start;	/* monotonic: when sampling began */
	struct timespec sample_end;	/* monotonic: when it stopped (detach) */
	__u64 timer_missed;		/* samples the CPUs' timers did not give (stall.h) */
};

/*
 * Add one report: the records built from the samples it drained (one
 * record per key, with its count).
 */
void summary__add(struct summary *sum, const struct options *o,
		  const struct records *recs);

/* The warning, once; c the sampler's counters. */
void summary__warn_few(const struct summary *sum, const struct options *o,
		       const __u64 *c);

/* The summary line, after writing files, unless -q.  t may be NULL. */
void summary__print(const struct summary *sum, const struct options *o,
		    const __u64 *c, const struct tracker *t,
		    const struct writers *out);

#endif /* SUMMARY_H */
