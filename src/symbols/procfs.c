// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "symbols/procfs.h"
#include "symbols/procmaps.h"

#define STATUS_MAX	(64 * 1024)

int procfs__reopen_regular(int pfd, struct stat *st)
{
	char self[64];
	int fd, err;

	if (pfd < 0)
		return pfd;
	if (fstat(pfd, st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st->st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	/* Reopening through /proc/self/fd gets exactly the file checked. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	err = fd < 0 ? -errno : fd;

cleanup:
	close(pfd);
	return err;
}

int procfs__open_in_root(int rootfd, const char *path, size_t path_len,
			 int extra)
{
	struct open_how how = {
		.flags = (__u64)(O_PATH | O_CLOEXEC | extra),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char buf[PATH_MAX];
	int fd;

	if (path_len >= sizeof(buf))
		return -ENAMETOOLONG;
	if (memchr(path, '\0', path_len))
		return -EINVAL;
	memcpy(buf, path, path_len);
	buf[path_len] = '\0';
	fd = (int)syscall(SYS_openat2, rootfd, buf, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

static int open_path_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_PATH | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * Whether st is the mapped file (dev, ino).  Through overlayfs (a
 * container's root) a path shows the overlay's device with the inode of
 * the file below, which the mapping names: there the inode must do.
 */
static bool same_file(int fd, const struct stat *st, __u64 dev, __u64 ino,
		      bool overlay_ok)
{
	struct statfs sfs;

	if ((__u64)st->st_ino != ino)
		return false;
	if ((__u64)st->st_dev == dev)
		return true;
	return overlay_ok && !fstatfs(fd, &sfs) && sfs.f_type == OVERLAYFS_SUPER_MAGIC;
}

/*
 * Reopen pfd if it is a regular file that is the mapped one; with
 * overlay_ok, a file on an overlay with the mapping's inode is too.
 */
static int reopen_checked(int pfd, __u64 dev, __u64 ino, bool overlay_ok)
{
	struct stat st;
	int fd;

	fd = procfs__reopen_regular(pfd, &st);
	if (fd >= 0 && !same_file(fd, &st, dev, ino, overlay_ok)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static int open_by_root(int proc_dirfd, const struct procfs_mapping *m)
{
	int rootfd, fd;

	rootfd = openat(proc_dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = procfs__open_in_root(rootfd, m->path, m->path_len, 0);
	close(rootfd);
	return reopen_checked(fd, m->dev, m->ino, true);
}

static int open_by_host_path(const struct procfs_mapping *m)
{
	char buf[PATH_MAX];

	if (m->path_len >= sizeof(buf) || memchr(m->path, '\0', m->path_len))
		return -ENAMETOOLONG;
	memcpy(buf, m->path, m->path_len);
	buf[m->path_len] = '\0';
	return reopen_checked(open_path_at(AT_FDCWD, buf), m->dev, m->ino, false);
}

int procfs__open_mapped(int proc_dirfd, const struct procfs_mapping *m)
{
	char name[64];
	int fd = -ENOENT;

	if (proc_dirfd >= 0) {
		snprintf(name, sizeof(name), "map_files/%llx-%llx",
			 (unsigned long long)m->start,
			 (unsigned long long)m->end);
		/* The range may hold another file by now: check it is the same. */
		fd = reopen_checked(open_path_at(proc_dirfd, name), m->dev, m->ino, false);
		if (fd >= 0 || fd == -EINVAL)
			return fd;
		if (!m->deleted && m->path_len && m->path[0] == '/') {
			fd = open_by_root(proc_dirfd, m);
			if (fd >= 0 || fd == -EINVAL)
				return fd;
		}
		fd = reopen_checked(open_path_at(proc_dirfd, "exe"), m->dev, m->ino, true);
		if (fd >= 0 || fd == -EINVAL)
			return fd;
	}
	if (!m->deleted && m->dev && m->path_len && m->path[0] == '/') {
		int hfd = open_by_host_path(m);

		if (hfd >= 0 || hfd == -EINVAL)
			return hfd;
	}
	return fd;
}

int procfs__open_pid(__u32 pid)
{
	char path[32];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int procfs__pidfd(__u32 pid)
{
	long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

bool procfs__ended(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	/* Readable once the process has exited. */
	return poll(&p, 1, 0) != 0;
}

/*
 * Fields first .. first + n - 1 of PID/stat (numbered from 1, as proc(5)
 * does; first > 2, after the comm).
 */
static int stat_fields(int proc_dirfd, int first, int n, __u64 *v)
{
	char buf[1024], *p;
	unsigned long long x;
	ssize_t len;
	int fd, field;

	fd = openat(proc_dirfd, "stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return len < 0 ? -errno : -EIO;
	buf[len] = '\0';
	/* The comm may hold anything: count fields after its last ')'. */
	p = strrchr(buf, ')');
	for (field = 2; p && field < first; field++)
		p = strchr(p + 1, ' ');
	for (int i = 0; i < n; i++) {
		if (!p || sscanf(p + 1, "%llu", &x) != 1)
			return -EIO;
		v[i] = x;
		p = strchr(p + 1, ' ');
	}
	return 0;
}

int procfs__starttime(int proc_dirfd, __u64 *ticks)
{
	return stat_fields(proc_dirfd, 22, 1, ticks);
}

int procfs__cpu_ticks(int proc_dirfd, __u64 *ticks)
{
	__u64 v[2];
	int err = stat_fields(proc_dirfd, 14, 2, v);

	if (!err)
		*ticks = v[0] + v[1];
	return err;
}

/* The value after "key" on its own line, up to the end of that line. */
static const char *status_field(const char *buf, const char *key)
{
	size_t n = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, n))
			return p + n;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int procfs__status(int proc_dirfd, struct procfs_status *st)
{
	unsigned int ruid, euid, suid, fsuid;
	const char *uid, *ns, *tgid, *ppid;
	unsigned long v;
	size_t len;
	char *buf, *end;
	int err;

	err = procmaps__read_text_at(proc_dirfd, "status", STATUS_MAX, &buf,
				     &len);
	if (err)
		return err;
	uid = status_field(buf, "Uid:");
	if (!uid || sscanf(uid, "%u %u %u %u", &ruid, &euid, &suid,
			   &fsuid) != 4) {
		err = -EIO;
		goto cleanup;
	}
	st->euid = euid;
	st->fsuid = fsuid;
	st->charged = ruid ? ruid : euid;
	st->nspid = 0;
	tgid = status_field(buf, "Tgid:");
	st->tgid = tgid ? (__u32)strtoul(tgid, NULL, 10) : 0;
	ppid = status_field(buf, "PPid:");
	st->ppid = ppid ? (__u32)strtoul(ppid, NULL, 10) : 0;
	/* NSpid lists the pid from the outermost namespace in; take the last. */
	ns = status_field(buf, "NSpid:");
	while (ns && *ns && *ns != '\n') {
		errno = 0;
		v = strtoul(ns, &end, 10);
		if (end == ns || errno || v > UINT32_MAX)
			break;
		st->nspid = (__u32)v;
		ns = end;
	}

cleanup:
	free(buf);
	return err;
}

/* A starttime in clock ticks as nanoseconds since boot, rounded down. */
static __u64 ticks_ns(__u64 ticks)
{
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0)
		hz = 100;
	return ticks / (__u64)hz * 1000000000ULL +
	       ticks % (__u64)hz * (1000000000ULL / (__u64)hz);
}

__u64 procfs__start_realtime_ns(__u64 ticks)
{
	struct timespec real, boot;
	__u64 boot_epoch;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	boot_epoch = ((__u64)real.tv_sec - (__u64)boot.tv_sec) * 1000000000ULL +
		     (__u64)real.tv_nsec - (__u64)boot.tv_nsec;
	return boot_epoch + ticks_ns(ticks);
}

__u64 procfs__start_monotonic_ns(__u64 ticks)
{
	struct timespec mono, boot;
	__u64 asleep, ns = ticks_ns(ticks);

	/* Monotonic first: the time asleep comes out no smaller than it is. */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	asleep = ((__u64)boot.tv_sec - (__u64)mono.tv_sec) * 1000000000ULL +
		 (__u64)boot.tv_nsec - (__u64)mono.tv_nsec;
	return ns > asleep ? ns - asleep : 0;
}

bool procfs__same_mntns(int proc_dirfd)
{
	struct stat theirs, ours;

	if (fstatat(proc_dirfd, "ns/mnt", &theirs, 0) ||
	    stat("/proc/self/ns/mnt", &ours))
		return false;
	return theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev;
}
