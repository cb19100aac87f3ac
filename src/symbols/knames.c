// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel frames named by the kernel.  A profile of user code holds only a
 * few hundred distinct kernel addresses, yet /proc/kallsyms makes the
 * kernel format 120,000 lines (30 ms of CPU) to name them.  Instead, a
 * BPF_PROG_TYPE_SYSCALL program formats each address with %pB, which
 * looks it up the way a kernel backtrace does, up to KNAMES_BATCH
 * addresses per run; each distinct address is asked for once and kept.
 *
 * %pB names the instruction before the address it is given, as return
 * addresses want, and prints the offset plus one; it is given pc + 1, so
 * that pc itself is named, and start = pc + 1 - printed offset.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "symbols/knames.h"
#include "bpf/knames_abi.h"
#include "lib/htab.h"
#include "lib/util.h"
#include "knames.skel.h"
#include "lib/log.h"

struct kname {
	__u64 start;
	const char *name;	/* NULL: no symbol covers the address */
	const char *module;
};

struct knames {
	struct knames_bpf *skel;	/* NULL: names come from ks */
	struct ksyms *ks;
	bool ks_tried;			/* read for ftrace trampolines */
	struct htab cache;		/* pc -> id of ents[] */
	struct kname *ents;
	size_t nr, cap;
	struct strpool pool;
	__u64 runs;
};

/* s[0..len) is "0x" and hex digits; their value into *v. */
static bool parse_hex(const char *s, size_t len, __u64 *v)
{
	char buf[24], *end;

	if (len < 3 || len >= sizeof(buf) || strncmp(s, "0x", 2))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*v = strtoull(buf + 2, &end, 16);
	return !errno && isxdigit((unsigned char)buf[2]) && *end == '\0';
}

bool knames__parse(const char *s, struct kname_parts *out)
{
	const char *plus, *slash, *end = s + strlen(s);
	__u64 size;

	memset(out, 0, sizeof(*out));
	if (end > s && end[-1] == ']') {
		const char *open = strstr(s, " [");

		if (!open || open + 2 >= end - 1)
			return false;
		out->module = open + 2;
		out->module_len = end - 1 - out->module;
		end = open;
	}
	slash = memrchr(s, '/', end - s);
	plus = slash ? memrchr(s, '+', slash - s) : NULL;
	if (!plus || plus == s || !parse_hex(plus + 1, slash - plus - 1, &out->offset) ||
	    !parse_hex(slash + 1, end - slash - 1, &size))
		return false;
	out->name = s;
	out->name_len = plus - s;
	return true;
}

static struct kname *new_entry(struct knames *kn, __u64 pc)
{
	struct kname *e;

	if (util__grow_array((void **)&kn->ents, &kn->cap, kn->nr + 1, sizeof(*kn->ents)))
		return NULL;
	if (htab__put(&kn->cache, pc, 0, htab__id_val(kn->nr + 1)))
		return NULL;
	e = &kn->ents[kn->nr++];
	memset(e, 0, sizeof(*e));
	return e;
}

static bool all_hex(const char *s, size_t len, bool dec)
{
	for (size_t i = 0; i < len; i++)
		if (!(dec ? isdigit((unsigned char)s[i]) : isxdigit((unsigned char)s[i])))
			return false;
	return len > 0;
}

/*
 * %pB gives BPF programs and trampolines no module, where /proc/kallsyms
 * says [bpf]; their names tell them from kernel functions such as
 * bpf_prog_load: "bpf_prog_" and a 16-digit tag, "bpf_trampoline_" and a
 * number.
 */
static bool bpf_symbol(const char *name, size_t len)
{
	const char *prog = "bpf_prog_", *tramp = "bpf_trampoline_";

	if (len >= strlen(prog) + 16 && !strncmp(name, prog, strlen(prog))) {
		name += strlen(prog);
		len -= strlen(prog);
		return all_hex(name, 16, false) && (len == 16 || name[16] == '_');
	}
	if (len > strlen(tramp) && !strncmp(name, tramp, strlen(tramp)))
		return all_hex(name + strlen(tramp), len - strlen(tramp), true);
	return false;
}

/* Keep what the kernel said about pc; an unnamed pc is kept too. */
static void store(struct knames *kn, __u64 pc, const char *text)
{
	struct kname_parts p;
	struct kname *e = new_entry(kn, pc);

	if (!e || !knames__parse(text, &p) || p.offset == 0 || p.offset > pc + 1)
		return;
	e->name = strpool__intern(&kn->pool, p.name, p.name_len);
	if (p.module)
		e->module = strpool__intern(&kn->pool, p.module, p.module_len);
	else if (bpf_symbol(p.name, p.name_len))
		e->module = "bpf";
	e->start = pc + 1 - p.offset;
}

/* One program run for up to KNAMES_BATCH addresses; 0 or -errno. */
static int ask_kernel(struct knames *kn, const __u64 *pcs, size_t n)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	struct knames_bpf__bss *bss = kn->skel->bss;
	int err;

	bss->nr = n;
	for (size_t i = 0; i < n; i++) {
		bss->addrs[i] = pcs[i] + 1;
		bss->names[i][0] = '\0';	/* not last batch's, if a call fails */
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(kn->skel->progs.name_addrs), &topts);
	if (err)
		return -errno;
	kn->runs++;
	for (size_t i = 0; i < n; i++) {
		bss->names[i][KNAMES_LEN - 1] = '\0';
		store(kn, pcs[i], bss->names[i]);
	}
	return 0;
}

static struct ksyms *load_kallsyms(void)
{
	struct ksyms *ks = ksyms__load("/proc/kallsyms");

	if (!ks) {
		pr_warn("cannot read /proc/kallsyms: %s; kernel frames will be [unknown]",
			strerror(errno));
		return NULL;
	}
	if (ksyms__hidden(ks))
		pr_warn("/proc/kallsyms shows only zero addresses (kernel.kptr_restrict, or no CAP_SYSLOG); kernel frames will be [unknown]");
	return ks;
}

/* The program failed to run: name the rest from /proc/kallsyms. */
static void fall_back(struct knames *kn, int err)
{
	pr_warn("the kernel-symbol program failed (%s); reading /proc/kallsyms instead",
		strerror(-err));
	knames_bpf__destroy(kn->skel);
	kn->skel = NULL;
	if (!kn->ks)	/* not already read for an ftrace trampoline */
		kn->ks = load_kallsyms();
}

static bool in_batch(const __u64 *batch, size_t nb, __u64 pc)
{
	for (size_t i = 0; i < nb; i++)
		if (batch[i] == pc)
			return true;
	return false;
}

void knames__prepare(struct knames *kn, const __u64 *pcs, size_t n)
{
	__u64 batch[KNAMES_BATCH];
	size_t nb = 0;
	int err = 0;

	if (!kn || !kn->skel)
		return;
	for (size_t i = 0; i < n && !err; i++) {
		/* Stacks repeat frames (recursion): ask once. */
		if (!htab__get(&kn->cache, pcs[i], 0) && !in_batch(batch, nb, pcs[i]))
			batch[nb++] = pcs[i];
		if (nb == KNAMES_BATCH || (nb && i + 1 == n)) {
			err = ask_kernel(kn, batch, nb);
			nb = 0;
		}
	}
	if (err)
		fall_back(kn, err);
}

/*
 * The one kind of text that %pB cannot name is an ftrace trampoline (BPF
 * trampolines it can); /proc/kallsyms lists them, as "ftrace_trampoline
 * [__builtin__ftrace]".  Read it then, once, and take nothing else from it:
 * for an address no symbol covers, such as a BPF program unloaded since, the
 * nearest symbol below would be a wrong name.
 */
static bool ftrace_trampoline(struct knames *kn, __u64 pc, struct ksym *sym)
{
	if (!kn->ks_tried) {
		kn->ks_tried = true;
		kn->ks = ksyms__load("/proc/kallsyms");
	}
	return kn->ks && ksyms__find(kn->ks, pc, sym) && sym->module &&
	       !strcmp(sym->module, "__builtin__ftrace");
}

bool knames__find(struct knames *kn, __u64 pc, struct ksym *sym)
{
	const struct kname *e;
	void *id;

	if (!kn)
		return false;
	if (kn->skel && !htab__get(&kn->cache, pc, 0))
		knames__prepare(kn, &pc, 1);
	if (!kn->skel)		/* --kallsyms, or the program failed */
		return kn->ks && ksyms__find(kn->ks, pc, sym);
	id = htab__get(&kn->cache, pc, 0);
	if (!id)
		return false;
	e = &kn->ents[htab__val_id(id) - 1];
	if (!e->name)
		return ftrace_trampoline(kn, pc, sym);
	sym->name = e->name;
	sym->module = e->module;
	sym->addr = e->start;
	return true;
}

bool knames__from_kernel(const struct knames *kn)
{
	return kn && kn->skel;
}

void knames__stats(const struct knames *kn, struct knames_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!kn)
		return;
	st->from_kernel = kn->skel != NULL;
	st->addrs = kn->nr;
	st->runs = kn->runs;
	st->kallsyms_read = kn->ks != NULL;
}

void knames__report(const struct knames *kn, enum report_pass pass)
{
	struct knames_stats ks;

	if (!kn || pass != REPORT_STATS)
		return;
	knames__stats(kn, &ks);
	if (ks.from_kernel)
		pr_info("kernel symbols: %llu addresses named by the kernel in %llu runs; /proc/kallsyms %s",
			(unsigned long long)ks.addrs, (unsigned long long)ks.runs,
			ks.kallsyms_read ? "read for an ftrace trampoline" : "not read");
	else
		pr_info("kernel symbols: from /proc/kallsyms");
}

struct knames *knames__new(bool kallsyms)
{
	struct knames *kn = calloc(1, sizeof(*kn));

	if (!kn) {
		pr_warn("out of memory for kernel symbols; kernel frames will be [unknown]");
		return NULL;
	}
	if (!kallsyms)
		kn->skel = knames_bpf__open_and_load();
	if (!kn->skel)
		kn->ks = load_kallsyms();
	if (!kn->skel && !kn->ks) {
		knames__free(kn);
		return NULL;
	}
	return kn;
}

void knames__free(struct knames *kn)
{
	if (!kn)
		return;
	knames_bpf__destroy(kn->skel);
	ksyms__free(kn->ks);
	htab__free(&kn->cache);
	free(kn->ents);
	strpool__free(&kn->pool);
	free(kn);
}
