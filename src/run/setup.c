// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* How the run's modules are built and wired: see setup.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run/setup.h"
#include "run/command.h"
#include "loader/session.h"
#include "symbols/debuginfod.h"
#include "symbols/knames.h"
#include "symbols/procfs.h"
#include "symbols/usyms.h"
#include "trace/tracker.h"
#include "unwind/unwind.h"
#include "interp/interp.h"
#include "lib/log.h"

int setup__command(struct command **cmd, const struct options *o)
{
	if (!o->cmd)
		return 0;
	*cmd = command__start(o->cmd, &o->run_as);
	return *cmd ? 0 : -ECHILD;
}

int setup__release_command(const struct modules *m, struct command *cmd)
{
	if (!cmd)
		return 0;
	if (m->us)
		usyms__exec(m->us, command__pid(cmd));
	return command__release(cmd);
}

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

void setup__symbols(struct modules *m, const struct options *o,
		    volatile sig_atomic_t *stop)
{
	m->dfd = new_debuginfod(o);
	m->us = new_usyms(o, m->dfd, stop);
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
		.sample_events = o->kind != PROFILE_OFF_CPU,
		.off_cpu = o->kind != PROFILE_CPU,
		.off_min_ns = o->min_block_us * 1000, .off_max_ns = o->max_block_us * 1000,
		.off_states = o->state_mask,
		.cpu = o->cpu,
		.cpu_online = lim->cpu_online, .nr_cpus = lim->nr_cpus,
	};
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

/* How long the start waits for the named targets' tables, at most. */
#define TARGETS_SYNC_WAIT_MS 1000
#define TARGETS_SYNC_POLL_MS 2

/*
 * Until its first sync a process is walked by frame pointer alone, which
 * stops at the first frame without one: a -p run of burn kept
 * 1-2% of its samples cut at __libc_start_call_main or start_thread, from
 * the first 40-60 ms.  The targets are known: sample them only once their
 * tables are in, or after TARGETS_SYNC_WAIT_MS (a process with hundreds
 * of objects is sampled while the rest load).  Every sync counts, failed
 * ones too (a target gone), so this never waits for a pid that cannot be
 * synced.
 */
#define SYNC_THREADS_MAX 64

/*
 * -L: the threads' processes, each once (the first SYNC_THREADS_MAX; the
 * others are synced by their first sample); how many were asked for.  A
 * thread gone already is the -L check's to report.
 */
static size_t sync_threads(struct unwind *uw, const __u32 *tids, size_t nr)
{
	struct procfs_status st;
	size_t asked = 0;
	__u32 seen[SYNC_THREADS_MAX];
	int fd;

	for (size_t i = 0; i < nr; i++) {
		size_t j;

		fd = procfs__open_pid(tids[i]);
		if (fd < 0)
			continue;
		if (procfs__status(fd, &st) || !st.tgid)
			st.tgid = 0;
		close(fd);
		for (j = 0; j < asked && seen[j] != st.tgid; j++)
			;
		if (!st.tgid || j < asked || asked == SYNC_THREADS_MAX)
			continue;
		seen[asked++] = st.tgid;
		unwind__sync(uw, st.tgid);
	}
	return asked;
}

static void wait_targets_synced(struct unwind *uw, size_t nr_pids)
{
	const struct timespec poll = { .tv_nsec = TARGETS_SYNC_POLL_MS * 1000000L };
	struct unwind_stats st;

	for (int ms = 0; ms < TARGETS_SYNC_WAIT_MS; ms += TARGETS_SYNC_POLL_MS) {
		unwind__stats(uw, &st);
		/* Synced, and their new tables (and libc's...) in uw_tables. */
		if (st.syncs >= nr_pids && !st.inserting && st.ahead_ns)
			return;
		nanosleep(&poll, NULL);
	}
	pr_debug("unwind: sampling starts before the targets' tables are in");
}

/* The unwinder's sync thread, when the sampler walks from tables. */
static struct unwind *new_unwind(struct session *s, const struct options *o)
{
	struct unwind_opts uo = { .mode = o->unwind, .mem_max = o->unwind_mem,
				  .need_klist = session__need_klist, .klist_arg = s };
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
	/* A command's processes are all new. */
	if (o->cmd)
		unwind__new_process(uw);
	/* The targets named on the command line need not wait for a sample. */
	for (size_t i = 0; i < o->nr_pids; i++)
		unwind__sync(uw, o->pids[i]);
	if (o->nr_pids)
		wait_targets_synced(uw, o->nr_pids);
	else if (o->nr_tids)
		wait_targets_synced(uw, sync_threads(uw, o->tids, o->nr_tids));
	else
		/* A command, or the host: the shared objects compiled ahead. */
		wait_targets_synced(uw, 0);
	return uw;
}

/* The interpreters whose frames are walked; named through usyms's tracker. */
static struct interps *new_interps(const struct options *o, const struct usyms *us)
{
	struct interp_config ic = { .lines = o->interp_lines, .pids = o->pids,
				    .nr_pids = o->nr_pids };
	struct interps *ints;

	if (!o->interp || o->kernel_only || !us)
		return NULL;
	ints = interps__new(interp_registry, interp_registry_len, &ic);
	if (!ints)
		pr_warn("cannot set up the interpreters' readers: %s; their processes show native frames only",
			strerror(errno));
	return ints;
}

int setup__sampler(struct modules *m, const struct options *o,
		   const struct limits *lim, const struct command *cmd)
{
	struct session_config cfg;
	int err;

	session_config(&cfg, o, lim);
	m->ints = new_interps(o, m->us);
	cfg.interps = m->ints;
	if (cmd) {
		cfg.follow = true;
		cfg.cmd_pid = command__pid(cmd);
	}
	m->s = session__open(&cfg);
	if (!m->s)
		return -EINVAL;
	err = session__load(m->s);
	if (err)
		return err;
	/* Follow processes from before the first sample: its note needs the ring. */
	if (m->us)
		m->tracker = new_tracker(m->s, m->us, o);
	m->uw = new_unwind(m->s, o);
	/* Interpreter frames are named from the tracker's notes: none without it. */
	if (m->tracker) {
		tracker__set_unwind(m->tracker, m->uw);
		tracker__set_interps(m->tracker, m->ints);
		session__start_interps(m->s);
	}
	return 0;
}

void setup__knames(struct modules *m, const struct options *o)
{
	if (!o->user_only)
		m->kn = knames__new(o->kallsyms);
}

const char *setup__stack_advice(const struct modules *m, const struct options *o)
{
	if (m->uw)
		return "-v says why walks ended, --unwind-debug marks each stack";
	if (o->unwind == UNWIND_FP)
		return "--unwind=auto walks code built without frame pointers";
	return "the .eh_frame unwinder is not running (see above)";
}

void setup__free(struct modules *m)
{
	interps__free(m->ints);
	tracker__free(m->tracker);
	unwind__free(m->uw);
	usyms__free(m->us);
	debuginfod__free(m->dfd);
	knames__free(m->kn);
	session__destroy(m->s);
}
