/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bcc-compatible plain and folded stack output. */
#ifndef OUTPUT_H
#define OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
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
};

/*
 * Print every record, coldest first.  Records that render to the same text
 * are merged; ties in count are ordered by the text.  Returns 0 or a
 * negative errno (a failed write keeps its errno, e.g. -EPIPE, -ENOSPC).
 */
int output__write(FILE *out, const struct records *rs, const struct output_opts *o);

/* The lines output__write() would print: records that render to the same
 * text count once.  0 or a negative errno. */
int output__count(const struct records *rs, const struct output_opts *o, size_t *nr);

#endif /* OUTPUT_H */
