// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * storm: a storm of fresh processes, for t111 (the walker's asks shared
 * between users).  `storm SECONDS LOOPS SPIN_US` runs LOOPS loops (in a
 * process group of their own, each dying with the first) that each fork
 * and exec a child after another for SECONDS; a child, `storm -c
 * SPIN_US`, spins SPIN_US microseconds and exits: a new process image
 * sampled a few times, whose walks ask for its mapping list.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
static volatile unsigned long sink;
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
/* storm SECONDS LOOPS SPIN_US; a child: storm -c SPIN_US */
int main(int argc, char **argv)
{
	double t0 = now();
	long n = 0;
	int i;
	if (argc == 3 && !strcmp(argv[1], "-c")) {
		while (now() - t0 < atof(argv[2]) / 1e6)
			sink++;
		return 0;
	}
	if (argc != 4)
		return 2;
	setpgid(0, 0);
	for (i = 1; i < atoi(argv[2]); i++)
		if (!fork()) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			break;
		}
	while (now() - t0 < atof(argv[1])) {
		pid_t p = fork();
		if (!p) {
			execl("/proc/self/exe", "stormchild", "-c", argv[3], (char *)0);
			_exit(1);
		}
		if (p > 0 && waitpid(p, NULL, 0) == p)
			n++;
	}
	printf("storm: %ld children\n", n);
	return 0;
}
