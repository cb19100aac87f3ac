/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The processes or threads named with -p or -L: one warning when one of
 * them exits.  Sampling goes on: its samples so far are printed at the
 * end, and bcc users expect the duration to hold.
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
};

/* 0, or -ENOMEM after printing so. */
int targets__init(struct targets *t, const struct options *o);

/* Look for the targets that exited since the last call, and say so. */
void targets__check(struct targets *t);

void targets__free(struct targets *t);

#endif /* TARGETS_H */
