// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The run's account of its reports, and its words on them: see summary.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "run/summary.h"
#include "output/output.h"
#include "output/writer.h"
#include "trace/tracker.h"
#include "lib/log.h"

/* Is the summary line wanted?  After writing files, unless -q. */
static bool wants_summary(const struct options *o)
{
	return o->nr_outputs && !o->quiet;
}

/* The records' samples, and apart their off-CPU time (ns). */
static __u64 counted_samples(const struct records *rs, __u64 *off_ns)
{
	__u64 sum = 0;

	for (size_t i = 0; i < rs->nr; i++) {
		if (rs->recs[i].what == COUNT_OFF_CPU)
			*off_ns += rs->recs[i].count;
		else
			sum += rs->recs[i].count;
	}
	return sum;
}

/* For the summary: the stacks as the folded output shows them. */
static void count_stacks(struct summary *sum, const struct options *o,
			 const struct records *recs)
{
	struct output_opts oo = {
		.view = {
			.parts = { [PART_KERNEL] = !o->user_only, [PART_USER] = !o->kernel_only },
			.delimited = o->delimited,
		},
		.folded = true,
		.annotations = o->annotations,
		.per_cpu = o->per_cpu, .per_thread = o->per_thread,
		.module_labels = o->unknown_module,
	};
	size_t nr;

	sum->reports++;
	if (wants_summary(o) && !output__count(recs, &oo, &nr) && nr > sum->stacks)
		sum->stacks = nr;
}

void summary__add(struct summary *sum, const struct options *o,
		  const struct records *recs)
{
	struct sample_tally *t = &sum->tally;

	t->counted += counted_samples(recs, &t->off_ns);
	t->missed_stacks += recs->missed_stacks;
	t->missed_enomem |= recs->missed_enomem;
	t->truncated += recs->truncated;
	count_stacks(sum, o, recs);
}

/* The sampling time, without the report's: a slow report is no fewer samples. */
static double sampled_seconds(const struct summary *sum)
{
	const struct timespec *t0 = &sum->sample_start, *t1 = &sum->sample_end;

	return (t1->tv_sec - t0->tv_sec) + (t1->tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * At -F, under a tenth of what one busy CPU would give; with -c, under one
 * a second.  Not for runs under a second.
 */
void summary__warn_few(const struct summary *sum, const struct options *o,
		       const __u64 *c)
{
	double secs = sampled_seconds(sum);
	unsigned long long n = c[CNT_TAKEN] - c[CNT_FILTERED];	/* counted or dropped */
	const char *ev = o->event.name;

	if (secs < 1 || n >= 1000 || o->kind != PROFILE_CPU)
		return;
	/* A tracepoint at -c 1 counted every hit: nothing to lower. */
	if (o->period && n < secs && !(event__is_tracepoint(&o->event) && o->period == 1))
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

/* What was lost, by kind: "0 lost", "3 lost (1 sample: count map full, ...)". */
static void describe_lost(const struct summary *sum, const __u64 *c,
			  __u64 records_lost, char *lost, size_t len)
{
	const struct sample_tally *t = &sum->tally;
	__u64 off = c[CNT_OFF_HASH_FULL] + c[CNT_OFF_START_FULL] + c[CNT_OFF_RESTARTED];
	__u64 total = c[CNT_HASH_FULL] + c[CNT_OFF_NESTED] + off + t->missed_stacks + records_lost +
		      sum->timer_missed;
	const char *sep = " (";
	char n1[32];
	size_t at;

	at = snprintf(lost, len, "%s lost", group_digits(total, n1, sizeof(n1)));
	if (!total)
		return;
	if (c[CNT_HASH_FULL] && at < len) {
		at += snprintf(lost + at, len - at, "%s%s sample%s: count map full",
			       sep, group_digits(c[CNT_HASH_FULL], n1, sizeof(n1)),
			       c[CNT_HASH_FULL] == 1 ? "" : "s");
		sep = ", ";
	}
	if (c[CNT_OFF_NESTED] && at < len) {
		at += snprintf(lost + at, len - at, "%s%s sample%s during a switch-in",
			       sep, group_digits(c[CNT_OFF_NESTED], n1, sizeof(n1)),
			       c[CNT_OFF_NESTED] == 1 ? "" : "s");
		sep = ", ";
	}
	if (off && at < len) {
		at += snprintf(lost + at, len - at, "%s%s off-CPU block%s",
			       sep, group_digits(off, n1, sizeof(n1)), off == 1 ? "" : "s");
		sep = ", ";
	}
	if (t->missed_stacks && at < len) {
		at += snprintf(lost + at, len - at, "%s%s stack%s not displayed",
				sep, group_digits(t->missed_stacks, n1, sizeof(n1)),
				t->missed_stacks == 1 ? "" : "s");
		sep = ", ";
	}
	if (records_lost && at < len) {
		at += snprintf(lost + at, len - at, "%s%s process record%s",
				sep, group_digits(records_lost, n1, sizeof(n1)),
				records_lost == 1 ? "" : "s");
		sep = ", ";
	}
	if (sum->timer_missed && at < len)
		at += snprintf(lost + at, len - at, "%s%s sample%s the CPUs' timers did not give",
				sep, group_digits(sum->timer_missed, n1, sizeof(n1)),
				sum->timer_missed == 1 ? "" : "s");
	if (at < len)
		snprintf(lost + at, len - at, ")");
}

void summary__print(const struct summary *sum, const struct options *o,
		    const __u64 *c, const struct tracker *t,
		    const struct writers *out)
{
	struct tracker_stats ts = {};
	char files[2048], lost[384], many[48], n2[32], n3[32], what[96];

	if (!wants_summary(o))
		return;
	if (t)
		tracker__stats(t, &ts);
	describe_lost(sum, c, ts.lost, lost, sizeof(lost));
	writers__describe(out, files, sizeof(files));
	snprintf(many, sizeof(many), " in the largest of %u reports", sum->reports);
	/* Not a warning: -q alone silences it, as wants_summary() says. */
	if (o->kind == PROFILE_CPU)
		snprintf(what, sizeof(what), "%s samples%s%s",
			 group_digits(sum->tally.counted, n2, sizeof(n2)),
			 event__is_tracepoint(&o->event) ? " of " : "",
			 event__is_tracepoint(&o->event) ? o->event.name : "");
	else if (o->kind == PROFILE_OFF_CPU)
		snprintf(what, sizeof(what), "%.3f s off-CPU", sum->tally.off_ns / 1e9);
	else
		snprintf(what, sizeof(what), "%s samples and %.3f s off-CPU",
			 group_digits(sum->tally.counted, n2, sizeof(n2)), sum->tally.off_ns / 1e9);
	/* An agent without -o files sends, it writes nothing. */
	log__raw("profile: %s %s: %s, %s distinct stacks%s, %s",
		 strncmp(files, "OTLP to ", 8) ? "wrote" : "sent", files, what,
		 group_digits(sum->stacks, n3, sizeof(n3)),
		 sum->reports > 1 ? many : "", lost);
}
