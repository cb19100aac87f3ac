/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Separate debug files: the full .symtab of a stripped file, installed by
 * a -dbg/-debuginfo package.  Looked for, in order:
 *  1. DEBUG_DIR/.build-id/xx/rest.debug, named by the file's GNU build-id
 *     (the debug file must carry the same build-id);
 *  2. the file's .gnu_debuglink name in the file's own directory, in its
 *     .debug/ subdirectory, then in DEBUG_DIR plus that directory (the
 *     debug file's CRC-32 must match the link's).
 * Each path is looked up inside the process's root directory first (a
 * container ships its own debug files), then in the profiler's.
 */
#ifndef DEBUGINFO_H
#define DEBUGINFO_H

#include <stddef.h>

struct elf_file;

#define DEBUGINFO_DIR	"/usr/lib/debug"

/*
 * Merge the symbols of ef's debug file into ef (elf_file__merge_symbols,
 * ELF_SYMS_DEBUGFILE).  path (path_len bytes, may be 0) is ef's path as the
 * process sees it, for the debuglink directories; proc_rootfd is the
 * process's root directory (O_PATH) or -1; debug_dir NULL means
 * DEBUGINFO_DIR.  Returns 0, or -ENOENT if no debug file matched.
 */
int debuginfo__load(struct elf_file *ef, const char *path, size_t path_len,
		    int proc_rootfd, const char *debug_dir);

/* CRC-32 of a whole file, as .gnu_debuglink records it. */
int debuginfo__file_crc(int fd, unsigned int *crc);

#endif /* DEBUGINFO_H */
