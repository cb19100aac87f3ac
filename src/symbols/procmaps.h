/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Parsing of /proc/PID/maps.
 *
 * The text comes from processes we do not trust (a path is whatever name
 * the process gave its file), so the parser works on a bounded buffer,
 * never reads past it, never allocates, and rejects any line that is not
 * exactly in the kernel's format instead of guessing.
 */
#ifndef PROCMAPS_H
#define PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum vma_kind {
	VMA_ANON,	/* no path at all */
	VMA_FILE,	/* a path starting with '/' (may be a device or shm) */
	VMA_MEMFD,	/* "/memfd:NAME (deleted)": never an on-disk file */
	VMA_VDSO,	/* "[vdso]" */
	VMA_SPECIAL,	/* any other "[...]": [heap], [stack], [vvar], [anon:x] */
	VMA_OTHER,	/* a path of some other shape, e.g. "anon_inode:[x]" */
};

#define VMA_READ	0x1
#define VMA_WRITE	0x2
#define VMA_EXEC	0x4
#define VMA_SHARED	0x8

struct vma {
	__u64 start, end;	/* [start, end) */
	__u64 pgoff;		/* file offset of start, in bytes */
	__u64 inode;
	__u32 dev_major, dev_minor;
	__u32 flags;		/* VMA_READ | VMA_WRITE | VMA_EXEC | VMA_SHARED */
	enum vma_kind kind;
	bool deleted;		/* the path had a " (deleted)" suffix */
	/*
	 * Points into the parsed line, not NUL-terminated: path_len bytes,
	 * without the " (deleted)" suffix.  path_len is 0 for VMA_ANON.
	 */
	const char *path;
	size_t path_len;
};

/*
 * Parse one line of len bytes (a trailing '\n' is allowed, a NUL is not
 * needed).  Returns 0 with *out filled, -EINVAL if the line is malformed.
 */
int procmaps__parse_line(const char *line, size_t len, struct vma *out);

/*
 * Fill path, path_len, deleted and kind of out from a path as the kernel
 * prints it in maps or in a PERF_RECORD_MMAP2 ("//anon" is anonymous).
 */
void procmaps__set_path(struct vma *out, const char *path, size_t len);

/* Called for every well-formed line; a non-zero return stops the walk. */
typedef int (*procmaps_cb)(const struct vma *vma, void *ctx);

/*
 * Parse a whole maps text.  Malformed lines are skipped (losing one mapping
 * is better than losing the process).  Returns the number of lines skipped,
 * or the callback's return value if it was non-zero.
 */
int procmaps__parse(const char *buf, size_t len, procmaps_cb cb, void *ctx);

/*
 * Read "maps" under proc_dirfd (an open /proc/PID directory, so that the
 * caller can go on to read map_files/ of the very same process) and parse
 * it.  Returns as procmaps__parse(), or a negative errno if it could not be
 * read (-ENOENT or -ESRCH: the process is gone).
 */
int procmaps__read_at(int proc_dirfd, procmaps_cb cb, void *ctx);

/* Same for a pid, through /proc/PID/maps. */
int procmaps__read(__u32 pid, procmaps_cb cb, void *ctx);

/*
 * Read the whole of a small text file under dirfd (a /proc file: its size
 * is unknown until read).  Fails with -EFBIG past max bytes.  On success
 * *buf is a malloc()ed, NUL-terminated copy of *len bytes.
 */
int procmaps__read_text_at(int dirfd, const char *name, size_t max,
			   char **buf, size_t *len);

/* Same for an open file descriptor (not closed). */
int procmaps__read_fd(int fd, size_t max, char **buf, size_t *len);

#endif /* PROCMAPS_H */
