/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Two small containers the symbolizer needs everywhere: an open-addressing
 * hash table keyed by two u64, and a pool of interned strings that stay put
 * until the pool is freed.  Neither frees the values it holds.
 */
#ifndef HTAB_H
#define HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct hent {
	__u64 k1, k2;
	void *val;		/* NULL: empty slot */
};

struct htab {
	struct hent *slots;
	size_t cap, nr;		/* cap is 0 or a power of two */
};

/* A key equality test beyond (k1, k2), e.g. comparing string contents. */
typedef bool (*htab_eq_fn)(const void *val, const void *ctx);

__u64 htab__hash(__u64 a, __u64 b);
__u64 htab__hash_bytes(const void *s, size_t len);

/* The value stored under (k1, k2), or NULL. */
void *htab__get(const struct htab *h, __u64 k1, __u64 k2);

/* Store val (not NULL) under (k1, k2), replacing any value there. */
int htab__put(struct htab *h, __u64 k1, __u64 k2, void *val);

/*
 * Make room for one more entry, then return the slot holding (k1, k2) for
 * which eq() agrees (eq may be NULL), or the empty slot where it would go:
 * the caller fills an empty one and counts it in h->nr.
 */
struct hent *htab__slot(struct htab *h, __u64 k1, __u64 k2, htab_eq_fn eq,
			const void *ctx);

/* Fill the empty slot e that htab__slot() returned, and count it. */
void htab__fill(struct htab *h, struct hent *e, __u64 k1, __u64 k2, void *val);

/*
 * A table indexing an array that moves as it grows keeps ids, 1-based
 * indices, as its values: an id is never 0, so never an empty slot.
 */
void *htab__id_val(size_t id);
size_t htab__val_id(const void *val);

void htab__free(struct htab *h);

/* Interned strings: equal strings share one NUL-terminated copy. */
struct strpool {
	struct htab set;
	struct strchunk *chunks;
};

/* A stable copy of s[0..len), or NULL when out of memory. */
const char *strpool__intern(struct strpool *p, const char *s, size_t len);
/* Room for size bytes that live as long as the pool (not interned). */
char *strpool__alloc(struct strpool *p, size_t size);
/* The interned copy of s[0..len), or NULL if none; never allocates. */
const char *strpool__find(const struct strpool *p, const char *s, size_t len);
/* Bytes handed out so far, for stats and tests. */
size_t strpool__bytes(const struct strpool *p);
void strpool__free(struct strpool *p);

#endif /* HTAB_H */
