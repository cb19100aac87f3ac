// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for naming CPython code objects (src/interp/python/pycode.c).
 *
 * The ground truth is the interpreter: pycode_target.py prints, for code
 * objects of every kind, what CPython says of them (co_qualname,
 * co_filename, co_firstlineno, PyCode_Addr2Line for every code unit), and
 * the test reads the same objects out of the live process.  Then hostile
 * objects in a buffer: wrong types, lying lengths, odd strs, line tables
 * that are garbage or cut short, reads that fail halfway.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "interp/python/pycode.h"
#include "interp/python/pyversions.h"
#include "unit.h"
#include "fixtures/skip.h"
#include "pytarget.h"

/* --- The live interpreters --- */

/* Every line pycode__line gives for c equals the interpreter's. */
static int check_lines(const struct py_layout *l, const struct pycode *c,
		       const struct pyexpect *e)
{
	size_t r;
	__u32 u;
	int bad = 0;

	for (r = 0; r < e->nr_runs; r++) {
		for (u = e->runs[r].start; u < e->runs[r].end; u++) {
			__u32 got = pycode__line(l, c, u);

			if (got != e->runs[r].line && bad++ < 5)
				fprintf(stderr, "  %s: unit %u: line %u, expected %u\n",
					e->name, u, got, e->runs[r].line);
		}
	}
	return bad;
}

static void live(const struct pyinterp *py)
{
	struct pytarget t;
	struct py_layout l;
	struct pymem mem;
	size_t i, lines = 0;
	int bad = 0;

	SKIP_UNLESS(pyinterp__runs(py->path), "no " PY_REQUIRED);
	if (pytarget__start(&t, py->path)) {
		fprintf(stderr, "  %s did not run pycode_target.py\n", py->path);
		CHECK(0);
		return;
	}
	mem = pytarget__mem(&t);
	CHECK_INT(pyversions__lookup(t.major, t.minor, &l), 0);
	CHECK(t.nr_codes >= 30);
	for (i = 0; i < t.nr_codes && !bad; i++) {
		const struct pyexpect *e = &t.codes[i];
		struct pycode c;
		int err = pycode__read(&l, &t.types, &mem, e->id, &c);

		CHECK_INT(err, 0);
		if (err) {
			bad++;
			continue;
		}
		CHECK_STR(c.qualname, e->name);
		CHECK_STR(c.file, e->file);
		CHECK_INT(c.firstlineno, e->firstlineno);
		bad += check_lines(&l, &c, e);
		lines += e->units;
		pycode__free(&c);
	}
	CHECK_INT(bad, 0);
	fprintf(stderr, "  # %s %u.%u: %zu code objects, %zu code units\n",
		py->name, t.major, t.minor, t.nr_codes, lines);

	/* The same objects, taken for what they are not. */
	if (t.nr_codes) {
		struct pytypes wrong = t.types;
		struct pycode c;

		wrong.code = t.types.str;
		CHECK_INT(pycode__read(&l, &wrong, &mem, t.codes[0].id, &c), -EINVAL);
		wrong = t.types;
		wrong.str = t.types.bytes;
		CHECK_INT(pycode__read(&l, &wrong, &mem, t.codes[0].id, &c), -EINVAL);
		wrong = t.types;
		wrong.bytes = t.types.str;
		CHECK_INT(pycode__read(&l, &wrong, &mem, t.codes[0].id, &c), -EINVAL);
		CHECK_INT(pycode__read(&l, &t.types, &mem, t.types.code, &c), -EINVAL);
		CHECK(pycode__read(&l, &t.types, &mem, 8, &c) < 0);
	}
	pytarget__stop(&t);
}

/* --- Objects in a buffer --- */

/*
 * A process's memory for the hostile tests: ARENA bytes at BASE.  A read
 * outside it is -EFAULT; fail_after makes the read after that many fail,
 * as when the process unmaps or rewrites memory in the middle.
 */
#define BASE 0x100000ull
#define ARENA (PYCODE_LINES_MAX + 64 * 1024)

struct arena {
	__u8 *mem;
	int reads;
	int fail_after;		/* -1: never */
	int fail_with;
	__u64 end_max;		/* the furthest byte asked for */
};

static int arena_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	struct arena *a = ctx;

	if (a->fail_after >= 0 && a->reads++ >= a->fail_after)
		return a->fail_with;
	if (addr + len > a->end_max)
		a->end_max = addr + len;
	if (addr < BASE || addr > BASE + ARENA || len > BASE + ARENA - addr)
		return -EFAULT;
	memcpy(buf, a->mem + (addr - BASE), len);
	return 0;
}

/* Where objects go in the arena. */
#define CODE_AT   (BASE + 0x000)
#define NAME_AT   (BASE + 0x400)
#define FILE_AT   (BASE + 0x4000)
#define LINES_AT  (BASE + 0x8000)
#define T_CODE    0x7000001000ull
#define T_STR     0x7000002000ull
#define T_BYTES   0x7000003000ull

static const struct pytypes fake_types = { T_CODE, T_STR, T_BYTES };

static void put64(struct arena *a, __u64 addr, __u64 v)
{
	memcpy(a->mem + (addr - BASE), &v, sizeof(v));
}

static void put32(struct arena *a, __u64 addr, __u32 v)
{
	memcpy(a->mem + (addr - BASE), &v, sizeof(v));
}

/* state bits: kind << 2 | compact << 5 | ascii << 6 */
static __u32 str_state(unsigned int kind, bool compact, bool ascii)
{
	return kind << 2 | (compact ? 1u << 5 : 0) | (ascii ? 1u << 6 : 0);
}

/* A str of n characters of kind bytes each, copied from data. */
static void put_str(struct arena *a, const struct py_layout *l, __u64 at,
		    __s64 length, __u32 state, const void *data, size_t bytes)
{
	bool ascii = (state >> 6) & 1;

	put64(a, at + l->ob_type, T_STR);
	put64(a, at + l->str_length, (__u64)length);
	put32(a, at + l->str_state, state);
	memcpy(a->mem + (at - BASE) + (ascii ? l->str_ascii_data : l->str_compact_data),
	       data, bytes);
}

static void put_bytes(struct arena *a, const struct py_layout *l, __u64 at,
		      __s64 size, const void *data, size_t n)
{
	put64(a, at + l->ob_type, T_BYTES);
	put64(a, at + l->bytes_size, (__u64)size);
	memcpy(a->mem + (at - BASE) + l->bytes_data, data, n);
}

/* A sane code object: "f" in "/x.py", line 7, a 2-byte line table. */
static void arena_init(struct arena *a, const struct py_layout *l)
{
	__u16 name = l->co_qualname != PY_NO_OFF ? l->co_qualname : l->co_name;

	memset(a->mem, 0, ARENA);
	a->reads = 0;
	a->fail_after = -1;
	a->fail_with = -EFAULT;
	a->end_max = 0;
	put64(a, CODE_AT + l->ob_type, T_CODE);
	put64(a, CODE_AT + name, NAME_AT);
	put64(a, CODE_AT + l->co_filename, FILE_AT);
	put64(a, CODE_AT + l->co_lines, LINES_AT);
	put32(a, CODE_AT + l->co_firstlineno, 7);
	put_str(a, l, NAME_AT, 1, str_state(1, true, true), "f", 1);
	put_str(a, l, FILE_AT, 5, str_state(1, true, true), "/x.py", 5);
	put_bytes(a, l, LINES_AT, 2, "\x02\x01", 2);
}

static struct arena arena;
static struct py_layout l311, l38, l310, l312;

static int read_arena(const struct py_layout *l, struct pycode *c)
{
	struct pymem mem = { .read = arena_read, .ctx = &arena };

	return pycode__read(l, &fake_types, &mem, CODE_AT, c);
}

static void setup(void)
{
	arena.mem = calloc(1, ARENA);
	CHECK(arena.mem != NULL);
	CHECK_INT(pyversions__lookup(3, 11, &l311), 0);
	CHECK_INT(pyversions__lookup(3, 8, &l38), 0);
	CHECK_INT(pyversions__lookup(3, 10, &l310), 0);
	CHECK_INT(pyversions__lookup(3, 12, &l312), 0);
}

TEST(arena_sane)
{
	const struct py_layout *ls[] = { &l38, &l310, &l311, &l312 };
	size_t i;

	for (i = 0; i < 4; i++) {
		struct pycode c;

		arena_init(&arena, ls[i]);
		CHECK_INT(read_arena(ls[i], &c), 0);
		CHECK_STR(c.qualname, "f");
		CHECK_STR(c.file, "/x.py");
		CHECK_INT(c.firstlineno, 7);
		CHECK_INT(c.lines_len, 2);
		pycode__free(&c);
	}
}

/* Each object of the code object's, of another type. */
TEST(wrong_types)
{
	__u64 objs[] = { CODE_AT, NAME_AT, FILE_AT, LINES_AT };
	__u64 others[] = { T_STR, T_CODE, T_BYTES, T_STR };
	struct pycode c;
	size_t i;

	for (i = 0; i < 4; i++) {
		arena_init(&arena, &l311);
		put64(&arena, objs[i] + l311.ob_type, others[i]);
		CHECK_INT(read_arena(&l311, &c), -EINVAL);
		arena_init(&arena, &l311);
		put64(&arena, objs[i] + l311.ob_type, 0);
		CHECK_INT(read_arena(&l311, &c), -EINVAL);
	}
	/* Unknown type objects check nothing: refused. */
	arena_init(&arena, &l311);
	{
		struct pytypes none = { 0, 0, 0 };
		struct pymem mem = { .read = arena_read, .ctx = &arena };

		put64(&arena, CODE_AT + l311.ob_type, 0);
		CHECK_INT(pycode__read(&l311, &none, &mem, CODE_AT, &c), -EINVAL);
	}
}

/* Pointers to nowhere, and an address that wraps. */
TEST(bad_pointers)
{
	struct pymem mem = { .read = arena_read, .ctx = &arena };
	struct pycode c;

	arena_init(&arena, &l311);
	put64(&arena, CODE_AT + l311.co_filename, 0);
	CHECK_INT(read_arena(&l311, &c), -EFAULT);
	arena_init(&arena, &l311);
	put64(&arena, CODE_AT + l311.co_lines, ~0ull - 8);
	CHECK_INT(read_arena(&l311, &c), -EFAULT);
	arena_init(&arena, &l311);
	CHECK_INT(pycode__read(&l311, &fake_types, &mem, ~0ull - 16, &c), -EFAULT);
	CHECK_INT(pycode__read(&l311, &fake_types, &mem, BASE + ARENA - 8, &c), -EFAULT);
}

/* A read that fails at any point fails the whole, nothing kept. */
TEST(fail_midway)
{
	int errs[] = { -EFAULT, -ESRCH, -EIO, 1 };
	size_t e;
	int n;

	for (e = 0; e < 4; e++) {
		for (n = 0; n < 8; n++) {
			struct pycode c = { .firstlineno = 12345 };
			int err;

			arena_init(&arena, &l311);
			arena.fail_after = n;
			arena.fail_with = errs[e];
			err = read_arena(&l311, &c);
			if (arena.reads <= n) {
				/* Fewer reads than n: it succeeded. */
				CHECK_INT(err, 0);
				pycode__free(&c);
				continue;
			}
			CHECK_INT(err, errs[e] > 0 ? -EIO : errs[e]);
			CHECK_INT(c.firstlineno, 12345);
		}
	}
}

/* A length past anything real: read up to the cap, no further. */
TEST(huge_lengths)
{
	struct pycode c;

	arena_init(&arena, &l311);
	memset(arena.mem + (NAME_AT - BASE) + l311.str_ascii_data, 'a', 8192);
	put64(&arena, NAME_AT + l311.str_length, 1ull << 62);
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_INT(strlen(c.qualname), PYCODE_NAME_MAX - 1);
	pycode__free(&c);

	/* The file's cap, and a length running off the end of memory. */
	arena_init(&arena, &l311);
	memset(arena.mem + (FILE_AT - BASE) + l311.str_ascii_data, 'b', 8192);
	put64(&arena, FILE_AT + l311.str_length, 100000);
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_INT(strlen(c.file), PYCODE_FILE_MAX - 1);
	pycode__free(&c);

	arena_init(&arena, &l311);
	put_str(&arena, &l311, FILE_AT, 1ull << 40, str_state(4, true, false), "", 0);
	put64(&arena, CODE_AT + l311.co_filename, BASE + ARENA - 256);
	memcpy(arena.mem + ARENA - 256, arena.mem + (FILE_AT - BASE), 64);
	CHECK_INT(read_arena(&l311, &c), -EFAULT);

	/* Negative lengths and sizes. */
	arena_init(&arena, &l311);
	put64(&arena, NAME_AT + l311.str_length, (__u64)-1);
	CHECK_INT(read_arena(&l311, &c), -EINVAL);
	arena_init(&arena, &l311);
	put64(&arena, LINES_AT + l311.bytes_size, 1ull << 63);
	CHECK_INT(read_arena(&l311, &c), -EINVAL);

	/* A line table over the cap is cut to it. */
	arena_init(&arena, &l311);
	put64(&arena, LINES_AT + l311.bytes_size, 1ull << 40);
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_INT(c.lines_len, PYCODE_LINES_MAX);
	CHECK(arena.end_max <= LINES_AT + l311.bytes_data + PYCODE_LINES_MAX);
	pycode__free(&c);

	/* Empty strs and an empty table are fine. */
	arena_init(&arena, &l311);
	put64(&arena, NAME_AT + l311.str_length, 0);
	put64(&arena, LINES_AT + l311.bytes_size, 0);
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_STR(c.qualname, "");
	CHECK_INT(c.lines_len, 0);
	CHECK_INT(pycode__line(&l311, &c, 0), 0);
	pycode__free(&c);
}

/* Kinds and forms of str: only compact, kinds 1, 2, 4. */
TEST(str_kinds)
{
	static const __u16 kind2[] = { 0x3bb, 'x', 0xd800, 0xdfff, 0x1f, 0x85 };
	static const __u32 kind4[] = { 0x1f40d, 0x110000, 0xffffffff, 'y', 0x7f };
	static const __u8 latin1[] = { 'n', 'a', 0xef, 'v', 'e', 0x9f };
	struct pycode c;
	unsigned int kind;

	arena_init(&arena, &l311);
	put_str(&arena, &l311, NAME_AT, 6, str_state(2, true, false), kind2, sizeof(kind2));
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_STR(c.qualname, "\xce\xbbx\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	pycode__free(&c);

	arena_init(&arena, &l311);
	put_str(&arena, &l311, NAME_AT, 5, str_state(4, true, false), kind4, sizeof(kind4));
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_STR(c.qualname, "\xf0\x9f\x90\x8d\xef\xbf\xbd\xef\xbf\xbdy\xef\xbf\xbd");
	pycode__free(&c);

	arena_init(&arena, &l311);
	put_str(&arena, &l311, NAME_AT, 6, str_state(1, true, false), latin1, sizeof(latin1));
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_STR(c.qualname, "na\xc3\xafve\xef\xbf\xbd");
	pycode__free(&c);

	/* Marked ASCII, yet not. */
	arena_init(&arena, &l312);
	put_str(&arena, &l312, NAME_AT, 3, str_state(1, true, true), "a\xffz", 3);
	CHECK_INT(read_arena(&l312, &c), 0);
	CHECK_STR(c.qualname, "a\xef\xbf\xbdz");
	pycode__free(&c);

	/* Kinds that do not exist, ASCII of a wide kind, legacy strs. */
	for (kind = 0; kind < 8; kind++) {
		if (kind == 1 || kind == 2 || kind == 4)
			continue;
		arena_init(&arena, &l311);
		put32(&arena, NAME_AT + l311.str_state, str_state(kind, true, false));
		CHECK_INT(read_arena(&l311, &c), -EINVAL);
	}
	arena_init(&arena, &l311);
	put32(&arena, NAME_AT + l311.str_state, str_state(2, true, true));
	CHECK_INT(read_arena(&l311, &c), -EINVAL);
	arena_init(&arena, &l311);
	put32(&arena, FILE_AT + l311.str_state, str_state(1, false, true));
	CHECK_INT(read_arena(&l311, &c), -EINVAL);
	arena_init(&arena, &l311);
	put32(&arena, FILE_AT + l311.str_state, str_state(2, false, false));
	CHECK_INT(read_arena(&l311, &c), -EINVAL);

	/* Cut at a character, not in one: 2-byte characters, odd room. */
	arena_init(&arena, &l311);
	{
		__u16 lam[700];
		size_t i;

		for (i = 0; i < 700; i++)
			lam[i] = 0x3bb;
		put_str(&arena, &l311, NAME_AT, 700, str_state(2, true, false), lam, sizeof(lam));
	}
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_INT(strlen(c.qualname), PYCODE_NAME_MAX - 2);
	pycode__free(&c);
}

/* A negative first line is none. */
TEST(firstlineno)
{
	struct pycode c;

	arena_init(&arena, &l311);
	put32(&arena, CODE_AT + l311.co_firstlineno, (__u32)-5);
	CHECK_INT(read_arena(&l311, &c), 0);
	CHECK_INT(c.firstlineno, 0);
	pycode__free(&c);
}

/* --- Line tables --- */

/*
 * A pycode indexing l's kind of table, of exactly n bytes (ASan sees a
 * read past it).
 */
static struct pycode table(const struct py_layout *l, const void *bytes, size_t n,
			   __u32 first)
{
	struct pycode c = { .firstlineno = first, .lines_len = n };
	__u8 *copy = n ? malloc(n) : NULL;

	if (n)
		memcpy(copy, bytes, n);
	CHECK_INT(pycode__index_lines(l, &c, copy, n), 0);
	free(copy);
	return c;
}

/* 3.8's co_lnotab: unsigned byte steps, signed line steps. */
TEST(lnotab)
{
	/* bytes 0-5 line 10; 6-9 line 12; 10-309 line 11; then 11+127+3 */
	static const __u8 t[] = { 6, 2, 4, 0xff, 255, 0, 45, 0, 0, 127, 0, 3 };
	struct pycode c = table(&l38, t, sizeof(t), 10);

	CHECK_INT(pycode__line(&l38, &c, 0), 10);
	CHECK_INT(pycode__line(&l38, &c, 2), 10);
	CHECK_INT(pycode__line(&l38, &c, 3), 12);
	CHECK_INT(pycode__line(&l38, &c, 4), 12);
	CHECK_INT(pycode__line(&l38, &c, 5), 11);
	CHECK_INT(pycode__line(&l38, &c, 154), 11);
	CHECK_INT(pycode__line(&l38, &c, 155), 141);
	CHECK_INT(pycode__line(&l38, &c, 0xffffffff), 141);
	pycode__free(&c);

	/* Empty: all on the first line.  Odd length: the last byte alone. */
	c = table(&l38, NULL, 0, 4);
	CHECK_INT(pycode__line(&l38, &c, 100), 4);
	pycode__free(&c);
	c = table(&l38, "\x02", 1, 4);
	CHECK_INT(pycode__line(&l38, &c, 100), 4);
	pycode__free(&c);
	/* Lines going below 1 are none. */
	c = table(&l38, "\x00\x80", 2, 4);
	CHECK_INT(pycode__line(&l38, &c, 0), 0);
	pycode__free(&c);
}

/* 3.10's co_linetable: ranges of bytes, line steps, -128 for none. */
TEST(linetable310)
{
	/* 0-3 line 5; 4-7 none; 8-9 line 5; 10-263 line 135 (empty range
	 * steps first) */
	static const __u8 t[] = { 4, 0, 4, 0x80, 2, 0, 0, 127, 254, 3 };
	struct pycode c = table(&l310, t, sizeof(t), 5);

	CHECK_INT(pycode__line(&l310, &c, 0), 5);
	CHECK_INT(pycode__line(&l310, &c, 1), 5);
	CHECK_INT(pycode__line(&l310, &c, 2), 0);
	CHECK_INT(pycode__line(&l310, &c, 3), 0);
	CHECK_INT(pycode__line(&l310, &c, 4), 5);
	CHECK_INT(pycode__line(&l310, &c, 5), 135);
	CHECK_INT(pycode__line(&l310, &c, 131), 135);
	CHECK_INT(pycode__line(&l310, &c, 132), 0);
	CHECK_INT(pycode__line(&l310, &c, 0xffffffff), 0);
	pycode__free(&c);
}

static __u8 loc(unsigned int code, unsigned int units)
{
	return (__u8)(0x80 | code << 3 | (units - 1));
}

/* 3.11's location table, every form of entry. */
TEST(locations)
{
	const __u8 t[] = {
		loc(13, 1), 0x00,			/* 0: +0: line 20 */
		loc(5, 2), 0x12,			/* 1-2: short: 20 */
		loc(11, 1), 3, 9,			/* 3: one line +1: 21 */
		loc(14, 3), 0x05, 0x02, 0x03, 0x04,	/* 4-6: long -2: 19 */
		loc(15, 2),				/* 7-8: none */
		loc(13, 8), 0x40 | 0x04, 0x01,		/* 9-16: +(68>>1): 53 */
		loc(12, 1), 1, 2,			/* 17: +2: 55 */
		loc(13, 1), 0x7f, 0x7f, 0x3f,		/* 18: -131071: none */
	};
	struct pycode c = table(&l311, t, sizeof(t), 20);
	static const __u32 want[] = {
		20, 20, 20, 21, 19, 19, 19, 0, 0,
		53, 53, 53, 53, 53, 53, 53, 53, 55,
	};
	__u32 i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		__u32 got = pycode__line(&l311, &c, i);

		if (got != want[i])
			fprintf(stderr, "  unit %u: line %u, expected %u\n", i, got, want[i]);
		CHECK_INT(got, want[i]);
	}
	/* A line below 1 is none, and there is none past the end. */
	CHECK_INT(pycode__line(&l311, &c, 18), 0);
	CHECK_INT(pycode__line(&l311, &c, 19), 0);
	CHECK_INT(pycode__line(&l311, &c, 0xffffffff), 0);
	pycode__free(&c);
}

/* Cut short, or never starting: no line, no read past the end. */
TEST(locations_truncated)
{
	const __u8 t[] = { loc(14, 1), 0x41, 0x41, 0x41, 0x41, 0x41, 0x41 };
	const __u8 junk[] = { 0x00, 0x12, 0x7f, 0x40 };
	struct pycode c;
	size_t n;

	for (n = 0; n <= sizeof(t); n++) {
		c = table(&l311, t, n, 3);
		(void)pycode__line(&l311, &c, 0);
		(void)pycode__line(&l311, &c, 1);
		pycode__free(&c);
	}
	c = table(&l311, junk, sizeof(junk), 3);
	CHECK_INT(pycode__line(&l311, &c, 0), 0);
	pycode__free(&c);
	/* A varint whose continuation never ends keeps 36 bits at most. */
	{
		__u8 *big = malloc(4096);

		memset(big, 0x7f, 4096);
		big[0] = loc(13, 1);
		c = table(&l311, big, 4096, 3);
		CHECK_INT(pycode__line(&l311, &c, 0), 0);
		CHECK_INT(pycode__line(&l311, &c, 1), 0);
		pycode__free(&c);
		free(big);
	}
}

/* Garbage tables of every format: ends, in bounds (ASan), lines sane. */
TEST(garbage_tables)
{
	const struct py_layout *ls[] = { &l38, &l310, &l311 };
	__u64 seed = 0x9e3779b97f4a7c15ull;
	size_t round, k;

	for (round = 0; round < 3000; round++) {
		size_t n = round % 97;
		__u8 *b = malloc(n ? n : 1);
		struct pycode c;

		for (k = 0; k < n; k++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			b[k] = (__u8)seed;
		}
		for (k = 0; k < 3; k++) {
			__u32 instr;

			c = table(ls[k], b, n, (__u32)(seed % 100000));
			for (instr = 0; instr < 2 * n + 4; instr++) {
				__u32 line = pycode__line(ls[k], &c, instr);

				CHECK(line <= INT32_MAX);
			}
			(void)pycode__line(ls[k], &c, 0xffffffff);
			(void)pycode__line(ls[k], &c, 0x7fffffff);
			pycode__free(&c);
		}
		free(b);
	}
}

/* An unknown table kind has no lines. */
TEST(unknown_kind)
{
	struct py_layout l = l311;
	struct pycode c = table(&l311, "\x80", 1, 3);

	l.lines_kind = 0;
	CHECK_INT(pycode__line(&l, &c, 0), 0);
	l.lines_kind = 99;
	CHECK_INT(pycode__line(&l, &c, 0), 0);
	pycode__free(&c);
}

/* ns for rounds lookups of pseudo-random units below units, the best of 5. */
static __u64 lookup_ns(const struct pycode *c, __u32 units, size_t rounds)
{
	__u64 best = ~0ull;
	volatile __u32 sink = 0;

	for (int k = 0; k < 5; k++) {
		struct timespec a, b;
		__u32 x = 12345;
		__u64 ns;

		clock_gettime(CLOCK_MONOTONIC, &a);
		for (size_t i = 0; i < rounds; i++) {
			x = x * 1103515245 + 12345;
			sink += pycode__line(&l311, c, (x >> 8) % units);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = (b.tv_sec - a.tv_sec) * 1000000000ull + b.tv_nsec - a.tv_nsec;
		if (ns < best)
			best = ns;
	}
	(void)sink;
	return best;
}

/*
 * The index: one range per line change, however long the table, and a
 * lookup in it costs the log of its size, not a walk of the table (which
 * took about 0.5 ms an instruction for a 30,000-line function): a table
 * 1,024 times as long costs some times as much a lookup (18 steps instead
 * of 8, and cache misses), far from 1,024 times.
 */
TEST(index_big)
{
	size_t n = PYCODE_LINES_MAX;
	__u8 *t = malloc(n);
	struct pycode c, part;
	__u64 big_ns, part_ns;

	/* Every unit one line further: a range each, the worst case. */
	memset(t, loc(11, 1), n);
	c = table(&l311, t, n, 1);
	part = table(&l311, t, n / 1024, 1);
	CHECK_INT(c.nr_lines, n);
	CHECK_INT(pycode__line(&l311, &c, 0), 2);
	CHECK_INT(pycode__line(&l311, &c, 1000), 1002);
	CHECK_INT(pycode__line(&l311, &c, n - 1), n + 1);
	CHECK_INT(pycode__line(&l311, &c, n), 0);
	big_ns = lookup_ns(&c, n, 200000);
	part_ns = lookup_ns(&part, n / 1024, 200000);
	fprintf(stderr, "  # 200000 lookups: %.2f ms in %zu ranges, %.2f ms in %zu\n",
		big_ns / 1e6, c.nr_lines, part_ns / 1e6, part.nr_lines);
	CHECK(big_ns <= part_ns * 128);
	pycode__free(&c);
	pycode__free(&part);

	/* Units on one line make one range, each 8 units long. */
	memset(t, loc(10, 8), n);
	c = table(&l311, t, n, 7);
	CHECK_INT(c.nr_lines, 1);
	CHECK_INT(pycode__line(&l311, &c, 8 * n - 1), 7);
	CHECK_INT(pycode__line(&l311, &c, 8 * n), 0);
	pycode__free(&c);
	free(t);
}

static void run_live(void)
{
	struct pyinterp more[PY_INTERPS_MAX];
	struct pyinterp req = { PY_REQUIRED, "debian-3.11" };
	int i, nr = pyinterp__find_more(more);

	pytarget__run("live", req.name, live, &req);
	for (i = 0; i < nr; i++)
		pytarget__run("live", more[i].name, live, &more[i]);
}

int main(void)
{
	setup();
	RUN(arena_sane);
	RUN(wrong_types);
	RUN(bad_pointers);
	RUN(fail_midway);
	RUN(huge_lengths);
	RUN(str_kinds);
	RUN(firstlineno);
	RUN(lnotab);
	RUN(linetable310);
	RUN(locations);
	RUN(locations_truncated);
	RUN(garbage_tables);
	RUN(unknown_kind);
	RUN(index_big);
	run_live();
	free(arena.mem);
	return unit_summary();
}
