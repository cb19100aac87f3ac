/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The processes or threads named with -p or -L: one warning when one of
 * them exits.  Its samples so far are printed at the end.  With -p, once
 * every process has exited the run ends as Ctrl-C would end it (perf and
 * py-spy do the same): nothing is left to sample.  -L goes on until the
 * duration, as bcc's tools do.
 */
#ifndef TARGETS_H
#define TARGETS_H

#include <stdbool.h>
#include "cli/opts.h"

struct targets {
	const __u32 *ids;	/* the -p PIDs, else the -L TIDs */
	size_t nr;
	bool pids;
	bool *gone;		/* per id: its exit was reported */
	size_t nr_gone;
};

/* 0, or -ENOMEM after printing so. */
int targets__init(struct targets *t, const struct options *o);

/*
 * Look for the targets that exited since the last call, and say so.
 * true when the run should end: every -p process has exited.
 */
bool targets__check(struct targets *t);

void targets__free(struct targets *t);

#endif /* TARGETS_H */
