/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bcc-compatible plain and folded stack output. */
#ifndef OUTPUT_H
#define OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "output/config.h"
#include "trace/trace.h"

struct output_opts {
	struct trace_view view;	/* the parts shown; -d: "--" / "-" between */
	bool folded;
	bool annotations;	/* -a: "_[k]" after kernel frames */
	bool verbose;		/* addresses, offsets and modules */
	bool per_cpu;		/* records carry a CPU: cpu_N root frame */
	bool per_thread;	/* records carry a TID: comm-PID/TID */
	/*
	 * --unknown=module: an unnamed frame is the label of its module
	 * ("[gzip]", trace.h's frame__label()), not bcc's "[unknown]".
	 */
	bool module_labels;
	/*
	 * --names short: demangled C++ and Rust names without parameters and
	 * template arguments (trace.h's frame__name()).  Set for the SVG and
	 * --top by default; plain and folded output keep bcc's full names.
	 */
	bool short_names;
	/*
	 * --lines: a native frame whose DWARF names its source line is shown
	 * as "NAME (FILE:LINE)", FILE's base name, as Python frames are
	 * (trace.h's frame__name()); not in pprof, which has fields for them.
	 */
	bool lines;
	/*
	 * What counts are (config.h): samples, or with --off-cpu and --wall
	 * time, an on-CPU sample standing for period_ns (--wall).  Time is
	 * printed in microseconds; --wall marks off-CPU stacks with
	 * frame__off_cpu (view.mark_off_cpu).
	 */
	enum profile_kind kind;
	__u64 period_ns;
};

/* Whether counts are time (--off-cpu, --wall), not samples. */
static inline bool output__timed(const struct output_opts *o)
{
	return o->kind != PROFILE_CPU;
}

/*
 * A record's weight in the report's unit: its count in a CPU profile;
 * nanoseconds in an off-CPU or wall-clock one, where an on-CPU sample
 * stands for period_ns.  Writers add, merge and sort weights, and turn
 * them into microseconds only to print them: lines then add up exactly.
 */
static inline __u64 output__weight(const struct output_opts *o, const struct record *r)
{
	if (o->kind == PROFILE_CPU || r->what == COUNT_OFF_CPU)
		return r->count;
	return r->count * o->period_ns;
}

/* The weight of every record. */
__u64 output__total(const struct records *rs, const struct output_opts *o);

/* Nanoseconds as the microseconds printed: rounded to the nearest. */
static inline __u64 output__us(__u64 ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

/*
 * What a line prints for a weight: itself in a CPU profile, else its
 * nanoseconds in microseconds.
 */
static inline __u64 output__shown(const struct output_opts *o, __u64 weight)
{
	return output__timed(o) ? output__us(weight) : weight;
}

/*
 * Print every record, coldest first.  Records that render to the same text
 * are merged; ties in count are ordered by the text.  Off-CPU and
 * wall-clock lines end with their time in microseconds, as bcc's
 * offcputime prints it, plain or folded (-f); merged in nanoseconds first,
 * then rounded.  Returns 0 or a negative errno (a failed write keeps its
 * errno, e.g. -EPIPE, -ENOSPC).
 */
int output__write(FILE *out, const struct records *rs, const struct output_opts *o);

/* The lines output__write() would print: records that render to the same
 * text count once.  0 or a negative errno. */
int output__count(const struct records *rs, const struct output_opts *o, size_t *nr);

#endif /* OUTPUT_H */
