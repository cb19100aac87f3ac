// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The stall watch: see stall.h. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/stall.h"
#include "loader/events.h"
#include "loader/session.h"
#include "lib/log.h"

int stall__init(struct stall *st, const struct options *o, struct session *s)
{
	memset(st, 0, sizeof(*st));
	st->stat_path = "/proc/stat";
	if (o->kind == PROFILE_OFF_CPU || !event__is_default(&o->event))
		return 0;
	st->nr_cpus = session__nr_cpus(s);
	st->cpus = calloc(st->nr_cpus, sizeof(*st->cpus));
	st->scratch = calloc(st->nr_cpus, sizeof(*st->scratch));
	if (!st->cpus || !st->scratch) {
		stall__free(st);
		return -ENOMEM;
	}
	st->ticks_per_s = sysconf(_SC_CLK_TCK);
	if (st->ticks_per_s <= 0)
		st->ticks_per_s = 100;
	st->rate = o->freq ? (double)o->freq : o->period ? 1e9 / o->period : 0;
	return 0;
}

void stall__free(struct stall *st)
{
	free(st->cpus);
	free(st->scratch);
	st->cpus = NULL;
	st->scratch = NULL;
	st->rate = 0;
}

/*
 * Each CPU's busy ticks from /proc/stat's "cpuN" lines into busy[]: user,
 * nice, system, irq and softirq (guest time is in user already).  A CPU
 * without a line keeps its value.  0 or -errno.
 */
static int read_busy(const char *path, __u64 *busy, int nr)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq;
	char line[512];
	FILE *f;
	int cpu;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu", &cpu, &user, &nice,
			   &sys, &idle, &iowait, &irq, &softirq) != 8 || cpu < 0 || cpu >= nr)
			continue;
		busy[cpu] = user + nice + sys + irq + softirq;
	}
	fclose(f);
	return 0;
}

static long read_max_rate(void)
{
	long v = -1;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

bool stall__judge(struct stall_cpu *c, double rate, __u64 samples, double busy_s)
{
	double want, n;

	c->samples += samples;
	c->busy_s += busy_s;
	c->win_samples += samples;
	c->win_busy_s += busy_s;
	want = rate * c->win_busy_s;
	if (want < STALL_MIN_WANT)
		return false;
	n = c->win_samples;
	c->judged_samples = c->win_samples;
	c->judged_busy_s = c->win_busy_s;
	c->win_samples = 0;
	c->win_busy_s = 0;
	/*
	 * Two noises: the timer's hits, about sqrt(want), and /proc/stat's,
	 * which classifies each tick of HZ as busy or idle: a busy time off by
	 * about sqrt(busy * HZ) ticks, want * rate / HZ in variance.
	 */
	if (n >= STALL_SHORT * want ||
	    n >= want - STALL_SIGMAS * sqrt(want * (1 + rate / STALL_TICK_HZ)))
		return false;
	c->short_checks++;
	c->missed += want - n;
	return n < STALL_STOPPED * want;
}

/* A stopped CPU's event: restarted, unless one came within its gap. */
static void restart(struct stall *st, struct session *s, int cpu)
{
	struct stall_cpu *c = &st->cpus[cpu];
	int err;

	if (st->checks < c->restart_at)
		return;
	c->restart_gap = c->restart_gap ? c->restart_gap * 2 : 1;
	if (c->restart_gap > STALL_MAX_GAP)
		c->restart_gap = STALL_MAX_GAP;
	c->restart_at = st->checks + c->restart_gap;
	err = session__restart_cpu(s, cpu);
	c->restarts++;
	/* The 1st, 2nd, 4th, 8th...: the journal of an agent is not flooded. */
	if (c->restarts & (c->restarts - 1))
		return;
	pr_warn("CPU %d: its cpu-clock event gave %llu samples in %.1f busy seconds at %.0f Hz; restarted it (%u time%s)%s%s; if it recurs, look for 'perf: interrupt took too long' in dmesg and lower -F",
		cpu, (unsigned long long)c->judged_samples, c->judged_busy_s, st->rate,
		c->restarts, c->restarts == 1 ? "" : "s", err ? ": " : "",
		err ? strerror(-err) : "");
}

void stall__check(struct stall *st, struct session *s)
{
	__u64 *busy = st->scratch, samples[st->nr_cpus ? st->nr_cpus : 1];
	long max_rate;

	if (!st->rate || session__cpu_samples(s, samples))
		return;
	for (int i = 0; i < st->nr_cpus; i++)
		busy[i] = st->cpus[i].busy_mark;
	if (read_busy(st->stat_path, busy, st->nr_cpus))
		return;
	max_rate = read_max_rate();
	if (max_rate > 0 && (!st->max_rate || max_rate < st->max_rate))
		st->max_rate = max_rate;
	for (int i = 0; i < st->nr_cpus; i++) {
		struct stall_cpu *c = &st->cpus[i];
		__u64 n = samples[i] - c->samples_mark;
		double secs = busy[i] >= c->busy_mark ?
			      (double)(busy[i] - c->busy_mark) / st->ticks_per_s : 0;

		if (samples[i] == UINT64_MAX) {
			c->watched = false;
			continue;
		}
		if (st->primed && c->watched && stall__judge(c, st->rate, n, secs))
			restart(st, s, i);
		c->watched = true;
		c->samples_mark = samples[i];
		c->busy_mark = busy[i];
	}
	st->primed = true;
	st->checks++;
}

__u64 stall__missed(const struct stall *st)
{
	double sum = 0;

	for (int i = 0; st->rate && i < st->nr_cpus; i++)
		sum += st->cpus[i].missed;
	return (__u64)(sum + 0.5);
}

/* Why a CPU's timer may give fewer samples than -F: what the host says. */
static const char *why(const struct stall *st, char *buf, size_t len)
{
	if (st->max_rate > 0 && st->max_rate < st->rate)
		snprintf(buf, len, "kernel.perf_event_max_sample_rate (%ld) is under -F %.0f: the kernel throttles the event; raise it",
			 st->max_rate, st->rate);
	else
		snprintf(buf, len, "the kernel throttled or stopped its event (other profilers sampling at high rates, or 'perf: interrupt took too long' in dmesg); those samples are not in the profile");
	return buf;
}

void stall__report(const struct stall *st, enum report_pass pass)
{
	char reason[256];

	if (!st->rate)
		return;
	for (int i = 0; i < st->nr_cpus; i++) {
		const struct stall_cpu *c = &st->cpus[i];

		if (pass == REPORT_STATS) {
			if (c->samples || c->busy_s > 0)
				pr_info("timer: CPU %d: %llu samples, %.1f s busy (%.0f due), %u short windows, %.0f samples missed, %u restarts",
					i, (unsigned long long)c->samples, c->busy_s,
					st->rate * c->busy_s, c->short_checks, c->missed, c->restarts);
			continue;
		}
		if (c->missed < 0.5)
			continue;
		pr_warn("CPU %d's timer gave %llu samples in %.1f busy seconds, about %.0f fewer than %.0f Hz: %s",
			i, (unsigned long long)c->samples, c->busy_s, c->missed, st->rate,
			why(st, reason, sizeof(reason)));
	}
}
