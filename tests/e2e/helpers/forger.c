/*
 * forger [-j] SECONDS: what an unprivileged user can name.  Its comm is
 * an OSC title and a screen clear; it spins in evil_fn, which the test
 * renames with objcopy to a name that forges a folded line.  With -j it
 * spins in JIT code instead, named in its perf map with invalid UTF-8,
 * U+FFFF and escapes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double seconds;

static int expired(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9 >= seconds;
}

__attribute__((noinline)) void evil_fn(const struct timespec *t0)
{
	volatile unsigned long n = 0;

	while (!expired(t0))
		for (int i = 0; i < 1000000; i++)
			n++;
}

static int jit(const struct timespec *t0)
{
	/* mov rcx, 2000000; 1: dec rcx; jnz 1b; ret */
	static const unsigned char code[] = { 0x48, 0xb9, 0x80, 0x84, 0x1e, 0, 0, 0, 0, 0,
					      0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *f;

	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit\xff\xfe\xc3(\xef\xbf\xbf\xed\xa0\x80;x\x1b[2J\r\x07" "end\n",
		(unsigned long)mem, sizeof(code));
	fclose(f);
	while (!expired(t0))
		((void (*)(void))mem)();
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	int j = argc > 1 && !strcmp(argv[1], "-j");
	struct timespec t0;

	seconds = argc > 1 + j ? atof(argv[1 + j]) : 5;
	prctl(PR_SET_NAME, "\033]0;owned\a\033[2J");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (j)
		return jit(&t0);
	evil_fn(&t0);
	return 0;
}
