/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sampler's maps read in bulk, through bpf/bulk.bpf.c:
 * - stored stacks: those a naming pass is about to read from a set's spill
 *   map, BULK_STACKS per bpf() call instead of one call each, kept until
 *   the next fetch;
 * - new keys: the count map's keys that no earlier call returned, for the
 *   prefetch, which would otherwise read every key again each time.
 * A stack not fetched is read one by one, and a prefetch without new keys
 * reads the whole map, as before: a failure here only costs time.
 */
#ifndef BULK_H
#define BULK_H

#include <stddef.h>
#include <linux/types.h>

struct bulk;
struct sample;

/*
 * spilled, counts: the fds of set 0's and set 1's spill and count maps.
 * NULL (errno set) when the programs cannot load, as on kernels before
 * 5.17 (bpf_loop()).
 */
struct bulk *bulk__new(const int spilled[2], const int counts[2]);
void bulk__free(struct bulk *b);

/*
 * Fetch the stacks ids[0..n) (repeats allowed) of set `set`, dropping
 * those fetched before.  0 or a negative errno; on failure, what was
 * fetched is kept.
 */
int bulk__fetch_stacks(struct bulk *b, __u32 set, const __u64 *ids, size_t n);

/* A fetched stack of set `set`: its frames (*nr, and *end), or NULL. */
const __u64 *bulk__find_stack(const struct bulk *b, __u32 set, __u64 id, __u32 *nr,
			      __u32 *end);

/*
 * The keys of set `set`'s count map that no call returned before, as
 * samples of count 0 in a new array (*samples, *nr).  0 or a negative
 * errno.  The keys returned are marked in the map (COUNT_SEEN).
 */
int bulk__read_new_keys(struct bulk *b, __u32 set, struct sample **samples, size_t *nr);

/* Drop the stacks fetched: the set they came from is being emptied. */
void bulk__drop_stacks(struct bulk *b);

/* For -v: the programs' runs, and what they read. */
struct bulk_stats {
	__u64 stack_runs, stacks;	/* stacks fetched */
	__u64 key_runs, keys;		/* keys returned as new */
};

void bulk__stats(const struct bulk *b, struct bulk_stats *st);

#endif /* BULK_H */
