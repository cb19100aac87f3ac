// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dwlines: lines and inlined functions of this test's own binary (built
 * -O2 -g), and files it must refuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	struct dwlines *dw;
	int fd, n, i;
	bool inner = false;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(dwlines__probe(fd));
	dw = dwlines__open(fd);
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
	CHECK(dw_outer(1) != 0 || true);
}

TEST(refused)
{
	char path[] = "/tmp/dwlines.XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	CHECK_INT(write(fd, "not an ELF file at all", 22), 22);
	CHECK(!dwlines__probe(fd));
	errno = 0;
	CHECK(dwlines__open(fd) == NULL);	/* closes fd */
	CHECK(errno != 0);
}

int main(void)
{
	RUN(own_binary);
	RUN(refused);
	return unit_summary();
}
