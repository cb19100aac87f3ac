/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What each fuzz target does with one input, shared by the libFuzzer
 * entry points (fuzz_*.c) and the regression test that replays the saved
 * inputs in the normal suite (tests/unit/test_fuzz_regress.c).  Each
 * function must return without crashing, hanging or leaking on any input.
 */
#ifndef FUZZ_TARGETS_H
#define FUZZ_TARGETS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_file.h"
#include "minidebug.h"
#include "perfmap.h"
#include "procmaps.h"

/* Touch what a lookup would: every symbol, and a few addresses around. */
static inline void fuzz_use_elf(const struct elf_file *ef)
{
	struct elf_sym_info si;
	volatile size_t sink = 0;
	__u64 off, vaddr;
	__u32 crc;
	size_t i, n = elf_file__nr_syms(ef);

	for (i = 0; i < n && i < 4096; i++) {
		if (elf_file__sym(ef, i, &si))
			continue;
		sink += strlen(si.name);
		if (elf_file__find(ef, si.addr, &off))
			sink += off;
		if (elf_file__find(ef, si.addr + si.size - 1, &off))
			sink += off;
	}
	for (off = 0; off < 0x10000; off += 0x1000) {
		if (!elf_file__offset_to_vaddr(ef, off, &vaddr) &&
		    elf_file__find(ef, vaddr, NULL))
			sink++;
	}
	if (elf_file__build_id(ef))
		sink += strlen(elf_file__build_id(ef));
	if (elf_file__debuglink(ef, &crc))
		sink += crc;
	(void)sink;
}

/* An ELF file as read from disk (its .gnu_debugdata included). */
static inline int fuzz_elf_one(const uint8_t *data, size_t size)
{
	struct elf_file *ef;
	void *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	ef = elf_file__open_mem(copy, size);
	if (ef) {
		fuzz_use_elf(ef);
		elf_file__free(ef);
	}
	free(copy);
	return 0;
}

/*
 * A .gnu_debugdata section's content: the xz stream, then the ELF file in
 * it, with the limits the reader uses (a smaller cap keeps runs fast).
 */
static inline int fuzz_minidebuginfo_one(const uint8_t *data, size_t size)
{
	void *image;
	size_t len;

	if (minidebug__decompress(data, size, 16u << 20, &image, &len))
		return 0;
	fuzz_elf_one(image, len);
	free(image);
	return 0;
}

static inline int fuzz_perfmap_one(const uint8_t *data, size_t size)
{
	struct perfmap *pm = perfmap__parse((const char *)data, size);
	volatile size_t sink = 0;
	__u64 addr, off;
	size_t i;

	if (!pm)
		return 0;
	/* Addresses taken from the input itself, so that some hit. */
	for (i = 0; i + 8 <= size && i < 512; i += 8) {
		memcpy(&addr, data + i, 8);
		if (perfmap__find(pm, addr, &off))
			sink += off;
	}
	for (addr = 0; addr < 0x100000; addr += 0x777)
		if (perfmap__find(pm, addr, &off))
			sink += off;
	(void)sink;
	perfmap__free(pm);
	return 0;
}

static inline int fuzz_vma_cb(const struct vma *v, void *ctx)
{
	size_t *sink = ctx;

	*sink += v->path_len + v->kind + v->deleted + (size_t)v->inode;
	if (v->path_len)
		*sink += (unsigned char)v->path[v->path_len - 1];
	return 0;
}

static inline int fuzz_procmaps_one(const uint8_t *data, size_t size)
{
	size_t sink = 0;
	struct vma v;

	procmaps__parse((const char *)data, size, fuzz_vma_cb, &sink);
	if (!procmaps__parse_line((const char *)data, size, &v))
		fuzz_vma_cb(&v, &sink);
	return 0;
}

#endif /* FUZZ_TARGETS_H */
