// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* -p and -L targets that exit: see targets.h. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "run/targets.h"
#include "lib/log.h"
#include "loader/events.h"
#include "symbols/procfs.h"

int targets__init(struct targets *t, const struct options *o)
{
	t->pids = o->pids != NULL;
	t->ids = o->pids ? o->pids : o->tids;
	t->nr = o->pids ? o->nr_pids : o->nr_tids;
	t->gone = calloc(o->nr_pids + o->nr_tids + 1, sizeof(bool));
	if (!t->gone) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

bool targets__check(struct targets *t)
{
	char path[32];

	for (size_t i = 0; i < t->nr && t->gone; i++) {
		if (t->gone[i])
			continue;
		/*
		 * A process: kill(0) asks the kernel in our own pid namespace,
		 * which /proc may not show (mounted for another); a zombie
		 * still counts.  A thread: only /proc/TID tells.
		 */
		snprintf(path, sizeof(path), "/proc/%u", t->ids[i]);
		if (t->pids ? kill((pid_t)t->ids[i], 0) == 0 || errno != ESRCH
			    : access(path, F_OK) == 0)
			continue;
		t->gone[i] = true;
		t->nr_gone++;
		if (!t->pids)
			pr_warn("TID %u has exited; profiling continues until the end", t->ids[i]);
		else if (t->nr_gone < t->nr)
			pr_warn("PID %u has exited; profiling the other processes goes on", t->ids[i]);
		else
			pr_warn("PID %u has exited, the last of the -p processes: the profile ends",
				t->ids[i]);
	}
	return t->pids && t->nr && t->nr_gone == t->nr;
}

/* utime + stime of -p process pid, or -errno. */
static int cpu_ticks(__u32 pid, __u64 *ticks)
{
	int dirfd = procfs__open_pid(pid);
	int err;

	if (dirfd < 0)
		return dirfd;
	err = procfs__cpu_ticks(dirfd, ticks);
	close(dirfd);
	return err;
}

void targets__mark(struct targets *t, const struct options *o)
{
	t->rate = 0;
	/* A cgroup or mount-namespace filter drops some of their samples by design. */
	if (!t->pids || !t->nr || o->kind != PROFILE_CPU || !o->freq ||
	    !event__is_clock(&o->event) || o->cpu >= 0 || o->cgroup || o->cgroupmap ||
	    o->mntnsmap)
		return;
	t->ticks_per_s = sysconf(_SC_CLK_TCK);
	t->ticks0 = calloc(t->nr, sizeof(*t->ticks0));
	if (!t->ticks0 || t->ticks_per_s <= 0)
		return;		/* an account not kept, said in -v */
	for (size_t i = 0; i < t->nr; i++)
		if (cpu_ticks(t->ids[i], &t->ticks0[i]))
			return;
	t->rate = o->freq;
}

void targets__stop(struct targets *t)
{
	__u64 ticks = 0, now;

	if (!t->rate || t->nr_gone)
		return;
	for (size_t i = 0; i < t->nr; i++) {
		if (cpu_ticks(t->ids[i], &now) || now < t->ticks0[i])
			return;
		ticks += now - t->ticks0[i];
	}
	t->cpu_s = (double)ticks / t->ticks_per_s;
	t->due = (__u64)(t->cpu_s * t->rate + 0.5);
	t->judged = true;
}

/* Whether got is short of due beyond the noise of two samplings of one CPU time. */
static bool short_of(double got, double due)
{
	return due >= TARGETS_MIN_DUE && got < TARGETS_SHORT * due &&
	       got < due - TARGETS_SIGMAS * sqrt(due);
}

__u64 targets__judge(struct targets *t, __u64 counted, __u64 dropped)
{
	if (!t->judged)
		return 0;
	t->counted = counted;
	t->dropped = dropped;
	if (!short_of(counted + dropped, t->due))
		return 0;
	return t->due - counted - dropped;
}

void targets__report(const struct targets *t, enum report_pass pass)
{
	if (!t->judged)
		return;
	if (pass == REPORT_STATS) {
		pr_info("targets: the -p processes used %.2f s of CPU while sampled: %llu samples due at %.0f Hz, %llu counted",
			t->cpu_s, (unsigned long long)t->due, t->rate,
			(unsigned long long)t->counted);
		return;
	}
	if (short_of(t->counted + t->dropped, t->due))
		pr_warn("the -p processes used %.2f s of CPU, %llu samples at %.0f Hz, but only %llu reached profile: the CPUs' timers gave fewer (another profiler on the host, or kernel.perf_event_max_sample_rate under -F); see -v",
			t->cpu_s, (unsigned long long)t->due, t->rate,
			(unsigned long long)(t->counted + t->dropped));
}

void targets__free(struct targets *t)
{
	free(t->gone);
	t->gone = NULL;
	free(t->ticks0);
	t->ticks0 = NULL;
}
