/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MiniDebugInfo: the .gnu_debugdata section some distributions (Fedora)
 * put in stripped binaries, an xz-compressed ELF file holding a .symtab of
 * the functions that .dynsym lacks.  This only decompresses it, within
 * limits, since the section comes from a file anyone may have crafted.
 */
#ifndef MINIDEBUG_H
#define MINIDEBUG_H

#include <stdbool.h>
#include <stddef.h>

/* Decompressed images larger than this are refused (-EFBIG). */
#define MINIDEBUG_MAX	(64u << 20)

/*
 * Decompress the xz stream in[0..len) into a malloc()ed *out of *out_len
 * bytes, at most max.  Returns 0, -EFBIG past max, -EINVAL on a corrupt
 * or truncated stream, -ENOMEM.
 */
int minidebug__decompress(const void *in, size_t len, size_t max,
			  void **out, size_t *out_len);

#endif /* MINIDEBUG_H */
