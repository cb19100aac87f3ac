/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel symbols from /proc/kallsyms: text symbols, modules and BPF programs. */
#ifndef KSYMS_H
#define KSYMS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct ksyms;

struct ksym {
	const char *name;
	const char *module;	/* NULL for the core kernel */
	__u64 addr;		/* start of the symbol */
};

/* Load from a kallsyms-format file; NULL with errno set on failure. */
struct ksyms *ksyms__load(const char *path);
/* Same, from an open stream (tests feed fixtures this way). */
struct ksyms *ksyms__load_file(FILE *f);
void ksyms__free(struct ksyms *ks);

/* The symbol at or before addr into *sym; false when there is none.
 * The strings stay valid until ksyms__free(). */
bool ksyms__find(const struct ksyms *ks, __u64 addr, struct ksym *sym);

/* True when every address read was zero: kptr_restrict or no CAP_SYSLOG. */
bool ksyms__hidden(const struct ksyms *ks);
size_t ksyms__count(const struct ksyms *ks);

#endif /* KSYMS_H */
