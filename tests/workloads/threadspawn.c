/*
 * threadspawn: a main thread that creates short-lived threads in a loop,
 * so that many samples fall inside clone3 (the parent's side and the
 * child's first instructions) and in start_thread.  Each thread spins a
 * little in spawned_work(); main spins in main_work() between batches.
 *
 *   threadspawn [SECONDS]	(default 5)
 *
 * The true outermost frames: main's stacks end in _start (or
 * __libc_start_main), a thread's in clone3 (or clone) and start_thread.
 * No stack is deeper than a few frames.
 */
#include <pthread.h>
#include <stdio.h>

#include "spin.h"

#define BATCH 8

__attribute__((noinline)) void spawned_work(void)
{
	spin(SPIN / 10);
	__asm__ volatile("" ::: "memory");
}

static void *spawned(void *arg)
{
	(void)arg;
	spawned_work();
	return NULL;
}

__attribute__((noinline)) void main_work(void)
{
	spin(SPIN / 20);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	pthread_t t[BATCH];
	unsigned long made = 0;

	spin_start(argc, argv, 5);
	while (!expired()) {
		int n = 0;

		for (; n < BATCH; n++)
			if (pthread_create(&t[n], NULL, spawned, NULL))
				break;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		made += n;
		main_work();
	}
	printf("threadspawn: %lu threads\n", made);
	return 0;
}
