// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Flame graph SVGs of hand-built profiles, checked by reading back the
 * frames' <title> and <rect> attributes.
 *
 * With PROFILE_TEST_OUTPUT=DIR, also writes DIR/unit.svg, a small graph
 * with a known answer (func_b three times func_a) for tests/browser.
 */
#include <errno.h>
#include <stdlib.h>

#include "unit.h"
#include "output/svg.h"
#include "output/output.h"
#include "trace/symbolize.h"
#include "stacks.h"


struct fr {
	double x, y, width;
	int r, g, b;
	unsigned long long samples, data_x, data_w;
	unsigned depth;
};

static const struct output_opts both = { .folded = true, .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };

static char *render(struct record *recs, size_t nr, const struct output_opts *oo,
		    const struct svg_opts *so)
{
	struct records p = { .recs = recs, .nr = nr };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK_INT(svg__write(f, &p, oo, so), 0);
	fclose(f);
	return buf;
}

static double attr(const char *from, const char *name)
{
	const char *s = strstr(from, name);

	return s ? strtod(s + strlen(name), NULL) : -1;
}

/*
 * The nth (from 0) frame whose <title> starts with "name (", as the SVG
 * spells it (escaped).  Returns false if there is none.
 */
static bool frame(const char *svg, const char *name, int nth, struct fr *f)
{
	char key[512];
	const char *s = svg, *g, *rect;

	snprintf(key, sizeof(key), "<title>%s (", name);
	for (;;) {
		s = strstr(s, key);
		if (!s)
			return false;
		if (nth-- == 0)
			break;
		s++;
	}
	/* <g data-x=".." data-w=".." data-d=".."><title>... */
	for (g = s; g > svg && strncmp(g, "<g ", 3); g--)
		;
	rect = strstr(s, "<rect ");
	if (!rect)
		return false;
	f->data_x = attr(g, "data-x=\"");
	f->data_w = attr(g, "data-w=\"");
	f->depth = attr(g, "data-d=\"");
	f->samples = strtoull(s + strlen(key), NULL, 10);
	f->x = attr(rect, " x=\"");
	f->y = attr(rect, " y=\"");
	f->width = attr(rect, " width=\"");
	if (sscanf(strstr(rect, "fill=\""), "fill=\"rgb(%d,%d,%d)", &f->r, &f->g, &f->b) != 3)
		return false;
	return true;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

static STACK(u_a, 2);
static STACK(u_b, 2);
static STACK(u_c, 2);
static STACK(u_tiny, 3);
static STACK(u_jit, 2);
static STACK(u_unknown, 2);
static STACK(u_cxx, 1);
static STACK(k_st, 2);

static void setup(void)
{
	u_a.frames[0] = (struct frame){ .name = "func_a", .module = "/bin/burn" };
	u_a.frames[1] = (struct frame){ .name = "main", .module = "/bin/burn" };
	u_b.frames[0] = (struct frame){ .name = "func_b", .module = "/bin/burn" };
	u_b.frames[1] = (struct frame){ .name = "main", .module = "/bin/burn" };
	u_c.frames[0] = (struct frame){ .name = "func_c", .module = "/bin/burn" };
	u_c.frames[1] = (struct frame){ .name = "main", .module = "/bin/burn" };
	u_tiny.frames[0] = (struct frame){ .name = "tiny_leaf", .module = "/bin/burn" };
	u_tiny.frames[1] = (struct frame){ .name = "tiny", .module = "/bin/burn" };
	u_tiny.frames[2] = (struct frame){ .name = "main", .module = "/bin/burn" };
	u_jit.frames[0] = (struct frame){ .name = "Interpreter::run", .module = "[anon]", .kind = FRAME_JIT };
	u_jit.frames[1] = (struct frame){ .name = "main", .module = "/bin/burn" };
	u_unknown.frames[0] = (struct frame){ .name = NULL, .module = "/lib/x.so" };
	u_unknown.frames[1] = (struct frame){ .name = "main", .module = "/bin/burn" };
	u_cxx.frames[0] = (struct frame){ .name = "std::vector<int, std::allocator<int> >::push(int&&) \"q\" 'a'",
					  .module = "/bin/cxx" };
	k_st.frames[0] = (struct frame){ .name = "kleaf", .kind = FRAME_KERNEL };
	k_st.frames[1] = (struct frame){ .name = "kroot", .kind = FRAME_KERNEL };
}

#define rec test_record

TEST(widths_proportional)
{
	struct record r[] = {
		rec("burn", 1, 100, &u_a, PART_OK, NULL, PART_ABSENT),
		rec("burn", 1, 300, &u_b, PART_OK, NULL, PART_ABSENT),
	};
	char *svg = render(r, 2, &both, NULL);
	struct fr a, b, m, all;

	CHECK(frame(svg, "func_a", 0, &a));
	CHECK(frame(svg, "func_b", 0, &b));
	CHECK(frame(svg, "main", 0, &m));
	CHECK(frame(svg, "all", 0, &all));
	CHECK_INT(a.samples, 100);
	CHECK_INT(b.samples, 300);
	CHECK(b.width / a.width > 2.99 && b.width / a.width < 3.01);
	CHECK(m.width > 1179.9 && m.width < 1180.1);	/* 1200 - 2 * 10 */
	CHECK(all.width == m.width);
	CHECK(strstr(svg, "func_b (300 samples, 75.00%)") != NULL);
	CHECK(strstr(svg, "func_a (100 samples, 25.00%)") != NULL);
	CHECK_INT(all.depth, 0);
	CHECK_INT(m.depth, 2);				/* all, burn, main */
	CHECK_INT(b.data_w, 300);
	free(svg);
}

TEST(siblings_alphabetical_and_merged)
{
	struct record r[] = {
		rec("burn", 1, 10, &u_c, PART_OK, NULL, PART_ABSENT),
		rec("burn", 2, 20, &u_b, PART_OK, NULL, PART_ABSENT),
		rec("burn", 3, 30, &u_a, PART_OK, NULL, PART_ABSENT),
		rec("burn", 4, 5, &u_a, PART_OK, NULL, PART_ABSENT),	/* merges */
		rec("zed", 5, 1, &u_a, PART_OK, NULL, PART_ABSENT),	/* another root */
	};
	char *svg = render(r, 5, &both, NULL);
	struct fr a, b, c, burn, zed, a2;

	CHECK(frame(svg, "func_a", 0, &a));
	CHECK(frame(svg, "func_b", 0, &b));
	CHECK(frame(svg, "func_c", 0, &c));
	CHECK(frame(svg, "burn", 0, &burn));
	CHECK(frame(svg, "zed", 0, &zed));
	CHECK(a.x < b.x && b.x < c.x);
	CHECK(burn.x < zed.x);
	/* burn's func_a (35) and zed's func_a (1) are two frames. */
	CHECK_INT(count(svg, "<title>func_a ("), 2);
	CHECK_INT(count(svg, "<title>burn ("), 1);
	CHECK_INT(count(svg, "<title>main ("), 2);
	CHECK(frame(svg, "func_a", 1, &a2));
	CHECK_INT(a.samples + a2.samples, 36);
	CHECK(a.samples == 35 || a2.samples == 35);
	/* Frames sit side by side: b starts where a ends. */
	CHECK(b.x - (a.x + a.width) < 0.02 && b.x - (a.x + a.width) > -0.02);
	free(svg);
}

/* A record whose stack is a prefix of another's: self time on the left. */
TEST(self_time_then_children)
{
	STACK(just_main, 1);
	struct record r[] = {
		rec("burn", 1, 10, &u_a, PART_OK, NULL, PART_ABSENT),
		rec("burn", 1, 30, &just_main, PART_OK, NULL, PART_ABSENT),
	};
	char *svg;
	struct fr m, a;

	just_main.frames[0] = u_a.frames[1];
	svg = render(r, 2, &both, NULL);
	CHECK(frame(svg, "main", 0, &m));
	CHECK(frame(svg, "func_a", 0, &a));
	CHECK_INT(m.samples, 40);
	CHECK_INT(a.data_x, 30);
	CHECK(a.x > m.x);
	free(svg);
}

TEST(elision_below_min_width)
{
	struct record r[] = {
		rec("burn", 1, 999, &u_a, PART_OK, NULL, PART_ABSENT),
		rec("burn", 1, 1, &u_tiny, PART_OK, NULL, PART_ABSENT),	/* 0.1% */
	};
	struct svg_opts big = { .min_width = 0.5 };
	struct svg_opts small = { .min_width = 0.05 };
	char *svg = render(r, 2, &both, &big);
	struct fr all;

	CHECK(strstr(svg, "<title>tiny (") == NULL);
	CHECK(strstr(svg, "<title>tiny_leaf (") == NULL);
	CHECK(frame(svg, "all", 0, &all));
	CHECK_INT(all.samples, 1000);	/* elided, not dropped from the total */
	free(svg);

	svg = render(r, 2, &both, &small);
	CHECK(strstr(svg, "<title>tiny (1 sample, 0.10%)") != NULL);
	CHECK(strstr(svg, "<title>tiny_leaf (") != NULL);
	free(svg);

	/* NULL options: the 0.1% default, which keeps a 0.1% frame. */
	svg = render(r, 2, &both, NULL);
	CHECK(strstr(svg, "<title>tiny (") != NULL);
	free(svg);
}

TEST(many_stacks_stay_small)
{
	enum { N = 20000 };
	struct record *r = calloc(N + 1, sizeof(*r));
	struct inline_stack **st = calloc(N, sizeof(*st));
	char (*names)[16] = calloc(N, sizeof(*names));
	struct svg_opts so = { .min_width = SVG_MIN_WIDTH_DEFAULT };
	char *svg;

	CHECK(r && st && names);
	if (!r || !st || !names)
		return;
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "f%05d", i);
		st[i] = calloc(1, sizeof(struct inline_stack) + sizeof(struct frame));
		st[i]->nr = 1;
		st[i]->frames[0] = (struct frame){ .name = names[i], .module = "/x" };
		r[i] = rec("many", 1, 1, st[i], PART_OK, NULL, PART_ABSENT);
	}
	r[N] = rec("many", 1, N, &u_a, PART_OK, NULL, PART_ABSENT);
	svg = render(r, N + 1, &both, &so);
	/* all, many, main, func_a: every 1-in-40000 frame is elided. */
	CHECK_INT(count(svg, "<g data-x"), 4);
	CHECK(strlen(svg) < 20000);
	free(svg);
	for (int i = 0; i < N; i++)
		free(st[i]);
	free(st);
	free(names);
	free(r);
}

TEST(xml_escaping)
{
	STACK(bad, 1);
	struct record r[] = {
		rec("cxx<&>", 1, 10, &u_cxx, PART_OK, NULL, PART_ABSENT),
		rec("x", 2, 10, &bad, PART_OK, NULL, PART_ABSENT),
	};
	struct svg_opts so = { .title = "a < b & \"c\"", .subtitle = "profile -p 1 | 'x'" };
	char *svg;

	bad.frames[0] = (struct frame){ .name = "bad\xff\x01name\xc3\xa9\xef\xbf\xbf"
						"\xef\xbf\xbe\xc2\x85\x7f\xed\x9f\xbf", .module = "/x" };
	svg = render(r, 2, &both, &so);
	CHECK(strstr(svg, "<title>std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push(int&amp;&amp;) &quot;q&quot; &apos;a&apos; (10 samples") != NULL);
	CHECK(strstr(svg, "<title>cxx&lt;&amp;&gt; (") != NULL);
	CHECK(strstr(svg, "std::vector<") == NULL);
	CHECK(strstr(svg, ">a &lt; b &amp; &quot;c&quot;</text>") != NULL);
	CHECK(strstr(svg, ">profile -p 1 | &apos;x&apos;</text>") != NULL);
	/* A bad byte and a control character become '?'; good UTF-8 stays. */
	/* Nor do U+FFFF, U+FFFE, U+0085 or DEL pass: XML 1.0 refuses them. */
	CHECK(strstr(svg, "<title>bad??name\xc3\xa9?????????\xed\x9f\xbf (") != NULL);
	/* The label is cut to fit, also escaped. */
	CHECK(strstr(svg, ">std::vector&lt;int") != NULL);
	free(svg);
}

TEST(inverted_and_titles)
{
	struct record r[] = { rec("burn", 1, 10, &u_a, PART_OK, NULL, PART_ABSENT) };
	struct svg_opts icicle = { .inverted = true };
	char *svg = render(r, 1, &both, NULL);
	struct fr all, a;

	CHECK(frame(svg, "all", 0, &all));
	CHECK(frame(svg, "func_a", 0, &a));
	CHECK(all.y > a.y);			/* root at the bottom */
	CHECK(all.y - a.y == 3 * 16);
	CHECK(strstr(svg, ">CPU Flame Graph</text>") != NULL);
	CHECK(strstr(svg, "id=\"subtitle\"") == NULL);
	free(svg);

	svg = render(r, 1, &both, &icicle);
	CHECK(frame(svg, "all", 0, &all));
	CHECK(frame(svg, "func_a", 0, &a));
	CHECK(all.y < a.y);			/* root at the top */
	CHECK(a.y - all.y == 3 * 16);
	CHECK(strstr(svg, ">Icicle Graph</text>") != NULL);
	free(svg);
}

TEST(delimiter_annotations_missed)
{
	struct output_opts oo = { .view.delimited = true, .annotations = true,
				  .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct output_opts user_only = { .view.parts[PART_USER] = true };
	struct record r[] = {
		rec("burn", 1, 10, &u_a, PART_OK, &k_st, PART_OK),
		rec("lost", 2, 5, NULL, PART_MISSED, NULL, PART_MISSED),
	};
	char *svg = render(r, 2, &oo, NULL);
	struct fr a, dash, kroot, kleaf, mu, mk;

	CHECK(frame(svg, "func_a", 0, &a));
	CHECK(frame(svg, "-", 0, &dash));
	CHECK(frame(svg, "kroot_[k]", 0, &kroot));
	CHECK(frame(svg, "kleaf_[k]", 0, &kleaf));
	CHECK_INT(dash.depth, a.depth + 1);
	CHECK_INT(kroot.depth, a.depth + 2);
	CHECK_INT(kleaf.depth, a.depth + 3);
	CHECK(frame(svg, "[Missed User Stack]", 0, &mu));
	CHECK(frame(svg, "[Missed Kernel Stack]", 0, &mk));
	CHECK_INT(mk.depth, mu.depth + 1);
	free(svg);

	svg = render(r, 2, &user_only, NULL);
	CHECK(strstr(svg, "kroot") == NULL);
	CHECK(strstr(svg, "<title>- (") == NULL);
	CHECK(strstr(svg, "[Missed Kernel Stack]") == NULL);
	free(svg);
}

TEST(colours_by_kind_and_name)
{
	struct record r[] = {
		rec("burn", 1, 10, &u_a, PART_OK, &k_st, PART_OK),
		rec("burn", 1, 10, &u_jit, PART_OK, NULL, PART_ABSENT),
		rec("burn", 1, 10, &u_unknown, PART_OK, NULL, PART_ABSENT),
		rec("other", 2, 10, &u_a, PART_OK, NULL, PART_ABSENT),
	};
	char *svg = render(r, 4, &both, NULL);
	struct fr a, a2, k, jit, unk;

	CHECK(frame(svg, "func_a", 0, &a));
	CHECK(frame(svg, "func_a", 1, &a2));
	CHECK(frame(svg, "kleaf", 0, &k));
	CHECK(frame(svg, "Interpreter::run", 0, &jit));
	CHECK(frame(svg, "[x.so] /lib/x.so+0x0", 0, &unk));
	CHECK(a.r == a2.r && a.g == a2.g && a.b == a2.b);	/* same name */
	CHECK(a.r >= 200 && a.g <= 110 && a.b <= 100);		/* red */
	CHECK(k.r >= 225 && k.g >= 125 && k.g <= 185 && k.b <= 60);	/* orange */
	CHECK(jit.g >= 180 && jit.r <= 120);			/* green */
	CHECK(unk.r == unk.g && unk.g == unk.b);		/* grey */
	free(svg);
}

TEST(self_contained)
{
	struct record r[] = { rec("burn", 1, 10, &u_a, PART_OK, NULL, PART_ABSENT) };
	char *svg = render(r, 1, &both, NULL);

	CHECK(!strncmp(svg, "<?xml ", 6));
	CHECK(strstr(svg, "<script") && strstr(svg, "<style>"));
	CHECK(strstr(svg, "href") == NULL);		/* nothing fetched */
	CHECK(strstr(svg, "http://www.w3.org/2000/svg") != NULL);
	CHECK_INT(count(svg, "<g "), count(svg, "</g>"));
	CHECK(!strcmp(svg + strlen(svg) - 7, "</svg>\n"));
	free(svg);
}

TEST(empty_and_errors)
{
	struct record r[] = { rec("burn", 1, 10, &u_a, PART_OK, NULL, PART_ABSENT) };
	struct records p = { .recs = r, .nr = 1 };
	char *svg = render(NULL, 0, &both, NULL);
	FILE *f;

	CHECK(strstr(svg, "No samples") != NULL);
	CHECK(strstr(svg, "<g data-x") == NULL);
	free(svg);

	f = fopen("/dev/full", "w");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(svg__write(f, &p, &both, NULL), -ENOSPC);
		fclose(f);
	}
}

/* An unnamed user frame: its file offset, the leaf of a stack under main. */
static void unnamed_at(void *st, const char *module, __u64 addr, __u64 offset)
{
	struct { __u32 nr; struct frame frames[2]; } *s = st;

	s->frames[0] = (struct frame){ .addr = addr, .offset = offset, .module = module };
	s->frames[1] = (struct frame){ .name = "main", .module = "/usr/bin/gzip" };
}

/*
 * Unnamed frames are labelled by their module, and the tooltip says
 * where: the module and the offset in its file, or the address without
 * one; a box that merged several places or modules says so.
 */
TEST(unnamed_labels_and_places)
{
	STACK(a, 2); STACK(b1, 2); STACK(b2, 2); STACK(c1, 2); STACK(c2, 2);
	STACK(d1, 2); STACK(d2, 2); STACK(e, 2); STACK(f, 2);
	STACK(k, 1);
	struct record r[9];
	struct fr fr;
	char *svg;

	unnamed_at(&a, "/usr/bin/gzip", 0x55001a2b, 0x1a2b);
	/* One place in two processes' address spaces: one file offset. */
	unnamed_at(&b1, "/usr/bin/gzip", 0x56001a2b, 0x1a2b);
	unnamed_at(&b2, "/usr/bin/gzip", 0x57001a2b, 0x1a2b);
	unnamed_at(&c1, "/usr/bin/gzip", 0x55000100, 0x100);
	unnamed_at(&c2, "/usr/bin/gzip", 0x55000200, 0x200);
	unnamed_at(&d1, "/usr/bin/gzip", 0x55000100, 0x100);
	unnamed_at(&d2, "/opt/gzip", 0x55000100, 0x100);
	unnamed_at(&e, NULL, 0x600000, 0);
	unnamed_at(&f, "[vdso]", 0x7ffd09a0, 0x9a0);
	k.frames[0] = (struct frame){ .addr = 0xffffffff81000010, .kind = FRAME_KERNEL };
	r[0] = rec("a", 1, 10, &a, PART_OK, NULL, PART_ABSENT);
	r[1] = rec("b", 2, 1, &b1, PART_OK, NULL, PART_ABSENT);
	r[2] = rec("b", 3, 1, &b2, PART_OK, NULL, PART_ABSENT);
	r[3] = rec("c", 4, 2, &c1, PART_OK, NULL, PART_ABSENT);
	r[4] = rec("c", 4, 3, &c2, PART_OK, NULL, PART_ABSENT);
	r[5] = rec("d", 5, 4, &d1, PART_OK, NULL, PART_ABSENT);
	r[6] = rec("d", 5, 5, &d2, PART_OK, NULL, PART_ABSENT);
	r[7] = rec("e", 6, 6, &e, PART_OK, &k, PART_OK);
	r[8] = rec("f", 7, 7, &f, PART_OK, NULL, PART_ABSENT);
	svg = render(r, 9, &both, NULL);

	CHECK(frame(svg, "[gzip] /usr/bin/gzip+0x1a2b", 0, &fr));
	CHECK_INT(fr.samples, 10);
	CHECK(frame(svg, "[gzip] /usr/bin/gzip+0x1a2b", 1, &fr));
	CHECK_INT(fr.samples, 2);
	CHECK(frame(svg, "[gzip] /usr/bin/gzip, several addresses", 0, &fr));
	CHECK_INT(fr.samples, 5);
	CHECK(frame(svg, "[gzip] several modules", 0, &fr));
	CHECK_INT(fr.samples, 9);
	CHECK(frame(svg, "[unknown] 0x600000", 0, &fr));
	CHECK(frame(svg, "[kernel] 0xffffffff81000010", 0, &fr));
	CHECK_INT(fr.samples, 6);
	CHECK(frame(svg, "[vdso] [vdso]+0x9a0", 0, &fr));
	CHECK_INT(fr.samples, 7);
	/* The script's name for the box: the label alone. */
	CHECK_INT(count(svg, "data-n=\"[gzip]\"><title>[gzip] "), 4);
	CHECK_INT(count(svg, "data-n=\"[vdso]\"><title>"), 1);
	CHECK_INT(count(svg, "data-n="), 7);
	CHECK(strstr(svg, "[[") == NULL);
	CHECK(strstr(svg, ">[gzip]</text>") != NULL);
	free(svg);
}

/* Names that need escaping in a module path stay escaped in the tooltip. */
TEST(unnamed_module_escaped)
{
	STACK(u, 2);
	struct record r[1];
	struct fr fr;
	char *svg;

	unnamed_at(&u, "/tmp/<a&b>", 0x1000, 0x10);
	r[0] = rec("x", 1, 1, &u, PART_OK, NULL, PART_ABSENT);
	svg = render(r, 1, &both, NULL);
	CHECK(frame(svg, "[&lt;a&amp;b&gt;] /tmp/&lt;a&amp;b&gt;+0x10", 0, &fr));
	CHECK(strstr(svg, "data-n=\"[&lt;a&amp;b&gt;]\"") != NULL);
	free(svg);
}

/* The browser test's input: known shape, some of every kind of frame. */
/* Short names: two instantiations are one box, their samples added. */
TEST(short_names_merge)
{
	struct output_opts oo = both;
	STACK(s1, 2);
	STACK(s2, 2);
	struct record r[2];
	struct fr f;
	char *svg;

	s1.frames[0] = (struct frame){ .name = "ns::Foo<int>::f(int) const", .module = "/bin/cxx",
				       .flags = FRAME_DEMANGLED };
	s1.frames[1] = (struct frame){ .name = "main", .module = "/bin/cxx" };
	s2.frames[0] = (struct frame){ .name = "ns::Foo<long>::f(long) const", .module = "/bin/cxx",
				       .flags = FRAME_DEMANGLED };
	s2.frames[1] = s1.frames[1];
	r[0] = rec("cxx", 1, 3, &s1, PART_OK, NULL, PART_ABSENT);
	r[1] = rec("cxx", 1, 4, &s2, PART_OK, NULL, PART_ABSENT);
	svg = render(r, 2, &oo, NULL);
	CHECK_INT(count(svg, "<title>ns::Foo&lt;int&gt;::f(int) const (3 samples"), 1);
	CHECK_INT(count(svg, "<title>ns::Foo&lt;long&gt;::f(long) const (4 samples"), 1);
	CHECK_INT(count(svg, "ns::Foo::f"), 0);
	free(svg);
	oo.short_names = true;
	svg = render(r, 2, &oo, NULL);
	CHECK(frame(svg, "ns::Foo::f", 0, &f));
	CHECK_INT(f.samples, 7);
	CHECK_INT(count(svg, "<title>ns::Foo::f ("), 1);
	CHECK_INT(count(svg, ">ns::Foo::f</text>"), 1);
	CHECK_INT(count(svg, "Foo&lt;"), 0);
	free(svg);
}

TEST(browser_fixture)
{
	const char *dir = getenv("PROFILE_TEST_OUTPUT");
	struct record r[] = {
		rec("burn", 1, 100, &u_a, PART_OK, &k_st, PART_OK),
		rec("burn", 1, 300, &u_b, PART_OK, NULL, PART_ABSENT),
		rec("burn", 1, 40, &u_jit, PART_OK, NULL, PART_ABSENT),
		rec("burn", 1, 20, &u_unknown, PART_OK, NULL, PART_ABSENT),
		rec("cxx", 2, 60, &u_cxx, PART_OK, NULL, PART_ABSENT),
		rec("lost", 3, 5, NULL, PART_MISSED, NULL, PART_MISSED),
	};
	struct records p = { .recs = r, .nr = 6 };
	struct svg_opts so = { .subtitle = "unit-test fixture: func_b = 3 x func_a",
			       .min_width = SVG_MIN_WIDTH_DEFAULT };
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/unit.svg", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(svg__write(f, &p, &both, &so), 0);
	CHECK_INT(fclose(f), 0);
}

/* A record of off-CPU time: count is nanoseconds. */
static struct record off(const char *comm, __u64 ns, const void *user, const void *kern)
{
	struct record r = rec(comm, 1, ns, user, PART_OK, kern, kern ? PART_OK : PART_ABSENT);

	r.what = COUNT_OFF_CPU;
	return r;
}

/* FlameGraph's off-CPU palette: r == g in [80, 140], b in [190, 245]. */
static bool blue(const struct fr *f)
{
	return f->r == f->g && f->r >= 80 && f->r <= 140 && f->b >= 190 && f->b <= 245;
}

/* --off-cpu: its title, time in us in the tooltips, every frame blue. */
TEST(off_cpu_title_unit_colour)
{
	struct output_opts oo = both;
	struct svg_opts icicle = { .inverted = true }, titled = { .title = "Mine" };
	struct record r[] = {
		off("burn", 3000000, &u_a, NULL),
		off("burn", 1000400, &u_b, &k_st),
	};
	struct fr a, b, m, k, all;
	char *svg;

	oo.kind = PROFILE_OFF_CPU;
	svg = render(r, 2, &oo, NULL);
	CHECK(strstr(svg, ">Off-CPU Time Flame Graph</text>") != NULL);
	CHECK(strstr(svg, "<title>func_a (3000 us, 74.99%)</title>") != NULL);
	CHECK(strstr(svg, "<title>main (4000 us, 100.00%)</title>") != NULL);
	CHECK(strstr(svg, "sample") == NULL);
	CHECK(frame(svg, "func_a", 0, &a));
	CHECK(frame(svg, "func_b", 0, &b));
	CHECK(frame(svg, "main", 0, &m));
	CHECK(frame(svg, "kleaf", 0, &k));
	CHECK(frame(svg, "all", 0, &all));
	CHECK_INT(a.data_w, 3000000);		/* the graph is in ns */
	CHECK(blue(&a) && blue(&b) && blue(&m) && blue(&k));
	CHECK(!blue(&all));			/* the root keeps its grey */
	free(svg);

	svg = render(r, 2, &oo, &icicle);
	CHECK(strstr(svg, ">Off-CPU Time Icicle Graph</text>") != NULL);
	free(svg);
	svg = render(r, 2, &oo, &titled);
	CHECK(strstr(svg, ">Mine</text>") != NULL);
	CHECK(strstr(svg, "Off-CPU Time") == NULL);
	free(svg);
}

/*
 * --wall: on-CPU samples weigh period_ns; a frame with any on-CPU time
 * keeps its colour, what is only off-CPU ([off-cpu], the kernel's
 * frames under it) is blue.
 */
TEST(wall_title_marker_colour)
{
	struct output_opts oo = both;
	struct record r[] = {
		off("burn", 1000000, &u_a, NULL),
		rec("burn", 1, 2, &u_b, PART_OK, NULL, PART_ABSENT),
		off("burn", 3000000, &u_b, &k_st),
	};
	struct fr a, b, k, mark, mark2, m;
	char *svg;

	oo.kind = PROFILE_WALL;
	oo.period_ns = 1000000;
	oo.view.mark_off_cpu = true;
	svg = render(r, 3, &oo, NULL);
	CHECK(strstr(svg, ">Wall-Clock Flame Graph</text>") != NULL);
	CHECK(strstr(svg, "<title>func_b (5000 us, 83.33%)</title>") != NULL);
	CHECK(strstr(svg, "<title>kleaf (3000 us, 50.00%)</title>") != NULL);
	CHECK(strstr(svg, "<title>main (6000 us, 100.00%)</title>") != NULL);
	CHECK(frame(svg, "func_a", 0, &a));
	CHECK(frame(svg, "func_b", 0, &b));
	CHECK(frame(svg, "kleaf", 0, &k));
	CHECK(frame(svg, "main", 0, &m));
	CHECK(frame(svg, "[off-cpu]", 0, &mark));
	CHECK(frame(svg, "[off-cpu]", 1, &mark2));
	CHECK_INT(mark.depth, a.depth + 1);
	CHECK_INT(mark2.depth, k.depth + 1);	/* on top of the kernel's frames */
	CHECK_INT(mark2.data_w, 3000000);
	CHECK(b.r >= 200 && !blue(&b));		/* red: on the CPU too */
	CHECK(!blue(&m));			/* first drawn off-CPU (func_a), then on */
	CHECK(blue(&a) && blue(&k) && blue(&mark) && blue(&mark2));
	free(svg);
}

int main(void)
{
	setup();
	RUN(widths_proportional);
	RUN(siblings_alphabetical_and_merged);
	RUN(self_time_then_children);
	RUN(elision_below_min_width);
	RUN(many_stacks_stay_small);
	RUN(xml_escaping);
	RUN(inverted_and_titles);
	RUN(delimiter_annotations_missed);
	RUN(colours_by_kind_and_name);
	RUN(self_contained);
	RUN(empty_and_errors);
	RUN(unnamed_labels_and_places);
	RUN(unnamed_module_escaped);
	RUN(short_names_merge);
	RUN(off_cpu_title_unit_colour);
	RUN(wall_title_marker_colour);
	if (getenv("PROFILE_TEST_OUTPUT"))
		RUN(browser_fixture);
	return unit_summary();
}
