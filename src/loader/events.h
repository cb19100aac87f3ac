/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* perf event names, as perf spells them, and what they open. */
#ifndef EVENTS_H
#define EVENTS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct event_spec {
	char name[64];		/* canonical spelling, e.g. "page-faults" */
	__u32 type;		/* PERF_TYPE_* */
	__u64 config;
};

#define DEFAULT_EVENT "cpu-clock"

/* Resolve a name ("cycles", "faults", "LLC-load-misses", "r01c2").
 * 0, or -EINVAL for an unknown name. */
int event__parse(const char *name, struct event_spec *ev);

/* Is it the CPU clock that bcc always samples on? */
bool event__is_default(const struct event_spec *ev);

/*
 * Is it a clock (cpu-clock, task-clock)?  Its samples come at -F in time;
 * any other event's, at a rate the kernel tunes from the event's own.
 */
bool event__is_clock(const struct event_spec *ev);

/* Print every known event, each probed once: "supported" or not. */
void events__list(FILE *out);

#endif /* EVENTS_H */
