/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Feeding the in-kernel unwinder (bpf/unwind/unwind.bpf.h): the tables of the
 * objects sampled processes map, and each process's list of executable
 * mappings.
 *
 * A table is compiled from an object's .eh_frame (ehframe.h) once, loaded
 * as one BPF array, and shared by every process that maps the object
 * (keyed by device, inode, size and modification time).  Processes are
 * synced in a thread of their own, so that neither the side band nor the
 * report waits for a table to be built: until its process is synced, a
 * stack is walked by frame pointer.  Tables no process uses stay loaded
 * while the memory allows (--unwind-mem), and are evicted oldest first.
 *
 * Every user (euid) gets a max-min fair share (lib/share.h) of the slots
 * of uw_procs, the slots of uw_tables and --unwind-mem.  A process is
 * charged to its user, and a table to each user whose processes unwind
 * from it, so that no user's processes make another user's tables count
 * or go.  A user over its share has its new processes walked by frame
 * pointer, and its processes are taken back (dropped from uw_procs) when
 * another user needs room.
 */
#ifndef UNWIND_H
#define UNWIND_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/report_pass.h"

enum unwind_mode {
	UNWIND_AUTO,	/* tables for objects built without frame pointers */
	UNWIND_FP,	/* frame pointers only: the kernel's walk */
	UNWIND_DWARF,	/* tables for every object that has one */
};

/*
 * Default for --unwind-mem: the kernel memory tables and mapping lists may
 * take.  A table costs 8 bytes a row: libc 0.2 MiB, an interpreter 0.5 MiB,
 * libcrypto 0.6 MiB; fifty distinct objects of a busy host about 10 MiB.
 * A process's mapping list costs 10 KiB.  64 MiB holds several times a
 * host's worth and is 0.3% of this machine's memory.
 */
#define UNWIND_MEM_DEFAULT (64ull << 20)

struct unwind_opts {
	enum unwind_mode mode;
	__u64 mem_max;		/* bytes of tables and mapping lists */
	/*
	 * Called at the first unwind__new_process(), from that thread: the
	 * program that lists new processes in the kernel is wanted
	 * (session__need_klist()).  NULL: none.
	 */
	int (*need_klist)(void *arg);
	void *klist_arg;
};

struct unwind_stats {
	__u64 syncs;		/* processes' mappings read and written */
	__u64 sync_errors;	/* ... that failed (most: the process is gone) */
	__u64 procs;		/* processes synced now */
	__u64 procs_fp;		/* syncs that found no table among the objects */
	__u64 maps_over;	/* mappings past UW_MAX_MAPS, walked by FP */
	__u64 tables;		/* tables loaded now */
	__u64 rows;		/* ... and their rows */
	__u64 bytes;		/* kernel memory of tables and mapping lists */
	__u64 built;		/* objects whose .eh_frame was compiled */
	__u64 build_ns;		/* ... and the time it took */
	__u64 fp_objects;	/* objects walked by FP as built with them */
	__u64 fp_files;		/* ... of them files (the vdso is one too) */
	__u64 no_table;		/* objects without a usable .eh_frame */
	__u64 over_budget;	/* objects with no room under --unwind-mem */
	__u64 evicted;		/* tables unloaded to make room */
	__u64 dropped;		/* requests lost to a full queue */
	__u64 procs_refused;	/* syncs refused: no room in the user's share */
	__u64 procs_evicted;	/* processes taken back for another user */
	__u64 asks;		/* syncs the walker asked for (uw_asks) */
	__u64 inserting;	/* tables loaded, on their way into uw_tables */
	__u64 ahead_ns;		/* time the shared objects compiled ahead took; 0 until done */
	char first_over[160];	/* the first object over budget, or "" */
};

struct unwind;

/* The sampler's maps the unwinder fills (bpf/unwind/unwind.bpf.h). */
struct unwind_maps {
	int tables_fd;		/* uw_tables: a table per object */
	int procs_fd;		/* uw_procs: a mapping list per process */
	int execs_fd;		/* uw_execs: each process's last exec, read only */
	int asks_fd;		/* uw_asks: syncs the walker asks for; -1: none */
	int files_fd;		/* uw_files: loaded tables by file; -1: none */
	int serials_fd;		/* uw_slot_serials: each slot's table; -1: none */
};

/*
 * Starts the sync thread, and the thread that reads the walker's asks
 * (a process sampled without a list, or at a PC in none of its
 * mappings): served as unwind__sync_running(), without waiting for the
 * side band.  NULL + errno on failure.
 */
struct unwind *unwind__new(const struct unwind_opts *opts, const struct unwind_maps *maps);

/*
 * A new process was seen (a fork or an exec): its first samples come
 * before its sync.  Main thread only.  u may be NULL.
 */
void unwind__new_process(struct unwind *u);

/* Stop the thread and unload what it loaded. */
void unwind__free(struct unwind *u);

/*
 * Ask for pid's mappings to be (re)read and written, after its first
 * sample, an exec or a new executable mapping.  Cheap and never blocks on
 * I/O: the work happens in the sync thread.  u may be NULL.
 */
void unwind__sync(struct unwind *u, __u32 pid);

/*
 * pid runs: its first sample, or an exec of a process synced before.  As
 * unwind__sync(), but served before any request queued (a flood of forks
 * or mmaps must not keep it waiting), and never dropped for a full queue.
 */
void unwind__sync_running(struct unwind *u, __u32 pid);

/* pid exited: drop its mappings and its hold on its tables. */
void unwind__forget(struct unwind *u, __u32 pid);

/* Is pid synced, or asked to be? */
bool unwind__knows(struct unwind *u, __u32 pid);

/*
 * When pid last exec'd (CLOCK_MONOTONIC ns), as the sampler's exec program
 * wrote it into uw_execs (execs_fd); 0 when not seen.  A reader of a
 * process's maps compares it before and after: a change means the maps
 * read may be the old image's.
 */
__u64 unwind__exec_time(int execs_fd, __u32 pid);

void unwind__stats(struct unwind *u, struct unwind_stats *st);

/*
 * The run's last words (lib/report_pass.h), c the sampler's counters.
 * REPORT_WARN: the objects over --unwind-mem.  REPORT_STATS: how the
 * walks went and how they ended (u NULL: all by frame pointer).  The
 * tables and processes come after the verifier's line, in
 * unwind__report_tables().
 */
void unwind__report(struct unwind *u, const __u64 *c, enum report_pass pass);
void unwind__report_tables(struct unwind *u, const __u64 *c);

/*
 * What the warning for an incomplete profile should say about the walk,
 * from the sampler's counters c: "--unwind=dwarf" when most walks that
 * stopped early stopped on a frame-pointer step and --unwind=auto walked
 * files built with frame pointers (fp_files) by them; NULL when it has
 * nothing to add.  unwind__hint() asks it of a running unwinder (u may be
 * NULL).
 */
const char *unwind__advice(enum unwind_mode mode, __u64 fp_files, const __u64 *c);
const char *unwind__hint(struct unwind *u, const __u64 *c);

const char *unwind__mode_name(enum unwind_mode mode);

/* Short names of the ways a walk ends (enum uw_end), for -v and pseudo-frames. */
const char *unwind__end_name(unsigned int end);

/*
 * Did a stored stack's walk (struct hashed_stack's end: enum uw_end + 1,
 * 0 for the kernel's own walk) stop before the root for a reason worth
 * showing?
 */
bool unwind__ended_early(__u32 stored_end);

#endif /* UNWIND_H */
