/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A protobuf string table (pprof's Profile.string_table, OTLP's
 * ProfilesDictionary.string_table): each distinct string once, by index.
 * The table keeps pointers, not copies: a string must outlive the table.
 */
#ifndef STRTAB_H
#define STRTAB_H

#include <stddef.h>
#include <linux/types.h>
#include "lib/htab.h"

struct strtab {
	const char **strs;	/* index -> string */
	size_t nr, cap;
	struct htab ht;		/* contents -> index + 1 */
};

/* Index of s in t, added at the end if new.  0 or -ENOMEM. */
int strtab__intern(struct strtab *t, const char *s, __u32 *idx);

/* The string at idx, "" when out of range. */
const char *strtab__at(const struct strtab *t, __u32 idx);

void strtab__free(struct strtab *t);

#endif /* STRTAB_H */
