// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The root-first view of a record's trace that every writer reads. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace.h"
#include "lib/htab.h"
#include "symbols/demangle.h"

static const struct frame missed_frames[NR_PARTS] = {
	[PART_KERNEL] = { .name = "[Missed Kernel Stack]", .kind = FRAME_KERNEL,
			  .flags = FRAME_MISSED },
	[PART_USER] = { .name = "[Missed User Stack]", .kind = FRAME_NATIVE,
			.flags = FRAME_MISSED },
};

static const struct frame delimiter = { .name = "-", .kind = FRAME_NONE,
					.flags = FRAME_DELIMITER };

const struct frame frame__off_cpu = { .name = "[off-cpu]", .kind = FRAME_NONE };

static void add_seg(struct trace_iter *it, const struct frame *const *frames,
		    const struct frame *marker, __u32 len)
{
	if (!len)
		return;
	it->segs[it->nr_segs++] = (struct trace_seg){ frames, marker, len };
	it->len += len;
}

/*
 * Leaf kernel frames of an off-CPU stack that belong to the tracepoint
 * the switch-in runs from, not to the task: the kernel calls the program
 * through __traceiter_sched_exit_tp() only while another program is
 * attached there too, so that the same block would show two stacks.
 */
static __u32 tracepoint_frames(const struct record *r, const struct stack *st)
{
	__u32 n = 0;

	if (r->what != COUNT_OFF_CPU)
		return 0;
	while (n < st->nr && st->frames[n]->name &&
	       !strncmp(st->frames[n]->name, "__traceiter_", strlen("__traceiter_")))
		n++;
	return n;
}

/*
 * Parts from the root end (user) to the leaf end (kernel); a delimiter
 * between two shown parts when both were read (bcc's rule for -d); the
 * off-CPU mark last, above the kernel's frames.
 */
void trace_iter__init(struct trace_iter *it, const struct record *r,
		      const struct trace_view *v)
{
	const struct part *prev = NULL;

	it->nr_segs = 0;
	it->len = 0;
	for (int i = NR_PARTS - 1; i >= 0; i--) {
		const struct part *p = &r->parts[i];

		if (!v->parts[i])
			continue;
		if (v->delimited && prev && prev->state == PART_OK && p->state == PART_OK)
			add_seg(it, NULL, &delimiter, 1);
		if (p->state == PART_MISSED)
			add_seg(it, NULL, &missed_frames[i], 1);
		else if (p->state == PART_OK && i == PART_KERNEL)
			add_seg(it, p->stack->frames + tracepoint_frames(r, p->stack), NULL,
				p->stack->nr - tracepoint_frames(r, p->stack));
		else if (p->state == PART_OK)
			add_seg(it, p->stack->frames, NULL, p->stack->nr);
		prev = p;
	}
	if (v->mark_off_cpu && r->what == COUNT_OFF_CPU)
		add_seg(it, NULL, &frame__off_cpu, 1);
}

const struct frame *trace_iter__frame(const struct trace_iter *it, __u32 i)
{
	for (__u32 s = 0; s < it->nr_segs; s++) {
		const struct trace_seg *seg = &it->segs[s];

		if (i < seg->len)
			return seg->frames ? seg->frames[seg->len - 1 - i] : seg->marker;
		i -= seg->len;
	}
	return NULL;
}

bool trace__is_bracketed(const char *s)
{
	size_t n = strlen(s);

	return n >= 2 && s[0] == '[' && s[n - 1] == ']';
}

/* "[" base "]" in buf, base cut at a character boundary to fit. */
static const char *bracket(const char *base, char *buf, size_t size)
{
	size_t len = strlen(base);

	if (size < 4)
		return "[unknown]";
	if (len > size - 3) {
		len = size - 3;
		while (len && ((unsigned char)base[len] & 0xc0) == 0x80)
			len--;
	}
	buf[0] = '[';
	memcpy(buf + 1, base, len);
	buf[len + 1] = ']';
	buf[len + 2] = '\0';
	return buf;
}

const char *frame__label(const struct frame *f, char *buf, size_t size)
{
	const char *base;

	if (f->name)
		return f->name;
	if (f->kind == FRAME_INTERP)
		return "[unknown]";
	if (!f->module || !*f->module)
		return f->kind == FRAME_KERNEL ? "[kernel]" : "[unknown]";
	if (trace__is_bracketed(f->module))
		return f->module;
	base = strrchr(f->module, '/');
	base = base ? base + 1 : f->module;
	return *base ? bracket(base, buf, size) : "[unknown]";
}

const char *frame__label_kept(const struct frame *f, struct strpool *pool)
{
	char buf[FRAME_LABEL_MAX];
	const char *label = frame__label(f, buf, sizeof(buf));

	return label == buf ? strpool__intern(pool, buf, strlen(buf)) : label;
}

__u64 records__total(const struct records *rs)
{
	__u64 n = 0;

	for (size_t i = 0; i < rs->nr; i++)
		n += rs->recs[i].count;
	return n;
}

void frame_names__init(struct frame_names *fn, bool short_names)
{
	memset(fn, 0, sizeof(*fn));
	fn->short_names = short_names;
}

void frame_names__free(struct frame_names *fn)
{
	htab__free(&fn->cache);
	strpool__free(&fn->pool);
}

/* name's short form, kept in fn; name itself when it has none. */
static const char *short_name(struct frame_names *fn, const char *name)
{
	__u64 key = (__u64)(uintptr_t)name;
	const char *s = name;
	struct hent *e;
	size_t size, n;
	char *buf;

	e = htab__slot(&fn->cache, key, 0, NULL, NULL);
	if (!e)
		return name;
	if (e->val)
		return e->val;
	size = strlen(name) + 1;
	buf = malloc(size);
	if (!buf)
		return name;
	n = demangle__shorten(name, buf, size);
	if (n)
		s = strpool__intern(&fn->pool, buf, n);
	free(buf);
	if (!s)
		return name;
	htab__fill(&fn->cache, e, key, 0, (void *)s);
	return s;
}

static const char *plain_name(const struct frame *f, struct frame_names *fn)
{
	if (!f->name || !fn || !fn->short_names || !(f->flags & FRAME_DEMANGLED) ||
	    frame__is_marker(f))
		return f->name;
	return short_name(fn, f->name);
}

/* "NAME (FILE:LINE)", FILE's base name, kept in fn once per frame. */
static const char *with_line(const struct frame *f, struct frame_names *fn,
			     const char *name)
{
	__u64 key = (__u64)(uintptr_t)f;
	const char *base, *s;
	struct hent *e;
	char buf[1024];
	int n;

	e = htab__slot(&fn->cache, key, 1, NULL, NULL);
	if (!e)
		return name;
	if (e->val)
		return e->val;
	base = strrchr(f->file, '/');
	base = base ? base + 1 : f->file;
	n = snprintf(buf, sizeof(buf), "%s (%s:%u)", name, base, f->line);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return name;
	s = strpool__intern(&fn->pool, buf, (size_t)n);
	if (!s)
		return name;
	htab__fill(&fn->cache, e, key, 1, (void *)s);
	return s;
}

const char *frame__name(const struct frame *f, struct frame_names *fn)
{
	const char *name = plain_name(f, fn);

	if (!name || !fn || !fn->lines || f->kind != FRAME_NATIVE || !f->file ||
	    !f->line || frame__is_marker(f))
		return name;
	return with_line(f, fn, name);
}
