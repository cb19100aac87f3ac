// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "symbols/caps.h"
#include "symbols/dwlines.h"
#include "symbols/elf_file.h"
#include "lib/htab.h"
#include "lib/text.h"

/* Nesting of DIEs walked down to an address: real code nests a few dozen. */
#define MAX_NEST	64
/* DIEs a lookup visits, at most: a unit of real code is far below. */
#define MAX_VISIT	(1u << 18)
/* Unit address ranges indexed for files without .debug_aranges. */
#define MAX_RANGES	(1u << 20)

/* A unit's address range, for files without .debug_aranges (clang, rustc). */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off off;		/* the unit DIE */
};

struct dwlines {
	int fd;
	Elf *elf;		/* with dw: NULL while closed */
	Dwarf *dw;
	struct dwlines_budget *budget;
	struct dwlines *prev, *next;	/* in budget->mru while open */
	__u64 charge;		/* what it is charged while open */
	struct strpool strs;	/* names and files, made safe */
	bool capped;
	bool ranges_read;	/* ranges built (only if aranges miss) */
	struct cu_range *ranges;
	size_t nr_ranges;
};

/* The name a debug section goes by, LTO's prefix stripped; NULL if not one. */
static const char *debug_name(const char *name)
{
	if (!strncmp(name, ".gnu.debuglto_", 14))
		name += 14;
	if (!strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8))
		return name;
	return NULL;
}

/* Sections through which libdw opens another file by a path in this one. */
static bool names_other_file(const char *name)
{
	return !strcmp(name, ".gnu_debugaltlink") || !strcmp(name, ".debug_sup");
}

/*
 * What libdw's open costs: the debug sections' bytes once read, with
 * .debug_line's DWLINES_LINE_FACTOR times (saturated past
 * DWLINES_MAX_DEBUG_BYTES); or -1 for a file refused as it is (.zdebug,
 * another file named).  has_lines: .debug_info and .debug_line hold
 * something.
 */
/*
 * Whether the section-name table may be read: elf_strptr() reads it
 * whole, and a crafted file makes it 1 GiB (sparse).  The ELF reader's
 * cap on one section holds here too.
 */
static bool names_readable(Elf *elf, size_t shstrndx)
{
	Elf_Scn *scn = elf_getscn(elf, shstrndx);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_size <= CAP_SECTION_BYTES;
}

/*
 * The size a compressed section claims, from its header alone: libelf's
 * gelf_getchdr() reads the whole section to return it (2.3 MB of
 * .debug_info in Debian's libc debug file), which a probe at each file's
 * open must not do, cold or warm.  fd -1: libelf's reading all the same,
 * for a file about to be decompressed: what is checked is then what libelf
 * holds and decompresses, not bytes the file's owner may since have
 * rewritten.  0, or -1 when unreadable.
 */
static int claimed_size(Elf *elf, int fd, Elf_Scn *scn, const GElf_Shdr *sh, __u64 *size)
{
	const char *id = elf_getident(elf, NULL);
	const int native = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
	Elf64_Chdr c64;
	Elf32_Chdr c32;
	GElf_Chdr ch;

	if (fd >= 0 && id && id[EI_DATA] == native && id[EI_CLASS] == ELFCLASS64) {
		if (sh->sh_size < sizeof(c64) ||
		    pread(fd, &c64, sizeof(c64), (off_t)sh->sh_offset) != sizeof(c64))
			return -1;
		*size = c64.ch_size;
		return 0;
	}
	if (fd >= 0 && id && id[EI_DATA] == native && id[EI_CLASS] == ELFCLASS32) {
		if (sh->sh_size < sizeof(c32) ||
		    pread(fd, &c32, sizeof(c32), (off_t)sh->sh_offset) != sizeof(c32))
			return -1;
		*size = c32.ch_size;
		return 0;
	}
	/* Another byte order (libelf converts it), or fd -1. */
	if (!gelf_getchdr(scn, &ch))
		return -1;
	*size = ch.ch_size;
	return 0;
}

static long long debug_charge(Elf *elf, int fd, bool *has_lines)
{
	const unsigned long long over = DWLINES_MAX_DEBUG_BYTES + 1;
	bool info = false, line = false;
	unsigned long long sum = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) || !names_readable(elf, shstrndx))
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		__u64 size;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (names_other_file(name))
			return -1;
		name = debug_name(name);
		if (!name || sh.sh_type == SHT_NOBITS)
			continue;
		if (name[1] == 'z')
			return -1;
		size = sh.sh_size;
		if ((sh.sh_flags & SHF_COMPRESSED) && claimed_size(elf, fd, scn, &sh, &size))
			return -1;
		if (size > DWLINES_MAX_DEBUG_BYTES)
			return over;
		info |= !strcmp(name, ".debug_info") && size;
		line |= !strcmp(name, ".debug_line") && size;
		if (!strcmp(name, ".debug_line"))
			size *= DWLINES_LINE_FACTOR;
		sum += size;
		if (sum > DWLINES_MAX_DEBUG_BYTES)
			return over;
	}
	*has_lines = info && line;
	return (long long)sum;
}

bool dwlines__probe(int fd)
{
	bool has = false;
	Elf *elf = elf_file__begin(fd, NULL, 0);

	if (!elf)
		return false;
	debug_charge(elf, fd, &has);
	elf_end(elf);
	return has;
}

void dwlines_budget__init(struct dwlines_budget *b, __u64 max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

static void unlink_mru(struct dwlines *dw)
{
	struct dwlines_budget *b = dw->budget;

	if (dw->prev)
		dw->prev->next = dw->next;
	else
		b->mru = dw->next;
	if (dw->next)
		dw->next->prev = dw->prev;
	dw->prev = dw->next = NULL;
}

static void push_mru(struct dwlines *dw)
{
	struct dwlines_budget *b = dw->budget;

	dw->prev = NULL;
	dw->next = b->mru;
	if (b->mru)
		b->mru->prev = dw;
	b->mru = dw;
}

/*
 * Close dw's libdw state, keeping its descriptor and names: the unit
 * ranges go too, as the file may differ when it is read again.
 */
static void detach(struct dwlines *dw)
{
	if (!dw->elf)
		return;
	if (dw->dw)
		dwarf_end(dw->dw);
	elf_end(dw->elf);
	dw->dw = NULL;
	dw->elf = NULL;
	unlink_mru(dw);
	dw->budget->charged -= dw->charge;
	free(dw->ranges);
	dw->ranges = NULL;
	dw->nr_ranges = 0;
	dw->ranges_read = false;
}

/* Make room in b for charge, closing the least recently used: whether it fits. */
static bool make_room(struct dwlines_budget *b, __u64 charge)
{
	if (charge > b->max)
		return false;
	while (b->charged + charge > b->max && b->mru) {
		struct dwlines *lru = b->mru;

		while (lru->next)
			lru = lru->next;
		detach(lru);
		b->closed++;
	}
	return true;
}

/*
 * Whether a unit is a skeleton, whose split unit libdw would look for in
 * a .dwo file at a path the DWARF names (as .gnu_debugaltlink does).
 */
static bool has_skeleton(Dwarf *d)
{
	Dwarf_CU *cu = NULL;
	__u8 type;

	while (dwarf_get_units(d, cu, &cu, NULL, &type, NULL, NULL) == 0)
		if (type == DW_UT_skeleton)
			return true;
	return false;
}

/*
 * Open (again) dw's libdw state, looking at the file anew: it is read
 * whole now, so the caps apply to what it is now.  0 or -errno.
 */
static int attach(struct dwlines *dw)
{
	__u64 cap = DWLINES_MAX_DEBUG_BYTES;
	struct stat st;
	bool has = false;
	long long charge;
	int err = -ENOENT;

	if (fstat(dw->fd, &st))
		return -errno;
	if (st.st_uid != 0)
		cap = DWLINES_MAX_USER_BYTES;
	dw->elf = elf_file__begin(dw->fd, NULL, 0);
	if (!dw->elf)
		return -errno;
	/* Read by libelf (fd -1): the bytes charged are those decompressed. */
	charge = debug_charge(dw->elf, -1, &has);
	if (charge < 0 || (__u64)charge > cap) {
		err = charge < 0 ? -ENOTSUP : -EFBIG;
		goto fail;
	}
	if (!has)
		goto fail;
	if (!make_room(dw->budget, charge)) {
		dw->budget->refused++;
		err = -EFBIG;
		goto fail;
	}
	dw->dw = dwarf_begin_elf(dw->elf, DWARF_C_READ, NULL);
	if (!dw->dw)
		goto fail;
	if (has_skeleton(dw->dw)) {
		dwarf_end(dw->dw);
		dw->dw = NULL;
		err = -ENOTSUP;
		goto fail;
	}
	dw->charge = charge;
	dw->budget->charged += charge;
	dw->budget->opened++;
	push_mru(dw);
	return 0;
fail:
	elf_end(dw->elf);
	dw->elf = NULL;
	return err;
}

struct dwlines *dwlines__open(int fd, struct dwlines_budget *b)
{
	struct dwlines *dw = calloc(1, sizeof(*dw));
	int err;

	if (!dw) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	dw->fd = fd;
	dw->budget = b;
	err = attach(dw);
	if (err) {
		dwlines__free(dw);
		errno = -err;
		return NULL;
	}
	return dw;
}

void dwlines__free(struct dwlines *dw)
{
	if (!dw)
		return;
	detach(dw);
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
 * A lookup's walk down a unit: the function DIEs found, and the DIEs
 * visited, capped (a crafted unit would make each address cost its size).
 */
struct walk {
	Dwarf_Addr pc;
	Dwarf_Die *chain;
	int n, max;
	unsigned int visited;
};

/*
 * The function DIEs (subprograms, inlined instances) holding pc under
 * parent, outermost first, into w->chain.  Namespaces and types are
 * looked into, since some compilers nest functions there.  Returns
 * whether a function was found, or -1 when the nesting is deeper than
 * w->max or the DIEs visited pass MAX_VISIT: then there is no answer,
 * rather than one missing its innermost functions.
 */
static int walk(struct walk *w, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	int err;

	if (depth > MAX_NEST)
		return -1;
	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (++w->visited > MAX_VISIT)
			return -1;
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, w->pc) <= 0)
				break;
			if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
				if (w->n == w->max)
					return -1;
				w->chain[w->n++] = child;
			}
			err = walk(w, &child, depth + 1);
			return err < 0 ? err : 1;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type:
			err = walk(w, &child, depth + 1);
			if (err)
				return err;
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
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
	struct walk w = { .pc = vaddr, .chain = chain };
	int n, lineno, i;

	if (max <= 0)
		return 0;
	if (!dw->elf && attach(dw))
		return 0;
	if (dw->prev) {		/* to the front: the most recently used */
		unlink_mru(dw);
		push_mru(dw);
	}
	if (!unit_of(dw, vaddr, &cudie))
		return 0;
	if (max > DWLINES_MAX_DEPTH)
		max = DWLINES_MAX_DEPTH;
	line = dwarf_getsrc_die(&cudie, vaddr);
	if (line) {
		inner.file = keep(dw, dwarf_linesrc(line, NULL, NULL));
		if (!dwarf_lineno(line, &lineno) && lineno > 0)
			inner.line = (__u32)lineno;
	}
	w.max = max;
	if (walk(&w, &cudie, 0) < 0)
		return 0;
	n = w.n;
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
