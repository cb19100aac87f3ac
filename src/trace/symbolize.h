/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * From counted keys to symbolized records.  Stored stacks come from a
 * trace source as typed frames; each frame is named by the resolver for its
 * kind.  Each distinct stack (by reference, and process for user stacks) is
 * read and named once, however many records share it.  A process is its
 * pid and start (count_key.start): processes that had one pid in turn are
 * named apart.
 */
#ifndef SYMBOLIZE_H
#define SYMBOLIZE_H

#include <stdbool.h>
#include <linux/types.h>
#include "bpf/profile.h"
#include "trace/trace.h"

struct knames;
struct usyms;
struct sample;
struct interps;

/*
 * Where stored stacks are read: the BPF session, or a test's synthetic
 * traces.  read() fills frames (room for MAX_STACK_DEPTH), leaf first,
 * and returns their number or a negative errno.  want(), when set, is
 * told the stacks about to be read, those not named yet (repeats
 * allowed), so that a source can fetch them in one go: read() returns
 * the same whether it did or not.
 */
struct trace_source {
	int (*read)(void *ctx, const struct stack_ref *ref, struct trace_frame *frames);
	void (*want)(void *ctx, const struct stack_ref *refs, size_t n);
	void *ctx;
};

/*
 * Names frames of one kind.  prepare(), when set, is told every pc of a
 * stack about to be resolved, so that a resolver can look them up in one
 * go; resolve() fills f->name, module and offset (from frame__pc(f)), and
 * may refine f->kind (native code found to be JIT code).  Code in a
 * process's mapping also fills *map (zeroed before the call; map->file
 * set says it is filled): the symbolizer keeps one shared copy per
 * distinct mapping and points f->mapping at it.  pid and start are the
 * sample's process (count_key.pid and .start).
 */
struct resolver {
	void (*prepare)(void *ctx, const __u64 *pcs, int n);
	void (*resolve)(void *ctx, __u32 pid, __u32 start, struct frame *f,
			struct frame_mapping *map);
	void *ctx;
};

struct symbolizer {
	struct trace_source source;
	struct resolver resolvers[NR_FRAME_KINDS];	/* unset: [unknown] */
	/*
	 * Stacks and frames symbolized so far.  NULL: each set of records
	 * gets its own.  Shared across reports only while stack ids stay
	 * valid, that is, without -i (which recycles them).
	 */
	struct sym_cache *cache;
	/*
	 * The interpreters (src/interp/interp.h) that name FRAME_INTERP frames
	 * and marks, and whose frames take the place of their evaluation
	 * loop's native frame; NULL: none.
	 */
	const struct interps *interps;
	/*
	 * Native frames' source lines and inlined functions from DWARF
	 * (usyms__lines()); NULL (by default): none, no DWARF opened.  A frame always keeps its inlined
	 * functions (struct frame.inl: pprof's lines); inlines: they are
	 * frames of their own in the stack too.
	 */
	struct usyms *lines;
	bool inlines;
};

/* Kernel frames named by kn, native and JIT frames by us (either may be NULL). */
void symbolizer__init(struct symbolizer *sym, const struct trace_source *source,
		      struct knames *kn, struct usyms *us, struct sym_cache *cache);

/*
 * Name native frames' lines and inlined functions from us's DWARF (NULL:
 * not, the default): only when an output shows them, as a file's DWARF is
 * costly to read and may be crafted.
 */
void symbolizer__set_lines(struct symbolizer *sym, struct usyms *us);

/*
 * Whether inlined functions get frames of their own in stacks (--inline;
 * by default they do not: folded lines stay those of bcc and perf script).
 */
void symbolizer__set_inlines(struct symbolizer *sym, bool inlines);

/* Name FRAME_INTERP frames through ints (NULL: they stay unnamed). */
void symbolizer__set_interps(struct symbolizer *sym, const struct interps *ints);

/* Build rs from samples.  0 or -ENOMEM. */
int records__build(struct records *rs, const struct symbolizer *sym,
		   const struct sample *samples, size_t nr);

/*
 * The same a batch at a time (session__drain_each()), so that the samples
 * need not be held all at once: records__init() makes rs empty, each
 * records__add() appends a record per sample.  0 or -ENOMEM (rs is freed).
 */
int records__init(struct records *rs, const struct symbolizer *sym);
int records__add(struct records *rs, const struct symbolizer *sym,
		 const struct sample *samples, size_t nr);
void records__free(struct records *rs);

struct sym_cache *sym_cache__new(void);
void sym_cache__free(struct sym_cache *c);

/*
 * Free the cache's lookup tables, keeping the stacks, frames and names
 * that records point to: for a cache that names nothing more, before its
 * records are written (at scale, the tables are a few MiB).  A cache
 * looked up after this names every stack anew.
 */
void sym_cache__forget(struct sym_cache *c);

/*
 * Read and symbolize, ahead of the report, the stacks these samples refer
 * to, into sym->cache: stacks are immutable once stored, so the report at
 * the end has only the newest ones left to read.  0 or -ENOMEM.
 */
int symbolizer__prefetch(const struct symbolizer *sym, const struct sample *samples,
			 size_t nr);

#endif /* SYMBOLIZE_H */
