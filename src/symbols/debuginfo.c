// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Looking up separate debug files.  The files found are untrusted like any
 * other (a container's root is writable by its owner), hence opened
 * O_PATH-then-regular, parsed by the same checked reader, and used only if
 * the build-id or the CRC says they belong to the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "symbols/caps.h"
#include "symbols/debuginfo.h"
#include "symbols/elf_file.h"
#include "symbols/procfs.h"

#define CRC_CHUNK	(256 * 1024)

static bool stopped(const volatile sig_atomic_t *stop)
{
	return stop && *stop;
}

int debuginfo__file_crc(int fd, __u64 max, const volatile sig_atomic_t *stop,
			unsigned int *crc)
{
	uLong c = crc32(0L, Z_NULL, 0);
	unsigned char *buf;
	struct stat st;
	__u64 off = 0;
	ssize_t n;
	int err = 0;

	/* A file can be grown to terabytes with truncate: look before reading. */
	if (fstat(fd, &st))
		return -errno;
	if ((__u64)st.st_size > max)
		return -EFBIG;
	buf = malloc(CRC_CHUNK);
	if (!buf)
		return -ENOMEM;
	/* zlib's CRC-32 is the one .gnu_debuglink uses. */
	while ((n = pread(fd, buf, CRC_CHUNK, (off_t)off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		off += (__u64)n;
		/* It may still grow while we read. */
		if (off > max) {
			err = -EFBIG;
			break;
		}
		if (stopped(stop)) {
			err = -EINTR;
			break;
		}
		c = crc32(c, buf, (uInt)n);
	}
	free(buf);
	*crc = (unsigned int)c;
	return err;
}

/*
 * Whether the process's owner could read the file itself: a debug file
 * found through a directory that user writes (a symlink there, a bind
 * mount in its own mount namespace) must not let it read through root's
 * eyes.  Debug packages install files that everyone may read.
 */
static bool owner_may_read(const struct stat *st, __s64 owner)
{
	if (owner == 0 || st->st_mode & S_IROTH)
		return true;
	if (owner < 0)
		return false;	/* unknown: only what anyone may read */
	return st->st_uid == (uid_t)owner && st->st_mode & S_IRUSR;
}

/* A candidate debug file, parsed, or NULL; *fdp and *st its file. */
static struct elf_file *open_candidate(int rootfd, const char *path,
				       const struct debuginfo_opts *o, int *fdp,
				       struct stat *st)
{
	struct elf_file *dbg;
	int fd;

	fd = procfs__reopen_regular(
		procfs__open_in_root(rootfd, path, strlen(path), 0), st);
	if (fd < 0)
		return NULL;
	if (!owner_may_read(st, o->reader)) {
		close(fd);
		return NULL;
	}
	dbg = elf_file__open_fd(fd);
	if (!dbg || elf_file__sym_source(dbg) != ELF_SYMS_SYMTAB) {
		elf_file__free(dbg);
		close(fd);
		return NULL;
	}
	*fdp = fd;
	return dbg;
}

/* Both have a build-id and they differ: not ours, whatever the CRC. */
static bool build_ids_clash(const struct elf_file *a, const struct elf_file *b)
{
	const char *x = elf_file__build_id(a), *y = elf_file__build_id(b);

	return x && y && strcmp(x, y);
}

static void found(struct debuginfo_file *out, struct elf_file *dbg,
		  const struct stat *st, int fd)
{
	out->elf = dbg;
	out->fd = fd;
	out->dev = st->st_dev;
	out->ino = st->st_ino;
}

static int try_build_id(const struct elf_file *ef, int rootfd,
			const struct debuginfo_opts *o,
			struct debuginfo_file *out)
{
	const char *dir = o->debug_dir;
	const char *id = elf_file__build_id(ef);
	char path[PATH_MAX];
	struct elf_file *dbg;
	struct stat st;
	int fd;

	/* Real ids are 16 or 20 bytes; too short a name could hit anything. */
	if (!id || strlen(id) < 8)
		return -ENOENT;
	if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, id,
		     id + 2) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	dbg = open_candidate(rootfd, path, o, &fd, &st);
	if (!dbg)
		return -ENOENT;
	if (build_ids_clash(ef, dbg) || !elf_file__build_id(dbg)) {
		elf_file__free(dbg);
		close(fd);
		return -ENOENT;
	}
	found(out, dbg, &st, fd);
	return 0;
}

/*
 * Whether dbg belongs to ef: by build-id when both have one (no need to
 * read the whole file), else by the link's CRC-32, over at most
 * CAP_CRC_BYTES.
 */
static bool link_matches(const struct elf_file *ef, const struct elf_file *dbg,
			 int fd, unsigned int want, struct debuginfo_opts *o)
{
	unsigned int crc;
	int err;

	if (elf_file__build_id(ef) && elf_file__build_id(dbg))
		return !build_ids_clash(ef, dbg);
	err = debuginfo__file_crc(fd, CAP_CRC_BYTES, o->stop, &crc);
	if (err == -EFBIG)
		o->capped |= CAP_BIT(CAP_CRC);
	return !err && crc == want;
}

static int try_link_path(const struct elf_file *ef, int rootfd,
			 const char *path, unsigned int want,
			 struct debuginfo_opts *o, struct debuginfo_file *out)
{
	struct elf_file *dbg;
	struct stat st;
	bool ok;
	int fd;

	dbg = open_candidate(rootfd, path, o, &fd, &st);
	if (!dbg)
		return -ENOENT;
	ok = link_matches(ef, dbg, fd, want, o);
	if (!ok) {
		elf_file__free(dbg);
		close(fd);
		return -ENOENT;
	}
	found(out, dbg, &st, fd);
	return 0;
}

/*
 * The debuglink candidates, in order: beside the file, in its .debug/
 * (DEBUGINFO_BESIDE), then DEBUG_DIR plus the file's directory
 * (DEBUGINFO_DEBUG_DIR).
 */
static int try_debuglink(const struct elf_file *ef, const char *path,
			 size_t path_len, int rootfd, unsigned int where,
			 struct debuginfo_opts *o, struct debuginfo_file *out)
{
	const char *dir = o->debug_dir;
	char fdir[PATH_MAX], cand[3][PATH_MAX];
	unsigned int crc, in[3] = {
		DEBUGINFO_BESIDE, DEBUGINFO_BESIDE, DEBUGINFO_DEBUG_DIR,
	};
	const char *name, *slash;
	int err = -ENOENT;
	size_t i;

	name = elf_file__debuglink(ef, &crc);
	if (!name || !path || !path_len || path[0] != '/' || path_len >= PATH_MAX ||
	    memchr(path, '\0', path_len))
		return -ENOENT;
	/* The file's directory, "" for the root. */
	slash = memrchr(path, '/', path_len);
	if (!slash)
		return -ENOENT;
	memcpy(fdir, path, (size_t)(slash - path));
	fdir[slash - path] = '\0';
	if (snprintf(cand[0], PATH_MAX, "%s/%s", fdir, name) >= PATH_MAX ||
	    snprintf(cand[1], PATH_MAX, "%s/.debug/%s", fdir, name) >= PATH_MAX ||
	    snprintf(cand[2], PATH_MAX, "%s%s/%s", dir, fdir, name) >= PATH_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i < 3 && err && !stopped(o->stop); i++) {
		if (where & in[i])
			err = try_link_path(ef, rootfd, cand[i], crc, o, out);
	}
	return err;
}

int debuginfo__find(const struct elf_file *ef, const char *path,
		    size_t path_len, int rootfd, unsigned int where,
		    struct debuginfo_opts *o, struct debuginfo_file *out)
{
	int hostfd = -1, err = -ENOENT;

	if (!o->debug_dir)
		o->debug_dir = DEBUGINFO_DIR;
	if (rootfd < 0) {
		hostfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (hostfd < 0)
			return -ENOENT;
		rootfd = hostfd;
	}
	if (where & DEBUGINFO_DEBUG_DIR)
		err = try_build_id(ef, rootfd, o, out);
	if (err && !stopped(o->stop))
		err = try_debuglink(ef, path, path_len, rootfd, where, o, out);
	if (hostfd >= 0)
		close(hostfd);
	return err ? -ENOENT : 0;
}

int debuginfo__load(struct elf_file *ef, const char *path, size_t path_len,
		    int proc_rootfd, struct debuginfo_opts *o)
{
	unsigned int where = DEBUGINFO_BESIDE;
	struct debuginfo_file dbg;
	int err;

	o->capped = 0;
	/* Root's own directory first: it names the file for everyone. */
	err = debuginfo__find(ef, path, path_len, -1, DEBUGINFO_DEBUG_DIR, o,
			      &dbg);
	if (proc_rootfd >= 0)
		where |= DEBUGINFO_DEBUG_DIR;
	if (err && !stopped(o->stop))
		err = debuginfo__find(ef, path, path_len, proc_rootfd, where, o,
				      &dbg);
	if (err)
		return -ENOENT;
	err = elf_file__merge_symbols(ef, dbg.elf, ELF_SYMS_DEBUGFILE);
	elf_file__free(dbg.elf);
	close(dbg.fd);
	return err;
}
