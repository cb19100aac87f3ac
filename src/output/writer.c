// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/perf_event.h>

#include "output/writer.h"
#include "output/report.h"
#include "output/top.h"
#include "output/svg.h"
#include "output/pprof.h"
#include "lib/pb.h"
#include "output/otlp.h"
#include "export/otlp_config.h"
#include "trace/trace.h"
#include "lib/log.h"

/* "Sampling at 49 Hertz of ": what is sampled, and how often. */
static void print_sampling(FILE *out, const struct output_config *o)
{
	/* Name the event only when it is not bcc's one. */
	fprintf(out, "Sampling ");
	if (!o->event_default)
		fprintf(out, "%s ", o->event);
	/* Any other event than a clock: the kernel tunes the period to -F. */
	if (o->freq)
		fprintf(out, "at %llu Hertz%s ", (unsigned long long)o->freq,
			o->event_clock ? "" : " (frequency mode)");
	else
		fprintf(out, "at every %llu events ", (unsigned long long)o->period);
	if (o->kind == PROFILE_WALL)
		fprintf(out, "and tracing off-CPU time, both in us, ");
	fprintf(out, "of ");
}

/* bcc's header, word for word: profile's, or offcputime's for --off-cpu. */
static void print_header(FILE *out, const struct output_config *o)
{
	const char *stack = !o->kernel ? "user" :
			    !o->user ? "kernel" : "user + kernel";

	if (o->kind == PROFILE_OFF_CPU)
		fprintf(out, "Tracing off-CPU time (us) of ");
	else
		print_sampling(out, o);
	if (o->pids)
		fprintf(out, "PID %s", o->pids);
	else if (o->tids)
		fprintf(out, "TID %s", o->tids);
	else if (o->cmd)
		fprintf(out, "'%s' and its children", o->cmd);
	else
		fprintf(out, "all threads");
	fprintf(out, " by %s stack", stack);
	if (o->cpu >= 0)
		fprintf(out, " on CPU#%d", o->cpu);
	if (o->duration)
		fprintf(out, " for %llu secs.\n", (unsigned long long)o->duration);
	else if (o->cmd)
		fprintf(out, " until it exits.\n");
	else
		fprintf(out, "... Hit Ctrl-C to end.\n");
}

static int report_error(const struct writer *w, int err)
{
	if (!err || err == -EPIPE)
		return err;
	if (w->format == FMT_OTLP) {
		pr_err("otlp: cannot make the request for %s: %s", w->cfg->otlp->shown_url,
		       strerror(-err));
		return err;
	}
	if (w->path)
		pr_err("cannot write '%s': %s", w->path, strerror(-err));
	else
		pr_err("cannot write the output: %s", strerror(-err));
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
	if (w->started && w->format == FMT_PLAIN)
		print_header(w->f, w->cfg);
	return 0;
}

/* Expand the -o pattern for the time now, or -EINVAL (reported). */
static int expand_pattern(const struct writer *w, const struct timespec *t,
			  char *path, size_t sz)
{
	struct tm tm;

	localtime_r(&t->tv_sec, &tm);
	if (!strftime(path, sz, w->path, &tm)) {
		pr_err("-o pattern '%s' expands to nothing", w->path);
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

/* Short names where there is little room: the SVG's boxes, --top's lines. */
static bool short_names(const struct output_config *o, enum output_format format)
{
	if (o->names != NAMES_BY_FORMAT)
		return o->names == NAMES_SHORT;
	return format == FMT_SVG || o->top;
}

/* --otlp: a sender, whose thread starts now; nothing is written locally. */
static int open_otlp(struct writer *w)
{
	const struct otlp_config *c = w->cfg->otlp;

	if (!c) {
		pr_err("--otlp: no collector configured");
		return -EINVAL;
	}
	w->otlp = otlp_sender__new(c);
	if (!w->otlp) {
		int err = -errno;

		/* ELIBACC: the sender named the library to install. */
		if (err != -ELIBACC)
			pr_err("otlp: cannot start sending to %s: %s", c->shown_url,
			       strerror(-err));
		return err;
	}
	return 0;
}

int writer__open(struct writer *w, const struct output_config *o,
		 const struct output_spec *spec)
{
	memset(w, 0, sizeof(*w));
	w->out.dirfd = -1;
	w->cfg = o;
	w->path = spec->path;
	w->format = spec->format;
	w->oo = (struct output_opts){
		.view = {
			.parts = { [PART_KERNEL] = o->kernel, [PART_USER] = o->user },
			.delimited = o->delimited,
			.mark_off_cpu = o->kind == PROFILE_WALL,
		},
		.folded = w->format == FMT_FOLDED,
		.annotations = o->annotations, .verbose = o->verbose,
		.per_cpu = o->per_cpu, .per_thread = o->per_thread,
		.module_labels = o->module_labels,
		.short_names = short_names(o, w->format),
		.lines = o->lines,
		.kind = o->kind, .period_ns = o->period_ns,
	};
	if (w->format == FMT_OTLP)
		return open_otlp(w);
	w->per_interval = w->path && o->interval && strchr(w->path, '%');
	if (w->per_interval)
		return check_pattern(w);
	if (o->top && !w->path && isatty(STDOUT_FILENO)) {
		/* The live view takes the terminal; writer__close() gives it back. */
		w->f = stdout;
		w->top = top__new(&w->oo, o->limit, true);
		if (!w->top) {
			pr_err("out of memory");
			return -ENOMEM;
		}
		return 0;
	}
	if (w->path)
		return open_file(w, w->path);
	w->f = stdout;
	return 0;
}

/*
 * The header says what is being sampled: only once it is (a load or
 * event error comes first, alone).  Per-interval files get theirs as each
 * is opened.
 */
void writer__start(struct writer *w)
{
	w->started = true;
	if (w->format != FMT_PLAIN || w->top || !w->f)
		return;
	/* A command's output shares stdout: the header goes with the report. */
	if (w->f == stdout && w->cfg->cmd) {
		w->header_due = true;
		return;
	}
	print_header(w->f, w->cfg);
	if (w->f == stdout)
		fflush(stdout);
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

	if (!w->cfg->interval || w->per_interval || w->top)
		return 0;
	if (w->format != FMT_PLAIN && w->format != FMT_FOLDED &&
	    w->format != FMT_REPORT)
		return 0;
	rfc3339(a, sizeof(a), start);
	rfc3339(b, sizeof(b), end);
	if (fprintf(w->f, "# interval %u start=%s end=%s\n", n, a, b) < 0)
		return -errno;
	return 0;
}

static __u64 ts_ns(const struct timespec *t)
{
	return (__u64)t->tv_sec * 1000000000ULL + t->tv_nsec;
}

/*
 * "profile -F 99 -p 123 | 10 s | 99 Hz | 12345 samples"; an off-CPU or
 * wall-clock profile ends with its time instead, "| 1234567 us".
 */
static int write_svg(struct writer *w, const struct records *p,
		     const struct timespec *start, const struct timespec *end)
{
	const struct output_config *o = w->cfg;
	struct svg_opts so = { .title = o->title, .inverted = o->inverted,
			       .min_width = o->min_width };
	char sub[512], rate[64];

	if (o->freq)
		snprintf(rate, sizeof(rate), "%llu Hz", (unsigned long long)o->freq);
	else
		snprintf(rate, sizeof(rate), "every %llu events", (unsigned long long)o->period);
	if (o->kind == PROFILE_OFF_CPU)
		snprintf(rate, sizeof(rate), "off-CPU");
	snprintf(sub, sizeof(sub), "%s | %.1f s | %s%s%s | %llu %s",
		 o->cmdline ? o->cmdline : "profile",
		 (ts_ns(end) - ts_ns(start)) / 1e9,
		 o->event_default || o->kind == PROFILE_OFF_CPU ? "" : o->event,
		 o->event_default || o->kind == PROFILE_OFF_CPU ? "" : " ", rate,
		 (unsigned long long)output__shown(&w->oo, output__total(p, &w->oo)),
		 output__timed(&w->oo) ? "us" : "samples");
	so.subtitle = sub;
	return svg__write(w->f, p, &w->oo, &so);
}

/* end - start; 0 when the wall clock was stepped back between them. */
static __u64 span_ns(const struct timespec *start, const struct timespec *end)
{
	__u64 s = ts_ns(start), e = ts_ns(end);

	return e > s ? e - s : 0;
}

/*
 * Time events (cpu-clock, task-clock) weigh in nanoseconds; every other
 * event in its own count, one period per sample: -c, or at -F the mean of
 * the periods the kernel chose.
 */
static int write_pprof(struct writer *w, const struct records *p,
		       const struct timespec *start, const struct timespec *end)
{
	const struct output_config *o = w->cfg;
	bool clock = o->event_clock;
	__u64 tuned = w->events_per_sample ? w->events_per_sample : 1;
	struct pprof_meta m = {
		.time_nanos = ts_ns(start),
		.duration_nanos = span_ns(start, end),
		.period = o->freq ? (clock ? 1000000000ULL / o->freq : tuned) : o->period,
		.period_type = clock ? NULL : o->event,
		.period_unit = clock ? NULL : "count",
	};

	/* Time: nanoseconds, each on-CPU sample of --wall standing for period_ns. */
	if (w->oo.kind == PROFILE_WALL)
		m.period = o->period_ns;
	else if (w->oo.kind == PROFILE_OFF_CPU)
		m.period = 1;
	return pprof__write(w->f, p, &w->oo, &m);
}

/*
 * One request per report, queued for the sender's thread.  Every resource
 * carries the run's attributes (host.name, service.name,
 * OTEL_RESOURCE_ATTRIBUTES) and its process's, read from /proc now.
 */
static int write_otlp(struct writer *w, const struct records *p, unsigned int n,
		      const struct timespec *start, const struct timespec *end)
{
	const struct output_config *o = w->cfg;
	struct otlp_proc_buf proc;
	struct otlp_meta m = {
		.time_nanos = ts_ns(start),
		.duration_nanos = span_ns(start, end),
		.period_ns = o->period_ns,
		.event = o->event,
		/* As pprof's: a clock in nanoseconds, any other event in its count. */
		.period_events = o->event_clock || w->oo.kind == PROFILE_WALL ? 0 :
				 o->freq ? (w->events_per_sample ? w->events_per_sample : 1) :
				 o->period ? o->period : 1,
		.resource = o->otlp->resource,
		.nr_resource = o->otlp->nr_resource,
		.process = otlp__proc_process,
		.process_ctx = &proc,
	};
	struct otlp_counts counts = {};
	struct otlp_stats st;
	struct pb body = {};
	int err;

	err = otlp__encode(&body, p, &w->oo, &m, &counts);
	if (!err)
		err = body.err;
	if (!err)
		err = otlp_sender__push(w->otlp, &body, &counts);
	pb__free(&body);
	if (err)
		return err;
	otlp_sender__stats(w->otlp, &st);
	pr_info("otlp: report %u: %llu samples queued; sent %llu profiles (%llu samples), "
		"dropped %llu (%llu samples), retries %llu, %zu waiting",
		n, (unsigned long long)counts.samples, (unsigned long long)st.sent,
		(unsigned long long)st.sent_samples, (unsigned long long)st.dropped,
		(unsigned long long)st.dropped_samples, (unsigned long long)st.retries,
		st.queued);
	return 0;
}

static int write_format(struct writer *w, const struct records *p,
			const struct timespec *start, const struct timespec *end)
{
	switch (w->format) {
	case FMT_PLAIN:
		if (fputc('\n', w->f) == EOF)
			return -errno;
		return output__write(w->f, p, &w->oo);
	case FMT_FOLDED:
		return output__write(w->f, p, &w->oo);
	case FMT_REPORT:
		if (w->top)
			return top__update(w->top, p, (ts_ns(end) - ts_ns(start)) / 1e9);
		return report__write(w->f, p, &w->oo, w->cfg->limit);
	case FMT_SVG:
		return write_svg(w, p, start, end);
	case FMT_PPROF:
		return write_pprof(w, p, start, end);
	default:
		/* Every format with a name is handled above. */
		pr_err("output format %d is not built in", (int)w->format);
		return -ENOTSUP;
	}
}

int writer__write(struct writer *w, const struct records *p, unsigned int n,
		 const struct timespec *start, const struct timespec *end)
{
	char path[4096];
	int err;

	/*
	 * Interval n is named by its time on the schedule, the first start
	 * plus n - 1 intervals, not by the clock when the report before it
	 * ended: two slow reports must not give two intervals one name.
	 */
	if (w->per_interval) {
		struct timespec named;

		if (n <= 1 || !w->first.tv_sec)
			w->first = *start;
		named = w->first;
		named.tv_sec += (time_t)(n - 1) * w->cfg->interval;
		err = expand_pattern(w, &named, path, sizeof(path));
		if (!err)
			err = open_file(w, path);
		if (err)
			return err;
	}
	if (w->header_due) {
		print_header(w->f, w->cfg);
		w->header_due = false;
	}
	if (w->format == FMT_OTLP)
		return report_error(w, write_otlp(w, p, n, start, end));
	err = interval_marker(w, n, start, end);
	if (!err)
		err = write_format(w, p, start, end);
	if (!err && fflush(w->f))
		err = -errno;
	if (err)
		return err == -ENOTSUP ? err : report_error(w, err);
	return 0;
}

bool writer__wants_final(const struct writer *w)
{
	return !w->top;
}


static void restore_screen(struct writer *w)
{
	top__free(w->top);
	w->top = NULL;
}

int writer__finish(struct writer *w)
{
	int err = 0;

	restore_screen(w);
	if (!w->f)
		return 0;
	if (w->f == stdout)
		err = fflush(stdout) ? -errno : 0;
	else
		err = outfile__finish(&w->out);
	w->f = NULL;
	return err ? report_error(w, err) : 0;
}

/*
 * Send what is queued, for at most the timeout, and say what became of
 * every profile.  Drops are not an error of the run: the -o files are
 * written, and the line says what was lost.
 */
static int close_otlp(struct writer *w)
{
	struct otlp_stats *st = &w->otlp_final;

	otlp_sender__close(w->otlp, st);
	w->otlp = NULL;
	if (log__verbosity() < 0 && !st->dropped)
		return 0;
	log__raw("profile: otlp: sent %llu profile%s (%llu samples) to %s; dropped %llu (%llu samples); %llu retries",
		 (unsigned long long)st->sent, st->sent == 1 ? "" : "s",
		 (unsigned long long)st->sent_samples, w->cfg->otlp->shown_url,
		 (unsigned long long)st->dropped, (unsigned long long)st->dropped_samples,
		 (unsigned long long)st->retries);
	return 0;
}

int writer__close(struct writer *w)
{
	int err;

	if (w->otlp)
		return close_otlp(w);
	err = writer__finish(w);

	if (err || !w->out.name)
		return err;
	err = outfile__commit(&w->out);
	if (err)
		return report_error(w, err);
	w->files++;
	return 0;
}

void writer__abort(struct writer *w)
{
	if (w->otlp) {
		otlp_sender__close(w->otlp, &w->otlp_final);
		w->otlp = NULL;
	}
	restore_screen(w);
	if (w->f == stdout)
		fflush(stdout);
	outfile__abort(&w->out);
	w->f = NULL;
}

/*
 * Two -o names for one file ("cpu.svg", "./cpu.svg") would race to
 * replace it, and one output would be lost without a word.
 */
static bool same_target(const struct writer *a, const struct writer *b)
{
	struct stat da, db;

	if (!a->out.name || !b->out.name || strcmp(a->out.name, b->out.name))
		return false;
	if (fstat(a->out.dirfd, &da) || fstat(b->out.dirfd, &db))
		return false;
	return da.st_dev == db.st_dev && da.st_ino == db.st_ino;
}

static int check_distinct(const struct writers *ws)
{
	for (size_t i = 0; i < ws->nr; i++) {
		for (size_t j = 0; j < i; j++) {
			if (!same_target(&ws->w[j], &ws->w[i]))
				continue;
			pr_err("-o '%s' and -o '%s' are the same file; name each output once",
			       ws->w[j].path, ws->w[i].path);
			return -EINVAL;
		}
	}
	return 0;
}

int writers__open(struct writers *ws, const struct output_config *cfg)
{
	const struct output_config *o = &ws->cfg;	/* the writers point at it */
	struct output_spec to_stdout = { .path = NULL, .format = cfg->format };
	size_t nr = cfg->nr_outputs ? cfg->nr_outputs : 1;
	int err = 0;

	ws->cfg = *cfg;
	ws->nr = 0;
	for (size_t i = 0; i < nr && !err; i++) {
		err = writer__open(&ws->w[i], o, o->nr_outputs ? &o->outputs[i] : &to_stdout);
		ws->nr = i + 1;
	}
	if (!err)
		err = check_distinct(ws);
	if (err)
		writers__abort(ws);
	return err;
}

void writers__start(struct writers *ws)
{
	for (size_t i = 0; i < ws->nr; i++)
		writer__start(&ws->w[i]);
}

/* Every per-interval file written: finish them all, then put them in place. */
static int close_interval_files(struct writers *ws)
{
	int err = 0;

	for (size_t i = 0; i < ws->nr && !err; i++)
		if (ws->w[i].per_interval)
			err = writer__finish(&ws->w[i]);
	for (size_t i = 0; i < ws->nr && !err; i++)
		if (ws->w[i].per_interval)
			err = writer__close(&ws->w[i]);
	return err;
}

void writers__set_events_per_sample(struct writers *ws, __u64 n)
{
	for (size_t i = 0; i < ws->nr; i++)
		ws->w[i].events_per_sample = n;
}

int writers__write(struct writers *ws, const struct records *p, unsigned int n,
		   const struct timespec *start, const struct timespec *end)
{
	int err = 0;

	for (size_t i = 0; i < ws->nr && !err; i++)
		err = writer__write(&ws->w[i], p, n, start, end);
	return err ? err : close_interval_files(ws);
}

/* Only stdout can be the screen, and with --top it is the only writer. */
struct top *writers__top(const struct writers *ws)
{
	return ws->nr ? ws->w[0].top : NULL;
}

bool writers__wants_final(const struct writers *ws)
{
	return ws->nr && writer__wants_final(&ws->w[0]);
}

int writers__close(struct writers *ws)
{
	int err = 0;

	for (size_t i = 0; i < ws->nr && !err; i++)
		err = writer__finish(&ws->w[i]);
	for (size_t i = 0; i < ws->nr && !err; i++)
		err = writer__close(&ws->w[i]);
	return err;
}

void writers__abort(struct writers *ws)
{
	for (size_t i = 0; i < ws->nr; i++)
		writer__abort(&ws->w[i]);
}

void writers__describe(const struct writers *ws, char *buf, size_t sz)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ws->nr && off < sz; i++) {
		const struct writer *w = &ws->w[i];
		const char *sep = off ? ", " : "";

		if (w->format == FMT_OTLP && w->otlp_final.dropped)
			off += snprintf(buf + off, sz - off,
					"%sOTLP to %s (%llu of %llu profiles dropped: see above)", sep,
					w->cfg->otlp->shown_url,
					(unsigned long long)w->otlp_final.dropped,
					(unsigned long long)(w->otlp_final.sent + w->otlp_final.dropped));
		else if (w->format == FMT_OTLP)
			off += snprintf(buf + off, sz - off, "%sOTLP to %s", sep, w->cfg->otlp->shown_url);
		else if (!w->path)
			continue;
		else if (w->per_interval)
			off += snprintf(buf + off, sz - off, "%s%u file%s %s", sep, w->files,
					w->files == 1 ? "" : "s", w->path);
		else
			off += snprintf(buf + off, sz - off, "%s%s", sep, w->path);
	}
}
