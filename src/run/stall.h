/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The stall watch: does each CPU's timer give the samples it should?
 *
 * A cpu-clock event fires every 1/F s on its CPU, the CPU busy or idle.
 * The kernel may fire it less: it throttles an event over
 * kernel.perf_event_max_sample_rate (which it lowers by itself when the
 * sampling interrupts of every profiler on the host take too long), and a
 * CPU's timer can stop (seen on a 6.18 guest with several profilers at
 * 999 Hz: one CPU's event gave nothing for seconds).  Such samples never
 * reach the BPF program: no counter of its own shows them.
 *
 * Once a second the watch compares each CPU's samples (the program's runs,
 * session__cpu_samples()) with the rate times the time the CPU was busy
 * (/proc/stat: user, nice, system, irq, softirq; idle, iowait and steal
 * excluded, so an idle CPU whose timer sleeps is no loss).  A second with
 * under STALL_SHORT of them counts the shortfall as missed; one with
 * almost none restarts the CPU's event (disable, enable), and says so.
 * What was missed is warned about and in the summary line's lost.
 *
 * Owned by the run; one thread.
 */
#ifndef STALL_H
#define STALL_H

#include <stdbool.h>
#include <linux/types.h>
#include "cli/opts.h"
#include "lib/report_pass.h"

struct session;

/*
 * A CPU is judged over a window of checks that together promise at least
 * STALL_MIN_WANT samples (a second at 999 Hz, two at 49 Hz; the last,
 * partial window of a run is judged only if it got that far).  A window is
 * short when it gave under STALL_SHORT of them and also more than
 * STALL_SIGMAS standard deviations under (a timer's hits and /proc/stat's
 * tick accounting are two samplings of the same busy time: their
 * difference is noise of about sqrt(due * (1 + F / HZ))), and then what it
 * lacked counts as missed.  One with under STALL_STOPPED of them has its event
 * restarted, at most once per restart_gap checks, the gap doubling to
 * STALL_MAX_GAP: a cause that persists (the sysctl far under -F) is not
 * restarted and warned about every second.
 */
#define STALL_MIN_WANT 100.0
#define STALL_SHORT 0.8
#define STALL_SIGMAS 4.0
#define STALL_STOPPED 0.05
#define STALL_MAX_GAP 600
/* The lowest kernel tick rate (CONFIG_HZ) /proc/stat's busy time may have. */
#define STALL_TICK_HZ 100.0

struct stall_cpu {
	__u64 samples_mark;	/* session__cpu_samples() at the last check */
	__u64 busy_mark;	/* /proc/stat busy ticks at the last check */
	__u64 samples;		/* since the first check */
	double busy_s;		/* busy seconds since the first check */
	__u64 win_samples;	/* the window being gathered */
	double win_busy_s;
	__u64 judged_samples;	/* the last window judged */
	double judged_busy_s;
	double missed;		/* samples short in short windows */
	unsigned int short_checks, restarts;
	unsigned int restart_at, restart_gap;	/* in checks: when one may come */
	bool watched;		/* an event of ours is on it */
};

struct stall {
	double rate;		/* samples a busy second should give; 0: not watched */
	int nr_cpus;
	struct stall_cpu *cpus;
	__u64 *scratch;		/* nr_cpus entries */
	long ticks_per_s;	/* /proc/stat's unit */
	bool primed;		/* the marks were taken */
	unsigned int checks;	/* stall__check() calls: about seconds */
	long max_rate;		/* kernel.perf_event_max_sample_rate, lowest seen */
	const char *stat_path;	/* /proc/stat; tests give another */
};

/*
 * For the run of o on s: only a cpu-clock event is watched (its samples
 * come in time); anything else leaves st unwatched.  0 or -ENOMEM.
 */
int stall__init(struct stall *st, const struct options *o, struct session *s);
void stall__free(struct stall *st);

/* Once a second while sampling, and once before the events are detached. */
void stall__check(struct stall *st, struct session *s);

/*
 * One CPU's check: samples and busy seconds since the last one, added to
 * its window and judged once the window is full.  Returns true when the
 * event looks stopped (the caller restarts it).  Apart from stall__check()
 * for the unit tests.
 */
bool stall__judge(struct stall_cpu *c, double rate, __u64 samples, double busy_s);

/* Samples the timer should have given and did not, over every CPU. */
__u64 stall__missed(const struct stall *st);

/*
 * REPORT_WARN: a line for each CPU that missed samples, what it gave
 * against what it should have; REPORT_STATS: every watched CPU's numbers.
 */
void stall__report(const struct stall *st, enum report_pass pass);

#endif /* STALL_H */
