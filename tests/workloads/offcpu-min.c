/*
 * offcpu-min: off-CPU time with a known answer.
 *
 * The main thread loops for -d seconds (default: forever) sleeping 30 ms
 * in func_a() and 10 ms in func_b(): an off-CPU profile sees func_a
 * blocked three times as long as func_b, and the thread blocked nearly all
 * of its wall time.  On a busy machine each wake-up also waits for a CPU,
 * which is blocked time too: so each function measures its own, and at
 * the end the program prints the mean of each, in microseconds:
 *
 *   offcpu-min: func_a 30071 us, func_b 10068 us
 *
 * Built without frame pointers (WL_UNWIND): the stacks reach main only
 * through the unwinder's tables.
 *
 *   offcpu-min [-d SECONDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double spent_a, spent_b;	/* ns */

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) void func_a(void)
{
	double t0 = now_ns();

	sleep_ms(30);
	spent_a += now_ns() - t0;
}

__attribute__((noinline)) void func_b(void)
{
	double t0 = now_ns();

	sleep_ms(10);
	spent_b += now_ns() - t0;
}

int main(int argc, char **argv)
{
	time_t end = 0;
	long calls = 0;
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1)
		if (c == 'd')
			end = time(NULL) + atoi(optarg);
	while (!end || time(NULL) < end) {
		func_a();
		func_b();
		calls++;
	}
	printf("offcpu-min: func_a %.0f us, func_b %.0f us\n",
	       spent_a / calls / 1e3, spent_b / calls / 1e3);
	return 0;
}
