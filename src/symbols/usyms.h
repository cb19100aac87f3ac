/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * User-space symbolizer for one profiling run.
 *
 * It remembers, per process, the executable mappings read from
 * /proc/PID/maps, and per file (by device and inode, so libc is parsed once
 * however many processes map it) the file's function symbols, until no
 * process it still knows maps the file (usyms__forget_exited()).
 * Files are opened through /proc/PID/map_files/ (deleted files, other mount
 * namespaces; needs CAP_SYS_ADMIN), else PATH resolved inside
 * /proc/PID/root (openat2 RESOLVE_IN_ROOT, Linux 5.6), else /proc/PID/exe,
 * never through the path as seen from the profiler, and only if they are
 * regular files.
 *
 * Names come from, in order: the file's .symtab, else its MiniDebugInfo
 * (.gnu_debugdata) or a separate debug file (debuginfo.h) merged with its
 * .dynsym, else its .dynsym; where none of those names an address (JIT
 * code in anonymous memory), from the process's /tmp/perf-PID.map
 * (perfmap.h).  C++ and Rust names are demangled unless told not to.
 *
 * Processes can be learned as they come and go (usyms__add_mapping() and
 * friends, fed from perf's PERF_RECORD_MMAP2/COMM/FORK/EXIT records), so
 * that one that exits before the profile is printed is still symbolized;
 * any other process is read from /proc on first use.
 *
 * Lookups do no allocation and no I/O once a process is known: a hash
 * lookup of the pid, a binary search of its mappings, one of the symbols.
 * Not thread-safe: one usyms per thread, or a lock around it.
 */
#ifndef USYMS_H
#define USYMS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/report_pass.h"

struct usyms;			/* opaque: the whole run's user symbolizer */
struct caps;

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
	bool demangled;		/* name is a demangled C++ or Rust name */
};

/* Counters, for -v and tests. */
struct usyms_stats {
	__u64 procs;		/* processes looked at, gone ones included */
	__u64 procs_gone;	/* ... whose maps could not be read */
	__u64 procs_reaped;	/* ... freed as they exited without samples */
	__u64 procs_now;	/* ... known now */
	__u64 procs_retired;	/* ... kept apart when a new one took their pid */
	__u64 maps_reads;	/* reads of /proc/PID/maps, re-reads included */
	__u64 files;		/* files (device, inode) opened; again if pruned */
	__u64 files_parsed;	/* ... that were ELF files we could parse */
	__u64 files_pruned;	/* ... freed, as no process we know maps them */
	__u64 vdsos;		/* distinct vdso images */
	__u64 vdsos_pruned;	/* ... freed, as no process we know maps them */
	__u64 debug_files;	/* files named through a separate debug file */
	__u64 minidebug;	/* ... through their .gnu_debugdata */
	__u64 debuginfod_files;	/* ... through a debuginfod server */
	__u64 dwarf_opened;	/* DWARF opened for lines, again if closed */
	__u64 dwarf_closed;	/* ... closed for the budget's sake */
	__u64 dwarf_refused;	/* ... refused: past the budget alone */
	__u64 mappings;		/* usyms__add_mapping() calls that added one */
	__u64 perfmaps;		/* perf map files read */
	__u64 perfmaps_refused;	/* ... refused: owner, age or file type */
	__u64 demangled;	/* distinct names demangled, again if pruned */
	__u64 str_bytes;	/* string pool now: module paths, JIT names */
	__u64 names;		/* demangled names cached now */
};

struct usyms_opts {
	bool no_demangle;	/* keep C++/Rust names as in the symbol table */
	const char *debug_dir;	/* NULL: /usr/lib/debug */
	/* NULL, or the client that debug files are fetched with (debuginfod.h) */
	struct debuginfod *debuginfod;
	/* NULL, or the run's stop flag: once set, long reads are cut short. */
	const volatile sig_atomic_t *stop;
};

/* NULL + errno on failure.  opts may be NULL: the defaults. */
struct usyms *usyms__new_opts(const struct usyms_opts *opts);
struct usyms *usyms__new(void);		/* usyms__new_opts(NULL) */
void usyms__free(struct usyms *u);

/*
 * Resolve one address of process pid (pid as seen in /proc of the
 * profiler).  Returns 0 with sym filled (sym->name may be NULL), -ENOENT
 * when neither an executable mapping nor the perf map holds addr, or the
 * process is gone and nothing is known of it, other negative errno on
 * failure.  Strings stay valid until the next usyms__forget_exited() (or
 * usyms__free()), which frees those that no process it still knows maps.
 *
 * A process not added before is read on first use.  An address in no
 * known mapping makes the maps be read again, at most once a second per
 * process (after its first such miss), to catch libraries loaded since
 * (dlopen); mappings seen before are kept.
 */
int usyms__resolve(struct usyms *u, __u32 pid, __u64 addr, struct usym *sym);

/*
 * The same, for a sample of the process that started at start (the low 32
 * bits of its start time as the sampler's count_key.start gives it; 0: not
 * known, whichever process has pid).  A pid is reused: the process this
 * names is the one noted with that start (usyms__add_noted()), kept apart
 * if another took its pid since; -ESRCH if the pid's process now is
 * another and that one is not known.
 */
int usyms__resolve_start(struct usyms *u, __u32 pid, __u32 start, __u64 addr,
			 struct usym *sym);

/*
 * Read and remember pid's mappings now (and open/parse its files), so that
 * it can still be symbolized after it exits.  Idempotent; cheap when
 * already read (a process known only from records is read once).  A
 * process found gone is remembered as such: later calls and resolves
 * return the same error without touching /proc again.
 */
int usyms__add_process(struct usyms *u, __u32 pid);

/*
 * The same for the sampler's first-sample note of a process that started
 * at start (CLOCK_MONOTONIC ns, the kernel's task start time; 0: not known,
 * as usyms__add_process()).  A process known under pid that started before
 * is another (its pid was reused and the fork record lost): it is kept
 * apart for its samples and pid is learned anew.  -ESTALE: the process
 * known under pid started after this one, the note is of one gone before.
 */
int usyms__add_noted(struct usyms *u, __u32 pid, __u64 start);

/*
 * Whether a record of pid at time ns (CLOCK_MONOTONIC, the records' clock)
 * may be about the process known under pid: false when that one started
 * after ns, so that the record is of a process that had the pid before
 * (an exit, exec or mapping of it must not touch the new one).  True when
 * no process is known under pid or its start is not known.
 */
bool usyms__current(const struct usyms *u, __u32 pid, __u64 ns);

/*
 * Lifetime events, in the order they happened (for perf records read from
 * several per-CPU buffers: sorted by time, or all sent to one buffer).
 * pid is a process (tgid), never a thread id.  They are cheap: no /proc
 * maps read, and a file is opened and parsed once per (device, inode).
 */

/* A mapping as PERF_RECORD_MMAP2 reports it. */
struct usyms_mapping {
	__u64 start, end, pgoff, ino;	/* [start, end) */
	__u32 maj, min;			/* the device of the file */
	__u32 prot;			/* PROT_*: only PROT_EXEC ones count */
	/*
	 * NUL-terminated, as perf gives it: "/usr/bin/x", "/x (deleted)",
	 * "//anon", "[vdso]", "/memfd:name (deleted)"...
	 */
	const char *path;
	/*
	 * When it was mapped, CLOCK_MONOTONIC ns; 0: not known.  One from
	 * before the process's maps were last read is in them already (or
	 * was unmapped since): it is left alone.
	 */
	__u64 time;
};

/*
 * A new executable mapping of pid (PERF_RECORD_MMAP2 without
 * PERF_RECORD_MISC_MMAP_BUILD_ID).  Its file is opened and parsed now, while
 * the process is likely alive (/proc/PID/map_files, the path inside
 * /proc/PID/root, or the path as we see it if it has the mapping's device
 * and inode), so that it can be deleted right after.  The mapping replaces
 * what it overlaps.  This does not count as a full read of the process's
 * maps: an address in no known mapping still makes /proc/PID/maps be read,
 * while the process lives.  Returns 0 (also for non-executable mappings,
 * ignored), -EINVAL for a malformed one, -ENOMEM.
 */
int usyms__add_mapping(struct usyms *u, __u32 pid,
		       const struct usyms_mapping *m);

/* pid exec()ed (PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC): a new
 * image, its old mappings and perf map are dropped. */
int usyms__exec(struct usyms *u, __u32 pid);

/*
 * pid is a new process forked from ppid (PERF_RECORD_FORK with pid !=
 * ppid): it starts with ppid's mappings (read from /proc if ppid is not
 * known yet).  A process known before under pid is forgotten (pid reuse).
 */
int usyms__fork(struct usyms *u, __u32 ppid, __u32 pid);

/*
 * The same at time (CLOCK_MONOTONIC ns, the fork record's; 0: not known):
 * the child's start.  If /proc/PID shows a process that started later, the
 * child is gone already and /proc/PID is never read for it.
 */
int usyms__fork_at(struct usyms *u, __u32 ppid, __u32 pid, __u64 time);

/*
 * pid exited (PERF_RECORD_EXIT with pid == tid): what is known of it stays
 * for resolves, /proc/PID is never read again (the pid may be reused), and
 * its perf map is read a last time if it is in our mount namespace.
 */
int usyms__exit(struct usyms *u, __u32 pid);

/*
 * Called after each round of records: free the processes that exited
 * without a sample in the round before this one (a first-sample note may
 * come a round late), so that processes that come and go without being
 * sampled cost nothing for long.  With keep (records were lost this round,
 * notes maybe among them) those waiting are kept instead, as if sampled,
 * up to a bound (65,536) past which they are freed all the same.
 */
void usyms__reap(struct usyms *u, bool keep);

/*
 * After lost records: read again the maps of every live process known,
 * since any of them may have mapped or exec()ed unseen (a process found
 * gone is marked so).  Stops early once the stop flag is set.  Returns the
 * number of processes read.
 */
size_t usyms__recover(struct usyms *u);

/*
 * Name the files that the debug files fetched since the last call belong
 * to: addresses resolved after this get their names.  Returns how many
 * files were named; when not 0, every name a resolve returned before is
 * invalid (the files' tables of names were replaced).
 */
size_t usyms__take_fetched(struct usyms *u);

/*
 * The source lines at addr, as usyms__resolve_start() finds it: the
 * functions there from its file's DWARF (dwlines.h), innermost first,
 * the inlined ones included, names demangled unless told not to; read
 * lazily, the first time an address of the file asks.  Returns how many
 * (at most max), 0 when the file has no DWARF for addr.  Strings live as
 * long as a resolve's names.
 */
struct dwline;
int usyms__lines(struct usyms *u, __u32 pid, __u32 start, __u64 addr,
		 struct dwline *out, int max);

/* Whether pid is known here, alive or exited (not yet forgotten). */
bool usyms__knows(const struct usyms *u, __u32 pid);

/*
 * Forget the processes that exited (and the pids remembered as gone), once
 * their samples have been reported: with -i, a long run would otherwise
 * keep every process it ever saw.  Then free the parsed files that no
 * process still known maps (a process that maps one later opens it again),
 * JIT names and module paths no such process maps, and the demangled names
 * no resolve asked for since the last call: hold no string a resolve
 * returned across this call.
 */
void usyms__forget_exited(struct usyms *u);

void usyms__stats(const struct usyms *u, struct usyms_stats *st);

/*
 * The run's last words (lib/report_pass.h): the caps the files hit, as
 * warnings; at -v, the files read and the caps' counts.  u NULL: the
 * files line, all zeros.
 */
void usyms__report(const struct usyms *u, enum report_pass pass);

#endif /* USYMS_H */
