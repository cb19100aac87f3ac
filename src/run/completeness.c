// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stack completeness: see completeness.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/completeness.h"
#include "trace/trace.h"
#include "lib/log.h"

/*
 * Go's own roots: a goroutine's first frame (goexit), the first thread's
 * (rt0_go) and the others' (mstart), and the functions that switch to a
 * thread's system stack (mcall, morestack), where its chain of frames
 * starts.  ucontext's coroutines start in __start_context.
 */
static const char *const root_names[] = {
	"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
	"clone3", "__clone3", "__clone", "clone", "__start_context",
	"runtime.goexit", "runtime.rt0_go", "runtime.mstart", "runtime.mcall",
	"runtime.morestack",
};

/* Go names its assembly functions NAME.abi0 (since Go 1.17). */
#define GO_ABI0 ".abi0"

bool completeness__is_root(const char *name)
{
	size_t len;

	if (!name)
		return false;
	len = strlen(name);
	if (len > strlen(GO_ABI0) && !strcmp(name + len - strlen(GO_ABI0), GO_ABI0))
		len -= strlen(GO_ABI0);
	for (size_t i = 0; i < sizeof(root_names) / sizeof(root_names[0]); i++)
		if (strlen(root_names[i]) == len && !strncmp(name, root_names[i], len))
			return true;
	return false;
}

/* Frames of a user stack that are real frames, not pseudo-frames. */
static __u32 real_frames(const struct stack *st)
{
	__u32 n = st->nr;

	while (n && st->frames[n - 1]->kind == FRAME_NONE)
		n--;
	return n;
}

/*
 * Where a stack of n real frames stopped: the outermost frame that lies in
 * a known object (a garbage return address beyond it has none).
 */
static const char *stop_module(const struct stack *st, __u32 n)
{
	/* An interpreter's frame names its source file, not an object. */
	for (__u32 k = n; k > 0; k--)
		if (st->frames[k - 1]->module && st->frames[k - 1]->kind != FRAME_INTERP)
			return st->frames[k - 1]->module;
	return "[unknown]";
}

static void count_stop(struct completeness *c, const char *name, __u64 count)
{
	for (__u32 i = 0; i < c->nr_modules; i++) {
		if (!strcmp(c->modules[i].name, name)) {
			c->modules[i].samples += count;
			return;
		}
	}
	if (c->nr_modules == COMPLETENESS_MODULES) {
		c->other += count;
		return;
	}
	snprintf(c->modules[c->nr_modules].name, sizeof(c->modules[0].name), "%s", name);
	c->modules[c->nr_modules++].samples = count;
}

void completeness__add(struct completeness *c, const struct records *rs)
{
	for (size_t i = 0; i < rs->nr; i++) {
		const struct record *r = &rs->recs[i];
		const struct part *p = &r->parts[PART_USER];
		bool complete = false;
		__u64 w = c->off_cpu ? r->count / 1000 : r->count;
		__u32 n;

		if ((r->what == COUNT_OFF_CPU) != c->off_cpu || p->state != PART_OK ||
		    !p->stack->nr)
			continue;
		n = real_frames(p->stack);
		if (!n)
			continue;
		for (__u32 k = n; k > 0 && k + 3 > n && !complete; k--)
			complete = completeness__is_root(p->stack->frames[k - 1]->name);
		c->samples += w;
		c->frames += (__u64)n * w;
		if (complete)
			c->complete += w;
		else
			count_stop(c, stop_module(p->stack, n), w);
	}
}

void completeness__worst(const struct completeness *c, int n, char *buf, size_t len)
{
	__u64 incomplete = c->samples - c->complete;
	bool used[COMPLETENESS_MODULES] = {};
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < n && incomplete && off < len; k++) {
		int best = -1;

		for (__u32 i = 0; i < c->nr_modules; i++)
			if (!used[i] && (best < 0 || c->modules[i].samples > c->modules[best].samples))
				best = i;
		if (best < 0 || !c->modules[best].samples)
			break;
		used[best] = true;
		off += snprintf(buf + off, len - off, "%s%s (%.0f%%)",
				k ? ", " : "", c->modules[best].name,
				100.0 * c->modules[best].samples / incomplete);
	}
}

/*
 * Few stacks whole: say where they stop and what would help, once.  Not
 * for a handful of samples, which say little.
 */
static void warn_incomplete(const struct completeness *c)
{
	char worst[512];

	if (c->samples < 100 || c->complete * 2 >= c->samples)
		return;
	completeness__worst(c, 3, worst, sizeof(worst));
	pr_warn("only %.0f%% of user stacks reach their root frame; most stop in %s; %s",
		100.0 * c->complete / c->samples, worst, c->advice);
}

void completeness__report(const struct completeness *c, enum report_pass pass)
{
	if (pass == REPORT_WARN) {
		warn_incomplete(c);
		return;
	}
	pr_info("user stack completeness: %.1f%% of %llu %s reach a root frame, %.1f frames on average",
		c->samples ? 100.0 * c->complete / c->samples : 0.0,
		(unsigned long long)c->samples, c->off_cpu ? "us off-CPU" : "samples",
		c->samples ? (double)c->frames / c->samples : 0.0);
}
