// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The run: load and attach, then wait for the end while the side-band ring
 * buffers tell us about processes coming and going, then drain, symbolize
 * and write.  With -i the maps are double-buffered and each interval is
 * written while sampling goes on in the other set.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "run/run.h"
#include "loader/session.h"
#include "symbols/knames.h"
#include "symbols/usyms.h"
#include "trace/symbolize.h"
#include "output/output.h"
#include "output/writer.h"
#include "cli/output_config.h"
#include "output/top.h"
#include "trace/tracker.h"
#include "symbols/caps.h"
#include "run/completeness.h"
#include "run/hints.h"
#include "unwind/unwind.h"
#include "interp/interp.h"
#include "symbols/debuginfod.h"
#include "run/command.h"
#include "lib/log.h"

struct run {
	const struct options *o;
	volatile sig_atomic_t *stop;
	struct session *s;
	struct knames *kn;
	struct usyms *us;
	struct tracker *tracker;	/* NULL: processes are read at the end only */
	struct unwind *uw;		/* NULL: user stacks by frame pointer only */
	struct interps *ints;		/* NULL: no interpreter frames */
	struct debuginfod *dfd;		/* NULL: no debuginfod servers */
	struct command *cmd;		/* profile -- CMD, else NULL */
	bool cmd_ran;			/* its exec succeeded */
	int exec_err;			/* -errno: CMD could not be run */
	struct completeness complete;
	struct hints hints;		/* JIT code nothing names, per process */
	struct sym_cache *cache;	/* without -i: kept from prefetch to report */
	struct writers out;
	__u64 counted;		/* over all intervals */
	size_t stacks;		/* distinct stacks: most in one report */
	unsigned int reports;
	__u64 missed_stacks;
	bool missed_enomem;
	__u64 truncated;	/* samples with a stack cut at the depth limit */
	unsigned int interval_no;
	bool finishing;		/* the reports after sampling ended */
	bool flip_interrupted;	/* a stop request came while a flip waited */
	bool *target_gone;	/* per -p/-L id: its exit was reported */
	__u64 prefetch_mark;	/* CNT_NEW_KEYS at the last prefetch */
	size_t prefetch_keys;	/* keys the last prefetch read */
	unsigned int prefetches;
	struct timespec interval_start;	/* wall clock */
	struct timespec sample_start;	/* monotonic: when sampling began */
	__u64 events_mark, taken_mark;	/* at the last report: tuned_period() */
};

/* The debuginfod client, if DEBUGINFOD_URLS names servers. */
static struct debuginfod *new_debuginfod(const struct options *o)
{
	struct debuginfod_opts dopts = {
		.urls = getenv("DEBUGINFOD_URLS"),
		.wait = (double)o->debuginfod_wait,
		.progress = isatty(STDERR_FILENO),
	};

	if (!o->debuginfod || o->kernel_only)
		return NULL;
	return debuginfod__new(&dopts);
}

static struct usyms *new_usyms(const struct options *o, struct debuginfod *dfd,
			       volatile sig_atomic_t *stop)
{
	struct usyms_opts uo = {
		.no_demangle = o->no_demangle, .stop = stop, .debuginfod = dfd,
	};
	struct usyms *us = usyms__new_opts(&uo);

	if (!us)
		pr_warn("cannot set up user symbols: %s; user frames will be [unknown]",
			strerror(errno));
	return us;
}

/* With filters, only the processes they let through are followed. */
static struct tracker *new_tracker(struct session *s, struct usyms *us,
				   const struct options *o)
{
	bool filtered = o->pids || o->tids || o->cgroup || o->cgroupmap || o->cmd;
	struct tracker *t = tracker__new(session__events_fd(s), us, filtered);

	if (!t)
		pr_warn("cannot follow processes (%s); those that exit before the end will show [unknown]",
			strerror(errno));
	return t;
}

static __u64 counted_samples(const struct sample *s, size_t nr)
{
	__u64 sum = 0;

	for (size_t i = 0; i < nr; i++)
		sum += s[i].count;
	return sum;
}

/*
 * The caps that files hit: one warning per kind naming the first object,
 * always; with counts, the -v line.
 */
static void report_caps(const struct caps *c, bool counts)
{
	if (counts) {
		pr_info("caps hit: section size %llu, symbol names %llu, memory per file %llu, perf map %llu, CRC input %llu",
			(unsigned long long)c->hits[CAP_SECTION], (unsigned long long)c->hits[CAP_NAMES],
			(unsigned long long)c->hits[CAP_OBJECT], (unsigned long long)c->hits[CAP_PERFMAP],
			(unsigned long long)c->hits[CAP_CRC]);
		return;
	}
	for (int k = 0; k < NR_CAPS; k++) {
		char what[96];

		if (!c->hits[k])
			continue;
		caps__describe(k, what, sizeof(what));
		pr_warn("'%s' hit the cap on %s; what lies past it is not named (%llu files in all; -v counts them)",
			c->first[k], what, (unsigned long long)c->hits[k]);
	}
}

static void report_symbol_stats(const struct run *r)
{
	struct tracker_stats ts = {};
	struct usyms_stats us = {};
	struct knames_stats ks;

	if (r->tracker)
		tracker__stats(r->tracker, &ts);
	if (r->us)
		usyms__stats(r->us, &us);
	pr_info("processes: %llu seen, %llu gone before read, %llu freed at exit without samples, %llu known now; records: %llu mmap, %llu exec, %llu fork, %llu exit, %llu first-sample, %llu lost, %llu of processes not profiled",
		(unsigned long long)us.procs, (unsigned long long)us.procs_gone,
		(unsigned long long)us.procs_reaped, (unsigned long long)us.procs_now,
		(unsigned long long)ts.mmaps, (unsigned long long)ts.execs,
		(unsigned long long)ts.forks, (unsigned long long)ts.exits,
		(unsigned long long)ts.first_samples, (unsigned long long)ts.lost,
		(unsigned long long)ts.skipped);
	pr_info("recovery from lost records: %llu rounds, %llu processes' maps read again",
		(unsigned long long)ts.recoveries, (unsigned long long)ts.recovered);
	pr_info("files: %llu opened, %llu parsed, %llu pruned, %llu with debug files, %llu with MiniDebugInfo, %llu from debuginfod, %llu perf maps, %llu perf maps refused; vdso images: %llu, %llu pruned",
		(unsigned long long)us.files, (unsigned long long)us.files_parsed,
		(unsigned long long)us.files_pruned,
		(unsigned long long)us.debug_files, (unsigned long long)us.minidebug,
		(unsigned long long)us.debuginfod_files,
		(unsigned long long)us.perfmaps, (unsigned long long)us.perfmaps_refused,
		(unsigned long long)us.vdsos, (unsigned long long)us.vdsos_pruned);
	if (r->us)
		report_caps(usyms__caps(r->us), true);
	if (!r->kn)
		return;
	knames__stats(r->kn, &ks);
	if (ks.from_kernel)
		pr_info("kernel symbols: %llu addresses named by the kernel in %llu runs; /proc/kallsyms %s",
			(unsigned long long)ks.addrs, (unsigned long long)ks.runs,
			ks.kallsyms_read ? "read for an ftrace trampoline" : "not read");
	else
		pr_info("kernel symbols: from /proc/kallsyms");
}

/*
 * "user stacks: eexist 1, enomem 0, efault 2, other 0"; a sample taken in
 * user mode has no kernel stack, and says so apart from the errors.
 */
static void report_part(const char *what, int part, const __u64 *c)
{
	char mode[48] = "";

	if (part == PART_KERNEL)
		snprintf(mode, sizeof(mode), "in user mode %llu, ",
			 (unsigned long long)c[CNT_USER_MODE]);
	pr_info("%s stacks: %seexist %llu, enomem %llu, efault %llu, other %llu", what, mode,
		(unsigned long long)c[CNT_STACK_ERR(part, STACK_ERR_EEXIST)],
		(unsigned long long)c[CNT_STACK_ERR(part, STACK_ERR_ENOMEM)],
		(unsigned long long)c[CNT_STACK_ERR(part, STACK_ERR_EFAULT)],
		(unsigned long long)c[CNT_STACK_ERR(part, STACK_ERR_OTHER)]);
}

/* Objects whose tables found no room: one warning naming the first. */
static void warn_unwind_budget(const struct run *r)
{
	struct unwind_stats st;

	if (!r->uw)
		return;
	unwind__stats(r->uw, &st);
	if (st.over_budget)
		pr_warn("'%s' and %llu more objects found no room under --unwind-mem %llu; their stacks are walked by frame pointer: raise --unwind-mem",
			st.first_over, (unsigned long long)st.over_budget - 1,
			(unsigned long long)r->o->unwind_mem >> 20);
}

/*
 * Few stacks whole: say where they stop and what would help, once.  Not
 * for a handful of samples, which say little.
 */
static void warn_incomplete(const struct run *r)
{
	const struct completeness *c = &r->complete;
	char worst[512];

	if (c->samples < 100 || c->complete * 2 >= c->samples)
		return;
	completeness__worst(c, 3, worst, sizeof(worst));
	pr_warn("only %.0f%% of user stacks reach their root frame; most stop in %s; %s",
		100.0 * c->complete / c->samples, worst,
		r->uw ? "-v says why walks ended, --unwind-debug marks each stack" :
		r->o->unwind == UNWIND_FP ? "--unwind=auto walks code built without frame pointers" :
		"the .eh_frame unwinder is not running (see above)");
}

static void report_unwind(const struct run *r, const __u64 *c)
{
	const struct completeness *cm = &r->complete;
	char ends[512];
	size_t off = 0;

	pr_info("user stack completeness: %.1f%% of %llu samples reach a root frame, %.1f frames on average",
		cm->samples ? 100.0 * cm->complete / cm->samples : 0.0,
		(unsigned long long)cm->samples,
		cm->samples ? (double)cm->frames / cm->samples : 0.0);
	pr_info("unwind: %s; walks %llu from tables, %llu by the kernel's frame-pointer walk; frames %llu by table, %llu by frame pointer",
		r->uw ? unwind__mode_name(r->o->unwind) : "fp",
		(unsigned long long)c[CNT_UW_WALKS], (unsigned long long)c[CNT_UW_FP_WALKS],
		(unsigned long long)c[CNT_UW_TABLE_FRAMES], (unsigned long long)c[CNT_UW_FP_FRAMES]);
	for (unsigned int e = 0; e < NR_UW_ENDS && off < sizeof(ends); e++)
		off += snprintf(ends + off, sizeof(ends) - off, "%s%s %llu", e ? ", " : "",
				unwind__end_name(e), (unsigned long long)c[CNT_UW_END + e]);
	pr_info("unwind ends: %s", ends);
	pr_info("verified instructions: do_sample %u, uw_exec %u, uw_exit %u (limit 1000000)",
		session__verified_insns(r->s, "do_sample"), session__verified_insns(r->s, "uw_exec"),
		session__verified_insns(r->s, "uw_exit"));
	if (r->uw) {
		struct unwind_stats st;

		unwind__stats(r->uw, &st);
		pr_info("unwind tables: %llu loaded, %llu rows, %llu KiB of kernel memory with mapping lists; objects: %llu compiled in %.1f ms, %llu built with frame pointers, %llu without .eh_frame, %llu over --unwind-mem, %llu evicted",
			(unsigned long long)st.tables, (unsigned long long)st.rows,
			(unsigned long long)st.bytes >> 10, (unsigned long long)st.built,
			st.build_ns / 1e6, (unsigned long long)st.fp_objects,
			(unsigned long long)st.no_table, (unsigned long long)st.over_budget,
			(unsigned long long)st.evicted);
		pr_info("unwind processes: %llu synced now (%llu syncs, %llu failed, %llu with no table), %llu mappings past %d, %llu requests dropped",
			(unsigned long long)st.procs, (unsigned long long)st.syncs,
			(unsigned long long)st.sync_errors, (unsigned long long)st.procs_fp,
			(unsigned long long)st.maps_over, UW_MAX_MAPS,
			(unsigned long long)st.dropped);
	}
}

static void report_debuginfod(const struct run *r)
{
	struct debuginfod_stats ds;

	if (!r->dfd)
		return;
	debuginfod__stats(r->dfd, &ds);
	pr_info("debuginfod: %llu lookups, %llu fetched, %llu not found, %llu failed, %llu still under way, %llu over the bound; %.1f MiB of debug files; reports waited %.1f s",
		(unsigned long long)ds.lookups, (unsigned long long)ds.fetched,
		(unsigned long long)ds.not_found, (unsigned long long)ds.failed,
		(unsigned long long)ds.pending, (unsigned long long)ds.refused,
		(double)ds.bytes / (1 << 20), ds.waited);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * A run with far fewer samples than its rate and length promise: say so,
 * and what to change.  At -F, under a tenth of what one busy CPU would give;
 * with -c, under one a second.  Not for runs under a second.
 */
static void warn_few_samples(const struct run *r, const __u64 *c)
{
	const struct options *o = r->o;
	double secs = seconds_since(&r->sample_start);
	unsigned long long n = c[CNT_TAKEN] - c[CNT_FILTERED];	/* counted or dropped */
	const char *ev = o->event.name;

	if (secs < 1 || n >= 1000)
		return;
	if (o->period && n < secs)
		pr_warn("only %llu sample(s) in %.1f s, one every %llu %s: lower -c for more",
			n, secs, (unsigned long long)o->period, ev);
	if (!o->freq || n >= o->freq * secs / 10)
		return;
	if (event__is_clock(&o->event) && n < o->freq * secs / 100)
		pr_warn("only %llu sample(s) in %.1f s at %llu Hz: what was profiled was on a CPU %.1f%% of the time; the rest it slept or waited, which a CPU profile does not show",
			n, secs, (unsigned long long)o->freq, 100.0 * n / (o->freq * secs));
	else if (event__is_clock(&o->event))
		pr_warn("only %llu sample(s) in %.1f s at %llu Hz: what was profiled was on a CPU %.1f%% of the time; profile longer or raise -F",
			n, secs, (unsigned long long)o->freq, 100.0 * n / (o->freq * secs));
	else
		pr_warn("only %llu sample(s) of %s in %.1f s at -F %llu: the kernel reaches -F only for an event that comes often enough; raise -F (-F %d) or give a period with -c",
			n, ev, secs, (unsigned long long)o->freq,
			o->freq < DEFAULT_EVENT_FREQ ? DEFAULT_EVENT_FREQ : 4 * (int)o->freq);
}

/* How many processes were followed, and whether any found no room. */
static void report_follow(const struct run *r, const __u64 *c)
{
	if (!r->cmd)
		return;
	if (c[CNT_FOLLOW_FULL])
		pr_warn("%llu processes started by '%s' were not profiled: more than %u ran at once",
			(unsigned long long)c[CNT_FOLLOW_FULL], r->o->cmd[0], FOLLOW_SET_SIZE);
	pr_info("followed processes: %llu (the command and those it started), %llu found no room",
		(unsigned long long)c[CNT_FOLLOWED], (unsigned long long)c[CNT_FOLLOW_FULL]);
}

static void report_counters(const struct run *r, const __u64 *c)
{
	/* bcc's words, without our prefix, for scripts that grep for them. */
	if (r->missed_stacks)
		log__raw("WARNING: %llu stack traces could not be displayed.%s",
			 (unsigned long long)r->missed_stacks,
			 r->missed_enomem ? " Consider increasing --stack-storage-size." : "");
	if (c[CNT_HASH_FULL])
		log__raw("WARNING: %llu samples were dropped because the count map was full. Consider increasing --hash-storage-size.",
			 (unsigned long long)c[CNT_HASH_FULL]);
	if (r->us)
		report_caps(usyms__caps(r->us), false);
	warn_unwind_budget(r);
	warn_incomplete(r);
	warn_few_samples(r, c);
	interps__report(r->ints, c, false);
	report_follow(r, c);
	debuginfod__warn(r->dfd);
	if (log__verbosity() < 1)
		return;
	report_symbol_stats(r);
	report_debuginfod(r);
	pr_info("samples: taken %llu, counted %llu, filtered %llu, dropped %llu (count map full)",
		(unsigned long long)c[CNT_TAKEN], (unsigned long long)r->counted,
		(unsigned long long)c[CNT_FILTERED], (unsigned long long)c[CNT_HASH_FULL]);
	report_part("user", PART_USER, c);
	report_part("kernel", PART_KERNEL, c);
	pr_info("stacks cut at --perf-max-stack-depth %u: in %llu samples",
		r->o->max_stack_depth, (unsigned long long)r->truncated);
	pr_info("spilled stacks: stored %llu, spill map full %llu, read errors %llu, hash collisions %llu",
		(unsigned long long)c[CNT_SPILLED], (unsigned long long)c[CNT_SPILL_FULL],
		(unsigned long long)c[CNT_SPILL_ERR], (unsigned long long)c[CNT_SPILL_COLLISION]);
	report_unwind(r, c);
	interps__report(r->ints, c, true);
	pr_info("first-sample notes: sent %llu, failed %llu",
		(unsigned long long)c[CNT_NOTES], (unsigned long long)c[CNT_NOTE_ERR]);
	pr_info("counted + filtered + dropped %s taken",
		r->counted + c[CNT_FILTERED] + c[CNT_HASH_FULL] == c[CNT_TAKEN] ? "==" : "!=");
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

static void init_symbolizer(const struct run *r, struct symbolizer *sym)
{
	struct trace_source src;

	session__trace_source(r->s, &src);
	symbolizer__init(sym, &src, r->kn, r->us, r->cache);
	symbolizer__set_interps(sym, r->ints);
}

/*
 * The debug files fetched so far.  The last report waits for those still
 * coming, unless Ctrl-C ended the run (it ends it at once); an interval's
 * report never does, and leaves them to the next.  A file named so frees
 * the names the prefetch cached: the cache starts anew.
 */
static void take_debug_files(struct run *r)
{
	if (!r->dfd || !r->us)
		return;
	if (r->finishing)
		debuginfod__wait(r->dfd, r->stop);
	if (usyms__take_fetched(r->us) && r->cache) {
		sym_cache__free(r->cache);
		r->cache = sym_cache__new();
	}
}

/* Is the summary line wanted?  After writing files, unless -q. */
static bool wants_summary(const struct run *r)
{
	return r->o->nr_outputs && !r->o->quiet;
}

/* For the summary: the stacks as the folded output shows them. */
static void count_stacks(struct run *r, const struct records *recs)
{
	struct output_opts oo = {
		.view = {
			.parts = { [PART_KERNEL] = !r->o->user_only, [PART_USER] = !r->o->kernel_only },
			.delimited = r->o->delimited,
		},
		.folded = true,
		.annotations = r->o->annotations,
		.per_cpu = r->o->per_cpu, .per_thread = r->o->per_thread,
		.module_labels = r->o->unknown_module,
	};
	size_t nr;

	r->reports++;
	if (wants_summary(r) && !output__count(recs, &oo, &nr) && nr > r->stacks)
		r->stacks = nr;
}

/* 4521 as "4,521". */
static const char *group_digits(__u64 v, char *buf, size_t sz)
{
	char digits[32];
	size_t n, off = 0;

	n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	for (size_t i = 0; i < n && off + 2 < sz; i++) {
		if (i && (n - i) % 3 == 0)
			buf[off++] = ',';
		buf[off++] = digits[i];
	}
	buf[off] = '\0';
	return buf;
}

/*
 * One line after writing files: what, how many samples and stacks, and
 * what was lost, by kind:
 * "profile: wrote cpu.svg, cpu.folded: 4,521 samples, 312 distinct stacks, 0 lost"
 */
static void print_summary(const struct run *r, const __u64 *c)
{
	struct tracker_stats ts = {};
	char files[2048], lost[256], many[48], n1[32], n2[32], n3[32];
	__u64 records_lost, total;
	size_t off = 0;

	if (!wants_summary(r))
		return;
	if (r->tracker)
		tracker__stats(r->tracker, &ts);
	records_lost = ts.lost;
	total = c[CNT_HASH_FULL] + r->missed_stacks + records_lost;
	off = snprintf(lost, sizeof(lost), "%s lost", group_digits(total, n1, sizeof(n1)));
	if (total) {
		const char *sep = " (";

		if (c[CNT_HASH_FULL] && off < sizeof(lost)) {
			off += snprintf(lost + off, sizeof(lost) - off, "%s%s sample%s: count map full",
					sep, group_digits(c[CNT_HASH_FULL], n1, sizeof(n1)),
					c[CNT_HASH_FULL] == 1 ? "" : "s");
			sep = ", ";
		}
		if (r->missed_stacks && off < sizeof(lost)) {
			off += snprintf(lost + off, sizeof(lost) - off, "%s%s stack%s not displayed",
					sep, group_digits(r->missed_stacks, n1, sizeof(n1)),
					r->missed_stacks == 1 ? "" : "s");
			sep = ", ";
		}
		if (records_lost && off < sizeof(lost))
			off += snprintf(lost + off, sizeof(lost) - off, "%s%s process record%s",
					sep, group_digits(records_lost, n1, sizeof(n1)),
					records_lost == 1 ? "" : "s");
		if (off < sizeof(lost))
			snprintf(lost + off, sizeof(lost) - off, ")");
	}
	writers__describe(&r->out, files, sizeof(files));
	snprintf(many, sizeof(many), " in the largest of %u reports", r->reports);
	/* Not a warning: -q alone silences it, as wants_summary() says. */
	log__raw("profile: wrote %s: %s samples, %s distinct stacks%s, %s", files,
		 group_digits(r->counted, n2, sizeof(n2)),
		 group_digits(r->stacks, n3, sizeof(n3)),
		 r->reports > 1 ? many : "", lost);
}

/*
 * At -F, the kernel tunes the period of an event other than a clock: what
 * one sample of this report stood for is the events counted since the last
 * report over the samples taken since.  For pprof's event-count values.
 */
static void tuned_period(struct run *r)
{
	__u64 c[NR_COUNTERS], events, taken;

	if (!r->o->freq || event__is_clock(&r->o->event) || session__counters(r->s, c))
		return;
	events = session__events(r->s);
	taken = c[CNT_TAKEN] - r->taken_mark;
	writers__set_events_per_sample(&r->out, taken ? (events - r->events_mark + taken / 2) / taken : 0);
	r->events_mark = events;
	r->taken_mark = c[CNT_TAKEN];
}

/*
 * Drain the read set, symbolize it and write it: one report.  0 or -errno;
 * a write error is returned as is, for the caller to judge.
 */
static int report_set(struct run *r, bool clear)
{
	double t0 = now_ms(), t1, t2;
	long rss0 = peak_rss_kb(), rss1 = 0, rss2 = 0;
	struct records recs = {};
	struct symbolizer sym;
	struct sample *samples = NULL;
	struct timespec now;
	size_t nr = 0;
	int err;

	err = session__drain(r->s, &samples, &nr);
	if (err) {
		pr_err("cannot read the BPF maps: %s", strerror(-err));
		return err;
	}
	t1 = now_ms();
	rss1 = peak_rss_kb();
	interps__settle(r->ints, INTERP_SETTLE_MS);
	take_debug_files(r);
	init_symbolizer(r, &sym);
	err = records__build(&recs, &sym, samples, nr);
	if (err) {
		pr_err("cannot symbolize: %s", strerror(-err));
		goto out;
	}
	t2 = now_ms();
	rss2 = peak_rss_kb();
	r->counted += counted_samples(samples, nr);
	r->missed_stacks += recs.missed_stacks;
	r->missed_enomem |= recs.missed_enomem;
	r->truncated += recs.truncated;
	completeness__add(&r->complete, &recs);
	count_stacks(r, &recs);
	tuned_period(r);
	hints__add(&r->hints, &recs);
	clock_gettime(CLOCK_REALTIME, &now);
	err = writers__write(&r->out, &recs, r->interval_no, &r->interval_start, &now);
	pr_debug("report: %zu keys (%u prefetches before); drain %.1f ms, symbolize %.1f ms, write %.1f ms; peak RSS %ld, %ld, %ld, %ld KiB",
			nr, r->prefetches, t1 - t0, t2 - t1, now_ms() - t2, rss0, rss1, rss2, peak_rss_kb());
	r->interval_start = now;
	r->interval_no++;
	if (clear && !err)
		err = session__clear(r->s, samples, nr);
out:
	records__free(&recs);
	free(samples);
	/* After records__free: the records point into the files it frees. */
	if (clear && r->us)
		usyms__forget_exited(r->us);
	if (clear)
		interps__reap(r->ints);
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

/*
 * Without -i, read and symbolize the stacks counted so far while sampling
 * goes on, so that at the end only the newest are left and the report comes
 * out quickly.  Each prefetch reads the whole count map, so it runs only
 * when the keys inserted since the last one reach half of those seen then
 * (and at least PREFETCH_MIN): a few reads while the map grows, none once
 * it is stable, and at most a third of the keys left for the end.
 * Failures only mean more work at the end.
 */
#define PREFETCH_MIN 1024

static bool prefetch_due(struct run *r)
{
	__u64 c[NR_COUNTERS], fresh, want;

	if (session__counters(r->s, c))
		return true;
	fresh = c[CNT_NEW_KEYS] - r->prefetch_mark;
	want = r->prefetch_keys / 2 > PREFETCH_MIN ? r->prefetch_keys / 2 : PREFETCH_MIN;
	if (fresh < want)
		return false;
	r->prefetch_mark = c[CNT_NEW_KEYS];
	return true;
}

static void prefetch(struct run *r)
{
	struct sample *samples = NULL;
	struct symbolizer sym;
	size_t nr = 0;

	if (!r->cache || !prefetch_due(r) || session__drain(r->s, &samples, &nr))
		return;
	r->prefetch_keys = nr;
	r->prefetches++;
	init_symbolizer(r, &sym);
	symbolizer__prefetch(&sym, samples, nr);
	free(samples);
}

static void poll_tracker(struct run *r, const struct timespec *now,
			 const struct timespec *until)
{
	long ms = (until->tv_sec - now->tv_sec) * 1000 +
		  (until->tv_nsec - now->tv_nsec) / 1000000 + 1;
	int err = tracker__poll(r->tracker, ms);

	if (err && err != -EINTR) {
		pr_warn("stopped following processes: %s; those that exit before the end will show [unknown]",
			strerror(-err));
		tracker__free(r->tracker);
		r->tracker = NULL;
	}
}

/*
 * Say once when a -p or -L target exits.  Sampling goes on: its samples so
 * far are printed at the end, and bcc users expect the duration to hold.
 */
static void check_targets(struct run *r)
{
	const struct options *o = r->o;
	const __u32 *ids = o->pids ? o->pids : o->tids;
	size_t nr = o->pids ? o->nr_pids : o->nr_tids;
	char path[32];

	for (size_t i = 0; i < nr && r->target_gone; i++) {
		if (r->target_gone[i])
			continue;
		snprintf(path, sizeof(path), "/proc/%u", ids[i]);
		if (access(path, F_OK) == 0)
			continue;
		r->target_gone[i] = true;
		pr_warn("%s %u has exited; profiling continues until the end",
			o->pids ? "PID" : "TID", ids[i]);
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

/*
 * profile -- CMD.  The command is forked first of all, before profile
 * opens anything (no file of profile's reaches it), held until sampling is
 * attached (start()), and the run ends when it exits (run_over()); profile
 * then exits with its status (end_command()).
 */
static int start_command(struct run *r)
{
	if (!r->o->cmd)
		return 0;
	r->cmd = command__start(r->o->cmd);
	return r->cmd ? 0 : -ECHILD;
}

/*
 * Let it exec.  Known to the symbolizer from now on, so that the records
 * of its exec, its mappings and its children are followed from the start.
 */
static int release_command(struct run *r)
{
	if (!r->cmd)
		return 0;
	if (r->us)
		usyms__exec(r->us, command__pid(r->cmd));
	r->exec_err = command__release(r->cmd);
	r->cmd_ran = !r->exec_err;
	return r->exec_err;
}

/* A stop request, or the command has exited. */
static bool run_over(struct run *r)
{
	return *r->stop || (r->cmd && command__exited(r->cmd));
}

/*
 * The exit status of a run with a command: the shell's 127 or 126 when it
 * could not be run; its own status when it failed (a failing build is
 * never hidden); else profile's.  After a duration, the report is out and
 * profile waits for it; a second signal stops the wait, leaving it
 * running, with 128 + that signal.
 */
static int end_command(struct run *r, int status)
{
	int cmd_status;

	if (!r->cmd)
		return status;
	if (r->exec_err)
		return r->exec_err == -ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE;
	if (!r->cmd_ran)
		return status;	/* profile failed first: command__free() kills it */
	if (!*r->stop && !command__exited(r->cmd) && r->o->duration)
		pr_warn("sampling ended after %llu s; waiting for '%s' (PID %d) to exit",
			(unsigned long long)r->o->duration, r->o->cmd[0],
			(int)command__pid(r->cmd));
	else if (!*r->stop && !command__exited(r->cmd))
		pr_warn("waiting for '%s' (PID %d) to exit", r->o->cmd[0],
			(int)command__pid(r->cmd));
	if (!command__wait(r->cmd, r->stop))
		return 128 + *r->stop;
	cmd_status = command__status(r->cmd);
	return cmd_status ? cmd_status : status;
}

/*
 * Sleep until deadline (monotonic) or a stop request.  Process records wake
 * us as they come; the targets and the prefetch are looked at once a
 * second, not on every wake-up (on a busy host that is many times a second).
 */
static void wait_until(struct run *r, const struct timespec *deadline)
{
	struct timespec now, step, tick;

	clock_gettime(CLOCK_MONOTONIC, &tick);
	tick.tv_sec += 1;
	while (!run_over(r)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!ts_before(&now, deadline))
			return;
		if (!ts_before(&now, &tick)) {
			check_targets(r);
			prefetch(r);
			tick = now;
			tick.tv_sec += 1;
		}
		step = ts_before(deadline, &tick) ? *deadline : tick;
		poll_top(r, &now, &step);
		if (*r->stop)
			return;
		if (r->tracker)
			poll_tracker(r, &now, &step);
		else
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &step, NULL);
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
			err = flip(r->s, r->stop);
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
	__u64 counters[NR_COUNTERS];
	int err = 0;

	r->finishing = true;
	session__detach(r->s);
	/* The side band's last records: new interpreter stacks to name among them. */
	if (r->tracker)
		tracker__poll(r->tracker, 0);
	/* A second Ctrl-C while printing ends the process at once. */
	signal(SIGINT, SIG_DFL);
	/*
	 * The report takes a few tens of milliseconds of CPU; on a host that
	 * the profiled workload keeps busy, do not let it wait for a time slice.
	 */
	setpriority(PRIO_PROCESS, 0, -10);
	/* The interval whose flip a stop request interrupted, then the last. */
	if (r->flip_interrupted) {
		err = flip(r->s, NULL);
		if (!err)
			err = report_set(r, true);
		if (err)
			return err;
	}
	if (r->o->interval) {
		err = flip(r->s, NULL);
		if (err)
			return err;
	}
	if (writers__wants_final(&r->out))
		err = report_set(r, false);
	if (!err)
		err = writers__close(&r->out);
	if (err)
		return err;
	err = session__counters(r->s, counters);
	if (err) {
		pr_err("cannot read the counters: %s", strerror(-err));
		return err;
	}
	report_counters(r, counters);
	hints__warn(&r->hints);
	print_summary(r, counters);
	return 0;
}

static int exit_status(int err)
{
	if (!err || err == -EPIPE)
		return 0;	/* EPIPE: the reader has gone (| head), not our failure */
	return 1;
}

/* The loader's view of the options. */
static void session_config(struct session_config *c, const struct options *o,
			   const struct limits *lim)
{
	*c = (struct session_config){
		.pids = o->pids, .nr_pids = o->nr_pids,
		.tids = o->tids, .nr_tids = o->nr_tids,
		.cgroup = o->cgroup, .cgroupmap = o->cgroupmap, .mntnsmap = o->mntnsmap,
		.include_idle = o->include_idle,
		.parts = { [PART_KERNEL] = !o->user_only, [PART_USER] = !o->kernel_only },
		.per_cpu = o->per_cpu, .per_thread = o->per_thread,
		.two_sets = o->interval > 0,
		.stack_storage = o->stack_storage, .hash_storage = o->hash_storage,
		.max_stack_depth = o->max_stack_depth,
		.unwind = o->unwind != UNWIND_FP,
		.unwind_debug = o->unwind_debug,
		.sampling = { .type = o->event.type, .config = o->event.config,
			      .freq = o->freq, .period = o->period },
		.event_name = o->event.name,
		.cpu = o->cpu,
		.cpu_online = lim->cpu_online, .nr_cpus = lim->nr_cpus,
	};
}

/* The unwinder's sync thread, when the sampler walks from tables. */
static struct unwind *new_unwind(struct session *s, const struct options *o)
{
	struct unwind_opts uo = { .mode = o->unwind, .mem_max = o->unwind_mem };
	struct unwind_maps maps;
	struct unwind *uw;

	if (session__unwind_maps(s, &maps))
		return NULL;
	uw = unwind__new(&uo, &maps);
	if (!uw) {
		pr_warn("cannot start the unwinder: %s; user stacks are walked by frame pointer only",
			strerror(errno));
		return NULL;
	}
	/* The targets named on the command line need not wait for a sample. */
	for (size_t i = 0; i < o->nr_pids; i++)
		unwind__sync(uw, o->pids[i]);
	return uw;
}

/* The interpreters whose frames are walked; named through usyms's tracker. */
static struct interps *new_interps(const struct options *o, const struct usyms *us)
{
	struct interp_config ic = { .lines = o->interp_lines, .pids = o->pids,
				    .nr_pids = o->nr_pids };

	if (!o->interp || o->kernel_only || !us)
		return NULL;
	return interps__new(interp_registry, interp_registry_len, &ic);
}

static int start(struct run *r, const struct limits *lim)
{
	const struct options *o = r->o;
	struct session_config cfg;
	struct output_config oc;
	int err;

	err = start_command(r);
	if (err)
		return err;
	r->target_gone = calloc(o->nr_pids + o->nr_tids + 1, sizeof(bool));
	if (!r->target_gone) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	r->dfd = new_debuginfod(o);
	r->us = new_usyms(o, r->dfd, r->stop);
	options__output_config(o, &oc);
	err = writers__open(&r->out, &oc);
	if (err)
		return err;
	session_config(&cfg, o, lim);
	r->ints = new_interps(o, r->us);
	cfg.interps = r->ints;
	if (r->cmd) {
		cfg.follow = true;
		cfg.cmd_pid = command__pid(r->cmd);
	}
	r->s = session__open(&cfg);
	if (!r->s)
		return -EINVAL;
	err = session__load(r->s);
	if (err)
		return err;
	/* Follow processes from before the first sample: its note needs the ring. */
	if (r->us)
		r->tracker = new_tracker(r->s, r->us, o);
	r->uw = new_unwind(r->s, o);
	if (r->tracker)
		tracker__set_unwind(r->tracker, r->uw);
	if (r->tracker)
		tracker__set_interps(r->tracker, r->ints);
	session__start_interps(r->s);
	err = session__attach(r->s);
	if (err)
		return err;
	writers__start(&r->out);
	return release_command(r);
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
	r.sample_start = start_time;
	clock_gettime(CLOCK_REALTIME, &r.interval_start);
	/* Ready the kernel symbols while the samples come in, not after. */
	if (!o->user_only)
		r.kn = knames__new(o->kallsyms);
	if (!o->interval)
		r.cache = sym_cache__new();
	err = sample_loop(&r, &start_time);
	if (!err)
		err = finish(&r);
out:
	writers__abort(&r.out);
	tracker__free(r.tracker);
	unwind__free(r.uw);
	sym_cache__free(r.cache);
	interps__free(r.ints);
	usyms__free(r.us);
	debuginfod__free(r.dfd);
	knames__free(r.kn);
	session__destroy(r.s);
	free(r.target_gone);
	hints__free(&r.hints);
	status = end_command(&r, exit_status(err));
	command__free(r.cmd);
	return status;
}
