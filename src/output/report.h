/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A perf-report-style summary: the hottest functions, self and total; and
 * the table behind it, which --top (top.h) keeps across intervals.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "lib/htab.h"

struct records;
struct output_opts;
struct strbuf;

/*
 * One line per (comm, module, symbol): a sample's self function is its
 * leaf frame; its total ("children") counts every distinct function on
 * its stack once.  An unnamed frame's symbol is its label (trace.h's
 * frame__label(): "[gzip]"), so that the addresses of one module no
 * symbol covers are one line.  The strings are the table's own copies, as
 * read: unsafe bytes are made '?' only when printed (report__cell()).
 */
struct report_entry {
	const char *comm;
	const char *module;	/* "[kernel]", "[python]" (an interpreter's frame),
				 * a DSO basename, or "[unknown]" */
	const char *symbol;	/* a name, or frame__label()'s "[gzip]" */
	double self, total;	/* samples; --top decays them */
	__u64 stamp;		/* last record counted in total, for "once" */
};

struct report_table {
	struct report_entry *ents;	/* in the order first seen */
	size_t nr, cap;
	struct htab index;	/* hash of (comm, module, symbol) -> id in ents */
	__u64 records;		/* records counted so far: stamps */
	double all;		/* the records' counts (decayed like the rest) */
};

/* Count every record of p into t.  0 or -ENOMEM (t keeps what it had). */
int report_table__add(struct report_table *t, const struct records *p,
		      const struct output_opts *oo);

/*
 * Multiply every weight by factor, then drop the entries whose self and
 * total are both below floor: a decayed table stays as big as what is
 * still running, not as everything ever seen.
 */
void report_table__scale(struct report_table *t, double factor, double floor);

/* Forget every entry. */
void report_table__clear(struct report_table *t);
void report_table__free(struct report_table *t);

/*
 * The entries sorted by self, then total, symbol, comm, module, in a new
 * array the caller frees (*out NULL for an empty table).  0 or -ENOMEM.
 */
int report_table__sorted(const struct report_table *t, struct report_entry ***out);

/*
 * Display columns of s as printed by report__cell(): an ASCII or unsafe
 * byte is one; any other character one below U+1100 and in General
 * Punctuation, two elsewhere.  Wide characters are never counted short,
 * so that a line never runs past the width it was cut to.
 */
size_t report__cols(const char *s);

/*
 * Append s to sb in at most cols display columns: a longer s is cut and
 * ends with "…".  Bytes that are not safe text (text.h) print as '?'.
 * With pad, spaces fill the cell to cols.
 */
void report__cell(struct strbuf *sb, const char *s, size_t cols, bool pad);

/*
 * The perf-report-style table of p, sorted by self samples.  The Command
 * and Shared Object columns are as wide as their longest text (no
 * narrower than before: 16 and 24, and cut with "…" past 16 and 40); the
 * Symbol column is last and never cut.  limit 0 prints every line.
 * 0 or a negative errno from writing.
 */
int report__write(FILE *out, const struct records *p, const struct output_opts *oo,
		 size_t limit);

#endif /* REPORT_H */
