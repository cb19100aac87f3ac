// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kallsyms parsing on fixture text. */
#include <stdlib.h>
#include "unit.h"
#include "ksyms.h"

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
	RUN(real_kallsyms);
	return unit_summary();
}
