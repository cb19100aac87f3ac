/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The files behind executable mappings, parsed once while in use: keyed
 * by device and inode (libc is parsed once however many processes map it),
 * and the vdso by its bytes (it has no file).  A stripped file gets the
 * names of its MiniDebugInfo or of a debug file (debuginfo.h) in the
 * profiler's DEBUG_DIR, for every process.
 *
 * A stripped file that DEBUG_DIR does not name is looked up again in each
 * view that maps it (a mount namespace and root directory: a container, a
 * chroot), once per (file, view): a debug file found there (in its root,
 * or beside the file) names it for the processes of that view only, since
 * its user may have planted it for a binary other users run.  Such a file
 * is parsed again with that debug file, once per (file, debug file), so
 * that processes of one view, or views that share the debug file, share
 * the parse, and many views cost no more than as many debug files.
 */
#ifndef UFILES_H
#define UFILES_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <linux/types.h>

struct vma;
struct elf_file;
struct caps;
struct debuginfod;
struct dwlines;

struct ufiles;

struct ufile {
	struct elf_file *elf;	/* NULL: no symbols from this file */
	void *image;		/* vdso only: its bytes, to share equal ones */
	size_t image_len;
	bool keep;		/* marked by ufiles__keep() for the next sweep */
	bool sampled;		/* a sample was named from it: worth a fetched debug file */
	__s64 asker;		/* the user its debuginfod lookup was last asked for */
	/*
	 * Where its DWARF lines are (dwlines.h): the file itself or its debug
	 * file, open, -1 if neither has any (or libdw refused it); dw once a
	 * sampled address asked (ufiles__dwlines()), which then owns the
	 * descriptor.
	 */
	int dw_fd;
	struct dwlines *dw;
};

/* Files whose DWARF is kept open at once, at most: one descriptor each. */
#define UFILES_MAX_DWARF_FILES	256

/* ufile.asker before any lookup (a user is >= 0, or -1: unknown). */
#define UFILE_NOT_ASKED INT64_MIN

struct ufiles_stats {
	__u64 files;		/* files (device, inode) opened; again if pruned */
	__u64 files_parsed;	/* ... that were ELF files we could parse */
	__u64 files_pruned;	/* ... freed by ufiles__sweep() */
	__u64 vdsos;		/* distinct vdso images */
	__u64 vdsos_pruned;	/* ... freed by ufiles__sweep() */
	__u64 debug_files;	/* files named through a separate debug file */
	__u64 minidebug;	/* ... through their .gnu_debugdata */
	__u64 debuginfod_files;	/* ... through a debuginfod server */
	__u64 dwarf_opened;	/* DWARF opened for lines (dwlines.h), again if closed */
	__u64 dwarf_closed;	/* ... closed for the budget's sake */
	__u64 dwarf_refused;	/* ... refused: past the budget alone */
};

/*
 * debug_dir: NULL for /usr/lib/debug.  debuginfod: NULL, or the client
 * that files no local debug file names are looked up with.  stop: NULL, or a flag that, once
 * set, cuts long reads short.  caps: where the caps (caps.h) that files
 * hit are counted.  NULL + errno on failure.
 */
struct ufiles *ufiles__new(const char *debug_dir, struct debuginfod *debuginfod,
			   const volatile sig_atomic_t *stop, struct caps *caps);
void ufiles__free(struct ufiles *uf);

/*
 * The parsed file of an executable mapping of the process whose /proc
 * directory is proc_dirfd (-1 if it is gone): a file (VMA_FILE) or the
 * vdso (VMA_VDSO, copied from the process's memory).  NULL when there is
 * nothing to read symbols from, or on a failure that may not last (not
 * cached: a later process may succeed).  Files are opened as procfs.h
 * says and never left open.  reader: the uid of the process's owner (-1:
 * unknown), who must be able to read a debug file for it to be used.
 */
struct ufile *ufiles__get(struct ufiles *uf, int proc_dirfd,
			  const struct vma *vma, __s64 reader);

/*
 * Name the files that debug files fetched since the last call belong to
 * (debuginfod__next_wanted()), if a sample was named from one of them
 * (ufile.sampled): a fetched file is parsed only then, and the others wait
 * for a later call.  Returns how many files were named.  A file named so
 * frees its old table of names: a name resolved from it before is gone
 * (see usyms__take_fetched()).
 */
size_t ufiles__take_fetched(struct ufiles *uf);

/*
 * Pruning, by mark and sweep: the caller marks with ufiles__keep() every
 * file that a process it still knows maps, then ufiles__sweep() frees the
 * other files (the caller must hold no pointer to them) and clears the
 * marks.  vdso images go the same way.  Returns how many files were
 * freed (vdsos not counted).
 */
void ufiles__keep(struct ufile *f);
size_t ufiles__sweep(struct ufiles *uf);

void ufiles__stats(const struct ufiles *uf, struct ufiles_stats *st);

/*
 * f's DWARF lines, opened on first use (lazily: only files a sampled
 * address asks about); NULL when it has none or they were refused.
 */
struct dwlines *ufiles__dwlines(struct ufiles *uf, struct ufile *f);

#endif /* UFILES_H */
