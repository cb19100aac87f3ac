/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF side's lifecycle: open the skeleton, configure it from the
 * options, load, attach to perf events, and drain the maps at the end.
 */
#ifndef SESSION_H
#define SESSION_H

#include <linux/types.h>
#include "opts.h"
#include "profile.h"

struct session;

struct sample {
	struct count_key key;
	__u64 count;
};

/* Each returns NULL / negative errno after printing a one-line error. */
struct session *session__open(const struct options *o);
int session__configure(struct session *s, const struct options *o);
int session__load(struct session *s, const struct options *o);
int session__attach(struct session *s, const struct options *o,
		    const struct limits *lim);
void session__destroy(struct session *s);

/* Stop sampling: detach every perf event, keep the maps. */
void session__detach(struct session *s);

/* Number of CPUs a perf event was attached on. */
int session__nr_attached(const struct session *s);

/* Sum of the per-CPU counters. */
int session__counters(struct session *s, __u64 out[NR_COUNTERS]);

/* Read every counted key; *samples is malloc'ed, caller frees. */
int session__drain(struct session *s, struct sample **samples, size_t *nr);

/*
 * Frames of a stored stack, leaf first, into ips (room for
 * MAX_STACK_DEPTH); returns the number of frames or a negative errno.
 */
int session__stack(struct session *s, const struct stack_ref *ref, __u64 *ips);

/*
 * For -i: switch sampling to the other set of maps, wait until no program
 * still runs on the old one, and make the old one the set that
 * session__drain() and session__stack() read.  0, -EBUSY or -errno.
 */
int session__flip(struct session *s);

/* Empty the read set after its samples were reported, for its next turn. */
int session__clear(struct session *s, const struct sample *samples, size_t nr);

/* The PERF_EVENT_ARRAY map for the side-band ring buffers. */
int session__events_fd(const struct session *s);

#endif /* SESSION_H */
