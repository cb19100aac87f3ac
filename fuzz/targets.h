/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What each fuzz target does with one input, shared by the libFuzzer
 * entry points (fuzz_*.c) and the regression test that replays the saved
 * inputs in the normal suite (tests/unit/symbols/test_fuzz_regress.c).  Each
 * function must return without crashing, hanging or leaking on any input.
 */
#ifndef FUZZ_TARGETS_H
#define FUZZ_TARGETS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ehframe.h"
#include "symbols/elf_file.h"
#include "symbols/minidebug.h"
#include "symbols/perfmap.h"
#include "symbols/procmaps.h"

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

/*
 * A minimal ELF64 x86-64 shared object around an .eh_frame's bytes, so
 * that fuzzing and the crafted-input tests reach the CFI parser itself:
 * the header, the section names, .eh_frame (type sh_type, at address
 * FUZZ_EH_VADDR), a .plt with no FDE of its own at FUZZ_PLT_VADDR, and
 * the section headers.  malloc'ed, its size in *size; NULL on ENOMEM.
 */
#define FUZZ_EH_VADDR	0x2000u
#define FUZZ_PLT_VADDR	0x400u
#define FUZZ_PLT_SIZE	0x40u

static inline void fuzz_put(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void fuzz_shdr(uint8_t *sh, uint32_t name, uint32_t type,
			     uint64_t flags, uint64_t addr, uint64_t off,
			     uint64_t size)
{
	fuzz_put(sh, name, 4);
	fuzz_put(sh + 4, type, 4);
	fuzz_put(sh + 8, flags, 8);
	fuzz_put(sh + 16, addr, 8);
	fuzz_put(sh + 24, off, 8);
	fuzz_put(sh + 32, size, 8);
	fuzz_put(sh + 48, 1, 8);	/* sh_addralign */
}

static inline void *fuzz_eh_elf(const uint8_t *eh, size_t len,
				uint32_t sh_type, uint64_t entry,
				size_t *size)
{
	static const char names[] = "\0.eh_frame\0.plt\0.shstrtab";
	size_t eh_off = 64 + ((sizeof(names) + 7) & ~(size_t)7);
	size_t sh_off = eh_off + ((len + 7) & ~(size_t)7);
	uint8_t *img;

	*size = sh_off + 4 * 64;
	img = calloc(1, *size);
	if (!img)
		return NULL;
	memcpy(img, "\177ELF\2\1\1", 7);	/* ELF64, LSB, version 1 */
	fuzz_put(img + 16, 3, 2);		/* ET_DYN */
	fuzz_put(img + 18, 62, 2);		/* EM_X86_64 */
	fuzz_put(img + 20, 1, 4);
	fuzz_put(img + 24, entry, 8);
	fuzz_put(img + 40, sh_off, 8);
	fuzz_put(img + 52, 64, 2);		/* e_ehsize */
	fuzz_put(img + 58, 64, 2);		/* e_shentsize */
	fuzz_put(img + 60, 4, 2);		/* e_shnum */
	fuzz_put(img + 62, 3, 2);		/* e_shstrndx */
	memcpy(img + 64, names, sizeof(names));
	if (len)
		memcpy(img + eh_off, eh, len);
	fuzz_shdr(img + sh_off + 64, 1, sh_type, 2 /* SHF_ALLOC */,
		  FUZZ_EH_VADDR, eh_off, len);
	fuzz_shdr(img + sh_off + 128, 11, 1 /* SHT_PROGBITS */,
		  6 /* SHF_ALLOC | SHF_EXECINSTR */, FUZZ_PLT_VADDR, 0,
		  FUZZ_PLT_SIZE);
	fuzz_shdr(img + sh_off + 192, 16, 3 /* SHT_STRTAB */, 0, 0, 64,
		  sizeof(names));
	return img;
}

/* What the walker would do with a table: look up every row and around. */
static inline void fuzz_use_table(const struct uw_table *t)
{
	volatile size_t sink = 0;
	const struct uw_row *r;
	size_t i;

	for (i = 0; i < t->n_rows && i < 4096; i++) {
		r = ehframe__find(t, t->rows[i].addr);
		if (r != &t->rows[i] || (i && t->rows[i - 1].addr >= r->addr))
			abort();	/* not sorted or not unique */
		sink += r->rule;
		r = ehframe__find(t, t->rows[i].addr - 1);
		if (r)
			sink += r->rule;
	}
	(void)sink;
}

/*
 * An input is both a whole ELF file and the content of an .eh_frame (its
 * first 8 bytes, little-endian, are also the entry point, so that the
 * entry point lands in FDEs sometimes).
 */
static inline int fuzz_ehframe_one(const uint8_t *data, size_t size)
{
	struct uw_table t;
	uint64_t entry = 0;
	size_t len;
	void *img;

	if (!ehframe__build_mem(data, size, &t)) {
		fuzz_use_table(&t);
		ehframe__free(&t);
	}
	if (size >= 8)
		memcpy(&entry, data, 8);
	img = fuzz_eh_elf(data, size, 1 /* SHT_PROGBITS */,
			  entry % 0x10000, &len);
	if (!img)
		return 0;
	if (!ehframe__build_mem(img, len, &t)) {
		fuzz_use_table(&t);
		ehframe__free(&t);
	}
	free(img);
	return 0;
}

#endif /* FUZZ_TARGETS_H */
