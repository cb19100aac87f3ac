// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel symbols.  /proc/kallsyms is read once, while sampling, into one
 * sorted array of 8-byte entries (the low half of the address and a name
 * offset) and one string blob; module names live in a short table of
 * address ranges.  The __pfx_ padding symbols that modern kernels emit
 * before every function are skipped: no return address points into them.
 * All that halves the count and keeps 120k symbols in about 2 MiB.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "symbols/ksyms.h"

struct kentry {
	__u32 lo;		/* address - ks->base */
	__u32 name;		/* offset into strs */
};

struct kmodule {
	__u32 lo, hi;		/* first and last symbol address - base */
	__u32 name;
};

struct ksyms {
	struct kentry *ents;
	size_t nr, cap;
	struct kmodule *mods;
	size_t nr_mods, mods_cap;
	char *strs;
	size_t strs_len, strs_cap;
	__u64 base;		/* the high half every text address shares */
	bool hidden;
};

/* Append s to the blob; its offset, or 0 on failure (0 is ""). */
static __u32 add_str(struct ksyms *ks, const char *s, size_t len)
{
	size_t off = ks->strs_len;

	if (ks->strs_len + len + 1 > UINT32_MAX)
		return 0;
	if (util__grow_array((void **)&ks->strs, &ks->strs_cap, ks->strs_len + len + 1, 1))
		return 0;
	memcpy(ks->strs + off, s, len);
	ks->strs[off + len] = '\0';
	ks->strs_len += len + 1;
	return off;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Module symbols come in runs: extend the current run or start one. */
static int note_module(struct ksyms *ks, const char *mod, __u32 lo)
{
	struct kmodule *m = ks->nr_mods ? &ks->mods[ks->nr_mods - 1] : NULL;

	if (m && !strcmp(ks->strs + m->name, mod)) {
		if (lo < m->lo)
			m->lo = lo;
		if (lo > m->hi)
			m->hi = lo;
		return 0;
	}
	if (util__grow_array((void **)&ks->mods, &ks->mods_cap, ks->nr_mods + 1, sizeof(*ks->mods)))
		return -ENOMEM;
	m = &ks->mods[ks->nr_mods];
	m->lo = m->hi = lo;
	m->name = add_str(ks, mod, strlen(mod));
	if (!m->name)
		return -ENOMEM;
	ks->nr_mods++;
	return 0;
}

/* One line: "ffffffff81000000 T _stext" or "... t name\t[module]". */
static int parse_line(struct ksyms *ks, char *line)
{
	char *end, *name, *mod;
	struct kentry *e;
	size_t len;
	__u64 addr;

	addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ' || !is_text(end[1]))
		return 0;
	name = end + 3;
	len = strcspn(name, "\t\n ");
	/* The module, if any, follows the name's end; not past the line's. */
	mod = name[len] ? name + len + 1 : name + len;
	name[len] = '\0';
	if (!name[0] || !strncmp(name, "__pfx_", 6))
		return 0;
	if (!ks->nr)
		ks->base = addr & ~0xffffffffULL;
	if ((addr & ~0xffffffffULL) != ks->base)
		return 0;	/* not kernel text as we know it */
	if (util__grow_array((void **)&ks->ents, &ks->cap, ks->nr + 1, sizeof(*ks->ents)))
		return -ENOMEM;
	e = &ks->ents[ks->nr];
	e->lo = (__u32)addr;
	e->name = add_str(ks, name, strlen(name));
	if (!e->name)
		return -ENOMEM;
	ks->nr++;
	if (*mod == '[') {
		mod++;
		mod[strcspn(mod, "]\n")] = '\0';
		return note_module(ks, mod, e->lo);
	}
	return 0;
}

static int cmp_kentry(const void *a, const void *b)
{
	const struct kentry *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Did fgets() read a whole line?  A longer one (no kernel symbol is: names
 * are under 512 bytes) is skipped to its end, rather than parsed in pieces.
 */
static bool whole_line(FILE *f, const char *line)
{
	size_t len = strlen(line);
	int c;

	if (len && line[len - 1] == '\n')
		return true;
	c = getc(f);
	if (c == '\n' || c == EOF)
		return true;	/* only the newline did not fit, or none came */
	while (c != '\n' && c != EOF)
		c = getc(f);
	return false;
}

struct ksyms *ksyms__load_file(FILE *f)
{
	bool any_nonzero = false;
	struct ksyms *ks;
	char line[1024];

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	/* Offset 0 is the empty string, so 0 can mean "none". */
	if (util__grow_array((void **)&ks->strs, &ks->strs_cap, 1 << 20, 1))
		goto fail;
	ks->strs[0] = '\0';
	ks->strs_len = 1;
	while (fgets(line, sizeof(line), f)) {
		if (!whole_line(f, line))
			continue;
		if (strspn(line, "0") < 16)
			any_nonzero = true;
		if (parse_line(ks, line))
			goto fail;
	}
	ks->hidden = ks->nr > 0 && !any_nonzero;
	qsort(ks->ents, ks->nr, sizeof(*ks->ents), cmp_kentry);
	return ks;
fail:
	ksyms__free(ks);
	errno = ENOMEM;
	return NULL;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *ks;
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	ks = ksyms__load_file(f);
	err = errno;
	fclose(f);
	errno = err;
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->ents);
	free(ks->mods);
	free(ks->strs);
	free(ks);
}

static const char *module_of(const struct ksyms *ks, __u32 lo)
{
	for (size_t i = 0; i < ks->nr_mods; i++)
		if (lo >= ks->mods[i].lo && lo <= ks->mods[i].hi)
			return ks->strs + ks->mods[i].name;
	return NULL;
}

bool ksyms__find(const struct ksyms *ks, __u64 addr, struct ksym *sym)
{
	size_t lo = 0, hi = ks->nr;
	const struct kentry *e;

	if (ks->hidden || !ks->nr || (addr & ~0xffffffffULL) != ks->base ||
	    (__u32)addr < ks->ents[0].lo)
		return false;
	/* Find the last entry at or below addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->ents[mid].lo <= (__u32)addr)
			lo = mid;
		else
			hi = mid;
	}
	e = &ks->ents[lo];
	sym->name = ks->strs + e->name;
	sym->module = module_of(ks, e->lo);
	sym->addr = ks->base | e->lo;
	return true;
}

bool ksyms__hidden(const struct ksyms *ks)
{
	return ks->hidden;
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks->nr;
}
