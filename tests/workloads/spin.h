/*
 * spin.h: what the no-frame-pointer workloads share with burn's design.
 *
 * spin_len() draws each call's length at random, SPIN/2 .. 3*SPIN/2
 * iterations, so that no loop has a fixed period for a sampling timer to
 * lock onto (see burn.c); spin() burns that many iterations; expired()
 * says whether SECONDS have passed since spin_start().  All static: each
 * workload is one file.
 */
#ifndef SPIN_H
#define SPIN_H
#include <stdlib.h>
#include <time.h>

#define SPIN 100000UL

static unsigned long spin_rng = 0x9e3779b97f4a7c15UL;
static struct timespec spin_t0;
static double spin_secs;

static inline unsigned long spin_len(unsigned long spin)
{
	spin_rng ^= spin_rng << 13;
	spin_rng ^= spin_rng >> 7;
	spin_rng ^= spin_rng << 17;
	return spin / 2 + spin_rng % spin;
}

static inline void spin(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i++)
		;
}

static inline void spin_start(int argc, char **argv, double dflt)
{
	spin_secs = argc > 1 ? atof(argv[1]) : dflt;
	clock_gettime(CLOCK_MONOTONIC, &spin_t0);
}

static inline int expired(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - spin_t0.tv_sec) + (t.tv_nsec - spin_t0.tv_nsec) / 1e9 >= spin_secs;
}
#endif
