/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One profiling run: attach, wait (following processes meanwhile), and
 * report, once at the end or every -i interval.
 */
#ifndef RUN_H
#define RUN_H

#include <signal.h>
#include "cli/opts.h"

/* Returns the process exit status.  *stop is set by signal handlers. */
int run__exec(const struct options *o, const struct limits *lim,
		volatile sig_atomic_t *stop);

#endif /* RUN_H */
