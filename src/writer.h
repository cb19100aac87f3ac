/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where reports go: stdout, one -o file, or with -i and a strftime pattern
 * in -o, one file per interval; and in which format.
 */
#ifndef WRITER_H
#define WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "opts.h"
#include "output.h"
#include "outfile.h"

struct records;
struct usyms;

struct writer {
	const struct options *o;
	FILE *f;		/* the open stream, NULL between interval files */
	struct outfile out;	/* -o: f is out.f, renamed into place on close */
	bool per_interval;	/* -o is a strftime pattern: a file per report */
	bool screen;		/* --top on a terminal: redraw in place */
	bool header_due;	/* -- CMD on stdout: the plain header, with the first report */
	struct output_opts oo;
	struct usyms *us;	/* for pprof's mappings; may be NULL */
};

/*
 * Open the destination and write the plain header.  us names pprof's
 * mappings (NULL: by the frames' modules alone).  0 or -errno (reported).
 */
int writer__open(struct writer *w, const struct options *o, struct usyms *us);

/* Write one report covering [start, end] (wall clock).  0 or -errno
 * (reported, except -EPIPE: the reader went away). */
int writer__write(struct writer *w, const struct records *p, unsigned int n,
		 const struct timespec *start, const struct timespec *end);

/* Is the final, partial interval worth writing?  (Not on a live screen.) */
bool writer__wants_final(const struct writer *w);

/* Flush and close, checking for errors (a full disk shows here); an -o
 * file replaces the old one only now. */
int writer__close(struct writer *w);

/* Close without checks, after a failure: an -o file being written is
 * removed, the old one kept. */
void writer__abort(struct writer *w);

#endif /* WRITER_H */
