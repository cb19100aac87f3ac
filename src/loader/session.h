/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF side's lifecycle: open the skeleton, configure it, load, attach
 * to perf events, and drain the maps at the end.
 */
#ifndef SESSION_H
#define SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "loader/perf.h"
#include "bpf/profile.h"
#include "trace/trace.h"	/* struct sample */
#include "lib/report_pass.h"

struct session;
struct trace_source;

/* What the loader needs to know; the caller keeps the arrays and strings. */
struct session_config {
	const __u32 *pids;		/* only these processes, when nr_pids */
	size_t nr_pids;
	const __u32 *tids;		/* only these threads, when nr_tids */
	size_t nr_tids;
	const char *cgroup;		/* a cgroup v2 directory, or NULL */
	const char *cgroupmap;		/* bcc-style pinned filter maps, or NULL */
	const char *mntnsmap;
	/*
	 * profile -- CMD: only the command (from its exec on) and the
	 * processes it starts, followed in the kernel; cmd_pid as seen from
	 * profile's PID namespace.
	 */
	bool follow;
	__u32 cmd_pid;
	bool include_idle;
	bool parts[NR_PARTS];		/* which stacks to take (enum trace_part) */
	bool per_cpu, per_thread;	/* break the count key down */
	bool two_sets;			/* -i: double-buffered maps */
	__u32 stack_storage;		/* entries of each stack map */
	__u32 hash_storage;		/* keys of the count map */
	__u32 max_stack_depth;
	bool unwind;			/* walk user stacks from .eh_frame tables */
	bool unwind_debug;		/* [unwind: REASON] ends incomplete stacks */
	/*
	 * The interpreters whose frames are walked (src/interp/interp.h), or
	 * NULL for none.  Not owned; it outlives the session.
	 */
	struct interps *interps;
	/*
	 * What is measured: samples of the event (perf events on every CPU)
	 * and off-CPU time (the switch programs), one or both.
	 */
	bool sample_events;
	bool off_cpu;
	__u64 off_min_ns, off_max_ns;	/* blocks outside are counted, not unwound */
	__u32 off_states;		/* enum off_state */
	struct perf_sampling sampling;
	const char *event_name;		/* for messages */
	int cpu;			/* -1: every CPU */
	const bool *cpu_online;		/* indexed by CPU, nr_cpus entries */
	int nr_cpus;
};

/*
 * What the reports made of the samples they drained, added up by the run
 * over all intervals: the accounting lines of session__report().
 */
struct sample_tally {
	__u64 counted;		/* samples in the keys the reports read */
	__u64 off_ns;		/* off-CPU time in them, ns */
	__u64 missed_stacks;	/* stacks printed as [Missed ...] */
	bool missed_enomem;	/* one of them for lack of room */
	__u64 truncated;	/* samples with a stack cut at the depth limit */
};

/*
 * Each returns NULL / a negative errno after printing a one-line error.
 * The session keeps a copy of cfg, not of what it points to.
 */
struct session *session__open(const struct session_config *cfg);
int session__load(struct session *s);
int session__attach(struct session *s);
void session__destroy(struct session *s);

/* Stop sampling: detach every perf event, keep the maps. */
void session__detach(struct session *s);

/*
 * The sampled event's count on every CPU so far, samples or not, of every
 * task (the filters act on samples only): with the samples taken, what one
 * sample stands for in frequency mode, where the kernel tunes the period.
 */
__u64 session__events(const struct session *s);

/* Number of CPUs a perf event was attached on. */
int session__nr_attached(const struct session *s);

/* Possible CPUs: the entries of session__cpu_samples()'s out. */
int session__nr_cpus(const struct session *s);

/*
 * The timer's samples that came on each CPU so far (every run of the
 * sampling program, taken or kept out by a switch-in), for the stall
 * watch (run/stall.h): out[cpu], session__nr_cpus() entries, UINT64_MAX
 * where no event of ours is attached.  0 or -errno.
 */
int session__cpu_samples(struct session *s, __u64 *out);

/*
 * Disable and enable again the sampling event on cpu: the kernel arms its
 * timer anew, the program stays attached.  0, -ENOENT or -errno.
 */
int session__restart_cpu(struct session *s, int cpu);

/* Sum of the per-CPU counters. */
int session__counters(struct session *s, __u64 out[NR_COUNTERS]);

/* Read every counted key; *samples is malloc'ed, caller frees. */
int session__drain(struct session *s, struct sample **samples, size_t *nr);

/*
 * For a prefetch: the counted keys that no call of this returned before
 * (their counts 0), or every key (session__drain()) where that cannot be.
 */
int session__drain_new(struct session *s, struct sample **samples, size_t *nr);

/*
 * Read every counted key, a batch of at most a thousand at a time, each
 * handed to fn (valid during the call only): the memory of one batch,
 * however many keys there are.  A non-zero return of fn ends the read and
 * is returned; else 0 or -errno.  A failed read may come after some
 * batches.
 */
typedef int (*session_drain_fn)(void *ctx, const struct sample *batch, size_t nr);
int session__drain_each(struct session *s, session_drain_fn fn, void *ctx);

/*
 * The stored stacks of the read set as typed frames, leaf first, for the
 * symbolizer (symbolize.h).  Valid as long as the session.
 */
void session__trace_source(struct session *s, struct trace_source *src);

/*
 * For -i: switch sampling to the other set of maps, wait until no program
 * still runs on the old one, and make the old one the set that
 * session__drain() and the trace source read.  The wait has no time limit
 * (it warns after a second); when *stop is set during it (stop may be
 * NULL), -EINTR, and the next call resumes the wait instead of switching
 * again.  0, -EINTR or -errno.
 */
int session__flip(struct session *s, const volatile sig_atomic_t *stop);

/* Empty the read set after its samples were reported, for its next turn. */
int session__clear(struct session *s, const struct sample *samples, size_t nr);

/*
 * The unwinder's maps (bpf/unwind/uwtable.h): 0, or -ENOENT when the run walks
 * by frame pointer only (--unwind=fp, or the unwinder did not load).
 */
struct unwind_maps;
int session__unwind_maps(const struct session *s, struct unwind_maps *maps);

/*
 * After load: start the interpreters (cfg.interps), each given its maps;
 * stacks of their kinds are read through them (session__trace_source()).
 */
void session__start_interps(struct session *s);

/*
 * A new process was seen: the first call starts loading the program that
 * lists such processes' mappings in the kernel (bpf/klist.bpf.c), when
 * this kernel can run it.  Never waits; arg is the session.  0 or -errno.
 */
int session__need_klist(void *arg);

/* Instructions the verifier walked to load program prog; 0 if unknown. */
__u32 session__verified_insns(const struct session *s, const char *prog);

/* The PERF_EVENT_ARRAY map for the side-band ring buffers. */
int session__events_fd(const struct session *s);

/*
 * The sampler's last words (lib/report_pass.h), c its counters, t what the
 * reports read.  REPORT_WARN: stacks that could not be shown and samples
 * the full count map dropped, in bcc's words.  REPORT_STATS: samples
 * taken and counted, how reading each part's stack failed, stacks cut at
 * the depth limit, the spill map.  Among the other modules' -v lines come
 * then the verifier's count, session__report_verifier(), and last the
 * notes and whether the counts balance, session__report_balance().
 */
void session__report(const struct session *s, const __u64 *c,
		     const struct sample_tally *t, enum report_pass pass);
void session__report_verifier(const struct session *s);
/*
 * Off-CPU time's -v line (with --off-cpu or --wall): switch-outs
 * recorded, blocks counted and skipped, by why, t->off_ns.
 */
void session__report_offcpu(const struct session *s, const __u64 *c,
			    const struct sample_tally *t);
void session__report_balance(const __u64 *c, const struct sample_tally *t);

#endif /* SESSION_H */
