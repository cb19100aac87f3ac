// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The run: load and attach, then wait for the end while the side-band ring
 * buffers tell us about processes coming and going, then drain, symbolize
 * and write.  With -i the maps are double-buffered and each interval is
 * written while sampling goes on in the other set.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "run/run.h"
#include "run/setup.h"
#include "run/summary.h"
#include "run/targets.h"
#include "run/stall.h"
#include "loader/session.h"
#include "symbols/knames.h"
#include "symbols/usyms.h"
#include "trace/symbolize.h"
#include "output/writer.h"
#include "cli/output_config.h"
#include "output/top.h"
#include "trace/tracker.h"
#include "run/completeness.h"
#include "run/hints.h"
#include "unwind/unwind.h"
#include "interp/interp.h"
#include "symbols/debuginfod.h"
#include "run/command.h"
#include "lib/log.h"
#include "lib/cputime.h"

struct run {
	const struct options *o;
	volatile sig_atomic_t *stop;
	struct modules m;		/* setup.h */
	struct command *cmd;		/* profile -- CMD, else NULL */
	struct completeness complete;
	struct hints hints;		/* JIT code nothing names, per process */
	struct sym_cache *cache;	/* without -i: kept from prefetch to report */
	struct writers out;
	struct summary sum;
	unsigned int interval_no;
	bool finishing;		/* the reports after sampling ended */
	bool flip_interrupted;	/* a stop request came while a flip waited */
	struct targets targets;	/* -p/-L: which have exited */
	struct stall stall;	/* each CPU's timer against its rate */
	bool targets_gone;	/* every -p process has exited: the run ends */
	struct timespec tick;	/* monotonic: next look at the targets and prefetch */
	__u64 prefetch_mark;	/* CNT_NEW_KEYS at the last prefetch */
	unsigned int prefetches;
	struct timespec interval_start;	/* wall clock */
	__u64 events_mark, taken_mark;	/* at the last report: tuned_period() */
};

/*
 * The end of the run: every warning, then from -v the statistics.  Each
 * module prints its own lines (lib/report_pass.h); here is only their order,
 * the one scripts have always read: the sampler's lines frame the others.
 */
static void report_counters(const struct run *r, const __u64 *c)
{
	session__report(r->m.s, c, &r->sum.tally, REPORT_WARN);
	usyms__report(r->m.us, REPORT_WARN);
	unwind__report(r->m.uw, c, REPORT_WARN);
	completeness__report(&r->complete, REPORT_WARN);
	summary__warn_few(&r->sum, r->o, c);
	stall__report(&r->stall, REPORT_WARN);
	targets__report(&r->targets, REPORT_WARN);
	interps__report(r->m.ints, c, REPORT_WARN);
	command__report(r->cmd, c, REPORT_WARN);
	debuginfod__report(r->m.dfd, REPORT_WARN);
	if (log__verbosity() < 1)
		return;
	tracker__report(r->m.tracker, r->m.us, REPORT_STATS);
	usyms__report(r->m.us, REPORT_STATS);
	knames__report(r->m.kn, REPORT_STATS);
	debuginfod__report(r->m.dfd, REPORT_STATS);
	session__report(r->m.s, c, &r->sum.tally, REPORT_STATS);
	stall__report(&r->stall, REPORT_STATS);
	targets__report(&r->targets, REPORT_STATS);
	completeness__report(&r->complete, REPORT_STATS);
	unwind__report(r->m.uw, c, REPORT_STATS);
	session__report_offcpu(r->m.s, c, &r->sum.tally);
	session__report_verifier(r->m.s);
	cputime__report();
	unwind__report_tables(r->m.uw, c);
	interps__report(r->m.ints, c, REPORT_STATS);
	session__report_balance(c, &r->sum.tally);
}

/* Monotonic milliseconds, for the -vv timing line. */
static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

/*
 * In a long -i run, a burst of processes (a build, a deploy) leaves freed
 * symbol tables in the heap; hand those pages back to the system after each
 * interval, so that RSS follows what is in use rather than the worst
 * interval so far.
 */
static void give_back_memory(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* Whether an output shows DWARF's lines or inlined functions: pprof always. */
static bool wants_dwarf(const struct options *o)
{
	if (o->native_lines || o->inline_frames)
		return true;
	if (!o->nr_outputs)
		return o->format == FMT_PPROF;
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (o->outputs[i].format == FMT_PPROF)
			return true;
	return false;
}

static void init_symbolizer(const struct run *r, struct symbolizer *sym)
{
	struct trace_source src;

	session__trace_source(r->m.s, &src);
	symbolizer__init(sym, &src, r->m.kn, r->m.us, r->cache);
	symbolizer__set_interps(sym, r->m.ints);
	symbolizer__set_inlines(sym, r->o->inline_frames);
	symbolizer__set_lines(sym, wants_dwarf(r->o) ? r->m.us : NULL);
}

/*
 * The debug files fetched so far, for the files samples were named from
 * (ufiles.h): whether any file was named so.  The last report waits for
 * those still coming, unless Ctrl-C ended the run (it ends it at once);
 * an interval's report never does, and leaves them to the next.  A file
 * named so frees the names the prefetch cached: the cache starts anew.
 */
static bool take_debug_files(struct run *r)
{
	if (!r->m.dfd || !r->m.us)
		return false;
	if (r->finishing)
		debuginfod__wait(r->m.dfd, r->stop);
	if (!usyms__take_fetched(r->m.us))
		return false;
	if (r->cache) {
		sym_cache__free(r->cache);
		r->cache = sym_cache__new();
	}
	return true;
}

/*
 * At -F, the kernel tunes the period of an event other than a clock: what
 * one sample of this report stood for is the events counted since the last
 * report over the samples taken since.  For pprof's event-count values.
 */
static void tuned_period(struct run *r)
{
	__u64 c[NR_COUNTERS], events, taken;

	if (!r->o->freq || event__is_clock(&r->o->event) || session__counters(r->m.s, c))
		return;
	events = session__events(r->m.s);
	taken = c[CNT_TAKEN] - r->taken_mark;
	writers__set_events_per_sample(&r->out, taken ? (events - r->events_mark + taken / 2) / taken : 0);
	r->events_mark = events;
	r->taken_mark = c[CNT_TAKEN];
}

/*
 * One report's keys and their records.  Without -i, the keys are named as
 * they are read, a batch at a time, never all held at once: at scale they
 * are a few MiB, held beside the records (which have all a key says).
 * With -i, the set is cleared by the keys read: they are drained whole
 * and kept for it (samples).
 */
struct naming {
	struct symbolizer sym;
	struct records recs;
	struct sample *samples;	/* NULL: named as read */
	size_t keys;
	int naming_err;		/* the error was naming's, not the read's */
	__u64 cpu;		/* the main thread's clock at the last switch */
	double ms, drain_ms, naming_ms;	/* wall clock, likewise */
};

/* The time since the last switch goes to part (cputime.h), and to *ms. */
static void naming_switch(struct naming *n, const char *part, double *ms)
{
	double t = now_ms();

	cputime__section(part, n->cpu);
	n->cpu = cputime__now();
	*ms += t - n->ms;
	n->ms = t;
}

static int name_batch(void *ctx, const struct sample *batch, size_t nr)
{
	struct naming *n = ctx;

	naming_switch(n, "drain", &n->drain_ms);
	n->keys += nr;
	n->naming_err = records__add(&n->recs, &n->sym, batch, nr);
	naming_switch(n, "naming", &n->naming_ms);
	return n->naming_err;
}

/* n->recs from the held keys, or from the set's as they are read. */
static int name_keys(struct run *r, struct naming *n)
{
	int err;

	init_symbolizer(r, &n->sym);
	if (n->samples) {
		err = n->naming_err = records__build(&n->recs, &n->sym, n->samples, n->keys);
		naming_switch(n, "naming", &n->naming_ms);
		return err;
	}
	n->keys = 0;
	err = n->naming_err = records__init(&n->recs, &n->sym);
	if (!err)
		err = session__drain_each(r->m.s, name_batch, n);
	naming_switch(n, "drain", &n->drain_ms);
	return err;
}

/*
 * Drain the read set, symbolize it and write it: one report.  0 or -errno;
 * a write error is returned as is, for the caller to judge.
 */
static int report_set(struct run *r, bool clear)
{
	struct naming n = { .cpu = cputime__now(), .ms = now_ms() };
	long rss0 = peak_rss_kb(), rss1, rss2;
	struct timespec now;
	double t2;
	__u64 cpu;
	int err;

	if (clear) {
		err = session__drain(r->m.s, &n.samples, &n.keys);
		if (err) {
			pr_err("cannot read the BPF maps: %s", strerror(-err));
			return err;
		}
		naming_switch(&n, "drain", &n.drain_ms);
	}
	rss1 = peak_rss_kb();
	interps__settle(r->m.ints, INTERP_SETTLE_MS);
	err = name_keys(r, &n);
	/*
	 * Debug files are parsed for the files these samples were named from
	 * (debuginfod.h): once some are, name the samples again.  The records
	 * point to the old names, which are only freed, not read.  Without -i
	 * the keys are read again: the set no longer changes, as sampling has
	 * ended.
	 */
	if (!err && take_debug_files(r)) {
		records__free(&n.recs);
		err = name_keys(r, &n);
	}
	if (err && n.naming_err)
		pr_err("cannot symbolize: %s", strerror(-err));
	else if (err)
		pr_err("cannot read the BPF maps: %s", strerror(-err));
	if (err)
		goto out;
	t2 = now_ms();
	cpu = cputime__now();
	rss2 = peak_rss_kb();
	/*
	 * The cache names nothing more (the report's own with -i; else the
	 * prefetches', whose only report is the last): its lookup tables go
	 * before the output is made, when a report's memory peaks.
	 */
	sym_cache__forget(n.recs.cache);
	summary__add(&r->sum, r->o, &n.recs);
	completeness__add(&r->complete, &n.recs);
	tuned_period(r);
	hints__add(&r->hints, &n.recs);
	clock_gettime(CLOCK_REALTIME, &now);
	err = writers__write(&r->out, &n.recs, r->interval_no, &r->interval_start, &now);
	cputime__section("output", cpu);
	pr_debug("report: %zu keys (%u prefetches before); drain %.1f ms, symbolize %.1f ms, write %.1f ms; peak RSS %ld, %ld, %ld, %ld KiB",
			n.keys, r->prefetches, n.drain_ms, n.naming_ms, now_ms() - t2, rss0, rss1, rss2, peak_rss_kb());
	r->interval_start = now;
	r->interval_no++;
	if (clear && !err)
		err = session__clear(r->m.s, n.samples, n.keys);
out:
	records__free(&n.recs);
	free(n.samples);
	/* After records__free: the records point into the files it frees. */
	if (clear && r->m.us)
		usyms__forget_exited(r->m.us);
	if (clear)
		interps__reap(r->m.ints);
	if (clear)
		give_back_memory();
	return err;
}

/* -EINTR: a stop request came while waiting; finish() completes the flip. */
static int flip(struct session *s, const volatile sig_atomic_t *stop)
{
	int err = session__flip(s, stop);

	if (err && err != -EINTR)
		pr_err("cannot switch map sets for the next interval: %s",
			strerror(-err));
	return err;
}

static void ts_add(struct timespec *t, __u64 sec)
{
	t->tv_sec += sec;
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* A poll() timeout ending at or just after until, which is a second away at most. */
static int ms_until(const struct timespec *now, const struct timespec *until)
{
	return (until->tv_sec - now->tv_sec) * 1000 +
	       (until->tv_nsec - now->tv_nsec) / 1000000 + 1;
}

/*
 * Without -i, read and symbolize the stacks counted so far while sampling
 * goes on, so that at the end only the newest are left and the report comes
 * out quickly.  A prefetch reads the keys no prefetch read before
 * (session__drain_new()), but walks all of the count map to find them,
 * and where that cannot be it reads every key: so it runs only when the
 * keys inserted since the last one reach half of those inserted then (and
 * at least PREFETCH_MIN): a few while the map grows, none once it is
 * stable, and at most a third of the keys left for the end.  Failures only
 * mean more work at the end.
 */
#define PREFETCH_MIN 1024

static bool prefetch_due(struct run *r)
{
	__u64 c[NR_COUNTERS], fresh, want;

	if (session__counters(r->m.s, c))
		return true;
	fresh = c[CNT_NEW_KEYS] - r->prefetch_mark;
	want = r->prefetch_mark / 2 > PREFETCH_MIN ? r->prefetch_mark / 2 : PREFETCH_MIN;
	if (fresh < want)
		return false;
	r->prefetch_mark = c[CNT_NEW_KEYS];
	return true;
}

static void prefetch(struct run *r)
{
	struct sample *samples = NULL;
	struct symbolizer sym;
	__u64 cpu = cputime__now();
	size_t nr = 0;
	int err;

	if (!r->cache || !prefetch_due(r))
		return;
	err = session__drain_new(r->m.s, &samples, &nr);
	cputime__section("drain", cpu);
	if (err)
		return;
	cpu = cputime__now();
	r->prefetches++;
	init_symbolizer(r, &sym);
	symbolizer__prefetch(&sym, samples, nr);
	free(samples);
	cputime__section("naming", cpu);
}

static void poll_tracker(struct run *r, const struct timespec *now,
			 const struct timespec *until)
{
	__u64 cpu = cputime__now();
	int err = tracker__poll(r->m.tracker, ms_until(now, until), command__wake_fd(r->cmd));

	cputime__section("following processes", cpu);
	if (err && err != -EINTR) {
		pr_warn("stopped following processes: %s; those that exit before the end will show [unknown]",
			strerror(-err));
		tracker__free(r->m.tracker);
		r->m.tracker = NULL;
	}
}

/*
 * --top on a terminal: its keys and resizes are looked at every 100 ms.
 * q ends the run as Ctrl-C does: through the stop flag, or with a command,
 * through main.c's handler, which passes the signal on to it.
 */
static void poll_top(struct run *r, const struct timespec *now, struct timespec *step)
{
	struct top *top = writers__top(&r->out);
	struct timespec soon = *now;

	if (!top)
		return;
	if (top__poll(top) == TOP_QUIT) {
		if (r->cmd)
			raise(SIGINT);
		else
			*r->stop = SIGINT;
	}
	soon.tv_nsec += 100000000;
	if (soon.tv_nsec >= 1000000000) {
		soon.tv_sec++;
		soon.tv_nsec -= 1000000000;
	}
	if (ts_before(&soon, step))
		*step = soon;
}

/* A stop request, the command has exited, or every -p process has. */
static bool run_over(struct run *r)
{
	return *r->stop || r->targets_gone || (r->cmd && command__exited(r->cmd));
}

/* Without the side band: until step, or the command's exit (its pidfd). */
static void sleep_until(struct run *r, const struct timespec *now,
			const struct timespec *step)
{
	struct pollfd fd = { .fd = command__wake_fd(r->cmd), .events = POLLIN };

	if (fd.fd < 0) {
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, step, NULL);
		return;
	}
	poll(&fd, 1, ms_until(now, step));
}

/*
 * Sleep until deadline (monotonic), a stop request or the command's exit
 * (command__wake_fd()).  Process records wake us as they come; the targets
 * and the prefetch are looked at once a second, not on every wake-up (on a
 * busy host that is many times a second).  The tick outlives a call: with
 * -i 1 every call ends at its deadline before a tick of its own would come.
 */
static void wait_until(struct run *r, const struct timespec *deadline)
{
	struct timespec now, step;

	if (!r->tick.tv_sec) {
		clock_gettime(CLOCK_MONOTONIC, &r->tick);
		r->tick.tv_sec += 1;
	}
	while (!run_over(r)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!ts_before(&now, deadline))
			return;
		if (!ts_before(&now, &r->tick)) {
			r->targets_gone = targets__check(&r->targets);
			if (r->targets_gone)
				return;
			prefetch(r);
			stall__check(&r->stall, r->m.s);
			r->tick = now;
			r->tick.tv_sec += 1;
		}
		step = ts_before(deadline, &r->tick) ? *deadline : r->tick;
		poll_top(r, &now, &step);
		if (*r->stop)
			return;
		if (r->m.tracker)
			poll_tracker(r, &now, &step);
		else
			sleep_until(r, &now, &step);
	}
}

/*
 * "Never", for a run without a duration or without intervals: far enough
 * ahead (about 3 million years) that no run gets there, and small enough
 * that adding it to the clock cannot overflow time_t.
 */
#define FOREVER_S ((__u64)1 << 46)

/* Sample until the duration ends or a signal comes; report every interval. */
static int sample_loop(struct run *r, const struct timespec *start)
{
	const struct options *o = r->o;
	struct timespec end, next, now;
	int err;

	end = next = *start;
	ts_add(&end, o->duration ? o->duration : FOREVER_S);
	ts_add(&next, o->interval ? o->interval : FOREVER_S);
	for (;;) {
		wait_until(r, ts_before(&next, &end) ? &next : &end);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (run_over(r) || !ts_before(&now, &end))
			return 0;
		if (!ts_before(&now, &next)) {
			err = flip(r->m.s, r->stop);
			if (err == -EINTR) {
				r->flip_interrupted = true;
				return 0;
			}
			if (!err)
				err = report_set(r, true);
			if (err)
				return err;
			ts_add(&next, o->interval);
		}
	}
}

static int finish(struct run *r)
{
	__u64 counters[NR_COUNTERS], target_short;
	int err = 0;

	r->finishing = true;
	stall__check(&r->stall, r->m.s);
	clock_gettime(CLOCK_MONOTONIC, &r->sum.sample_end);
	session__detach(r->m.s);
	targets__stop(&r->targets);
	/* The side band's last records: new interpreter stacks to name among them. */
	if (r->m.tracker) {
		__u64 cpu = cputime__now();

		tracker__poll(r->m.tracker, 0, -1);
		cputime__section("following processes", cpu);
	}
	/* A second Ctrl-C while printing ends the process at once. */
	signal(SIGINT, SIG_DFL);
	/*
	 * The report takes a few tens of milliseconds of CPU; on a host that
	 * the profiled workload keeps busy, do not let it wait for a time slice.
	 */
	setpriority(PRIO_PROCESS, 0, -10);
	/* The interval whose flip a stop request interrupted, then the last. */
	if (r->flip_interrupted) {
		err = flip(r->m.s, NULL);
		if (!err)
			err = report_set(r, true);
		if (err)
			return err;
	}
	if (r->o->interval) {
		err = flip(r->m.s, NULL);
		if (err)
			return err;
	}
	if (writers__wants_final(&r->out))
		err = report_set(r, false);
	if (!err)
		err = writers__close(&r->out);
	if (err)
		return err;
	err = session__counters(r->m.s, counters);
	if (err) {
		pr_err("cannot read the counters: %s", strerror(-err));
		return err;
	}
	/* Samples the timers never gave: per CPU, and per -p process's CPU time. */
	r->sum.timer_missed = stall__missed(&r->stall);
	target_short = targets__judge(&r->targets, r->sum.tally.counted, counters[CNT_HASH_FULL]);
	if (target_short > r->sum.timer_missed)
		r->sum.timer_missed = target_short;
	/* What the walks ended on may name a better --unwind. */
	if (unwind__hint(r->m.uw, counters))
		r->complete.advice = unwind__hint(r->m.uw, counters);
	report_counters(r, counters);
	hints__warn(&r->hints);
	summary__print(&r->sum, r->o, counters, r->m.tracker, &r->out);
	return 0;
}

static int exit_status(int err)
{
	if (!err || err == -EPIPE)
		return 0;	/* EPIPE: the reader has gone (| head), not our failure */
	return 1;
}

static int start(struct run *r, const struct limits *lim)
{
	const struct options *o = r->o;
	struct output_config oc;
	int err;

	err = setup__command(&r->cmd, o);
	if (err)
		return err;
	err = targets__init(&r->targets, o);
	if (err)
		return err;
	setup__symbols(&r->m, o, r->stop);
	options__output_config(o, &oc);
	err = writers__open(&r->out, &oc);
	if (err)
		return err;
	err = setup__sampler(&r->m, o, lim, r->cmd);
	if (err)
		return err;
	r->complete.advice = setup__stack_advice(&r->m, o);
	r->complete.off_cpu = o->kind == PROFILE_OFF_CPU;
	/*
	 * The records of the processes that came and went while we loaded
	 * (every mmap of a program that started with us): read now, not
	 * after the first samples, whose notes would wait behind them.
	 */
	if (r->m.tracker) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		poll_tracker(r, &now, &now);
	}
	err = session__attach(r->m.s);
	if (err)
		return err;
	err = stall__init(&r->stall, o, r->m.s);
	if (err)
		return err;
	stall__check(&r->stall, r->m.s);
	targets__mark(&r->targets, o);
	writers__start(&r->out);
	return setup__release_command(&r->m, r->cmd);
}

int run__exec(const struct options *o, const struct limits *lim,
		volatile sig_atomic_t *stop)
{
	struct run r = { .o = o, .stop = stop, .interval_no = 1 };
	struct timespec start_time;
	int err, status;

	err = start(&r, lim);
	if (err)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &start_time);
	r.sum.sample_start = start_time;
	clock_gettime(CLOCK_REALTIME, &r.interval_start);
	/* Ready the kernel symbols while the samples come in, not after. */
	setup__knames(&r.m, o);
	if (!o->interval)
		r.cache = sym_cache__new();
	err = sample_loop(&r, &start_time);
	if (!err)
		err = finish(&r);
out:
	writers__abort(&r.out);
	sym_cache__free(r.cache);
	setup__free(&r.m);
	targets__free(&r.targets);
	stall__free(&r.stall);
	hints__free(&r.hints);
	status = command__end(r.cmd, exit_status(err), stop, o->duration);
	command__free(r.cmd);
	return status;
}
