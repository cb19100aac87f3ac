/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared by bpf/bulk.bpf.c and src/loader/bulk.c. */
#ifndef BULK_ABI_H
#define BULK_ABI_H

/* Stacks per run: 64 KiB of out[], mapped by user space. */
#define BULK_STACKS 64
/*
 * Count keys per run: 208 KiB of keys[].  Each run walks the whole map,
 * so fewer would cost more runs over the same keys.
 */
#define BULK_KEYS 2048

#endif /* BULK_ABI_H */
