// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dwlines: lines and inlined functions of this test's own binary (built
 * -O2 -g), and files it must refuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "symbols/dwlines.h"
#include "unit.h"

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long dw_inner(unsigned long x)
{
	return x * 2654435761u + 7;	/* INNER */
}

unsigned long dw_outer(unsigned long x);
__attribute__((noinline)) unsigned long dw_outer(unsigned long x)
{
	return dw_inner(x) ^ sink;	/* OUTER */
}

static int first_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uintptr_t *)data = info->dlpi_addr;
	return 1;
}

/* This binary's ELF address of a function of it. */
static __u64 vaddr_of(void *fn)
{
	uintptr_t bias = 0;

	dl_iterate_phdr(first_bias, &bias);
	return (uintptr_t)fn - bias;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

TEST(own_binary)
{
	struct dwline dl[DWLINES_MAX_DEPTH];
	__u64 at = vaddr_of((void *)dw_outer);
	struct dwlines_budget b;
	struct dwlines *dw;
	int fd, n, i;
	bool inner = false;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(dwlines__probe(fd));
	dwlines_budget__init(&b, DWLINES_BUDGET_BYTES);
	dw = dwlines__open(fd, &b);
	CHECK(dw != NULL);
	if (!dw)
		return;
	/* The function's first bytes: dw_outer itself, in this file. */
	n = dwlines__find(dw, at, dl, DWLINES_MAX_DEPTH);
	CHECK(n >= 1);
	if (n >= 1) {
		CHECK_STR(dl[n - 1].name, "dw_outer");
		CHECK(ends_with(dl[n - 1].file, "test_dwlines.c"));
		CHECK(dl[n - 1].line > 0);
	}
	/* Somewhere in its body, dw_inner is inlined into it. */
	for (i = 1; i < 64 && !inner; i++) {
		n = dwlines__find(dw, at + i, dl, DWLINES_MAX_DEPTH);
		inner = n == 2 && dl[0].name && !strcmp(dl[0].name, "dw_inner") &&
			!strcmp(dl[1].name, "dw_outer");
	}
	CHECK(inner);
	/* Nothing there: 0, not a guess. */
	CHECK_INT(dwlines__find(dw, 0x10, dl, DWLINES_MAX_DEPTH), 0);
	CHECK(dwlines__bytes(dw) > 0);
	CHECK(!dwlines__capped(dw));
	dwlines__free(dw);
	CHECK_INT(b.charged, 0);
	(void)dw_outer(1);
}

TEST(refused)
{
	char path[] = "/tmp/dwlines.XXXXXX";
	struct dwlines_budget b;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	dwlines_budget__init(&b, DWLINES_BUDGET_BYTES);
	CHECK_INT(write(fd, "not an ELF file at all", 22), 22);
	CHECK(!dwlines__probe(fd));
	errno = 0;
	CHECK(dwlines__open(fd, &b) == NULL);	/* closes fd */
	CHECK(errno != 0);
}

/* Run a shell command: whether it succeeded. */
static bool run(const char *cmd)
{
	return system(cmd) == 0;
}

/* A copy of this test's binary at path, changed by objcopy's args. */
static bool copy_self(const char *args, const char *path)
{
	char exe[PATH_MAX], cmd[2 * PATH_MAX + 512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "objcopy %s '%s' '%s'", args, exe, path);
	return run(cmd);
}

static struct dwlines *open_path(const char *path, struct dwlines_budget *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	errno = 0;
	return dwlines__open(fd, b);
}

/*
 * dwz's .gnu_debugaltlink names another file that libdw would open as
 * root: a FIFO there would hang the profiler in open().  Refused before
 * libdw sees it; alarm() fails the test rather than hanging it.
 */
TEST(altlink)
{
	char dir[] = "/tmp/dwlines.XXXXXX", fifo[64], link[64], elf[64], args[160];
	struct dwlines_budget b;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(elf, sizeof(elf), "%s/elf", dir);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	f = fopen(link, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(fifo, f);
	fwrite("\0" "0123456789abcdefghij", 1, 21, f);	/* NUL, build ID */
	fclose(f);
	snprintf(args, sizeof(args), "--add-section .gnu_debugaltlink='%s'", link);
	CHECK(copy_self(args, elf));
	dwlines_budget__init(&b, DWLINES_BUDGET_BYTES);
	alarm(20);
	{
		int fd = open(elf, O_RDONLY | O_CLOEXEC);

		CHECK(fd >= 0);
		CHECK(!dwlines__probe(fd));
		errno = 0;
		CHECK(dwlines__open(fd, &b) == NULL);
		CHECK_INT(errno, ENOTSUP);
	}
	alarm(0);
	CHECK_INT(b.opened, 0);
	unlink(elf);
	unlink(link);
	unlink(fifo);
	rmdir(dir);
}

/*
 * A file's charge counts .debug_line x100: 1 MiB of it, compressed to
 * almost nothing, is past the cap for a file another user owns, not
 * for root's.  And the budget closes the least recently used file to
 * open another, which reopens when asked again.
 */
TEST(caps)
{
	char dir[] = "/tmp/dwlines.XXXXXX", zeros[64], big[64], a[64], c[64], args[192];
	struct dwline dl[DWLINES_MAX_DEPTH];
	__u64 at = vaddr_of((void *)dw_outer);
	struct dwlines_budget b;
	struct dwlines *x, *y;
	__u64 one;
	FILE *f;
	int n;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(zeros, sizeof(zeros), "%s/zeros", dir);
	snprintf(big, sizeof(big), "%s/big", dir);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(c, sizeof(c), "%s/c", dir);
	f = fopen(zeros, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(ftruncate(fileno(f), 1 << 20), 0);
	fclose(f);
	snprintf(args, sizeof(args), "--update-section .debug_line='%s'", zeros);
	CHECK(copy_self(args, big));
	snprintf(args, sizeof(args), "objcopy --compress-debug-sections=zlib '%s'", big);
	CHECK(run(args));
	dwlines_budget__init(&b, DWLINES_BUDGET_BYTES);
	/* root's: under 512 MiB */
	CHECK_INT(chown(big, 0, 0), 0);
	x = open_path(big, &b);
	CHECK(x != NULL);
	CHECK(b.charged > (100ull << 20));
	dwlines__free(x);
	/* another user's: past 64 MiB */
	CHECK_INT(chown(big, 65534, 65534), 0);
	CHECK(open_path(big, &b) == NULL);
	CHECK_INT(errno, EFBIG);

	/* Two files, room for one: the first closes and reopens. */
	CHECK(copy_self("", a));
	CHECK(copy_self("", c));
	x = open_path(a, &b);
	CHECK(x != NULL);
	one = b.charged;
	dwlines__free(x);
	dwlines_budget__init(&b, one + one / 2);
	x = open_path(a, &b);
	y = open_path(c, &b);
	CHECK(x != NULL && y != NULL);
	if (x && y) {
		CHECK_INT(b.closed, 1);
		CHECK_INT(b.charged, one);
		n = dwlines__find(x, at, dl, DWLINES_MAX_DEPTH);
		CHECK(n >= 1);
		if (n >= 1)
			CHECK_STR(dl[n - 1].name, "dw_outer");
		CHECK_INT(b.closed, 2);
		CHECK_INT(b.opened, 3);
		CHECK(dwlines__find(y, at, dl, DWLINES_MAX_DEPTH) >= 1);
		CHECK_INT(b.closed, 3);
	}
	dwlines__free(x);
	dwlines__free(y);
	CHECK_INT(b.charged, 0);
	/* Past the budget alone: refused, counted. */
	dwlines_budget__init(&b, one / 2);
	CHECK(open_path(a, &b) == NULL);
	CHECK_INT(b.refused, 1);
	unlink(zeros);
	unlink(big);
	unlink(a);
	unlink(c);
	rmdir(dir);
}

int main(void)
{
	RUN(own_binary);
	RUN(refused);
	RUN(altlink);
	RUN(caps);
	return unit_summary();
}
