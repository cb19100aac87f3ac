/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * gzip'd pprof output (github.com/google/pprof, proto/profile.proto), for
 * `go tool pprof`, pprof's web UI, and the services that take its files.
 */
#ifndef PPROF_H
#define PPROF_H

#include <stdio.h>
#include <linux/types.h>

struct records;
struct output_opts;

struct pprof_meta {
	__u64 time_nanos;	/* start, wall clock */
	__u64 duration_nanos;
	__u64 period;		/* 1e9/freq for -F; the -c period otherwise */
	/* Unit of one period; NULL, NULL: "cpu", "nanoseconds". */
	const char *period_type, *period_unit;
};

/*
 * Write p as one gzip member holding a Profile message.
 *
 * Sample types are samples/count and period_type/period_unit (value
 * count * period); pprof shows the last one by default, as for Go's own
 * CPU profiles.  Off-CPU (oo->kind, output.h): off_cpu/nanoseconds, the
 * time blocked.  Wall-clock: wall, cpu and off_cpu, all nanoseconds, wall
 * the default; an on-CPU sample is oo->period_ns of wall and cpu, and an
 * off-CPU stack has "[off-cpu]" at its leaf (a function of that name).  Each record is one Sample, leaf first, labelled pid (num),
 * comm (str) and, when non-zero, tid (num).  Kernel frames sit in one
 * "[kernel.kallsyms]" mapping; user frames in the mapping the symbolizer
 * found them in (trace.h's frame->mapping), else by their module alone.  A
 * frame whose name is unknown is a Location with an address and its
 * mapping but no Line (and the mapping has no has_functions): pprof shows
 * it as [BASENAME] of the mapping, and -symbolize=local names it from a
 * copy of the file with symbols.  [Missed ... Stack] is a function of
 * that name.  oo says which stacks to include (want_user, want_kernel); the
 * comm root and the "-" delimiter of folded output are not frames here.
 *
 * Returns 0 or a negative errno (-ENOMEM, or a failed write's errno).
 */
int pprof__write(FILE *out, const struct records *p, const struct output_opts *oo,
		 const struct pprof_meta *m);

#endif /* PPROF_H */
