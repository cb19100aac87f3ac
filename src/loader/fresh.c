// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's fresh ring.  It is read when a stack or the new keys are
 * wanted, not on a wake-up: records come without one (BPF_RB_NO_WAKEUP).
 * A stack waits here for the key that refers to it, which follows it in
 * the ring but for a race between CPUs.  A stack no key takes (its key
 * found the count map full) goes after FRESH_HELD_LOOKS looks at the new
 * keys, or with its set at -i's report, so that such stacks cannot fill
 * FRESH_HELD_MAX for good.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "loader/fresh.h"
#include "trace/trace.h"
#include "lib/htab.h"
#include "lib/util.h"

/* Looks at the new keys (fresh__keys()) a stack waits for its key. */
#define FRESH_HELD_LOOKS 20

struct held {
	__u32 nr;
	__u32 end;
	__u64 look;			/* fresh->looks when it came */
	__u64 ips[];
};

struct fresh {
	struct ring_buffer *rb;
	struct htab held;		/* (id, set) -> struct held */
	size_t bytes;			/* held's, FRESH_HELD_MAX at most */
	bool want_keys;
	struct sample *keys;		/* new keys, FRESH_KEYS_MAX at most */
	size_t nr_keys, cap_keys;
	bool keys_missed;		/* since the last fresh__keys() */
	__u64 looks;			/* fresh__keys() calls */
	struct fresh_stats stats;
};

static size_t held_size(__u32 nr)
{
	return sizeof(struct held) + nr * sizeof(__u64);
}

static void release(struct fresh *f, struct held *h)
{
	f->bytes -= held_size(h->nr);
	free(h);
}

static void hold_stack(struct fresh *f, const struct fresh_stack *rec, size_t size)
{
	struct held *h;
	struct hent *e;
	size_t need;

	if (size < sizeof(*rec) || rec->nr > MAX_STACK_DEPTH ||
	    size < sizeof(*rec) + rec->nr * sizeof(__u64)) {
		f->stats.bad++;
		return;
	}
	need = held_size(rec->nr);
	e = f->bytes + need <= FRESH_HELD_MAX ?
		htab__slot(&f->held, rec->id, rec->hdr.set, NULL, NULL) : NULL;
	h = e ? malloc(need) : NULL;
	if (!h) {
		f->stats.over++;
		return;
	}
	h->nr = rec->nr;
	h->end = rec->end;
	h->look = f->looks;
	memcpy(h->ips, rec + 1, rec->nr * sizeof(__u64));
	f->bytes += need;
	/* Stored again after its set was emptied: the newer copy. */
	if (e->val) {
		release(f, e->val);
		e->val = h;
	} else {
		htab__fill(&f->held, e, rec->id, rec->hdr.set, h);
	}
}

static void hold_key(struct fresh *f, const struct fresh_key *rec, size_t size)
{
	if (size < sizeof(*rec)) {
		f->stats.bad++;
		return;
	}
	if (!f->want_keys)
		return;
	if (f->nr_keys >= FRESH_KEYS_MAX ||
	    util__grow_array((void **)&f->keys, &f->cap_keys, f->nr_keys + 1, sizeof(*f->keys))) {
		f->stats.keys_over++;
		f->keys_missed = true;
		return;
	}
	f->keys[f->nr_keys++] = (struct sample){ .key = rec->key };
}

static int hold(void *ctx, void *data, size_t size)
{
	const struct fresh_hdr *hdr = data;
	struct fresh *f = ctx;

	if (size < sizeof(*hdr)) {
		f->stats.bad++;
		return 0;
	}
	switch (hdr->type) {
	case FRESH_STACK:
		hold_stack(f, data, size);
		break;
	case FRESH_KEY:
		hold_key(f, data, size);
		break;
	default:
		f->stats.bad++;
		break;
	}
	return 0;
}

struct fresh *fresh__new(int ring_fd, bool keys)
{
	struct fresh *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->want_keys = keys;
	f->rb = ring_buffer__new(ring_fd, hold, f, NULL);
	if (!f->rb) {
		free(f);
		return NULL;
	}
	return f;
}

void fresh__free(struct fresh *f)
{
	struct hent *e;

	if (!f)
		return;
	ring_buffer__free(f->rb);
	for (size_t pos = 0; (e = htab__next(&f->held, &pos));)
		free(e->val);
	htab__free(&f->held);
	free(f->keys);
	free(f);
}

int fresh__take(struct fresh *f, __u64 id, __u32 set, __u64 *ips, __u32 *end)
{
	struct held *h;
	int n;

	if (!f)
		return -ENOENT;
	/* Errors leave what is held: the rest is looked up. */
	ring_buffer__consume(f->rb);
	h = htab__get(&f->held, id, set);
	if (!h)
		return -ENOENT;
	n = h->nr;
	memcpy(ips, h->ips, n * sizeof(*ips));
	*end = h->end;
	htab__del_key(&f->held, id, set);
	release(f, h);
	f->stats.taken++;
	return n;
}

/* Stacks held since before the last FRESH_HELD_LOOKS looks go. */
static void age(struct fresh *f)
{
	struct hent *e;

	if (++f->looks % FRESH_HELD_LOOKS || !f->held.nr)
		return;
	for (size_t pos = 0; (e = htab__next(&f->held, &pos));) {
		struct held *h = e->val;

		if (h->look + FRESH_HELD_LOOKS > f->looks)
			continue;
		release(f, h);
		htab__del(&f->held, e);
		f->stats.aged++;
	}
}

int fresh__keys(struct fresh *f, struct sample **out, size_t *nr, bool *whole)
{
	if (!f || !f->want_keys)
		return -ENOENT;
	ring_buffer__consume(f->rb);
	age(f);
	*out = f->keys;
	*nr = f->nr_keys;
	*whole = !f->keys_missed;
	f->stats.keys += f->nr_keys;
	f->keys = NULL;
	f->nr_keys = f->cap_keys = 0;
	f->keys_missed = false;
	return 0;
}

void fresh__drop_set(struct fresh *f, __u32 set)
{
	struct hent *e;

	if (!f)
		return;
	ring_buffer__consume(f->rb);
	for (size_t pos = 0; (e = htab__next(&f->held, &pos));) {
		if (e->k2 != set)
			continue;
		release(f, e->val);
		htab__del(&f->held, e);
	}
}

void fresh__stats(const struct fresh *f, struct fresh_stats *st)
{
	*st = f ? f->stats : (struct fresh_stats){};
}
