// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "output/outfile.h"

/* Tries at a free temporary name before giving up (EEXIST). */
#define TMP_TRIES 100

static void release(struct outfile *of)
{
	if (of->name) {
		close(of->dirfd);
		free(of->name);
	}
	of->f = NULL;
	of->dirfd = -1;
	of->name = NULL;
	of->tmp[0] = '\0';
	of->in_place = false;
}

/*
 * Open path's directory and keep its last component: "a/b/c" is "c" in
 * "a/b", "c" is "c" in ".", "/c" is "c" in "/".  A path that names a
 * directory ("a/", "a/.", "..") is EISDIR.
 */
static int open_dir(struct outfile *of, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, slash - path);
	of->name = strdup(base);
	if (!dir || !of->name) {
		free(dir);
		free(of->name);
		of->name = NULL;
		return -ENOMEM;
	}
	of->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (of->dirfd < 0) {
		int err = -errno;

		free(of->name);
		of->name = NULL;
		return err;
	}
	return 0;
}

static uint32_t random_u32(void)
{
	static uint32_t fallback;
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == sizeof(r))
		return r;
	/* Guessable, but O_EXCL keeps it safe: a taken name is tried again. */
	fallback += 0x9e3779b9u;
	return fallback ^ (uint32_t)getpid() ^ (uint32_t)time(NULL);
}

/* A new, empty, 0600 file next to the target, or -errno. */
static int create_tmp(struct outfile *of)
{
	int fd;

	for (int i = 0; i < TMP_TRIES; i++) {
		snprintf(of->tmp, sizeof(of->tmp), ".%.200s" OUTFILE_TMP_TAG "%08x",
			 of->name, random_u32());
		fd = openat(of->dirfd, of->tmp,
			    O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			break;
	}
	of->tmp[0] = '\0';
	return -errno;
}

/*
 * May a symbolic link be followed?  Only when nobody but us can have put
 * it there: it is ours, and so is its directory, which no one else can
 * write to (/dev/stdout, /proc/self/fd/N).
 */
static bool trusted_link(const struct outfile *of, const struct stat *st)
{
	struct stat dir;

	if (st->st_uid != geteuid() || fstat(of->dirfd, &dir))
		return false;
	return dir.st_uid == geteuid() && !(dir.st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * Is the target something to write into rather than to replace?  A device
 * (only root makes those) or a FIFO of our own.  A regular file, or a FIFO
 * someone else made, is replaced.
 */
static bool write_in_place(const struct stat *st)
{
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return true;
	return S_ISFIFO(st->st_mode) && st->st_uid == geteuid();
}

/*
 * Open the existing target for writing, without creating or truncating it.
 * Through a trusted link; else not following one, and checking that what
 * was opened is what was looked at (the name may have changed between).
 */
static int open_in_place(struct outfile *of, const struct stat *st)
{
	int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC;
	struct stat now;
	int fd;

	if (!S_ISLNK(st->st_mode))
		flags |= O_NOFOLLOW;
	fd = openat(of->dirfd, of->name, flags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &now)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISLNK(st->st_mode) &&
	    (now.st_dev != st->st_dev || now.st_ino != st->st_ino)) {
		close(fd);
		return -EAGAIN;
	}
	if (S_ISDIR(now.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	/* Through a link: what it reached must be a device or ours too. */
	if (S_ISLNK(st->st_mode) && !S_ISCHR(now.st_mode) &&
	    !S_ISBLK(now.st_mode) && now.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	of->in_place = true;
	return fd;
}

/* A file descriptor to write the report to, or -errno. */
static int open_fd(struct outfile *of)
{
	struct stat st;

	if (fstatat(of->dirfd, of->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno != ENOENT)
			return -errno;
		return create_tmp(of);
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if ((S_ISLNK(st.st_mode) && trusted_link(of, &st)) || write_in_place(&st))
		return open_in_place(of, &st);
	return create_tmp(of);
}

int outfile__open(struct outfile *of, const char *path)
{
	int fd, err;

	of->name = NULL;
	release(of);
	err = open_dir(of, path);
	if (err)
		return err;
	fd = open_fd(of);
	if (fd < 0) {
		release(of);
		return fd;
	}
	of->f = fdopen(fd, "w");
	if (!of->f) {
		err = -errno;
		close(fd);
		outfile__abort(of);
		return err;
	}
	return 0;
}

int outfile__probe(const char *path)
{
	struct outfile of = { .dirfd = -1 };
	int fd, err;

	err = open_dir(&of, path);
	if (err)
		return err;
	fd = create_tmp(&of);
	if (fd >= 0) {
		close(fd);
		unlinkat(of.dirfd, of.tmp, 0);
		of.tmp[0] = '\0';
	}
	release(&of);
	return fd < 0 ? fd : 0;
}

/* In place: cut a regular file (behind a trusted link) to what was written. */
static int finish_in_place(struct outfile *of)
{
	struct stat st;
	off_t end;

	if (fstat(fileno(of->f), &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	end = ftello(of->f);
	if (end < 0 || ftruncate(fileno(of->f), end))
		return -errno;
	return 0;
}

int outfile__finish(struct outfile *of)
{
	int err = 0;

	if (!of->f)
		return of->name ? 0 : -EBADF;
	if (fflush(of->f))
		err = -errno;
	else if (ferror(of->f))
		err = -EIO;
	else if (of->in_place)
		err = finish_in_place(of);
	else if (fsync(fileno(of->f)))
		err = -errno;
	if (fclose(of->f) && !err)
		err = -errno;
	of->f = NULL;
	if (err)
		outfile__abort(of);
	return err;
}

int outfile__commit(struct outfile *of)
{
	int err = outfile__finish(of);

	if (err)
		return err;
	if (!of->in_place) {
		if (renameat(of->dirfd, of->tmp, of->dirfd, of->name))
			err = -errno;
		else
			of->tmp[0] = '\0';
	}
	outfile__abort(of);
	return err;
}

void outfile__abort(struct outfile *of)
{
	if (of->f)
		fclose(of->f);
	of->f = NULL;
	if (of->name && of->tmp[0])
		unlinkat(of->dirfd, of->tmp, 0);
	release(of);
}
