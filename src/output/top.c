// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "output/top.h"
#include "output/report.h"
#include "output/output.h"
#include "lib/strbuf.h"
#include "trace/trace.h"

/*
 * At each refresh every weight is multiplied by 7/8, as perf top does.  A
 * steady function's weight then tends to 8 intervals' worth of samples:
 * at 499 Hz on two busy CPUs, some 8000, so that the percentages hold
 * still to a few tenths from one refresh to the next; yet a function that
 * stops running halves in 5 refreshes and is gone from the top in a few
 * more, as its weight falls below what is still running.
 */
#define TOP_DECAY	0.875

/*
 * An entry both of whose weights fell below 1/20 of a sample (one sample,
 * about 22 refreshes later) is dropped: on a host where short-lived
 * processes come and go, the table holds what ran in the last half a
 * minute or so, not everything ever seen.
 */
#define TOP_FLOOR	0.05

/* Rows whose self share would print as 0.00% are hidden unless asked for. */
#define TOP_MIN_PCT	0.01

/* "  12.34%   56.78%  ": the two percentages and the gaps around them. */
#define PREFIX_COLS	20
#define GAP_COLS	2
#define COMM_MIN	7	/* "Command" */
#define COMM_MAX	16
#define MODULE_MIN	13	/* "Shared Object" */
#define MODULE_MAX	24
#define SYMBOL_MIN	24	/* before the other columns give up room */
#define HEADER_LINES	3

struct top {
	struct report_table table;
	const struct output_opts *oo;
	size_t limit;		/* --limit: rows at most, 0 for as many as fit */
	bool screen;		/* we own the terminal */
	bool show_all;		/* 'c': rows without self time too */
	int key_fd;		/* stdin when keys are read from it, else -1 */
	struct termios saved;	/* stdin's modes before, when key_fd >= 0 */
	struct sigaction old_winch;
	double window;		/* seconds, decayed as the weights are */
	__u64 last;		/* samples (or ns: output.h's weights) in the last interval */
	double last_seconds;
	__u64 all;		/* likewise since the start or the last 'z' */
	__u64 lost;		/* stacks lost, likewise */
};

/* Set by SIGWINCH, read by top__poll(). */
static volatile sig_atomic_t resized;

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

static size_t clamp(size_t v, size_t lo, size_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void top__layout(size_t width, size_t comm_cols, size_t module_cols, struct top_layout *l)
{
	size_t fixed, short_by, give;

	l->comm = clamp(comm_cols, COMM_MIN, COMM_MAX);
	l->module = clamp(module_cols, MODULE_MIN, MODULE_MAX);
	fixed = PREFIX_COLS + l->comm + GAP_COLS + l->module + GAP_COLS;
	/* A narrow screen: the Shared Object gives up room first, then the Command. */
	short_by = fixed + SYMBOL_MIN > width ? fixed + SYMBOL_MIN - width : 0;
	give = min_sz(short_by, l->module - MODULE_MIN);
	l->module -= give;
	short_by -= give;
	give = min_sz(short_by, l->comm - COMM_MIN);
	l->comm -= give;
	fixed = PREFIX_COLS + l->comm + GAP_COLS + l->module + GAP_COLS;
	l->symbol = width > fixed ? width - fixed : 0;
}

static double pct(double part, double all)
{
	return all > 0 ? 100.0 * part / all : 0.0;
}

static bool shown(const struct top *t, const struct report_entry *e)
{
	return t->show_all || pct(e->self, t->table.all) >= TOP_MIN_PCT;
}

/* Lines are joined by "\r\n": none after the last, which would scroll. */
static void end_line(struct strbuf *sb, size_t *lines)
{
	if (*lines)
		strbuf__puts(sb, "\r\n");
	(*lines)++;
}

/* A line of text cut to the width of the screen. */
static void put_line(struct strbuf *sb, size_t *lines, const char *text, size_t width)
{
	end_line(sb, lines);
	report__cell(sb, text, width, false);
}

/* The title line, then, on a screen of two lines or more, the keys. */
/*
 * "profile --top: 998 samples/s ..."; off-CPU and wall-clock time in
 * milliseconds: "profile --top: off-CPU 1999 ms/s ...; last 1.0 s: 2001 ms".
 */
static int title(const struct top *t, char *line, size_t sz, const char *rate)
{
	const double ms = 1e6;

	if (!output__timed(t->oo))
		return snprintf(line, sz, "profile --top: %s samples/s (~%.0f s decayed); "
				"last %.1f s: %llu; in all: %llu",
				rate, t->window, t->last_seconds, (unsigned long long)t->last,
				(unsigned long long)t->all);
	return snprintf(line, sz, "profile --top: %s %s ms/s (~%.0f s decayed); "
			"last %.1f s: %.0f ms; in all: %.0f ms",
			t->oo->kind == PROFILE_OFF_CPU ? "off-CPU" : "wall-clock", rate,
			t->window, t->last_seconds, t->last / ms, t->all / ms);
}

static void header(const struct top *t, size_t width, size_t height, struct strbuf *sb,
		   size_t *lines)
{
	char line[512], rate[32] = "-";
	double per_ms = output__timed(t->oo) ? 1e6 : 1;
	int n;

	if (t->window > 0)
		snprintf(rate, sizeof(rate), "%.0f", t->table.all / t->window / per_ms);
	/* The rate is of the decayed weights over the decayed time: steady. */
	n = title(t, line, sizeof(line), rate);
	if (t->lost && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, "; stacks lost: %llu",
			 (unsigned long long)t->lost);
	put_line(sb, lines, line, width);
	if (height < 2)
		return;
	snprintf(line, sizeof(line), "keys: q quit, z zero, c rows without self time (%s)",
		 t->show_all ? "shown" : "hidden");
	put_line(sb, lines, line, width);
}

static void columns(const struct top_layout *l, struct strbuf *sb)
{
	strbuf__puts(sb, "    Self  Children  ");
	report__cell(sb, "Command", l->comm, true);
	strbuf__puts(sb, "  ");
	report__cell(sb, "Shared Object", l->module, true);
	strbuf__puts(sb, "  ");
	report__cell(sb, "Symbol", l->symbol, false);
}

static void row(const struct top *t, const struct report_entry *e,
		const struct top_layout *l, struct strbuf *sb)
{
	char num[32];

	snprintf(num, sizeof(num), "%7.2f%% %8.2f%%  ", pct(e->self, t->table.all),
		 pct(e->total, t->table.all));
	strbuf__puts(sb, num);
	report__cell(sb, e->comm, l->comm, true);
	strbuf__puts(sb, "  ");
	report__cell(sb, e->module, l->module, true);
	strbuf__puts(sb, "  ");
	report__cell(sb, e->symbol, l->symbol, false);
}

/* A line built in pieces, then cut to the screen: never wider than it. */
static void put_built(struct strbuf *sb, size_t *lines, struct strbuf *tmp, size_t width)
{
	put_line(sb, lines, tmp->err ? "" : tmp->buf ? tmp->buf : "", width);
	tmp->len = 0;
	if (tmp->buf)
		tmp->buf[0] = '\0';
}

/* The rows shown: the first of the sorted ones that pass shown(), that fit. */
static size_t pick_rows(const struct top *t, struct report_entry **sorted,
			size_t room, struct report_entry **rows)
{
	size_t n = 0;

	for (size_t i = 0; i < t->table.nr && n < room; i++)
		if (shown(t, sorted[i]))
			rows[n++] = sorted[i];
	return n;
}

void top__render(const struct top *t, size_t width, size_t height, struct strbuf *sb)
{
	struct report_entry **sorted = NULL, **rows = NULL;
	size_t lines = 0, room, nr = 0, comm_cols = 0, module_cols = 0;
	struct strbuf tmp = {};
	struct top_layout l;

	if (!height)
		return;
	header(t, width, height, sb, &lines);
	room = height > HEADER_LINES ? height - HEADER_LINES : 0;
	if (t->limit && t->limit < room)
		room = t->limit;
	if (room && !report_table__sorted(&t->table, &sorted) && sorted) {
		rows = calloc(room, sizeof(*rows));
		if (rows)
			nr = pick_rows(t, sorted, room, rows);
	}
	for (size_t i = 0; i < nr; i++) {
		comm_cols = max_sz(comm_cols, report__cols(rows[i]->comm));
		module_cols = max_sz(module_cols, report__cols(rows[i]->module));
	}
	top__layout(width, comm_cols, module_cols, &l);
	if (height > 2) {
		columns(&l, &tmp);
		put_built(sb, &lines, &tmp, width);
	}
	for (size_t i = 0; i < nr; i++) {
		row(t, rows[i], &l, &tmp);
		put_built(sb, &lines, &tmp, width);
	}
	strbuf__free(&tmp);
	free(rows);
	free(sorted);
}

/* Nothing before the frame but the cursor home and a clear screen. */
static int draw(struct top *t)
{
	struct strbuf sb = {};
	struct winsize ws;
	size_t width = 80, height = 24;
	int err = 0;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col && ws.ws_row) {
		width = ws.ws_col;
		height = ws.ws_row;
	}
	strbuf__puts(&sb, "\033[H\033[2J");
	top__render(t, width, height, &sb);
	if (sb.err)
		err = sb.err;
	else if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len || fflush(stdout))
		err = -errno;
	strbuf__free(&sb);
	return err;
}

/* Keys one at a time, unechoed, without waiting for them. */
static void take_keys(struct top *t)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != getpgrp())
		return;		/* not a terminal, or not ours: no keys */
	if (tcgetattr(STDIN_FILENO, &t->saved))
		return;
	raw = t->saved;
	/* ISIG stays: Ctrl-C still ends the run through its signal. */
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw))
		return;
	t->key_fd = STDIN_FILENO;
}

static void take_screen(struct top *t)
{
	/*
	 * SA_RESTART: a resize in the middle of a write to the screen or a
	 * read of a file must not fail it.  The run's sleep (epoll_wait(),
	 * clock_nanosleep()) is never restarted: a resize still wakes it.
	 */
	struct sigaction sa = { .sa_handler = on_winch, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	resized = 0;
	sigaction(SIGWINCH, &sa, &t->old_winch);
	take_keys(t);
	/* The alternate screen, cursor hidden; top__free() undoes it. */
	fputs("\033[?1049h\033[?25l", stdout);
	draw(t);
}

struct top *top__new(const struct output_opts *oo, size_t limit, bool screen)
{
	struct top *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->oo = oo;
	t->limit = limit;
	t->key_fd = -1;
	t->screen = screen;
	if (screen)
		take_screen(t);
	return t;
}

static void zero(struct top *t)
{
	report_table__clear(&t->table);
	t->window = 0;
	t->all = 0;
	t->lost = 0;
}

/*
 * What one sample weighs: the floor is a share of it.  Off-CPU time has
 * no sample: a microsecond, the shortest block counted by default.
 */
static double sample_weight(const struct top *t)
{
	if (t->oo->kind == PROFILE_WALL && t->oo->period_ns)
		return t->oo->period_ns;
	return output__timed(t->oo) ? 1000 : 1;
}

int top__update(struct top *t, const struct records *p, double seconds)
{
	__u64 samples = output__total(p, t->oo);
	int err;

	report_table__scale(&t->table, TOP_DECAY, TOP_FLOOR * sample_weight(t));
	t->window = t->window * TOP_DECAY + seconds;
	err = report_table__add(&t->table, p, t->oo);
	t->last = samples;
	t->last_seconds = seconds;
	t->all += samples;
	t->lost += p->missed_stacks;
	if (!err && t->screen)
		err = draw(t);
	return err;
}

enum top_action top__key(struct top *t, int c)
{
	switch (c) {
	case 'q':
	case 'Q':
		return TOP_QUIT;
	case 'z':
		zero(t);
		return TOP_REDRAW;
	case 'c':
		t->show_all = !t->show_all;
		return TOP_REDRAW;
	default:
		return TOP_NONE;
	}
}

enum top_action top__poll(struct top *t)
{
	enum top_action todo = TOP_NONE;
	char keys[32];
	ssize_t n = 0;

	if (!t || !t->screen)
		return TOP_NONE;
	if (resized) {
		resized = 0;
		todo = TOP_REDRAW;
	}
	if (t->key_fd >= 0)
		n = read(t->key_fd, keys, sizeof(keys));
	for (ssize_t i = 0; i < n; i++) {
		enum top_action a = top__key(t, (unsigned char)keys[i]);

		if (a == TOP_QUIT)
			return a;
		if (a == TOP_REDRAW)
			todo = a;
	}
	/* A failed write shows again, and is reported, at the next interval. */
	if (todo == TOP_REDRAW)
		draw(t);
	return todo;
}

void top__free(struct top *t)
{
	if (!t)
		return;
	if (t->screen) {
		fputs("\033[?25h\033[?1049l", stdout);
		fflush(stdout);
		if (t->key_fd >= 0)
			tcsetattr(t->key_fd, TCSANOW, &t->saved);
		sigaction(SIGWINCH, &t->old_winch, NULL);
	}
	report_table__free(&t->table);
	free(t);
}
