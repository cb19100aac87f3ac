/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel frames named.  By default the running kernel names each distinct
 * address once, through a BPF program (bpf/knames.bpf.c), at the time the
 * stack is read; with --kallsyms, or where that program cannot load,
 * /proc/kallsyms is read once instead.
 */
#ifndef KNAMES_H
#define KNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "symbols/ksyms.h"
#include "lib/report_pass.h"

struct knames;

/*
 * Ready to name kernel addresses; prefer /proc/kallsyms when kallsyms is
 * set.  Problems are reported on stderr, one line each; NULL means kernel
 * frames stay [unknown].
 */
struct knames *knames__new(bool kallsyms);
void knames__free(struct knames *kn);

/* Name, in as few kernel calls as can be, the addresses of one stack. */
void knames__prepare(struct knames *kn, const __u64 *pcs, size_t n);

/*
 * The symbol covering pc (an instruction address, not a return address)
 * into *sym; false when there is none.  Strings live until knames__free().
 */
bool knames__find(struct knames *kn, __u64 pc, struct ksym *sym);

/* True when names come from the kernel, false for /proc/kallsyms. */
bool knames__from_kernel(const struct knames *kn);

/* For -v: how the names were found. */
struct knames_stats {
	bool from_kernel;
	__u64 addrs, runs;	/* addresses the kernel was asked for, in runs */
	bool kallsyms_read;	/* /proc/kallsyms was read (and parsed) */
};
void knames__stats(const struct knames *kn, struct knames_stats *st);

/* At -v, where kernel names came from (lib/report_pass.h). */
void knames__report(const struct knames *kn, enum report_pass pass);

/* One "%pB" result, "name+0xoff/0xsize [module]", taken apart. */
struct kname_parts {
	const char *name, *module;	/* not NUL-terminated; module may be NULL */
	size_t name_len, module_len;
	__u64 offset;			/* of the looked-up address in the symbol */
};

/* Split s; false when it names no symbol ("0x..." or malformed). */
bool knames__parse(const char *s, struct kname_parts *out);

#endif /* KNAMES_H */
