// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Plain and folded output in bcc's formats.  Each record is rendered once
 * into one shared text buffer, where a text already there is folded into
 * its first copy at once; the lines are then sorted, and the result goes
 * out in a single write.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "lib/htab.h"
#include "lib/strbuf.h"
#include "lib/text.h"
#include "lib/util.h"
#include "trace/trace.h"

struct rendered {
	size_t off;
	__u32 len, hash;	/* a line is far under 4 GB: its frames are capped */
	__u64 count;
};

/*
 * The distinct lines rendered so far, by their text's hash: each slot is
 * a line's index plus one, 0 when empty; at most half full.  Records that
 * print alike (a stack's threads and CPUs) are folded as they are
 * rendered, so that the text holds each line once.
 */
struct line_index {
	__u32 *slots;
	size_t mask;
};

static int line_index__init(struct line_index *li, size_t lines)
{
	size_t cap = 16;

	while (cap < 2 * lines)
		cap *= 2;
	li->slots = calloc(cap, sizeof(*li->slots));
	li->mask = cap - 1;
	return li->slots ? 0 : -ENOMEM;
}

/*
 * The line just rendered, rs[*nr] at the end of text: kept as a new line,
 * or, when its text is there already, its count added to that line's and
 * its text taken back.
 */
static void line_index__fold(struct line_index *li, struct strbuf *text,
			     struct rendered *rs, size_t *nr)
{
	struct rendered *r = &rs[*nr];
	const char *s = text->buf + r->off;
	size_t i = (r->hash = (__u32)htab__hash_bytes(s, r->len)) & li->mask;

	for (; li->slots[i]; i = (i + 1) & li->mask) {
		struct rendered *o = &rs[li->slots[i] - 1];

		if (o->hash == r->hash && o->len == r->len &&
		    !memcmp(text->buf + o->off, s, r->len)) {
			o->count += r->count;
			text->len = r->off;
			text->buf[text->len] = '\0';	/* strbuf keeps one after the text */
			return;
		}
	}
	li->slots[i] = ++*nr;
}

/*
 * Untrusted text: names come made safe from where they were read
 * (text.h); check again as they go out, so that one source missed cannot
 * forge lines or reach a terminal with escapes.  In folded output, each of
 * from becomes to: a name is one frame (stackcollapse-perf.pl's rules).
 */
static void put_text(struct strbuf *sb, const char *s, const char *from, char to)
{
	size_t at = sb->len;

	strbuf__puts(sb, s);
	if (sb->err)
		return;
	text__sanitize(sb->buf + at, sb->len - at);
	if (!from)
		return;
	for (char *c = sb->buf + at; c < sb->buf + sb->len; c++)
		if (strchr(from, *c))
			*c = to;
}

/*
 * Unicode White_Space that safe text can still hold (its controls, U+0085,
 * U+2028 and U+2029 are gone), and U+FEFF, which JavaScript's \s takes:
 * the length of the one at s (safe text, len bytes), or 0.
 */
static size_t space_len(const unsigned char *s, size_t len)
{
	unsigned int cp;

	if (s[0] == ' ')
		return 1;
	if (len >= 2 && s[0] == 0xc2 && s[1] == 0xa0)	/* U+00A0 */
		return 2;
	if (len < 3 || (s[0] & 0xf0) != 0xe0)
		return 0;
	cp = (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
	return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x202f ||
	       cp == 0x205f || cp == 0x3000 || cp == 0xfeff ? 3 : 0;
}

/*
 * Whether s[0..len) could be read as a count: it starts with a digit and
 * holds only digits and dots.  Any non-ASCII byte may be a digit: Perl's
 * \d takes every script's.
 */
static bool count_like(const unsigned char *s, size_t len)
{
	if (!len || s[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] >= '0' && s[i] <= '9') && s[i] != '.' && s[i] < 0x80)
			return false;
	return true;
}

/*
 * A folded line is "FRAMES COUNT", and readers find the count after the
 * last white space: flamegraph.pl and difffolded.pl match
 * /\s+?(\d+(?:\.\d*)?)$/ (with Unicode \s and \d), and once more on what
 * is left for a differential line's second count; inferno splits at the
 * last ' ' and trims white space off what is left.  So no frame may end
 * in white space, nor in white space and what could be a count: in the
 * name that starts at sb->buf[at], trailing white space becomes '_', else
 * the last white space does when what follows it is count-like
 * ("f 1000000000" is "f_1000000000").  Every frame, not only a line's
 * leaf: one frame, one name in every line.
 */
static void unfold_count(struct strbuf *sb, size_t at)
{
	unsigned char *s = (unsigned char *)sb->buf;
	size_t i = at, space = 0, width = 0, trail = 0, trail_chars = 0, n;

	if (sb->err)
		return;
	while (i < sb->len) {
		n = s[i] < 0x80 && s[i] != ' ' ? 0 : space_len(s + i, sb->len - i);
		if (n) {
			if (!trail_chars++)
				trail = i;
			space = i;
			width = n;
		} else {
			trail_chars = 0;
			n = s[i] < 0x80 ? 1 : (size_t)text__char_len(sb->buf + i, sb->len - i);
		}
		i += n ? n : 1;
	}
	if (trail_chars) {
		memset(s + trail, '_', trail_chars);
		sb->len = trail + trail_chars;
		s[sb->len] = '\0';	/* strbuf keeps one after the text */
		return;
	}
	if (!width || !count_like(s + space + width, sb->len - space - width))
		return;
	s[space] = '_';
	memmove(s + space + 1, s + space + width, sb->len - space - width + 1);
	sb->len -= width - 1;
}

/*
 * A frame's name; a marker's is what it stands for.  Unnamed: bcc's
 * "[unknown]", or the label of its module with --unknown=module and -v.
 */
static void put_name(struct strbuf *sb, const struct frame *f,
		     const struct output_opts *o, struct frame_names *fn)
{
	char buf[FRAME_LABEL_MAX];
	const char *name = frame__name(f, fn);
	size_t at;

	if (f->flags & FRAME_DELIMITER) {
		strbuf__puts(sb, o->folded ? "-" : "--");
		return;
	}
	if (!name)
		name = o->module_labels || (o->verbose && !o->folded) ?
		       frame__label(f, buf, sizeof(buf)) : "[unknown]";
	/* Folded: "a;b" would be two frames; FlameGraph writes "a:b". */
	at = sb->len;
	put_text(sb, name, o->folded ? ";" : NULL, ':');
	if (o->folded)
		unfold_count(sb, at);
	if (f->kind == FRAME_KERNEL && o->annotations && !frame__is_marker(f))
		strbuf__puts(sb, "_[k]");
}

/*
 * The report's frame names as put_name() makes them, each made once: a
 * frame is in many lines (manystacks: 20,000 lines over a few hundred
 * frames), and making a name safe and one frame is most of a line's cost.
 * Frames are the symbolizer's, one per process and address, and neither
 * they nor the options change while a report is rendered; the markers are
 * constants.
 */
struct names_made {
	struct frame_names fn;
	struct htab at;		/* frame pointer -> its span's index + 1 */
	struct name_span {
		size_t off, len;	/* in text */
	} *spans;
	size_t nr, cap;
	struct strbuf text;
};

static void names_made__init(struct names_made *nm, const struct output_opts *o)
{
	memset(nm, 0, sizeof(*nm));
	frame_names__init(&nm->fn, o->short_names);
	nm->fn.lines = o->lines;
}

static void names_made__free(struct names_made *nm)
{
	frame_names__free(&nm->fn);
	htab__free(&nm->at);
	free(nm->spans);
	strbuf__free(&nm->text);
}

/* put_name(), from the name made before when there is one. */
static void put_frame(struct strbuf *sb, const struct frame *f,
		      const struct output_opts *o, struct names_made *nm)
{
	struct hent *e = htab__slot(&nm->at, (uintptr_t)f, 0, NULL, NULL);
	size_t at = sb->len;

	if (e && e->val) {
		const struct name_span *sp = &nm->spans[(uintptr_t)e->val - 1];

		strbuf__add(sb, nm->text.buf + sp->off, sp->len);
		return;
	}
	put_name(sb, f, o, &nm->fn);
	/* Out of memory, the name is only not kept. */
	if (!e || sb->err || util__grow_array((void **)&nm->spans, &nm->cap, nm->nr + 1,
					      sizeof(*nm->spans)))
		return;
	nm->spans[nm->nr] = (struct name_span){ nm->text.len, sb->len - at };
	strbuf__add(&nm->text, sb->buf + at, sb->len - at);
	if (!nm->text.err)
		htab__fill(&nm->at, e, (uintptr_t)f, 0, (void *)(uintptr_t)++nm->nr);
}

/* " [module]"; one already in brackets ("[vdso]") as it is. */
static void put_module(struct strbuf *sb, const char *module)
{
	bool bracketed = trace__is_bracketed(module);

	strbuf__puts(sb, bracketed ? " " : " [");
	put_text(sb, module, NULL, 0);
	if (!bracketed)
		strbuf__putc(sb, ']');
}

/*
 * "    ffffffff81001234 name+0x1f [module]"; unnamed, the offset is in the
 * module's file: "    55d0c0a01a2b [gzip]+0x1a2b [/usr/bin/gzip]".
 */
static void put_verbose(struct strbuf *sb, const struct frame *f,
			const struct output_opts *o, struct names_made *nm)
{
	if (frame__is_marker(f)) {
		put_frame(sb, f, o, nm);
		return;
	}
	/* An interpreter's frame: its name, then where it is in its source. */
	if (f->kind == FRAME_INTERP) {
		put_frame(sb, f, o, nm);
		if (f->module) {
			strbuf__puts(sb, " [");
			put_text(sb, f->module, NULL, 0);
			strbuf__putc(sb, ':');
			strbuf__u64(sb, f->line);
			strbuf__putc(sb, ']');
		}
		return;
	}
	strbuf__hex(sb, f->addr);
	strbuf__putc(sb, ' ');
	put_frame(sb, f, o, nm);
	if (f->name || frame__has_file_offset(f)) {
		strbuf__puts(sb, "+0x");
		strbuf__hex(sb, f->offset);
	}
	if (f->module || f->kind == FRAME_KERNEL)
		put_module(sb, f->module ? f->module : "kernel.kallsyms");
}

/*
 * The comm is the root frame in folded output: keep it one frame, with
 * no space, as stackcollapse-perf.pl does, and no other white space before
 * a count (unfold_count()).
 */
static void put_comm(struct strbuf *sb, const char *comm)
{
	size_t at = sb->len;

	put_text(sb, comm, "; ", '_');
	unfold_count(sb, at);
}

/*
 * comm;user_root;...;user_leaf;-;kernel_root;...;kernel_leaf, with a
 * cpu_N root and comm-PID/TID (stackcollapse-perf.pl --tid) when broken down.
 */
static void render_folded(struct strbuf *sb, const struct record *r,
			  const struct output_opts *o, struct names_made *nm)
{
	struct trace_iter it;

	if (o->per_cpu) {
		strbuf__puts(sb, "cpu_");
		strbuf__u64(sb, r->cpu);
		strbuf__putc(sb, ';');
	}
	put_comm(sb, r->comm);
	if (o->per_thread) {
		strbuf__putc(sb, '-');
		strbuf__u64(sb, r->pid);
		strbuf__putc(sb, '/');
		strbuf__u64(sb, r->tid);
	}
	trace_iter__init(&it, r, &o->view);
	for (__u32 i = 0; i < it.len; i++) {
		strbuf__putc(sb, ';');
		put_frame(sb, trace_iter__frame(&it, i), o, nm);
	}
}

/* Kernel frames leaf first, "--", user frames leaf first, "- comm (pid)". */
static void render_plain(struct strbuf *sb, const struct record *r,
			 const struct output_opts *o, struct names_made *nm)
{
	struct trace_iter it;

	trace_iter__init(&it, r, &o->view);
	for (__u32 i = it.len; i-- > 0;) {
		const struct frame *f = trace_iter__frame(&it, i);

		strbuf__puts(sb, "    ");
		if (o->verbose)
			put_verbose(sb, f, o, nm);
		else
			put_frame(sb, f, o, nm);
		strbuf__putc(sb, '\n');
	}
	strbuf__puts(sb, "    -                ");
	put_text(sb, r->comm, NULL, 0);
	strbuf__puts(sb, " (");
	strbuf__u64(sb, r->pid);
	if (o->per_thread) {
		strbuf__putc(sb, '/');
		strbuf__u64(sb, r->tid);
	}
	strbuf__putc(sb, ')');
	if (o->per_cpu) {
		strbuf__puts(sb, " CPU#");
		strbuf__u64(sb, r->cpu);
	}
	strbuf__putc(sb, '\n');
}

static int cmp_text(const struct rendered *a, const struct rendered *b,
		    const char *base)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(base + a->off, base + b->off, n);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int by_count_then_text(const void *pa, const void *pb, void *base)
{
	const struct rendered *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count < b->count ? -1 : 1;
	return cmp_text(a, b, base);
}

/* Straight through stdio's buffer: one fwrite per record, not per frame. */
static int emit(FILE *out, const struct strbuf *text, const struct rendered *rs,
		size_t nr, const struct output_opts *o)
{
	char num[32];

	for (size_t i = 0; i < nr; i++) {
		int n = snprintf(num, sizeof(num), o->folded ? " %llu\n" : "        %llu\n\n",
				 (unsigned long long)output__shown(o, rs[i].count));

		if (fwrite(text->buf + rs[i].off, 1, rs[i].len, out) != rs[i].len ||
		    fwrite(num, 1, n, out) != (size_t)n)
			return -errno;
	}
	return fflush(out) ? -errno : 0;
}

/* Every record's text into text, merged: *rs and *nr, or -ENOMEM. */
static int render_all(const struct records *p, const struct output_opts *o,
		      struct strbuf *text, struct rendered **rsp, size_t *nr)
{
	struct rendered *rs = calloc(p->nr ? p->nr : 1, sizeof(*rs));
	struct line_index li = {};
	struct names_made nm;
	size_t n = 0;

	if (!rs || line_index__init(&li, p->nr)) {
		free(rs);
		free(li.slots);
		return -ENOMEM;
	}
	/* The names are copied into text: they need not outlive the loop. */
	names_made__init(&nm, o);
	for (size_t i = 0; i < p->nr && !text->err; i++) {
		rs[n].off = text->len;
		if (o->folded)
			render_folded(text, &p->recs[i], o, &nm);
		else
			render_plain(text, &p->recs[i], o, &nm);
		rs[n].len = text->len - rs[n].off;
		rs[n].count = output__weight(o, &p->recs[i]);
		if (!text->err)
			line_index__fold(&li, text, rs, &n);
	}
	names_made__free(&nm);
	free(li.slots);
	if (text->err) {
		free(rs);
		return text->err;
	}
	*nr = n;
	*rsp = rs;
	return 0;
}

__u64 output__total(const struct records *rs, const struct output_opts *o)
{
	__u64 n = 0;

	for (size_t i = 0; i < rs->nr; i++)
		n += output__weight(o, &rs->recs[i]);
	return n;
}

int output__write(FILE *out, const struct records *p, const struct output_opts *o)
{
	struct strbuf text = {};
	struct rendered *rs;
	size_t nr;
	int err;

	err = render_all(p, o, &text, &rs, &nr);
	if (!err) {
		qsort_r(rs, nr, sizeof(*rs), by_count_then_text, text.buf);
		err = emit(out, &text, rs, nr, o);
		free(rs);
	}
	strbuf__free(&text);
	return err;
}

int output__count(const struct records *p, const struct output_opts *o, size_t *nr)
{
	struct strbuf text = {};
	struct rendered *rs;
	int err;

	err = render_all(p, o, &text, &rs, nr);
	if (!err)
		free(rs);
	strbuf__free(&text);
	return err;
}
