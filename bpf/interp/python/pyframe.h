/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The contract between the CPython frame walker (bpf/interp/python/python.bpf.h) and
 * user space (src/interp/python/python.c): what the walker is told about a process, and
 * how it records the Python frames of a sample.  Fixed-width types only.
 *
 * The walker does not know any CPython version.  The loader finds
 * _PyRuntime in the process, picks the build's layout (src/interp/python/pyversions.c)
 * and writes the byte offsets below; the walker follows pointers by them,
 * every read checked, and records per frame what user space needs to name
 * it: the code object's address and the instruction being run.  Another
 * interpreter (Ruby, PHP, Perl) would add its own contract, walker and
 * resolver, and record FRAME_INTERP frames the same way.
 */
#ifndef PYFRAME_H
#define PYFRAME_H

#include "../../profile.h"

/* CPython's interpreter kind (bpf/profile.h, MAX_INTERP_KINDS). */
#define PY_KIND 1

/*
 * Python frames walked per sample, at most: as deep as the deepest native
 * stack (MAX_STACK_DEPTH, the kernel's perf_event_max_stack), so that
 * Django's or pytest's 80 to 120 frames come out whole.  Two words each,
 * a stored stack (MAX_STACK_DEPTH words) holds PY_STACK_FRAMES of them: a
 * deeper walk stores its outer frames as a stack of their own first, and
 * ends the inner one with that stack's key (INTERP_END_MORE).  A stack
 * deeper still keeps its PY_MAX_FRAMES innermost frames and ends with
 * PY_END_DEPTH.
 */
#define PY_STACK_FRAMES ((MAX_STACK_DEPTH - 1) / 2)
#define PY_STACK_WORDS (2 * PY_STACK_FRAMES)
#define PY_MAX_FRAMES (2 * PY_STACK_FRAMES)
/* Thread states looked at to find the sampled thread's, at most. */
#define PY_MAX_THREADS 128
/* Threads whose thread state the walker remembers (LRU). */
#define PY_MAX_THREAD_CACHE 16384
/* Bytes of a frame read in one go: every field the walker needs. */
#define PY_FRAME_WINDOW 128
/* Bytes of a code object read in one go: the fields of its identity. */
#define PY_CODE_WINDOW 128
/* Bytes of its name's characters, from each end, in its identity. */
#define PY_NAME_CHARS 16
/* ... read with the str's header, at most. */
#define PY_STR_WINDOW 64

/* Bytes of a GIL (struct _gil_runtime_state, 3.12+) read in one go. */
#define PY_GIL_WINDOW 24

#define PY_NO_OFF 0xffff	/* the field does not exist in this version */

/* How a frame says which instruction it runs. */
enum py_instr {
	PY_INSTR_PTR = 1,	/* a pointer into the code (3.11+) */
	PY_INSTR_LASTI_BYTES,	/* int f_lasti, a byte offset (3.8, 3.9) */
	PY_INSTR_LASTI_UNITS,	/* int f_lasti, in 2-byte code units (3.10) */
};

/*
 * Byte offsets into CPython's structures, as the walker follows them:
 * _PyRuntime -> thread states -> the frame chain -> each code object.
 */
struct py_offsets {
	__u16 rt_tstate_current;	/* _PyRuntimeState: the GIL holder's
					 * PyThreadState * (<= 3.11), or PY_NO_OFF */
	__u16 rt_interp_head;		/* _PyRuntimeState.interpreters.head */
	__u16 interp_threads_head;	/* PyInterpreterState.threads.head */
	__u16 ts_next;			/* PyThreadState.next */
	__u16 ts_thread_id;		/* PyThreadState.thread_id: pthread_self() */
	__u16 ts_native_id;		/* PyThreadState.native_thread_id: the
					 * thread's id in its pid namespace
					 * (3.11+), or PY_NO_OFF */
	__u16 ts_frame;			/* PyThreadState: cframe (3.11, 3.12),
					 * current_frame (3.13), frame (<= 3.10) */
	__u16 cframe_current_frame;	/* _PyCFrame.current_frame, or PY_NO_OFF
					 * when ts_frame is the frame itself */
	__u16 fr_code;			/* f_code, f_executable (3.13) */
	__u16 fr_previous;		/* previous, f_back (<= 3.10) */
	__u16 fr_instr;			/* prev_instr, instr_ptr, f_lasti */
	__u16 fr_entry;			/* is_entry (3.11 only), or PY_NO_OFF */
	__u16 fr_owner;			/* owner (3.11+), or PY_NO_OFF */
	__u16 co_code;			/* first instruction, from the code
					 * object (3.11+), or PY_NO_OFF */
	__u16 interp_gil;		/* PyInterpreterState.ceval.gil: the
					 * interpreter's GIL (3.12+), or PY_NO_OFF */
	__u8 instr_kind;		/* enum py_instr */
	__u8 owner_cstack;		/* owner of a C-stack shim frame (3.12+),
					 * or 0xff */
	/*
	 * In the GIL's first PY_GIL_WINDOW bytes (3.12+; else 0xff): the
	 * thread state that holds it or held it last, and the int that says
	 * whether it is held (1), free (0) or not made yet (-1).
	 */
	__u8 gil_holder;		/* last_holder */
	__u8 gil_locked;		/* locked */
};

/*
 * What tells a code object from another made at its address after it was
 * freed (an import's, exec()'s, code.replace()'s): fields it keeps for its
 * life, read in one window of the object (offsets within the window), and
 * its name's length and characters (PY_NAME_CHARS from each end), for the
 * name's str is as often made again where the last one was.  len 0: none
 * read; str_data 0: the name's characters are not.
 */
struct py_code_id {
	__u16 start;			/* the window's offset in the object */
	__u8 len;			/* its bytes, at most PY_CODE_WINDOW */
	__u8 name;			/* co_qualname (co_name before 3.11) */
	__u8 file;			/* co_filename */
	__u8 lines;			/* co_linetable or co_lnotab */
	__u8 line;			/* int co_firstlineno */
	__u8 str_length;		/* the name str's length (code points) */
	__u8 str_state;			/* ... state bits: compact 0x20, ascii 0x40 */
	__u8 str_data;			/* ... a compact ASCII str's characters */
	__u16 pad;
};
#define PY_STR_COMPACT_ASCII 0x60
/* Longer names (in code points) are told apart by the first characters only. */
#define PY_NAME_MAX (1u << 20)

/*
 * What the walker knows of a CPython process: the data of its interp_procs
 * entry (bpf/profile.h, struct interp_proc), kind PY_KIND.
 */
struct py_proc {
	__u64 runtime;			/* address of _PyRuntime */
	__u64 pidns_dev, pidns_ino;	/* the process's pid namespace (nsfs) */
	struct py_offsets off;
	__u32 version;			/* major << 8 | minor: 0x030b is 3.11 */
	__u16 frame_read;		/* bytes of a frame to read: its fields' end */
	__u16 pad;
	struct py_code_id id;
};

_Static_assert(sizeof(struct py_proc) <= sizeof(((struct interp_proc *)0)->data),
	       "a CPython process's data fits an interp_procs entry");

/*
 * A frame is two words of a stored stack (struct hashed_stack), innermost
 * first:
 *   word 0: the code object's address, and in the bits above
 *           PY_IDENT_SHIFT the low 16 bits of its identity;
 *   word 1: the instruction's index in 2-byte code units, PY_WORD_ENTRY
 *           when the frame is the outermost of those one C-level call of
 *           the evaluation loop ran (the native _PyEval_EvalFrameDefault
 *           frame it stands for), and in the bits above PY_IDENT_HI_SHIFT
 *           the rest of the identity.
 * The identity (py_code_ident(), PY_IDENT_BITS) makes a code object made
 * anew where a freed one was another frame.  It is wide because a process
 * may remake code objects at one address for as long as it runs, and the
 * names of the freed ones are kept until the report: 16 bits gave two of
 * a few hundred the same identity, and one the other's name.
 */
#define PY_WORD_ENTRY (1ull << 31)
#define PY_INSTR_MASK (PY_WORD_ENTRY - 1)
#define PY_IDENT_SHIFT 48
#define PY_CODE_MASK ((1ull << PY_IDENT_SHIFT) - 1)
#define PY_IDENT_HI_SHIFT 32
#define PY_IDENT_LO_BITS (64 - PY_IDENT_SHIFT)
#define PY_IDENT_BITS (PY_IDENT_LO_BITS + 64 - PY_IDENT_HI_SHIFT)

/* Word 0 of a frame: code's address and identity's low bits. */
static inline __u64 py_word_code(__u64 code, __u64 ident)
{
	return code | ident << PY_IDENT_SHIFT;
}

/* Word 1 of a frame: the instruction (and PY_WORD_ENTRY), the identity's high bits. */
static inline __u64 py_word_instr(__u64 instr, __u64 ident)
{
	return instr | (ident >> PY_IDENT_LO_BITS) << PY_IDENT_HI_SHIFT;
}

/* The identity a frame's two words carry. */
static inline __u64 py_words_ident(__u64 w0, __u64 w1)
{
	return w0 >> PY_IDENT_SHIFT | (w1 >> PY_IDENT_HI_SHIFT) << PY_IDENT_LO_BITS;
}

/* The first n bytes of the 8 of w (little-endian), the rest 0. */
static inline __u64 py_low_bytes(__u64 w, __u64 n)
{
	return n >= 8 ? w : w & ((1ull << (n * 8)) - 1);
}

/*
 * A compact ASCII name's fingerprint: its length, its first PY_NAME_CHARS
 * bytes (h0, h1: as read, masked here past its end) and, when longer, its
 * last PY_NAME_CHARS (t0, t1, read from len - PY_NAME_CHARS on).
 */
static inline __u64 py_name_print(__u64 len, __u64 h0, __u64 h1, __u64 t0, __u64 t1)
{
	h0 = py_low_bytes(h0, len);
	h1 = py_low_bytes(h1, len > 8 ? len - 8 : 0);
	if (len <= PY_NAME_CHARS)
		t0 = t1 = 0;
	return spill_mix(len ^ spill_mix(h0 ^ spill_mix(h1 ^ spill_mix(t0 ^ spill_mix(t1)))));
}

/*
 * The identity of a code object, from the fields struct py_code_id names
 * and its name's fingerprint; never 0 (0: not read).  The walker and the
 * reader compute it alike.
 */
static inline __u64 py_code_ident(__u64 name, __u64 file, __u64 lines, __u32 line,
				  __u64 print)
{
	__u64 h = spill_mix(name ^ spill_mix(file ^ spill_mix(lines ^ spill_mix(((__u64)line << 20) ^
										 print))));

	h >>= 64 - PY_IDENT_BITS;
	return h ? h : 1;
}

/*
 * How the Python part of a stack ended, stored in hashed_stack.end as
 * reason + 1, with PY_END_NO_GIL set when the thread did not hold the GIL
 * (and PY_KIND in the top byte, bpf/profile.h INTERP_END).  Each is
 * counted in -v (PY_CNT_END + reason).
 */
enum py_end {
	PY_END_ROOT,		/* the first frame of the thread: whole */
	PY_END_DEPTH,		/* PY_MAX_FRAMES walked: the outer ones cut */
	PY_END_NO_THREAD,	/* the thread has no thread state (not Python's) */
	PY_END_NO_FRAME,	/* the thread state runs no frame */
	PY_END_THREADS,		/* PY_MAX_THREADS thread states, not found */
	PY_END_UNREADABLE,	/* a read failed: memory changing, or bad */
	PY_END_BAD_FRAME,	/* a frame with no code object or bad links */
	NR_PY_ENDS,
};
#define PY_END_NO_GIL (1u << 8)

/*
 * The marks a walk leaves in its stack (FRAME_INTERP_MARK frames, addr
 * the mark): the thread did not hold the GIL (first), frames beyond
 * PY_MAX_FRAMES were left out (last).
 */
enum py_mark {
	PY_MARK_NO_GIL,
	PY_MARK_CUT,
};

/* The walker's counters, from CNT_INTERP(PY_KIND) (bpf/profile.h). */
enum py_counter {
	PY_CNT_WALKS = INTERP_CNT_OWN,	/* samples of a Python process */
	PY_CNT_FRAMES,		/* Python frames recorded */
	PY_CNT_NO_GIL,		/* ... in samples of a thread without the GIL */
	PY_CNT_END,		/* NR_PY_ENDS counters: how Python walks ended */
	NR_PY_COUNTERS = PY_CNT_END + NR_PY_ENDS,
};
_Static_assert(NR_PY_COUNTERS <= NR_INTERP_COUNTERS && PY_KIND <= MAX_INTERP_KINDS,
	       "CPython's counters fit its area");

#endif /* PYFRAME_H */
