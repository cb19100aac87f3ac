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

/* The walker of the process's kind; NULL: no frames to store. */
static __always_inline struct interp_stack_note *interp_walk(const struct interp_proc *proc,
							      __u64 *cnt)
{
	switch (proc->kind) {
	case PY_KIND:
		return py_walk(proc, cnt + CNT_INTERP(PY_KIND));
	default:
		return NULL;
	}
}

/*
 * Fill in the reference to the sample's interpreter frames: stored by
 * content, and sent to user space the first time.  Returns true when
 * stored just now.
 */
static __always_inline bool get_interp_stack(void *ctx, const struct map_set *ms,
					     struct stack_ref *ref, __u32 pid, __u64 *cnt)
{
	struct interp_stack_note *note;
	struct interp_proc *proc;
	__u32 kind;
	__u64 size;

	ref->kind = FRAME_INTERP;
	if (!interp_any())
		return false;
	proc = bpf_map_lookup_elem(&interp_procs, &pid);
	if (!proc)
		return false;
	kind = proc->kind;
	note = interp_walk(proc, cnt);
	if (!note || kind < 1 || kind > MAX_INTERP_KINDS)
		return false;
	note->hdr = (struct note_hdr){ .type = NOTE_INTERP_STACK, .kind = kind, .pid = pid };
	note->st.end = INTERP_END(kind, note->st.end);
	if (!store_stack(ms, &note->st, ref, INTERP_SPILL_FLAGS(kind, pid), cnt))
		return false;
	/* The note up to its last word: it shares the ring with mmap records. */
	size = __builtin_offsetof(struct interp_stack_note, st.ips) + note->st.nr * sizeof(__u64);
	asm volatile("" : "+r"(size));
	if (size > sizeof(*note))
		size = sizeof(*note);
	cnt += CNT_INTERP(kind);
	if (bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, note, size))
		cnt[INTERP_CNT_NOTE_ERR]++;
	else
		cnt[INTERP_CNT_NOTES]++;
	return true;
}

/* The process execs or exits: its interpreter, if any, is gone. */
static __always_inline void interp_forget(__u32 pid)
{
	bpf_map_delete_elem(&interp_procs, &pid);
}

/* A thread exits (gtid: its global id): whatever walkers keep of it goes. */
static __always_inline void interp_thread_exit(__u32 gtid)
{
	py_thread_exit(gtid);
}
