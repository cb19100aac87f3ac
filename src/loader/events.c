// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Event names.  The software and hardware names and the generic cache
 * events follow perf list; "rNNNN" is a raw PMU event in hex;
 * "CATEGORY:NAME" a tracepoint.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "loader/events.h"
#include "lib/log.h"

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

static int parse_tracepoint(const char *name, struct event_spec *ev);
static void list_tracepoints(FILE *out);

int event__parse(const char *name, struct event_spec *ev)
{
	if (strchr(name, ':'))
		return parse_tracepoint(name, ev);
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
	list_tracepoints(out);
}

/*
 * Tracepoints, "CATEGORY:NAME" as perf spells them, found under tracefs:
 * its own mount first, then the older one inside debugfs.
 */
static const char *const tracefs_roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static const char *tracefs_root(void)
{
	char path[64];

	for (size_t i = 0; i < sizeof(tracefs_roots) / sizeof(tracefs_roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events", tracefs_roots[i]);
		if (!access(path, F_OK))
			return tracefs_roots[i];
	}
	return NULL;
}

/*
 * Mounted at its usual place when neither is, as perf does: a fresh
 * system (or a container) may have tracefs but not mounted.
 */
static const char *tracefs_mount(void)
{
	const char *root = tracefs_root();

	if (root)
		return root;
	if (mount("nodev", tracefs_roots[0], "tracefs", 0, NULL))
		return NULL;
	pr_warn("mounted tracefs at %s, to find tracepoints", tracefs_roots[0]);
	return tracefs_root();
}

/* A category or a name: what tracefs makes directories of, nothing else. */
static bool tp_word(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
			return false;
	return s[0] != '.';
}

bool event__is_tracepoint(const struct event_spec *ev)
{
	return ev->type == PERF_TYPE_TRACEPOINT;
}

int event__tracepoint_path(const char *name, char *path, size_t sz)
{
	const char *colon = strchr(name, ':');
	const char *root;

	if (!colon || strlen(name) >= sizeof(((struct event_spec *)0)->name) ||
	    !tp_word(name, colon - name) || !tp_word(colon + 1, strlen(colon + 1)))
		return -EINVAL;
	root = tracefs_mount();
	if (!root)
		return -ENODEV;
	snprintf(path, sz, "%s/events/%.*s/%s/id", root, (int)(colon - name), name, colon + 1);
	return 0;
}

/* "sched:sched_switch": its id under tracefs, or -ENOENT. */
static int parse_tracepoint(const char *name, struct event_spec *ev)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd, err;

	err = event__tracepoint_path(name, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	set(ev, name, PERF_TYPE_TRACEPOINT, strtoull(buf, NULL, 10));
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every CATEGORY:NAME under tracefs, sorted; NULL when there is none. */
static char **tracepoint_names(size_t *nr)
{
	char **names = NULL, **more, path[PATH_MAX];
	const char *root = tracefs_mount();
	size_t n = 0, cap = 0;
	struct dirent *c, *e;
	DIR *cats, *evs;

	if (!root)
		return NULL;
	snprintf(path, sizeof(path), "%s/events", root);
	cats = opendir(path);
	if (!cats)
		return NULL;
	while ((c = readdir(cats))) {
		if (c->d_type != DT_DIR || c->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", root, c->d_name);
		evs = opendir(path);
		if (!evs)
			continue;
		while ((e = readdir(evs))) {
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				more = realloc(names, cap * sizeof(*names));
				if (!more)
					break;
				names = more;
			}
			if (asprintf(&names[n], "%s:%s", c->d_name, e->d_name) < 0)
				break;
			n++;
		}
		closedir(evs);
	}
	closedir(cats);
	if (names)
		qsort(names, n, sizeof(*names), cmp_names);
	*nr = n;
	return names;
}

/* After the others, as perf list puts them; unprobed, all of one kind. */
static void list_tracepoints(FILE *out)
{
	size_t nr = 0;
	char **names = tracepoint_names(&nr);

	if (!names) {
		fprintf(out, "  %-44s [Tracepoint event]  no tracefs to list them from\n",
			"CATEGORY:NAME");
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		fprintf(out, "  %-44s [Tracepoint event]\n", names[i]);
		free(names[i]);
	}
	free(names);
}
