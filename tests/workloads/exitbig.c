// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * exitbig: a process whose exit takes long.  It touches MIB mebibytes of
 * fresh anonymous memory in fill(), sleeps WAIT seconds (for a profiler
 * to attach with -p), renames itself "exitbig-x" (its comm) and returns
 * from main: exit() then unmaps that memory, tens of
 * milliseconds during which the samples of the process are in the
 * kernel's exit with its user stack already unmapped.  Known answer:
 * each sample of exitbig-x has the user stack main returned to (exit()'s
 * under __libc_start_call_main), whole.  Built without frame pointers.
 *
 *   exitbig [MIB] [WAIT]
 */
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>

__attribute__((noinline)) void fill(volatile char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
}

int main(int argc, char **argv)
{
	size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 1024) << 20;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	fill(p, n);
	if (argc > 2) {
		double wait = atof(argv[2]);
		struct timespec ts = { .tv_sec = (time_t)wait,
				       .tv_nsec = (long)((wait - (time_t)wait) * 1e9) };

		nanosleep(&ts, NULL);
	}
	prctl(PR_SET_NAME, "exitbig-x");
	return 0;
}
