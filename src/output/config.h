/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the writers are told of a run, and all they are told: where each
 * report goes and in what format, what a report shows, and what was
 * sampled (for the plain header, the SVG subtitle and pprof's period).
 * The command line fills it in one place (cli/output_config.h); writers
 * read nothing of the options.  Strings are borrowed, not copied: whoever
 * fills it keeps them alive until the writers are closed.
 */
#ifndef OUTPUT_CONFIG_H
#define OUTPUT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct otlp_config;

enum output_format {
	FMT_UNSET,
	FMT_PLAIN,
	FMT_FOLDED,
	FMT_SVG,
	FMT_PPROF,
	FMT_REPORT,
	FMT_OTLP,	/* --otlp: sent to a collector, not written */
};

/*
 * What a profile measures, and so what its counts are: samples of the
 * event; blocked time (--off-cpu); or both in one unit (--wall), each
 * on-CPU sample standing for period_ns.  Writers print time in
 * microseconds (pprof: nanoseconds) for the last two.
 */
enum profile_kind {
	PROFILE_CPU,
	PROFILE_OFF_CPU,
	PROFILE_WALL,
};

/* The most -o outputs one run writes. */
#define MAX_OUTPUTS 16

/* One -o: a file name (or, with -i, a strftime pattern) and its format. */
struct output_spec {
	const char *path;
	enum output_format format;	/* from the name, else the one asked for */
};

/* --names: left to each format (short for the SVG and --top), or chosen. */
enum output_names {
	NAMES_BY_FORMAT,
	NAMES_FULL,
	NAMES_SHORT,
};

struct output_config {
	/* Where reports go. */
	struct output_spec outputs[MAX_OUTPUTS];	/* every -o, in order */
	size_t nr_outputs;	/* 0: one report to stdout, in format */
	enum output_format format;
	__u64 interval;		/* -i seconds between reports; 0: one report */
	bool top;		/* --top: a live view when stdout is a terminal */
	__u64 limit;		/* --limit: report lines, 0 for all */

	/* What a report shows. */
	bool user, kernel;	/* the stacks shown (-U, -K leave out one) */
	bool delimited;		/* -d */
	bool annotations;	/* -a */
	bool verbose;		/* -v: addresses, offsets and modules */
	bool per_cpu, per_thread;
	bool module_labels;	/* --unknown=module */
	bool lines;		/* --lines: native frames named with their source line */
	enum output_names names;
	const char *title;	/* SVG: --title, or NULL */
	bool inverted;		/* SVG: an icicle graph */
	double min_width;	/* SVG: percent */
	const char *cmdline;	/* SVG subtitle: the command line, or NULL */

	/* What was sampled. */
	const char *event;	/* the event's name */
	bool event_default;	/* bcc's own event: the header does not name it */
	bool event_clock;	/* a clock: pprof weighs samples in nanoseconds */
	__u64 freq;		/* -F; 0: every period events */
	__u64 period;		/* -c */
	const char *pids;	/* -p as typed, or NULL */
	const char *tids;	/* -L as typed, or NULL */
	/*
	 * -- CMD: its program name, or NULL.  Its output shares stdout, so the
	 * plain header waits there for the first report.
	 */
	const char *cmd;
	int cpu;		/* -C, -1 for all */
	__u64 duration;		/* seconds; 0: until stopped */
	enum profile_kind kind;	/* PROFILE_CPU unless --off-cpu or --wall */
	__u64 period_ns;	/* a clock event at -F: 1e9 / F; 0 otherwise */

	/* --otlp: where and how profiles are sent (export/otlp_config.h). */
	const struct otlp_config *otlp;
};

#endif /* OUTPUT_CONFIG_H */
