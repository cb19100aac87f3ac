// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Processes whose samples sit in unnamed JIT code, and what to do about it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/hints.h"
#include "lib/log.h"
#include "lib/util.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The runtime a program or library name gives away, if any. */
static enum hint_runtime runtime_of_name(const char *name)
{
	if (!strcmp(name, "java") || !strcmp(name, "libjvm.so"))
		return HINT_RT_JAVA;
	if (!strcmp(name, "node") || !strcmp(name, "nodejs") ||
	    !strncmp(name, "libnode.so", 10))
		return HINT_RT_NODE;
	return HINT_RT_OTHER;
}

/* From /proc/PID/exe, while the process is there. */
static enum hint_runtime runtime_of_exe(const struct hints *h, __u32 pid)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%u/exe", h->proc_root ? h->proc_root : "/proc", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return HINT_RT_OTHER;
	exe[n] = '\0';
	return runtime_of_name(base_name(exe));
}

static struct hint_proc *get_proc(struct hints *h, const struct record *r)
{
	void *id = htab__get(&h->by_pid, r->pid, 0);
	struct hint_proc *p;

	if (id)
		return &h->procs[htab__val_id(id) - 1];
	if (util__grow_array((void **)&h->procs, &h->cap, h->nr + 1, sizeof(*h->procs)) ||
	    htab__put(&h->by_pid, r->pid, 0, htab__id_val(h->nr + 1)))
		return NULL;
	p = &h->procs[h->nr++];
	memset(p, 0, sizeof(*p));
	p->pid = r->pid;
	p->runtime = runtime_of_exe(h, r->pid);
	return p;
}

/* Samples through unnamed JIT code, not only with it at the leaf. */
static bool has_unnamed_jit(const struct stack *st)
{
	for (__u32 i = 0; i < st->nr; i++)
		if (frame__is_unnamed_jit(st->frames[i]))
			return true;
	return false;
}

/*
 * The runtime, from the comm or a module on the stack, if the exe did not
 * say.  A module is one string for all its frames: the one read last is
 * not read again (a stack's frames run in few modules, mostly the same).
 */
static void note_runtime(struct hint_proc *p, const struct record *r,
			 const struct stack *st)
{
	if (p->runtime == HINT_RT_OTHER)
		p->runtime = runtime_of_name(r->comm);
	for (__u32 i = 0; i < st->nr && p->runtime == HINT_RT_OTHER; i++) {
		const char *m = st->frames[i]->module;

		if (!m || m == p->module)
			continue;
		p->module = m;
		p->runtime = runtime_of_name(base_name(m));
	}
}

void hints__add(struct hints *h, const struct records *rs)
{
	/* Frames and their module strings live as long as one report. */
	for (size_t i = 0; i < h->nr; i++)
		h->procs[i].module = NULL;
	for (size_t i = 0; i < rs->nr; i++) {
		const struct record *r = &rs->recs[i];
		const struct part *u = &r->parts[PART_USER];
		const struct frame *leaf;
		struct hint_proc *p;

		/* CPU samples only: off-CPU counts are nanoseconds. */
		if (u->state != PART_OK || !u->stack->nr || !r->count || r->what != COUNT_ON_CPU)
			continue;
		p = get_proc(h, r);
		if (!p)
			return;
		if (!p->main_comm) {
			memcpy(p->comm, r->comm, sizeof(p->comm));
			p->comm[sizeof(p->comm) - 1] = '\0';
			p->main_comm = r->tid == r->pid;
		}
		leaf = u->stack->frames[0];
		p->user += r->count;
		if (frame__is_unnamed_jit(leaf))
			p->anon += r->count;
		if (has_unnamed_jit(u->stack))
			p->jit += r->count;
		note_runtime(p, r, u->stack);
	}
}

/* Most samples with an unnamed JIT leaf: any process. */
static bool mostly_jit(const struct hint_proc *p)
{
	return p->anon * 2 >= p->user;
}

/* A java or node process whose stacks often pass through unnamed JIT code. */
static bool runtime_jit(const struct hint_proc *p)
{
	return (p->runtime == HINT_RT_JAVA || p->runtime == HINT_RT_NODE) &&
	       p->jit * 100 >= p->user * HINTS_RUNTIME_PCT;
}

const char *hints__line(const struct hint_proc *p, char *buf, size_t size)
{
	bool leaf = mostly_jit(p);
	__u64 part = leaf ? p->anon : p->jit;
	unsigned int pct = p->user ? (unsigned int)(part * 100 / p->user) : 0;
	char comm[TASK_COMM_LEN];
	int n;

	/* A comm is anything its task set: no controls on the terminal. */
	memcpy(comm, p->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	for (char *c = comm; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	n = snprintf(buf, size, "%s (PID %u): %u%% of its user-space samples %s unnamed JIT code (anonymous memory); ",
		     comm, p->pid, pct, leaf ? "are in" : "pass through");
	if (n < 0 || (size_t)n >= size)
		return buf;
	switch (p->runtime) {
	case HINT_RT_JAVA:
		snprintf(buf + n, size - n,
			 "run jcmd %u Compiler.perfmap while it runs and profile again, and start java with -XX:+PreserveFramePointer for whole stacks",
			 p->pid);
		break;
	case HINT_RT_NODE:
		snprintf(buf + n, size - n,
			 "start node with --perf-basic-prof (and --interpreted-frames-native-stack) and profile again");
		break;
	default:
		snprintf(buf + n, size - n,
			 "have its runtime write /tmp/perf-%u.map (the perf JIT map format; often a runtime flag) and profile again",
			 p->pid);
		break;
	}
	return buf;
}

static bool qualifies(const struct hint_proc *p)
{
	return p->user >= HINTS_MIN_SAMPLES && (mostly_jit(p) || runtime_jit(p));
}

static int by_anon(const void *pa, const void *pb)
{
	const struct hint_proc *a = *(const struct hint_proc *const *)pa;
	const struct hint_proc *b = *(const struct hint_proc *const *)pb;

	if (a->anon != b->anon)
		return a->anon > b->anon ? -1 : 1;
	if (a->jit != b->jit)
		return a->jit > b->jit ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

size_t hints__pick(const struct hints *h, const struct hint_proc **out, size_t max)
{
	const struct hint_proc **list;
	size_t nr = 0;

	for (size_t i = 0; i < h->nr; i++)
		nr += qualifies(&h->procs[i]);
	if (!nr)
		return 0;
	list = calloc(nr, sizeof(*list));
	if (!list)
		return 0;
	nr = 0;
	for (size_t i = 0; i < h->nr; i++)
		if (qualifies(&h->procs[i]))
			list[nr++] = &h->procs[i];
	qsort(list, nr, sizeof(*list), by_anon);
	memcpy(out, list, (nr < max ? nr : max) * sizeof(*list));
	free(list);
	return nr;
}

void hints__warn(const struct hints *h)
{
	const struct hint_proc *top[HINTS_MAX_LINES];
	size_t nr = hints__pick(h, top, HINTS_MAX_LINES);
	char line[512];

	for (size_t i = 0; i < nr && i < HINTS_MAX_LINES; i++)
		pr_warn("%s", hints__line(top[i], line, sizeof(line)));
	if (nr > HINTS_MAX_LINES)
		pr_warn("%zu more processes run mostly in unnamed JIT code", nr - HINTS_MAX_LINES);
}

void hints__free(struct hints *h)
{
	free(h->procs);
	htab__free(&h->by_pid);
	memset(h, 0, sizeof(*h));
}
