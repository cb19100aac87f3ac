/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* perf event names, as perf spells them, and what they open. */
#ifndef EVENTS_H
#define EVENTS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct event_spec {
	char name[128];		/* canonical spelling, e.g. "page-faults" */
	__u32 type;		/* PERF_TYPE_*; PERF_TYPE_TRACEPOINT: a tracepoint */
	__u64 config;		/* a tracepoint's: its id under tracefs */
};

#define DEFAULT_EVENT "cpu-clock"

/*
 * Resolve a name ("cycles", "faults", "LLC-load-misses", "r01c2",
 * "sched:sched_switch").  0, or -EINVAL for an unknown name; a tracepoint
 * (a name with a colon): -ENOENT when tracefs has no such one, -ENODEV
 * when there is no tracefs (it is mounted, as perf does, when it can be).
 */
int event__parse(const char *name, struct event_spec *ev);

/*
 * A tracepoint's id file under tracefs, into path: 0, -EINVAL for a name
 * that is no CATEGORY:NAME, -ENODEV without tracefs.
 */
int event__tracepoint_path(const char *name, char *path, size_t sz);

/* Is it a tracepoint?  A BPF program on it sees every hit, on every CPU. */
bool event__is_tracepoint(const struct event_spec *ev);

/* Is it the CPU clock that bcc always samples on? */
bool event__is_default(const struct event_spec *ev);

/*
 * Is it a clock (cpu-clock, task-clock)?  Its samples come at -F in time;
 * any other event's, at a rate the kernel tunes from the event's own.
 */
bool event__is_clock(const struct event_spec *ev);

/*
 * Print every known event, each probed once: "supported" or not; then
 * every tracepoint under tracefs (over 2,000 on a 6.18 kernel), as perf
 * list does.
 */
void events__list(FILE *out);

#endif /* EVENTS_H */
