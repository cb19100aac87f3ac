// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/perf_event.h>

#include "writer.h"
#include "report.h"
#include "svg.h"
#include "pprof.h"
#include "trace.h"
#include "log.h"

/* bcc's header, word for word. */
static void print_header(FILE *out, const struct options *o)
{
	const char *stack = o->user_only ? "user" :
			    o->kernel_only ? "kernel" : "user + kernel";

	/* Name the event only when it is not bcc's one. */
	fprintf(out, "Sampling ");
	if (!event__is_default(&o->event))
		fprintf(out, "%s ", o->event.name);
	if (o->freq)
		fprintf(out, "at %llu Hertz of ", (unsigned long long)o->freq);
	else
		fprintf(out, "at every %llu events of ", (unsigned long long)o->period);
	if (o->pids)
		fprintf(out, "PID %s", o->pids_arg);
	else if (o->tids)
		fprintf(out, "TID %s", o->tids_arg);
	else
		fprintf(out, "all threads");
	fprintf(out, " by %s stack", stack);
	if (o->cpu >= 0)
		fprintf(out, " on CPU#%d", o->cpu);
	if (o->duration)
		fprintf(out, " for %llu secs.\n", (unsigned long long)o->duration);
	else
		fprintf(out, "... Hit Ctrl-C to end.\n");
}

static int report_error(const char *what, int err)
{
	if (err != -EPIPE)
		pr_err("cannot write %s: %s", what, strerror(-err));
	return err;
}

static int open_error(const char *path, int err)
{
	pr_err("cannot open '%s' for writing: %s; check the -o path", path,
	       strerror(-err));
	return err;
}

static int open_file(struct writer *w, const char *path)
{
	int err = outfile__open(&w->out, path);

	if (err)
		return open_error(path, err);
	w->f = w->out.f;
	if (w->o->format == FMT_PLAIN)
		print_header(w->f, w->o);
	return 0;
}

/* Expand the -o pattern for the time now, or -EINVAL (reported). */
static int expand_pattern(const struct writer *w, const struct timespec *t,
			  char *path, size_t sz)
{
	struct tm tm;

	localtime_r(&t->tv_sec, &tm);
	if (!strftime(path, sz, w->o->output, &tm)) {
		pr_err("-o pattern '%s' expands to nothing", w->o->output);
		return -EINVAL;
	}
	return 0;
}

/*
 * A bad -o directory should stop the run before it starts, not at the
 * first interval: make (and remove) a temporary file where the first one
 * will go.  No file named by the pattern is touched.
 */
static int check_pattern(struct writer *w)
{
	struct timespec now;
	char path[4096];
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	err = expand_pattern(w, &now, path, sizeof(path));
	if (err)
		return err;
	err = outfile__probe(path);
	return err ? open_error(path, err) : 0;
}

int writer__open(struct writer *w, const struct options *o, struct usyms *us)
{
	memset(w, 0, sizeof(*w));
	w->out.dirfd = -1;
	w->o = o;
	w->us = us;
	w->oo = (struct output_opts){
		.view = {
			.parts = { [PART_KERNEL] = !o->user_only, [PART_USER] = !o->kernel_only },
			.delimited = o->delimited,
		},
		.folded = o->format == FMT_FOLDED,
		.annotations = o->annotations, .verbose = o->verbose > 0,
		.per_cpu = o->per_cpu, .per_thread = o->per_thread,
		.module_labels = o->unknown_module,
		.short_names = o->names_given ? o->short_names : o->format == FMT_SVG || o->top,
	};
	w->per_interval = o->output && o->interval && strchr(o->output, '%');
	if (w->per_interval)
		return check_pattern(w);
	w->screen = o->top && !o->output && isatty(STDOUT_FILENO);
	if (w->screen) {
		/* The alternate screen, cursor hidden; writer__close() undoes it. */
		w->f = stdout;
		fputs("\033[?1049h\033[?25l", stdout);
		fflush(stdout);
		return 0;
	}
	if (o->output)
		return open_file(w, o->output);
	w->f = stdout;
	if (o->format == FMT_PLAIN) {
		print_header(stdout, o);
		fflush(stdout);
	}
	return 0;
}

static void rfc3339(char *buf, size_t sz, const struct timespec *t)
{
	struct tm tm;

	localtime_r(&t->tv_sec, &tm);
	strftime(buf, sz, "%Y-%m-%dT%H:%M:%S%z", &tm);
	/* %z gives +0000; RFC 3339 wants +00:00. */
	size_t n = strlen(buf);
	if (n >= 5 && sz > n + 1) {
		memmove(buf + n - 1, buf + n - 2, 3);
		buf[n - 2] = ':';
	}
}

static int interval_marker(struct writer *w, unsigned int n,
			   const struct timespec *start, const struct timespec *end)
{
	char a[40], b[40];

	if (!w->o->interval || w->per_interval || w->screen)
		return 0;
	if (w->o->format != FMT_PLAIN && w->o->format != FMT_FOLDED &&
	    w->o->format != FMT_REPORT)
		return 0;
	rfc3339(a, sizeof(a), start);
	rfc3339(b, sizeof(b), end);
	if (fprintf(w->f, "# interval %u start=%s end=%s\n", n, a, b) < 0)
		return -errno;
	return 0;
}

/* One --top frame: home, clear, a title line, as many rows as fit. */
static int draw_screen(struct writer *w, const struct records *p)
{
	__u64 all = records__total(p);
	struct winsize ws;
	size_t rows = 0;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 5)
		rows = ws.ws_row - 5;
	if (w->o->limit && (!rows || w->o->limit < rows))
		rows = w->o->limit;
	fprintf(w->f, "\033[H\033[2Jprofile --top: %llu samples in the last %llu s; Ctrl-C to quit\n",
		(unsigned long long)all, (unsigned long long)w->o->interval);
	return report__write(w->f, p, &w->oo, rows);
}

static __u64 ts_ns(const struct timespec *t)
{
	return (__u64)t->tv_sec * 1000000000ULL + t->tv_nsec;
}

/* "profile -F 99 -p 123 | 10 s | 99 Hz | 12345 samples" */
static int write_svg(struct writer *w, const struct records *p,
		     const struct timespec *start, const struct timespec *end)
{
	const struct options *o = w->o;
	struct svg_opts so = { .title = o->title, .inverted = o->inverted,
			       .min_width = o->min_width };
	char sub[512], rate[64];

	if (o->freq)
		snprintf(rate, sizeof(rate), "%llu Hz", (unsigned long long)o->freq);
	else
		snprintf(rate, sizeof(rate), "every %llu events", (unsigned long long)o->period);
	snprintf(sub, sizeof(sub), "%s | %.1f s | %s%s%s | %llu samples",
		 o->cmdline ? o->cmdline : "profile",
		 (ts_ns(end) - ts_ns(start)) / 1e9, event__is_default(&o->event) ? "" : o->event.name,
		 event__is_default(&o->event) ? "" : " ", rate,
		 (unsigned long long)records__total(p));
	so.subtitle = sub;
	return svg__write(w->f, p, &w->oo, &so);
}

/*
 * Time events (cpu-clock, task-clock) weigh in nanoseconds; every other
 * event in its own count, one period per sample.
 */
static int write_pprof(struct writer *w, const struct records *p,
		       const struct timespec *start, const struct timespec *end)
{
	const struct options *o = w->o;
	bool clock = o->event.type == PERF_TYPE_SOFTWARE &&
		     (o->event.config == PERF_COUNT_SW_CPU_CLOCK ||
		      o->event.config == PERF_COUNT_SW_TASK_CLOCK);
	struct pprof_meta m = {
		.time_nanos = ts_ns(start),
		.duration_nanos = ts_ns(end) - ts_ns(start),
		.period = o->freq ? (clock ? 1000000000ULL / o->freq : 1) : o->period,
		.period_type = clock ? NULL : o->event.name,
		.period_unit = clock ? NULL : "count",
	};

	return pprof__write(w->f, p, &w->oo, w->us, &m);
}

static int write_format(struct writer *w, const struct records *p,
			const struct timespec *start, const struct timespec *end)
{
	switch (w->o->format) {
	case FMT_PLAIN:
		if (fputc('\n', w->f) == EOF)
			return -errno;
		return output__write(w->f, p, &w->oo);
	case FMT_FOLDED:
		return output__write(w->f, p, &w->oo);
	case FMT_REPORT:
		if (w->screen)
			return draw_screen(w, p);
		return report__write(w->f, p, &w->oo, w->o->limit);
	case FMT_SVG:
		return write_svg(w, p, start, end);
	case FMT_PPROF:
		return write_pprof(w, p, start, end);
	default:
		pr_err("--format %s is not built in", format__name(w->o->format));
		return -ENOTSUP;
	}
}

int writer__write(struct writer *w, const struct records *p, unsigned int n,
		 const struct timespec *start, const struct timespec *end)
{
	char path[4096];
	int err;

	if (w->per_interval) {
		err = expand_pattern(w, start, path, sizeof(path));
		if (!err)
			err = open_file(w, path);
		if (err)
			return err;
	}
	err = interval_marker(w, n, start, end);
	if (!err)
		err = write_format(w, p, start, end);
	if (!err && fflush(w->f))
		err = -errno;
	if (err)
		return err == -ENOTSUP ? err : report_error("the output", err);
	if (w->per_interval)
		return writer__close(w);
	return 0;
}

bool writer__wants_final(const struct writer *w)
{
	return !w->screen;
}

static void restore_screen(struct writer *w)
{
	if (!w->screen)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	w->screen = false;
}

int writer__close(struct writer *w)
{
	int err = 0;

	restore_screen(w);
	if (!w->f)
		return 0;
	if (w->f == stdout)
		err = fflush(stdout) ? -errno : 0;
	else
		err = outfile__commit(&w->out);
	w->f = NULL;
	return err ? report_error("the output", err) : 0;
}

void writer__abort(struct writer *w)
{
	restore_screen(w);
	if (w->f == stdout)
		fflush(stdout);
	outfile__abort(&w->out);
	w->f = NULL;
}
