/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where reports go: stdout, or each -o file (with -i and a strftime
 * pattern in -o, one file per interval), each in its own format.  A writer
 * is one destination; the writers are all of a run's, written from the
 * same report, and complete or fail together.
 */
#ifndef WRITER_H
#define WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <linux/types.h>
#include "output/config.h"
#include "output/output.h"
#include "output/outfile.h"
#include "export/otlp_send.h"

struct records;
struct top;

struct writer {
	const struct output_config *cfg;	/* the run's, shared by its writers */
	const char *path;	/* -o FILE or pattern; NULL: stdout */
	enum output_format format;
	bool started;		/* sampling runs: plain files get the header */
	unsigned int files;	/* files put in place */
	FILE *f;		/* the open stream, NULL between interval files */
	struct outfile out;	/* -o: f is out.f, renamed into place on close */
	bool per_interval;	/* -o is a strftime pattern: a file per report */
	struct timespec first;	/* per_interval: the first report's start */
	struct top *top;	/* --top on a terminal: the live view */
	bool header_due;	/* -- CMD on stdout: the plain header, with the first report */
	struct output_opts oo;
	/*
	 * An event other than a clock at -F: the events one sample stood for
	 * in this report, on average (the kernel tunes the period); 0 unknown.
	 */
	__u64 events_per_sample;
	/* --otlp: the sender (export/otlp_send.h), and its counts once closed. */
	struct otlp_sender *otlp;
	struct otlp_stats otlp_final;
};

/*
 * Open the destination spec names (path NULL: stdout), as cfg says; cfg
 * must outlive the writer.  0 or -errno (reported).
 */
int writer__open(struct writer *w, const struct output_config *cfg,
		 const struct output_spec *spec);

/* Sampling has started: write the plain header (bcc's "Sampling at ..."). */
void writer__start(struct writer *w);

/* Write one report covering [start, end] (wall clock).  A per-interval
 * file is left open for writer__close().  0 or -errno (reported, except
 * -EPIPE: the reader went away). */
int writer__write(struct writer *w, const struct records *p, unsigned int n,
		 const struct timespec *start, const struct timespec *end);

/* Is the final, partial interval worth writing?  (Not on a live screen.) */
bool writer__wants_final(const struct writer *w);

/* Flush and sync, checking for errors (a full disk shows here), without
 * putting an -o file in place yet.  0 or -errno (reported). */
int writer__finish(struct writer *w);

/* Finish if not done, and put an -o file in place of the old one. */
int writer__close(struct writer *w);

/* Close without checks, after a failure: an -o file being written is
 * removed, the old one kept. */
void writer__abort(struct writer *w);

struct writers {
	struct output_config cfg;	/* a copy: the caller's may go */
	struct writer w[MAX_OUTPUTS];
	size_t nr;
};

/* A writer for every output cfg names, or one for stdout.  On failure none
 * is left open and no file is created.  0 or -errno (reported). */
int writers__open(struct writers *ws, const struct output_config *cfg);
void writers__start(struct writers *ws);

/* For the next report: what one sample stood for (writer.events_per_sample). */
void writers__set_events_per_sample(struct writers *ws, __u64 n);

/* The report to every writer; per-interval files are put in place only
 * once all are written.  0 or -errno (reported). */
int writers__write(struct writers *ws, const struct records *p, unsigned int n,
		   const struct timespec *start, const struct timespec *end);
bool writers__wants_final(const struct writers *ws);

/* The live view of --top on a terminal, or NULL. */
struct top *writers__top(const struct writers *ws);

/* Finish every writer, then put every file in place. */
int writers__close(struct writers *ws);
void writers__abort(struct writers *ws);

/* "cpu.svg, cpu.pb.gz" or "3 files cpu-%H%M%S.folded": what the run wrote
 * to files, for the summary; "" when it wrote to stdout only. */
void writers__describe(const struct writers *ws, char *buf, size_t sz);

#endif /* WRITER_H */
