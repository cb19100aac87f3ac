// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython's layouts for x86-64, default builds (not debug-only layouts, not
 * free-threaded), 3.8 to 3.13.
 *
 * Where the numbers come from, for every version: each interpreter's own
 * headers, compiled.  tests/unit/interp/python/pyoffsets_probe.c prints offsetof() and
 * sizeof() of the fields below when built with -DPy_BUILD_CORE against an
 * installed interpreter's include/ and include/internal/; it was run
 * against CPython 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0 as
 * built by pyenv (default configure, x86-64, GCC 12), and against Debian
 * 12's 3.11.2 (python3.11-dev and the debug build's python3.11-dbg: same
 * layout).  test_pyversions runs it again against whatever headers the
 * machine has and compares with this table.  Each entry was also checked
 * against a second, independent source, named at the entry.
 *
 * Layouts are per major.minor: CPython keeps them within a release series
 * (3.13 and later describe themselves anyway, see below).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "interp/python/pyversions.h"

/* Until 3.11 the GIL is the runtime's: rt_tstate_current names its holder. */
#define RUNTIME_GIL							\
	.interp_gil = PY_NO_OFF,					\
	.gil_holder = 0xff,						\
	.gil_locked = 0xff

/*
 * From 3.12 each interpreter points at its GIL (ceval.gil), a struct
 * _gil_runtime_state: unsigned long interval, then the last holder, then
 * the int locked; 3.13 puts an int enabled first in free-threaded builds
 * only, which are not read.
 */
#define INTERP_GIL(gil)							\
	.interp_gil = (gil),						\
	.gil_holder = 8,		/* last_holder */		\
	.gil_locked = 16		/* locked */

/* The walker's offsets of a version that keeps the frame chain in
 * PyFrameObjects, f_lasti an int (3.8 to 3.10). */
#define FRAME_OBJECT_WALK(tstate_current, interp_head, lasti, kind)	\
	.rt_tstate_current = (tstate_current),				\
	.rt_interp_head = (interp_head),				\
	.interp_threads_head = 8,	/* tstate_head */		\
	.ts_next = 8,							\
	.ts_thread_id = 176,						\
	.ts_native_id = PY_NO_OFF,					\
	.ts_frame = 24,			/* frame */			\
	.cframe_current_frame = PY_NO_OFF,				\
	.fr_code = 32,			/* f_code */			\
	.fr_previous = 24,		/* f_back */			\
	.fr_instr = (lasti),		/* f_lasti */			\
	.fr_entry = PY_NO_OFF,						\
	.fr_owner = PY_NO_OFF,						\
	.co_code = PY_NO_OFF,						\
	.instr_kind = (kind),						\
	.owner_cstack = 0xff,						\
	RUNTIME_GIL

/* Objects every version here lays out alike. */
#define OBJECTS								\
	.ob_type = 8,							\
	.bytes_size = 16,						\
	.bytes_data = 32,						\
	.str_length = 16,						\
	.str_state = 32

/*
 * Until 3.11 a str also had wstr (and, when not ASCII, wstr_length);
 * 3.12 removed both.
 */
#define STR_WITH_WSTR	.str_ascii_data = 48, .str_compact_data = 72
#define STR_NO_WSTR	.str_ascii_data = 40, .str_compact_data = 56

static const struct py_layout layouts[] = {
	/*
	 * 3.8: the runtime's GIL holder is in gilstate, after the ceval
	 * state and its 32 pending calls, hence 1368.  f_lasti is a byte
	 * offset.  Second source: bloomberg/pystack's structures for 3.8
	 * (cpython/runtime.h, thread.h, frame.h, code.h), compiled: the same
	 * numbers.
	 */
	{
		.version = 0x0308,
		.bpf = { FRAME_OBJECT_WALK(1368, 32, 104, PY_INSTR_LASTI_BYTES) },
		OBJECTS,
		.co_filename = 104,
		.co_name = 112,
		.co_qualname = PY_NO_OFF,
		.co_firstlineno = 40,
		.co_lines = 120,		/* co_lnotab */
		.lines_kind = PY_LINES_LNOTAB,
		STR_WITH_WSTR,
	},
	/*
	 * 3.9: the pending calls moved to the interpreter, gilstate is
	 * nearer the start of _PyRuntimeState.  Second source: pystack's
	 * 3.9 structures, compiled: the same numbers.
	 */
	{
		.version = 0x0309,
		.bpf = { FRAME_OBJECT_WALK(568, 32, 104, PY_INSTR_LASTI_BYTES) },
		OBJECTS,
		.co_filename = 104,
		.co_name = 112,
		.co_qualname = PY_NO_OFF,
		.co_firstlineno = 40,
		.co_lines = 120,		/* co_lnotab */
		.lines_kind = PY_LINES_LNOTAB,
		STR_WITH_WSTR,
	},
	/*
	 * 3.10: f_lasti counts 2-byte code units, and sits 8 bytes earlier
	 * (the pointer f_stacktop became the int f_stackdepth, next to the
	 * two chars); co_linetable replaced co_lnotab at the same place.  Second source: pystack's 3.10
	 * structures, compiled: the same numbers.
	 */
	{
		.version = 0x030a,
		.bpf = { FRAME_OBJECT_WALK(568, 32, 96, PY_INSTR_LASTI_UNITS) },
		OBJECTS,
		.co_filename = 104,
		.co_name = 112,
		.co_qualname = PY_NO_OFF,
		.co_firstlineno = 40,
		.co_lines = 120,		/* co_linetable */
		.lines_kind = PY_LINES_310,
		STR_WITH_WSTR,
	},
	/*
	 * 3.11: frames are _PyInterpreterFrames, reached through the
	 * thread's _PyCFrame; is_entry marks the first frame of each
	 * _PyEval_EvalFrameDefault call.  Second sources: pystack's 3.11
	 * structures, compiled, and the OpenTelemetry eBPF profiler's
	 * constants for 3.11 frames (interpreter/python/python.go: code 32,
	 * previous 48, prev_instr 56, is_entry 68, cframe 56, current_frame
	 * 8): the same numbers.
	 */
	{
		.version = 0x030b,
		.bpf = {
			.rt_tstate_current = 576,	/* gilstate.tstate_current */
			.rt_interp_head = 40,
			.interp_threads_head = 16,	/* threads.head */
			.ts_next = 8,
			.ts_thread_id = 152,
			.ts_native_id = 160,
			.ts_frame = 56,			/* cframe */
			.cframe_current_frame = 8,
			.fr_code = 32,			/* f_code */
			.fr_previous = 48,
			.fr_instr = 56,			/* prev_instr */
			.fr_entry = 68,			/* is_entry */
			.fr_owner = 69,
			.co_code = 184,			/* co_code_adaptive */
			.instr_kind = PY_INSTR_PTR,
			.owner_cstack = 0xff,
			RUNTIME_GIL,
		},
		OBJECTS,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_firstlineno = 72,
		.co_lines = 136,		/* co_linetable */
		.lines_kind = PY_LINES_LOCATIONS,
		STR_WITH_WSTR,
	},
	/*
	 * 3.12: the current thread state is a thread local, no longer in
	 * _PyRuntimeState; f_code is the frame's first field; a C call into
	 * the evaluation loop pushes a shim frame owned by the C stack
	 * instead of setting is_entry.  Second sources: pystack's 3.12
	 * structures, compiled; py-spy's bindings of 3.12.0's headers
	 * (src/python_bindings/v3_12_0.rs: _ts and _is, counted by hand:
	 * thread_id 136, threads.head 72); the OpenTelemetry eBPF profiler's
	 * 3.12 constants (f_code 0, previous 8, prev_instr 56, owner 70 with
	 * FRAME_OWNED_BY_CSTACK 3, cframe 56, current_frame 0): the same
	 * numbers.
	 */
	{
		.version = 0x030c,
		.bpf = {
			.rt_tstate_current = PY_NO_OFF,
			.rt_interp_head = 40,
			.interp_threads_head = 72,	/* threads.head */
			.ts_next = 8,
			.ts_thread_id = 136,
			.ts_native_id = 144,
			.ts_frame = 56,			/* cframe */
			.cframe_current_frame = 0,
			.fr_code = 0,			/* f_code */
			.fr_previous = 8,
			.fr_instr = 56,			/* prev_instr */
			.fr_entry = PY_NO_OFF,
			.fr_owner = 70,
			.co_code = 192,			/* co_code_adaptive */
			.instr_kind = PY_INSTR_PTR,
			.owner_cstack = 3,		/* FRAME_OWNED_BY_CSTACK */
			INTERP_GIL(384),		/* ceval.gil */
		},
		OBJECTS,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_firstlineno = 68,
		.co_lines = 136,		/* co_linetable */
		.lines_kind = PY_LINES_LOCATIONS,
		STR_NO_WSTR,
	},
	/*
	 * 3.13: _PyRuntime starts with _Py_DebugOffsets (584 bytes), so the
	 * interpreters list is at 632; no _PyCFrame, the thread state points
	 * at its frame (current_frame); f_executable replaced f_code and
	 * instr_ptr (the instruction running or about to) replaced
	 * prev_instr.  Second sources: pystack's 3.13 structures, compiled;
	 * the _Py_DebugOffsets of a running 3.13.0 (the test reads it); the
	 * OpenTelemetry eBPF profiler's 3.13 constants (f_executable 0,
	 * previous 8, instr_ptr 56, owner 70, current_frame 72): the same
	 * numbers.
	 */
	{
		.version = 0x030d,
		.bpf = {
			.rt_tstate_current = PY_NO_OFF,
			.rt_interp_head = 632,
			.interp_threads_head = 7344,	/* threads.head */
			.ts_next = 8,
			.ts_thread_id = 152,
			.ts_native_id = 160,
			.ts_frame = 72,			/* current_frame */
			.cframe_current_frame = PY_NO_OFF,
			.fr_code = 0,			/* f_executable */
			.fr_previous = 8,
			.fr_instr = 56,			/* instr_ptr */
			.fr_entry = PY_NO_OFF,
			.fr_owner = 70,
			.co_code = 200,			/* co_code_adaptive */
			.instr_kind = PY_INSTR_PTR,
			.owner_cstack = 3,		/* FRAME_OWNED_BY_CSTACK */
			INTERP_GIL(16),			/* ceval.gil */
		},
		OBJECTS,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_firstlineno = 68,
		.co_lines = 136,		/* co_linetable */
		.lines_kind = PY_LINES_LOCATIONS,
		STR_NO_WSTR,
	},
};

#define NR_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

static const struct py_layout *layout__find(__u32 version)
{
	size_t i;

	for (i = 0; i < NR_LAYOUTS; i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}

int pyversions__lookup(unsigned int major, unsigned int minor, struct py_layout *out)
{
	const struct py_layout *l;

	if (major != 3 || minor > 0xff)
		return -ENOENT;
	l = layout__find(major << 8 | minor);
	if (!l)
		return -ENOENT;
	*out = *l;
	return 0;
}

/*
 * _Py_DebugOffsets as 3.13 declares it (Include/internal/pycore_runtime.h
 * of 3.13.0, and every 3.13 from 3.13.0rc2 on: rc2 added free_threaded,
 * the GIL fields, tp_repr, tp_flags, the tuple's ob_size and the list,
 * dict, float, long and bytes sections; earlier 3.13 pre-releases declared
 * a shorter struct and are refused by version).  Every field is a
 * uint64_t: a size, or an offset into the structure its section names.
 * Only what is read is named; the rest keeps its place.
 */
struct py313_debug_offsets {
	char cookie[8];			/* "xdebugpy" */
	__u64 version;			/* PY_VERSION_HEX */
	__u64 free_threaded;
	struct {
		__u64 size;
		__u64 finalizing;
		__u64 interpreters_head;
	} runtime_state;
	struct {
		__u64 size;
		__u64 id;
		__u64 next;
		__u64 threads_head;
		__u64 gc;
		__u64 imports_modules;
		__u64 sysdict;
		__u64 builtins;
		__u64 ceval_gil;
		__u64 gil_runtime_state;
		__u64 gil_runtime_state_enabled;
		__u64 gil_runtime_state_locked;
		__u64 gil_runtime_state_holder;
	} interpreter_state;
	struct {
		__u64 size;
		__u64 prev;
		__u64 next;
		__u64 interp;
		__u64 current_frame;
		__u64 thread_id;
		__u64 native_thread_id;
		__u64 datastack_chunk;
		__u64 status;
	} thread_state;
	struct {
		__u64 size;
		__u64 previous;
		__u64 executable;
		__u64 instr_ptr;
		__u64 localsplus;
		__u64 owner;
	} interpreter_frame;
	struct {
		__u64 size;
		__u64 filename;
		__u64 name;
		__u64 qualname;
		__u64 linetable;
		__u64 firstlineno;
		__u64 argcount;
		__u64 localsplusnames;
		__u64 localspluskinds;
		__u64 co_code_adaptive;
	} code_object;
	struct {
		__u64 size;
		__u64 ob_type;
	} pyobject;
	struct {
		__u64 size;
		__u64 tp_name;
		__u64 tp_repr;
		__u64 tp_flags;
	} type_object;
	struct {
		__u64 size;
		__u64 ob_item;
		__u64 ob_size;
	} tuple_object;
	struct {
		__u64 size;
		__u64 ob_item;
		__u64 ob_size;
	} list_object;
	struct {
		__u64 size;
		__u64 ma_keys;
		__u64 ma_values;
	} dict_object;
	struct {
		__u64 size;
		__u64 ob_fval;
	} float_object;
	struct {
		__u64 size;
		__u64 lv_tag;
		__u64 ob_digit;
	} long_object;
	struct {
		__u64 size;
		__u64 ob_size;
		__u64 ob_sval;
	} bytes_object;
	struct {
		__u64 size;
		__u64 state;
		__u64 length;
		__u64 asciiobject_size;
	} unicode_object;
	struct {
		__u64 size;
		__u64 collecting;
	} gc;
};

_Static_assert(sizeof(struct py313_debug_offsets) == 584,
	       "3.13's _Py_DebugOffsets is 73 words");
_Static_assert(sizeof(struct py313_debug_offsets) <= PY_DEBUG_OFFSETS_MAX,
	       "PY_DEBUG_OFFSETS_MAX reads all of it");

#define PY_DEBUG_COOKIE "xdebugpy"

/*
 * The versions whose _Py_DebugOffsets this parse knows: 3.13.0rc2 up to
 * any 3.13.x.  3.14 declares a different struct (interpreter_state gained
 * threads_main, code_object_generation and tlbc_generation;
 * interpreter_frame stackpointer and tlbc_index; code_object co_tlbc; a
 * set_object section came before dict_object), so every later number
 * moves: 3.14 needs a parse of its own declaration, a table entry for what
 * it does not describe, and a walker that clears the tag bits of
 * f_executable, which 3.14 made a _PyStackRef.
 */
#define PY313_FIRST 0x030d00c2u		/* 3.13.0rc2 */
#define PY313_END   0x030e0000u		/* 3.14.0a0 */

/*
 * Structure sizes a sane default build stays far below: the largest,
 * PyInterpreterState, is about 190 KiB in 3.13.0 and _PyRuntimeState
 * about 280 KiB.
 */
#define SANE_STRUCT_MAX (16u << 20)

/*
 * A field of width bytes at off inside a structure of size bytes, its
 * offset one the table can hold (below PY_NO_OFF).  Sizes are checked
 * first: off + width cannot wrap once both are below SANE_STRUCT_MAX.
 */
static bool field_ok(__u64 size, __u64 off, __u64 width)
{
	if (size == 0 || size > SANE_STRUCT_MAX || off >= PY_NO_OFF)
		return false;
	return off + width <= size;
}

/* A frame field: inside the frame and inside the walker's window. */
static bool frame_field_ok(__u64 size, __u64 off, __u64 width)
{
	return field_ok(size, off, width) && off + width <= PY_FRAME_WINDOW;
}

static int debug_offsets__check(const struct py313_debug_offsets *d)
{
	__u64 v = d->version;
	__u64 frame = d->interpreter_frame.size;
	__u64 code = d->code_object.size;
	__u64 uni = d->unicode_object.size;

	if (memcmp(d->cookie, PY_DEBUG_COOKIE, sizeof(d->cookie)))
		return -EINVAL;
	if (v < PY313_FIRST || v >= PY313_END)
		return -EINVAL;
	/* A free-threaded build lays out objects and frames otherwise. */
	if (d->free_threaded != 0)
		return -EINVAL;

	if (!field_ok(d->runtime_state.size, d->runtime_state.interpreters_head, 8) ||
	    !field_ok(d->interpreter_state.size, d->interpreter_state.threads_head, 8) ||
	    !field_ok(d->thread_state.size, d->thread_state.next, 8) ||
	    !field_ok(d->thread_state.size, d->thread_state.thread_id, 8) ||
	    !field_ok(d->thread_state.size, d->thread_state.native_thread_id, 8) ||
	    !field_ok(d->thread_state.size, d->thread_state.current_frame, 8))
		return -EINVAL;

	if (!frame_field_ok(frame, d->interpreter_frame.previous, 8) ||
	    !frame_field_ok(frame, d->interpreter_frame.executable, 8) ||
	    !frame_field_ok(frame, d->interpreter_frame.instr_ptr, 8) ||
	    !frame_field_ok(frame, d->interpreter_frame.owner, 1))
		return -EINVAL;

	/* co_code_adaptive is the trailing array: it may start at the end. */
	if (!field_ok(code, d->code_object.filename, 8) ||
	    !field_ok(code, d->code_object.name, 8) ||
	    !field_ok(code, d->code_object.qualname, 8) ||
	    !field_ok(code, d->code_object.linetable, 8) ||
	    !field_ok(code, d->code_object.firstlineno, 4) ||
	    !field_ok(code + 1, d->code_object.co_code_adaptive, 1))
		return -EINVAL;

	/* Every object starts with a PyObject. */
	if (!field_ok(d->pyobject.size, d->pyobject.ob_type, 8) ||
	    d->pyobject.size > 64)
		return -EINVAL;
	if (!field_ok(d->bytes_object.size, d->bytes_object.ob_size, 8) ||
	    !field_ok(d->bytes_object.size, d->bytes_object.ob_sval, 1) ||
	    d->bytes_object.ob_sval < d->pyobject.size)
		return -EINVAL;
	if (!field_ok(uni, d->unicode_object.length, 8) ||
	    !field_ok(uni, d->unicode_object.state, 4) ||
	    !field_ok(uni, d->unicode_object.asciiobject_size, 0) ||
	    d->unicode_object.asciiobject_size < d->unicode_object.state + 4)
		return -EINVAL;
	return 0;
}

/*
 * The GIL's fields, which 3.13 gives as offsets into PyInterpreterState
 * (of its own _gil's last_holder and locked): inside the GIL's first
 * PY_GIL_WINDOW bytes, else the walker leaves the GIL unread (no mark).
 */
static void debug_offsets__gil(const struct py313_debug_offsets *d, struct py_offsets *o)
{
	__u64 size = d->interpreter_state.size, gil = d->interpreter_state.gil_runtime_state;
	__u64 holder = d->interpreter_state.gil_runtime_state_holder;
	__u64 locked = d->interpreter_state.gil_runtime_state_locked;

	o->interp_gil = PY_NO_OFF;
	o->gil_holder = o->gil_locked = 0xff;
	if (!field_ok(size, d->interpreter_state.ceval_gil, 8) ||
	    !field_ok(size, holder, 8) || !field_ok(size, locked, 4) ||
	    holder < gil || holder - gil > PY_GIL_WINDOW - 8 ||
	    locked < gil || locked - gil > PY_GIL_WINDOW - 4)
		return;
	o->interp_gil = (__u16)d->interpreter_state.ceval_gil;
	o->gil_holder = (__u8)(holder - gil);
	o->gil_locked = (__u8)(locked - gil);
}

int pyversions__from_debug_offsets(const void *buf, size_t len, struct py_layout *out)
{
	struct py313_debug_offsets d;
	struct py_layout l;
	__u16 compact_extra;
	int err;

	if (!buf || len < sizeof(d))
		return -EINVAL;
	memcpy(&d, buf, sizeof(d));
	err = debug_offsets__check(&d);
	if (err)
		return err;

	/* What the struct does not describe comes from the 3.13 entry. */
	l = *layout__find(0x030d);

	l.bpf.rt_tstate_current = PY_NO_OFF;
	l.bpf.rt_interp_head = (__u16)d.runtime_state.interpreters_head;
	l.bpf.interp_threads_head = (__u16)d.interpreter_state.threads_head;
	l.bpf.ts_next = (__u16)d.thread_state.next;
	l.bpf.ts_thread_id = (__u16)d.thread_state.thread_id;
	l.bpf.ts_native_id = (__u16)d.thread_state.native_thread_id;
	l.bpf.ts_frame = (__u16)d.thread_state.current_frame;
	l.bpf.cframe_current_frame = PY_NO_OFF;
	l.bpf.fr_code = (__u16)d.interpreter_frame.executable;
	l.bpf.fr_previous = (__u16)d.interpreter_frame.previous;
	l.bpf.fr_instr = (__u16)d.interpreter_frame.instr_ptr;
	l.bpf.fr_entry = PY_NO_OFF;
	l.bpf.fr_owner = (__u16)d.interpreter_frame.owner;
	l.bpf.co_code = (__u16)d.code_object.co_code_adaptive;
	debug_offsets__gil(&d, &l.bpf);

	l.ob_type = (__u16)d.pyobject.ob_type;
	l.co_filename = (__u16)d.code_object.filename;
	l.co_name = (__u16)d.code_object.name;
	l.co_qualname = (__u16)d.code_object.qualname;
	l.co_firstlineno = (__u16)d.code_object.firstlineno;
	l.co_lines = (__u16)d.code_object.linetable;
	l.bytes_size = (__u16)d.bytes_object.ob_size;
	l.bytes_data = (__u16)d.bytes_object.ob_sval;
	l.str_length = (__u16)d.unicode_object.length;
	l.str_state = (__u16)d.unicode_object.state;

	/*
	 * A PyCompactUnicodeObject is a PyASCIIObject and then utf8_length
	 * and utf8: the struct gives the first size, the table the
	 * difference.  The non-ASCII data must still fit in the str.
	 */
	compact_extra = l.str_compact_data - l.str_ascii_data;
	l.str_ascii_data = (__u16)d.unicode_object.asciiobject_size;
	l.str_compact_data = l.str_ascii_data + compact_extra;
	if (l.str_compact_data > d.unicode_object.size)
		return -EINVAL;

	*out = l;
	return 0;
}
