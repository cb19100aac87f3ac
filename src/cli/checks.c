// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Validation that needs the running system: sample-rate and stack-depth
 * sysctls, online CPUs, live PIDs, cgroup v2 directories, pinned maps.  All
 * of it runs before anything is loaded, so that a bad command line costs
 * nothing and exits with a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cli/opts.h"
#include "export/otlp_config.h"
#include "lib/log.h"

/* A small /proc or /sys file into buf, NUL-terminated.  0 or -errno. */
static int read_small_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

static int read_sysctl_u64(const char *path, __u64 *out)
{
	char buf[64];
	int err = read_small_file(path, buf, sizeof(buf));

	if (err)
		return err;
	buf[strcspn(buf, "\n")] = '\0';
	return options__parse_u64(buf, 0, ~0ULL, out);
}

static int add_cpu_range(bool **online, int *nr, __u64 lo, __u64 hi)
{
	bool *tmp;

	if (lo > hi || hi >= 1U << 20)
		return -EINVAL;
	if ((int)hi >= *nr) {
		tmp = realloc(*online, (hi + 1) * sizeof(**online));
		if (!tmp)
			return -ENOMEM;
		memset(tmp + *nr, 0, (hi + 1 - *nr) * sizeof(*tmp));
		*online = tmp;
		*nr = hi + 1;
	}
	for (__u64 c = lo; c <= hi; c++)
		(*online)[c] = true;
	return 0;
}

/* Parse the kernel's CPU list format, "0-3,5,7-8", into a mask. */
int options__parse_cpu_list(const char *s, bool **online, int *nr)
{
	char item[64], *dash;
	__u64 lo, hi;
	int err;

	*online = NULL;
	*nr = 0;
	while (*s && *s != '\n') {
		size_t len = strcspn(s, ",\n");

		if (len == 0 || len >= sizeof(item))
			goto fail;
		memcpy(item, s, len);
		item[len] = '\0';
		dash = strchr(item, '-');
		if (dash)
			*dash = '\0';
		if (options__parse_u64(item, 0, INT_MAX, &lo))
			goto fail;
		hi = lo;
		if (dash && options__parse_u64(dash + 1, 0, INT_MAX, &hi))
			goto fail;
		err = add_cpu_range(online, nr, lo, hi);
		if (err)
			goto fail;
		s += len;
		if (*s == ',')
			s++;
	}
	return *nr ? 0 : -EINVAL;
fail:
	free(*online);
	*online = NULL;
	*nr = 0;
	return -EINVAL;
}

int limits__read(struct limits *lim)
{
	char buf[4096];
	__u64 v;
	int err;

	memset(lim, 0, sizeof(*lim));
	err = read_sysctl_u64("/proc/sys/kernel/perf_event_max_sample_rate", &v);
	lim->max_sample_rate = err ? 100000 : v;
	err = read_sysctl_u64("/proc/sys/kernel/perf_event_max_stack", &v);
	lim->max_stack = err ? 127 : v;

	err = read_small_file("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (err)
		return err;
	return options__parse_cpu_list(buf, &lim->cpu_online, &lim->nr_cpus);
}

void limits__free(struct limits *lim)
{
	free(lim->cpu_online);
	lim->cpu_online = NULL;
}

static int check_ids_exist(const char *what, const __u32 *ids, size_t nr)
{
	char path[64];

	for (size_t i = 0; i < nr; i++) {
		/* /proc/PID/task/TID also resolves as /proc/TID: use it for both. */
		snprintf(path, sizeof(path), "/proc/%u", ids[i]);
		if (access(path, F_OK)) {
			pr_err("%s %u does not exist (see --help)",
				what, ids[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_cgroup_dir(const char *path)
{
	struct statfs fs;
	struct stat st;

	if (stat(path, &st)) {
		pr_err("--cgroup '%s': %s (see --help)", path,
			strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("--cgroup '%s' is not a directory; give a cgroup v2 directory",
			path);
		return -EINVAL;
	}
	if (statfs(path, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
		pr_err("--cgroup '%s' is not in a cgroup v2 hierarchy; give a cgroup2 directory",
			path);
		return -EINVAL;
	}
	return 0;
}

static int check_pinned(const char *opt, const char *path)
{
	struct statfs fs;

	if (statfs(path, &fs)) {
		pr_err("%s '%s': %s (see --help)", opt, path,
			strerror(errno));
		return -EINVAL;
	}
	if (fs.f_type != BPF_FS_MAGIC) {
		pr_err("%s '%s' is not a pinned BPF map in a bpffs (see --help)",
			opt, path);
		return -EINVAL;
	}
	return 0;
}

static int check_rates(struct options *o, const struct limits *lim)
{
	if (o->freq_set && !o->freq) {
		pr_err("-F 0 is out of range [1, %llu], the most kernel.perf_event_max_sample_rate allows (see --help)",
			(unsigned long long)lim->max_sample_rate);
		return -EINVAL;
	}
	/* The kernel lowers the sysctl when sampling takes too long: follow it. */
	if (!o->freq_set && o->freq > lim->max_sample_rate && lim->max_sample_rate)
		o->freq = lim->max_sample_rate;
	if (o->freq > lim->max_sample_rate) {
		pr_err("-F %llu is above kernel.perf_event_max_sample_rate (%llu); lower -F or raise the sysctl",
			(unsigned long long)o->freq,
			(unsigned long long)lim->max_sample_rate);
		return -EINVAL;
	}
	if (o->max_stack_depth_set && o->max_stack_depth > lim->max_stack) {
		pr_err("--perf-max-stack-depth %u is above kernel.perf_event_max_stack (%u); lower it or raise the sysctl",
			o->max_stack_depth, lim->max_stack);
		return -EINVAL;
	}
	return 0;
}

/* --otlp: where to and how, from the URL and the OTEL_* variables. */
static int check_otlp(struct options *o)
{
	struct otlp_config *c = calloc(1, sizeof(*c));

	if (!c) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	if (otlp_config__init(c, o->otlp_url)) {
		free(c);
		return -EINVAL;
	}
	if (o->otlp_queue)
		c->queue_max = o->otlp_queue;
	o->otlp_config = c;
	return 0;
}

int options__check(struct options *o, const struct limits *lim)
{
	if (check_rates(o, lim))
		return -EINVAL;
	/* Unasked, follow a lowered sysctl instead of failing to load. */
	if (!o->max_stack_depth_set && o->max_stack_depth > lim->max_stack && lim->max_stack)
		o->max_stack_depth = lim->max_stack;
	if (o->cpu >= 0 && (o->cpu >= lim->nr_cpus || !lim->cpu_online[o->cpu])) {
		pr_err("-C %d is not an online CPU (see /sys/devices/system/cpu/online)",
			o->cpu);
		return -EINVAL;
	}
	if (check_ids_exist("PID", o->pids, o->nr_pids) ||
	    check_ids_exist("TID", o->tids, o->nr_tids))
		return -EINVAL;
	if (o->cgroup && check_cgroup_dir(o->cgroup))
		return -EINVAL;
	if (o->cgroupmap && check_pinned("--cgroupmap", o->cgroupmap))
		return -EINVAL;
	if (o->mntnsmap && check_pinned("--mntnsmap", o->mntnsmap))
		return -EINVAL;
	if (o->user && command_user__lookup(&o->run_as, o->user))
		return -EINVAL;
	if (o->format == FMT_PPROF && !o->output && !o->otlp && isatty(STDOUT_FILENO)) {
		pr_err("pprof output is binary; use -o FILE.pb.gz or redirect stdout");
		return -EINVAL;
	}
	return o->otlp ? check_otlp(o) : 0;
}
