/*
 * tpcall: system calls made a known number of times from known functions,
 * for tracepoint events (t86).
 *
 *   tpcall getppid [DELAY_MS]   main calls getppid() once, and after
 *                               DELAY_MS (default 1000) func_a calls it
 *                               3000 times, then func_b 1000 times; then
 *                               it exits
 *   tpcall sleep SECONDS        sleep_loop() sleeps 10 ms at a time
 *
 * Known answers: syscalls:sys_enter_getppid hits 3000 times under func_a
 * and 1000 under func_b, each stack reaching main; sched:sched_switch
 * switches out from sleep_loop.  Built without frame pointers and without
 * sibling calls, so the stacks need the unwinder's tables.  The profiler
 * reads a process's tables when it sees its first sample: main's call
 * makes it, the delay gives the profiler time to read them.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static volatile long sink;

/* The raw call: no libc wrapper may answer from a cache. */
__attribute__((noinline)) static void call_getppid(void)
{
	sink += syscall(SYS_getppid);
}

__attribute__((noinline)) void func_a(void)
{
	for (int i = 0; i < 3000; i++)
		call_getppid();
	sink++;
}

__attribute__((noinline)) void func_b(void)
{
	for (int i = 0; i < 1000; i++)
		call_getppid();
	sink++;
}

__attribute__((noinline)) void sleep_loop(double seconds)
{
	struct timespec t = { 0, 10 * 1000 * 1000 };

	for (long i = 0; i < seconds * 100; i++)
		nanosleep(&t, NULL);
	sink++;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "sleep")) {
		sleep_loop(argc > 2 ? atof(argv[2]) : 2);
		return 0;
	}
	call_getppid();
	sleep_ms(argc > 2 ? atol(argv[2]) : 1000);
	func_a();
	func_b();
	return 0;
}
