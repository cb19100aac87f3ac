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

#include <stdbool.h>
#include <linux/types.h>
#include "lib/report_pass.h"

struct tracker;
struct usyms;

struct tracker_stats {
	__u64 mmaps, execs, forks, exits, first_samples, exec_notes;
	__u64 lost;		/* records the kernel could not queue */
	__u64 skipped;		/* records of processes not profiled */
	__u64 recoveries;	/* rounds with losses, after which ... */
	__u64 recovered;	/* ... this many processes' maps were read again */
	__u64 stale;		/* records of a process that had the pid before */
};

/*
 * events_fd: the sampler's PERF_EVENT_ARRAY map.  With known_only (a run
 * with -p, -L or a cgroup filter), only the records of processes that us
 * knows are applied: a process is known from its first sample (the
 * sampler notes only processes its filters let through), as a target
 * added before, or as the fork of a known one.  NULL + errno on failure.
 */
struct tracker *tracker__new(int events_fd, struct usyms *us, bool known_only);
void tracker__free(struct tracker *t);

/*
 * Keep the unwinder's view of processes (unwind.h) in step too: first
 * samples, execs, forks of synced processes (at the end of the round of
 * records, if they did not exit within it) and new executable mappings
 * ask for a sync, exits for a forget.  Records of a process that had the
 * pid before the one known now are skipped for it as for usyms.
 */
struct unwind;
void tracker__set_unwind(struct tracker *t, struct unwind *uw);

/*
 * Tell the interpreters of first samples, execs, exits and the mappings
 * they want, and hand them their stacks' notes.
 */
struct interps;
void tracker__set_interps(struct tracker *t, struct interps *ints);

/*
 * Wait up to timeout_ms for records, or for wake_fd (if not negative) to
 * poll readable, and apply the records; 0 or negative errno.
 */
int tracker__poll(struct tracker *t, int timeout_ms, int wake_fd);

void tracker__stats(const struct tracker *t, struct tracker_stats *st);

/*
 * The run's last words (lib/report_pass.h): at -v, the processes usyms us
 * knows and the records read, one line as scripts read it, then the
 * recovery from lost records.  t or us NULL: their numbers are zeros.
 */
struct usyms;
void tracker__report(const struct tracker *t, const struct usyms *us,
		     enum report_pass pass);

#endif /* TRACKER_H */
