/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The .eh_frame of an x86-64 ELF object, compiled into the sorted row
 * table the in-kernel unwinder searches (struct uw_row, bpf/unwind/uwtable.h).
 *
 * Only what the walker can use is kept from the call frame information:
 * the CFA rule, where the caller's rbp is, and whether the return address
 * is at CFA - 8.  The file may be anyone's: every offset, length and
 * pointer is checked, work and memory are bounded by the section cap
 * (CAP_SECTION_BYTES) and the row cap (UW_MAX_ROWS), and a crafted file
 * gives an error or a table that is partial, never a crash.
 */
#ifndef PROFILE_EHFRAME_H
#define PROFILE_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "bpf/unwind/uwtable.h"

struct uw_table {
	/*
	 * ELF virtual address of row address 0: 0 when every address fits
	 * in 32 bits, else the lowest address the table covers.
	 */
	__u64 base;
	struct uw_row *rows;	/* sorted by addr, unique addrs, malloc'ed */
	size_t n_rows;
	/* stats */
	__u32 n_fdes, n_cies;	/* well-formed entries read */
	__u32 n_unsupported;	/* rows with UW_OP_UNSUPPORTED */
	/* FDEs whose body sets CFA = rbp + 16 with rbp saved at CFA - 16 */
	__u32 n_fp_fdes;
	/* FDEs that change the CFA at all (the classifier's denominator) */
	__u32 n_nontrivial_fdes;
	__u32 n_overlaps;	/* FDEs cut short by one starting inside */
	__u32 n_bad_fdes;	/* FDEs left out: bad CIE pointer or address */
	/* every non-trivial FDE is frame-pointer style (none mixed in) */
	bool fp_built;
};

/*
 * Build the table of an ELF file, read through fd with pread (not mmap:
 * the file may be truncated under us), or of an image in memory (e.g. a
 * copy of the vdso; only read, only during the call).  0, or a negative
 * errno: -ENOENT no .eh_frame (or an empty or SHT_NOBITS one), -ENOEXEC
 * not an ELF64 x86-64 executable or shared object, -EFBIG over a cap,
 * -ENOMEM, -EIO.  On error *out is zeroed and holds nothing to free.
 */
int ehframe__build_fd(int fd, struct uw_table *out);
int ehframe__build_mem(const void *image, size_t size, struct uw_table *out);
void ehframe__free(struct uw_table *t);

/*
 * The row in force at a table-relative address (vaddr - base): the last
 * one whose addr is <= addr; NULL below the first row.
 */
const struct uw_row *ehframe__find(const struct uw_table *t, __u32 addr);

#endif /* PROFILE_EHFRAME_H */
