/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Opening the sampling perf events. */
#ifndef PERF_H
#define PERF_H

#include <linux/types.h>

struct perf_sampling {
	__u32 type;		/* PERF_TYPE_* */
	__u64 config;		/* PERF_COUNT_* */
	__u64 freq;		/* samples per second, or 0 */
	__u64 period;		/* events per sample when freq is 0 */
};

/*
 * Open a sampling event on one CPU for every task.  Returns the fd, or a
 * negative errno: -ENODEV for an offline CPU, -ENOENT/-EOPNOTSUPP when the
 * machine has no such event.
 */
int perf__open_sampling(const struct perf_sampling *ps, int cpu);

#endif /* PERF_H */
