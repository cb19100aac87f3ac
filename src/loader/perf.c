// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "loader/perf.h"

int perf__open_sampling(const struct perf_sampling *ps, int cpu)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = ps->type;
	attr.config = ps->config;
	if (ps->freq) {
		attr.freq = 1;
		attr.sample_freq = ps->freq;
	} else {
		attr.sample_period = ps->period;
	}
	/* No ring buffer is ever mapped: the BPF program does all the work. */
	fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
		     PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}
