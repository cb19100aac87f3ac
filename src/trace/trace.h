/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Symbolized traces, and the one way writers read them.
 *
 * A record is one counted key: a process, a count, and its trace in parts
 * (bpf/profile.h: kernel, then user), each a shared, symbolized stack or a
 * reason it is missing.  Writers never look at the parts: trace_iter lays a
 * record out as a single sequence of frames from the root to the leaf, with
 * the parts a writer asked for, "[Missed ... Stack]" where one was lost, and
 * the -d delimiter between kernel and user frames.  A new kind of frame
 * changes the symbolizer, not the writers.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/profile.h"
#include "lib/htab.h"

/*
 * A counted key and its count, as a trace source drains it from the count
 * map: what records are built from.
 */
struct sample {
	struct count_key key;
	__u64 count;
};

/*
 * Not a frame: the boundary between the kernel and the user part, shown by
 * -d.  A user-space flag, beside bpf/profile.h's enum frame_flags.
 */
#define FRAME_DELIMITER (1 << 7)

/* The name is a demangled C++ or Rust one: frame__name() may shorten it. */
#define FRAME_DEMANGLED (1 << 6)

/*
 * The mapping a native or JIT frame was found in, as the symbolizer saw it
 * when it named the frame: what pprof's Mapping message says.  One per
 * distinct mapping, shared by its frames and kept as long as they are (in
 * the records' sym_cache); its strings live as long as the frames' names.
 */
struct frame_mapping {
	const char *file;	/* as in /proc/PID/maps: a path, "[vdso]", "[anon]" */
	const char *build_id;	/* GNU build-id in hex, or NULL */
	__u64 start, limit;	/* [start, limit) in the process */
	__u64 pgoff;		/* the file offset mapped at start */
};

struct frame {
	const char *name;	/* NULL: unnamed, shown by frame__label() */
	const char *module;	/* kernel module, DSO path, or NULL */
	/* Native and JIT frames: where the address was mapped; NULL if unknown. */
	const struct frame_mapping *mapping;
	__u64 addr;		/* as sampled (return addresses not adjusted) */
	/*
	 * From the symbol's start; for an unnamed user frame with a module,
	 * from the start of the module's file (frame__has_file_offset()).
	 */
	__u64 offset;
	const char *func;	/* FRAME_INTERP: the function, without its file */
	__u64 aux;		/* FRAME_INTERP: struct trace_frame's aux */
	/*
	 * Its source line, 0 if unknown: FRAME_INTERP's, or a native frame's
	 * from DWARF (symbols/dwlines.h), in file (NULL if unknown).
	 */
	__u32 line;
	const char *file;
	/*
	 * A native frame whose address is in code inlined into it: those
	 * functions, innermost first, as frames of their own (inlined set,
	 * same address and mapping).  Stacks hold them before this frame.
	 */
	const struct frame *const *inl;
	__u8 nr_inl;
	bool inlined;
	bool renamed;		/* unnamed JIT code looked up again (symbolize.c) */
	__u8 kind;		/* enum frame_kind; FRAME_NONE for a delimiter */
	__u8 flags;		/* enum frame_flags, FRAME_DELIMITER */
	__u8 interp;		/* FRAME_INTERP, FRAME_INTERP_MARK: the
				 * interpreter's kind (src/interp/interp.h) */
};

/* The address a frame is named by: a call's, for a return address. */
static inline __u64 frame__pc(const struct frame *f)
{
	return (f->flags & FRAME_RETADDR) && f->addr ? f->addr - 1 : f->addr;
}

/*
 * --wall: the frame on top of (at the leaf end of) every off-CPU stack,
 * "[off-cpu]", so that blocked time is marked yet stays in its function's
 * tower.  The one frame of its kind: known by its address.
 */
extern const struct frame frame__off_cpu;

static inline bool frame__is_off_cpu(const struct frame *f)
{
	return f == &frame__off_cpu;
}

/*
 * A stand-in for a lost stack, the delimiter, or the off-CPU mark: no
 * address to show.
 */
static inline bool frame__is_marker(const struct frame *f)
{
	return (f->flags & (FRAME_MISSED | FRAME_DELIMITER)) || frame__is_off_cpu(f);
}

/*
 * Unnamed code in anonymous executable memory ("[anon]", "[anon:name]", a
 * memfd): JIT code its runtime's perf map may name later.
 */
static inline bool frame__is_unnamed_jit(const struct frame *f)
{
	const char *m = f->module;

	return !f->name && !frame__is_marker(f) && m &&
	       (!strncmp(m, "[anon", 5) || !strncmp(m, "/memfd:", 7));
}

/* An unnamed native or JIT frame in a module: offset is in its file. */
static inline bool frame__has_file_offset(const struct frame *f)
{
	return !f->name && f->module && !frame__is_marker(f) &&
	       (f->kind == FRAME_NATIVE || f->kind == FRAME_JIT);
}

/* Room for any label frame__label() makes: "[", a file name, "]", NUL. */
#define FRAME_LABEL_MAX 260

/*
 * What a frame is shown as: its name; or, unnamed, the base name of its
 * module in brackets, FlameGraph's and perf's way ("[gzip]",
 * "[libc.so.6]"); a module already in brackets as it is ("[vdso]",
 * "[anon]"); "[kernel]" for a kernel frame with no module; "[unknown]"
 * when there is no module at all.  Returns the name, the module or a
 * constant, or buf (size bytes, FRAME_LABEL_MAX is enough) with the label
 * made there.  Not made safe to print: writers do that.
 */
const char *frame__label(const struct frame *f, char *buf, size_t size);

/*
 * frame__label() that outlives the call: one made is kept in pool
 * (htab.h), once per distinct label.  NULL when out of memory.
 */
struct strpool;
const char *frame__label_kept(const struct frame *f, struct strpool *pool);

/*
 * The names writers give named frames: as symbolized, or with short names
 * (--names short) a demangled C++ or Rust name without its parameters,
 * template arguments and return type (demangle.h's demangle__shorten()),
 * so that "ns::f(int)" and "ns::f(long)" are one "ns::f".  Short names are
 * made once per distinct name and kept here, one copy each: equal short
 * names are one pointer.  A writer sets one up per report (names live as
 * long as the report's records) and frees it after.
 */
struct frame_names {
	bool short_names;
	bool lines;		/* native frames as "NAME (FILE:LINE)" */
	struct htab cache;	/* name pointer -> its short name */
	struct strpool pool;	/* the short names */
};

void frame_names__init(struct frame_names *fn, bool short_names);
void frame_names__free(struct frame_names *fn);

/*
 * A frame's name as a writer shows it: f->name, shortened when fn asks
 * for short names and the name came from the demangler, with its source
 * line when fn asks for lines and DWARF named it ("NAME (FILE:LINE)"); NULL for an
 * unnamed frame (frame__label() names it).  fn may be NULL: full names.
 * Out of memory, the full name.
 */
const char *frame__name(const struct frame *f, struct frame_names *fn);

/* Whether s is "[...]", as pseudo-modules are ("[vdso]", "[anon]"). */
bool trace__is_bracketed(const char *s);

/*
 * Frames are symbolized once per distinct (process, address) and shared by
 * every stack that holds them: a stack is an array of pointers.
 */
struct stack {
	__u32 nr;
	const struct frame *frames[];	/* leaf first */
};

enum part_state {
	PART_ABSENT,		/* no such stack: print nothing */
	PART_OK,
	PART_MISSED,		/* lost: print [Missed ... Stack] */
};

struct part {
	const struct stack *stack;	/* valid when state == PART_OK */
	__u8 state;			/* enum part_state */
	__s32 err;			/* errno of a missed stack */
};

struct record {
	__u32 pid, tid, cpu;
	char comm[TASK_COMM_LEN];
	/*
	 * What count is (bpf/profile.h's enum count_what): samples, or
	 * blocked nanoseconds.  Records of different whats never merge.
	 */
	__u8 what;
	__u64 count;
	struct part parts[NR_PARTS];	/* enum trace_part: leaf end first */
};

/* Which parts of a trace a writer shows, and whether with a delimiter. */
struct trace_view {
	bool parts[NR_PARTS];	/* indexed by enum trace_part */
	bool delimited;		/* -d: a delimiter between kernel and user */
	bool mark_off_cpu;	/* --wall: frame__off_cpu atop off-CPU records */
};

/*
 * A record's trace as a writer sees it, root first.  Segments are runs of a
 * stack's frames, or one marker frame.
 */
struct trace_seg {
	const struct frame *const *frames;	/* leaf first; NULL: the one
						 * frame in marker */
	const struct frame *marker;
	__u32 len;
};

struct trace_iter {
	struct trace_seg segs[2 * NR_PARTS];	/* parts, delimiters, the off-CPU mark */
	__u32 nr_segs;
	__u32 len;		/* frames in all */
};

void trace_iter__init(struct trace_iter *it, const struct record *r,
		      const struct trace_view *v);

/* Frame i, counted from the root (0) to the leaf (len - 1). */
const struct frame *trace_iter__frame(const struct trace_iter *it, __u32 i);

/* A set of records: one report's worth. */
struct records {
	struct record *recs;
	size_t nr, cap;
	struct sym_cache *cache;	/* stacks, frames, and their memory */
	bool own_cache;
	__u64 missed_stacks;	/* stacks printed as [Missed ...] */
	bool missed_enomem;	/* one of them for lack of room */
	__u64 truncated;	/* samples with a stack cut at the depth limit */
};

/* Sum of the records' counts. */
__u64 records__total(const struct records *rs);

#endif /* TRACE_H */
