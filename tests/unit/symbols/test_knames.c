// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel frames named by the kernel: the %pB text taken apart, and, as
 * root, the running kernel's answers against /proc/kallsyms for thousands
 * of addresses (core kernel, modules and BPF programs alike).
 */
#include <stdlib.h>
#include <unistd.h>
#include "unit.h"
#include "fixtures/skip.h"
#include "symbols/knames.h"
#include "symbols/ksyms.h"

static void check_parse(const char *s, const char *name, const char *module, __u64 off)
{
	struct kname_parts p;

	CHECK(knames__parse(s, &p));
	CHECK_INT(p.name_len, strlen(name));
	CHECK(!strncmp(p.name, name, p.name_len));
	if (module) {
		CHECK_INT(p.module_len, strlen(module));
		CHECK(p.module && !strncmp(p.module, module, p.module_len));
	} else {
		CHECK(p.module == NULL);
	}
	CHECK_INT(p.offset, off);
}

TEST(parse)
{
	struct kname_parts p;

	check_parse("do_syscall_64+0x71/0x1c0", "do_syscall_64", NULL, 0x71);
	check_parse("vms_clear_ptes.part.0+0x1/0x90", "vms_clear_ptes.part.0", NULL, 1);
	check_parse("ext4_map_blocks+0x2c/0x5a0 [ext4]", "ext4_map_blocks", "ext4", 0x2c);
	check_parse("bpf_prog_6deef7357e7b4530_do_sample+0x12/0x3f0 [bpf]",
		    "bpf_prog_6deef7357e7b4530_do_sample", "bpf", 0x12);
	/* The last "+0x.../" counts, not a '+' inside the name. */
	check_parse("a+b+0x10/0x20", "a+b", NULL, 0x10);
	/* No symbol: %pB prints the bare address. */
	CHECK(!knames__parse("0xffffffffc0001234", &p));
	CHECK(!knames__parse("", &p));
	CHECK(!knames__parse("+0x1/0x2", &p));
	CHECK(!knames__parse("name+0x/0x2", &p));
	CHECK(!knames__parse("name+0x1z/0x2", &p));
	CHECK(!knames__parse("name+0x1/0x2 [", &p));
	CHECK(!knames__parse("name+0x1/0x2 []", &p));
	CHECK(!knames__parse("name 0x1/0x2", &p));
}

struct ksym_line {
	__u64 addr;
	char *name;
};

static int cmp_line(const void *a, const void *b)
{
	const struct ksym_line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols from /proc/kallsyms, sorted by address; *nr of them. */
static struct ksym_line *read_text_symbols(size_t *nr)
{
	struct ksym_line *v = NULL;
	size_t n = 0, cap = 0;
	char line[1024], name[600], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %599s", &addr, &type, name) != 3 ||
		    !strchr("tTwW", type))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				break;
		}
		v[n].addr = addr;
		v[n++].name = strdup(name);
	}
	if (f)
		fclose(f);
	qsort(v, n, sizeof(*v), cmp_line);
	*nr = v ? n : 0;
	return v;
}

/* Does kallsyms list name at addr (one of several aliases there)? */
static bool listed(const struct ksym_line *v, size_t n, __u64 addr, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && v[lo].addr == addr; lo++)
		if (!strcmp(v[lo].name, name))
			return true;
	return false;
}

static bool same_module(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Compare one address; count it in *compared, return false on a mismatch. */
static bool agrees(struct knames *kn, const struct ksyms *ks, const struct ksym_line *v,
		   size_t n, __u64 pc, size_t *compared)
{
	struct ksym a, b;

	if (!ksyms__find(ks, pc, &b))
		return true;	/* outside the text ksyms keeps */
	(*compared)++;
	if (!knames__find(kn, pc, &a)) {
		/* Section ends: kallsyms would misname what follows them. */
		if (!strcmp(b.name, "_etext") || !strcmp(b.name, "_einittext") ||
		    !strcmp(b.name, "__init_end"))
			return true;
		/* A BPF program another tool unloaded since kallsyms was read. */
		if (b.module && !strcmp(b.module, "bpf"))
			return true;
		fprintf(stderr, "  %llx: kallsyms says %s, the kernel names nothing\n",
			(unsigned long long)pc, b.name);
		return false;
	}
	if (a.addr == b.addr && same_module(a.module, b.module) &&
	    (!strcmp(a.name, b.name) || listed(v, n, a.addr, a.name)))
		return true;
	fprintf(stderr, "  %llx: kernel %s+%llx [%s], kallsyms %s+%llx [%s]\n",
		(unsigned long long)pc, a.name, (unsigned long long)(pc - a.addr),
		a.module ? a.module : "", b.name, (unsigned long long)(pc - b.addr),
		b.module ? b.module : "");
	return false;
}

TEST(kernel_agrees_with_kallsyms)
{
	struct ksyms *ks;
	struct knames *kn;
	struct ksym_line *v;
	size_t n, compared = 0, bad = 0, modules = 0;
	__u64 pcs[127];
	size_t np = 0;

	SKIP_UNLESS(geteuid() == 0, "naming by the kernel needs root (BPF)");
	kn = knames__new(false);
	ks = ksyms__load("/proc/kallsyms");
	v = read_text_symbols(&n);
	CHECK(kn && knames__from_kernel(kn));
	CHECK(ks && !ksyms__hidden(ks));
	CHECK(n > 10000);
	if (!kn || !knames__from_kernel(kn) || !ks || ksyms__hidden(ks))
		goto out;
	/* Every 5th symbol's first two bytes, asked for a stack at a time. */
	for (size_t i = 0; i < n; i += 5) {
		if (!strncmp(v[i].name, "__pfx_", 6))
			continue;	/* padding: no frame lands there */
		pcs[np++] = v[i].addr;
		pcs[np++] = v[i].addr + 1;
		if (np + 2 > 127 || i + 5 >= n) {
			knames__prepare(kn, pcs, np);
			for (size_t j = 0; j < np; j++)
				if (!agrees(kn, ks, v, n, pcs[j], &compared) && ++bad > 20)
					goto out;
			np = 0;
		}
	}
	for (size_t i = 0; i < n; i += 5) {
		struct ksym a;

		if (knames__find(kn, v[i].addr, &a) && a.module)
			modules++;
	}
	printf("# %zu addresses compared, %zu in modules or BPF programs, %zu differ\n",
	       compared, modules, bad);
	CHECK(compared > 10000);
	/* Our own naming program is a BPF program: named, and under [bpf]. */
	{
		size_t ours = 0;

		for (size_t i = 0; i < n; i++) {
			struct ksym a;

			if (!strstr(v[i].name, "_name_addrs"))
				continue;
			ours++;
			CHECK(knames__find(kn, v[i].addr, &a));
			CHECK_STR(a.module, "bpf");
			CHECK_STR(a.name, v[i].name);
		}
		CHECK(ours >= 1);
	}
	/* Not a symbol at all: a user-space address. */
	{
		struct ksym a;

		CHECK(!knames__find(kn, 0x1000, &a));
	}
out:
	CHECK_INT(bad, 0);
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	ksyms__free(ks);
	knames__free(kn);
}

/* --kallsyms: names come from /proc/kallsyms, not from the kernel. */
TEST(kallsyms_on_request)
{
	struct knames *kn;
	struct ksym_line *v;
	struct ksym a;
	size_t n, i;

	SKIP_UNLESS(geteuid() == 0, "/proc/kallsyms shows addresses to root");
	kn = knames__new(true);
	v = read_text_symbols(&n);
	CHECK(kn != NULL);
	CHECK(!knames__from_kernel(kn));
	for (i = n / 2; i < n && !strncmp(v[i].name, "__pfx_", 6); i++)
		;
	CHECK(i < n);
	if (kn && i < n) {
		CHECK(knames__find(kn, v[i].addr + 1, &a));
		CHECK(listed(v, n, a.addr, a.name));
		CHECK_INT(a.addr, v[i].addr);
	}
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	knames__free(kn);
}

int main(void)
{
	RUN(parse);
	RUN_S(kernel_agrees_with_kallsyms);
	RUN_S(kallsyms_on_request);
	return unit_summary();
}
