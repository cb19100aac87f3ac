/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Separate debug files: the full .symtab of a stripped file, installed by
 * a -dbg/-debuginfo package.  Looked for, in order:
 *  1. DEBUG_DIR/.build-id/xx/rest.debug, named by the file's GNU build-id
 *     (the debug file must carry the same build-id);
 *  2. the file's .gnu_debuglink name in the file's own directory, in its
 *     .debug/ subdirectory, then in DEBUG_DIR plus that directory (the
 *     debug file's build-id, or without one its CRC-32, must match).
 *
 * Where a debug file was found decides whom it may name.  DEBUG_DIR in the
 * profiler's own root is written by root alone: a file found there names
 * the file for every process, and is looked for first.  Anywhere else (the
 * file's own directory, a process's root: a container ships its own debug
 * files) the directories may belong to a user, who can chroot or mount a
 * forged debug file there for another user's binary: what is found names
 * the file only for processes that see the same files (ufiles.h).
 */
#ifndef DEBUGINFO_H
#define DEBUGINFO_H

#include <signal.h>
#include <stddef.h>
#include <linux/types.h>

struct elf_file;

#define DEBUGINFO_DIR	"/usr/lib/debug"

struct debuginfo_opts {
	const char *debug_dir;		/* NULL: DEBUGINFO_DIR */
	/* NULL, or a flag that, once set, ends the lookup at once. */
	const volatile sig_atomic_t *stop;
	/*
	 * The uid of the process's owner, or -1 if unknown: a debug file is
	 * used only if that user could read it (world-readable, or its own;
	 * world-readable only when the owner is unknown).
	 */
	__s64 reader;
	unsigned int capped;		/* out: CAP_BIT(CAP_CRC) if hit */
};

/* Places debuginfo__find() looks in, inside the root it is given. */
#define DEBUGINFO_DEBUG_DIR	(1u << 0)	/* DEBUG_DIR/.build-id, DEBUG_DIR + the file's directory */
#define DEBUGINFO_BESIDE	(1u << 1)	/* the file's own directory and its .debug/ */

/*
 * A debug file found: parsed, which file it is (its device and inode), and
 * the file itself, open, for its DWARF (dwlines.h): the caller closes fd.
 */
struct debuginfo_file {
	struct elf_file *elf;
	__u64 dev, ino;
	int fd;
};

/*
 * Find ef's debug file in the places where (DEBUGINFO_*) inside rootfd, a
 * root directory (O_PATH), or the profiler's root when rootfd is -1.
 * path (path_len bytes, may be 0) is ef's path as the process sees it, for
 * the debuglink directories.  By build-id first (the debug file must carry
 * ef's), then by debuglink, taken on its build-id when both files have
 * one, else on its CRC, read only up to CAP_CRC_BYTES.  Returns 0 with out
 * filled (the caller frees out->elf and closes out->fd), or -ENOENT.
 */
int debuginfo__find(const struct elf_file *ef, const char *path,
		    size_t path_len, int rootfd, unsigned int where,
		    struct debuginfo_opts *o, struct debuginfo_file *out);

/*
 * Merge the symbols of ef's debug file into ef (elf_file__merge_symbols,
 * ELF_SYMS_DEBUGFILE), looking in the profiler's DEBUG_DIR, then in the
 * process's root, proc_rootfd (O_PATH), or the profiler's if -1: its own
 * DEBUG_DIR and ef's directories.  Returns 0, or -ENOENT if no debug file
 * matched.  For one process: a file found in its root is for it only.
 */
int debuginfo__load(struct elf_file *ef, const char *path, size_t path_len,
		    int proc_rootfd, struct debuginfo_opts *o);

/*
 * CRC-32 of a whole file, as .gnu_debuglink records it.  -EFBIG for a
 * file over max bytes (nothing read if its size says so), -EINTR once
 * *stop is set (stop may be NULL).
 */
int debuginfo__file_crc(int fd, __u64 max, const volatile sig_atomic_t *stop,
			unsigned int *crc);

#endif /* DEBUGINFO_H */
