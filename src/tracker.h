/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Following processes during the run.  The kernel's side-band records
 * (mmap, exec, fork, exit) and the sampler's "first sample of a process"
 * notes arrive on a perf ring buffer per CPU; each is applied to the user
 * symbolizer at once, while the process still lives, so that processes
 * that exit before the profile ends are still symbolized.
 */
#ifndef TRACKER_H
#define TRACKER_H

#include <linux/types.h>

struct tracker;
struct usyms;

struct tracker_stats {
	__u64 mmaps, execs, forks, exits, first_samples;
	__u64 lost;		/* records the kernel could not queue */
};

/* events_fd: the sampler's PERF_EVENT_ARRAY map.  NULL + errno on failure. */
struct tracker *tracker__new(int events_fd, struct usyms *us);
void tracker__free(struct tracker *t);

/* Wait up to timeout_ms for records and apply them; 0 or negative errno. */
int tracker__poll(struct tracker *t, int timeout_ms);

void tracker__stats(const struct tracker *t, struct tracker_stats *st);

#endif /* TRACKER_H */
