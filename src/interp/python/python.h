/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython processes, seen from the loader: finding the interpreter in a
 * process and telling the frame walker (bpf/interp/python/python.bpf.h) where it is, and
 * naming the code objects the walker records.
 *
 * A thread of its own does the slow parts while sampling runs: it looks
 * for _PyRuntime in a process's executable and libpython when the process
 * is first sampled (or execs, or is a -p target), and reads the code
 * objects of each new Python stack as the sampler reports it, so that the
 * names are known even when the process exits before the report.  The
 * report asks python__resolve() for each frame.
 */
#ifndef PYTHON_H
#define PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "lib/report_pass.h"

struct frame;
struct python;

/* CPython's row in the interpreter registry (src/interp/interp.h). */
struct interp_ops;
extern const struct interp_ops python_interp;

struct python_maps {
	int procs_fd;			/* interp_procs: entries of kind PY_KIND */
	__u32 *nr_procs;		/* the sampler's count of them */
	__u32 *fsbase_off;		/* ... and py_fsbase_off */
	int execs_fd;			/* uw_execs: each process's last exec, read only */
	/*
	 * interp_config.need_walker, may be NULL: called, without waiting,
	 * when CPython is mapped or found in a process.
	 */
	int (*need_walker)(void *arg);
	void *walker_arg;
};

struct python_stats {
	__u64 procs;			/* CPython processes found */
	__u64 unsupported;		/* ... of a version we have no layout for */
	__u64 codes;			/* code objects named */
	__u64 code_errors;		/* ... that could not be read or checked */
	__u64 code_changed;		/* ... made anew since their sample */
	__u64 notes;			/* new stacks reported by the sampler */
	__u64 dropped;			/* requests lost to a full queue */
	__u64 over_budget;		/* code objects not kept: memory budget */
	__u64 exec_raced;		/* processes that exec'd while looked at */
	__u64 waits;			/* looks that found a process waiting for its libpython */
	__u64 inherited;		/* processes found as their parent's fork */
	char unsupported_first[96];	/* "PATH: VERSION" of the first one */
};

/*
 * Bytes kept of names and line indexes (code objects, and the names the
 * report gives frames), for all processes together; users share them
 * max-min fair (lib/share.h), so that one user's processes cannot take
 * them from everyone else's.
 */
#define PYTHON_MEM_MAX (64ull << 20)

struct python *python__new(const struct python_maps *maps, bool lines);
void python__free(struct python *py);

/*
 * Look for CPython in pid, unless known already; asynchronous.  First
 * sampled (detect): before what is queued; mapped a libpython (mapped):
 * in turn, as any user can make thousands of those.
 */
void python__detect(struct python *py, __u32 pid);
void python__mapped(struct python *py, __u32 pid);
/* Is a process waiting for its libpython?  Then read the side band soon. */
bool python__waiting(struct python *py);
/* CPython is about to run somewhere: start loading the kernel's walker. */
void python__need_walker(struct python *py);
/* pid exec'd: forget what it was, look again before what is queued. */
void python__exec(struct python *py, __u32 pid);
/*
 * ppid forked pid: if CPython was found in ppid, pid is walked as its
 * copy from now on (unless it exec'd since); asynchronous, before what is
 * queued.
 */
void python__fork(struct python *py, __u32 ppid, __u32 pid);
/* pid exited: stop walking it, keep its names for the report. */
void python__forget(struct python *py, __u32 pid);
/* A struct interp_stack_note of PY_KIND from the side band: read its code objects. */
void python__note(struct python *py, const void *note, size_t len);
/*
 * Before a report: wait, at most timeout_ms, for the reader to finish what
 * it was asked (new stacks' code objects), so that their frames are named.
 */
void python__settle(struct python *py, unsigned int timeout_ms);
/* After a report: free what only processes gone before it needed. */
void python__reap(struct python *py);

/*
 * Name a FRAME_INTERP frame of pid (f->addr and f->aux as recorded) from
 * what the reader learned; it reads nothing, so it never blocks on a
 * process.  A frame it cannot name keeps no name.
 */
void python__resolve(struct python *py, __u32 pid, struct frame *f);

void python__stats(struct python *py, struct python_stats *st);
/*
 * The Python process table's share between users (lib/share.h): warn
 * naming each user whose processes it refused or took back, or its -v line.
 */
void python__report_share(struct python *py, enum report_pass pass);

/* The share of names: REPORT_WARN names each user refused, REPORT_STATS its use. */
void python__report(struct python *py, enum report_pass pass);

#endif /* PYTHON_H */
