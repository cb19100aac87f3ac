// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * forkspin: a process that forks without exec, as prefork servers do.
 *
 * main spins in parent_work() for PARENT seconds (long enough for the
 * profiler to list its mappings), then forks CHILDREN children at once;
 * each names itself "forkchild" (its comm) and spins in child_work() for
 * CHILD seconds, then exits; main waits for them.  Known answer: every
 * sample of a child is main -> child_work -> spin, the child's mappings
 * being its parent's.  Built without frame pointers and without sibling
 * calls (the frames are real).
 *
 * With LIBs, main first dlopen()s each (t102: more objects with a table
 * than a list copied at a fork holds), and each child spins inside libc:
 * main -> child_work -> qsort's own frames -> spin_cmp -> spin_for, whose
 * walk needs libc's table.
 *
 *   forkspin [PARENT] [CHILDREN] [CHILD] [LIB...]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "spin.h"

static volatile unsigned long sink;

__attribute__((noinline)) void spin_for(double seconds)
{
	spin_secs = seconds;
	clock_gettime(CLOCK_MONOTONIC, &spin_t0);
	while (!expired())
		spin(spin_len(SPIN / 10));
	sink++;
}

__attribute__((noinline)) void parent_work(double seconds)
{
	spin_for(seconds);
	sink++;
}

static double cmp_secs;

/* qsort()'s comparison: the child's spin, called from libc's sort. */
__attribute__((noinline)) static int spin_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (cmp_secs > 0)
		spin_for(cmp_secs);
	cmp_secs = 0;
	return (x > y) - (x < y);
}

__attribute__((noinline)) void child_work(double seconds, int in_libc)
{
	int v[2] = { 2, 1 };

	if (in_libc) {
		cmp_secs = seconds;
		qsort(v, 2, sizeof(v[0]), spin_cmp);
	} else {
		spin_for(seconds);
	}
	sink += v[0];
}

int main(int argc, char **argv)
{
	double parent = argc > 1 ? atof(argv[1]) : 1;
	int children = argc > 2 ? atoi(argv[2]) : 8;
	double child = argc > 3 ? atof(argv[3]) : 0.2;
	int n = 0, libs = argc > 4 ? argc - 4 : 0;

	for (int i = 0; i < libs; i++) {
		if (!dlopen(argv[4 + i], RTLD_NOW)) {
			fprintf(stderr, "forkspin: %s\n", dlerror());
			return 1;
		}
	}
	parent_work(parent);
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("forkspin: fork");
			break;
		}
		if (pid == 0) {
			prctl(PR_SET_NAME, "forkchild");
			child_work(child, libs > 0);
			_exit(0);
		}
		n++;
	}
	while (wait(NULL) > 0)
		;
	printf("forkspin: %d children\n", n);
	return n == children ? 0 : 1;
}
