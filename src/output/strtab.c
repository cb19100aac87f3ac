// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "output/strtab.h"

struct probe {
	const struct strtab *t;
	const char *s;
};

static bool str_eq(const void *val, const void *ctx)
{
	const struct probe *p = ctx;

	return !strcmp(p->t->strs[htab__val_id(val) - 1], p->s);
}

int strtab__intern(struct strtab *t, const char *s, __u32 *idx)
{
	struct probe probe = { t, s };
	size_t len = strlen(s);
	__u64 hash = htab__hash_bytes(s, len);
	struct hent *e;

	if (util__grow_array((void **)&t->strs, &t->cap, t->nr + 1, sizeof(*t->strs)))
		return -ENOMEM;
	e = htab__slot(&t->ht, hash, len, str_eq, &probe);
	if (!e)
		return -ENOMEM;
	if (!e->val) {
		t->strs[t->nr++] = s;
		htab__fill(&t->ht, e, hash, len, htab__id_val(t->nr));
	}
	*idx = htab__val_id(e->val) - 1;
	return 0;
}

const char *strtab__at(const struct strtab *t, __u32 idx)
{
	return idx < t->nr ? t->strs[idx] : "";
}

void strtab__free(struct strtab *t)
{
	free(t->strs);
	htab__free(&t->ht);
	*t = (struct strtab){};
}
