/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One report as an OTLP ExportProfilesServiceRequest (protobuf, not yet
 * compressed), in the profiles protocol the pinned test collector accepts:
 * opentelemetry-proto's profiles v1development with a request-wide
 * ProfilesDictionary and a stack table (pdata v1.67.0, collector v0.161.0).
 *
 * One ResourceProfiles per process (process.pid, process.executable.*,
 * container.id, and the run's own attributes: host.name, service.name,
 * OTEL_RESOURCE_ATTRIBUTES), one ScopeProfiles ("profile", its version),
 * and in it one Profile per kind of count: CPU samples (samples/count,
 * period cpu/nanoseconds) and, for --off-cpu and --wall, blocked time
 * (off_cpu/nanoseconds).  Each record is a Sample with its stack, thread.id
 * and thread.name; frames are Locations with their mapping (build-id as
 * process.executable.build_id.gnu), function and line where known, and
 * profile.frame.type.
 */
#ifndef EXPORT_OTLP_H
#define EXPORT_OTLP_H

#include <stddef.h>
#include <linux/types.h>
#include "export/otlp_config.h"	/* struct otlp_attr */

struct pb;
struct records;
struct output_opts;
struct otlp_counts;

/* What a resource says of its process, looked up when the report is made. */
struct otlp_process {
	const char *exe_path;		/* /proc/PID/exe, or NULL */
	const char *container_id;	/* from /proc/PID/cgroup, or NULL */
};

/*
 * Look up pid's process; fill *out (strings valid until the next call) and
 * return 0, or -errno (gone: the resource carries pid and comm only).
 */
typedef int (*otlp_process_fn)(void *ctx, __u32 pid, struct otlp_process *out);

struct otlp_meta {
	__u64 time_nanos;		/* the report's start, wall clock */
	__u64 duration_nanos;
	__u64 period_ns;		/* CPU clock: what one sample stands for; 0 unknown */
	const char *event;		/* the sampled event's name */
	/*
	 * An event that is not a clock: events one sample stands for (-c, or
	 * at -F the mean of the kernel's periods; at least 1), the period
	 * type being the event's name and "count".  0: a clock, period_ns.
	 */
	__u64 period_events;
	/* On every resource: host.name, service.name, OTEL_RESOURCE_ATTRIBUTES. */
	const struct otlp_attr *resource;
	size_t nr_resource;
	otlp_process_fn process;	/* NULL: pid and comm only */
	void *process_ctx;
};

/*
 * Append the request for p (as oo shows it: the parts of stacks, the kind
 * of profile) to out.  0 or -errno (-ENOMEM).
 */
int otlp__encode(struct pb *out, const struct records *p, const struct output_opts *oo,
		 const struct otlp_meta *m, struct otlp_counts *counts);

/* otlp__proc_process()'s ctx: where the strings it returns live. */
struct otlp_proc_buf {
	char exe[4096];
	char container_id[65];	/* 64 hex digits */
};

/*
 * The process lookup the profiler uses: /proc, read as a hostile file.
 * ctx is a struct otlp_proc_buf.  The container id is the 64 hex digits
 * a runtime names the process's cgroup by (docker-ID.scope,
 * cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope, /docker/ID,
 * /kubepods/.../ID).
 */
int otlp__proc_process(void *ctx, __u32 pid, struct otlp_process *out);

/*
 * The container id in len bytes of a /proc/PID/cgroup file's text (any
 * bytes at all): the first line naming one.  0, or -ENOENT.
 */
int otlp__container_id(const char *cgroup, size_t len, char id[65]);

#endif /* EXPORT_OTLP_H */
