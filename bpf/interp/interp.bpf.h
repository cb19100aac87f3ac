/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interpreters' frames, walked in the kernel; included by profile.bpf.c.
 *
 * A process is an interpreter's when the loader has written its entry in
 * interp_procs (bpf/profile.h, struct interp_proc): the entry's kind says
 * whose walker runs, and the walker fills a struct interp_stack_note in
 * words of its own format.  What is generic is done here: the stack is
 * stored by content, tagged with its kind, and sent to user space the
 * first time, so that the runtime reads what names its frames while the
 * process lives.  A new runtime adds its walker's include, one case in
 * interp_walk() and, if its walker keeps state per thread, one call in
 * interp_thread_exit().
 */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct interp_proc);
	__uint(max_entries, MAX_INTERP_PROCS);
} interp_procs SEC(".maps");

/*
 * Written by the loader: how many processes of each kind interp_procs
 * holds (kind - 1).  All 0: a sample skips the lookup, so that a host
 * without interpreters pays nothing.
 */
__u32 interp_nr_procs[MAX_INTERP_KINDS] = {};

#include "interp/python/python.bpf.h"

static __always_inline bool interp_any(void)
{
	__u32 n = 0;

#pragma unroll
	for (int i = 0; i < MAX_INTERP_KINDS; i++)
		n |= interp_nr_procs[i];
	return n != 0;
}

/*
 * The walker of the process's kind; NULL: no frames to store.  *more: the
 * outer frames of a walk deeper than one stack holds, or NULL.
 */
static __always_inline struct interp_stack_note *interp_walk(const struct interp_proc *proc,
							      __u64 *cnt,
							      struct interp_stack_note **more)
{
	*more = NULL;
	switch (proc->kind) {
	case PY_KIND:
		return py_walk(proc, cnt + CNT_INTERP(PY_KIND), more);
	default:
		return NULL;
	}
}

/*
 * Store one stack of interpreter frames by content.  Returns true when
 * stored just now: then it is sent to user space (send_interp_note()).
 */
static __always_inline bool store_interp_stack(const struct map_set *ms,
					       struct interp_stack_note *note,
					       struct stack_ref *ref, __u32 pid, __u32 kind,
					       __u64 *cnt)
{
	note->hdr = (struct note_hdr){ .type = NOTE_INTERP_STACK, .kind = kind, .pid = pid };
	note->st.end = INTERP_END(kind, note->st.end);
	return store_stack(ms, &note->st, ref, INTERP_SPILL_FLAGS(kind, pid), cnt);
}

/* The note up to its last word: it shares the ring with mmap records. */
static __always_inline void send_interp_note(void *ctx, struct interp_stack_note *note,
					     __u32 kind, __u64 *cnt)
{
	__u64 size;

	size = __builtin_offsetof(struct interp_stack_note, st.ips) + note->st.nr * sizeof(__u64);
	asm volatile("" : "+r"(size));
	if (size > sizeof(*note))
		size = sizeof(*note);
	cnt += CNT_INTERP(kind);
	if (bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, note, size))
		cnt[INTERP_CNT_NOTE_ERR]++;
	else
		cnt[INTERP_CNT_NOTES]++;
}

/*
 * Store one stack of interpreter frames by content, and send it to user
 * space the first time.  Returns true when stored just now.
 */
static __always_inline bool put_interp_stack(void *ctx, const struct map_set *ms,
					     struct interp_stack_note *note,
					     struct stack_ref *ref, __u32 pid, __u32 kind,
					     __u64 *cnt)
{
	if (!store_interp_stack(ms, note, ref, pid, kind, cnt))
		return false;
	send_interp_note(ctx, note, kind, cnt);
	return true;
}

/*
 * The outer frames of a deep walk (the walker's last, on this CPU), stored
 * first and sent the first time: their key, 0 when they could not be
 * stored.  A global function, verified once on its own: inlined, its
 * store doubled every path of do_sample after it (6.1 verified 533,000
 * instructions instead of 305,000).  For perf_event programs: a global
 * function's context argument has one program type.
 */
__noinline long interp_put_more(struct bpf_perf_event_data *ctx, __u32 set, __u32 pid,
				__u32 kind)
{
	struct interp_stack_note *more;
	struct stack_ref outer = {};
	struct counters *stat;
	struct map_set ms;
	__u32 zero = 0;

	/* The only walker with outer stacks; and kind bounded for the verifier. */
	if (kind != PY_KIND)
		return 0;
	more = py_more_note();
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (!more || !stat || !select_set(&ms, set))
		return 0;
	put_interp_stack(ctx, &ms, more, &outer, pid, kind, stat->c);
	return outer.src == STACK_HASHED ? (long)outer.id : 0;
}

/*
 * The same for the other programs (kprobe, raw tracepoint), without the
 * context: the outer frames' note type says whether they were stored just
 * now, for the caller to send.
 */
__noinline long interp_store_more(__u32 set, __u32 pid, __u32 kind)
{
	struct interp_stack_note *more;
	struct stack_ref outer = {};
	struct counters *stat;
	struct map_set ms;
	__u32 zero = 0;

	if (kind != PY_KIND)
		return 0;
	more = py_more_note();
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (!more || !stat || !select_set(&ms, set))
		return 0;
	if (!store_interp_stack(&ms, more, &outer, pid, kind, stat->c))
		more->hdr.type = 0;
	return outer.src == STACK_HASHED ? (long)outer.id : 0;
}

/* The outer frames' key (above), by the kind of program that runs. */
static __always_inline long interp_more(void *ctx, bool perf_ctx, const struct map_set *ms,
					struct interp_stack_note *more, __u32 pid,
					__u32 kind, __u64 *cnt)
{
	long key;

	if (perf_ctx)
		return interp_put_more(ctx, ms->set, pid, kind);
	more->hdr.type = 0;
	key = interp_store_more(ms->set, pid, kind);
	if (more->hdr.type == NOTE_INTERP_STACK)
		send_interp_note(ctx, more, kind, cnt);
	return key;
}

/*
 * Fill in the reference to the sample's interpreter frames: stored by
 * content, and sent to user space the first time.  Returns true when
 * stored just now.  perf_ctx: ctx is a perf_event program's.
 */
static __always_inline bool get_interp_stack(void *ctx, bool perf_ctx,
					     const struct map_set *ms,
					     struct stack_ref *ref, __u32 pid, __u64 *cnt)
{
	struct interp_stack_note *note, *more;
	struct interp_proc *proc;
	__u32 kind, nr;
	__u64 key;

	ref->kind = FRAME_INTERP;
	if (!interp_any())
		return false;
	proc = bpf_map_lookup_elem(&interp_procs, &pid);
	if (!proc)
		return false;
	kind = proc->kind;
	note = interp_walk(proc, cnt, &more);
	if (!note || kind < 1 || kind > MAX_INTERP_KINDS)
		return false;
	/* Its key is in the inner stack's words: stored before it. */
	if (more) {
		key = interp_more(ctx, perf_ctx, ms, more, pid, kind, cnt);
		nr = note->st.nr;
		asm volatile("" : "+r"(nr));
		if (key && nr < MAX_STACK_DEPTH) {
			note->st.ips[nr] = key;
			note->st.nr = nr + 1;
			note->st.end |= INTERP_END_MORE;
		} else {
			note->st.end |= INTERP_END_CUT;
		}
	}
	return put_interp_stack(ctx, ms, note, ref, pid, kind, cnt);
}

/* The process execs or exits: its interpreter, if any, is gone.  Had it one? */
static __always_inline bool interp_forget(__u32 pid)
{
	return !bpf_map_delete_elem(&interp_procs, &pid);
}

/* A thread exits (gtid: its global id): whatever walkers keep of it goes. */
static __always_inline void interp_thread_exit(__u32 gtid)
{
	py_thread_exit(gtid);
}
