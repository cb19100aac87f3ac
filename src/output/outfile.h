/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An -o file, written so that a local user cannot turn a root profiler
 * against the host: the report goes into a new temporary file, mode 0600,
 * made with O_EXCL|O_NOFOLLOW in the target's directory, and is renamed
 * over the target only once it is complete and on disk.  A symbolic link
 * or a file that someone else planted at the target is replaced, never
 * followed or written into; a failed run leaves the old file as it was and
 * no temporary file behind.  The directory is held open, so that the
 * temporary file and the rename are in the same one.
 *
 * Written in place instead (nothing can be renamed over those): a device
 * (/dev/null, a terminal), a FIFO of our own, and what a symbolic link of
 * our own points to when only we can write its directory (/dev/stdout).
 *
 * Like the other layers below the writer, this prints nothing: it returns
 * a negative errno.
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct outfile {
	FILE *f;		/* the stream to write to; NULL when closed */
	int dirfd;		/* the target's directory; -1 when closed */
	char *name;		/* the target's name in dirfd */
	char tmp[NAME_MAX + 1];	/* the temporary file in dirfd; "" when none */
	bool in_place;		/* a device, FIFO or trusted link: no rename */
};

/* The temporary file's name for target NAME: ".NAME.profile-" and 8 hex
 * digits (NAME cut to 200 bytes), so that a left-over one is recognisable. */
#define OUTFILE_TMP_TAG ".profile-"

/* Start writing to path: 0 or -errno.  Nothing at path changes yet. */
int outfile__open(struct outfile *of, const char *path);

/*
 * Flush, sync and close, but do not rename yet: the first half of
 * outfile__commit(), so that several outputs are all complete on disk
 * before any replaces its target.  0 or -errno; on failure the temporary
 * file is removed.  Then outfile__commit() or outfile__abort().
 */
int outfile__finish(struct outfile *of);

/* Flush, sync (unless outfile__finish() did) and rename over the target;
 * closes in every case.  0 or -errno; on failure the temporary file is
 * removed, the target unchanged. */
int outfile__commit(struct outfile *of);

/*
 * Whether a file could be written at path: its directory opens and takes
 * a new temporary file (removed at once).  Nothing named path is touched.
 * 0 or -errno.
 */
int outfile__probe(const char *path);

/* Close and remove the temporary file; the target is left as it was.
 * Safe on a closed or zeroed outfile, and twice. */
void outfile__abort(struct outfile *of);

#endif /* OUTFILE_H */
