// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/bulk.h"
#include "lib/htab.h"
#include "lib/util.h"
#include "trace/trace.h"
#include "bpf/profile.h"
#include "bpf/bulk_abi.h"
#include "bulk.skel.h"

/* An id queued in a batch whose run has not filled it in yet. */
#define QUEUED ((void *)-1)

struct bulk {
	struct bulk_bpf *skel;
	__u32 list_size;		/* keys new_key_list holds */
	__u32 set;			/* whose stacks by_id holds */
	/* id -> 1 + where its stack starts in words[] (htab__id_val()) */
	struct htab by_id;
	/* per stack: nr | end << 32, then its nr frames */
	__u64 *words;
	size_t nr_words, cap_words;
	__u64 runs, stacks, key_runs, keys;
};

struct bulk *bulk__new(const int spilled[2], const int counts[2])
{
	struct bulk *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->skel = bulk_bpf__open();
	/* The tests' way to make a prefetch take several runs. */
	b->list_size = getenv("PROFILE_TEST_BULK_KEYS") ?
		       strtoul(getenv("PROFILE_TEST_BULK_KEYS"), NULL, 10) : BULK_KEYS;
	if (!b->list_size || b->list_size > BULK_KEYS)
		b->list_size = BULK_KEYS;
	b->list_size = (b->list_size + BULK_KEY_PAGE - 1) / BULK_KEY_PAGE * BULK_KEY_PAGE;
	if (!b->skel ||
	    bpf_map__set_max_entries(b->skel->maps.new_key_list,
				     b->list_size / BULK_KEY_PAGE) ||
	    bpf_map__reuse_fd(b->skel->maps.spilled0, spilled[0]) ||
	    bpf_map__reuse_fd(b->skel->maps.spilled1, spilled[1]) ||
	    bpf_map__reuse_fd(b->skel->maps.counts0, counts[0]) ||
	    bpf_map__reuse_fd(b->skel->maps.counts1, counts[1]) ||
	    bulk_bpf__load(b->skel)) {
		int err = errno;

		bulk__free(b);
		errno = err;
		return NULL;
	}
	return b;
}

void bulk__free(struct bulk *b)
{
	if (!b)
		return;
	bulk_bpf__destroy(b->skel);
	htab__free(&b->by_id);
	free(b->words);
	free(b);
}

/* Keep the stack a run fetched for id: 0 or -ENOMEM. */
static int keep(struct bulk *b, const struct hashed_stack *hs, __u64 id)
{
	__u32 n = hs->nr < MAX_STACK_DEPTH ? hs->nr : MAX_STACK_DEPTH;
	size_t at = b->nr_words;

	/* Not stored (gone with a cleared set): read() finds it missing too. */
	if (!n) {
		htab__del_key(&b->by_id, id, 0);
		return 0;
	}
	if (util__grow_array((void **)&b->words, &b->cap_words, at + 1 + n, sizeof(__u64)))
		return -ENOMEM;
	b->words[at] = n | (__u64)hs->end << 32;
	memcpy(&b->words[at + 1], hs->ips, n * sizeof(__u64));
	b->nr_words += 1 + n;
	b->stacks++;
	return htab__put(&b->by_id, id, 0, htab__id_val(at + 1));
}

/* One run of read_stacks for ids[0..n): 0 or a negative errno. */
static int run_batch(struct bulk *b, const __u64 *ids, __u32 n)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	struct bulk_bpf__bss *bss = b->skel->bss;
	int err;

	memcpy(bss->ids, ids, n * sizeof(*ids));
	bss->nr = n;
	bss->set = b->set;
	if (bpf_prog_test_run_opts(bpf_program__fd(b->skel->progs.read_stacks), &topts))
		return -errno;
	b->runs++;
	for (__u32 i = 0; i < n; i++) {
		err = keep(b, &bss->out[i], ids[i]);
		if (err)
			return err;
	}
	return 0;
}

void bulk__drop_stacks(struct bulk *b)
{
	if (!b)
		return;
	htab__free(&b->by_id);
	b->nr_words = 0;
}

int bulk__fetch_stacks(struct bulk *b, __u32 set, const __u64 *ids, size_t n)
{
	__u64 batch[BULK_STACKS];
	__u32 queued = 0;
	int err = 0;

	bulk__drop_stacks(b);
	b->set = set;
	for (size_t i = 0; i < n && !err; i++) {
		if (htab__get(&b->by_id, ids[i], 0))
			continue;
		if (htab__put(&b->by_id, ids[i], 0, QUEUED))
			return -ENOMEM;
		batch[queued++] = ids[i];
		if (queued == BULK_STACKS) {
			err = run_batch(b, batch, queued);
			queued = 0;
		}
	}
	if (!err && queued)
		err = run_batch(b, batch, queued);
	return err;
}

const __u64 *bulk__find_stack(const struct bulk *b, __u32 set, __u64 id, __u32 *nr,
			      __u32 *end)
{
	const __u64 *w;
	void *v;

	if (!b || set != b->set)
		return NULL;
	v = htab__get(&b->by_id, id, 0);
	if (!v || v == QUEUED)
		return NULL;
	w = &b->words[htab__val_id(v) - 1];
	*nr = (__u32)w[0];
	*end = (__u32)(w[0] >> 32);
	return w + 1;
}

/* Pages of new_key_list read a call at most. */
#define LIST_CHUNK 4

/* Append the first n keys of new_key_list to *samples: 0 or -errno. */
static int read_list(struct bulk *b, __u32 n, struct sample **samples, size_t *nr)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bopts);
	int fd = bpf_map__fd(b->skel->maps.new_key_list);
	__u32 idx[LIST_CHUNK], out, done = 0, pages, count;
	struct bulk_key_page *buf;
	void *in = NULL;
	int err = 0;

	buf = malloc(LIST_CHUNK * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	while (done < n) {
		pages = (n - done + BULK_KEY_PAGE - 1) / BULK_KEY_PAGE;
		count = pages < LIST_CHUNK ? pages : LIST_CHUNK;
		if (bpf_map_lookup_batch(fd, in, &out, idx, buf, &count, &bopts) &&
		    errno != ENOENT) {
			err = -errno;
			break;
		}
		for (__u32 i = 0; i < count * BULK_KEY_PAGE && done < n; i++, done++)
			(*samples)[(*nr)++] = (struct sample){
				.key = buf[i / BULK_KEY_PAGE].keys[i % BULK_KEY_PAGE] };
		if (!count)
			break;
		in = &out;
	}
	free(buf);
	if (err)
		return err;
	return done == n ? 0 : -EIO;
}

/* One run of new_keys, its keys appended to *samples: how many, or -errno. */
static int run_keys(struct bulk *b, __u32 set, struct sample **samples, size_t *nr,
		    size_t *cap)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	struct bulk_bpf__bss *bss = b->skel->bss;
	__u32 n;
	int err;

	bss->set = set;
	if (bpf_prog_test_run_opts(bpf_program__fd(b->skel->progs.new_keys), &topts))
		return -errno;
	b->key_runs++;
	n = bss->nr_keys < b->list_size ? bss->nr_keys : b->list_size;
	if (util__grow_array((void **)samples, cap, *nr + n, sizeof(**samples)))
		return -ENOMEM;
	err = read_list(b, n, samples, nr);
	return err ? err : (int)n;
}

int bulk__read_new_keys(struct bulk *b, __u32 set, struct sample **samples, size_t *nr)
{
	size_t cap = 0;
	int n;

	*samples = NULL;
	*nr = 0;
	do
		n = run_keys(b, set, samples, nr, &cap);
	while (n > 0 && (__u32)n == b->list_size);
	if (n < 0) {
		free(*samples);
		*samples = NULL;
		*nr = 0;
		return n;
	}
	b->keys += *nr;
	return 0;
}

void bulk__stats(const struct bulk *b, struct bulk_stats *st)
{
	*st = b ? (struct bulk_stats){ .stack_runs = b->runs, .stacks = b->stacks,
				       .key_runs = b->key_runs, .keys = b->keys }
		: (struct bulk_stats){};
}
