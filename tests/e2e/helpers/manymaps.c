/*
 * manymaps: a process with thousands of mappings, for t30-faults.sh.
 *
 * Maps N pages of anonymous memory and N pages of a file (its own
 * executable, or any file given with -f), each page a mapping of its own:
 * neighbours alternate between PROT_READ|PROT_EXEC and PROT_READ so the
 * kernel cannot merge them.  Then spins in spin_in_manymaps() for SECONDS.
 *
 *   manymaps [-n PAGES] [-d SECONDS] [-f FILE]
 *
 * Prints "manymaps: N mappings" on stdout once they are all in place.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void spin_in_manymaps(void)
{
	for (volatile unsigned long i = 0; i < 100000; i++)
		sink += i;
	__asm__ volatile("" ::: "memory");
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	const char *file = "/proc/self/exe";
	long pages = 2500, pg = sysconf(_SC_PAGESIZE);
	double seconds = 10;
	struct timespec t0, t;
	char *anon, *fmap;
	int opt, fd;

	while ((opt = getopt(argc, argv, "n:d:f:")) != -1) {
		switch (opt) {
		case 'n': pages = atol(optarg); break;
		case 'd': seconds = atof(optarg); break;
		case 'f': file = optarg; break;
		default:
			fprintf(stderr, "usage: manymaps [-n PAGES] [-d SECONDS] [-f FILE]\n");
			return 2;
		}
	}
	/* Anonymous: one reservation, then every other page made executable. */
	anon = mmap(NULL, pages * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED) {
		perror("manymaps: mmap");
		return 1;
	}
	for (long i = 0; i < pages; i += 2)
		if (mprotect(anon + i * pg, pg, PROT_READ | PROT_EXEC)) {
			perror("manymaps: mprotect");
			return 1;
		}
	/* File-backed: page 0 of the file over and over, so no two neighbours
	 * have consecutive offsets, alternating protections too. */
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("manymaps: open");
		return 1;
	}
	fmap = mmap(NULL, pages * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fmap == MAP_FAILED) {
		perror("manymaps: mmap");
		return 1;
	}
	for (long i = 0; i < pages; i++)
		if (mmap(fmap + i * pg, pg, i & 1 ? PROT_READ : PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
			perror("manymaps: mmap file");
			return 1;
		}
	close(fd);
	printf("manymaps: %d mappings\n", count_maps());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		spin_in_manymaps();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return 0;
}
