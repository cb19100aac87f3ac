/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * User-space symbolizer for one profiling run.
 *
 * It remembers, per process, the executable mappings read from
 * /proc/PID/maps, and per file (by device and inode, so libc is parsed once
 * per run however many processes map it) the file's function symbols.
 * Files are opened through /proc/PID/map_files/ (deleted files, other mount
 * namespaces; needs CAP_SYS_ADMIN), else PATH resolved inside
 * /proc/PID/root (openat2 RESOLVE_IN_ROOT, Linux 5.6), else /proc/PID/exe,
 * never through the path as seen from the profiler, and only if they are
 * regular files.
 *
 * Lookups do no allocation and no I/O once a process is known: a hash
 * lookup of the pid, a binary search of its mappings, one of the symbols.
 * Not thread-safe: one usyms per thread, or a lock around it.
 */
#ifndef USYMS_H
#define USYMS_H

#include <linux/types.h>

struct usyms;			/* opaque: the whole run's user symbolizer */

struct usym {
	/* Symbol name, NULL when addr is mapped but no symbol covers it. */
	const char *name;
	/*
	 * The mapping's path as in /proc/PID/maps, without a " (deleted)"
	 * suffix ("/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]"), or
	 * "[anon]" for anonymous executable memory (JIT code).
	 */
	const char *module;
	__u64 offset;		/* addr - symbol start (valid when name != NULL) */
	__u64 file_offset;	/* addr translated to an offset in the module file */
	__u64 map_start, map_end, map_pgoff;	/* the mapping that holds addr */
	const char *build_id;	/* module's GNU build-id in hex, or NULL */
};

/* Counters, for -v and tests. */
struct usyms_stats {
	__u64 procs;		/* processes looked at, gone ones included */
	__u64 procs_gone;	/* ... whose maps could not be read */
	__u64 maps_reads;	/* reads of /proc/PID/maps, re-reads included */
	__u64 files;		/* distinct files (device, inode) opened */
	__u64 files_parsed;	/* ... that were ELF files we could parse */
	__u64 vdsos;		/* distinct vdso images */
};

struct usyms *usyms__new(void);		/* NULL + errno on failure */
void usyms__free(struct usyms *u);

/*
 * Resolve one address of process pid (pid as seen in /proc of the
 * profiler).  Returns 0 with sym filled (sym->name may be NULL), -ENOENT
 * when no executable mapping holds addr or the process is gone, other
 * negative errno on failure.  Strings stay valid until usyms__free().
 *
 * A process not added before is read on first use.  An address in no
 * known mapping makes the maps be read again, at most once a second per
 * process (after its first such miss), to catch libraries loaded since
 * (dlopen); mappings seen before are kept.
 */
int usyms__resolve(struct usyms *u, __u32 pid, __u64 addr, struct usym *sym);

/*
 * Read and remember pid's mappings now (and open/parse its files), so that
 * it can still be symbolized after it exits.  Idempotent; cheap when
 * already known.  A process found gone is remembered as such: later calls
 * and resolves return the same error without touching /proc again.
 */
int usyms__add_process(struct usyms *u, __u32 pid);

void usyms__stats(const struct usyms *u, struct usyms_stats *st);

#endif /* USYMS_H */
