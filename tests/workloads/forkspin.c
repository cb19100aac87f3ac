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
 *   forkspin [PARENT] [CHILDREN] [CHILD]
 */
#include <stdio.h>
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

__attribute__((noinline)) void child_work(double seconds)
{
	spin_for(seconds);
	sink++;
}

int main(int argc, char **argv)
{
	double parent = argc > 1 ? atof(argv[1]) : 1;
	int children = argc > 2 ? atoi(argv[2]) : 8;
	double child = argc > 3 ? atof(argv[3]) : 0.2;
	int n = 0;

	parent_work(parent);
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("forkspin: fork");
			break;
		}
		if (pid == 0) {
			prctl(PR_SET_NAME, "forkchild");
			child_work(child);
			_exit(0);
		}
		n++;
	}
	while (wait(NULL) > 0)
		;
	printf("forkspin: %d children\n", n);
	return n == children ? 0 : 1;
}
