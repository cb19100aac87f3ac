// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Replays the saved fuzz inputs (fuzz/regress/TARGET/: crashers once
 * fixed, and small inputs that reach deep paths) through the same code as
 * the fuzz targets, so that a parser change that crashes on one fails the
 * normal suite.  Run it under `make check-asan` to catch what ASan would.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "fixtures/fixtures.h"
#include "fuzz/targets.h"
#include "unit.h"

#define INPUT_MAX	(4u << 20)

static int replay_file(const char *path, int (*one)(const uint8_t *, size_t))
{
	struct stat st;
	uint8_t *buf;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > INPUT_MAX) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return -EIO;
	}
	one(buf, (size_t)n);
	free(buf);
	return 0;
}

/* Every file of fuzz/regress/NAME; returns how many were replayed. */
static int replay_dir(const char *name, int (*one)(const uint8_t *, size_t))
{
	char dir[2 * PATH_MAX], path[3 * PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/../../fuzz/regress/%s", fx_srcdir(), name);
	d = opendir(dir);
	CHECK(d != NULL);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		CHECK_INT(replay_file(path, one), 0);
		n++;
	}
	closedir(d);
	printf("# %s: %d inputs\n", name, n);
	return n;
}

TEST(elf)
{
	CHECK(replay_dir("elf", fuzz_elf_one) > 0);
}

TEST(minidebuginfo)
{
	CHECK(replay_dir("minidebuginfo", fuzz_minidebuginfo_one) > 0);
}

TEST(perfmap)
{
	CHECK(replay_dir("perfmap", fuzz_perfmap_one) > 0);
}

TEST(procmaps)
{
	CHECK(replay_dir("procmaps", fuzz_procmaps_one) > 0);
}

TEST(ehframe)
{
	CHECK(replay_dir("ehframe", fuzz_ehframe_one) > 0);
}

int main(void)
{
	RUN(elf);
	RUN(minidebuginfo);
	RUN(perfmap);
	RUN(procmaps);
	RUN(ehframe);
	return unit_summary();
}
