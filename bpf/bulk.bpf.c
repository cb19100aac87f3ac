// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's maps read in bulk (src/loader/bulk.c), on the sampler's
 * own maps, handed over by their fds before the load.
 *
 * read_stacks: stored stacks by id.  Reading one stack of a set's spill
 * map is one bpf() call, about a microsecond and a half here, and a
 * profile of many distinct stacks reads one per stack.  User space puts
 * up to BULK_STACKS ids in ids[] and the set in `set`, runs this program
 * with BPF_PROG_TEST_RUN, and reads each stack from out[] (nr 0: not
 * stored).
 *
 * new_keys: the count map's keys not read before, for the loader's
 * prefetch, which otherwise reads every key again each time: up to
 * BULK_KEYS of set `set`'s into new_key_list, their number in nr_keys,
 * each key's count marked (COUNT_SEEN, bpf/profile.h) as it is taken.
 * A run that fills the list stops there; the next goes on, past the
 * marked ones.  Every run walks all of the map's buckets (about half a
 * millisecond at the default size), so the list is long enough for most
 * prefetches in one run; it is not mapped, so that the keys cost the
 * loader's memory once, in the samples it reads them into.
 *
 * Both are syscall programs on no kernel type: loading them parses no
 * kernel BTF, which would cost milliseconds and megabytes.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "profile.h"
#include "bulk_abi.h"

struct spill_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct hashed_stack);
	__uint(max_entries, 1);
};

struct count_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct count_key);
	__type(value, __u64);
	__uint(max_entries, 1);
};

struct spill_map spilled0 SEC(".maps"), spilled1 SEC(".maps");
struct count_map counts0 SEC(".maps"), counts1 SEC(".maps");

__u32 nr;
__u32 set;
__u64 ids[BULK_STACKS];
struct hashed_stack out[BULK_STACKS];
__u32 nr_keys;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct bulk_key_page);
	__uint(max_entries, BULK_KEYS / BULK_KEY_PAGE);
} new_key_list SEC(".maps");

static long read_one(__u64 i, void *data)
{
	const struct hashed_stack *st;
	struct hashed_stack *o;
	__u32 n;

	if (i >= BULK_STACKS || i >= nr)
		return 1;
	o = &out[i];
	st = bpf_map_lookup_elem(set ? (void *)&spilled1 : (void *)&spilled0, &ids[i]);
	if (!st) {
		o->nr = 0;
		return 0;
	}
	n = st->nr;
	if (n > MAX_STACK_DEPTH)
		n = MAX_STACK_DEPTH;
	o->end = st->end;
	if (bpf_probe_read_kernel(o->ips, n * sizeof(__u64), st->ips))
		n = 0;
	o->nr = n;
	return 0;
}

SEC("syscall")
int read_stacks(void *ctx)
{
	bpf_loop(BULK_STACKS, read_one, NULL, 0);
	return 0;
}

static long take_key(void *map, const struct count_key *key, __u64 *count, void *data)
{
	__u32 n = nr_keys, at = n / BULK_KEY_PAGE;
	struct bulk_key_page *page;

	if (*count & COUNT_SEEN)
		return 0;
	page = bpf_map_lookup_elem(&new_key_list, &at);
	if (!page)
		return 1;		/* the list is full */
	/* Atomic: the sampler adds to the count meanwhile. */
	__sync_fetch_and_or(count, COUNT_SEEN);
	page->keys[n % BULK_KEY_PAGE] = *key;
	nr_keys = n + 1;
	return 0;
}

SEC("syscall")
int new_keys(void *ctx)
{
	nr_keys = 0;
	if (set)
		bpf_for_each_map_elem(&counts1, take_key, NULL, 0);
	else
		bpf_for_each_map_elem(&counts0, take_key, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
