/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --top on a terminal: a live perf-top-style view.  Each interval's counts
 * join a table whose older weights decay, drawn to fit the terminal: the
 * header always on screen, as many rows as fit below, no line wider than
 * the screen.  Keys come from stdin when it is the controlling terminal.
 */
#ifndef TOP_H
#define TOP_H

#include <stdbool.h>
#include <stddef.h>

struct records;
struct output_opts;
struct strbuf;

struct top;

/* What a key or a poll asks of the caller. */
enum top_action {
	TOP_NONE,
	TOP_REDRAW,	/* the view changed */
	TOP_QUIT,	/* end the run, as Ctrl-C does */
};

/*
 * A view of the rows counted as oo says, at most limit rows (0: as many
 * as fit).  With screen, take the terminal: the alternate screen, the
 * cursor hidden, stdin's keys unechoed and unbuffered (when stdin is the
 * controlling terminal and we are in its foreground), and SIGWINCH; the
 * first frame is drawn at once.  Without, only the table is kept (tests).
 * NULL with errno set when out of memory.
 */
struct top *top__new(const struct output_opts *oo, size_t limit, bool screen);

/*
 * One interval of seconds: decay what the table holds, add p, and draw.
 * 0 or -errno (from writing: -EPIPE, -EIO; or -ENOMEM).
 */
int top__update(struct top *t, const struct records *p, double seconds);

/*
 * Handle what came since the last call: a resize (redraw from the kept
 * table) and the keys typed.  Cheap; call it every 100 ms or so.
 */
enum top_action top__poll(struct top *t);

/* One key: q quits, z zeroes the table, c shows or hides rows without self time. */
enum top_action top__key(struct top *t, int c);

/*
 * The frame for a width x height screen into sb: lines joined by "\r\n",
 * none after the last, none wider than width, at most height of them.
 */
void top__render(const struct top *t, size_t width, size_t height, struct strbuf *sb);

/* Column widths of the rows for a screen width (pure; for the tests). */
struct top_layout {
	size_t comm, module, symbol;
};
void top__layout(size_t width, size_t comm_cols, size_t module_cols, struct top_layout *l);

/* Give the terminal back as it was, and free.  NULL is fine. */
void top__free(struct top *t);

#endif /* TOP_H */
