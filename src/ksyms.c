// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel symbols.  /proc/kallsyms is read once into one sorted array, with
 * names and module names in a single growing string blob, so lookups are a
 * binary search and nothing is allocated per symbol.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

struct kentry {
	__u64 addr;
	__u32 name;		/* offsets into strs */
	__u32 module;		/* 0: core kernel */
};

struct ksyms {
	struct kentry *ents;
	size_t nr, cap;
	char *strs;
	size_t strs_len, strs_cap;
	bool hidden;
};

static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 4096;
	void *tmp;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	tmp = realloc(*buf, ncap * elem);
	if (!tmp)
		return -ENOMEM;
	*buf = tmp;
	*cap = ncap;
	return 0;
}

/* Append s to the blob; returns its offset, or 0 on failure (0 is ""). */
static __u32 add_str(struct ksyms *ks, const char *s, size_t len)
{
	size_t off = ks->strs_len;

	if (ks->strs_len + len + 1 > UINT32_MAX)
		return 0;
	if (grow((void **)&ks->strs, &ks->strs_cap, ks->strs_len + len + 1, 1))
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

/*
 * One line: "ffffffff81000000 T _stext" or "... t name\t[module]".  Module
 * names repeat on thousands of lines in a row; reuse the previous offset.
 */
static int parse_line(struct ksyms *ks, char *line, __u32 *last_mod,
		      char *last_mod_name, size_t mod_name_sz)
{
	char *end, *name, *mod;
	struct kentry *e;
	__u64 addr;
	char type;

	addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	type = end[1];
	if (!is_text(type))
		return 0;
	name = end + 3;
	name[strcspn(name, "\t\n ")] = '\0';
	mod = name + strlen(name) + 1;
	if (grow((void **)&ks->ents, &ks->cap, ks->nr + 1, sizeof(*ks->ents)))
		return -ENOMEM;
	e = &ks->ents[ks->nr];
	e->addr = addr;
	e->module = 0;
	if (*mod == '[') {
		mod++;
		mod[strcspn(mod, "]\n")] = '\0';
		if (strcmp(mod, last_mod_name)) {
			*last_mod = add_str(ks, mod, strlen(mod));
			snprintf(last_mod_name, mod_name_sz, "%s", mod);
		}
		e->module = *last_mod;
	}
	e->name = add_str(ks, name, strlen(name));
	if (!e->name)
		return -ENOMEM;
	ks->nr++;
	return 0;
}

static int cmp_kentry(const void *a, const void *b)
{
	const struct kentry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

struct ksyms *ksyms__load_file(FILE *f)
{
	char line[1024], mod_name[256] = "";
	struct ksyms *ks;
	__u32 mod = 0;
	bool any_nonzero = false;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	/* Offset 0 is the empty string, so 0 can mean "no module". */
	if (grow((void **)&ks->strs, &ks->strs_cap, 1 << 20, 1))
		goto fail;
	ks->strs[0] = '\0';
	ks->strs_len = 1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '0' || strspn(line, "0") < 16)
			any_nonzero = true;
		if (parse_line(ks, line, &mod, mod_name, sizeof(mod_name)))
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
	free(ks->strs);
	free(ks);
}

bool ksyms__find(const struct ksyms *ks, __u64 addr, struct ksym *sym)
{
	size_t lo = 0, hi = ks->nr;
	const struct kentry *e;

	if (ks->hidden || !ks->nr || addr < ks->ents[0].addr)
		return false;
	/* Find the last entry with e->addr <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->ents[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	e = &ks->ents[lo];
	sym->name = ks->strs + e->name;
	sym->module = e->module ? ks->strs + e->module : NULL;
	sym->addr = e->addr;
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
