/*
 * wallmix: one thread with known shares of time on and off the CPU, for
 * wall-clock profiles (issue 29).  Built without frame pointers.
 *
 * It loops: func_cpu runs on the CPU until the thread has used 30 ms of
 * CPU time (by its own CPU clock, so that time it spends preempted on a
 * busy host is not taken from the 30 ms), then func_sleep sleeps 70 ms.
 * On-CPU time is 30% of the two, off-CPU time in func_sleep 70%; time the
 * thread spends runnable but preempted, in func_cpu, is off-CPU time of
 * func_cpu, in neither share.
 *
 *   wallmix [-d SECONDS] [-c CPU_MS] [-s SLEEP_MS]
 *
 * It prints "wallmix: running" when it starts, "wallmix: <rounds>" on exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long cpu_ns = 30000000L, sleep_ms = 70;

static long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Spins in chunks between reads of the thread's CPU clock (a system call). */
__attribute__((noinline)) void func_cpu(void)
{
	long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;

	do {
		for (volatile unsigned long i = 0; i < 20000; i++)
			;
	} while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void func_sleep(void)
{
	struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double duration = 0;
	unsigned long rounds = 0;
	long end;
	int opt;

	while ((opt = getopt(argc, argv, "d:c:s:")) != -1) {
		switch (opt) {
		case 'd': duration = atof(optarg); break;
		case 'c': cpu_ns = atol(optarg) * 1000000L; break;
		case 's': sleep_ms = atol(optarg); break;
		default:
			fprintf(stderr, "usage: wallmix [-d seconds] [-c cpu_ms] [-s sleep_ms]\n");
			return 2;
		}
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	printf("wallmix: running\n");
	fflush(stdout);
	end = clock_ns(CLOCK_MONOTONIC) + (long)(duration * 1e9);
	while (duration <= 0 || clock_ns(CLOCK_MONOTONIC) < end) {
		func_cpu();
		func_sleep();
		rounds++;
	}
	printf("wallmix: %lu\n", rounds);
	return 0;
}
