/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The writers' view of the command line: the one place that turns options
 * into the output configuration (output/config.h).
 */
#ifndef CLI_OUTPUT_CONFIG_H
#define CLI_OUTPUT_CONFIG_H

#include "cli/opts.h"
#include "output/config.h"

/*
 * Fill oc from o, settled (options__parse() and options__check() done).
 * oc borrows o's strings: o must outlive the writers opened with it.
 */
void options__output_config(const struct options *o, struct output_config *oc);

#endif /* CLI_OUTPUT_CONFIG_H */
