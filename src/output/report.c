// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/report.h"
#include "output/output.h"
#include "lib/strbuf.h"
#include "lib/text.h"
#include "trace/trace.h"
#include "interp/interp.h"
#include "lib/util.h"

/* What entry_eq() compares a table's entry with. */
struct probe {
	const struct report_table *t;
	const char *comm, *module, *symbol;
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

/* What the keys of one report_table__add() are made from, and kept in. */
struct keys_ctx {
	struct strpool labels;		/* the labels of unnamed frames */
	struct frame_names names;	/* --names short: the short names */
};

/*
 * An interpreter's frame runs in the interpreter: its object is
 * "[python]", as perf's is "[JIT] tid N" for JIT code.  Its module is the
 * source file, named by whoever wrote it (a "libc.so.6" as well): the
 * symbol, "func (file.py)", already shows it.
 */
static const char *interp_object(const struct frame *f, struct keys_ctx *ctx)
{
	const char *name = interp__name(f->interp);
	char buf[64];

	snprintf(buf, sizeof(buf), "[%s]", name ? name : "interpreter");
	return strpool__intern(&ctx->labels, buf, strlen(buf));
}

/*
 * The one place that chooses the text of a row's module and symbol, for
 * --report and --top alike: with short names (--names short, the default
 * of --top), the overloads of a function are one row.  The strings live as
 * long as ctx: lookup() copies the keys of a new entry.  -ENOMEM when an
 * unnamed frame's label cannot be kept.
 */
static int frame_keys(const struct frame *f, struct keys_ctx *ctx, const char **module,
		      const char **symbol)
{
	const char *name = frame__name(f, &ctx->names);

	*symbol = name ? name : frame__label_kept(f, &ctx->labels);
	if (frame__is_off_cpu(f))
		*module = "[off-cpu]";
	else if (f->kind == FRAME_KERNEL)
		*module = "[kernel]";
	else if (f->kind == FRAME_INTERP)
		*module = interp_object(f, ctx);
	else
		*module = f->module ? basename_of(f->module) : "[unknown]";
	return *symbol && *module ? 0 : -ENOMEM;
}

static void key_hash(const char *comm, const char *module, const char *symbol,
		     __u64 *k1, __u64 *k2)
{
	*k1 = htab__hash(hash_str(comm), hash_str(module));
	*k2 = hash_str(symbol);
}

static bool entry_eq(const void *val, const void *ctx)
{
	const struct probe *p = ctx;
	const struct report_entry *e = &p->t->ents[htab__val_id(val) - 1];

	return !strcmp(e->symbol, p->symbol) && !strcmp(e->module, p->module) &&
	       !strcmp(e->comm, p->comm);
}

/* The three strings in one allocation, which e->comm points to. */
static int copy_keys(struct report_entry *e, const char *comm, const char *module,
		     const char *symbol)
{
	size_t lc = strlen(comm) + 1, lm = strlen(module) + 1, ls = strlen(symbol) + 1;
	char *s = malloc(lc + lm + ls);

	if (!s)
		return -ENOMEM;
	memcpy(s, comm, lc);
	memcpy(s + lc, module, lm);
	memcpy(s + lc + lm, symbol, ls);
	*e = (struct report_entry){ .comm = s, .module = s + lc, .symbol = s + lc + lm };
	return 0;
}

static void free_keys(struct report_entry *e)
{
	free((char *)e->comm);
}

/* The entry for (comm, module, symbol), added if new; valid until the next. */
static struct report_entry *lookup(struct report_table *t, const char *comm,
				   const char *module, const char *symbol)
{
	struct probe probe = { t, comm, module, symbol };
	struct hent *e;
	__u64 k1, k2;

	key_hash(comm, module, symbol, &k1, &k2);
	if (util__grow_array((void **)&t->ents, &t->cap, t->nr + 1, sizeof(*t->ents)))
		return NULL;
	e = htab__slot(&t->index, k1, k2, entry_eq, &probe);
	if (!e)
		return NULL;
	if (e->val)
		return &t->ents[htab__val_id(e->val) - 1];
	if (copy_keys(&t->ents[t->nr], comm, module, symbol))
		return NULL;
	t->nr++;
	htab__fill(&t->index, e, k1, k2, htab__id_val(t->nr));
	return &t->ents[t->nr - 1];
}

/* Count one frame: into total once per record, and into self if the leaf. */
static int count_frame(struct report_table *t, struct keys_ctx *ctx,
		       const struct record *r, __u64 weight, const struct frame *f,
		       bool leaf)
{
	const char *module, *symbol;
	struct report_entry *e;

	if (frame_keys(f, ctx, &module, &symbol))
		return -ENOMEM;
	e = lookup(t, r->comm, module, symbol);
	if (!e)
		return -ENOMEM;
	if (e->stamp != t->records) {
		e->stamp = t->records;
		e->total += weight;
	}
	if (leaf)
		e->self += weight;
	return 0;
}

/*
 * Lost stacks and the delimiter are not functions: a record with no frame
 * at all is one [unknown].  --wall's [off-cpu] is a row: the self time of
 * every off-CPU stack, so that blocked time is one line, and the rows
 * under it keep their wall-clock totals.  Weights: output.h's.
 */
static int count_record(struct report_table *t, struct keys_ctx *ctx,
			const struct record *r, const struct output_opts *oo)
{
	__u64 weight = output__weight(oo, r);
	struct trace_iter it;
	bool leaf = true;
	int err = 0;

	t->records++;
	trace_iter__init(&it, r, &oo->view);
	for (__u32 i = it.len; i-- > 0 && !err;) {
		const struct frame *f = trace_iter__frame(&it, i);

		if (frame__is_marker(f) && !frame__is_off_cpu(f))
			continue;
		err = count_frame(t, ctx, r, weight, f, leaf);
		leaf = false;
	}
	if (!err && leaf) {
		struct report_entry *e = lookup(t, r->comm, "[unknown]", "[unknown]");

		if (!e)
			return -ENOMEM;
		e->self += weight;
		e->total += weight;
	}
	if (!err)
		t->all += weight;
	return err;
}

int report_table__add(struct report_table *t, const struct records *p,
		      const struct output_opts *oo)
{
	/* Labels and short names live only as long as this call: the entries copy them. */
	struct keys_ctx ctx = {};
	int err = 0;

	frame_names__init(&ctx.names, oo->short_names);
	for (size_t i = 0; i < p->nr && !err; i++)
		err = count_record(t, &ctx, &p->recs[i], oo);
	frame_names__free(&ctx.names);
	strpool__free(&ctx.labels);
	return err;
}

/* Index the entries anew, after some were dropped: never grows beyond them. */
static void reindex(struct report_table *t)
{
	htab__free(&t->index);
	for (size_t i = 0; i < t->nr; i++) {
		const struct report_entry *e = &t->ents[i];
		struct probe probe = { t, e->comm, e->module, e->symbol };
		struct hent *slot;
		__u64 k1, k2;

		key_hash(e->comm, e->module, e->symbol, &k1, &k2);
		slot = htab__slot(&t->index, k1, k2, entry_eq, &probe);
		if (!slot) {
			/* Out of memory: an empty table is consistent. */
			report_table__clear(t);
			return;
		}
		htab__fill(&t->index, slot, k1, k2, htab__id_val(i + 1));
	}
}

void report_table__scale(struct report_table *t, double factor, double floor)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->nr; i++) {
		struct report_entry *e = &t->ents[i];

		e->self *= factor;
		e->total *= factor;
		if (e->self < floor && e->total < floor) {
			free_keys(e);
			continue;
		}
		t->ents[kept++] = *e;
	}
	t->all *= factor;
	if (kept == t->nr)
		return;
	t->nr = kept;
	reindex(t);
}

void report_table__clear(struct report_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free_keys(&t->ents[i]);
	t->nr = 0;
	t->all = 0;
	htab__free(&t->index);
}

void report_table__free(struct report_table *t)
{
	report_table__clear(t);
	free(t->ents);
	t->ents = NULL;
	t->cap = 0;
}

static int by_self(const void *pa, const void *pb)
{
	const struct report_entry *a = *(const struct report_entry **)pa;
	const struct report_entry *b = *(const struct report_entry **)pb;
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

int report_table__sorted(const struct report_table *t, struct report_entry ***out)
{
	*out = NULL;
	if (!t->nr)
		return 0;
	*out = calloc(t->nr, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr; i++)
		(*out)[i] = &t->ents[i];
	qsort(*out, t->nr, sizeof(**out), by_self);
	return 0;
}

/* The code point of the well-formed UTF-8 character s[0..len). */
static unsigned int code_point(const unsigned char *s, int len)
{
	unsigned int cp = s[0] & (0xff >> (len + 1));

	for (int i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/*
 * Columns of the character of len bytes at s (0: an unsafe byte, shown as
 * '?').  Without a locale to ask, wide is the safe guess: counted short, a
 * CJK name or an emoji would push the line past the edge of the screen.
 */
static size_t char_cols(const char *s, int len)
{
	unsigned int cp;

	if (len <= 1)
		return 1;
	cp = code_point((const unsigned char *)s, len);
	return cp < 0x1100 || (cp >= 0x2000 && cp <= 0x206f) ? 1 : 2;
}

/* Length of the character at s (1 for an unsafe byte); *unsafe if so. */
static int char_at(const char *s, size_t left, bool *unsafe)
{
	int len = text__char_len(s, left);

	*unsafe = !len;
	return len ? len : 1;
}

size_t report__cols(const char *s)
{
	size_t left = strlen(s), cols = 0;
	bool unsafe;

	while (left) {
		int len = char_at(s, left, &unsafe);

		cols += char_cols(s, unsafe ? 0 : len);
		s += len;
		left -= len;
	}
	return cols;
}

void report__cell(struct strbuf *sb, const char *s, size_t cols, bool pad)
{
	static const char ellipsis[] = "\u2026";
	size_t left = strlen(s), used = 0;
	bool cut = report__cols(s) > cols;
	/* A cut text keeps a column for the ellipsis. */
	size_t room = cut ? (cols ? cols - 1 : 0) : cols;
	bool unsafe;

	while (left) {
		int len = char_at(s, left, &unsafe);
		size_t w = char_cols(s, unsafe ? 0 : len);

		if (used + w > room)
			break;
		if (unsafe)
			strbuf__putc(sb, '?');
		else
			strbuf__add(sb, s, len);
		used += w;
		s += len;
		left -= len;
	}
	if (cut && cols) {
		strbuf__add(sb, ellipsis, sizeof(ellipsis) - 1);
		used++;
	}
	while (pad && used < cols) {
		strbuf__putc(sb, ' ');
		used++;
	}
}

static double pct(double part, double all)
{
	return all > 0 ? 100.0 * part / all : 0.0;
}

/* The width of a column: its widest text, within [min, max]. */
static size_t column_width(struct report_entry **rows, size_t nr, size_t min, size_t max,
			   bool module)
{
	size_t w = min;

	for (size_t i = 0; i < nr && w < max; i++) {
		size_t c = report__cols(module ? rows[i]->module : rows[i]->comm);

		if (c > w)
			w = c;
	}
	return w < max ? w : max;
}

#define COMM_MIN	16
#define COMM_MAX	16
#define MODULE_MIN	24
#define MODULE_MAX	40

static void row_line(struct strbuf *sb, const struct report_entry *e, double all,
		     size_t comm_w, size_t module_w, const struct output_opts *oo)
{
	char num[64];

	snprintf(num, sizeof(num), "  %6.2f%% %8.2f%% %10llu  ", pct(e->self, all),
		 pct(e->total, all), (unsigned long long)output__shown(oo, (__u64)e->self));
	strbuf__puts(sb, num);
	report__cell(sb, e->comm, comm_w, true);
	strbuf__putc(sb, ' ');
	report__cell(sb, e->module, module_w, true);
	strbuf__putc(sb, ' ');
	report__cell(sb, e->symbol, report__cols(e->symbol), false);
	strbuf__putc(sb, '\n');
}

/*
 * perf report's header: "# Samples: N", its column "Samples"; time for
 * --off-cpu and --wall, in microseconds.
 */
static void put_head(struct strbuf *sb, double all, const struct output_opts *oo)
{
	const char *what = oo->kind == PROFILE_OFF_CPU ? "Off-CPU time" : "Wall-clock time";
	char head[96];

	if (output__timed(oo))
		snprintf(head, sizeof(head), "# %s: %llu us\n#\n# %7s %9s %10s  ", what,
			 (unsigned long long)output__us((__u64)all), "Self", "Children",
			 "Time (us)");
	else
		snprintf(head, sizeof(head), "# Samples: %llu\n#\n# %7s %9s %10s  ",
			 (unsigned long long)all, "Self", "Children", "Samples");
	strbuf__puts(sb, head);
}

static int write_table(FILE *out, struct report_entry **rows, size_t nr, double all,
		       const struct output_opts *oo)
{
	size_t comm_w = column_width(rows, nr, COMM_MIN, COMM_MAX, false);
	size_t module_w = column_width(rows, nr, MODULE_MIN, MODULE_MAX, true);
	struct strbuf sb = {};
	int err = 0;

	put_head(&sb, all, oo);
	report__cell(&sb, "Command", comm_w, true);
	strbuf__putc(&sb, ' ');
	report__cell(&sb, "Shared Object", module_w, true);
	strbuf__puts(&sb, " Symbol\n");
	for (size_t i = 0; i < nr && !sb.err; i++) {
		row_line(&sb, rows[i], all, comm_w, module_w, oo);
		/* Write as it goes: the table of a busy host is large. */
		if (sb.len >= 65536 || i + 1 == nr) {
			if (fwrite(sb.buf, 1, sb.len, out) != sb.len)
				err = -errno;
			sb.len = 0;
		}
		if (err)
			break;
	}
	if (!err && !nr && fwrite(sb.buf, 1, sb.len, out) != sb.len)
		err = -errno;
	if (!err && sb.err)
		err = sb.err;
	strbuf__free(&sb);
	return err;
}

int report__write(FILE *out, const struct records *p, const struct output_opts *oo,
		 size_t limit)
{
	struct report_table t = {};
	struct report_entry **rows = NULL;
	size_t nr;
	int err;

	err = report_table__add(&t, p, oo);
	if (!err)
		err = report_table__sorted(&t, &rows);
	if (!err) {
		nr = limit && limit < t.nr ? limit : t.nr;
		err = write_table(out, rows, nr, t.all, oo);
	}
	free(rows);
	report_table__free(&t);
	return err;
}
