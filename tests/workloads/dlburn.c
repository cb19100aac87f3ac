/*
 * dlburn: code that arrives after the profiler has attached.  It sleeps
 * DELAY seconds (default 0.5), then dlopen()s libdlburn.so from its own
 * directory and spins in its dl_spin(), called from dl_caller(), until
 * SECONDS have passed.  Known answer: nearly every sample reads
 * main; dl_caller; dl_spin and reaches a root frame.
 *
 *   dlburn [SECONDS] [DELAY]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include "spin.h"

static volatile unsigned long sink;

__attribute__((noinline)) void dl_caller(void (*fn)(unsigned long))
{
	fn(spin_len(SPIN));
	sink++;
}

int main(int argc, char **argv)
{
	double delay = argc > 2 ? atof(argv[2]) : 0.5;
	/* static: main's frame stays small, within the 8 KiB of stack that
	 * perf --call-graph dwarf copies */
	static char exe[PATH_MAX], lib[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void (*fn)(unsigned long);
	void *h;

	spin_start(argc, argv, 5);
	if (n < 0) {
		perror("dlburn: /proc/self/exe");
		return 1;
	}
	exe[n] = 0;
	snprintf(lib, sizeof(lib), "%s/libdlburn.so", dirname(exe));
	usleep(delay * 1e6);
	h = dlopen(lib, RTLD_NOW);
	if (!h || !(fn = (void (*)(unsigned long))dlsym(h, "dl_spin"))) {
		fprintf(stderr, "dlburn: %s\n", dlerror());
		return 1;
	}
	printf("dlburn: loaded %s\n", lib);
	fflush(stdout);
	while (!expired())
		dl_caller(fn);
	return 0;
}
