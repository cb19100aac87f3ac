// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for the /proc/PID/maps parser, and who /proc/PID/status charges. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>

#include "symbols/procmaps.h"
#include "symbols/procfs.h"
#include "unit.h"

struct good_line {
	const char *line;
	__u64 start, end, pgoff, inode;
	__u32 major, minor, flags;
	enum vma_kind kind;
	bool deleted;
	const char *path;	/* NULL: none */
};

static const struct good_line good[] = {
	{ "55d1e0c00000-55d1e0c02000 r--p 00000000 08:01 1311748"
	  "                    /usr/bin/cat",
	  0x55d1e0c00000, 0x55d1e0c02000, 0, 1311748, 8, 1,
	  VMA_READ, VMA_FILE, false, "/usr/bin/cat" },
	{ "7f0000001000-7f0000002000 r-xp 00001000 fd:01 42   /tmp/my dir/lib x.so",
	  0x7f0000001000, 0x7f0000002000, 0x1000, 42, 0xfd, 1,
	  VMA_READ | VMA_EXEC, VMA_FILE, false, "/tmp/my dir/lib x.so" },
	{ "400000-401000 r-xp 00000000 00:2a 77 /tmp/a.out (deleted)",
	  0x400000, 0x401000, 0, 77, 0, 0x2a,
	  VMA_READ | VMA_EXEC, VMA_FILE, true, "/tmp/a.out" },
	{ "400000-401000 r-xp 00000000 00:2a 77 /tmp/x (deleted) (deleted)",
	  0x400000, 0x401000, 0, 77, 0, 0x2a,
	  VMA_READ | VMA_EXEC, VMA_FILE, true, "/tmp/x (deleted)" },
	{ "400000-401000 r-xp 00000000 00:2a 77 /tmp/we ird (deleted)",
	  0x400000, 0x401000, 0, 77, 0, 0x2a,
	  VMA_READ | VMA_EXEC, VMA_FILE, true, "/tmp/we ird" },
	{ "400000-401000 r-xp 00000000 00:2a 77 /tmp/new\\012line",
	  0x400000, 0x401000, 0, 77, 0, 0x2a,
	  VMA_READ | VMA_EXEC, VMA_FILE, false, "/tmp/new\\012line" },
	{ "7ffc8a1f0000-7ffc8a1f2000 r-xp 00000000 00:00 0"
	  "                          [vdso]",
	  0x7ffc8a1f0000, 0x7ffc8a1f2000, 0, 0, 0, 0,
	  VMA_READ | VMA_EXEC, VMA_VDSO, false, "[vdso]" },
	{ "7ffc8a1ec000-7ffc8a1f0000 r--p 00000000 00:00 0 [vvar]",
	  0x7ffc8a1ec000, 0x7ffc8a1f0000, 0, 0, 0, 0,
	  VMA_READ, VMA_SPECIAL, false, "[vvar]" },
	{ "55d1e2000000-55d1e2021000 rw-p 00000000 00:00 0 [heap]",
	  0x55d1e2000000, 0x55d1e2021000, 0, 0, 0, 0,
	  VMA_READ | VMA_WRITE, VMA_SPECIAL, false, "[heap]" },
	{ "7ffc8a100000-7ffc8a121000 rw-p 00000000 00:00 0 [stack]",
	  0x7ffc8a100000, 0x7ffc8a121000, 0, 0, 0, 0,
	  VMA_READ | VMA_WRITE, VMA_SPECIAL, false, "[stack]" },
	{ "7f1000000000-7f1000100000 rw-p 00000000 00:00 0 [anon:libc_malloc]",
	  0x7f1000000000, 0x7f1000100000, 0, 0, 0, 0,
	  VMA_READ | VMA_WRITE, VMA_SPECIAL, false, "[anon:libc_malloc]" },
	{ "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
	  "                  [vsyscall]",
	  0xffffffffff600000ULL, 0xffffffffff601000ULL, 0, 0, 0, 0,
	  VMA_EXEC, VMA_SPECIAL, false, "[vsyscall]" },
	{ "7f2000000000-7f2000001000 rw-p 00000000 00:00 0 ",
	  0x7f2000000000, 0x7f2000001000, 0, 0, 0, 0,
	  VMA_READ | VMA_WRITE, VMA_ANON, false, NULL },
	{ "7f2000000000-7f2000001000 rwxp 00000000 00:00 0",
	  0x7f2000000000, 0x7f2000001000, 0, 0, 0, 0,
	  VMA_READ | VMA_WRITE | VMA_EXEC, VMA_ANON, false, NULL },
	{ "7f3000000000-7f3000001000 r-xs 00000000 00:01 1025 /memfd:jit (deleted)",
	  0x7f3000000000, 0x7f3000001000, 0, 1025, 0, 1,
	  VMA_READ | VMA_EXEC | VMA_SHARED, VMA_MEMFD, true, "/memfd:jit" },
	{ "7f3000000000-7f3000001000 rw-s 00000000 00:01 6 /dev/zero (deleted)",
	  0x7f3000000000, 0x7f3000001000, 0, 6, 0, 1,
	  VMA_READ | VMA_WRITE | VMA_SHARED, VMA_FILE, true, "/dev/zero" },
	{ "7f3000000000-7f3000001000 rw-s 00000000 00:0f 2052 anon_inode:[perf_event]",
	  0x7f3000000000, 0x7f3000001000, 0, 2052, 0, 0xf,
	  VMA_READ | VMA_WRITE | VMA_SHARED, VMA_OTHER, false,
	  "anon_inode:[perf_event]" },
	{ "7f3000000000-7f3000001000 r--p 00200000 103:02 18446744073709551615 /big",
	  0x7f3000000000, 0x7f3000001000, 0x200000, 18446744073709551615ULL,
	  0x103, 2, VMA_READ, VMA_FILE, false, "/big" },
	{ "7F3000000000-7F3000001000 r--p 0000ABCD 0A:0B 9 /upper\n",
	  0x7f3000000000, 0x7f3000001000, 0xabcd, 9, 10, 11,
	  VMA_READ, VMA_FILE, false, "/upper" },
};

static bool path_is(const struct vma *v, const char *want)
{
	if (!want)
		return !v->path && !v->path_len;
	return v->path && v->path_len == strlen(want) &&
	       !memcmp(v->path, want, v->path_len);
}

TEST(good_lines)
{
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const struct good_line *g = &good[i];
		struct vma v;
		int err;

		memset(&v, 0xa5, sizeof(v));
		err = procmaps__parse_line(g->line, strlen(g->line), &v);
		CHECK_INT(err, 0);
		if (err) {
			fprintf(stderr, "  line %zu: %s\n", i, g->line);
			continue;
		}
		CHECK(v.start == g->start);
		CHECK(v.end == g->end);
		CHECK(v.pgoff == g->pgoff);
		CHECK(v.inode == g->inode);
		CHECK_INT(v.dev_major, g->major);
		CHECK_INT(v.dev_minor, g->minor);
		CHECK_INT(v.flags, g->flags);
		CHECK_INT(v.kind, g->kind);
		CHECK_INT(v.deleted, g->deleted);
		if (!path_is(&v, g->path))
			fprintf(stderr, "  line %zu: path \"%.*s\"\n", i,
				(int)v.path_len, v.path ? v.path : "");
		CHECK(path_is(&v, g->path));
	}
}

static const char *const bad[] = {
	"",
	"\n",
	"garbage",
	"7f00-",
	"7f00-7f10",
	"7f00-7f10 r-xp",
	"7f00-7f10 r-xp 0 08:01",
	"2000-1000 r-xp 00000000 08:01 1 /x",		/* start > end */
	"1000-1000 r-xp 00000000 08:01 1 /x",		/* empty */
	"1000-2000 rwxq 00000000 08:01 1 /x",
	"1000-2000 rwx 00000000 08:01 1 /x",
	"1000-2000 Rwxp 00000000 08:01 1 /x",
	"10000000000000000-10000000000000001 r-xp 0 08:01 1 /x",	/* 65 bits */
	"1000-2000 r-xp 00000000 08:01 1x /x",
	"1000-2000 r-xp 00000000 0801 1 /x",
	"1000-2000 r-xp 00000000 08:01 99999999999999999999 /x",
	"1000-2000 r-xp 00000000 1000:01 1 /x",		/* major > 12 bits */
	"1000-2000 r-xp 00000000 08:100000 1 /x",	/* minor > 20 bits */
	"-1000-2000 r-xp 00000000 08:01 1 /x",
	"0x1000-0x2000 r-xp 00000000 08:01 1 /x",
	" 1000-2000 r-xp 00000000 08:01 1 /x",
	"1000-2000  r-xp 00000000 08:01 1 /x",
	"1000-2000 r-xp 00000000 08:01 1 /x\n/y",
	"g000-2000 r-xp 00000000 08:01 1 /x",
};

TEST(bad_lines)
{
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vma v;
		int err = procmaps__parse_line(bad[i], strlen(bad[i]), &v);

		if (err != -EINVAL)
			fprintf(stderr, "  accepted: \"%s\"\n", bad[i]);
		CHECK_INT(err, -EINVAL);
	}
}

TEST(embedded_nul)
{
	static const char line[] = "1000-2000 r-xp 00000000 08:01 1 /x\0y";
	struct vma v;

	CHECK_INT(procmaps__parse_line(line, sizeof(line) - 1, &v), -EINVAL);
	/* The same bytes up to the NUL are fine. */
	CHECK_INT(procmaps__parse_line(line, strlen(line), &v), 0);
}

/*
 * Parse from an exactly sized heap copy so ASan sees any over-read, and
 * check that what a success says is inside the line.
 */
static int parse_copy(const char *src, size_t len, struct vma *v)
{
	char *copy = malloc(len ? len : 1);
	int err;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, src, len);
	err = procmaps__parse_line(copy, len, v);
	if (!err) {
		CHECK(v->start < v->end);
		CHECK(!v->path == !v->path_len);
		CHECK(!v->path || (v->path >= copy &&
				   v->path + v->path_len <= copy + len &&
				   v->path[0] != ' '));
	}
	v->path = NULL;		/* about to dangle */
	free(copy);
	return err;
}

TEST(every_prefix)
{
	static const char line[] =
		"7f0000001000-7f0000002000 r-xp 00001000 fd:01 42   /tmp/a b (deleted)";
	size_t len, full = strlen(line);
	size_t inode_digit = strstr(line, " 42 ") - line + 1;
	struct vma v;

	for (len = 0; len <= full; len++) {
		int err = parse_copy(line, len, &v);

		/* Valid exactly from the first digit of the inode on. */
		CHECK_INT(err, len > inode_digit ? 0 : -EINVAL);
	}
}

TEST(mutations)
{
	static const char *const seeds[] = {
		"7f0000001000-7f0000002000 r-xp 00001000 fd:01 42   /tmp/a b (deleted)",
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]",
		"7f2000000000-7f2000001000 rw-p 00000000 00:00 0",
	};
	static const char alphabet[] = "0123456789abcdefx-: /[]()\n\0rwxps";
	unsigned int seed = 12345;
	char buf[128];
	int i, j;

	for (i = 0; i < 200000; i++) {
		const char *s = seeds[i % 3];
		size_t len = strlen(s);
		struct vma v;

		memcpy(buf, s, len);
		for (j = 0; j < 1 + i % 4; j++) {
			seed = seed * 1103515245 + 12345;
			buf[(seed >> 8) % len] =
				alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
		}
		seed = seed * 1103515245 + 12345;
		len -= (seed >> 16) % 3 ? 0 : (seed >> 8) % len;
		parse_copy(buf, len, &v);
	}
}

struct collect {
	int n;
	__u64 starts[8];
};

static int collect_cb(const struct vma *vma, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 8)
		c->starts[c->n] = vma->start;
	c->n++;
	return 0;
}

static int stop_cb(const struct vma *vma, void *ctx)
{
	return -ECANCELED;
}

TEST(parse_buffer)
{
	static const char text[] =
		"1000-2000 r-xp 00000000 08:01 1 /a\n"
		"not a mapping\n"
		"\n"
		"3000-4000 r--p 00000000 00:00 0 \n"
		"5000-4000 r--p 00000000 00:00 0\n"
		"6000-7000 r--p 00000000 00:00 0 [heap]";	/* no final \n */
	struct collect c = { 0 };

	CHECK_INT(procmaps__parse(text, strlen(text), collect_cb, &c), 2);
	CHECK_INT(c.n, 3);
	CHECK(c.starts[0] == 0x1000);
	CHECK(c.starts[1] == 0x3000);
	CHECK(c.starts[2] == 0x6000);
	CHECK_INT(procmaps__parse(text, strlen(text), stop_cb, NULL), -ECANCELED);
	CHECK_INT(procmaps__parse("", 0, collect_cb, &c), 0);
}

struct find_self {
	__u64 addr;
	bool found, exec;
	char path[PATH_MAX];
};

static int find_cb(const struct vma *vma, void *ctx)
{
	struct find_self *f = ctx;

	if (f->addr >= vma->start && f->addr < vma->end) {
		f->found = true;
		f->exec = vma->flags & VMA_EXEC;
		snprintf(f->path, sizeof(f->path), "%.*s", (int)vma->path_len,
			 vma->path ? vma->path : "");
	}
	return 0;
}

TEST(read_self)
{
	struct find_self f = { .addr = (__u64)(unsigned long)&find_cb };
	char exe[PATH_MAX];
	ssize_t n;

	CHECK_INT(procmaps__read((__u32)getpid(), find_cb, &f), 0);
	CHECK(f.found);
	CHECK(f.exec);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n > 0 ? n : 0] = '\0';
	CHECK_STR(f.path, exe);
}

TEST(read_gone)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	CHECK_INT(procmaps__read((__u32)pid, collect_cb, &(struct collect){ 0 }),
		  -ENOENT);
}

/* charged: the real uid, or the euid of a process root started. */
static __u32 charged_of(const char *uid_line)
{
	char dir[] = "/tmp/unit-status.XXXXXX", path[64];
	struct procfs_status st = { .charged = 12345 };
	FILE *f;
	int dirfd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/status", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "Name:\tsu\n%s\nNSpid:\t77\n", uid_line);
		fclose(f);
	}
	dirfd = open(dir, O_PATH | O_DIRECTORY);
	CHECK(dirfd >= 0);
	CHECK_INT(procfs__status(dirfd, &st), 0);
	close(dirfd);
	unlink(path);
	rmdir(dir);
	return st.charged;
}

TEST(status_charged)
{
	CHECK_INT(charged_of("Uid:\t65534\t0\t0\t0"), 65534);	/* su by nobody */
	CHECK_INT(charged_of("Uid:\t1000\t1000\t1000\t1000"), 1000);
	CHECK_INT(charged_of("Uid:\t0\t0\t0\t0"), 0);
	CHECK_INT(charged_of("Uid:\t0\t33\t33\t33"), 33);	/* root dropped to www-data */
	CHECK_INT(charged_of("Uid:\t65534\t1\t1\t1"), 65534);	/* at (setuid daemon) by nobody */
}

/* PPid: this process's parent, as the kernel's own file says; 0 without the line. */
TEST(status_ppid)
{
	char dir[] = "/tmp/unit-status.XXXXXX", path[64];
	struct procfs_status st = { .ppid = 1 };
	FILE *f;
	int dirfd;

	dirfd = procfs__open_pid((__u32)getpid());
	CHECK(dirfd >= 0);
	CHECK_INT(procfs__status(dirfd, &st), 0);
	CHECK_INT(st.ppid, getppid());
	close(dirfd);

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/status", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("Name:\tx\nUid:\t0\t0\t0\t0\n", f);
		fclose(f);
	}
	dirfd = open(dir, O_PATH | O_DIRECTORY);
	CHECK(dirfd >= 0);
	CHECK_INT(procfs__status(dirfd, &st), 0);
	CHECK_INT(st.ppid, 0);
	close(dirfd);
	unlink(path);
	rmdir(dir);
}

/* A pidfd: not ended while the child runs; ended once it exits, reaped or not. */
TEST(pidfd_ended)
{
	struct pollfd p;
	int fds[2], pidfd;
	pid_t pid;
	char c;

	CHECK_INT(procfs__pidfd(0x7ffffff0), -ESRCH);
	CHECK(pipe(fds) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(fds[1]);
		_exit(read(fds[0], &c, 1) == 1 ? 0 : 1);
	}
	close(fds[0]);
	pidfd = procfs__pidfd((__u32)pid);
	CHECK(pidfd >= 0);
	CHECK(!procfs__ended(pidfd));
	CHECK(write(fds[1], "x", 1) == 1);
	close(fds[1]);
	/* A zombie now, not reaped: ended all the same. */
	p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	CHECK(poll(&p, 1, 5000) == 1);
	CHECK(procfs__ended(pidfd));
	waitpid(pid, NULL, 0);
	CHECK(procfs__ended(pidfd));
	close(pidfd);
}

int main(void)
{
	RUN(good_lines);
	RUN(bad_lines);
	RUN(embedded_nul);
	RUN(every_prefix);
	RUN(mutations);
	RUN(parse_buffer);
	RUN(read_self);
	RUN(read_gone);
	RUN(status_charged);
	RUN(status_ppid);
	RUN(pidfd_ended);
	return unit_summary();
}
