// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "output.h"
#include "symbolize.h"

struct entry {
	const char *comm;	/* points into a record */
	const char *module;	/* "[kernel]", a DSO basename, or "[unknown]" */
	const char *symbol;
	__u64 self, total;
	__u64 stamp;		/* last record counted in total, for "once" */
};

struct table {
	struct entry *ents;
	size_t cap, used;
};

static __u64 hash_str(__u64 h, const char *s)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void frame_keys(const struct frame *f, const char **module, const char **symbol)
{
	*symbol = f->name ? f->name : "[unknown]";
	if (f->kernel)
		*module = "[kernel]";
	else
		*module = f->module ? basename_of(f->module) : "[unknown]";
}

static int grow(struct table *t)
{
	struct table n = { .cap = t->cap ? t->cap * 2 : 1024 };

	n.ents = calloc(n.cap, sizeof(*n.ents));
	if (!n.ents)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		const struct entry *e = &t->ents[i];
		size_t j;

		if (!e->symbol)
			continue;
		j = hash_str(hash_str(hash_str(0xcbf29ce484222325ULL, e->comm), e->module),
			     e->symbol) & (n.cap - 1);
		while (n.ents[j].symbol)
			j = (j + 1) & (n.cap - 1);
		n.ents[j] = *e;
	}
	n.used = t->used;
	free(t->ents);
	*t = n;
	return 0;
}

static struct entry *lookup(struct table *t, const char *comm, const char *module,
			    const char *symbol)
{
	size_t i;

	if ((t->used + 1) * 2 > t->cap && grow(t))
		return NULL;
	i = hash_str(hash_str(hash_str(0xcbf29ce484222325ULL, comm), module), symbol) &
	    (t->cap - 1);
	for (;; i = (i + 1) & (t->cap - 1)) {
		struct entry *e = &t->ents[i];

		if (!e->symbol) {
			*e = (struct entry){ comm, module, symbol, 0, 0, 0 };
			t->used++;
			return e;
		}
		if (!strcmp(e->symbol, symbol) && !strcmp(e->module, module) &&
		    !strcmp(e->comm, comm))
			return e;
	}
}

/* Count one stack part: every function once into total, the leaf into self. */
static int count_stack(struct table *t, const struct record *r, const struct stack *st,
		       __u64 stamp, bool leaf_here)
{
	for (__u32 i = 0; i < st->nr; i++) {
		const char *module, *symbol;
		struct entry *e;

		frame_keys(st->frames[i], &module, &symbol);
		e = lookup(t, r->comm, module, symbol);
		if (!e)
			return -ENOMEM;
		if (e->stamp != stamp) {
			e->stamp = stamp;
			e->total += r->count;
		}
		if (i == 0 && leaf_here)
			e->self += r->count;
	}
	return 0;
}

static int count_record(struct table *t, const struct record *r, __u64 stamp,
			const struct output_opts *oo)
{
	bool kern = oo->want_kernel && r->kern_state == STATE_OK && r->kern->nr;
	bool user = oo->want_user && r->user_state == STATE_OK && r->user->nr;
	int err = 0;

	if (kern)
		err = count_stack(t, r, r->kern, stamp, true);
	if (!err && user)
		err = count_stack(t, r, r->user, stamp, !kern);
	if (!err && !kern && !user) {
		struct entry *e = lookup(t, r->comm, "[unknown]", "[unknown]");

		if (!e)
			return -ENOMEM;
		e->self += r->count;
		e->total += r->count;
	}
	return err;
}

static int by_self(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	c = strcmp(a->symbol, b->symbol);
	return c ? c : strcmp(a->comm, b->comm);
}

static double pct(__u64 part, __u64 all)
{
	return all ? 100.0 * part / all : 0.0;
}

int report_write(FILE *out, const struct profile *p, const struct output_opts *oo,
		 size_t limit)
{
	struct table t = {};
	__u64 all = 0;
	size_t n = 0;
	int err = 0;

	for (size_t i = 0; i < p->nr && !err; i++) {
		all += p->recs[i].count;
		err = count_record(&t, &p->recs[i], i + 1, oo);
	}
	if (err)
		goto out;
	/* Compact the table into a sorted array. */
	for (size_t i = 0; i < t.cap; i++)
		if (t.ents[i].symbol)
			t.ents[n++] = t.ents[i];
	qsort(t.ents, n, sizeof(*t.ents), by_self);
	if (fprintf(out, "# Samples: %llu\n#\n# %7s %9s %10s  %-16s %-24s %s\n",
		    (unsigned long long)all, "Self", "Children", "Samples", "Command",
		    "Shared Object", "Symbol") < 0)
		err = -errno;
	for (size_t i = 0; i < n && (!limit || i < limit) && !err; i++) {
		const struct entry *e = &t.ents[i];

		if (fprintf(out, "  %6.2f%% %8.2f%% %10llu  %-16s %-24s %s\n",
			    pct(e->self, all), pct(e->total, all),
			    (unsigned long long)e->self, e->comm, e->module, e->symbol) < 0)
			err = -errno;
	}
out:
	free(t.ents);
	return err;
}
