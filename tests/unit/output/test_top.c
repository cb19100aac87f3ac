// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The --top view: the decayed table, what gets cut at a width, the keys. */
#include <stdlib.h>
#include "unit.h"
#include "output/output.h"
#include "output/report.h"
#include "lib/strbuf.h"
#include "output/top.h"
#include "stacks.h"

#define ELLIPSIS "\xe2\x80\xa6"

static STACK(st_b, 2);
static STACK(st_a, 2);
static STACK(st_cxx, 2);
static const struct output_opts user_only = { .view.parts[PART_USER] = true };

static void setup(void)
{
	st_b.frames[0] = (struct frame){ .name = "func_b", .addr = 0x401000, .module = "/bin/burn" };
	st_b.frames[1] = (struct frame){ .name = "main", .addr = 0x402000, .module = "/bin/burn" };
	st_a.frames[0] = (struct frame){ .name = "func_a", .addr = 0x401100, .module = "/bin/burn" };
	st_a.frames[1] = st_b.frames[1];
	st_cxx.frames[0] = (struct frame){
		.name = "engine::hash_strings(std::vector<std::__cxx11::basic_string<char, "
			"std::char_traits<char>, std::allocator<char> >, std::allocator<"
			"std::__cxx11::basic_string<char> > > const&)",
		.addr = 0x401200, .module = "/usr/lib/x86_64-linux-gnu/memfd:sealed-very-long-module-name (deleted)" };
	st_cxx.frames[1] = st_b.frames[1];
}

static char *cell(const char *s, size_t cols, bool pad)
{
	struct strbuf sb = {};

	report__cell(&sb, s, cols, pad);
	CHECK_INT(sb.err, 0);
	return sb.buf ? sb.buf : strdup("");
}

/* Columns are counted per character; a cut name ends with the ellipsis. */
TEST(cell_cut_and_pad)
{
	static const struct { const char *in; size_t cols; bool pad; const char *out; } cases[] = {
		{ "func_b", 10, true, "func_b    " },
		{ "func_b", 6, false, "func_b" },
		{ "func_b", 5, false, "func" ELLIPSIS },
		{ "func_b", 1, false, ELLIPSIS },
		{ "func_b", 0, false, "" },
		{ "func_b", 3, true, "fu" ELLIPSIS },
		/* Two columns each, counted wide: 5 columns hold two and the ellipsis. */
		{ "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 5, true, "\xe6\x97\xa5\xe6\x9c\xac" ELLIPSIS },
		{ "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 4, true, "\xe6\x97\xa5" ELLIPSIS " " },
		/* Latin letters are one column: caf\u00e9 fits in 4. */
		{ "caf\xc3\xa9", 4, false, "caf\xc3\xa9" },
		/* An escape or a broken sequence prints as one "?" per byte. */
		{ "a\033[2Jb", 10, false, "a?[2Jb" },
		{ "x\xc3", 3, true, "x? " },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = cell(cases[i].in, cases[i].cols, cases[i].pad);

		CHECK_STR(out, cases[i].out);
		free(out);
	}
	CHECK_INT(report__cols("func_b"), 6);
	CHECK_INT(report__cols(ELLIPSIS), 1);
	CHECK_INT(report__cols("\xe6\x97\xa5x"), 3);
	CHECK_INT(report__cols("\033"), 1);
}

/* The Symbol column takes the rest; on a narrow screen the others give room first. */
TEST(layout)
{
	struct top_layout l;

	top__layout(80, 4, 4, &l);	/* short names: the header's widths */
	CHECK_INT(l.comm, 7);
	CHECK_INT(l.module, 13);
	CHECK_INT(l.symbol, 80 - 20 - 7 - 2 - 13 - 2);
	top__layout(200, 15, 70, &l);	/* a long module: capped */
	CHECK_INT(l.comm, 15);
	CHECK_INT(l.module, 24);
	CHECK_INT(l.symbol, 200 - 20 - 15 - 2 - 24 - 2);
	top__layout(80, 15, 30, &l);	/* 24 for the symbol: the module gives 7 */
	CHECK_INT(l.comm, 15);
	CHECK_INT(l.module, 17);
	CHECK_INT(l.symbol, 24);
	top__layout(60, 15, 30, &l);	/* then the command */
	CHECK_INT(l.module, 13);
	CHECK_INT(l.comm, 7);
	CHECK_INT(l.symbol, 60 - 20 - 7 - 2 - 13 - 2);
	top__layout(30, 15, 30, &l);	/* nothing left: the line is cut */
	CHECK_INT(l.symbol, 0);
}

static char *render(const struct top *t, size_t w, size_t h)
{
	struct strbuf sb = {};

	top__render(t, w, h, &sb);
	CHECK_INT(sb.err, 0);
	return sb.buf ? sb.buf : strdup("");
}

/* Line i (0-based) of a frame, in a static buffer; "" past the end. */
static const char *line_of(const char *frame, int i)
{
	static char buf[1024];
	const char *end;

	for (; i > 0 && frame; i--) {
		frame = strstr(frame, "\r\n");
		frame = frame ? frame + 2 : NULL;
	}
	if (!frame)
		return "";
	end = strstr(frame, "\r\n");
	snprintf(buf, sizeof(buf), "%.*s", (int)(end ? end - frame : (long)strlen(frame)), frame);
	return buf;
}

static size_t nr_lines(const char *frame)
{
	size_t n = *frame ? 1 : 0;

	for (const char *p = frame; (p = strstr(p, "\r\n")); p += 2)
		n++;
	return n;
}

static void update(struct top *t, struct record *r, size_t nr)
{
	struct records p = { .recs = r, .nr = nr };

	CHECK_INT(top__update(t, &p, 1.0), 0);
}

/* A view of limit rows after one interval of burn: func_b 300, func_a 100. */
static struct top *burn_top(size_t limit)
{
	struct top *t = top__new(&user_only, limit, false);
	struct record r[2];

	CHECK(t != NULL);
	if (!t)
		return NULL;
	r[0] = test_record("burn", 1, 300, &st_b, PART_OK, NULL, PART_ABSENT);
	r[1] = test_record("burn", 1, 100, &st_a, PART_OK, NULL, PART_ABSENT);
	update(t, r, 2);
	return t;
}

/*
 * func_b 3x func_a: sorted by self, the caller (no self time) hidden; the
 * ratio holds as the old weights decay; c shows the caller, z zeroes.
 */
TEST(decay_sort_keys)
{
	struct top *t = burn_top(0);
	char *f;

	if (!t)
		return;
	update(t, NULL, 0);	/* an idle interval: weights x 7/8 */
	f = render(t, 80, 24);
	CHECK(!strncmp(line_of(f, 0), "profile --top: 187 samples/s (~2 s decayed); last 1.0 s: 0; in all: 400", 200));
	CHECK_STR(line_of(f, 1), "keys: q quit, z zero, c rows without self time (hidden)");
	CHECK_STR(line_of(f, 2), "    Self  Children  Command  Shared Object  Symbol");
	CHECK_STR(line_of(f, 3), "  75.00%    75.00%  burn     burn           func_b");
	CHECK_STR(line_of(f, 4), "  25.00%    25.00%  burn     burn           func_a");
	CHECK_INT(nr_lines(f), 5);
	free(f);

	CHECK_INT(top__key(t, 'c'), TOP_REDRAW);
	f = render(t, 80, 24);
	CHECK_STR(line_of(f, 1), "keys: q quit, z zero, c rows without self time (shown)");
	CHECK_STR(line_of(f, 5), "   0.00%   100.00%  burn     burn           main");
	free(f);
	CHECK_INT(top__key(t, 'c'), TOP_REDRAW);

	CHECK_INT(top__key(t, 'z'), TOP_REDRAW);
	f = render(t, 80, 24);
	CHECK(!strncmp(line_of(f, 0), "profile --top: - samples/s (~0 s decayed); last 1.0 s: 0; in all: 0", 200));
	CHECK_INT(nr_lines(f), 3);
	free(f);
	CHECK_INT(top__key(t, 'q'), TOP_QUIT);
	CHECK_INT(top__key(t, 'x'), TOP_NONE);
	top__free(t);
}

/* A function that stops running fades, and its entry goes in the end. */
TEST(decay_drops_entries)
{
	struct top *t = top__new(&user_only, 0, false);
	struct record r[2];
	char *f;
	int i;

	CHECK(t != NULL);
	if (!t)
		return;
	r[0] = test_record("old", 1, 1, &st_a, PART_OK, NULL, PART_ABSENT);
	update(t, r, 1);
	r[0] = test_record("burn", 1, 100, &st_b, PART_OK, NULL, PART_ABSENT);
	for (i = 0; i < 30; i++)
		update(t, r, 1);
	/* 1 x 0.875^30 = 0.018: below the floor, dropped even with c. */
	top__key(t, 'c');
	f = render(t, 80, 24);
	CHECK(strstr(f, "func_b") != NULL);
	CHECK(strstr(f, "func_a") == NULL);
	CHECK(strstr(f, " old ") == NULL);
	free(f);
	top__free(t);
}

/* The table of report.c alone: scale drops what fell below the floor. */
TEST(table_scale)
{
	struct report_table tab = {};
	struct report_entry **rows;
	struct record r[2];
	struct records p = { .recs = r, .nr = 2 };

	r[0] = test_record("burn", 1, 8, &st_b, PART_OK, NULL, PART_ABSENT);
	r[1] = test_record("burn", 1, 1, &st_a, PART_OK, NULL, PART_ABSENT);
	CHECK_INT(report_table__add(&tab, &p, &user_only), 0);
	CHECK_INT(tab.nr, 3);		/* func_b, main, func_a */
	report_table__scale(&tab, 0.5, 0.6);
	CHECK_INT(tab.nr, 2);		/* func_a: 0.5 < 0.6 */
	CHECK(tab.all == 4.5);
	/* Still indexed: counting again finds the entries kept. */
	CHECK_INT(report_table__add(&tab, &p, &user_only), 0);
	CHECK_INT(tab.nr, 3);
	CHECK_INT(report_table__sorted(&tab, &rows), 0);
	CHECK_STR(rows[0]->symbol, "func_b");
	CHECK(rows[0]->self == 12);
	CHECK_STR(rows[1]->symbol, "func_a");
	CHECK(rows[1]->self == 1);
	CHECK_STR(rows[2]->symbol, "main");
	CHECK(rows[2]->self == 0 && rows[2]->total == 13.5);
	free(rows);
	report_table__free(&tab);
	CHECK_INT(tab.nr, 0);
}

/* Every line within the width, the header first, the rows that fit below. */
TEST(render_fits)
{
	static const size_t sizes[][2] = { { 80, 24 }, { 200, 60 }, { 40, 6 }, { 20, 3 }, { 10, 1 } };
	struct top *t = top__new(&user_only, 0, false);
	struct record r[3];

	CHECK(t != NULL);
	if (!t)
		return;
	r[0] = test_record("burn", 1, 300, &st_b, PART_OK, NULL, PART_ABSENT);
	r[1] = test_record("burn", 1, 100, &st_a, PART_OK, NULL, PART_ABSENT);
	r[2] = test_record("cxxburn", 2, 200, &st_cxx, PART_OK, NULL, PART_ABSENT);
	update(t, r, 3);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t w = sizes[s][0], h = sizes[s][1];
		char *f = render(t, w, h);
		size_t n = nr_lines(f);

		CHECK(n <= h);
		CHECK(!strncmp(f, "profile --top:", w < 14 ? w - 1 : 14));
		for (size_t i = 0; i < n; i++)
			CHECK(report__cols(line_of(f, i)) <= w);
		if (h >= 6)
			CHECK_INT(n, h < 24 ? h : 6);
		free(f);
	}
	/* At 80 columns the long name and module are cut, never wrapped. */
	{
		char *f = render(t, 80, 24);

		CHECK_STR(line_of(f, 4), "  33.33%    33.33%  cxxburn  memfd:sealed-very-long-" ELLIPSIS
			  "  engine::hash_strings(std" ELLIPSIS);
		CHECK_INT(report__cols(line_of(f, 4)), 80);
		free(f);
	}
	top__free(t);
}

/* --limit caps the rows even on a tall screen. */
TEST(limit)
{
	struct top *t = burn_top(1);
	char *f;

	if (!t)
		return;
	f = render(t, 80, 24);
	CHECK_INT(nr_lines(f), 4);
	CHECK(strstr(line_of(f, 3), "func_b") != NULL);
	free(f);
	top__free(t);
}

/*
 * --off-cpu and --wall: the title counts time, in milliseconds; the rows
 * are shares of it; a wall profile's on-CPU sample weighs period_ns.
 */
TEST(time_kinds)
{
	struct output_opts off_cpu = user_only, wall = user_only;
	struct record r[2];
	struct top *t;
	char *f;

	off_cpu.kind = PROFILE_OFF_CPU;
	r[0] = test_record("sleep", 1, 1500000000, &st_b, PART_OK, NULL, PART_ABSENT);
	r[0].what = COUNT_OFF_CPU;
	r[1] = test_record("sleep", 1, 500000000, &st_a, PART_OK, NULL, PART_ABSENT);
	r[1].what = COUNT_OFF_CPU;
	t = top__new(&off_cpu, 0, false);
	CHECK(t != NULL);
	if (!t)
		return;
	update(t, r, 2);
	f = render(t, 100, 24);
	CHECK_STR(line_of(f, 0), "profile --top: off-CPU 2000 ms/s (~1 s decayed); "
		  "last 1.0 s: 2000 ms; in all: 2000 ms");
	CHECK_STR(line_of(f, 3), "  75.00%    75.00%  sleep    burn           func_b");
	free(f);
	top__free(t);

	wall.kind = PROFILE_WALL;
	wall.period_ns = 10000000;
	wall.view.mark_off_cpu = true;
	r[1] = test_record("sleep", 1, 50, &st_a, PART_OK, NULL, PART_ABSENT);
	t = top__new(&wall, 0, false);
	CHECK(t != NULL);
	if (!t)
		return;
	update(t, r, 2);
	f = render(t, 100, 24);
	CHECK_STR(line_of(f, 0), "profile --top: wall-clock 2000 ms/s (~1 s decayed); "
		  "last 1.0 s: 2000 ms; in all: 2000 ms");
	CHECK_STR(line_of(f, 3), "  75.00%    75.00%  sleep    [off-cpu]      [off-cpu]");
	CHECK_STR(line_of(f, 4), "  25.00%    25.00%  sleep    burn           func_a");
	free(f);
	top__free(t);
}

int main(void)
{
	setup();
	RUN(cell_cut_and_pad);
	RUN(layout);
	RUN(decay_sort_keys);
	RUN(decay_drops_entries);
	RUN(table_scale);
	RUN(render_fits);
	RUN(limit);
	RUN(time_kinds);
	return unit_summary();
}
