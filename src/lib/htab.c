// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/htab.h"

__u64 htab__hash(__u64 a, __u64 b)
{
	__u64 h = a * 0x9e3779b97f4a7c15ULL ^ b;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ULL;
	h ^= h >> 32;
	return h;
}

/*
 * Eight bytes a step through htab__hash(), the length first: folded lines
 * are hashed whole (a report's 20,000 lines of 200 bytes), and a byte a
 * step (FNV-1a, before) was a fifth of the output's time.
 */
__u64 htab__hash_bytes(const void *s, size_t len)
{
	const unsigned char *p = s;
	__u64 h = htab__hash(len, 0), w;

	for (; len >= sizeof(w); p += sizeof(w), len -= sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		h = htab__hash(h, w);
	}
	w = 0;
	memcpy(&w, p, len);
	return htab__hash(h, w);
}

/* What a deleted entry leaves: lookups go past it, walks skip it. */
static char tombstone_mark;
#define TOMBSTONE ((void *)&tombstone_mark)

static bool is_entry(const struct hent *e)
{
	return e->val && e->val != TOMBSTONE;
}

/* The entry (k1, k2) that eq() agrees with, or the empty slot ending its run. */
static struct hent *find_slot(const struct htab *h, __u64 k1, __u64 k2,
			      htab_eq_fn eq, const void *ctx)
{
	size_t mask = h->cap - 1, i = htab__hash(k1, k2) & mask;

	for (;; i = (i + 1) & mask) {
		struct hent *e = &h->slots[i];

		if (!e->val)
			return e;
		if (e->val != TOMBSTONE && e->k1 == k1 && e->k2 == k2 &&
		    (!eq || eq(e->val, ctx)))
			return e;
	}
}

/* Move the entries into a table of cap slots; tombstones stay behind. */
static int rehash(struct htab *h, size_t cap)
{
	struct htab to = { .cap = cap, .nr = h->nr, .used = h->nr };
	size_t mask = cap - 1, j;

	to.slots = calloc(cap, sizeof(*to.slots));
	if (!to.slots)
		return -ENOMEM;
	/* Entries are distinct: no need to compare, just find room. */
	for (size_t i = 0; i < h->cap; i++) {
		struct hent *e = &h->slots[i];

		if (!is_entry(e))
			continue;
		j = htab__hash(e->k1, e->k2) & mask;
		while (to.slots[j].val)
			j = (j + 1) & mask;
		to.slots[j] = *e;
	}
	free(h->slots);
	*h = to;
	return 0;
}

/*
 * Room for one more: double when entries fill a quarter of the slots,
 * otherwise the tombstones are what is in the way, and a rehash at the
 * same size clears them.
 */
static int make_room(struct htab *h)
{
	if ((h->used + 1) * 2 <= h->cap)
		return 0;
	if (!h->cap)
		return rehash(h, 64);
	return rehash(h, (h->nr + 1) * 4 > h->cap ? h->cap * 2 : h->cap);
}

struct hent *htab__slot(struct htab *h, __u64 k1, __u64 k2, htab_eq_fn eq,
			const void *ctx)
{
	if (make_room(h))
		return NULL;
	return find_slot(h, k1, k2, eq, ctx);
}

void htab__fill(struct htab *h, struct hent *e, __u64 k1, __u64 k2, void *val)
{
	e->k1 = k1;
	e->k2 = k2;
	e->val = val;
	h->nr++;
	h->used++;
}

struct hent *htab__next(const struct htab *h, size_t *pos)
{
	for (size_t i = *pos; i < h->cap; i++) {
		if (is_entry(&h->slots[i])) {
			*pos = i + 1;
			return &h->slots[i];
		}
	}
	*pos = h->cap;
	return NULL;
}

void htab__del(struct htab *h, struct hent *e)
{
	e->val = TOMBSTONE;
	h->nr--;
}

void htab__compact(struct htab *h)
{
	size_t cap = 64;

	if (h->used == h->nr)
		return;			/* no tombstones: nothing was deleted */
	while (cap < h->nr * 4)
		cap *= 2;
	if (cap > h->cap)
		cap = h->cap;
	rehash(h, cap);			/* out of memory: keep the table as is */
}

void *htab__id_val(size_t id)
{
	return (void *)(uintptr_t)id;
}

size_t htab__val_id(const void *val)
{
	return (uintptr_t)val;
}

void *htab__get(const struct htab *h, __u64 k1, __u64 k2)
{
	return h->cap ? find_slot(h, k1, k2, NULL, NULL)->val : NULL;
}

bool htab__del_key(struct htab *h, __u64 k1, __u64 k2)
{
	struct hent *e = h->cap ? find_slot(h, k1, k2, NULL, NULL) : NULL;

	if (!e || !e->val)
		return false;
	htab__del(h, e);
	return true;
}

int htab__put(struct htab *h, __u64 k1, __u64 k2, void *val)
{
	struct hent *e = htab__slot(h, k1, k2, NULL, NULL);

	if (!e)
		return -ENOMEM;
	if (e->val)
		e->val = val;
	else
		htab__fill(h, e, k1, k2, val);
	return 0;
}

void htab__free(struct htab *h)
{
	free(h->slots);
	h->slots = NULL;
	h->cap = h->nr = h->used = 0;
}

/* ---- arena ---- */

#define ARENA_BLOCK	(64 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	_Alignas(16) char data[];
};

void *arena__alloc(struct arena *a, size_t size, size_t align)
{
	struct arena_block *b = a->blocks;
	size_t bsize = a->block_size ? a->block_size : ARENA_BLOCK, off;

	off = b ? (b->used + align - 1) & ~(align - 1) : 0;
	if (!b || off + size > b->size) {
		/* A big request gets a block of its own, behind the current one. */
		bool own = size > bsize / 4;

		b = malloc(sizeof(*b) + (own ? size : bsize));
		if (!b)
			return NULL;
		b->used = 0;
		b->size = own ? size : bsize;
		if (own && a->blocks) {
			b->next = a->blocks->next;
			a->blocks->next = b;
		} else {
			b->next = a->blocks;
			a->blocks = b;
		}
		off = 0;
	}
	b->used = off + size;
	a->bytes += size;
	return b->data + off;
}

void arena__free(struct arena *a)
{
	while (a->blocks) {
		struct arena_block *next = a->blocks->next;

		free(a->blocks);
		a->blocks = next;
	}
	a->bytes = 0;
}

/* ---- interned strings ---- */

struct strkey {
	const char *s;
	size_t len;
};

static bool str_eq(const void *val, const void *ctx)
{
	const struct strkey *k = ctx;

	return !memcmp(val, k->s, k->len);	/* lengths already equal */
}

const char *strpool__intern(struct strpool *p, const char *s, size_t len)
{
	struct strkey key = { s, len };
	__u64 h = htab__hash_bytes(s, len);
	struct hent *e;
	char *copy;

	e = htab__slot(&p->set, h, len, str_eq, &key);
	if (!e)
		return NULL;
	if (e->val)
		return e->val;
	copy = arena__alloc(&p->mem, len + 1, 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	htab__fill(&p->set, e, h, len, copy);
	return copy;
}

const char *strpool__find(const struct strpool *p, const char *s, size_t len)
{
	struct strkey key = { s, len };

	if (!p->set.cap)
		return NULL;
	return find_slot(&p->set, htab__hash_bytes(s, len), len, str_eq,
			 &key)->val;
}

size_t strpool__bytes(const struct strpool *p)
{
	return p->mem.bytes;
}

void strpool__free(struct strpool *p)
{
	arena__free(&p->mem);
	htab__free(&p->set);
}
