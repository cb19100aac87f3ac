/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The files behind executable mappings, parsed once per run: keyed by
 * device and inode (libc is parsed once however many processes map it),
 * and the vdso by its bytes (it has no file).  A stripped file gets the
 * names of its debug file (debuginfo.h) or MiniDebugInfo.
 */
#ifndef UFILES_H
#define UFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct vma;
struct elf_file;

struct ufiles;

struct ufile {
	struct elf_file *elf;	/* NULL: no symbols from this file */
	void *image;		/* vdso only: its bytes, to share equal ones */
	size_t image_len;
};

struct ufiles_stats {
	__u64 files;		/* distinct files (device, inode) opened */
	__u64 files_parsed;	/* ... that were ELF files we could parse */
	__u64 vdsos;		/* distinct vdso images */
	__u64 debug_files;	/* files named through a separate debug file */
	__u64 minidebug;	/* ... through their .gnu_debugdata */
};

/* debug_dir: NULL for /usr/lib/debug.  NULL + errno on failure. */
struct ufiles *ufiles__new(const char *debug_dir);
void ufiles__free(struct ufiles *uf);

/*
 * The parsed file of an executable mapping of the process whose /proc
 * directory is proc_dirfd (-1 if it is gone): a file (VMA_FILE) or the
 * vdso (VMA_VDSO, copied from the process's memory).  NULL when there is
 * nothing to read symbols from, or on a failure that may not last (not
 * cached: a later process may succeed).  Files are opened as procfs.h
 * says and never left open.
 */
struct ufile *ufiles__get(struct ufiles *uf, int proc_dirfd,
			  const struct vma *vma);

void ufiles__stats(const struct ufiles *uf, struct ufiles_stats *st);

#endif /* UFILES_H */
