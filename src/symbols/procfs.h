/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reaching the files of another process safely: its mapped files, files by
 * name inside its root directory (containers), and what /proc says about it.
 *
 * Files are opened O_PATH first and reopened for reading only once fstat()
 * says they are regular files: opening a device can have side effects and
 * opening a FIFO can block.  All functions return a file descriptor or 0 on
 * success, a negative errno on failure.
 */
#ifndef PROCFS_H
#define PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>

/* What identifies a mapped file. */
struct procfs_mapping {
	__u64 start, end;	/* the mapping, for map_files/START-END */
	__u64 dev, ino;		/* dev as makedev(major, minor) */
	const char *path;	/* as the process sees it, not NUL-terminated */
	size_t path_len;
	bool deleted;		/* the path no longer names the file */
};

/* An O_RDONLY descriptor of the regular file pfd (O_PATH) is; closes pfd. */
int procfs__reopen_regular(int pfd, struct stat *st);

/*
 * O_PATH descriptor of path (path_len bytes) resolved with dirfd as the
 * root directory: absolute symlinks and ".." stay inside (openat2
 * RESOLVE_IN_ROOT, Linux 5.6).  extra: more open flags, e.g. O_NOFOLLOW.
 */
int procfs__open_in_root(int rootfd, const char *path, size_t path_len,
			 int extra);

/*
 * Open the file of a mapping for reading, trying in order:
 *  - map_files/START-END under proc_dirfd (deleted files, other mount
 *    namespaces; needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE);
 *  - the path inside the process's root, if it still has the inode;
 *  - exe, if it has the inode (works unprivileged for our own children);
 *  - the path as the profiler sees it, only if it has the very device and
 *    inode (the process may be gone; in another mount namespace the name
 *    may be another file, which the check refuses).
 * proc_dirfd may be -1 (the process is gone).  -EINVAL: the file is not a
 * regular one; other errors: it could not be reached.
 */
int procfs__open_mapped(int proc_dirfd, const struct procfs_mapping *m);

/* /proc/PID as a directory descriptor. */
int procfs__open_pid(__u32 pid);

/*
 * A pidfd of pid (pidfd_open(2)): the process itself, whatever takes its
 * pid after it; -errno (-ESRCH: gone).  procfs__ended(): has it exited
 * (or can that not be told)?
 */
int procfs__pidfd(__u32 pid);
bool procfs__ended(int pidfd);

/* Field 22 of /proc/PID/stat: start time in clock ticks after boot. */
int procfs__starttime(int proc_dirfd, __u64 *ticks);

/*
 * Fields 14 and 15 of /proc/PID/stat added: the CPU time the process's
 * threads have used, user and system, in clock ticks.
 */
int procfs__cpu_ticks(int proc_dirfd, __u64 *ticks);

/* From /proc/PID/status. */
struct procfs_status {
	__u32 euid, fsuid;
	/*
	 * The user a process's share of host-wide tables is charged to: its
	 * real uid, the user who started it, so that starting a set-user-ID
	 * program (su, at) charges no other user (lib/share.h); the euid of a
	 * process root started that became another user only in its euid.
	 */
	__u32 charged;
	__u32 nspid;		/* the pid in its own pid namespace */
	__u32 tgid;		/* its process (of a thread's /proc/TID) */
	__u32 ppid;		/* its parent process, 0 if none */
};

int procfs__status(int proc_dirfd, struct procfs_status *st);

/* Convert a starttime in ticks to CLOCK_REALTIME nanoseconds. */
__u64 procfs__start_realtime_ns(__u64 ticks);

/*
 * Convert a starttime in ticks to CLOCK_MONOTONIC nanoseconds, rounded
 * down: never after the process started.
 */
__u64 procfs__start_monotonic_ns(__u64 ticks);

/* Whether the process's mount namespace is ours (false if unknown). */
bool procfs__same_mntns(int proc_dirfd);

#endif /* PROCFS_H */
