// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "symbols/dwlines.h"
#include "symbols/elf_file.h"
#include "lib/htab.h"
#include "lib/text.h"

/* Nesting of DIEs walked down to an address: real code nests a few dozen. */
#define MAX_NEST	64
/* Unit address ranges indexed for files without .debug_aranges. */
#define MAX_RANGES	(1u << 20)

/* A unit's address range, for files without .debug_aranges (clang, rustc). */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off off;		/* the unit DIE */
};

struct dwlines {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct strpool strs;	/* names and files, made safe */
	bool capped;
	bool ranges_read;	/* ranges built (only if aranges miss) */
	struct cu_range *ranges;
	size_t nr_ranges;
};

static bool is_debug_section(const char *name)
{
	return !strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8);
}

/*
 * The bytes the debug sections take once read, or -1 for a form we do not
 * read (.zdebug); has_lines: .debug_info and .debug_line hold something.
 */
static long long debug_bytes(Elf *elf, bool *has_lines)
{
	bool info = false, line = false;
	unsigned long long sum = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		__u64 size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !is_debug_section(name))
			continue;
		if (name[1] == 'z')
			return -1;
		size = sh.sh_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			if (!gelf_getchdr(scn, &ch))
				return -1;
			size = ch.ch_size;
		}
		if (size > DWLINES_MAX_DEBUG_BYTES)
			return (long long)DWLINES_MAX_DEBUG_BYTES + 1;
		sum += size;
		info |= !strcmp(name, ".debug_info") && size;
		line |= !strcmp(name, ".debug_line") && size;
	}
	*has_lines = info && line;
	return sum > DWLINES_MAX_DEBUG_BYTES ? (long long)DWLINES_MAX_DEBUG_BYTES + 1
					     : (long long)sum;
}

bool dwlines__probe(int fd)
{
	bool has = false;
	Elf *elf = elf_file__begin(fd, NULL, 0);

	if (!elf)
		return false;
	debug_bytes(elf, &has);
	elf_end(elf);
	return has;
}

struct dwlines *dwlines__open(int fd)
{
	struct dwlines *dw = calloc(1, sizeof(*dw));
	bool has = false;
	long long bytes;
	int err = ENOENT;

	if (!dw) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	dw->fd = fd;
	dw->elf = elf_file__begin(fd, NULL, 0);
	if (!dw->elf) {
		err = errno;
		goto fail;
	}
	bytes = debug_bytes(dw->elf, &has);
	if (bytes < 0 || bytes > (long long)DWLINES_MAX_DEBUG_BYTES) {
		err = bytes < 0 ? ENOTSUP : EFBIG;
		goto fail;
	}
	if (!has)
		goto fail;
	dw->dw = dwarf_begin_elf(dw->elf, DWARF_C_READ, NULL);
	if (!dw->dw)
		goto fail;
	return dw;
fail:
	dwlines__free(dw);
	errno = err;
	return NULL;
}

void dwlines__free(struct dwlines *dw)
{
	if (!dw)
		return;
	if (dw->dw)
		dwarf_end(dw->dw);
	if (dw->elf)
		elf_end(dw->elf);
	close(dw->fd);
	strpool__free(&dw->strs);
	free(dw->ranges);
	free(dw);
}

size_t dwlines__bytes(const struct dwlines *dw)
{
	return strpool__bytes(&dw->strs) + dw->nr_ranges * sizeof(dw->ranges[0]);
}

bool dwlines__capped(const struct dwlines *dw)
{
	return dw->capped;
}

/* s kept, made safe to print; NULL past the cap or out of memory. */
static const char *keep(struct dwlines *dw, const char *s)
{
	size_t len;
	char *copy;
	const char *kept;

	if (!s || !*s)
		return NULL;
	len = strnlen(s, 4096);
	kept = strpool__find(&dw->strs, s, len);
	if (kept)
		return kept;
	if (strpool__bytes(&dw->strs) + len + 1 > DWLINES_MAX_STR_BYTES) {
		dw->capped = true;
		return NULL;
	}
	copy = malloc(len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	text__sanitize(copy, len);
	kept = strpool__intern(&dw->strs, copy, len);
	free(copy);
	return kept;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Index every compile unit's ranges, once: for files without aranges. */
static void read_ranges(struct dwlines *dw)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	__u8 type;
	size_t cap = 0;

	dw->ranges_read = true;
	while (dwarf_get_units(dw->dw, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (type != DW_UT_compile && type != DW_UT_partial)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			struct cu_range *v;

			if (dw->nr_ranges == MAX_RANGES) {
				dw->capped = true;
				goto out;
			}
			if (dw->nr_ranges == cap) {
				cap = cap ? cap * 2 : 64;
				v = realloc(dw->ranges, cap * sizeof(*v));
				if (!v)
					goto out;
				dw->ranges = v;
			}
			dw->ranges[dw->nr_ranges++] = (struct cu_range){
				.lo = lo, .hi = hi, .off = dwarf_dieoffset(&cudie) };
		}
	}
out:
	if (dw->nr_ranges)
		qsort(dw->ranges, dw->nr_ranges, sizeof(dw->ranges[0]), range_cmp);
}

/* The compile unit DIE that holds a. */
static bool unit_of(struct dwlines *dw, Dwarf_Addr a, Dwarf_Die *cudie)
{
	size_t lo = 0, hi;

	if (dwarf_addrdie(dw->dw, a, cudie))
		return true;
	if (!dw->ranges_read)
		read_ranges(dw);
	hi = dw->nr_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dw->ranges[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges may nest or overlap: look back a little for one holding a. */
	for (size_t i = lo, n = 0; i > 0 && n < 16; i--, n++) {
		const struct cu_range *r = &dw->ranges[i - 1];

		if (a >= r->lo && a < r->hi)
			return dwarf_offdie(dw->dw, r->off, cudie) != NULL;
	}
	return false;
}

/*
 * The function DIEs (subprograms, inlined instances) holding pc under
 * parent, outermost first, into chain[n..max).  Namespaces and types are
 * looked into, since some compilers nest functions there.  Returns n.
 */
static int walk(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain, int n,
		int max, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_NEST || dwarf_child(parent, &child) != 0)
		return n;
	do {
		int tag = dwarf_tag(&child), m;

		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, pc) <= 0)
				break;
			if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
				if (n == max)
					return n;
				chain[n++] = child;
			}
			return walk(&child, pc, chain, n, max, depth + 1);
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type:
			m = walk(&child, pc, chain, n, max, depth + 1);
			if (m > n)
				return m;
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

static const char *die_name(struct dwlines *dw, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		s = dwarf_formstring(&a);
	if (!s && dwarf_attr_integrate(die, DW_AT_name, &a))
		s = dwarf_formstring(&a);
	return keep(dw, s);
}

/* The call site an inlined instance records: its file and line. */
static void call_site(struct dwlines *dw, Dwarf_Die *inl, Dwarf_Files *files,
		      size_t nr_files, struct dwline *out)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	out->file = NULL;
	out->line = 0;
	if (dwarf_attr(inl, DW_AT_call_line, &a) && !dwarf_formudata(&a, &w))
		out->line = w > UINT32_MAX ? 0 : (__u32)w;
	if (files && dwarf_attr(inl, DW_AT_call_file, &a) && !dwarf_formudata(&a, &w) &&
	    w < nr_files)
		out->file = keep(dw, dwarf_filesrc(files, w, NULL, NULL));
}

int dwlines__find(struct dwlines *dw, __u64 vaddr, struct dwline *out, int max)
{
	Dwarf_Die cudie, chain[DWLINES_MAX_DEPTH];
	Dwarf_Files *files = NULL;
	size_t nr_files = 0;
	Dwarf_Line *line;
	struct dwline inner = {};
	int n, lineno, i;

	if (max <= 0 || !unit_of(dw, vaddr, &cudie))
		return 0;
	if (max > DWLINES_MAX_DEPTH)
		max = DWLINES_MAX_DEPTH;
	line = dwarf_getsrc_die(&cudie, vaddr);
	if (line) {
		inner.file = keep(dw, dwarf_linesrc(line, NULL, NULL));
		if (!dwarf_lineno(line, &lineno) && lineno > 0)
			inner.line = (__u32)lineno;
	}
	n = walk(&cudie, vaddr, chain, 0, max, 0);
	if (!n) {
		out[0] = inner;
		return inner.file || inner.line ? 1 : 0;
	}
	if (dwarf_getsrcfiles(&cudie, &files, &nr_files))
		files = NULL;
	/* chain is outermost first; out is innermost first. */
	for (i = 0; i < n; i++) {
		struct dwline *o = &out[i];
		Dwarf_Die *d = &chain[n - 1 - i];

		if (i == 0)
			*o = inner;
		else
			call_site(dw, &chain[n - i], files, nr_files, o);
		o->name = die_name(dw, d);
	}
	return n;
}
