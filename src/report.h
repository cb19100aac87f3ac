/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A perf-report-style summary: the hottest functions, self and total. */
#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>
#include <linux/types.h>

struct records;
struct output_opts;

/*
 * One line per (comm, module, symbol), sorted by self samples: a sample's
 * self function is its leaf frame; its total ("children") counts every
 * distinct function on its stack once.  An unnamed frame's symbol is its
 * label (trace.h's frame__label(): "[gzip]"), so that the addresses of one
 * module no symbol covers are one line.  limit 0 prints every line.
 * 0 or a negative errno from writing.
 */
int report__write(FILE *out, const struct records *p, const struct output_opts *oo,
		 size_t limit);

#endif /* REPORT_H */
