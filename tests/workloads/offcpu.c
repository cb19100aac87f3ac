/*
 * offcpu: a workload that blocks for known times in known functions, for
 * off-CPU profiles (issue 29).  Built without frame pointers.
 *
 * The main thread loops over three calls, each of which blocks:
 *
 *   func_a   clock_nanosleep() for 6 ms
 *   func_b   nanosleep() for 2 ms
 *   func_c   read() from a pipe, which the thread "waker" writes to 4 ms
 *            after func_c asked it to (a wait on another thread)
 *
 * so that its blocked time is split a:b:c = 6:2:4, and is nearly all of its
 * wall time (the CPU it uses between calls is a few microseconds).  The
 * waker's own waits are in waker_wait (reading the request) and waker_nap
 * (its 4 ms sleep): no function of the main thread's is on its stacks.
 * Timer slack is 1 ns, so that a sleep lasts what it asked for, plus the
 * wake-up latency alone (tens of microseconds), not 50 us more.
 *
 * With -s the main thread instead blocks from one call site reached from
 * two callers whose frames are alike: func_x 3 ms and func_y 1 ms, each
 * through same_site(), in the order x x y y (twice() calls each twice from
 * one call site).  Its registers at the block are the same under both;
 * only the return addresses on its stack tell them apart (the off-CPU
 * walk's memo must see it): x:y = 3:1.
 *
 *   offcpu [-d SECONDS] [-s]
 *
 * Without -d it runs until killed.  It prints "offcpu: running" once the
 * waker is started, and on exit "offcpu: <rounds>".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define A_NS 6000000L
#define B_NS 2000000L
#define C_NS 4000000L

static int req[2], ans[2];	/* main -> waker, waker -> main */

/* A whole sleep of ns, through EINTR. */
static void sleep_ns(long ns, int use_clock)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	if (use_clock) {
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
			;
	} else {
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
}

static void read_byte(int fd)
{
	char c;

	while (read(fd, &c, 1) != 1)
		if (errno != EINTR)
			exit(1);
}

static void write_byte(int fd)
{
	char c = 1;

	while (write(fd, &c, 1) != 1)
		if (errno != EINTR)
			exit(1);
}

/*
 * Each blocks in a call of its own; the barrier after the call keeps the
 * call from becoming a jump (the function's frame stays on the stack).
 */
__attribute__((noinline)) void func_a(void)
{
	sleep_ns(A_NS, 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void func_b(void)
{
	sleep_ns(B_NS, 0);
	__asm__ volatile("" ::: "memory");
}

/* The one call site of -s: its registers at the block are the same for both callers. */
__attribute__((noinline)) static void same_site(long ns)
{
	sleep_ns(ns, 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void func_x(void)
{
	same_site(3 * B_NS / 2);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void func_y(void)
{
	same_site(B_NS / 2);
	__asm__ volatile("" ::: "memory");
}

/*
 * twice() calls which() twice from one call site.  Its counter and the
 * function live in memory, not in registers, so that the registers at
 * each block are the same under func_x and func_y.
 */
static void (*volatile which)(void);

__attribute__((noinline)) static void twice(void)
{
	for (volatile int i = 0; i < 2; i++) {
		which();
		__asm__ volatile("" ::: "memory");
	}
}

__attribute__((noinline)) void func_c(void)
{
	write_byte(req[1]);
	read_byte(ans[0]);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void waker_wait(void)
{
	read_byte(req[0]);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void waker_nap(void)
{
	sleep_ns(C_NS, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void *waker(void *arg)
{
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		waker_wait();
		waker_nap();
		write_byte(ans[1]);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double duration = 0, end;
	unsigned long rounds = 0;
	pthread_t tid;
	int opt, same = 0;

	while ((opt = getopt(argc, argv, "d:s")) != -1) {
		switch (opt) {
		case 'd': duration = atof(optarg); break;
		case 's': same = 1; break;
		default:
			fprintf(stderr, "usage: offcpu [-d seconds] [-s]\n");
			return 2;
		}
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (pipe(req) || pipe(ans) || pthread_create(&tid, NULL, waker, NULL)) {
		perror("offcpu");
		return 1;
	}
	printf("offcpu: running\n");
	fflush(stdout);
	end = now() + duration;
	while (same && (duration <= 0 || now() < end)) {
		which = func_x;
		twice();
		which = func_y;
		twice();
		rounds++;
	}
	while (!same && (duration <= 0 || now() < end)) {
		func_a();
		func_b();
		func_c();
		rounds++;
	}
	printf("offcpu: %lu\n", rounds);
	return 0;
}
