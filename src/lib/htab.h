/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Three small containers the symbolizer needs everywhere: an open-addressing
 * hash table keyed by two u64, a bump arena whose memory lives until it is
 * freed as a whole, and a pool of interned strings kept in one.  None of
 * them frees the values it holds.
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

/*
 * Linear probing, at most half full.  A deleted entry leaves a tombstone
 * (a slot lookups walk past and walks skip) until the table is next grown
 * or compacted, so that deleting never moves an entry: a walk may delete
 * the entry it is on.
 */
struct htab {
	struct hent *slots;
	size_t cap;		/* 0 or a power of two */
	size_t nr;		/* entries */
	size_t used;		/* entries and tombstones */
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
 * which eq() agrees (eq may be NULL), or the empty slot where it would go,
 * for htab__fill().  NULL when out of memory.
 */
struct hent *htab__slot(struct htab *h, __u64 k1, __u64 k2, htab_eq_fn eq,
			const void *ctx);

/* Fill the empty slot e that htab__slot() returned, and count it. */
void htab__fill(struct htab *h, struct hent *e, __u64 k1, __u64 k2, void *val);

/*
 * Walk the entries in slot order:
 *   for (size_t pos = 0; (e = htab__next(h, &pos));)
 * The walk may htab__del() the entry it is on; it must not add any.
 */
struct hent *htab__next(const struct htab *h, size_t *pos);

/*
 * Delete the entry under (k1, k2), if any; never grows the table, so a
 * walk may call it for the entry it is on.  Whether there was one.
 */
bool htab__del_key(struct htab *h, __u64 k1, __u64 k2);

/* Delete the entry in slot e (from htab__next(), or htab__slot() found). */
void htab__del(struct htab *h, struct hent *e);

/*
 * After deleting many entries: move the rest into a table sized for them,
 * dropping the tombstones.  Keeps the old table when out of memory.
 */
void htab__compact(struct htab *h);

/*
 * A table indexing an array that moves as it grows keeps ids, 1-based
 * indices, as its values: an id is never 0, so never an empty slot.
 */
void *htab__id_val(size_t id);
size_t htab__val_id(const void *val);

void htab__free(struct htab *h);

/* Bump allocation in blocks; everything is freed at once by arena__free(). */
struct arena {
	struct arena_block *blocks;
	size_t block_size;	/* 0: 64 KiB; bigger requests get their own */
	size_t bytes;		/* handed out so far */
};

/* size bytes aligned to align (a power of two up to 16), or NULL. */
void *arena__alloc(struct arena *a, size_t size, size_t align);
void arena__free(struct arena *a);

/* Interned strings: equal strings share one NUL-terminated copy. */
struct strpool {
	struct htab set;
	struct arena mem;
};

/* A stable copy of s[0..len), or NULL when out of memory. */
const char *strpool__intern(struct strpool *p, const char *s, size_t len);
/* The interned copy of s[0..len), or NULL if none; never allocates. */
const char *strpool__find(const struct strpool *p, const char *s, size_t len);
/* Bytes handed out so far, for stats and tests. */
size_t strpool__bytes(const struct strpool *p);
void strpool__free(struct strpool *p);

#endif /* HTAB_H */
