// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Side-band records: the kernel's mmap/exec/fork/exit records, and the
 * sampler's "first sample of this process" notes, arrive on one perf ring
 * buffer per CPU.  A process's records can sit in several buffers (it
 * migrated), so each round drains every buffer, sorts the records by their
 * timestamps, and only then applies them to the user symbolizer.
 *
 * Pids are reused.  Records are stamped with CLOCK_MONOTONIC, the clock of
 * the kernel's task start times, so that a record of a process that had
 * a pid before the one known now (left in a buffer drained a round late,
 * or the note of a process gone) is told apart and skipped, for the user
 * symbolizer, the unwinder and the interpreters alike.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include "lib/util.h"
#include "lib/htab.h"
#include "lib/log.h"
#include "trace/tracker.h"
#include "bpf/profile.h"
#include "symbols/usyms.h"
#include "unwind/unwind.h"
#include "interp/interp.h"

/* Pages per CPU ring: records are small and drained within milliseconds. */
#define RING_PAGES 64
/* Least time between two recoveries from lost records. */
#define RECOVER_GAP_NS 1000000000ULL

struct pending {
	__u64 time;
	size_t off;		/* into the arena */
};

struct tracker {
	struct perf_buffer *pb;
	struct usyms *us;
	struct unwind *uw;	/* synced on first samples, execs, mmaps; or NULL */
	/*
	 * This round's new processes forked by synced ones: synced at the
	 * round's end, unless they exited within it (a fork flood's children
	 * would fill the unwinder's queue with syncs of processes gone).
	 */
	struct htab forked;
	struct interps *ints;	/* told of first samples, execs, exits; or NULL */
	bool known_only;	/* records of processes us does not know: skipped */
	__u64 lost_before;	/* stats.lost at the start of the round */
	bool recover_due;	/* records were lost since the last recovery */
	__u64 recovered_ns;	/* when that was, CLOCK_MONOTONIC */
	struct tracker_stats stats;
	char *arena;		/* this round's records, copied */
	size_t arena_len, arena_cap;
	struct pending *recs;
	size_t nr, cap;
	int err;		/* sticky allocation failure within a round */
};

struct rec_mmap2 {
	struct perf_event_header h;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	char filename[];
};

struct rec_task {		/* PERF_RECORD_FORK and PERF_RECORD_EXIT */
	struct perf_event_header h;
	__u32 pid, ppid, tid, ptid;
	__u64 time;
};

struct rec_comm {
	struct perf_event_header h;
	__u32 pid, tid;
	char comm[];
};

struct rec_sample {		/* PERF_SAMPLE_TIME | PERF_SAMPLE_RAW */
	struct perf_event_header h;
	__u64 time;
	__u32 size;
	__u8 data[];
};

struct rec_lost {
	struct perf_event_header h;
	__u64 id, lost;
};

/*
 * Non-sample records end with the sample_id trailer: here, just the time
 * (CLOCK_MONOTONIC ns, attr.clockid).
 */
static __u64 record_time(const struct perf_event_header *h)
{
	__u64 t;

	if (h->type == PERF_RECORD_SAMPLE)
		return ((const struct rec_sample *)h)->time;
	memcpy(&t, (const char *)h + h->size - sizeof(t), sizeof(t));
	return t;
}

static enum bpf_perf_event_ret collect(void *ctx, int cpu, struct perf_event_header *h)
{
	struct tracker *t = ctx;

	if (h->size < sizeof(*h) + sizeof(__u64) || t->err)
		return LIBBPF_PERF_EVENT_CONT;
	if (util__grow_array((void **)&t->arena, &t->arena_cap, t->arena_len + h->size, 1) ||
	    util__grow_array((void **)&t->recs, &t->cap, t->nr + 1, sizeof(*t->recs))) {
		t->err = -ENOMEM;
		return LIBBPF_PERF_EVENT_CONT;
	}
	memcpy(t->arena + t->arena_len, h, h->size);
	t->recs[t->nr].time = record_time(h);
	t->recs[t->nr].off = t->arena_len;
	t->arena_len += (h->size + 7) & ~7UL;
	t->nr++;
	return LIBBPF_PERF_EVENT_CONT;
}

/*
 * Whether the records of pid are wanted: all of them in a whole-host run,
 * else only those of processes the filters let through, which us knows
 * from their first sample (or as a -p target, or the fork of one).
 */
static bool wanted(const struct tracker *t, __u32 pid)
{
	return !t->known_only || usyms__knows(t->us, pid);
}

/*
 * Whether a record of pid at time is about the process known under pid
 * now, not one that had the pid before; counted when not.
 */
static bool current(struct tracker *t, __u32 pid, __u64 time)
{
	if (usyms__current(t->us, pid, time))
		return true;
	t->stats.stale++;
	return false;
}

static void on_mmap2(struct tracker *t, const struct rec_mmap2 *r, __u64 time)
{
	size_t room = r->h.size - sizeof(*r);
	struct usyms_mapping m = {
		.start = r->addr, .end = r->addr + r->len, .pgoff = r->pgoff,
		.ino = r->ino, .maj = r->maj, .min = r->min, .prot = r->prot,
		.path = r->filename, .time = time,
	};

	if (r->h.size < sizeof(*r) || !memchr(r->filename, '\0', room))
		return;
	/* A build-id record has no device and inode to key the file by. */
	if (r->h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		return;
	if (!wanted(t, r->pid)) {
		t->stats.skipped++;
		return;
	}
	if (!current(t, r->pid, time))
		return;
	t->stats.mmaps++;
	usyms__add_mapping(t->us, r->pid, &m);
	/*
	 * A library loaded since the process was synced (dlopen).  Not for
	 * anonymous code ("//anon", memfd:): a JIT maps it all the time, and
	 * the walker steps through it by frame pointer anyway.
	 */
	if ((r->prot & PROT_EXEC) && r->filename[0] == '/' && r->filename[1] != '/' &&
	    unwind__knows(t->uw, r->pid))
		unwind__sync(t->uw, r->pid);
	/* An embedded interpreter, loaded after the first sample. */
	if (r->prot & PROT_EXEC)
		interps__mapping(t->ints, r->pid, r->filename);
}

static void on_comm(struct tracker *t, const struct rec_comm *c, __u64 time)
{
	if (!(c->h.misc & PERF_RECORD_MISC_COMM_EXEC) || c->h.size < sizeof(*c) ||
	    c->pid != c->tid)
		return;
	if (!wanted(t, c->pid)) {
		t->stats.skipped++;
		return;
	}
	if (!current(t, c->pid, time))
		return;
	t->stats.execs++;
	unwind__new_process(t->uw);
	/*
	 * Not yet the interpreters: the new image is not mapped yet.  The
	 * sampler's NOTE_EXEC, sent at the end of the exec, tells them.
	 */
	usyms__exec(t->us, c->pid);
	/* The sampler dropped its mappings at the exec: sync the new image. */
	if (unwind__knows(t->uw, c->pid))
		unwind__sync_running(t->uw, c->pid);
}

static void on_task(struct tracker *t, const struct rec_task *r, __u64 time)
{
	if (r->h.size < sizeof(*r))
		return;
	/* A fork is wanted for its parent: the child starts as its copy. */
	if (!wanted(t, r->h.type == PERF_RECORD_FORK ? r->ppid : r->pid)) {
		t->stats.skipped++;
		return;
	}
	if (r->h.type == PERF_RECORD_FORK && r->pid != r->ppid) {
		/* A new process; a new thread (pid == ppid) shares its maps. */
		if (!current(t, r->ppid, time) || !current(t, r->pid, time))
			return;
		t->stats.forks++;
		unwind__new_process(t->uw);
		usyms__fork_at(t->us, r->ppid, r->pid, time);
		interps__fork(t->ints, r->ppid, r->pid);
		if ((unwind__knows(t->uw, r->ppid) || htab__get(&t->forked, r->ppid, 0)) &&
		    htab__put(&t->forked, r->pid, 0, (void *)1))
			unwind__sync(t->uw, r->pid);
	} else if (r->h.type == PERF_RECORD_EXIT && r->pid == r->tid) {
		/* Not the exit of a process that had the pid before. */
		if (!current(t, r->pid, time))
			return;
		t->stats.exits++;
		usyms__exit(t->us, r->pid);
		/*
		 * Forked in this round: never asked for, unless its first
		 * sample was (then the thread may have synced it already).
		 */
		if (!htab__del_key(&t->forked, r->pid, 0) || unwind__knows(t->uw, r->pid))
			unwind__forget(t->uw, r->pid);
		interps__forget(t->ints, r->pid);
	}
}

static void on_sample(struct tracker *t, const struct rec_sample *r)
{
	size_t len = r->size;
	struct process_note pn = {};
	struct note_hdr note;
	__u32 pid;

	if (r->h.size < offsetof(struct rec_sample, data) + sizeof(note) ||
	    r->size < sizeof(note))
		return;
	/* No further than the record itself, whatever its size field says. */
	if (len > r->h.size - offsetof(struct rec_sample, data))
		len = r->h.size - offsetof(struct rec_sample, data);
	memcpy(&note, r->data, sizeof(note));
	/* The sampler's other note: a new interpreter stack. */
	if (note.type == NOTE_INTERP_STACK) {
		interps__note(t->ints, r->data, len);
		return;
	}
	if (note.type != NOTE_PROCESS && note.type != NOTE_EXEC)
		return;
	pid = note.pid;
	/* A sampler of an older contract sends the header alone. */
	if (len >= sizeof(pn))
		memcpy(&pn, r->data, sizeof(pn));
	/* The note of a process gone before the one known under pid started. */
	if (pn.start && !current(t, pid, pn.start))
		return;
	/* Sampled before: the new image may be an interpreter, or no longer be. */
	if (note.type == NOTE_EXEC) {
		t->stats.exec_notes++;
		interps__exec(t->ints, pid);
		return;
	}
	t->stats.first_samples++;
	/* First: these run in their own threads while the maps are read here. */
	unwind__sync_running(t->uw, pid);
	interps__detect(t->ints, pid);
	usyms__add_noted(t->us, pid, pn.start);
}

static void apply(struct tracker *t, const struct perf_event_header *h, __u64 time)
{
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		on_mmap2(t, (const void *)h, time);
		break;
	case PERF_RECORD_COMM:
		on_comm(t, (const void *)h, time);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		on_task(t, (const void *)h, time);
		break;
	case PERF_RECORD_SAMPLE:
		on_sample(t, (const void *)h);
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(struct rec_lost))
			t->stats.lost += ((const struct rec_lost *)h)->lost;
		break;
	}
}

static int by_time(const void *pa, const void *pb)
{
	const struct pending *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

struct tracker *tracker__new(int events_fd, struct usyms *us, bool known_only)
{
	struct perf_event_attr attr;
	struct tracker *t;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->us = us;
	t->known_only = known_only;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	/* bpf_perf_event_output() writes only into BPF_OUTPUT events. */
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	attr.sample_period = 1;
	attr.sample_id_all = 1;
	/* The clock of task start times (count_key.start): see current(). */
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.wakeup_events = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	t->pb = perf_buffer__new_raw(events_fd, RING_PAGES, &attr, collect, t, NULL);
	if (!t->pb) {
		err = errno;
		free(t);
		errno = err;
		return NULL;
	}
	return t;
}

void tracker__set_unwind(struct tracker *t, struct unwind *uw)
{
	t->uw = uw;
}

void tracker__set_interps(struct tracker *t, struct interps *ints)
{
	t->ints = ints;
}

void tracker__free(struct tracker *t)
{
	if (!t)
		return;
	perf_buffer__free(t->pb);
	htab__free(&t->forked);
	free(t->arena);
	free(t->recs);
	free(t);
}

/*
 * After a round: free the processes that exited without samples, but
 * if the kernel lost records (a flood of mmaps by anyone) keep those that
 * exited around the loss (their first-sample note may be among the lost),
 * and, since any process may have changed unseen, read the maps of those
 * we know again.
 */
static void recover(struct tracker *t)
{
	bool lost = t->stats.lost != t->lost_before;
	struct timespec now;
	__u64 ns;

	usyms__reap(t->us, lost);
	t->lost_before = t->stats.lost;
	if (!lost && !t->recover_due)
		return;
	/* A flood loses records every round: re-read at most once a second. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec;
	if (t->recovered_ns && ns - t->recovered_ns < RECOVER_GAP_NS) {
		t->recover_due = true;
		return;
	}
	t->recover_due = false;
	t->stats.recoveries++;
	t->stats.recovered += usyms__recover(t->us);
	/* The gap counts from the end: a long recovery is not run back to back. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	t->recovered_ns = (__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec;
}

/* The round's new processes that still live: the unwinder syncs them. */
static void sync_forked(struct tracker *t)
{
	struct hent *e;

	if (!t->forked.nr)
		return;
	for (size_t pos = 0; (e = htab__next(&t->forked, &pos));)
		unwind__sync(t->uw, (__u32)e->k1);
	htab__free(&t->forked);
}

int tracker__poll(struct tracker *t, int timeout_ms, int wake_fd)
{
	struct pollfd fds[2] = {
		{ .fd = perf_buffer__epoll_fd(t->pb), .events = POLLIN },
		{ .fd = wake_fd, .events = POLLIN },	/* ignored when negative */
	};
	int err;

	t->nr = t->arena_len = 0;
	t->err = 0;
	/* A runtime waits for an mmap record, which wakes nobody: look soon. */
	if ((timeout_ms < 0 || timeout_ms > INTERP_WAIT_POLL_MS) && interps__waiting(t->ints))
		timeout_ms = INTERP_WAIT_POLL_MS;
	/* The buffers' epoll fd is readable when one of them is. */
	if (poll(fds, 2, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	/* Every buffer: records of the same moment may wait in several. */
	err = perf_buffer__consume(t->pb);
	if (err < 0)
		return err;
	if (t->nr)
		qsort(t->recs, t->nr, sizeof(*t->recs), by_time);
	for (size_t i = 0; i < t->nr; i++)
		apply(t, (const void *)(t->arena + t->recs[i].off), t->recs[i].time);
	sync_forked(t);
	recover(t);
	return t->err;
}

void tracker__stats(const struct tracker *t, struct tracker_stats *st)
{
	*st = t->stats;
}

void tracker__report(const struct tracker *t, const struct usyms *us,
		     enum report_pass pass)
{
	struct tracker_stats ts = {};
	struct usyms_stats st = {};

	if (pass != REPORT_STATS)
		return;
	if (t)
		tracker__stats(t, &ts);
	if (us)
		usyms__stats(us, &st);
	pr_info("processes: %llu seen, %llu gone before read, %llu freed at exit without samples, %llu known now; records: %llu mmap, %llu exec, %llu fork, %llu exit, %llu first-sample, %llu exec-note, %llu lost, %llu of processes not profiled",
		(unsigned long long)st.procs, (unsigned long long)st.procs_gone,
		(unsigned long long)st.procs_reaped, (unsigned long long)st.procs_now,
		(unsigned long long)ts.mmaps, (unsigned long long)ts.execs,
		(unsigned long long)ts.forks, (unsigned long long)ts.exits,
		(unsigned long long)ts.first_samples, (unsigned long long)ts.exec_notes,
		(unsigned long long)ts.lost,
		(unsigned long long)ts.skipped);
	pr_info("recovery from lost records: %llu rounds, %llu processes' maps read again",
		(unsigned long long)ts.recoveries, (unsigned long long)ts.recovered);
	pr_info("reused pids: %llu records of processes that had the pid before skipped, %llu processes kept apart for their samples",
		(unsigned long long)ts.stale, (unsigned long long)st.procs_retired);
}
