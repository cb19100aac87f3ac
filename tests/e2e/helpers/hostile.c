/*
 * hostile: what an unprivileged user can do to a root profiler on the same
 * host, for t34-hostile.sh.  Each mode prints one "hostile: ..." line on
 * stdout once its setup is in place, so the test knows when to look.
 *
 *   hostile map SECONDS FILE...     map each FILE PROT_READ|PROT_EXEC (any
 *                                   file: the profiler parses it), spin
 *   hostile forkloop SECONDS MAPS   make MAPS executable mappings, then fork
 *                                   children that exit at once, in a loop
 *   hostile mmapflood COUNT         map and unmap one executable page COUNT
 *                                   times, as fast as it can
 *   hostile jit SECONDS ADDR [LINES] spin in code written at ADDR (hex) in
 *                                   anonymous memory; with LINES, first write
 *                                   /tmp/perf-PID.map as LINES copies of one
 *                                   line naming it
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_in_hostile(void)
{
	for (volatile unsigned long i = 0; i < 100000; i++)
		sink += i;
}

static void spin(double seconds)
{
	double end = now_s() + seconds;

	while (now_s() < end)
		spin_in_hostile();
}

static int do_map(int argc, char **argv)
{
	int n = 0;

	for (int i = 0; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		void *p;

		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		n++;
	}
	printf("hostile: mapped %d\n", n);
	fflush(stdout);
	return 0;
}

/* maps pages of our own executable, alternating protections so none merge. */
static int make_maps(long maps)
{
	long pg = sysconf(_SC_PAGESIZE);
	int fd = open("/proc/self/exe", O_RDONLY);
	char *base;

	if (fd < 0)
		return -1;
	base = mmap(NULL, maps * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -1;
	for (long i = 0; i < maps; i++) {
		int prot = i % 2 ? PROT_READ : PROT_READ | PROT_EXEC;

		if (mmap(base + i * pg, pg, prot, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED)
			return -1;
	}
	close(fd);
	return 0;
}

static int do_forkloop(double seconds, long maps)
{
	double end = now_s() + seconds;
	long forks = 0;

	if (make_maps(maps)) {
		perror("hostile: maps");
		return 1;
	}
	printf("hostile: %ld maps, forking\n", maps);
	fflush(stdout);
	while (now_s() < end) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0)
			continue;
		waitpid(pid, NULL, 0);
		forks++;
	}
	printf("hostile: %ld forks\n", forks);
	return 0;
}

static int do_mmapflood(long count)
{
	int fd = open("/proc/self/exe", O_RDONLY);

	if (fd < 0)
		return 1;
	for (long i = 0; i < count; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	printf("hostile: %ld mmaps\n", count);
	return 0;
}

static int do_jit(double seconds, unsigned long addr, long lines)
{
	/* mov rcx, 200000; 1: dec rcx; jnz 1b; ret */
	static const unsigned char code[] = { 0x48, 0xb9, 0x40, 0x0d, 0x03, 0, 0, 0, 0, 0,
					      0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	void *mem = mmap((void *)addr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	double end = now_s() + seconds;
	char path[64];

	if (mem == MAP_FAILED) {
		perror("hostile: jit mmap");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	if (lines > 0) {
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
		f = fopen(path, "w");
		if (!f)
			return 1;
		for (long i = 0; i < lines; i++)
			fprintf(f, "%lx 10 hostile_jit_code\n", addr);
		fclose(f);
	}
	printf("hostile: jit at %lx, pid %d\n", addr, getpid());
	fflush(stdout);
	while (now_s() < end)
		((void (*)(void))mem)();
	if (lines > 0)
		unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "map")) {
		if (do_map(argc - 3, argv + 3))
			return 1;
		spin(atof(argv[2]));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "forkloop"))
		return do_forkloop(atof(argv[2]), atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "mmapflood"))
		return do_mmapflood(atol(argv[2]));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "jit"))
		return do_jit(atof(argv[2]), strtoul(argv[3], NULL, 16),
			      argc == 5 ? atol(argv[4]) : 0);
	fprintf(stderr, "usage: see the comment at the top of hostile.c\n");
	return 2;
}
