// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The ledger of the profiler's own CPU time: see cputime.h. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "lib/cputime.h"
#include "lib/log.h"

#define MAX_PARTS 16	/* names: a handful are used */
#define MAX_LIVE 64	/* registered threads alive at once */

struct part {
	const char *name;
	__u64 ns;	/* of ended threads and sections */
	bool main;	/* a section of the main thread */
};

struct live {
	pthread_t id;
	clockid_t clock;
	int part;	/* index in parts */
};

static struct {
	pthread_mutex_t lock;
	struct part parts[MAX_PARTS];
	unsigned int nr_parts;
	struct live live[MAX_LIVE];
	unsigned int nr_live;
	__u64 sections;	/* ns of the main thread's sections */
} ledger = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __u64 clock_ns(clockid_t clock)
{
	struct timespec t;

	if (clock_gettime(clock, &t))
		return 0;
	return (__u64)t.tv_sec * 1000000000 + t.tv_nsec;
}

__u64 cputime__now(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Called locked: the part's index, made if new; -1 when the table is full. */
static int part_of(const char *name, bool main)
{
	unsigned int i;

	for (i = 0; i < ledger.nr_parts; i++)
		if (!strcmp(ledger.parts[i].name, name))
			break;
	if (i == MAX_PARTS)
		return -1;
	if (i == ledger.nr_parts) {
		ledger.parts[i].name = name;
		ledger.nr_parts++;
	}
	ledger.parts[i].main |= main;
	return i;
}

void cputime__section(const char *part, __u64 t0)
{
	__u64 ns = cputime__now() - t0;
	int i;

	pthread_mutex_lock(&ledger.lock);
	i = part_of(part, true);
	if (i >= 0)
		ledger.parts[i].ns += ns;
	ledger.sections += i >= 0 ? ns : 0;
	pthread_mutex_unlock(&ledger.lock);
}

void cputime__declare(const char *part)
{
	pthread_mutex_lock(&ledger.lock);
	part_of(part, false);
	pthread_mutex_unlock(&ledger.lock);
}

void cputime__thread_start(const char *part)
{
	struct live l = { .id = pthread_self() };

	if (pthread_getcpuclockid(l.id, &l.clock))
		return;
	pthread_mutex_lock(&ledger.lock);
	l.part = part_of(part, false);
	if (l.part >= 0 && ledger.nr_live < MAX_LIVE)
		ledger.live[ledger.nr_live++] = l;
	pthread_mutex_unlock(&ledger.lock);
}

void cputime__thread_end(void)
{
	pthread_t self = pthread_self();

	pthread_mutex_lock(&ledger.lock);
	for (unsigned int i = 0; i < ledger.nr_live; i++) {
		if (!pthread_equal(ledger.live[i].id, self))
			continue;
		ledger.parts[ledger.live[i].part].ns += cputime__now();
		ledger.live[i] = ledger.live[--ledger.nr_live];
		break;
	}
	pthread_mutex_unlock(&ledger.lock);
}

static double ms(__u64 ns)
{
	return ns / 1e6;
}

void cputime__report(void)
{
	__u64 ns[MAX_PARTS] = {}, main_ns = cputime__now(), sum, total = 0;
	char line[1024] = "";
	struct rusage ru;
	size_t at = 0;

	if (!getrusage(RUSAGE_SELF, &ru))
		total = (__u64)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
			(__u64)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
	pthread_mutex_lock(&ledger.lock);
	for (unsigned int i = 0; i < ledger.nr_parts; i++)
		ns[i] = ledger.parts[i].ns;
	for (unsigned int i = 0; i < ledger.nr_live; i++)
		ns[ledger.live[i].part] += clock_ns(ledger.live[i].clock);
	sum = main_ns;
	/* The main thread's sections are in main_ns already. */
	for (unsigned int i = 0; i < ledger.nr_parts && at < sizeof(line); i++)
		at += snprintf(line + at, sizeof(line) - at, "%s %.1f ms, ",
			       ledger.parts[i].name, ms(ns[i]));
	for (unsigned int i = 0; i < ledger.nr_parts; i++)
		sum += ns[i];
	sum -= ledger.sections;
	main_ns -= main_ns > ledger.sections ? ledger.sections : main_ns;
	pthread_mutex_unlock(&ledger.lock);
	pr_info("CPU: %.1f ms user+sys; %smain thread's rest %.1f ms; parts add up to %.1f ms",
		ms(total), line, ms(main_ns), ms(sum));
}
