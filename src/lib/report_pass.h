/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The end of a run.  Each module that keeps statistics prints its own
 * lines, through one function of this shape in its own file:
 *
 *	void X__report(const struct X *x, const __u64 *counters,
 *		       enum report_pass pass);
 *
 * counters is the sampler's array (NR_COUNTERS, bpf/profile.h), passed
 * only to the modules whose work the BPF side counts.  x may be NULL: a
 * module that did not run says nothing, or prints zeros where scripts
 * expect its line.
 *
 * The run calls each module once for its warnings, then, from -v, once
 * for its statistics, so that every warning comes before the first -v
 * line.  The order of the calls is the run's (run/run.c): it is the order
 * of the lines that scripts have always read.  Where that order puts one
 * module's line among another's, the module has a second, named function
 * for it (session__report_verifier(), unwind__report_tables()).  A line
 * that joins two modules' numbers takes the second module as an argument
 * (tracker__report() and usyms's processes).
 */
#ifndef REPORT_PASS_H
#define REPORT_PASS_H

enum report_pass {
	REPORT_WARN,	/* warnings, whatever the verbosity */
	REPORT_STATS,	/* the -v lines: called from -v only */
};

#endif /* REPORT_PASS_H */
