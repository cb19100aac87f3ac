// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Event names.  The software and hardware names and the generic cache
 * events follow perf list; "rNNNN" is a raw PMU event in hex.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "loader/events.h"

struct named {
	const char *name;
	__u32 type;
	__u64 config;
	const char *alias;
};

static const struct named named_events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, NULL },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, NULL },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "faults" },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, NULL },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, NULL },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "cs" },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "migrations" },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, NULL },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, NULL },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cpu-cycles" },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, NULL },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, NULL },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, NULL },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branch-instructions" },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, NULL },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, NULL },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "idle-cycles-frontend" },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "idle-cycles-backend" },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, NULL },
};

/* Generic cache events: CACHE-OP-RESULT, e.g. "L1-dcache-load-misses". */
static const char *const caches[PERF_COUNT_HW_CACHE_MAX] = {
	[PERF_COUNT_HW_CACHE_L1D] = "L1-dcache",
	[PERF_COUNT_HW_CACHE_L1I] = "L1-icache",
	[PERF_COUNT_HW_CACHE_LL] = "LLC",
	[PERF_COUNT_HW_CACHE_DTLB] = "dTLB",
	[PERF_COUNT_HW_CACHE_ITLB] = "iTLB",
	[PERF_COUNT_HW_CACHE_BPU] = "branch",
	[PERF_COUNT_HW_CACHE_NODE] = "node",
};

/* Operation and result, as perf joins them: "loads", "load-misses", ... */
static const char *const cache_ops[PERF_COUNT_HW_CACHE_OP_MAX][2] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = { "loads", "load-misses" },
	[PERF_COUNT_HW_CACHE_OP_WRITE] = { "stores", "store-misses" },
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "prefetches", "prefetch-misses" },
};

static void set(struct event_spec *ev, const char *name, __u32 type, __u64 config)
{
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->type = type;
	ev->config = config;
}

static int parse_cache(const char *name, struct event_spec *ev)
{
	for (int c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++) {
		size_t n = strlen(caches[c]);

		if (strncmp(name, caches[c], n) || name[n] != '-')
			continue;
		for (int op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++)
			for (int res = 0; res < 2; res++)
				if (!strcmp(name + n + 1, cache_ops[op][res])) {
					set(ev, name, PERF_TYPE_HW_CACHE,
					    c | (op << 8) | ((__u64)res << 16));
					return 0;
				}
	}
	return -EINVAL;
}

static int parse_raw(const char *name, struct event_spec *ev)
{
	char *end;
	__u64 v;

	if (name[0] != 'r' || !name[1] || strspn(name + 1, "0123456789abcdefABCDEF") != strlen(name + 1))
		return -EINVAL;
	errno = 0;
	v = strtoull(name + 1, &end, 16);
	if (errno || *end)
		return -EINVAL;
	set(ev, name, PERF_TYPE_RAW, v);
	return 0;
}

int event__parse(const char *name, struct event_spec *ev)
{
	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		const struct named *e = &named_events[i];

		if (!strcmp(name, e->name) || (e->alias && !strcmp(name, e->alias))) {
			set(ev, e->name, e->type, e->config);
			return 0;
		}
	}
	if (!parse_cache(name, ev))
		return 0;
	return parse_raw(name, ev);
}

bool event__is_default(const struct event_spec *ev)
{
	return ev->type == PERF_TYPE_SOFTWARE && ev->config == PERF_COUNT_SW_CPU_CLOCK;
}

bool event__is_clock(const struct event_spec *ev)
{
	return ev->type == PERF_TYPE_SOFTWARE && (ev->config == PERF_COUNT_SW_CPU_CLOCK ||
						  ev->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* Can this machine count it?  Open it on ourselves, counting only. */
static bool probe(__u32 type, __u64 config)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void list_one(FILE *out, const char *name, const char *alias, const char *kind,
		     __u32 type, __u64 config)
{
	char label[96];

	if (alias)
		snprintf(label, sizeof(label), "%s OR %s", name, alias);
	else
		snprintf(label, sizeof(label), "%s", name);
	fprintf(out, "  %-44s [%s event]  %s\n", label, kind,
		probe(type, config) ? "supported" : "not supported");
}

void events__list(FILE *out)
{
	char name[64];

	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		const struct named *e = &named_events[i];

		list_one(out, e->name, e->alias,
			 e->type == PERF_TYPE_SOFTWARE ? "Software" : "Hardware",
			 e->type, e->config);
	}
	for (int c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++)
		for (int op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++)
			for (int res = 0; res < 2; res++) {
				snprintf(name, sizeof(name), "%s-%s", caches[c], cache_ops[op][res]);
				list_one(out, name, NULL, "Hardware cache", PERF_TYPE_HW_CACHE,
					 c | (op << 8) | ((__u64)res << 16));
			}
	fprintf(out, "  %-44s [Raw hardware event descriptor]\n", "rNNN");
}
