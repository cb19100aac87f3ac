/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How the run's modules are built from the options and wired to each
 * other, in one place.  The run (run.c) only calls these, in this order:
 *
 *	setup__command()	profile -- CMD, forked and held
 *	setup__symbols()	debuginfod, then usyms that fetches through it
 *	(the writers open)	they name frames through usyms
 *	setup__sampler()	the interpreters (interp.h); the BPF
 *				session, loaded; the tracker that follows
 *				processes into usyms, the unwinder and the
 *				interpreters; the unwinder that fills the
 *				session's tables
 *	(attach)
 *	setup__release_command()
 *				CMD execs, followed from its first record
 *	setup__knames()		kernel names, readied while samples come in
 *	setup__free()		all of them, users before what they use
 *
 * A module that cannot be built is said in one warning and lived without:
 * its pointer stays NULL, and what depends on it does without too.  Only
 * the session is needed.
 */
#ifndef SETUP_H
#define SETUP_H

#include <signal.h>
#include "cli/opts.h"

struct session;
struct debuginfod;
struct usyms;
struct tracker;
struct unwind;
struct knames;
struct interps;
struct command;

/* The run's modules; the run owns them, through setup__free(). */
struct modules {
	struct session *s;
	struct debuginfod *dfd;		/* NULL: no debuginfod servers */
	struct usyms *us;		/* NULL: user frames are [unknown] */
	struct tracker *tracker;	/* NULL: processes are read at the end only */
	struct unwind *uw;		/* NULL: user stacks by frame pointer only */
	struct knames *kn;		/* NULL: kernel frames are not named (-U) */
	struct interps *ints;		/* NULL: no interpreter frames */
};

/*
 * profile -- CMD.  The command is forked first of all, before profile
 * opens anything (no file of profile's reaches it), and held until
 * sampling is attached; the run ends when it exits, and profile then exits
 * with its status (command__end()).  0, with *cmd NULL without a command;
 * -ECHILD after printing why it could not be forked.
 */
int setup__command(struct command **cmd, const struct options *o);

/*
 * Let it exec.  Known to usyms from now on, so that the records of its
 * exec, its mappings and its children are followed from the start.  0, or
 * the exec's -errno (command__release()).
 */
int setup__release_command(const struct modules *m, struct command *cmd);

/* debuginfod when DEBUGINFOD_URLS names servers, and usyms.  *stop cuts long reads short. */
void setup__symbols(struct modules *m, const struct options *o,
		    volatile sig_atomic_t *stop);

/*
 * The session, opened and loaded but not attached, and the modules that
 * follow it.  cmd: profile -- CMD, whose processes the sampler follows,
 * else NULL.  0, or -errno after the session printed why.
 */
int setup__sampler(struct modules *m, const struct options *o,
		   const struct limits *lim, const struct command *cmd);

void setup__knames(struct modules *m, const struct options *o);

/* The completeness warning's advice: what would make more stacks whole. */
const char *setup__stack_advice(const struct modules *m, const struct options *o);

void setup__free(struct modules *m);

#endif /* SETUP_H */
