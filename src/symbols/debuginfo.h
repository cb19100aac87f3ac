/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Separate debug files: the full .symtab of a stripped file, installed by
 * a -dbg/-debuginfo package.  Looked for, in order:
 *  1. DEBUG_DIR/.build-id/xx/rest.debug, named by the file's GNU build-id
 *     (the debug file must carry the same build-id);
 *  2. the file's .gnu_debuglink name in the file's own directory, in its
 *     .debug/ subdirectory, then in DEBUG_DIR plus that directory (the
 *     debug file's build-id, or without one its CRC-32, must match).
 * Each path is looked up inside the process's root directory first (a
 * container ships its own debug files), then in the profiler's.
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

/*
 * Merge the symbols of ef's debug file into ef (elf_file__merge_symbols,
 * ELF_SYMS_DEBUGFILE).  path (path_len bytes, may be 0) is ef's path as the
 * process sees it, for the debuglink directories; proc_rootfd is the
 * process's root directory (O_PATH) or -1.  A debuglink file is taken on
 * its build-id when both files have one, else on its CRC, read only up to
 * CAP_CRC_BYTES.  Returns 0, or -ENOENT if no debug file matched.
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
