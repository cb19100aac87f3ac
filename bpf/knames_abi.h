/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared by bpf/knames.bpf.c and src/symbols/knames.c. */
#ifndef KNAMES_ABI_H
#define KNAMES_ABI_H

/* Addresses per run: a whole kernel stack (MAX_STACK_DEPTH) fits. */
#define KNAMES_BATCH 128
/* KSYM_NAME_LEN (512) covers the name; offsets and module go past it. */
#define KNAMES_LEN 640

#endif /* KNAMES_ABI_H */
