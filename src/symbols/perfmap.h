/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * /tmp/perf-PID.map: the symbol files JIT runtimes (V8, the JVM's
 * perf-map-agent, LuaJIT) write for code they generate.  One entry a line:
 *
 *	START SIZE NAME
 *
 * START and SIZE in hex, with or without "0x"; NAME is the rest of the line
 * and may hold spaces.  Runtimes append as they compile, and reuse freed
 * code addresses: of two entries at one address, the later line wins.
 *
 * /tmp is writable by everyone, so a map is used only if it is a regular
 * file (not a symlink, FIFO or device), owned by the process's user (root's
 * file only for a root process), not writable by others, not a mount point
 * (a file bind-mounted there in the user's own mount namespace), and not
 * older than the process (a file left by an earlier process with the same
 * pid).  A map over CAP_PERFMAP_BYTES is not read; past CAP_PERFMAP_ENTRIES
 * entries (after dropping the lines later ones replace) the rest of the
 * file is left out.
 */
#ifndef PERFMAP_H
#define PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>

struct perfmap;

/*
 * Lines that are not "START SIZE NAME" are skipped; only the names of the
 * entries kept are copied.  NULL + errno (ENOMEM, EFBIG past the cap).
 */
struct perfmap *perfmap__parse(const char *buf, size_t len);

/* Whether entries were left out at CAP_PERFMAP_ENTRIES. */
bool perfmap__capped(const struct perfmap *pm);
void perfmap__free(struct perfmap *pm);

/* The entry holding addr: its name and addr's offset in it, or NULL. */
const char *perfmap__find(const struct perfmap *pm, __u64 addr,
			  __u64 *offset);
size_t perfmap__nr(const struct perfmap *pm);

/* Who may have written a process's map, and when. */
struct perfmap_owner {
	__u32 euid, fsuid;	/* the process's */
	__u64 not_before_ns;	/* process start, CLOCK_REALTIME */
	__u64 not_after_ns;	/* 0, or when the process was known gone */
};

/* Whether a map file with this stat may be trusted for that process. */
bool perfmap__trusted(const struct stat *st, const struct perfmap_owner *who);

/* Tells whether a file changed since it was last read. */
struct perfmap_stamp {
	__u64 dev, ino, size;
	__s64 mtime_sec, mtime_nsec;
};

/*
 * Read and parse the map at path (path_len bytes) under dirfd, resolved
 * with dirfd as the root (a process's /proc/PID/root, or an open "/"),
 * without following a final symlink and without blocking.  If the file's
 * stamp equals *stamp, returns -EALREADY without reading it; else updates
 * *stamp.  Returns 0 with *out set, -EPERM for a file not trusted, -EFBIG
 * for one over the cap, other negative errno (-ENOENT: no map).
 */
int perfmap__read_at(int dirfd, const char *path, size_t path_len,
		     const struct perfmap_owner *who,
		     struct perfmap_stamp *stamp, struct perfmap **out);

#endif /* PERFMAP_H */
