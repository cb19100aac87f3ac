// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Function symbols of an ELF file, read with libelf.
 *
 * The table is built in three steps: collect every function symbol into a
 * scratch array, sort it and fold aliases, then copy the kept names into
 * one string blob.  libelf checks that sections lie inside the file; what
 * it does not check (symbol names, section indexes, note sizes) is checked
 * here.  Files are read with ELF_C_READ, i.e. pread() into memory: an
 * mmap() of a file that another process truncates would SIGBUS us.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/caps.h"
#include "symbols/elf_file.h"
#include "lib/htab.h"
#include "symbols/minidebug.h"
#include "lib/text.h"
#include "lib/util.h"

/* Longest build-id we keep: SHA-1 ids are 20 bytes, allow some room. */
#define BUILD_ID_MAX	64
/* Sanity limit against crafted files: far above any real binary. */
#define MAX_SEGS	4096
/* Bytes of two same-length alias names compared to order them. */
#define NAME_CMP_MAX	64
/* Longest .gnu_debuglink file name we accept (NAME_MAX). */
#define DEBUGLINK_MAX	255

/* One table entry: 16 bytes, no pointer. */
struct esym {
	__u64 addr;
	__u32 size;		/* saturated at UINT32_MAX */
	__u32 name;		/* offset in the names blob */
};

struct load_seg {
	__u64 offset, filesz, vaddr;
	__u32 flags;
};

struct elf_file {
	struct esym *syms;
	size_t nr_syms;
	char *names;
	size_t names_len;
	struct load_seg *segs;
	size_t nr_segs;
	int type;
	__u64 entry;		/* e_entry, 0 if none */
	enum elf_sym_source source;
	char build_id[BUILD_ID_MAX * 2 + 1];
	char debuglink[DEBUGLINK_MAX + 1];	/* "" if none */
	__u32 debuglink_crc;
	unsigned int capped;	/* CAP_BIT()s of the caps.h bounds it hit */
};

/* A symbol while the table is built. */
struct cand {
	__u64 addr, size, sect_end;
	const char *name;	/* inside the string table's Elf_Data */
	__u32 name_len;
	__u8 underscores, bind_rank, type_rank;
};

/* What we need of each section to place a symbol. */
struct sect {
	__u64 start, end;
	bool alloc, exec;
};

/* The symbol table being read and what it refers to. */
struct symtab_ctx {
	Elf_Data *syms, *strs, *shndx;
	struct sect *sects;
	size_t nr_sects;
	bool long_names;	/* a name over CAP_NAME_LEN was left out */
	size_t scan_left;	/* name bytes that may still be scanned */
};

static int read_segments(struct elf_file *ef, Elf *elf)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return 0;	/* no program headers: nothing to map */
	if (n > MAX_SEGS)
		return -ENOEXEC;
	ef->segs = calloc(n ? n : 1, sizeof(*ef->segs));
	if (!ef->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct load_seg *s = &ef->segs[ef->nr_segs];

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->vaddr = ph.p_vaddr;
		s->flags = ph.p_flags;
		ef->nr_segs++;
	}
	return 0;
}

static void hex_encode(char *out, const unsigned char *in, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

/*
 * The data of a section, read now, if it is no bigger than the cap: a
 * crafted file can claim any size, and a sparse one can even hold it.
 */
static Elf_Data *read_section(struct elf_file *ef, Elf_Scn *scn,
			      const GElf_Shdr *sh)
{
	if (sh->sh_size > CAP_SECTION_BYTES) {
		ef->capped |= CAP_BIT(CAP_SECTION);
		return NULL;
	}
	return elf_getdata(scn, NULL);
}

/* gelf_getnote() checks that each note lies inside data. */
static bool find_build_id(struct elf_file *ef, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off))) {
		const char *base = data->d_buf;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(base + name_off, "GNU", 4) &&
		    nh.n_descsz > 0 && nh.n_descsz <= BUILD_ID_MAX) {
			hex_encode(ef->build_id,
				   (const unsigned char *)base + desc_off,
				   nh.n_descsz);
			return true;
		}
		off = next;
	}
	return false;
}

/* Note sections first; a file stripped of its section headers has PT_NOTE. */
static void read_build_id(struct elf_file *ef, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	Elf_Data *data;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = read_section(ef, scn, &sh);
		if (data && data->d_buf && find_build_id(ef, data))
			return;
	}
	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n && i < MAX_SEGS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (ph.p_filesz > CAP_SECTION_BYTES) {
			ef->capped |= CAP_BIT(CAP_SECTION);
			continue;
		}
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
					    ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8
							    : ELF_T_NHDR);
		if (data && data->d_buf && find_build_id(ef, data))
			return;
	}
}

static int read_sections(struct symtab_ctx *st, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t n;

	if (elf_getshdrnum(elf, &n))
		return -ENOEXEC;
	st->sects = calloc(n ? n : 1, sizeof(*st->sects));
	if (!st->sects)
		return -ENOMEM;
	st->nr_sects = n;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t idx = elf_ndxscn(scn);
		struct sect *s;

		if (idx >= n || !gelf_getshdr(scn, &sh))
			continue;
		s = &st->sects[idx];
		s->start = sh.sh_addr;
		s->end = sh.sh_addr + sh.sh_size;
		if (s->end < s->start)
			s->end = UINT64_MAX;
		s->alloc = sh.sh_flags & SHF_ALLOC;
		s->exec = sh.sh_flags & SHF_EXECINSTR;
	}
	return 0;
}

static Elf_Scn *find_section(Elf *elf, __u32 type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	}
	return NULL;
}

/* The SHT_SYMTAB_SHNDX section that extends symtab's section indexes. */
static Elf_Data *find_shndx(struct elf_file *ef, Elf *elf, size_t symtab_idx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX &&
		    sh.sh_link == symtab_idx)
			return read_section(ef, scn, &sh);
	}
	return NULL;
}

static int load_symtab_data(struct elf_file *ef, struct symtab_ctx *st,
			    Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Scn *strscn;
	GElf_Shdr strsh;

	st->syms = read_section(ef, scn, sh);
	if (!st->syms || !st->syms->d_buf)
		return -ENOENT;
	strscn = elf_getscn(elf, sh->sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) ||
	    strsh.sh_type != SHT_STRTAB)
		return -ENOENT;
	st->strs = read_section(ef, strscn, &strsh);
	if (!st->strs || !st->strs->d_buf || !st->strs->d_size)
		return -ENOENT;
	st->shndx = find_shndx(ef, elf, elf_ndxscn(scn));
	return 0;
}

static __u8 bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

/* Fill c from symbol i if it is a function we can place; false if not. */
static bool make_cand(struct symtab_ctx *st, size_t i, struct cand *c)
{
	const char *strs = st->strs->d_buf;
	size_t strs_len = st->strs->d_size, len, avail;
	const struct sect *sect;
	GElf_Word xndx = 0;
	GElf_Sym sym;
	size_t shndx;
	int type;

	if (!gelf_getsymshndx(st->syms, st->shndx, (int)i, &sym, &xndx))
		return false;
	type = GELF_ST_TYPE(sym.st_info);
	shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
	if (shndx == SHN_UNDEF || shndx >= st->nr_sects ||
	    (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
		return false;
	sect = &st->sects[shndx];
	/* Untyped symbols count only when sized and in code (asm). */
	if (type != STT_FUNC && type != STT_GNU_IFUNC &&
	    !(type == STT_NOTYPE && sym.st_size && sect->exec))
		return false;
	if (!sect->alloc || sym.st_value < sect->start ||
	    sym.st_value >= sect->end)
		return false;
	if (sym.st_name >= strs_len)
		return false;
	/*
	 * Names are bounded, one by one and in all: else 250 symbols naming
	 * one 4 MB string cost a gigabyte of strnlen(), and a million naming
	 * 64 KiB strings a hundred times that.
	 */
	avail = strs_len - sym.st_name;
	if (avail > CAP_NAME_LEN + 1)
		avail = CAP_NAME_LEN + 1;
	if (avail > st->scan_left) {
		st->long_names = true;
		return false;
	}
	len = strnlen(strs + sym.st_name, avail);
	st->scan_left -= len;
	if (len > CAP_NAME_LEN) {
		st->long_names = true;
		return false;
	}
	avail = strs_len - sym.st_name;
	if (!len || len == avail)
		return false;	/* empty, or not NUL-terminated in the table */

	c->addr = sym.st_value;
	c->size = sym.st_size;
	c->sect_end = sect->end;
	c->name = strs + sym.st_name;
	/* A .symtab names versioned symbols "clock_gettime@@GLIBC_2.17". */
	{
		const char *at = memchr(c->name + 1, '@', len - 1);

		if (at)
			len = (size_t)(at - c->name);
	}
	c->name_len = (__u32)len;
	c->underscores = 0;
	while (c->underscores < len && c->underscores < 255 &&
	       c->name[c->underscores] == '_')
		c->underscores++;
	c->bind_rank = bind_rank(GELF_ST_BIND(sym.st_info));
	c->type_rank = type == STT_NOTYPE;
	return true;
}

static int cmp_u64(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

/* By address, then the preferred alias first (see elf_file__find()). */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	int r;

	if ((r = cmp_u64(a->addr, b->addr)))
		return r;
	if ((r = cmp_u64(a->underscores, b->underscores)))
		return r;
	if ((r = cmp_u64(a->bind_rank, b->bind_rank)))
		return r;
	if ((r = cmp_u64(a->type_rank, b->type_rank)))
		return r;
	if ((r = cmp_u64(a->name_len, b->name_len)))
		return r;
	/*
	 * Bounded, so that a million equal 64 KiB names sort in no time; past
	 * that, the order in the string table decides.
	 */
	r = memcmp(a->name, b->name, a->name_len < NAME_CMP_MAX ? a->name_len : NAME_CMP_MAX);
	if (r)
		return r;
	return a->name < b->name ? -1 : a->name > b->name;
}

/*
 * Keep the first of each run of equal addresses, with the largest size of
 * the run (an alias may carry the size the preferred name lacks), then let
 * size-0 symbols reach the next symbol or the end of their section.
 */
static size_t fold_cands(struct cand *c, size_t n)
{
	size_t i, out = 0;

	for (i = 0; i < n; i++) {
		if (out && c[out - 1].addr == c[i].addr) {
			if (c[i].size > c[out - 1].size)
				c[out - 1].size = c[i].size;
			continue;
		}
		c[out++] = c[i];
	}
	for (i = 0; i < out; i++) {
		__u64 end = c[i].sect_end;

		if (c[i].size)
			continue;
		if (i + 1 < out && c[i + 1].addr < end)
			end = c[i + 1].addr;
		c[i].size = end - c[i].addr;
	}
	return out;
}

/*
 * The offset of c's name in the names blob, copied there unless a symbol
 * before it has the very same string (same place in the string table):
 * names are shared by offset, not copied per symbol.  -E2BIG past the cap.
 */
static int place_name(struct elf_file *ef, struct htab *seen, size_t *cap,
		      const struct cand *c, __u32 *off)
{
	__u64 key = (__u64)(uintptr_t)c->name;
	size_t need = ef->names_len + c->name_len + 1;
	void *v = htab__get(seen, key, c->name_len);

	if (v) {
		*off = (__u32)(htab__val_id(v) - 1);
		return 0;
	}
	if (need > CAP_NAMES_BYTES)
		return -E2BIG;
	if (util__grow_array((void **)&ef->names, cap, need, 1) ||
	    htab__put(seen, key, c->name_len, htab__id_val(ef->names_len + 1)))
		return -ENOMEM;
	memcpy(ef->names + ef->names_len, c->name, c->name_len);
	text__sanitize(ef->names + ef->names_len, c->name_len);
	ef->names[need - 1] = '\0';
	*off = (__u32)ef->names_len;
	ef->names_len = need;
	return 0;
}

/*
 * Copy the kept candidates into the final table and names blob.  A symbol
 * whose name no longer fits under the cap is left out: its addresses are
 * [unknown], and the file says so (elf_file__capped()).  Names are made
 * safe to print there: they are whatever bytes the file's owner chose.
 */
static int build_table(struct elf_file *ef, const struct cand *c, size_t n)
{
	struct htab seen = {};
	size_t i, cap = 0;
	char *shrunk;
	int err = 0;

	ef->syms = malloc((n ? n : 1) * sizeof(*ef->syms));
	if (!ef->syms)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct esym *s = &ef->syms[ef->nr_syms];

		err = place_name(ef, &seen, &cap, &c[i], &s->name);
		if (err == -E2BIG) {
			ef->capped |= CAP_BIT(CAP_NAMES);
			err = 0;
			continue;
		}
		if (err)
			break;
		s->addr = c[i].addr;
		s->size = c[i].size > UINT32_MAX ? UINT32_MAX : (__u32)c[i].size;
		ef->nr_syms++;
	}
	htab__free(&seen);
	/* Growth by half left up to a third unused. */
	shrunk = ef->names_len ? realloc(ef->names, ef->names_len) : NULL;
	if (shrunk)
		ef->names = shrunk;
	return err;
}

/* Read one symbol table; 0 with nr_syms == 0 if it has no function. */
static int read_symtab(struct elf_file *ef, Elf *elf, Elf_Scn *scn,
		       const GElf_Shdr *sh)
{
	struct symtab_ctx st = { .scan_left = CAP_SCAN_BYTES };
	struct cand *cands = NULL;
	size_t i, n, nr = 0, entsize;
	int err;

	err = load_symtab_data(ef, &st, elf, scn, sh);
	if (err) {
		err = 0;	/* an unreadable table is just no symbols */
		goto cleanup;
	}
	err = read_sections(&st, elf);
	if (err)
		goto cleanup;
	entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	n = entsize ? st.syms->d_size / entsize : 0;
	cands = malloc((n ? n : 1) * sizeof(*cands));
	if (!cands) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		if (make_cand(&st, i, &cands[nr]))
			nr++;
	}
	if (st.long_names)
		ef->capped |= CAP_BIT(CAP_NAMES);
	qsort(cands, nr, sizeof(*cands), cand_cmp);
	nr = fold_cands(cands, nr);
	err = build_table(ef, cands, nr);

cleanup:
	free(cands);
	free(st.sects);
	return err;
}

static void drop_table(struct elf_file *ef)
{
	free(ef->syms);
	free(ef->names);
	ef->syms = NULL;
	ef->names = NULL;
	ef->nr_syms = 0;
	ef->names_len = 0;
}

int elf_file__section_by_name(Elf *elf, const char *name, Elf_Scn **out,
			      GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	/* elf_strptr() reads the whole table of section names: cap it first. */
	scn = elf_getscn(elf, shstrndx);
	if (!scn || !gelf_getshdr(scn, sh))
		return -ENOENT;
	if (sh->sh_size > CAP_SECTION_BYTES)
		return -EFBIG;
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name)) {
			*out = scn;
			return 0;
		}
	}
	return -ENOENT;
}

/* The section called name, with its data; NULL if none or empty. */
static Elf_Data *section_by_name(struct elf_file *ef, Elf *elf,
				 const char *name)
{
	Elf_Data *data;
	Elf_Scn *scn;
	GElf_Shdr sh;
	int err;

	err = elf_file__section_by_name(elf, name, &scn, &sh);
	if (err == -EFBIG)
		ef->capped |= CAP_BIT(CAP_SECTION);
	if (err || sh.sh_type == SHT_NOBITS)
		return NULL;
	data = read_section(ef, scn, &sh);
	if (!data || !data->d_buf || !data->d_size)
		return NULL;
	return data;
}

/*
 * .gnu_debuglink: a file name, NUL, padding to 4 bytes, and the CRC-32 of
 * the debug file in the file's byte order.  A name is accepted only as a
 * plain file name: it gets appended to directories.
 */
static void read_debuglink(struct elf_file *ef, Elf *elf)
{
	Elf_Data *data = section_by_name(ef, elf, ".gnu_debuglink");
	const unsigned char *p, *crc;
	const char *ident;
	size_t len, off;

	if (!data)
		return;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size);
	off = (len + 4) & ~(size_t)3;
	if (!len || len > DEBUGLINK_MAX || off + 4 > data->d_size ||
	    memchr(p, '/', len) || (len == 1 && p[0] == '.') ||
	    (len == 2 && p[0] == '.' && p[1] == '.'))
		return;
	ident = elf_getident(elf, NULL);
	crc = p + off;
	if (ident && ident[EI_DATA] == ELFDATA2MSB)
		ef->debuglink_crc = (__u32)crc[0] << 24 | (__u32)crc[1] << 16 |
				    (__u32)crc[2] << 8 | crc[3];
	else
		ef->debuglink_crc = (__u32)crc[3] << 24 | (__u32)crc[2] << 16 |
				    (__u32)crc[1] << 8 | crc[0];
	memcpy(ef->debuglink, p, len);
	ef->debuglink[len] = '\0';
}

static struct elf_file *from_elf(Elf *elf, bool nested);

/*
 * Union of two sorted tables into ef.  At an address both have, the entry
 * of from wins (a debug table ranks aliases with statics in view) and the
 * larger size is kept.
 */
static int merge_tables(struct elf_file *ef, const struct elf_file *from)
{
	size_t i = 0, j = 0, n = 0, blob = ef->names_len + from->names_len;
	size_t nr = ef->nr_syms + from->nr_syms;
	struct esym *out;
	char *names;

	if (nr * sizeof(*out) + blob > CAP_OBJECT_BYTES) {
		ef->capped |= CAP_BIT(CAP_OBJECT);
		return -E2BIG;
	}
	out = malloc((nr + 1) * sizeof(*out));
	names = malloc(blob ? blob : 1);
	if (!out || !names) {
		free(out);
		free(names);
		return -ENOMEM;
	}
	if (ef->names_len)
		memcpy(names, ef->names, ef->names_len);
	if (from->names_len)
		memcpy(names + ef->names_len, from->names, from->names_len);
	while (i < ef->nr_syms || j < from->nr_syms) {
		const struct esym *a = i < ef->nr_syms ? &ef->syms[i] : NULL;
		const struct esym *b = j < from->nr_syms ? &from->syms[j] : NULL;

		if (b && (!a || b->addr <= a->addr)) {
			out[n] = *b;
			out[n].name += (__u32)ef->names_len;
			if (a && a->addr == b->addr) {
				if (a->size > out[n].size)
					out[n].size = a->size;
				i++;
			}
			j++;
		} else {
			out[n] = *a;
			i++;
		}
		n++;
	}
	free(ef->syms);
	free(ef->names);
	ef->syms = out;
	ef->nr_syms = n;
	ef->names = names;
	ef->names_len = blob;
	return 0;
}

int elf_file__merge_symbols(struct elf_file *ef, const struct elf_file *from,
			    enum elf_sym_source source)
{
	int err;

	ef->capped |= from->capped;
	if (!from->nr_syms)
		return -ENOENT;
	err = merge_tables(ef, from);
	if (!err)
		ef->source = source;
	return err;
}

/*
 * Whether an ELF header (len bytes at eh) has a section count libelf may
 * read: it allocates for every section before we see any.  e_shnum holds
 * up to 65,535; a larger count is "extended numbering" (e_shnum 0, the
 * count in the first section header), which linked programs never need
 * and a crafted file would use to make libelf allocate gigabytes.
 */
static bool sane_header(const unsigned char *eh, size_t len)
{
	bool is64 = len > EI_CLASS && eh[EI_CLASS] == ELFCLASS64;
	bool msb = len > EI_DATA && eh[EI_DATA] == ELFDATA2MSB;
	size_t shoff_at = is64 ? 40 : 32, shoff_len = is64 ? 8 : 4;
	size_t shnum_at = is64 ? 60 : 48;
	__u64 shoff = 0;

	if (len < shnum_at + 2 || memcmp(eh, ELFMAG, SELFMAG))
		return true;	/* libelf refuses it, or reads no sections */
	if (eh[shnum_at] || eh[shnum_at + 1])
		return true;
	for (size_t i = 0; i < shoff_len; i++)
		shoff |= (__u64)eh[shoff_at + (msb ? shoff_len - 1 - i : i)] << (8 * i);
	return !shoff;
}

/*
 * MiniDebugInfo: parse the decompressed image like any ELF file, but not
 * its own .gnu_debugdata (a crafted file could nest them forever).
 */
static void read_minidebuginfo(struct elf_file *ef, Elf *elf)
{
	Elf_Data *data = section_by_name(ef, elf, ".gnu_debugdata");
	struct elf_file *mini = NULL;
	size_t len;
	void *image;
	Elf *inner;

	if (!data || minidebug__decompress(data->d_buf, data->d_size,
					   MINIDEBUG_MAX, &image, &len))
		return;
	if (!sane_header(image, len)) {
		ef->capped |= CAP_BIT(CAP_SECTION);
		free(image);
		return;
	}
	inner = elf_memory(image, len);
	if (inner) {
		mini = from_elf(inner, true);
		elf_end(inner);
	}
	if (mini && mini->source == ELF_SYMS_SYMTAB)
		elf_file__merge_symbols(ef, mini, ELF_SYMS_MINIDEBUG);
	else if (mini)
		ef->capped |= mini->capped;
	elf_file__free(mini);
	free(image);
}

/* .symtab if it has functions, else .dynsym. */
static int read_symbols(struct elf_file *ef, Elf *elf)
{
	static const struct {
		__u32 type;
		enum elf_sym_source source;
	} tables[] = {
		{ SHT_SYMTAB, ELF_SYMS_SYMTAB },
		{ SHT_DYNSYM, ELF_SYMS_DYNSYM },
	};
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t i;
	int err;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		scn = find_section(elf, tables[i].type, &sh);
		if (!scn)
			continue;
		err = read_symtab(ef, elf, scn, &sh);
		if (err)
			return err;
		if (ef->nr_syms) {
			ef->source = tables[i].source;
			return 0;
		}
		drop_table(ef);
	}
	ef->source = ELF_SYMS_NONE;
	return 0;
}

static struct elf_file *from_elf(Elf *elf, bool nested)
{
	struct elf_file *ef;
	GElf_Ehdr eh;
	int err;

	ef = calloc(1, sizeof(*ef));
	if (!ef) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	ef->type = eh.e_type;
	ef->entry = eh.e_entry;
	err = read_segments(ef, elf);
	if (err)
		goto cleanup;
	read_build_id(ef, elf);
	read_debuglink(ef, elf);
	err = read_symbols(ef, elf);
	if (err)
		goto cleanup;
	if (ef->source != ELF_SYMS_SYMTAB && !nested)
		read_minidebuginfo(ef, elf);
	return ef;

cleanup:
	elf_file__free(ef);
	errno = -err;
	return NULL;
}

static bool libelf_ready(void)
{
	/* Idempotent; cheaper than keeping a global "initialized" flag. */
	return elf_version(EV_CURRENT) != EV_NONE;
}

Elf *elf_file__begin(int fd, void *image, size_t size)
{
	unsigned char eh[64] = {};
	ssize_t n;
	Elf *elf;

	if (!libelf_ready()) {
		errno = ENOSYS;
		return NULL;
	}
	n = image ? (ssize_t)(size < sizeof(eh) ? size : sizeof(eh))
		  : pread(fd, eh, sizeof(eh), 0);
	if (image && n > 0)
		memcpy(eh, image, (size_t)n);
	if (n > 0 && !sane_header(eh, (size_t)n)) {
		errno = EFBIG;
		return NULL;
	}
	elf = image ? elf_memory(image, size) : elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		errno = ENOEXEC;
	return elf;
}

/* A file image or an fd (image NULL), opened by libelf, parsed and closed. */
static struct elf_file *open_elf(int fd, void *image, size_t size)
{
	struct elf_file *ef;
	Elf *elf;

	elf = elf_file__begin(fd, image, size);
	if (!elf)
		return NULL;
	ef = from_elf(elf, false);
	elf_end(elf);
	return ef;
}

struct elf_file *elf_file__open_fd(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	return open_elf(fd, NULL, 0);
}

struct elf_file *elf_file__open(const char *path)
{
	struct elf_file *ef;
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	ef = elf_file__open_fd(fd);
	err = errno;
	close(fd);
	errno = err;
	return ef;
}

struct elf_file *elf_file__open_mem(void *image, size_t size)
{
	return open_elf(-1, image, size);
}

void elf_file__free(struct elf_file *ef)
{
	if (!ef)
		return;
	free(ef->syms);
	free(ef->names);
	free(ef->segs);
	free(ef);
}

int elf_file__offset_to_vaddr(const struct elf_file *ef, __u64 offset,
			      __u64 *vaddr)
{
	const struct load_seg *found = NULL;
	size_t i;

	/* Segments may share a page; prefer the executable one. */
	for (i = 0; i < ef->nr_segs; i++) {
		const struct load_seg *s = &ef->segs[i];

		if (offset < s->offset || offset - s->offset >= s->filesz)
			continue;
		if (!found || (s->flags & PF_X && !(found->flags & PF_X)))
			found = s;
	}
	if (!found)
		return -ENOENT;
	*vaddr = offset - found->offset + found->vaddr;
	return 0;
}

#define ENTRY_NAME_MAX 64

const char *elf_file__find(const struct elf_file *ef, __u64 vaddr,
			   __u64 *offset)
{
	size_t lo = 0, hi = ef->nr_syms;
	const struct esym *s;

	/* Find the last symbol starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ef->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	s = lo ? &ef->syms[lo - 1] : NULL;
	if (s && vaddr - s->addr < s->size) {
		if (offset)
			*offset = vaddr - s->addr;
		return ef->names + s->name;
	}
	/*
	 * The entry point of a file whose table does not name it (ld.so's
	 * .dynsym): _start, the name every C runtime gives it, up to the next
	 * symbol, ENTRY_NAME_MAX bytes at most (glibc's is 38, ld.so's 61).
	 * Not in a file with no names at all (a stripped program): a name
	 * there would tell pprof the mapping is symbolized (pprof.c).
	 */
	if (ef->entry && ef->nr_syms && vaddr >= ef->entry &&
	    vaddr - ef->entry < ENTRY_NAME_MAX && (!s || s->addr <= ef->entry)) {
		if (offset)
			*offset = vaddr - ef->entry;
		return "_start";
	}
	return NULL;
}

const char *elf_file__debuglink(const struct elf_file *ef, __u32 *crc)
{
	if (!ef->debuglink[0])
		return NULL;
	if (crc)
		*crc = ef->debuglink_crc;
	return ef->debuglink;
}

const char *elf_file__build_id(const struct elf_file *ef)
{
	return ef->build_id[0] ? ef->build_id : NULL;
}

int elf_file__type(const struct elf_file *ef)
{
	return ef->type;
}

enum elf_sym_source elf_file__sym_source(const struct elf_file *ef)
{
	return ef->source;
}

unsigned int elf_file__capped(const struct elf_file *ef)
{
	return ef->capped;
}

size_t elf_file__bytes(const struct elf_file *ef)
{
	return sizeof(*ef) + ef->nr_syms * sizeof(*ef->syms) + ef->names_len +
	       ef->nr_segs * sizeof(*ef->segs);
}

size_t elf_file__nr_syms(const struct elf_file *ef)
{
	return ef->nr_syms;
}

int elf_file__sym(const struct elf_file *ef, size_t idx,
		  struct elf_sym_info *out)
{
	if (idx >= ef->nr_syms)
		return -ENOENT;
	out->addr = ef->syms[idx].addr;
	out->size = ef->syms[idx].size;
	out->name = ef->names + ef->syms[idx].name;
	return 0;
}
