// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the perf map parser and for the checks that decide
 * whether a map file may be trusted.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "fixtures/fixtures.h"
#include "symbols/caps.h"
#include "symbols/perfmap.h"
#include "unit.h"

static char dir[FX_DIR_MAX];

static struct perfmap *parse(const char *text)
{
	struct perfmap *pm = perfmap__parse(text, strlen(text));

	CHECK(pm != NULL);
	return pm;
}

static void check_find(const struct perfmap *pm, __u64 addr,
		       const char *name, __u64 off)
{
	__u64 got = 99;

	CHECK_STR(perfmap__find(pm, addr, &got), name);
	CHECK_INT(got, off);
}

TEST(formats)
{
	struct perfmap *pm = parse(
		"7f0000001000 40 jit_plain\n"
		"0x7f0000002000 0x20 jit_prefixed\n"
		"0X7f0000003000 0X10 LazyCompile:~run /app/x.js:12:3\n"
		"7F0000004000\t8\tupper_tabs  \r\n"
		"  7f0000005000 10 leading_blanks\n");

	if (!pm)
		return;
	CHECK_INT(perfmap__nr(pm), 5);
	check_find(pm, 0x7f0000001000, "jit_plain", 0);
	check_find(pm, 0x7f000000103f, "jit_plain", 0x3f);
	CHECK(perfmap__find(pm, 0x7f0000001040, NULL) == NULL);
	check_find(pm, 0x7f0000002010, "jit_prefixed", 0x10);
	check_find(pm, 0x7f0000003001, "LazyCompile:~run /app/x.js:12:3", 1);
	check_find(pm, 0x7f0000004007, "upper_tabs", 7);
	check_find(pm, 0x7f0000005000, "leading_blanks", 0);
	CHECK(perfmap__find(pm, 0x7f0000000fff, NULL) == NULL);
	CHECK(perfmap__find(pm, 0, NULL) == NULL);
	perfmap__free(pm);
}

TEST(malformed_lines)
{
	struct perfmap *pm = parse(
		"\n"
		"garbage\n"
		"1000\n"
		"1000 10\n"
		"1000 10 \n"
		"1000 0 zero_size\n"
		"zz00 10 bad_start\n"
		"1000 1g bad_size\n"
		"0x 10 no_digits\n"
		"fffffffffffffff0 20 wraps\n"
		"11112222333344445 10 seventeen_digits\n"
		"-1000 10 negative\n"
		"2000 10 good");

	if (!pm)
		return;
	CHECK_INT(perfmap__nr(pm), 1);
	check_find(pm, 0x2005, "good", 5);
	CHECK(perfmap__find(pm, 0x1000, NULL) == NULL);
	perfmap__free(pm);

	pm = parse("");
	if (pm)
		CHECK_INT(perfmap__nr(pm), 0);
	perfmap__free(pm);
}

/* Code reused by the JIT: the later line for an address wins. */
TEST(later_lines_win)
{
	struct perfmap *pm = parse(
		"3000 10 third\n"
		"1000 100 old\n"
		"2000 10 second\n"
		"1000 80 new\n"
		"1000 10 newest\n");

	if (!pm)
		return;
	CHECK_INT(perfmap__nr(pm), 3);
	check_find(pm, 0x1005, "newest", 5);
	CHECK(perfmap__find(pm, 0x1010, NULL) == NULL);
	check_find(pm, 0x2000, "second", 0);
	check_find(pm, 0x300f, "third", 0xf);
	perfmap__free(pm);
}

/* Binary junk does not crash and a NUL ends a name. */
TEST(binary)
{
	static const char junk[] = "1000 10 a\0b\n\xff\xfe 20 x\n2000 10 c\n";
	struct perfmap *pm = perfmap__parse(junk, sizeof(junk) - 1);

	CHECK(pm != NULL);
	if (!pm)
		return;
	CHECK_INT(perfmap__nr(pm), 2);
	check_find(pm, 0x1000, "a", 0);
	check_find(pm, 0x2000, "c", 0);
	perfmap__free(pm);
}

/* n lines "START 10 name" with START = first + i * step; malloc()ed. */
static char *make_lines(size_t n, __u64 first, __u64 step, size_t *len)
{
	char *buf = malloc(n * 32 + 1), *p = buf;

	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%llx 10 name\n", (unsigned long long)(first + i * step));
	*len = (size_t)(p - buf);
	return buf;
}

/* Two million copies of one line: one entry, nothing capped. */
TEST(repeated_lines)
{
	size_t len;
	char *buf = make_lines(2000000, 0x1000, 0, &len);
	struct perfmap *pm = buf ? perfmap__parse(buf, len) : NULL;

	CHECK(pm != NULL);
	if (pm) {
		CHECK_INT(perfmap__nr(pm), 1);
		CHECK(!perfmap__capped(pm));
		check_find(pm, 0x1005, "name", 5);
	}
	perfmap__free(pm);
	free(buf);
}

/* More distinct entries than the cap: the first ones are kept, flagged. */
TEST(entries_cap)
{
	size_t len;
	char *buf = make_lines(CAP_PERFMAP_ENTRIES + 1000, 0x1000, 0x10, &len);
	struct perfmap *pm = buf ? perfmap__parse(buf, len) : NULL;

	CHECK(pm != NULL);
	if (pm) {
		CHECK_INT(perfmap__nr(pm), CAP_PERFMAP_ENTRIES);
		CHECK(perfmap__capped(pm));
		check_find(pm, 0x1000, "name", 0);
		CHECK(perfmap__find(pm, 0x1000 + 0x10ULL * CAP_PERFMAP_ENTRIES, NULL) == NULL);
	}
	perfmap__free(pm);
	/* Over the size cap: not parsed at all. */
	CHECK(perfmap__parse("", CAP_PERFMAP_BYTES + 1) == NULL);
	CHECK_INT(errno, EFBIG);
	free(buf);
}

/* Names are made safe to print: controls, bad UTF-8 and U+FFFF become '?'. */
TEST(unsafe_names)
{
	static const char text[] =
		"1000 10 evil 999999\rfakeroot;x\x1b[2J\n"
		"2000 10 bad\xff\xc3utf8\xef\xbf\xbf\n"
		"3000 10 caf\xc3\xa9\n";
	struct perfmap *pm = perfmap__parse(text, sizeof(text) - 1);

	CHECK(pm != NULL);
	if (!pm)
		return;
	check_find(pm, 0x1000, "evil 999999?fakeroot;x?[2J", 0);
	check_find(pm, 0x2000, "bad??utf8???", 0);
	check_find(pm, 0x3000, "caf\xc3\xa9", 0);
	perfmap__free(pm);
}

static struct stat good_stat(void)
{
	struct stat st = { 0 };

	st.st_mode = S_IFREG | 0644;
	st.st_uid = 1000;
	st.st_mtim.tv_sec = 2000;
	return st;
}

TEST(trust)
{
	struct perfmap_owner who = {
		.euid = 1000, .fsuid = 1000,
		.not_before_ns = 1999ULL * 1000000000ULL,
	};
	struct stat st = good_stat();

	CHECK(perfmap__trusted(&st, &who));
	/* Root's file, for a user's process: one it could not read itself. */
	st.st_uid = 0;
	CHECK(!perfmap__trusted(&st, &who));
	who.euid = who.fsuid = 0;
	CHECK(perfmap__trusted(&st, &who));
	who.euid = who.fsuid = 1000;
	/* Planted by another user. */
	st.st_uid = 1001;
	CHECK(!perfmap__trusted(&st, &who));
	who.fsuid = 1001;
	CHECK(perfmap__trusted(&st, &who));
	who.fsuid = 1000;
	/* Anyone may write it. */
	st = good_stat();
	st.st_mode = S_IFREG | 0666;
	CHECK(!perfmap__trusted(&st, &who));
	st.st_mode = S_IFREG | 0664;
	CHECK(perfmap__trusted(&st, &who));
	/* Not a regular file. */
	st.st_mode = S_IFIFO | 0644;
	CHECK(!perfmap__trusted(&st, &who));
	st.st_mode = S_IFLNK | 0777;
	CHECK(!perfmap__trusted(&st, &who));
	/* Older than the process: left by an earlier one with its pid. */
	st = good_stat();
	st.st_mtim.tv_sec = 1998;
	CHECK(!perfmap__trusted(&st, &who));
	/* Written in the process's first clock tick. */
	st.st_mtim.tv_sec = 1998;
	st.st_mtim.tv_nsec = 990000000;
	CHECK(perfmap__trusted(&st, &who));
	/* Written after the process was known to be gone. */
	st = good_stat();
	who.not_after_ns = 1999ULL * 1000000000ULL + 500000000ULL;
	CHECK(!perfmap__trusted(&st, &who));
	who.not_after_ns = 2001ULL * 1000000000ULL;
	CHECK(perfmap__trusted(&st, &who));
}

static const struct perfmap_owner *me(void)
{
	static struct perfmap_owner who;

	who.euid = who.fsuid = (__u32)geteuid();
	who.not_before_ns = 1;
	return &who;
}

static int write_file(const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	fchmod(fd, mode);
	close(fd);
	return 0;
}

static int read_map(int rootfd, const char *name, struct perfmap_stamp *stamp,
		    struct perfmap **pm)
{
	return perfmap__read_at(rootfd, name, strlen(name), me(), stamp, pm);
}

TEST(read_files)
{
	struct perfmap_stamp stamp = { 0 };
	struct perfmap *pm = NULL;
	char path[PATH_MAX];
	int rootfd;

	rootfd = open(dir, O_PATH | O_DIRECTORY);
	CHECK(rootfd >= 0);
	if (rootfd < 0)
		return;
	CHECK_INT(write_file("ok.map", "1000 10 one\n2000 10 two", 0644), 0);
	CHECK_INT(read_map(rootfd, "/ok.map", &stamp, &pm), 0);
	if (pm) {
		/* The last line has no newline yet: being written. */
		CHECK_INT(perfmap__nr(pm), 1);
		check_find(pm, 0x1000, "one", 0);
		perfmap__free(pm);
		pm = NULL;
	}
	/* Unchanged: not read again. */
	CHECK_INT(read_map(rootfd, "/ok.map", &stamp, &pm), -EALREADY);
	CHECK_INT(write_file("ok.map", "1000 10 one\n2000 10 two\n", 0644), 0);
	CHECK_INT(read_map(rootfd, "/ok.map", &stamp, &pm), 0);
	if (pm) {
		CHECK_INT(perfmap__nr(pm), 2);
		perfmap__free(pm);
		pm = NULL;
	}
	CHECK_INT(read_map(rootfd, "/missing.map", &stamp, &pm), -ENOENT);
	/* World-writable. */
	CHECK_INT(write_file("ww.map", "1000 10 one\n", 0666), 0);
	CHECK_INT(read_map(rootfd, "/ww.map", &stamp, &pm), -EPERM);
	/* A symlink to a good map. */
	snprintf(path, sizeof(path), "%s/link.map", dir);
	CHECK_INT(symlink("ok.map", path), 0);
	CHECK_INT(read_map(rootfd, "/link.map", &stamp, &pm), -EPERM);
	/* A FIFO nobody writes: refused without blocking. */
	snprintf(path, sizeof(path), "%s/fifo.map", dir);
	CHECK_INT(mkfifo(path, 0644), 0);
	CHECK_INT(read_map(rootfd, "/fifo.map", &stamp, &pm), -EPERM);
	/* A directory. */
	snprintf(path, sizeof(path), "%s/dir.map", dir);
	CHECK_INT(mkdir(path, 0755), 0);
	CHECK_INT(read_map(rootfd, "/dir.map", &stamp, &pm), -EPERM);
	/* ".." does not leave the root. */
	CHECK_INT(read_map(rootfd, "/../../../../etc/passwd", &stamp, &pm), -ENOENT);
	CHECK(pm == NULL);
	close(rootfd);
}

TEST(read_old_file)
{
	struct perfmap_owner who = *me();
	struct perfmap_stamp stamp = { 0 };
	struct perfmap *pm = NULL;
	struct stat st;
	__u64 mtime;
	int rootfd;

	rootfd = open(dir, O_PATH | O_DIRECTORY);
	CHECK(rootfd >= 0);
	CHECK_INT(write_file("old.map", "1000 10 one\n", 0644), 0);
	/* The file's own time, not the clock's: mtimes come from a coarse clock. */
	CHECK_INT(fstatat(rootfd, "old.map", &st, 0), 0);
	mtime = (__u64)st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec;
	/* A process started a second after the file was written. */
	who.not_before_ns = mtime + 1000000000ULL;
	CHECK_INT(perfmap__read_at(rootfd, "/old.map", 8, &who, &stamp, &pm),
		  -EPERM);
	/* ... and one started a second before. */
	who.not_before_ns = mtime - 1000000000ULL;
	CHECK_INT(perfmap__read_at(rootfd, "/old.map", 8, &who, &stamp, &pm), 0);
	perfmap__free(pm);
	close(rootfd);
}

int main(void)
{
	if (fx_tmpdir(dir)) {
		printf("not ok - tmpdir\n");
		return 1;
	}
	RUN(formats);
	RUN(malformed_lines);
	RUN(later_lines_win);
	RUN(binary);
	RUN(repeated_lines);
	RUN(entries_cap);
	RUN(unsafe_names);
	RUN(trust);
	RUN(read_files);
	RUN(read_old_file);
	fx_rmdir(dir);
	return unit_summary();
}
