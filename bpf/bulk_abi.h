/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared by bpf/bulk.bpf.c and src/loader/bulk.c, after profile.h. */
#ifndef BULK_ABI_H
#define BULK_ABI_H

/* Stacks per run: 64 KiB of out[], mapped by user space. */
#define BULK_STACKS 64
/*
 * Count keys per run: 832 KiB of kernel memory, in pages of 64 keys, so
 * that user space reads them in a few large copies, not a copy each.
 */
#define BULK_KEYS 8192
#define BULK_KEY_PAGE 64

struct bulk_key_page {
	struct count_key keys[BULK_KEY_PAGE];
};

#endif /* BULK_ABI_H */
