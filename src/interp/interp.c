// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "interp/python/python.h"
#include "trace/trace.h"

/* The registry: one row per runtime. */
const struct interp_ops *const interp_registry[] = {
	&python_interp,
};
const size_t interp_registry_len = sizeof(interp_registry) / sizeof(interp_registry[0]);

const char *interp__name(__u8 kind)
{
	for (size_t i = 0; i < interp_registry_len; i++)
		if (interp_registry[i]->kind == kind)
			return interp_registry[i]->name;
	return NULL;
}

struct interps {
	const struct interp_ops *by_kind[MAX_INTERP_KINDS + 1];	/* [0]: none */
	void *ctx[MAX_INTERP_KINDS + 1];	/* started: what start() returned */
	struct interp_config cfg;
	char off_options[128];
};

struct interps *interps__new(const struct interp_ops *const *table, size_t n,
			     const struct interp_config *cfg)
{
	struct interps *ints = calloc(1, sizeof(*ints));
	size_t off = 0;

	if (!ints)
		return NULL;
	ints->cfg = *cfg;
	for (size_t i = 0; i < n; i++) {
		__u8 kind = table[i]->kind;

		/* Two rows of one kind would read each other's stacks. */
		if (kind < 1 || kind > MAX_INTERP_KINDS || ints->by_kind[kind]) {
			free(ints);
			errno = EINVAL;
			return NULL;
		}
		ints->by_kind[kind] = table[i];
		if (off < sizeof(ints->off_options))
			off += snprintf(ints->off_options + off, sizeof(ints->off_options) - off,
					" --%s=off", table[i]->name);
	}
	return ints;
}

void interps__free(struct interps *ints)
{
	if (!ints)
		return;
	for (int k = 1; k <= MAX_INTERP_KINDS; k++)
		if (ints->ctx[k] && ints->by_kind[k]->free)
			ints->by_kind[k]->free(ints->ctx[k]);
	free(ints);
}

int interps__configure(const struct interps *ints, struct profile_bpf *skel,
		       const struct kbtf *kb)
{
	int err = 0;

	if (!ints) {
		for (size_t i = 0; i < interp_registry_len && !err; i++)
			if (interp_registry[i]->configure)
				err = interp_registry[i]->configure(skel, kb, false);
		return err;
	}
	for (int k = 1; k <= MAX_INTERP_KINDS && !err; k++)
		if (ints->by_kind[k] && ints->by_kind[k]->configure)
			err = ints->by_kind[k]->configure(skel, kb, true);
	return err;
}

void interps__set_walker(struct interps *ints, int (*need)(void *arg), void *arg)
{
	if (!ints)
		return;
	ints->cfg.need_walker = need;
	ints->cfg.walker_arg = arg;
}

void interps__start(struct interps *ints, struct profile_bpf *skel)
{
	const struct interp_config *c;

	if (!ints)
		return;
	c = &ints->cfg;
	for (int k = 1; k <= MAX_INTERP_KINDS; k++) {
		const struct interp_ops *ops = ints->by_kind[k];

		if (!ops || !ops->start)
			continue;
		ints->ctx[k] = ops->start(skel, c);
		/* Found before the first sample, but never waited for long. */
		for (size_t i = 0; ints->ctx[k] && ops->detect && i < c->nr_pids; i++)
			ops->detect(ints->ctx[k], c->pids[i]);
		if (ints->ctx[k] && ops->settle && c->nr_pids)
			ops->settle(ints->ctx[k], INTERP_SETTLE_MS);
	}
}

const char *interps__off_options(const struct interps *ints)
{
	return ints ? ints->off_options : "";
}

/* Each started runtime that has the hook, with its context. */
#define for_each_started(ints, k, hook)						\
	for (int k = 1; ints && k <= MAX_INTERP_KINDS; k++)			\
		if (ints->ctx[k] && ints->by_kind[k]->hook)

void interps__detect(struct interps *ints, __u32 pid)
{
	for_each_started(ints, k, detect)
		ints->by_kind[k]->detect(ints->ctx[k], pid);
}

void interps__exec(struct interps *ints, __u32 pid)
{
	for_each_started(ints, k, exec)
		ints->by_kind[k]->exec(ints->ctx[k], pid);
}

void interps__fork(struct interps *ints, __u32 ppid, __u32 pid)
{
	for_each_started(ints, k, fork)
		ints->by_kind[k]->fork(ints->ctx[k], ppid, pid);
}

bool interps__waiting(struct interps *ints)
{
	for_each_started(ints, k, waiting)
		if (ints->by_kind[k]->waiting(ints->ctx[k]))
			return true;
	return false;
}

void interps__forget(struct interps *ints, __u32 pid)
{
	for_each_started(ints, k, forget)
		ints->by_kind[k]->forget(ints->ctx[k], pid);
}

void interps__mapping(struct interps *ints, __u32 pid, const char *path)
{
	for_each_started(ints, k, detect) {
		const struct interp_ops *ops = ints->by_kind[k];

		if (ops->seen)
			ops->seen(ints->ctx[k], path);
		if (ops->wants_mapping && ops->wants_mapping(path))
			(ops->mapped ? ops->mapped : ops->detect)(ints->ctx[k], pid);
	}
}

void interps__note(struct interps *ints, const void *note, size_t len)
{
	struct note_hdr h;

	if (!ints || len < sizeof(h))
		return;
	memcpy(&h, note, sizeof(h));
	if (h.type != NOTE_INTERP_STACK || h.kind < 1 || h.kind > MAX_INTERP_KINDS)
		return;
	if (ints->ctx[h.kind] && ints->by_kind[h.kind]->note)
		ints->by_kind[h.kind]->note(ints->ctx[h.kind], note, len);
}

void interps__settle(struct interps *ints, unsigned int timeout_ms)
{
	for_each_started(ints, k, settle)
		ints->by_kind[k]->settle(ints->ctx[k], timeout_ms);
}

void interps__reap(struct interps *ints)
{
	for_each_started(ints, k, reap)
		ints->by_kind[k]->reap(ints->ctx[k]);
}

/* Also for a runtime that could not start: it says so in its warnings. */
void interps__report(const struct interps *ints, const __u64 *counters,
		     enum report_pass pass)
{
	for (int k = 1; ints && k <= MAX_INTERP_KINDS; k++)
		if (ints->by_kind[k] && ints->by_kind[k]->report)
			ints->by_kind[k]->report(ints->ctx[k], counters + CNT_INTERP(k), pass);
}

static const struct interp_ops *ops_of(const struct interps *ints, unsigned int kind)
{
	if (!ints || kind < 1 || kind > MAX_INTERP_KINDS)
		return NULL;
	return ints->by_kind[kind];
}

int interps__decode(const struct interps *ints, const __u64 *ips, int n, __u32 end,
		    struct trace_frame *frames)
{
	__u32 kind = INTERP_END_KIND(end);
	const struct interp_ops *ops = ops_of(ints, kind);
	int nr;

	if (!ops || !ops->decode)
		return 0;
	nr = ops->decode(ips, n, INTERP_END_OWN(end), frames);
	for (int i = 0; i < nr; i++)
		frames[i].interp = kind;
	return nr;
}

void interps__resolve(const struct interps *ints, __u32 pid, struct frame *f)
{
	const struct interp_ops *ops = ops_of(ints, f->interp);

	if (ops && ops->resolve && ints->ctx[f->interp])
		ops->resolve(ints->ctx[f->interp], pid, f);
}

const char *interps__mark_name(const struct interps *ints, __u8 kind, __u64 mark)
{
	const struct interp_ops *ops = ops_of(ints, kind);

	return ops && ops->mark_name ? ops->mark_name(mark) : NULL;
}

bool interps__is_eval_frame(const struct interps *ints, __u8 kind, const struct frame *f)
{
	const struct interp_ops *ops = ops_of(ints, kind);

	return ops && ops->is_eval_frame && ops->is_eval_frame(f);
}

bool interps__is_shim_frame(const struct interps *ints, __u8 kind, const struct frame *f)
{
	const struct interp_ops *ops = ops_of(ints, kind);

	return ops && ops->is_shim_frame && ops->is_shim_frame(f);
}
