// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shared hash table and string pool: lookups, growth, equality tests. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "lib/htab.h"

TEST(put_get_replace)
{
	struct htab h = {};
	int a = 1, b = 2;

	CHECK(htab__get(&h, 1, 2) == NULL);	/* empty: no slots at all */
	CHECK_INT(htab__put(&h, 1, 2, &a), 0);
	CHECK_INT(htab__put(&h, 2, 1, &b), 0);
	CHECK(htab__get(&h, 1, 2) == &a);
	CHECK(htab__get(&h, 2, 1) == &b);
	CHECK(htab__get(&h, 1, 1) == NULL);
	CHECK_INT(h.nr, 2);
	CHECK_INT(htab__put(&h, 1, 2, &b), 0);	/* replaces, counts no more */
	CHECK(htab__get(&h, 1, 2) == &b);
	CHECK_INT(h.nr, 2);
	htab__free(&h);
	CHECK(h.slots == NULL);
	CHECK_INT(h.cap, 0);
	CHECK_INT(h.nr, 0);
}

/* Enough entries to grow the table several times; all stay found. */
TEST(grows)
{
	static int vals[5000];
	struct htab h = {};
	size_t missing = 0;

	for (size_t i = 0; i < 5000; i++)
		CHECK_INT(htab__put(&h, i, i * 7, &vals[i]), 0);
	CHECK_INT(h.nr, 5000);
	CHECK(h.cap >= 10000);			/* at most half full */
	CHECK_INT(h.cap & (h.cap - 1), 0);	/* a power of two */
	for (size_t i = 0; i < 5000; i++)
		if (htab__get(&h, i, i * 7) != &vals[i])
			missing++;
	CHECK_INT(missing, 0);
	CHECK(htab__get(&h, 5000, 5000 * 7) == NULL);
	htab__free(&h);
}

/* Names that share (k1, k2), told apart by the equality test. */
static bool name_eq(const void *val, const void *ctx)
{
	return !strcmp(val, ctx);
}

static const char *intern(struct htab *h, const char *name)
{
	struct hent *e = htab__slot(h, 42, 0, name_eq, name);

	if (!e)
		return NULL;
	if (!e->val)
		htab__fill(h, e, 42, 0, (void *)name);
	return e->val;
}

TEST(slot_eq_and_fill)
{
	char again[] = "alpha";
	struct htab h = {};
	struct hent *e;

	CHECK_STR(intern(&h, "alpha"), "alpha");
	CHECK_STR(intern(&h, "beta"), "beta");
	CHECK_INT(h.nr, 2);
	/* Equal contents, another copy: the first one is found. */
	CHECK(intern(&h, again) != again);
	CHECK_STR(intern(&h, again), "alpha");
	CHECK_INT(h.nr, 2);
	/* Without the test, (k1, k2) alone finds one of them. */
	CHECK(htab__get(&h, 42, 0) != NULL);
	/* A miss returns the empty slot, untouched and not counted. */
	e = htab__slot(&h, 42, 0, name_eq, "gamma");
	CHECK(e != NULL && e->val == NULL);
	CHECK_INT(h.nr, 2);
	htab__fill(&h, e, 42, 0, "gamma");
	CHECK_INT(h.nr, 3);
	CHECK_INT(e->k1, 42);
	CHECK_INT(e->k2, 0);
	CHECK_STR(intern(&h, "gamma"), "gamma");
	CHECK_INT(h.nr, 3);
	htab__free(&h);
}

TEST(ids_as_values)
{
	struct htab h = {};
	size_t ids[] = { 1, 2, 255, 1u << 20, (size_t)-1 };
	struct hent *e;

	for (size_t i = 0; i < 5; i++) {
		CHECK(htab__id_val(ids[i]) != NULL);
		CHECK_INT(htab__val_id(htab__id_val(ids[i])) == ids[i], 1);
	}
	/* An array of ten names indexed by a table of ids. */
	for (size_t i = 0; i < 10; i++) {
		e = htab__slot(&h, i * 100, 1, NULL, NULL);
		CHECK(e != NULL && e->val == NULL);
		if (e)
			htab__fill(&h, e, i * 100, 1, htab__id_val(i + 1));
	}
	CHECK_INT(h.nr, 10);
	for (size_t i = 0; i < 10; i++)
		CHECK_INT(htab__val_id(htab__get(&h, i * 100, 1)), i + 1);
	CHECK(htab__get(&h, 100, 2) == NULL);
	htab__free(&h);
}

TEST(hashes)
{
	/* Every byte and the length count: no two of these collide. */
	static const struct {
		const char *s;
		size_t len;
	} in[] = {
		{ "", 0 }, { "a", 1 }, { "b", 1 }, { "ab", 2 }, { "ba", 2 }, { "a\0", 2 },
		{ "foobar", 6 }, { "foobaR", 6 }, { "0123456789abcdef", 16 },
		{ "0123456789abcdeF", 16 }, { "0123456789abcdef0", 17 },
	};
	const size_t n = sizeof(in) / sizeof(in[0]);
	char buf[32];

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			CHECK((htab__hash_bytes(in[i].s, in[i].len) ==
			       htab__hash_bytes(in[j].s, in[j].len)) == (i == j));
	/* Equal bytes hash alike wherever they lie, whatever follows them. */
	memset(buf, 'x', sizeof(buf));
	memcpy(buf + 3, "foobar", 6);
	CHECK(htab__hash_bytes(buf + 3, 6) == htab__hash_bytes("foobar", 6));
	CHECK(htab__hash(1, 2) == htab__hash(1, 2));
	CHECK(htab__hash(1, 2) != htab__hash(2, 1));
}

TEST(strpool)
{
	struct strpool p = {};
	const char *a = strpool__intern(&p, "hello world", 5);
	const char *b = strpool__intern(&p, "hello", 5);
	const char *c = strpool__intern(&p, "help", 4);
	char big[100001];

	CHECK_STR(a, "hello");
	CHECK(a == b);				/* one copy of equal strings */
	CHECK_STR(c, "help");
	CHECK(c != a);
	CHECK_INT(p.set.nr, 2);
	CHECK_INT(strpool__bytes(&p), 6 + 5);	/* with their NULs, unpadded */
	memset(big, 'x', sizeof(big) - 1);	/* more than a block */
	big[sizeof(big) - 1] = '\0';
	CHECK_STR(strpool__intern(&p, big, sizeof(big) - 1), big);
	CHECK(strpool__intern(&p, "hello", 5) == a);
	CHECK(strpool__find(&p, "help", 4) == c);
	CHECK(strpool__find(&p, "hel", 3) == NULL);
	CHECK_INT(p.set.nr, 3);
	strpool__free(&p);
	CHECK(p.mem.blocks == NULL);
	CHECK_INT(p.set.nr, 0);
}

/* A walk sees every entry once; deleting the one it is on is allowed. */
TEST(walk_and_delete)
{
	static int vals[1000];
	struct htab h = {};
	struct hent *e;
	size_t seen = 0, sum = 0, pos;

	for (size_t i = 0; i < 1000; i++)
		CHECK_INT(htab__put(&h, i, 0, &vals[i]), 0);
	for (pos = 0; (e = htab__next(&h, &pos));) {
		seen++;
		sum += e->k1;
	}
	CHECK_INT(seen, 1000);
	CHECK_INT(sum, 999 * 1000 / 2);
	/* Delete the odd keys while walking. */
	for (pos = 0; (e = htab__next(&h, &pos));)
		if (e->k1 & 1)
			htab__del(&h, e);
	CHECK_INT(h.nr, 500);
	seen = 0;
	for (pos = 0; (e = htab__next(&h, &pos));)
		seen += !(e->k1 & 1);
	CHECK_INT(seen, 500);
	/* Tombstones do not hide what lies past them in a probe run. */
	for (size_t i = 0; i < 1000; i++)
		CHECK(htab__get(&h, i, 0) == (i & 1 ? NULL : &vals[i]));
	/* Everything, then nothing is found and the walk is empty. */
	for (pos = 0; (e = htab__next(&h, &pos));)
		htab__del(&h, e);
	CHECK_INT(h.nr, 0);
	pos = 0;
	CHECK(htab__next(&h, &pos) == NULL);
	CHECK(htab__get(&h, 0, 0) == NULL);
	htab__compact(&h);
	CHECK_INT(h.cap, 64);			/* shrunk back */
	CHECK_INT(h.used, 0);
	htab__free(&h);
}

/* Entries with one (k1, k2), told apart by eq: one run of slots. */
TEST(delete_in_a_collision_run)
{
	static const char *names[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	struct htab h = {};
	struct hent *e;

	for (int i = 0; i < 8; i++)
		CHECK_STR(intern(&h, names[i]), names[i]);
	CHECK_INT(h.nr, 8);
	/* Delete every other one, from the middle of the run. */
	for (int i = 0; i < 8; i += 2) {
		e = htab__slot(&h, 42, 0, name_eq, names[i]);
		CHECK(e && e->val == names[i]);
		if (e && e->val)
			htab__del(&h, e);
	}
	CHECK_INT(h.nr, 4);
	for (int i = 0; i < 8; i++) {
		e = htab__slot(&h, 42, 0, name_eq, names[i]);
		CHECK(e && e->val == (i & 1 ? names[i] : NULL));
	}
	/* Put one back: found again, the others untouched. */
	CHECK_STR(intern(&h, "a"), "a");
	CHECK_STR(intern(&h, "h"), "h");
	CHECK_INT(h.nr, 5);
	htab__free(&h);
}

/* Random puts and deletes against a plain array as the model. */
TEST(random_against_a_model)
{
	enum { KEYS = 4096, OPS = 400000 };
	static void *model[KEYS];
	static int vals[KEYS];
	struct htab h = {};
	size_t live = 0, bad = 0, max_cap = 0;
	unsigned int seed = 12345;

	for (int op = 0; op < OPS; op++) {
		size_t k = rand_r(&seed) % KEYS;
		struct hent *e;

		if (rand_r(&seed) % 3) {
			CHECK_INT(htab__put(&h, k, k ^ 0x55, &vals[k]), 0);
			live += !model[k];
			model[k] = &vals[k];
		} else if (model[k]) {
			e = htab__slot(&h, k, k ^ 0x55, NULL, NULL);
			if (!e || e->val != model[k]) {
				bad++;
				continue;
			}
			htab__del(&h, e);
			model[k] = NULL;
			live--;
		}
		if (op % 50000 == 0)
			htab__compact(&h);
		if (h.cap > max_cap)
			max_cap = h.cap;
	}
	for (size_t k = 0; k < KEYS; k++)
		bad += htab__get(&h, k, k ^ 0x55) != model[k];
	CHECK_INT(bad, 0);
	CHECK_INT(h.nr, live);
	/* Tombstones never make the table grow past what the keys need. */
	CHECK(max_cap <= 4 * KEYS);
	htab__free(&h);
}

TEST(arena)
{
	struct arena a = { .block_size = 1024 };
	char *small, *big, *after;
	void *p8;

	small = arena__alloc(&a, 3, 1);
	p8 = arena__alloc(&a, 16, 8);
	CHECK(small && p8);
	CHECK_INT((uintptr_t)p8 % 8, 0);
	big = arena__alloc(&a, 5000, 16);	/* larger than a block */
	CHECK(big != NULL);
	CHECK_INT((uintptr_t)big % 16, 0);
	if (big)
		memset(big, 1, 5000);
	/* The big one had a block of its own: the small ones go on in theirs. */
	after = arena__alloc(&a, 4, 1);
	CHECK(after == (char *)p8 + 16);
	CHECK_INT(a.bytes, 3 + 16 + 5000 + 4);
	for (int i = 0; i < 1000; i++)
		CHECK(arena__alloc(&a, 100, 8) != NULL);
	arena__free(&a);
	CHECK(a.blocks == NULL);
	CHECK_INT(a.bytes, 0);
}

/*
 * Deleting by key during a walk, every entry in turn, at the fill where one
 * more insert would grow the table: nothing moves, each entry is seen once.
 */
TEST(del_key_in_a_walk)
{
	static int vals[600];
	size_t seen = 0, cap;
	struct htab h = {};
	struct hent *e;

	for (size_t i = 0; i < 600; i++)
		CHECK_INT(htab__put(&h, i, 0, &vals[i]), 0);
	cap = h.cap;
	for (size_t pos = 0; (e = htab__next(&h, &pos));) {
		CHECK(htab__del_key(&h, e->k1, e->k2));
		seen++;
	}
	CHECK_INT(seen, 600);
	CHECK_INT(h.nr, 0);
	CHECK_INT(h.cap, cap);
	CHECK(!htab__del_key(&h, 1, 0));	/* gone: says so */
	CHECK(!htab__del_key(&(struct htab){}, 1, 0));	/* no slots at all */
	htab__free(&h);
}

int main(void)
{
	RUN(put_get_replace);
	RUN(grows);
	RUN(slot_eq_and_fill);
	RUN(ids_as_values);
	RUN(hashes);
	RUN(strpool);
	RUN(walk_and_delete);
	RUN(delete_in_a_collision_run);
	RUN(random_against_a_model);
	RUN(arena);
	RUN(del_key_in_a_walk);
	return unit_summary();
}
