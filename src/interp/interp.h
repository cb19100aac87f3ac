/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interpreters, seen from the rest of profile: one interface each runtime
 * implements (struct interp_ops) and a registry of them (struct interps),
 * which the loader, the tracker, the symbolizer and the run loop talk to.
 * None of them names a runtime.
 *
 * A runtime walks its frames in the kernel (bpf/interp/interp.bpf.h
 * dispatches on the kind of the process's interp_procs entry) into
 * stacks of its own words; here it says how to read those words into
 * FRAME_INTERP frames and marks, names them, and which native frame of its
 * evaluation loop they stand for.  Adding a runtime: its folder
 * (src/interp/<runtime>/, bpf/interp/<runtime>/), one row in the registry
 * (interp.c) and one case in the kernel's dispatch.
 *
 * Hooks run on the tracker's and the run loop's thread; a runtime that
 * reads processes slowly does it in a thread of its own.
 */
#ifndef INTERP_H
#define INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "bpf/profile.h"
#include "lib/report_pass.h"

struct frame;
struct kbtf;
struct profile_bpf;

/* What the run asks of every runtime. */
struct interp_config {
	bool lines;			/* name frames with their source line */
	const __u32 *pids;		/* -p targets: looked for at the start */
	size_t nr_pids;
	/*
	 * Set by the loader (interps__set_walker()), may be NULL: a runtime
	 * calls it from any thread when it sees its interpreter (mapped, or
	 * found in a process), so that the kernel's walker is verified and
	 * loaded on first need only.  It starts the load and never waits;
	 * -errno: the walker will not be there, and it said why once.
	 */
	int (*need_walker)(void *arg);
	void *walker_arg;
};

/*
 * One runtime.  Every hook may be NULL; ctx is what start() returned.
 */
struct interp_ops {
	const char *name;		/* its option: --NAME=off turns it off */
	__u8 kind;			/* its kind, 1..MAX_INTERP_KINDS (bpf/profile.h) */

	/*
	 * Loader, before load: size its own BPF maps, and turn its parts off
	 * when on is false (its maps to one entry); kb, the kernel's BTF, for
	 * the offsets it reads (valid during the call only).  0 or -errno.
	 */
	int (*configure)(struct profile_bpf *skel, const struct kbtf *kb, bool on);
	/*
	 * Loader, after load: start, given the loaded maps (interp_procs and
	 * its own, through skel).  NULL + errno: the runtime is off, and it
	 * has said so in a warning.
	 */
	void *(*start)(struct profile_bpf *skel, const struct interp_config *cfg);
	void (*free)(void *ctx);

	/* Tracker: an executable mapping of path that says pid may be ours. */
	bool (*wants_mapping)(const char *path);
	void (*detect)(void *ctx, __u32 pid);	/* look at pid, asynchronously */
	/*
	 * Optional, else detect: pid made such a mapping.  Any user can make
	 * thousands: the runtime may look at them after the processes that
	 * detect() named, which run.
	 */
	void (*mapped)(void *ctx, __u32 pid);
	/*
	 * Optional: any executable mapping of path, by any process (a hint,
	 * cheap: every exec on the host comes here).  For loading what the
	 * runtime will need (interp_config.need_walker) before it runs.
	 */
	void (*seen)(void *ctx, const char *path);
	void (*exec)(void *ctx, __u32 pid);	/* pid exec'd: look again */
	/*
	 * Optional: ppid forked pid, whose memory is a copy of ppid's: what
	 * was found in ppid holds for pid until it execs.
	 */
	void (*fork)(void *ctx, __u32 ppid, __u32 pid);
	void (*forget)(void *ctx, __u32 pid);	/* pid exited */
	/*
	 * Optional: a process waits for a mapping whose record wakes no
	 * reader (a libpython that ld.so maps after the exec): while true,
	 * the tracker reads its records every INTERP_WAIT_POLL_MS.
	 */
	bool (*waiting)(void *ctx);
	/* A struct interp_stack_note of its kind (len bytes, unaligned). */
	void (*note)(void *ctx, const void *note, size_t len);
	/* Before a report: wait at most timeout_ms for pending reads. */
	void (*settle)(void *ctx, unsigned int timeout_ms);
	/* After a report: free what only processes gone before it needed. */
	void (*reap)(void *ctx);

	/*
	 * A stored stack of its kind (n words, end its own end reason) into
	 * frames, innermost first: FRAME_INTERP frames (FRAME_INTERP_ENTRY on
	 * the outermost of each native evaluation-loop call) and
	 * FRAME_INTERP_MARK marks.  At most MAX_STACK_DEPTH; returns how many.
	 */
	int (*decode)(const __u64 *ips, int n, __u32 end, struct trace_frame *frames);
	/* Name a FRAME_INTERP frame of pid; it must not block. */
	void (*resolve)(void *ctx, __u32 pid, struct frame *f);
	/* The name of a mark (a static string), e.g. "[GIL released]". */
	const char *(*mark_name)(__u64 mark);
	/* The native frame its frames take the place of: its evaluation loop. */
	bool (*is_eval_frame)(const struct frame *f);
	/*
	 * A native frame that only repeats one of its frames (CPython's
	 * perf trampolines, "py::f:file.py"): left out where its frames are.
	 */
	bool (*is_shim_frame)(const struct frame *f);

	/*
	 * Its lines, as every module prints them (lib/report_pass.h): its
	 * warnings, or its -v lines.  counters: its kind's area
	 * (CNT_INTERP(kind), bpf/profile.h).  ctx may be NULL (not started).
	 */
	void (*report)(void *ctx, const __u64 *counters, enum report_pass pass);
};

/* The runtimes profile knows, one row each (interp.c). */
extern const struct interp_ops *const interp_registry[];
extern const size_t interp_registry_len;

/*
 * The name of the registry's runtime of kind ("python"), or NULL: what a
 * report calls the object its frames run in.
 */
const char *interp__name(__u8 kind);

/*
 * A mark every runtime's mark_name() names: the symbolizer could not tell
 * which native frames its frames belong above (src/trace/symbolize.c).
 */
#define INTERP_MARK_UNALIGNED 0xffffu

struct interps;

/* Before a report, each runtime waits this long at most for its reads. */
#define INTERP_SETTLE_MS 1000

/*
 * The runtimes of table (n rows; interp_registry in profile, a test's own
 * in the tests), not started yet.  NULL + errno.
 */
struct interps *interps__new(const struct interp_ops *const *table, size_t n,
			     const struct interp_config *cfg);
void interps__free(struct interps *ints);

/*
 * Loader: size the runtimes' maps before load.  ints NULL: no frames of
 * any interpreter are walked; the registry's maps shrink to one entry.
 */
int interps__configure(const struct interps *ints, struct profile_bpf *skel,
		       const struct kbtf *kb);
/* Loader, before interps__start(): the hook of interp_config.need_walker. */
void interps__set_walker(struct interps *ints, int (*need)(void *arg), void *arg);
/* Loader, after load: start each runtime and look for the -p targets. */
void interps__start(struct interps *ints, struct profile_bpf *skel);
/* "--NAME=off" of every runtime, for a message ("" when there are none). */
const char *interps__off_options(const struct interps *ints);

/* Tracker.  ints may be NULL: then these do nothing. */
void interps__detect(struct interps *ints, __u32 pid);
void interps__exec(struct interps *ints, __u32 pid);
void interps__fork(struct interps *ints, __u32 ppid, __u32 pid);
void interps__forget(struct interps *ints, __u32 pid);
/* Does a runtime wait for a mapping?  Then read the records that often. */
#define INTERP_WAIT_POLL_MS 5
bool interps__waiting(struct interps *ints);
void interps__mapping(struct interps *ints, __u32 pid, const char *path);
void interps__note(struct interps *ints, const void *note, size_t len);

/* Run loop. */
void interps__settle(struct interps *ints, unsigned int timeout_ms);
void interps__reap(struct interps *ints);
void interps__report(const struct interps *ints, const __u64 *counters,
		     enum report_pass pass);

/*
 * Symbolizer and trace source.  decode() reads a stored interpreter stack
 * (its end tells whose, INTERP_END_KIND) and marks each frame with the
 * kind; 0 frames for an unknown kind.
 */
int interps__decode(const struct interps *ints, const __u64 *ips, int n, __u32 end,
		    struct trace_frame *frames);
void interps__resolve(const struct interps *ints, __u32 pid, struct frame *f);
const char *interps__mark_name(const struct interps *ints, __u8 kind, __u64 mark);
bool interps__is_eval_frame(const struct interps *ints, __u8 kind, const struct frame *f);
bool interps__is_shim_frame(const struct interps *ints, __u8 kind, const struct frame *f);

#endif /* INTERP_H */
