/*
 * offcpu-min: off-CPU time with a known answer.
 *
 * The main thread loops forever (or for -d seconds) sleeping 30 ms in
 * func_a() and 10 ms in func_b(): an off-CPU profile sees func_a blocked
 * three times as long as func_b, and the thread blocked nearly all of its
 * wall time.  Built without frame pointers (WL_UNWIND): the stacks reach
 * main only through the unwinder's tables.
 *
 *   offcpu-min [-d SECONDS]
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) void func_a(void)
{
	sleep_ms(30);
}

__attribute__((noinline)) void func_b(void)
{
	sleep_ms(10);
}

int main(int argc, char **argv)
{
	time_t end = 0;
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1)
		if (c == 'd')
			end = time(NULL) + atoi(optarg);
	while (!end || time(NULL) < end) {
		func_a();
		func_b();
	}
	return 0;
}
