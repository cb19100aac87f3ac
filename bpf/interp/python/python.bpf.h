/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython's frames, walked in the kernel; included by the interpreter
 * dispatch (bpf/interp/interp.bpf.h), which calls py_walk() for a process
 * whose interp_procs entry is of kind PY_KIND.
 *
 * The loader writes what it found of each CPython process into its entry:
 * where _PyRuntime is and the layout's offsets (bpf/interp/python/pyframe.h).  For a
 * sample of such a process this finds the sampled thread's PyThreadState
 * (the one it had last time, the GIL holder's, else the interpreter's list
 * of them, matched by the thread's id in its pid namespace, or before 3.11
 * by pthread_self(), which on x86-64 is the thread's fs base), then follows
 * its frame chain innermost first, one frame per bpf_loop() step, and
 * records each frame's code object with its identity and the instruction
 * (two words) into a stack stored by content like any other; frames past
 * the first PY_STACK_FRAMES go into a second stack, stored first
 * (bpf/interp/python/pyframe.h).  Every read is
 * bpf_probe_read_user(), which fails rather than faults: the process can
 * change or forge any of it, and the worst it gets is a wrong name for its
 * own frames, which user space checks again.
 */
#include "interp/python/pyframe.h"

/*
 * Written by the loader once a CPython older than 3.11 (no
 * native_thread_id) is found: the offset of the fs base in struct
 * task_struct, from the kernel's BTF; reading it costs the loader 10 MiB
 * and 20 ms.
 */
__u32 py_fsbase_off = 0;

/*
 * The thread state each thread was found with last, by thread id (global):
 * a thread that does not hold the GIL would otherwise search the list on
 * every sample.  Checked on every use (its thread_id must still be the
 * thread's fs base); the exit program drops a thread's entry.  With it the
 * GIL of the interpreter it was found in (3.12+), which is the
 * interpreter's for its life.
 */
struct py_thread {
	__u64 tstate;
	__u64 gil;		/* struct _gil_runtime_state *, or 0 */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct py_thread);
	__uint(max_entries, PY_MAX_THREAD_CACHE);
} py_threads SEC(".maps");

struct py_state {
	__u64 runtime;
	__u64 me;		/* the thread, as its thread state names it */
	__u64 tstate;		/* the thread state being looked at */
	__u64 gil;		/* its interpreter's GIL (3.12+), or 0 */
	__u64 frame;		/* the next frame to step */
	__u32 nr;		/* frames recorded */
	__u32 end;		/* enum py_end */
	__u32 id_off;		/* the thread state's field that is me */
	struct py_proc proc;
	__u8 win[PY_FRAME_WINDOW];
	/*
	 * The inner stack, then the outer one (the frames past the first
	 * PY_STACK_FRAMES), back to back: py_word() finds a word of either
	 * without a branch.
	 */
	struct interp_stack_note note;
	struct interp_stack_note more;
	/*
	 * The verifier bounds a frame's index by its bits: it can look like
	 * one word past the outer stack.  Never written.
	 */
	__u64 slack;
	__u8 cwin[PY_CODE_WINDOW];	/* a code object's identity fields */
	__u8 swin[PY_STR_WINDOW];	/* its name's header and characters */
};

/* The outer stack's first word, counted from the inner stack's first. */
#define PY_MORE_WORD ((__builtin_offsetof(struct py_state, more.st.ips) - \
		       __builtin_offsetof(struct py_state, note.st.ips)) / 8)
_Static_assert(PY_MORE_WORD == MAX_STACK_DEPTH + 2,
	       "the outer stack's words follow the inner stack's and its own header");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_state);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

static __always_inline int py_read(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

static __always_inline int py_read_ptr(__u64 *dst, __u64 base, __u32 off)
{
	if (off == PY_NO_OFF)
		return -1;
	return py_read(dst, sizeof(*dst), base + off);
}

static __always_inline int py_end(struct py_state *s, enum py_end why)
{
	s->end = why;
	return 1;
}

/* bpf_loop()'s context must live on the stack: it points at the state. */
struct py_loop {
	struct py_state *s;
};

/*
 * How the sampled thread's thread state names it: its id in the process's
 * pid namespace (native_thread_id, 3.11+), else pthread_self(), which on
 * x86-64 is the thread's fs base.  False if neither can be known.
 */
static __always_inline bool py_whoami(struct py_state *s, void *task)
{
	struct pidns_ids ids;

	if (s->proc.off.ts_native_id != PY_NO_OFF) {
		if (bpf_get_ns_current_pid_tgid(s->proc.pidns_dev, s->proc.pidns_ino,
						(void *)&ids, sizeof(ids)))
			return false;
		s->me = ids.pid;
		s->id_off = s->proc.off.ts_native_id;
		return true;
	}
	if (!py_fsbase_off ||
	    bpf_probe_read_kernel(&s->me, sizeof(s->me), task + py_fsbase_off))
		return false;
	s->id_off = s->proc.off.ts_thread_id;
	return true;
}

/* One thread state of the list: is it the sampled thread's? */
static long py_find_step(__u64 i, void *data)
{
	struct py_state *s = ((struct py_loop *)data)->s;
	__u64 id = 0;

	if (!s->tstate)
		return py_end(s, PY_END_NO_THREAD);
	if (py_read_ptr(&id, s->tstate, s->id_off))
		return py_end(s, PY_END_UNREADABLE);
	if (id == s->me)
		return py_end(s, PY_END_ROOT);	/* found: the walk starts */
	if (py_read_ptr(&s->tstate, s->tstate, s->proc.off.ts_next))
		return py_end(s, PY_END_UNREADABLE);
	return 0;
}

/* A field of the frame window: a pointer, an int or a byte. */
static __always_inline __u64 py_win_u64(const struct py_state *s, __u32 off)
{
	if (off > PY_FRAME_WINDOW - 8)
		return 0;
	return *(const __u64 *)(s->win + off);
}

static __always_inline __s32 py_win_s32(const struct py_state *s, __u32 off)
{
	if (off > PY_FRAME_WINDOW - 4)
		return 0;
	return *(const __s32 *)(s->win + off);
}

static __always_inline __u8 py_win_u8(const struct py_state *s, __u32 off)
{
	if (off > PY_FRAME_WINDOW - 1)
		return 0;
	return s->win[off];
}

/*
 * Whether the thread state s->tstate does not hold the GIL.  Until 3.11 the
 * runtime's current thread state is the holder (read by the caller; 0 when
 * nobody holds it).  From 3.12 each interpreter points at its GIL
 * (s->gil), which names its last holder and whether it is held now; when
 * that cannot be read, or the GIL is not made yet, the answer is no.
 */
static __always_inline bool py_gil_released(struct py_state *s, __u64 holder)
{
	const struct py_offsets *o = &s->proc.off;
	__s32 locked;

	if (o->rt_tstate_current != PY_NO_OFF)
		return holder != s->tstate;
	/* The frame window is free until the first frame is read. */
	if (!s->gil || py_read(s->win, PY_GIL_WINDOW, s->gil))
		return false;
	locked = py_win_s32(s, o->gil_locked);
	if (locked < 0)
		return false;
	return !locked || py_win_u64(s, o->gil_holder) != s->tstate;
}

/*
 * The sampled thread's PyThreadState into s->tstate, and its interpreter's
 * GIL into s->gil; s->end says how it went (PY_END_ROOT: found).
 * *no_gil: found, and another thread or none holds the GIL.
 */
static __always_inline void py_find_thread(struct py_state *s, __u32 tid, bool *no_gil)
{
	const struct py_offsets *o = &s->proc.off;
	__u64 holder = 0, id = 0, interp = 0;
	bool has_holder = o->rt_tstate_current != PY_NO_OFF;
	struct py_thread *cached, t;
	struct py_loop l = { s };

	*no_gil = false;
	if (has_holder && py_read_ptr(&holder, s->runtime, o->rt_tstate_current))
		holder = 0;
	/* Found before: one read to check it is still this thread's. */
	cached = bpf_map_lookup_elem(&py_threads, &tid);
	if (cached && cached->tstate && !py_read_ptr(&id, cached->tstate, s->id_off) &&
	    id == s->me) {
		s->tstate = cached->tstate;
		s->gil = cached->gil;
		s->end = PY_END_ROOT;
		goto found;
	}
	s->gil = 0;
	if (holder && !py_read_ptr(&id, holder, s->id_off) && id == s->me) {
		s->tstate = holder;
		s->end = PY_END_ROOT;
	} else if (py_read_ptr(&interp, s->runtime, o->rt_interp_head) || !interp ||
		   py_read_ptr(&s->tstate, interp, o->interp_threads_head)) {
		s->end = PY_END_NO_THREAD;
		return;
	} else {
		s->end = PY_END_THREADS;
		bpf_loop(PY_MAX_THREADS, py_find_step, &l, 0);
		/* A thread of this interpreter waits for its GIL (3.12+). */
		if (py_read_ptr(&s->gil, interp, o->interp_gil))
			s->gil = 0;
	}
	if (s->end != PY_END_ROOT)
		return;
	t = (struct py_thread){ .tstate = s->tstate, .gil = s->gil };
	bpf_map_update_elem(&py_threads, &tid, &t, BPF_ANY);
found:
	*no_gil = py_gil_released(s, holder);
}

/* The instruction a frame runs, in 2-byte code units from the first. */
static __always_inline __u64 py_instr(const struct py_state *s, __u64 code)
{
	const struct py_offsets *o = &s->proc.off;
	__u64 first, at;
	__s32 lasti;

	if (o->instr_kind == PY_INSTR_PTR) {
		at = py_win_u64(s, o->fr_instr);
		first = code + o->co_code;
		/* Before the first instruction (a frame just pushed): 0. */
		return at > first ? ((at - first) / 2) & PY_INSTR_MASK : 0;
	}
	lasti = py_win_s32(s, o->fr_instr);
	if (lasti < 0)
		return 0;
	return (o->instr_kind == PY_INSTR_LASTI_BYTES ? lasti / 2 : lasti) & PY_INSTR_MASK;
}

/*
 * Word w of the walk: of the inner stack up to PY_STACK_WORDS, then of the
 * outer one; NULL past both.
 */
static __always_inline __u64 *py_word(struct py_state *s, __u64 w)
{
	/* 1 from the outer stack's first word on: no branch to verify twice. */
	__u64 outer = (PY_STACK_WORDS - 1 - w) >> 63;

	w += outer * (PY_MORE_WORD - PY_STACK_WORDS);
	/*
	 * Hidden from clang, which knows w's range and would drop the check
	 * that older verifiers (6.1) need to bound it themselves.
	 */
	asm volatile("" : "+r"(w));
	if (w >= PY_MORE_WORD + PY_STACK_WORDS)
		return NULL;
	return (__u64 *)((char *)s + __builtin_offsetof(struct py_state, note.st.ips)) + w;
}

/* Mark frame i as the outermost of its evaluation loop's call. */
static __always_inline void py_mark_entry(struct py_state *s, __u32 i)
{
	__u64 *w = py_word(s, 2 * (__u64)i + 1);

	if (w)
		*w |= PY_WORD_ENTRY;
}

/* A field of the code window: a pointer or an int. */
static __always_inline __u64 py_cwin_u64(const struct py_state *s, __u32 off)
{
	if (off > PY_CODE_WINDOW - 8)
		return 0;
	return *(const __u64 *)(s->cwin + off);
}

static __always_inline __u32 py_cwin_u32(const struct py_state *s, __u32 off)
{
	if (off > PY_CODE_WINDOW - 4)
		return 0;
	return *(const __u32 *)(s->cwin + off);
}

static __always_inline __u64 py_swin_u64(const struct py_state *s, __u32 off)
{
	if (off > PY_STR_WINDOW - 8)
		return 0;
	return *(const __u64 *)(s->swin + off);
}

/*
 * The fingerprint of the name str at name (pyframe.h, py_name_print()):
 * its header and first characters in one read, its last ones in another
 * when it is longer.  0 when it cannot be read or is not compact ASCII.
 */
static __always_inline __u64 py_name(struct py_state *s, __u64 name)
{
	const struct py_code_id *c = &s->proc.id;
	__u32 size = c->str_data + PY_NAME_CHARS;
	__u64 len, h0, h1, t0 = 0, t1 = 0;

	/* The loader sets str_data only where the window holds it all. */
	if (!c->str_data)
		return 0;
	if (size > PY_STR_WINDOW)
		size = PY_STR_WINDOW;
	if (py_read(s->swin, size, name))
		return 0;
	if ((s->swin[c->str_state & (PY_STR_WINDOW - 1)] & PY_STR_COMPACT_ASCII) !=
	    PY_STR_COMPACT_ASCII)
		return 0;
	len = py_swin_u64(s, c->str_length);
	h0 = py_swin_u64(s, c->str_data);
	h1 = py_swin_u64(s, c->str_data + 8);
	if (len > PY_NAME_MAX)
		return 0;
	if (len > PY_NAME_CHARS) {
		if (py_read(s->swin, PY_NAME_CHARS, name + c->str_data + len - PY_NAME_CHARS))
			return 0;
		t0 = py_swin_u64(s, 0);
		t1 = py_swin_u64(s, 8);
	}
	return py_name_print(len, h0, h1, t0, t1);
}

/*
 * The identity of the code object at code (pyframe.h, py_code_ident()):
 * one read of the fields it keeps for life, and its name's.  0 when the
 * process has none to read (no layout for it), -1 when the read failed.
 * A global function, verified once: older kernels (6.1) verify a
 * bpf_loop() callback again for every state that reaches the loop.
 */
__noinline long py_ident(__u64 code)
{
	struct py_code_id *c;
	struct py_state *s;
	__u32 zero = 0, size;
	__u64 name;

	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s)
		return -1;
	c = &s->proc.id;
	size = c->len;
	if (!size)
		return 0;
	if (size > PY_CODE_WINDOW)
		size = PY_CODE_WINDOW;
	if (py_read(s->cwin, size, code + c->start))
		return -1;
	name = py_cwin_u64(s, c->name);
	return py_code_ident(name, py_cwin_u64(s, c->file), py_cwin_u64(s, c->lines),
			     py_cwin_u32(s, c->line), py_name(s, name));
}

/*
 * 3.12+: a generator's frame that links to no caller is not running: the
 * chain was read while a yield unlinked it (the caller's frame stored as
 * current after the link was cleared), or through a C-level call's record
 * not filled in yet.  Where it was called from cannot be known, so the
 * walk keeps no frame rather than show a path the program never took.
 * 3.12 links a running generator's frame to the entry (C-stack) frame
 * always; 3.11 (the layout with is_entry) does not when C code with no
 * Python caller drives the generator, and its frames are all there is.
 */
#define PY_OWNER_GENERATOR 1	/* FRAME_OWNED_BY_GENERATOR, 3.11 to 3.13 */

static __always_inline bool py_gen_unlinked(struct py_state *s, __u64 prev)
{
	const struct py_offsets *o = &s->proc.off;

	if (prev || o->fr_entry != PY_NO_OFF || o->fr_owner == PY_NO_OFF ||
	    py_win_u8(s, o->fr_owner) != PY_OWNER_GENERATOR)
		return false;
	s->nr = 0;
	return true;
}

/* One frame of the chain. */
static long py_frame_step(__u64 i, void *data)
{
	struct py_state *s = ((struct py_loop *)data)->s;
	const struct py_offsets *o = &s->proc.off;
	__u64 frame = s->frame, code, prev, *w;
	__u32 n = s->nr, size = s->proc.frame_read;
	long ident;

	if (!frame)
		return py_end(s, PY_END_ROOT);
	if (n >= PY_MAX_FRAMES)
		return py_end(s, PY_END_DEPTH);
	if (size > PY_FRAME_WINDOW)
		size = PY_FRAME_WINDOW;
	if (py_read(s->win, size, frame))
		return py_end(s, PY_END_UNREADABLE);
	prev = py_win_u64(s, o->fr_previous);
	if (prev == frame)
		return py_end(s, PY_END_BAD_FRAME);
	s->frame = prev;
	if (py_gen_unlinked(s, prev))
		return py_end(s, PY_END_BAD_FRAME);
	/* 3.12+: the evaluation loop's own frame on the C stack, not Python's. */
	if (o->fr_owner != PY_NO_OFF && py_win_u8(s, o->fr_owner) == o->owner_cstack) {
		if (n)
			py_mark_entry(s, n - 1);
		return 0;
	}
	/*
	 * Nothing is read of the code object here: a read costs about as much
	 * as the frame's own, and user space checks the object when it names it.
	 */
	code = py_win_u64(s, o->fr_code);
	if (!code || code > PY_CODE_MASK)
		return py_end(s, PY_END_BAD_FRAME);
	ident = py_ident(code);
	if (ident < 0)
		return py_end(s, PY_END_UNREADABLE);
	w = py_word(s, 2 * (__u64)n);
	if (!w)
		return py_end(s, PY_END_DEPTH);
	*w = py_word_code(code, ident);
	w = py_word(s, 2 * (__u64)n + 1);
	if (!w)
		return py_end(s, PY_END_DEPTH);
	*w = py_word_instr(py_instr(s, code), ident);
	s->nr = n + 1;
	/* 3.11 flags the entry frame; before 3.11 each frame is a C call. */
	if ((o->fr_entry != PY_NO_OFF && py_win_u8(s, o->fr_entry)) ||
	    o->instr_kind != PY_INSTR_PTR)
		py_mark_entry(s, n);
	return 0;
}

/* The thread's innermost frame into s->frame; false when it runs none. */
static __always_inline bool py_first_frame(struct py_state *s)
{
	const struct py_offsets *o = &s->proc.off;
	__u64 p = 0;

	if (py_read_ptr(&p, s->tstate, o->ts_frame) || !p)
		return false;
	if (o->cframe_current_frame != PY_NO_OFF &&
	    (py_read_ptr(&p, p, o->cframe_current_frame) || !p))
		return false;
	s->frame = p;
	return true;
}

/* The outer stack of the last walk on this CPU (py_walk()'s *more). */
static __always_inline struct interp_stack_note *py_more_note(void)
{
	__u32 zero = 0;
	struct py_state *s = bpf_map_lookup_elem(&py_scratch, &zero);

	return s ? &s->more : NULL;
}

/* A thread exited: its thread state is gone with it. */
static __always_inline void py_thread_exit(__u32 gtid)
{
	bpf_map_delete_elem(&py_threads, &gtid);
}

/*
 * Walk the Python frames of the sampled thread of pid, a CPython process
 * (proc: its interp_procs entry), into the note's stack; cnt is CPython's
 * counter area (enum py_counter).  NULL when there are none to store.
 * *more: the outer frames' stack, to store first, when there are more than
 * one stack holds; else NULL.
 */
static __always_inline struct interp_stack_note *py_walk(const struct interp_proc *proc,
							  __u64 *cnt,
							  struct interp_stack_note **more)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	void *task = (void *)bpf_get_current_task();
	struct py_loop l = {};
	bool no_gil = false;
	__u64 end;
	struct py_state *s;
	__u32 zero = 0, nr;

	*more = NULL;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s)
		return NULL;
	cnt[PY_CNT_WALKS]++;
	__builtin_memcpy(&s->proc, proc->data, sizeof(s->proc));
	s->runtime = s->proc.runtime;
	s->nr = 0;
	if (!py_whoami(s, task)) {
		s->end = PY_END_NO_THREAD;
		goto out;
	}
	py_find_thread(s, tid, &no_gil);
	if (s->end != PY_END_ROOT)
		goto out;
	if (!py_first_frame(s)) {
		s->end = PY_END_NO_FRAME;
		goto out;
	}
	s->end = PY_END_DEPTH;
	/* Room for a shim frame (3.12+) between every two. */
	l.s = s;
	bpf_loop(2 * PY_MAX_FRAMES + 1, py_frame_step, &l, 0);
out:
	end = s->end;
	/* Hidden from clang, which would check one copy and index by another. */
	asm volatile("" : "+r"(end));
	if (end < NR_PY_ENDS)
		cnt[PY_CNT_END + end]++;
	if (!s->nr)
		return NULL;
	nr = s->nr;
	cnt[PY_CNT_FRAMES] += nr;
	cnt[PY_CNT_NO_GIL] += no_gil;
	s->note.st.end = (s->end + 1) | (no_gil ? PY_END_NO_GIL : 0);
	if (nr > PY_STACK_FRAMES) {
		s->more.st.nr = 2 * (nr - PY_STACK_FRAMES);
		s->more.st.end = s->note.st.end;
		*more = &s->more;
		nr = PY_STACK_FRAMES;
	}
	s->note.st.nr = 2 * nr;
	return &s->note;
}
