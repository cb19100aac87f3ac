// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "htab.h"
#include "output.h"
#include "text.h"
#include "trace.h"
#include "util.h"

struct entry {
	const char *comm;	/* points into a record */
	const char *module;	/* "[kernel]", a DSO basename, or "[unknown]" */
	const char *symbol;	/* a name, or frame__label()'s "[gzip]" */
	__u64 self, total;
	__u64 stamp;		/* last record counted in total, for "once" */
};

struct table {
	struct entry *ents;	/* in the order first seen */
	size_t nr, cap;
	struct htab index;	/* hash of (comm, module, symbol) -> id in ents */
	struct strpool labels;	/* the labels of unnamed frames */
};

/* What entry_eq() compares a table's entry with. */
struct probe {
	const struct table *t;
	const struct entry *key;
};

static __u64 hash_str(const char *s)
{
	return htab__hash_bytes(s, strlen(s));
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* -ENOMEM when an unnamed frame's label cannot be kept. */
static int frame_keys(struct table *t, const struct frame *f, const char **module,
		      const char **symbol)
{
	*symbol = frame__label_kept(f, &t->labels);
	if (f->kind == FRAME_KERNEL)
		*module = "[kernel]";
	else
		*module = f->module ? basename_of(f->module) : "[unknown]";
	return *symbol ? 0 : -ENOMEM;
}

static bool entry_eq(const void *val, const void *ctx)
{
	const struct probe *p = ctx;
	const struct entry *e = &p->t->ents[htab__val_id(val) - 1];

	return !strcmp(e->symbol, p->key->symbol) && !strcmp(e->module, p->key->module) &&
	       !strcmp(e->comm, p->key->comm);
}

/* The entry for (comm, module, symbol), added if new; valid until the next. */
static struct entry *lookup(struct table *t, const char *comm, const char *module,
			    const char *symbol)
{
	struct entry key = { comm, module, symbol, 0, 0, 0 };
	struct probe probe = { t, &key };
	__u64 k1 = htab__hash(hash_str(comm), hash_str(module)), k2 = hash_str(symbol);
	struct hent *e;

	if (util__grow_array((void **)&t->ents, &t->cap, t->nr + 1, sizeof(*t->ents)))
		return NULL;
	e = htab__slot(&t->index, k1, k2, entry_eq, &probe);
	if (!e)
		return NULL;
	if (e->val)
		return &t->ents[htab__val_id(e->val) - 1];
	t->ents[t->nr++] = key;
	htab__fill(&t->index, e, k1, k2, htab__id_val(t->nr));
	return &t->ents[t->nr - 1];
}

/* Count one frame: into total once per record, and into self if the leaf. */
static int count_frame(struct table *t, const struct record *r, const struct frame *f,
		       __u64 stamp, bool leaf)
{
	const char *module, *symbol;
	struct entry *e;

	if (frame_keys(t, f, &module, &symbol))
		return -ENOMEM;
	e = lookup(t, r->comm, module, symbol);
	if (!e)
		return -ENOMEM;
	if (e->stamp != stamp) {
		e->stamp = stamp;
		e->total += r->count;
	}
	if (leaf)
		e->self += r->count;
	return 0;
}

/*
 * Lost stacks and the delimiter are not functions: a record with no frame
 * at all is one [unknown].
 */
static int count_record(struct table *t, const struct record *r, __u64 stamp,
			const struct output_opts *oo)
{
	struct trace_iter it;
	bool leaf = true;
	int err = 0;

	trace_iter__init(&it, r, &oo->view);
	for (__u32 i = it.len; i-- > 0 && !err;) {
		const struct frame *f = trace_iter__frame(&it, i);

		if (frame__is_marker(f))
			continue;
		err = count_frame(t, r, f, stamp, leaf);
		leaf = false;
	}
	if (!err && leaf) {
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
	if (!c)
		c = strcmp(a->comm, b->comm);
	/* Last, so that the order never depends on the order of the drain. */
	return c ? c : strcmp(a->module, b->module);
}

static double pct(__u64 part, __u64 all)
{
	return all ? 100.0 * part / all : 0.0;
}

/*
 * s, or a copy made safe to print in *copy if s is not (names come safe
 * from where they were read: this is the last check before a terminal).
 */
static const char *safe_text(const char *s, char **copy)
{
	*copy = NULL;
	if (text__is_safe(s, strlen(s)))
		return s;
	*copy = strdup(s);
	if (!*copy)
		return "?";
	text__sanitize_str(*copy);
	return *copy;
}

static int write_row(FILE *out, const struct entry *e, __u64 all)
{
	char *copy[3];
	const char *comm = safe_text(e->comm, &copy[0]);
	const char *module = safe_text(e->module, &copy[1]);
	const char *symbol = safe_text(e->symbol, &copy[2]);
	int err = 0;

	if (fprintf(out, "  %6.2f%% %8.2f%% %10llu  %-16s %-24s %s\n",
		    pct(e->self, all), pct(e->total, all),
		    (unsigned long long)e->self, comm, module, symbol) < 0)
		err = -errno;
	for (int i = 0; i < 3; i++)
		free(copy[i]);
	return err;
}

int report__write(FILE *out, const struct records *p, const struct output_opts *oo,
		 size_t limit)
{
	struct table t = {};
	__u64 all = 0;
	int err = 0;

	for (size_t i = 0; i < p->nr && !err; i++) {
		all += p->recs[i].count;
		err = count_record(&t, &p->recs[i], i + 1, oo);
	}
	if (err)
		goto out;
	if (t.nr)
		qsort(t.ents, t.nr, sizeof(*t.ents), by_self);
	if (fprintf(out, "# Samples: %llu\n#\n# %7s %9s %10s  %-16s %-24s %s\n",
		    (unsigned long long)all, "Self", "Children", "Samples", "Command",
		    "Shared Object", "Symbol") < 0)
		err = -errno;
	for (size_t i = 0; i < t.nr && (!limit || i < limit) && !err; i++)
		err = write_row(out, &t.ents[i], all);
out:
	free(t.ents);
	htab__free(&t.index);
	strpool__free(&t.labels);
	return err;
}
