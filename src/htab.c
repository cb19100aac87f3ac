// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"

#define STRPOOL_CHUNK	(64 * 1024)

__u64 htab__hash(__u64 a, __u64 b)
{
	__u64 h = a * 0x9e3779b97f4a7c15ULL ^ b;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ULL;
	h ^= h >> 32;
	return h;
}

__u64 htab__hash_bytes(const void *s, size_t len)
{
	const unsigned char *p = s;
	__u64 h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static struct hent *find_slot(const struct htab *h, __u64 k1, __u64 k2,
			      htab_eq_fn eq, const void *ctx)
{
	size_t mask = h->cap - 1, i = htab__hash(k1, k2) & mask;

	for (;; i = (i + 1) & mask) {
		struct hent *e = &h->slots[i];

		if (!e->val)
			return e;
		if (e->k1 == k1 && e->k2 == k2 && (!eq || eq(e->val, ctx)))
			return e;
	}
}

static int grow(struct htab *h)
{
	struct htab bigger = { .cap = h->cap ? h->cap * 2 : 64 };
	size_t i, j, mask = bigger.cap - 1;

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	/* Entries are distinct: no need to compare, just find room. */
	for (i = 0; i < h->cap; i++) {
		struct hent *e = &h->slots[i];

		if (!e->val)
			continue;
		j = htab__hash(e->k1, e->k2) & mask;
		while (bigger.slots[j].val)
			j = (j + 1) & mask;
		bigger.slots[j] = *e;
	}
	bigger.nr = h->nr;
	free(h->slots);
	*h = bigger;
	return 0;
}

struct hent *htab__slot(struct htab *h, __u64 k1, __u64 k2, htab_eq_fn eq,
			const void *ctx)
{
	if ((h->nr + 1) * 2 > h->cap && grow(h))
		return NULL;
	return find_slot(h, k1, k2, eq, ctx);
}

void htab__fill(struct htab *h, struct hent *e, __u64 k1, __u64 k2, void *val)
{
	e->k1 = k1;
	e->k2 = k2;
	e->val = val;
	h->nr++;
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

int htab__put(struct htab *h, __u64 k1, __u64 k2, void *val)
{
	struct hent *e = htab__slot(h, k1, k2, NULL, NULL);

	if (!e)
		return -ENOMEM;
	if (!e->val)
		h->nr++;
	e->k1 = k1;
	e->k2 = k2;
	e->val = val;
	return 0;
}

void htab__free(struct htab *h)
{
	free(h->slots);
	h->slots = NULL;
	h->cap = h->nr = 0;
}

struct strchunk {
	struct strchunk *next;
	size_t used, cap;
	char data[];
};

struct strkey {
	const char *s;
	size_t len;
};

static bool str_eq(const void *val, const void *ctx)
{
	const struct strkey *k = ctx;

	return !memcmp(val, k->s, k->len);	/* lengths already equal */
}

char *strpool__alloc(struct strpool *p, size_t size)
{
	struct strchunk *c = p->chunks;

	if (!c || c->cap - c->used < size) {
		size_t cap = size > STRPOOL_CHUNK ? size : STRPOOL_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = p->chunks;
		p->chunks = c;
	}
	c->used += size;
	return c->data + c->used - size;
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
	copy = strpool__alloc(p, len + 1);
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
	const struct strchunk *c;
	size_t n = 0;

	for (c = p->chunks; c; c = c->next)
		n += c->used;
	return n;
}

void strpool__free(struct strpool *p)
{
	while (p->chunks) {
		struct strchunk *next = p->chunks->next;

		free(p->chunks);
		p->chunks = next;
	}
	htab__free(&p->set);
}
