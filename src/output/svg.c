// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SVG flame graphs.  Records are sorted by their stacks, frame by frame, so
 * that stacks sharing a prefix are neighbours and siblings come in name
 * order.  One pass over the sorted records then opens and closes frames
 * as the prefix changes, which merges identical siblings without building
 * a tree; a frame narrower than min_width is dropped when it closes (its
 * children, narrower still, went before it).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output/svg.h"
#include "lib/htab.h"
#include "output/output.h"
#include "lib/strbuf.h"
#include "lib/text.h"
#include "trace/trace.h"
#include "lib/util.h"
/* src/output/flamegraph.css and src/output/flamegraph.js, embedded by the Makefile (xxd -i). */
#include "svg_assets.h"

#define IMAGE_WIDTH	1200	/* px */
#define XPAD		10	/* left and right margins */
#define FRAME_HEIGHT	16
#define FONT_SIZE	12
#define TITLE_SIZE	17
/* An average Verdana glyph is about 0.59 em wide: labels are cut by it. */
#define CHAR_WIDTH	(FONT_SIZE * 0.59)

enum kind {
	KIND_OTHER,		/* "all", the comm, the "-" delimiter */
	KIND_USER,
	KIND_KERNEL,
	KIND_JIT,
	KIND_INTERP,
	KIND_UNKNOWN,		/* [unknown], [Missed ... Stack] */
};

/*
 * One frame of a record's stack, as drawn.  The kind of a real frame is
 * worked out only when needed (elem_kind()): sorting compares millions of
 * frames, and nearly all of them are told apart by name alone.
 */
struct elem {
	const char *name;
	const struct frame *f;	/* NULL: "all" or the comm: kind is set */
	__u8 kind;
	bool suffix;		/* draw "_[k]" after the name (-a) */
};

/* A record and its frames, root first. */
struct item {
	const struct record *r;
	struct trace_iter it;
};

/*
 * Unnamed frames with the same label merge: one box may then stand for
 * several places (file offsets, or addresses where there is none) or
 * several modules of one base name, and its tooltip says so.
 */
struct places {
	bool addrs, modules;
};

struct open_frame {
	struct elem el;
	__u64 start;
	struct places several;
	bool on_cpu;		/* an on-CPU record ran through it */
};

/* A frame to draw. */
struct node {
	struct elem el;
	__u32 depth;		/* 0: the root, "all" */
	__u64 start, width;	/* in samples; off-CPU and wall-clock: ns */
	struct places several;
	bool off_cpu;		/* all its time is off-CPU: the blue palette */
};

/* What paths are compared with: the options, the labels of unnamed frames. */
struct paths {
	const struct output_opts *oo;
	struct strpool *labels;		/* the flame's: its nodes point there */
	struct frame_names *names;	/* the flame's: short names, if asked */
};

struct flame {
	const struct output_opts *oo;
	struct node *nodes;
	size_t nr, cap;
	__u64 total;
	double min_samples;	/* narrower frames are not drawn */
	__u32 max_depth;
	struct strpool labels;	/* of unnamed frames: "[gzip]" */
	struct frame_names names;	/* what named frames are called */
	int err;
};

struct layout {
	__u32 height;
	__u32 top, bottom;	/* room for the title and for the details line */
	bool inverted;
	double scale;		/* px per sample */
};

/* ---- the stacks, as paths from the root ---- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The colour of a frame: by its kind, and "_[k]" names as kernel ones. */
static enum kind frame_kind(const struct frame *f)
{
	if (f->flags & FRAME_DELIMITER)
		return KIND_OTHER;
	if (!f->name || (f->flags & FRAME_MISSED))
		return KIND_UNKNOWN;
	if (f->kind == FRAME_KERNEL || ends_with(f->name, "_[k]"))
		return KIND_KERNEL;
	if (f->kind == FRAME_INTERP)
		return KIND_INTERP;
	return f->kind == FRAME_JIT ? KIND_JIT : KIND_USER;
}

static enum kind elem_kind(const struct elem *e)
{
	return e->f ? frame_kind(e->f) : e->kind;
}

static __u32 path_len(const struct item *it)
{
	return 1 + it->it.len;
}

/*
 * Keep the label of every unnamed frame, so that path_elem() finds it, and
 * make the short name of every named one before sorting compares them.
 */
static int keep_labels(struct paths *ps, const struct item *items, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		for (__u32 j = 0; j < items[i].it.len; j++) {
			const struct frame *f = trace_iter__frame(&items[i].it, j);

			if (f->name)
				frame__name(f, ps->names);
			else if (!frame__label_kept(f, ps->labels))
				return -ENOMEM;
		}
	return 0;
}

/*
 * A frame's name (short, if asked: equal short names merge into one box),
 * or the label keep_labels() kept for it.
 */
static const char *frame_name(const struct paths *ps, const struct frame *f)
{
	char buf[FRAME_LABEL_MAX];
	const char *label;

	if (f->name)
		return frame__name(f, ps->names);
	label = frame__label(f, buf, sizeof(buf));
	if (label != buf)
		return label;
	label = strpool__find(ps->labels, buf, strlen(buf));
	return label ? label : "[unknown]";
}

/* comm, then the record's frames root first, as in folded output */
static struct elem path_elem(const struct item *it, __u32 i, const struct paths *ps)
{
	const struct frame *f;

	if (i == 0)
		return (struct elem){ .name = it->r->comm, .kind = KIND_OTHER };
	f = trace_iter__frame(&it->it, i - 1);
	return (struct elem){
		.name = frame_name(ps, f),
		.f = f,
		.suffix = f->kind == FRAME_KERNEL && ps->oo->annotations && !frame__is_marker(f),
	};
}

/*
 * By name, then kind.  Symbolized names and modules are shared strings:
 * equal pointers skip the strcmp, and frames with the same name, module
 * and side are of one kind.
 */
static int cmp_elem(const struct elem *a, const struct elem *b)
{
	int c = a->name == b->name ? 0 : strcmp(a->name, b->name);
	enum kind ka, kb;

	if (c)
		return c;
	if (a->suffix != b->suffix)
		return (int)a->suffix - (int)b->suffix;
	if (a->f && b->f && a->f->module == b->f->module && a->f->kind == b->f->kind &&
	    a->f->flags == b->f->flags)
		return 0;
	ka = elem_kind(a);
	kb = elem_kind(b);
	return ka == kb ? 0 : ka < kb ? -1 : 1;
}

static __u32 common_prefix(const struct item *a, const struct item *b,
			   const struct paths *ps)
{
	__u32 la = path_len(a), lb = path_len(b);
	__u32 n = la < lb ? la : lb, i;

	for (i = 0; i < n; i++) {
		struct elem ea = path_elem(a, i, ps), eb = path_elem(b, i, ps);

		if (cmp_elem(&ea, &eb))
			break;
	}
	return i;
}

static int by_path(const void *pa, const void *pb, void *ctx)
{
	const struct item *a = pa, *b = pb;
	const struct paths *ps = ctx;
	__u32 la = path_len(a), lb = path_len(b);
	__u32 i = common_prefix(a, b, ps);
	struct elem ea, eb;

	if (i == la || i == lb)
		return la < lb ? -1 : la > lb;
	ea = path_elem(a, i, ps);
	eb = path_elem(b, i, ps);
	return cmp_elem(&ea, &eb);
}

/* ---- frames: merging and elision ---- */

static void add_node(struct flame *fl, const struct elem *el, __u32 depth,
		     __u64 start, __u64 width, const struct places *several, bool off_cpu)
{
	if (fl->err || !width || (double)width < fl->min_samples)
		return;
	if (util__grow_array((void **)&fl->nodes, &fl->cap, fl->nr + 1, sizeof(*fl->nodes))) {
		fl->err = -ENOMEM;
		return;
	}
	fl->nodes[fl->nr++] = (struct node){ .el = *el, .depth = depth,
					     .start = start, .width = width,
					     .several = *several, .off_cpu = off_cpu };
	if (depth > fl->max_depth)
		fl->max_depth = depth;
}

/* Close the open frames at depths from down to to + 1; x is where they end. */
static void close_frames(struct flame *fl, const struct open_frame *open,
			 __u32 from, __u32 to, __u64 x)
{
	for (__u32 d = from; d > to; d--)
		add_node(fl, &open[d].el, d, open[d].start, x - open[d].start,
			 &open[d].several, !open[d].on_cpu);
}

static bool same_module(const struct frame *a, const struct frame *b)
{
	return a->module == b->module ||
	       (a->module && b->module && !strcmp(a->module, b->module));
}

/* Where in its module a frame is: its file offset, else its address. */
static __u64 place_of(const struct frame *f)
{
	return frame__has_file_offset(f) ? f->offset : f->addr;
}

/* An unnamed open frame merges f: note a place or a module it adds. */
static void merge_place(struct open_frame *o, const struct frame *f)
{
	const struct frame *first = o->el.f;

	if (!first || first->name || first == f)
		return;
	if (!same_module(first, f))
		o->several.modules = true;
	else if (place_of(first) != place_of(f))
		o->several.addrs = true;
}

/* items must be sorted by_path; open has room for the longest path + 1. */
static void walk(struct flame *fl, const struct item *items, size_t nr,
		 struct open_frame *open, const struct paths *ps)
{
	static const struct elem root = { .name = "all", .kind = KIND_OTHER };
	static const struct places one = {};
	__u32 prev_len = 0;
	__u64 x = 0;

	bool on_cpu_seen = false;

	for (size_t i = 0; i < nr; i++) {
		__u32 len = path_len(&items[i]);
		__u32 c = i ? common_prefix(&items[i - 1], &items[i], ps) : 0;
		bool on_cpu = items[i].r->what != COUNT_OFF_CPU;

		close_frames(fl, open, prev_len, c, x);
		/* Path element d is open[d + 1]; element 0 is the comm. */
		for (__u32 d = 0; d < c; d++)
			open[d + 1].on_cpu |= on_cpu;
		for (__u32 d = 1; d < c; d++)
			merge_place(&open[d + 1], trace_iter__frame(&items[i].it, d - 1));
		for (__u32 d = c; d < len; d++) {
			open[d + 1].el = path_elem(&items[i], d, ps);
			open[d + 1].start = x;
			open[d + 1].several = one;
			open[d + 1].on_cpu = on_cpu;
		}
		x += output__weight(fl->oo, items[i].r);
		on_cpu_seen |= on_cpu;
		prev_len = len;
	}
	close_frames(fl, open, prev_len, 0, x);
	add_node(fl, &root, 0, 0, x, &one, !on_cpu_seen);
}

static int build_flame(struct flame *fl, const struct records *p,
		       const struct output_opts *oo, double min_width)
{
	struct paths ps = { .oo = oo, .labels = &fl->labels, .names = &fl->names };
	struct open_frame *open = NULL;
	struct item *items;
	__u32 max_len = 0;
	size_t nr = 0;

	items = calloc(p->nr ? p->nr : 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr; i++) {
		__u64 weight = output__weight(oo, &p->recs[i]);

		if (!weight)
			continue;
		items[nr].r = &p->recs[i];
		trace_iter__init(&items[nr].it, &p->recs[i], &oo->view);
		if (path_len(&items[nr]) > max_len)
			max_len = path_len(&items[nr]);
		fl->total += weight;
		nr++;
	}
	fl->min_samples = min_width > 0 ? fl->total * min_width / 100.0 : 0;
	open = calloc(max_len + 1, sizeof(*open));
	if (!open || keep_labels(&ps, items, nr)) {
		fl->err = -ENOMEM;
		goto cleanup;
	}
	qsort_r(items, nr, sizeof(*items), by_path, &ps);
	walk(fl, items, nr, open, &ps);
cleanup:
	free(open);
	free(items);
	return fl->err;
}

/* ---- SVG text ---- */

/* For short, numeric formats only: longer output is cut at 255 bytes. */
__attribute__((format(printf, 2, 3)))
static void put_fmt(struct strbuf *sb, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		strbuf__add(sb, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/*
 * At most max characters of s, escaped for XML text and attributes.  A
 * browser refuses a whole SVG over one character XML 1.0 does not allow
 * (controls, bad UTF-8, U+FFFE, U+FFFF): names come safe from where they
 * were read (text.h), and any byte that is not part of a safe character
 * still becomes '?' here.
 */
static void put_xml(struct strbuf *sb, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t chars = 0; *p && chars < max; chars++) {
		int n = text__char_len((const char *)p, strnlen((const char *)p, 4));

		switch (*p) {
		case '<': strbuf__puts(sb, "&lt;"); break;
		case '>': strbuf__puts(sb, "&gt;"); break;
		case '&': strbuf__puts(sb, "&amp;"); break;
		case '"': strbuf__puts(sb, "&quot;"); break;
		case '\'': strbuf__puts(sb, "&apos;"); break;
		default:
			if (!n)
				strbuf__putc(sb, '?');
			else
				strbuf__add(sb, (const char *)p, n);
		}
		p += n ? n : 1;
	}
}

static void put_name(struct strbuf *sb, const struct elem *el)
{
	put_xml(sb, el->name, SIZE_MAX);
	if (el->suffix)
		strbuf__puts(sb, "_[k]");
}

/* The name, cut with ".." to what fits in width px; nothing under 3 chars. */
static void put_label(struct strbuf *sb, const struct elem *el, double width)
{
	size_t fit = width > 6 ? (size_t)((width - 6) / CHAR_WIDTH) : 0;
	size_t len = utf8_chars(el->name), keep;

	if (fit < 3)
		return;
	if (len + (el->suffix ? 4 : 0) <= fit) {
		put_name(sb, el);
		return;
	}
	keep = fit - 2;
	put_xml(sb, el->name, keep);
	if (el->suffix && keep > len)
		strbuf__add(sb, "_[k]", keep - len);
	strbuf__puts(sb, "..");
}

static __u32 hash32(const char *s)
{
	__u32 h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/*
 * A hue per kind, a shade per name: the same name always looks the same.
 * A frame whose time is all off-CPU is blue-violet whatever its kind, as
 * in FlameGraph's off-CPU ("io") graphs: blocked time stands out in a
 * wall-clock graph.  The root, comms and delimiters keep their grey.
 */
static void put_colour(struct strbuf *sb, const struct node *n)
{
	const struct elem *el = &n->el;
	__u32 h = hash32(el->name);
	int a = h & 0xff, b = h >> 8 & 0xff, c = h >> 16 & 0xff;	/* 0..255 */
	int r, g, bl;
	enum kind kind = elem_kind(el);

	if (n->off_cpu && kind != KIND_OTHER) {
		r = g = 80 + 60 * a / 255, bl = 190 + 55 * b / 255;
		put_fmt(sb, "rgb(%d,%d,%d)", r, g, bl);
		return;
	}
	switch (kind) {
	case KIND_KERNEL:	/* orange */
		r = 225 + 30 * a / 255, g = 125 + 60 * b / 255, bl = 10 + 50 * c / 255;
		break;
	case KIND_JIT:		/* green */
		r = 50 + 70 * a / 255, g = 180 + 60 * b / 255, bl = 50 + 60 * c / 255;
		break;
	case KIND_INTERP:	/* blue, an interpreter's functions */
		r = 60 + 50 * a / 255, g = 130 + 60 * b / 255, bl = 210 + 45 * c / 255;
		break;
	case KIND_UNKNOWN:	/* grey */
		r = g = bl = 165 + 35 * a / 255;
		break;
	case KIND_OTHER:	/* pale blue-grey */
		r = g = 190 + 20 * a / 255, bl = 215 + 25 * b / 255;
		break;
	default:		/* user native: red */
		r = 200 + 55 * a / 255, g = 40 + 70 * b / 255, bl = 40 + 60 * c / 255;
		break;
	}
	put_fmt(sb, "rgb(%d,%d,%d)", r, g, bl);
}

static double frame_y(const struct layout *lo, __u32 depth)
{
	if (lo->inverted)
		return lo->top + (double)depth * FRAME_HEIGHT;
	return lo->height - lo->bottom - (double)(depth + 1) * FRAME_HEIGHT;
}

/* An unnamed frame: what the label stands for. */
static bool is_unnamed(const struct elem *el)
{
	return el->f && !el->f->name;
}

/*
 * Where an unnamed frame is: "/usr/bin/gzip+0x1a2b" (its module and the
 * offset in the file), or its address when it has no file; "several
 * addresses" or "several modules" for a box that merged such frames.
 */
static void put_place(struct strbuf *sb, const struct node *n)
{
	const struct frame *f = n->el.f;

	strbuf__putc(sb, ' ');
	if (n->several.modules) {
		strbuf__puts(sb, "several modules");
		return;
	}
	if (frame__has_file_offset(f)) {
		put_xml(sb, f->module, SIZE_MAX);
		if (n->several.addrs)
			strbuf__puts(sb, ", several addresses");
		else
			put_fmt(sb, "+0x%llx", (unsigned long long)f->offset);
		return;
	}
	if (n->several.addrs)
		strbuf__puts(sb, "several addresses");
	else
		put_fmt(sb, "0x%llx", (unsigned long long)f->addr);
}

/*
 * data-x/-w are in samples and data-d is the depth: what the script zooms
 * by.  The <title> is the tooltip, and "name (...)" is how the script
 * gets the full name back, unless data-n gives it: an unnamed frame's
 * tooltip says where it is, "[gzip] /usr/bin/gzip+0x1a2b (...)".
 */
static void put_frame(struct strbuf *sb, const struct node *n,
		      const struct layout *lo, const struct flame *fl)
{
	__u64 total = fl->total;
	double x = XPAD + n->start * lo->scale, w = n->width * lo->scale;
	double y = frame_y(lo, n->depth);

	put_fmt(sb, "<g data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\"",
		(unsigned long long)n->start, (unsigned long long)n->width, n->depth);
	if (is_unnamed(&n->el)) {
		strbuf__puts(sb, " data-n=\"");
		put_name(sb, &n->el);
		strbuf__putc(sb, '"');
	}
	strbuf__puts(sb, "><title>");
	put_name(sb, &n->el);
	if (is_unnamed(&n->el))
		put_place(sb, n);
	if (output__timed(fl->oo))
		put_fmt(sb, " (%llu us, %.2f%%)</title>",
			(unsigned long long)output__us(n->width), 100.0 * n->width / total);
	else
		put_fmt(sb, " (%llu sample%s, %.2f%%)</title>", (unsigned long long)n->width,
			n->width == 1 ? "" : "s", 100.0 * n->width / total);
	put_fmt(sb, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"",
		x, y, w, FRAME_HEIGHT - 1);
	put_colour(sb, n);
	put_fmt(sb, "\"/><text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 4.5);
	put_label(sb, &n->el, w);
	strbuf__puts(sb, "</text></g>\n");
}

/* After put_header()'s font sizes: src/output/flamegraph.css, then the background. */
static const char defs[] =
	"</style>\n"
	"<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	"<stop offset=\"5%\" stop-color=\"#f4f4f0\"/>"
	"<stop offset=\"95%\" stop-color=\"#e2e4ee\"/>"
	"</linearGradient></defs>\n";

/* The default title: what the profile measured, and which way up. */
static const char *default_title(const struct svg_opts *so, const struct output_opts *oo)
{
	switch (oo->kind) {
	case PROFILE_OFF_CPU:
		return so->inverted ? "Off-CPU Time Icicle Graph" : "Off-CPU Time Flame Graph";
	case PROFILE_WALL:
		return so->inverted ? "Wall-Clock Icicle Graph" : "Wall-Clock Flame Graph";
	default:
		return so->inverted ? "Icicle Graph" : "CPU Flame Graph";
	}
}

static void put_header(struct strbuf *sb, const struct layout *lo,
		       const struct svg_opts *so, const struct flame *fl)
{
	const char *title = so->title ? so->title : default_title(so, fl->oo);
	__u64 total = fl->total;
	__u32 bottom_y = lo->height - FONT_SIZE + 2;

	strbuf__puts(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	put_fmt(sb, "<svg version=\"1.1\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n",
		IMAGE_WIDTH, lo->height, IMAGE_WIDTH, lo->height);
	put_fmt(sb, "<style>\n"
		"text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }\n"
		"#title { font-size: %dpx; }\n", FONT_SIZE, TITLE_SIZE);
	strbuf__add(sb, (const char *)flamegraph_css, flamegraph_css_len);
	strbuf__puts(sb, defs);
	put_fmt(sb, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" "
		"fill=\"url(#background)\"/>\n", IMAGE_WIDTH, lo->height);
	put_fmt(sb, "<text id=\"title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
		IMAGE_WIDTH / 2, FONT_SIZE * 2);
	put_xml(sb, title, SIZE_MAX);
	strbuf__puts(sb, "</text>\n");
	if (so->subtitle) {
		put_fmt(sb, "<text id=\"subtitle\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
			IMAGE_WIDTH / 2, FONT_SIZE * 2 + FONT_SIZE + 6);
		put_xml(sb, so->subtitle, SIZE_MAX);
		strbuf__puts(sb, "</text>\n");
	}
	put_fmt(sb, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n",
		XPAD, FONT_SIZE * 2);
	put_fmt(sb, "<text id=\"search\" x=\"%d\" y=\"%d\" text-anchor=\"end\">Search</text>\n",
		IMAGE_WIDTH - XPAD, FONT_SIZE * 2);
	put_fmt(sb, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, bottom_y);
	put_fmt(sb, "<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		IMAGE_WIDTH - XPAD, bottom_y);
	if (!total)
		put_fmt(sb, "<text x=\"%d\" y=\"%u\" text-anchor=\"middle\">No samples</text>\n",
			IMAGE_WIDTH / 2, lo->top + FRAME_HEIGHT);
}

/*
 * src/output/flamegraph.js, after the numbers it needs.  Zoom: a frame's subtree
 * is stretched to the full width, its ancestors span the width dimmed, the
 * rest is hidden.  Search: the share of samples under matching frames,
 * counting nested matches once.
 */
static void put_footer(struct strbuf *sb, __u64 total)
{
	strbuf__puts(sb, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	put_fmt(sb, "var fg = { total: %llu, width: %d, pad: %d, charWidth: %.3f };\n",
		(unsigned long long)total, IMAGE_WIDTH, XPAD, CHAR_WIDTH);
	strbuf__add(sb, (const char *)flamegraph_js, flamegraph_js_len);
	strbuf__puts(sb, "]]></script>\n</svg>\n");
}

static void render(struct strbuf *sb, const struct flame *fl, const struct svg_opts *so)
{
	struct layout lo = {
		.inverted = so->inverted,
		.top = so->subtitle ? FONT_SIZE * 4 + 8 : FONT_SIZE * 3,
		.bottom = FONT_SIZE * 2 + 6,
		.scale = fl->total ? (double)(IMAGE_WIDTH - 2 * XPAD) / fl->total : 0,
	};

	lo.height = lo.top + (fl->max_depth + 1) * FRAME_HEIGHT + lo.bottom;
	put_header(sb, &lo, so, fl);
	strbuf__puts(sb, "<g id=\"frames\">\n");
	for (size_t i = 0; i < fl->nr; i++)
		put_frame(sb, &fl->nodes[i], &lo, fl);
	put_footer(sb, fl->total);
}

int svg__write(FILE *out, const struct records *p, const struct output_opts *oo,
	      const struct svg_opts *so)
{
	struct svg_opts defaults = { .min_width = SVG_MIN_WIDTH_DEFAULT };
	struct flame fl = { .oo = oo };
	struct strbuf sb = {};
	int err;

	if (!so)
		so = &defaults;
	frame_names__init(&fl.names, oo->short_names);
	fl.names.lines = oo->lines;
	err = build_flame(&fl, p, oo, so->min_width);
	if (!err) {
		render(&sb, &fl, so);
		err = sb.err;
	}
	if (!err && fwrite(sb.buf, 1, sb.len, out) != sb.len)
		err = errno ? -errno : -EIO;
	if (!err && fflush(out))
		err = errno ? -errno : -EIO;
	strbuf__free(&sb);
	free(fl.nodes);
	strpool__free(&fl.labels);
	frame_names__free(&fl.names);
	return err;
}
