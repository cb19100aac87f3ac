/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interactive SVG flame graphs: one self-contained file (inline CSS and
 * JavaScript, nothing fetched) that a browser opens directly.
 */
#ifndef SVG_H
#define SVG_H

#include <stdbool.h>
#include <stdio.h>

struct records;
struct output_opts;

/* The CLI's --min-width default, in percent of all samples. */
#define SVG_MIN_WIDTH_DEFAULT 0.1

struct svg_opts {
	/*
	 * NULL: "CPU Flame Graph" ("Icicle Graph" inverted); "Off-CPU Time
	 * Flame Graph", "Wall-Clock Flame Graph" for those kinds.
	 */
	const char *title;
	const char *subtitle;	/* NULL: none */
	bool inverted;		/* icicle graph: root at the top */
	/*
	 * Frames narrower than this percentage of all samples are not drawn,
	 * nor anything above them, which keeps big profiles small.  0 draws
	 * every frame: set it to SVG_MIN_WIDTH_DEFAULT for the usual default.
	 */
	double min_width;
};

/*
 * Write p as a flame graph.  The stacks are the folded ones (see
 * output.h): comm at the root, then user frames, "-" between user and
 * kernel when oo->delimited, then kernel frames, leaf on top; oo's
 * want_user, want_kernel and annotations apply as in folded output.  Frames
 * with the same name under the same parent are merged, and siblings are
 * ordered by name.  An unnamed frame is its module's label (trace.h's
 * frame__label(): "[gzip]"), and its tooltip says where it is: the module
 * and the offset in its file ("/usr/bin/gzip+0x1a2b"), or the address
 * when it has no file; a box that merged unnamed frames at several places
 * says "several addresses" (or "several modules": two files of one base
 * name).  Hovering shows a frame's name, samples and percentage;
 * clicking zooms into it; Ctrl-F or "Search" highlights the frames whose
 * name matches a regular expression and shows the share of samples they
 * cover (also given as ?s=REGEX in the file's URL).  so may be NULL.
 *
 * With oo->short_names, demangled C++ and Rust names are shortened
 * (trace.h's frame__name()): "ns::Foo<int>::f(int) const" is drawn, and
 * its tooltip named, "ns::Foo::f", and sibling frames whose short names
 * are equal merge into one box.
 *
 * Colours tell kernel (orange), user native (red), JIT (green: module
 * "[anon]", a perf map, or a named user frame with no module), and
 * unnamed frames and [Missed ...] (grey) apart; a name always gets the same shade.
 *
 * Off-CPU and wall-clock profiles (oo->kind, output.h) are drawn in
 * nanoseconds (data-x, data-w) and say microseconds in the tooltips;
 * frames whose time is all off-CPU are blue (FlameGraph's off-CPU
 * colours), and the default title says what was measured.
 *
 * Returns 0 or a negative errno (-ENOMEM, or a failed write's errno).
 */
int svg__write(FILE *out, const struct records *p, const struct output_opts *oo,
	      const struct svg_opts *so);

#endif /* SVG_H */
