/*
 * vdsoburn: calls clock_gettime(CLOCK_MONOTONIC), which the vDSO answers
 * without a system call (with the tsc or kvm-clock clocksource), in a
 * tight loop in vdso_caller().  Known answer: most samples are in the vDSO
 * (__vdso_clock_gettime, reached through libc's clock_gettime), under
 * vdso_caller, under main, and every sample reaches a root frame.
 *
 *   vdsoburn [SECONDS]
 */
#include <stdio.h>
#include "spin.h"

static volatile unsigned long sink;

__attribute__((noinline)) void vdso_caller(void)
{
	struct timespec ts;

	for (int i = 0; i < 100000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

int main(int argc, char **argv)
{
	unsigned long rounds = 0;

	spin_start(argc, argv, 5);
	while (!expired()) {
		vdso_caller();
		rounds++;
	}
	printf("vdsoburn: %lu rounds\n", rounds);
	return 0;
}
