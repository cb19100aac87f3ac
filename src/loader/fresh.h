/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the sampler stored anew, from its fresh ring (bpf/profile.h): new
 * native stacks, read from there instead of one lookup of a spill map
 * each, and without -i new count keys, named as they come instead of by
 * reading the whole count map again.  What the ring lost, or what is not
 * held here, is read from the maps as before.
 */
#ifndef FRESH_H
#define FRESH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct sample;

/* Bytes of stacks held until taken: a busy second's, 2,000 of 10 frames. */
#define FRESH_HELD_MAX (256 * 1024)
/* New keys held until taken: twice a busy second's. */
#define FRESH_KEYS_MAX 4096

struct fresh;

struct fresh_stats {
	__u64 taken;		/* stacks handed to naming from the ring */
	__u64 over;		/* stacks not held: FRESH_HELD_MAX reached */
	__u64 aged;		/* stacks no key took for a while, dropped */
	__u64 keys;		/* new keys handed on */
	__u64 keys_over;	/* new keys not held: FRESH_KEYS_MAX reached */
	__u64 bad;		/* records of an unknown type or impossible size */
};

/*
 * Read the ring of map fd ring_fd; with keys, hold the new keys it sends
 * for fresh__keys().  NULL with errno set.
 */
struct fresh *fresh__new(int ring_fd, bool keys);
void fresh__free(struct fresh *f);

/*
 * The stack stored under id in set's spill map, if it came in the ring:
 * its frames into ips (MAX_STACK_DEPTH), its end into *end, and their
 * number; -ENOENT when it did not (look it up).  A stack is taken once.
 */
int fresh__take(struct fresh *f, __u64 id, __u32 set, __u64 *ips, __u32 *end);

/*
 * The new keys held, as samples of count 0 (*out, the caller's to free),
 * and their number.  *whole: false when some since the last call were not
 * held here (FRESH_KEYS_MAX).  0, or -ENOENT when keys are not held.
 */
int fresh__keys(struct fresh *f, struct sample **out, size_t *nr, bool *whole);

/* The set's spill map was emptied: its stacks held go. */
void fresh__drop_set(struct fresh *f, __u32 set);

void fresh__stats(const struct fresh *f, struct fresh_stats *st);

#endif
