// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * spinner SECONDS: spins 10 ms of every second for SECONDS, then exits.
 * For t91: forty of them are sampled by a profile at little cost.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	long end = ms_now() + (argc > 1 ? atol(argv[1]) : 10) * 1000;
	volatile unsigned long n = 0;

	while (ms_now() < end) {
		long t = ms_now();

		while (ms_now() < t + 10)
			n++;
		usleep(990000);
	}
	return 0;
}
