// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shared hash table and string pool: lookups, growth, equality tests. */
#include <stdlib.h>
#include "unit.h"
#include "htab.h"

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
	/* FNV-1a's published values. */
	CHECK(htab__hash_bytes("", 0) == 0xcbf29ce484222325ULL);
	CHECK(htab__hash_bytes("a", 1) == 0xaf63dc4c8601ec8cULL);
	CHECK(htab__hash_bytes("foobar", 6) == 0x85944171f73967e8ULL);
	CHECK(htab__hash(1, 2) == htab__hash(1, 2));
	CHECK(htab__hash(1, 2) != htab__hash(2, 1));
}

TEST(strpool)
{
	struct strpool p = {};
	const char *a = strpool__intern(&p, "hello world", 5);
	const char *b = strpool__intern(&p, "hello", 5);
	const char *c = strpool__intern(&p, "help", 4);
	char *big;

	CHECK_STR(a, "hello");
	CHECK(a == b);				/* one copy of equal strings */
	CHECK_STR(c, "help");
	CHECK(c != a);
	CHECK_INT(p.set.nr, 2);
	big = strpool__alloc(&p, 100000);	/* more than a chunk */
	CHECK(big != NULL);
	if (big)
		memset(big, 'x', 100000);
	CHECK(strpool__intern(&p, "hello", 5) == a);
	CHECK_INT(p.set.nr, 2);
	strpool__free(&p);
	CHECK(p.chunks == NULL);
	CHECK_INT(p.set.nr, 0);
}

int main(void)
{
	RUN(put_get_replace);
	RUN(grows);
	RUN(slot_eq_and_fill);
	RUN(ids_as_values);
	RUN(hashes);
	RUN(strpool);
	return unit_summary();
}
