// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kallsyms parsing on fixture text. */
#include <stdlib.h>
#include "unit.h"
#include "symbols/ksyms.h"

static struct ksyms *load(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct ksyms *ks = ksyms__load_file(f);

	fclose(f);
	return ks;
}

TEST(lookup)
{
	struct ksyms *ks = load(
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 t helper\n"
		"ffffffff81000200 D some_data\n"
		"ffffffff81000300 W weak_fn\n"
		"ffffffffc0000000 t ext4_foo\t[ext4]\n"
		"ffffffffc0000080 t ext4_bar\t[ext4]\n"
		"ffffffffc0100000 t bpf_prog_0123456789abcdef_do_sample\t[bpf]\n");
	struct ksym s;

	CHECK(ks != NULL);
	CHECK(!ksyms__hidden(ks));
	CHECK_INT(ksyms__count(ks), 6);	/* data symbol dropped */
	CHECK(ksyms__find(ks, 0xffffffff81000150, &s));
	CHECK_STR(s.name, "helper");
	CHECK(s.module == NULL);
	CHECK_INT(s.addr, 0xffffffff81000100);
	CHECK(ksyms__find(ks, 0xffffffff81000250, &s));
	CHECK_STR(s.name, "helper");	/* the data symbol is not text */
	CHECK(ksyms__find(ks, 0xffffffffc0000090, &s));
	CHECK_STR(s.name, "ext4_bar");
	CHECK_STR(s.module, "ext4");
	CHECK(ksyms__find(ks, 0xffffffffc0100010, &s));
	CHECK_STR(s.name, "bpf_prog_0123456789abcdef_do_sample");
	CHECK_STR(s.module, "bpf");
	CHECK(!ksyms__find(ks, 0x1000, &s));
	ksyms__free(ks);
}

TEST(hidden_addresses)
{
	struct ksyms *ks = load(
		"0000000000000000 T _stext\n"
		"0000000000000000 t helper\n");
	struct ksym s;

	CHECK(ks != NULL);
	CHECK(ksyms__hidden(ks));
	CHECK(!ksyms__find(ks, 0xffffffff81000000, &s));
	ksyms__free(ks);
}

TEST(padding_symbols_skipped)
{
	struct ksyms *ks = load(
		"ffffffff81000000 T __pfx_do_work\n"
		"ffffffff81000010 T do_work\n"
		"ffffffff81000050 T __pfx_next_fn\n"
		"ffffffff81000060 T next_fn\n");
	struct ksym s;

	CHECK(ks != NULL);
	CHECK_INT(ksyms__count(ks), 2);
	/* An address in the padding before next_fn still belongs to do_work. */
	CHECK(ksyms__find(ks, 0xffffffff81000055, &s));
	CHECK_STR(s.name, "do_work");
	CHECK(!ksyms__find(ks, 0xffffffff81000005, &s));
	CHECK(!ksyms__find(ks, 0x1000, &s));
	ksyms__free(ks);
}

TEST(garbage_lines)
{
	struct ksyms *ks = load("\nnot a line\nzz T x\nffffffff81000000 T\n"
				"ffffffff81000000 T ok\n");
	struct ksym s;

	CHECK(ks != NULL);
	CHECK(ksyms__find(ks, 0xffffffff81000001, &s));
	CHECK_STR(s.name, "ok");
	ksyms__free(ks);
}

/*
 * "ffffffff81000000 T " and a name of n - 19 bytes: a line of n characters
 * before its newline.  The line buffer holds 1023 and the NUL.  A line that
 * does not fit is skipped whole: the rest of it, which here looks like a
 * symbol line of its own, must not be parsed as one.
 */
static char *long_line(size_t n, unsigned int addr_lo)
{
	const char *tail = "ffffffff81000f00 T tail_fragment";
	char *s = malloc(n + 2);
	int head;

	if (!s)
		return NULL;
	head = snprintf(s, n + 2, "ffffffff%08x T ", addr_lo);
	memset(s + head, 'n', n - head);
	if (n > 1023 + strlen(tail))
		memcpy(s + 1023, tail, strlen(tail));
	s[n] = '\n';
	s[n + 1] = '\0';
	return s;
}

static void check_long_line(size_t n, bool fits)
{
	char *line = long_line(n, 0x81000100);
	char *text = NULL;
	struct ksyms *ks;
	struct ksym s;

	CHECK(line != NULL);
	if (!line || asprintf(&text, "ffffffff81000000 T first\n%sffffffff81000200 T last\n",
			      line) < 0) {
		CHECK(0);
		free(line);
		return;
	}
	ks = load(text);
	CHECK(ks != NULL);
	if (ks) {
		CHECK_INT(ksyms__count(ks), fits ? 3 : 2);
		CHECK(ksyms__find(ks, 0xffffffff81000150, &s));
		if (fits) {
			CHECK_INT(strlen(s.name), n - 19);
			CHECK(s.module == NULL);
		} else {
			CHECK_STR(s.name, "first");
		}
		CHECK(ksyms__find(ks, 0xffffffff81000f10, &s));
		CHECK_STR(s.name, "last");
		ksyms__free(ks);
	}
	free(text);
	free(line);
}

TEST(long_lines)
{
	check_long_line(1022, true);
	check_long_line(1023, true);	/* only its newline is left over */
	check_long_line(1024, false);
	check_long_line(2000, false);
}

/* The last line at the buffer's size, with no newline after it. */
TEST(long_last_line)
{
	char *line = long_line(1023, 0x81000100);
	struct ksyms *ks;
	struct ksym s;

	CHECK(line != NULL);
	if (!line)
		return;
	line[1023] = '\0';
	ks = load(line);
	CHECK(ks != NULL);
	if (ks) {
		CHECK(ksyms__find(ks, 0xffffffff81000100, &s));
		CHECK_INT(strlen(s.name), 1023 - 19);
		ksyms__free(ks);
	}
	free(line);
}

TEST(real_kallsyms)
{
	struct ksyms *ks = ksyms__load("/proc/kallsyms");

	CHECK(ks != NULL);
	if (ks)
		CHECK(ksyms__count(ks) > 1000);
	ksyms__free(ks);
}

int main(void)
{
	RUN(lookup);
	RUN(hidden_addresses);
	RUN(padding_symbols_skipped);
	RUN(garbage_lines);
	RUN(long_lines);
	RUN(long_last_line);
	RUN(real_kallsyms);
	return unit_summary();
}
