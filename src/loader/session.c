// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * BPF lifecycle.  The skeleton is opened, configured (read-only data and
 * map sizes), loaded and attached in separate steps, so that each failure
 * can be reported for what it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include "loader/session.h"
#include "unwind/unwind.h"
#include "trace/symbolize.h"
#include "loader/kbtf.h"
#include "interp/interp.h"
#include "lib/util.h"
#include "lib/share.h"
#include "lib/cputime.h"
#include "profile.skel.h"
#include "klist.skel.h"
#include "loader/bulk.h"
#include "lib/log.h"

/* The inode number of the initial PID namespace (include/linux/proc_ns.h). */
#define PROC_PID_INIT_INO 0xEFFFFFFCU

#define DRAIN_CHUNK 1024

/* The kernel's "operation not supported" (include/linux/errno.h), not libc's. */
#define ENOTSUPP 524

struct map_set {
	struct bpf_map *counts, *stacks, *spilled, *users;
};

/*
 * A program loaded on first need, by a thread of its own, so that a run
 * that never needs it verifies nothing for it:
 * - the interpreters' walker, do_sample_interp (bpf/profile.bpf.c), when a
 *   runtime first finds an interpreter (walker__need()), from a second
 *   open of the object that creates no map: it shares every map of the
 *   first, read-only data included, so that it runs as configured;
 * - the lists made in the kernel for new processes, uw_klist_exec,
 *   uw_klist_rtld and uw_klist_fork (bpf/klist.bpf.c), when the first new process is seen
 *   (session__need_klist()): an object of its own, on the sampler's maps.
 * Every field but thread is under lock.
 */
struct lazy_prog {
	const char *what;		/* its name in messages */
	const char *without;		/* what a run without it gets */
	bool quiet;			/* a failure is said by the -v report, not warned */
	int (*load)(struct session *s, __u32 *insns);
	struct session *s;
	pthread_mutex_t lock;
	pthread_t thread;		/* lazy__run(), when started */
	bool started;			/* once: a failure is not tried again */
	bool joined;
	bool done;
	int err;
	bool loaded;			/* in its slot */
	double load_ms;			/* open, load and slot */
	__u32 insns;			/* the verifier's count */
};

struct session {
	struct session_config cfg;
	struct profile_bpf *skel;
	struct lazy_prog walker;	/* do_sample_interp */
	struct lazy_prog klist;		/* bpf/klist.bpf.c */
	struct klist_bpf *klist_skel;	/* ... once loaded */
	struct bpf_link *klist_rtld;	/* its probe of ld.so */
	double load_ms;		/* the skeleton's load (verifier included) */
	struct map_set sets[2];
	int read_set;		/* the set drained and read from */
	struct count_key *batch_keys;	/* DRAIN_CHUNK each, for lookup_batch */
	__u64 *batch_vals;
	struct sample *batch;		/* DRAIN_CHUNK: the keys handed on */
	/*
	 * The maps read in bulk (src/loader/bulk.c), made on first need
	 * (get_bulk()); NULL after that if it could not be.
	 */
	struct bulk *bulk;
	bool bulk_tried;
	bool new_keys_failed;		/* prefetches read every key */
	__u64 *want_ids;		/* want_trace()'s, kept for the next */
	size_t want_cap;
	__u64 read_one;			/* spilled stacks read a call each */
	struct bpf_link **links;
	struct bpf_link *uw_links[2];	/* exec and exit: see uw_forget() */
	struct bpf_link *follow_links[3];	/* exec, fork, exit: profile -- CMD */
	struct bpf_link *tp_link;	/* -e CATEGORY:NAME: every CPU's hits */
	struct bpf_link *off_links[2];	/* switch out, switch in: off-CPU time */
	struct bpf_program *off_in;	/* the switch-in's program: kprobe or fentry */
	int *pfds;
	int *pcpus;		/* the CPU of each of pfds */
	__u64 events_closed;	/* counted by the events detached so far */
	int nr_links;
	int nr_cpus;		/* possible CPUs: per-CPU map value count */
	bool flip_pending;	/* switched away from flip_from, not yet idle */
	int flip_from;
};

static const char *load_hint(int err)
{
	switch (-err) {
	case EPERM:
	case EACCES:
		return "loading BPF needs root, or CAP_BPF and CAP_PERFMON: run as root";
	case ENOMEM:
	case E2BIG:
		return "not enough memory for the maps: lower --stack-storage-size or --hash-storage-size";
	case ENOENT:
	case ESRCH:
		return "the kernel lacks a needed BPF feature or BTF (/sys/kernel/btf/vmlinux)";
	default:
		return "run with -vv to see libbpf's log";
	}
}

static int session__configure(struct session *s);
static int walker__load(struct session *s, __u32 *insns);
static int klist__load(struct session *s, __u32 *insns);
static void lazy__init(struct lazy_prog *p, struct session *s, const char *what,
		       const char *without, int (*load)(struct session *, __u32 *));

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Open the skeleton and set it up for s->cfg. */
static int open_skel(struct session *s)
{
	s->skel = profile_bpf__open();
	if (!s->skel) {
		pr_err("cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	s->sets[0] = (struct map_set){ s->skel->maps.counts0, s->skel->maps.stacks0,
				       s->skel->maps.spilled0, s->skel->maps.users0 };
	s->sets[1] = (struct map_set){ s->skel->maps.counts1, s->skel->maps.stacks1,
				       s->skel->maps.spilled1, s->skel->maps.users1 };
	return session__configure(s);
}

struct session *session__open(const struct session_config *cfg)
{
	struct session *s;
	__u64 cpu0;
	int n, err;

	n = libbpf_num_possible_cpus();
	if (n <= 0) {
		pr_err("cannot count possible CPUs: %s", strerror(-n));
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->cfg = *cfg;
	s->nr_cpus = n;
	lazy__init(&s->walker, s, "the interpreter frame walker",
		   "interpreters' processes show native frames only", walker__load);
	/* An aid, not a need: its failure (no uprobe without root) is said at -v. */
	lazy__init(&s->klist, s, "the kernel's lists of new processes' mappings",
		   "a new process's samples before its first sync are walked by frame pointer only",
		   klist__load);
	s->klist.quiet = true;
	s->links = calloc(n, sizeof(*s->links));
	s->pfds = calloc(n, sizeof(*s->pfds));
	s->pcpus = calloc(n, sizeof(*s->pcpus));
	s->batch_keys = calloc(DRAIN_CHUNK, sizeof(*s->batch_keys));
	s->batch_vals = calloc(DRAIN_CHUNK, sizeof(*s->batch_vals));
	s->batch = calloc(DRAIN_CHUNK, sizeof(*s->batch));
	if (!s->links || !s->pfds || !s->pcpus || !s->batch_keys || !s->batch_vals || !s->batch)
		goto nomem;
	cpu0 = cputime__now();
	err = open_skel(s);
	/* The object's parse and the kernel's BTF, read for CO-RE. */
	cputime__section("BPF open", cpu0);
	if (err) {
		session__destroy(s);
		return NULL;
	}
	return s;
nomem:
	pr_err("out of memory");
	session__destroy(s);
	return NULL;
}

static int configure_pidns(struct profile_bpf *skel)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st)) {
		pr_err("cannot stat /proc/self/ns/pid: %s; is /proc mounted?",
			strerror(errno));
		return -errno;
	}
	if (st.st_ino == PROC_PID_INIT_INO)
		return 0;
	skel->rodata->use_pidns = true;
	skel->rodata->pidns_dev = st.st_dev;
	skel->rodata->pidns_ino = st.st_ino;
	return 0;
}

/* Size a pinned bcc-style map's twin so that libbpf can reuse its fd. */
static int reuse_pinned(struct bpf_map *map, const char *path, const char *opt)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd, err;

	fd = bpf_obj_get(path);
	if (fd < 0) {
		pr_err("%s '%s': %s", opt, path, strerror(errno));
		return -errno;
	}
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (!err && (info.type != BPF_MAP_TYPE_HASH || info.key_size != 8)) {
		pr_err("%s '%s' must be a hash map with 8-byte keys",
			opt, path);
		err = -EINVAL;
	}
	if (!err)
		err = bpf_map__set_value_size(map, info.value_size);
	if (!err)
		err = bpf_map__set_max_entries(map, info.max_entries);
	if (!err)
		err = bpf_map__set_map_flags(map, info.map_flags);
	if (!err)
		err = bpf_map__reuse_fd(map, fd);
	close(fd);
	if (err && err != -EINVAL)
		pr_err("cannot use %s '%s': %s", opt, path, strerror(-err));
	return err;
}

static void configure_filters(struct profile_bpf *skel, const struct session_config *c)
{
	struct profile_bpf__rodata *rd = skel->rodata;

	rd->filter_pids = c->nr_pids > 0;
	rd->filter_tids = c->nr_tids > 0;
	rd->filter_cgroup = c->cgroup != NULL;
	rd->filter_cgroupmap = c->cgroupmap != NULL;
	rd->filter_mntns = c->mntnsmap != NULL;
	rd->include_idle = c->include_idle;
	rd->want_user = c->parts[PART_USER];
	rd->want_kernel = c->parts[PART_KERNEL];
	rd->self_tgid = getpid();
	rd->per_cpu = c->per_cpu;
	rd->per_thread = c->per_thread;
	if (c->nr_pids)
		bpf_map__set_max_entries(skel->maps.pid_set, c->nr_pids);
	if (c->nr_tids)
		bpf_map__set_max_entries(skel->maps.tid_set, c->nr_tids);
}

/* Size one set; the second set is only used by -i, and stays tiny without. */
static int size_set(const struct map_set *ms, const struct session_config *c, bool used)
{
	int err;

	err = bpf_map__set_value_size(ms->stacks, c->max_stack_depth * sizeof(__u64));
	if (!err)
		err = bpf_map__set_max_entries(ms->stacks, used ? c->stack_storage : 1);
	/*
	 * Every user stack is stored by content, and kernel stacks that
	 * collide in the stack map too: twice the room, as the two maps had
	 * when user stacks went to the stack map first.
	 */
	if (!err)
		err = bpf_map__set_max_entries(ms->spilled, used ? 2 * c->stack_storage : 1);
	if (!err)
		err = bpf_map__set_max_entries(ms->counts, used ? c->hash_storage : 1);
	if (!err && !used)
		err = bpf_map__set_max_entries(ms->users, 1);
	return err;
}

static int configure_mntns(struct profile_bpf *skel, const struct kbtf *kb)
{
	struct mntns_offsets off;
	int err = kbtf__mntns_offsets(kb, &off);

	if (err) {
		pr_err("--mntnsmap needs the kernel's BTF (/sys/kernel/btf/vmlinux): %s",
			strerror(-err));
		return err;
	}
	skel->rodata->off_nsproxy = off.nsproxy;
	skel->rodata->off_mnt_ns = off.mnt_ns;
	skel->rodata->off_ns_inum = off.ns_inum;
	return 0;
}

/*
 * The processes' start times (count_key.start): without them a pid that
 * another process takes during the run is told apart only as well as the
 * side-band records' order allows.
 */
static void configure_start(struct profile_bpf *skel, const struct kbtf *kb)
{
	struct follow_offsets group;
	struct start_offsets off;
	int err = kbtf__start_offsets(kb, &off);

	/* Where a process's last thread is seen to exit (uw_exit): else at its leader's. */
	if (!kbtf__follow_offsets(kb, &group)) {
		skel->rodata->off_signal = group.signal;
		skel->rodata->off_live = group.live;
	}

	if (err) {
		pr_info("no process start times (kernel BTF: %s): a reused pid's samples may be named from another process",
			strerror(-err));
		return;
	}
	skel->rodata->off_group_leader = off.group_leader;
	skel->rodata->off_start_time = off.start_time;
}

/*
 * The spill hash's key (bpf/profile.h): secret, so that no process can
 * choose frames that collide.  PROFILE_TEST_SPILL_SEED="K0,K1" fixes it for
 * the test that forges a collision (tests/e2e/t07-collide.sh), and only for
 * it: a run with it set says so.  -vv prints a fingerprint, never the key.
 */
static int read_test_key(const char *val, __u64 key[SPILL_KEY_WORDS])
{
	char *end;

	errno = 0;
	key[0] = strtoull(val, &end, 0);
	if (!errno && *end == ',')
		key[1] = strtoull(end + 1, &end, 0);
	if (errno || *end) {
		pr_err("PROFILE_TEST_SPILL_SEED must be K0,K1 (two numbers)");
		return -EINVAL;
	}
	pr_warn("PROFILE_TEST_SPILL_SEED is set: the spill hash is not secret (tests only)");
	return 0;
}

static int random_key(__u64 key[SPILL_KEY_WORDS])
{
	size_t len = SPILL_KEY_WORDS * sizeof(__u64);
	ssize_t n;

	do
		n = getrandom(key, len, 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)len) {
		pr_err("cannot draw the spill hash key: %s",
		       n < 0 ? strerror(errno) : "short read");
		return n < 0 ? -errno : -EIO;
	}
	return 0;
}

static int configure_spill_key(struct profile_bpf *skel)
{
	const char *test = getenv("PROFILE_TEST_SPILL_SEED");
	__u64 key[SPILL_KEY_WORDS];
	int err;

	err = test ? read_test_key(test, key) : random_key(key);
	if (err)
		return err;
	for (int i = 0; i < SPILL_KEY_WORDS; i++)
		skel->rodata->spill_key[i] = key[i];
	pr_debug("spill hash key: fingerprint %08llx",
		 (unsigned long long)(spill_mix(spill_mix(key[0]) ^ key[1]) >> 32));
	return 0;
}

/*
 * The unwinder's maps are created small when it is off (uw_execs, which
 * the Python reader reads too, only when interpreters are off as well),
 * and its exec and exit programs are not loaded then.
 * PROFILE_TEST_UNWIND_FAIL makes the outer map impossible to create, so
 * that a test can see the fall back to frame pointers.
 */
static int configure_unwind(struct profile_bpf *skel, const struct session_config *c)
{
	int err = 0;

	skel->rodata->unwind_tables = c->unwind;
	skel->rodata->exec_notes = c->interps != NULL;
	if (c->unwind && getenv("PROFILE_TEST_UNWIND_FAIL"))
		return bpf_map__set_max_entries(skel->maps.uw_tables, 0);
	if (c->unwind)
		return 0;
	err = bpf_map__set_max_entries(skel->maps.uw_tables, 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.uw_procs, 1);
	/* The Python reader checks a process did not exec while it looked. */
	if (!err && !c->interps)
		err = bpf_map__set_max_entries(skel->maps.uw_execs, 1);
	/* Interpreters' walkers need them too: a pid's entry must go at once. */
	if (!err && !c->interps)
		err = bpf_program__set_autoload(skel->progs.uw_exec, false);
	if (!err && !c->interps)
		err = bpf_program__set_autoload(skel->progs.uw_exit, false);
	return err;
}

/*
 * The users' shares of the maps size_set() sizes (bpf/profile.h), on a
 * profile of the host or of cgroups, where other users' processes are.
 * A profile of chosen processes (-p, -L, -- CMD) is of what its user chose:
 * no share, the whole maps for them (a capacity no count reaches).
 */
static void configure_shares(struct profile_bpf *skel, const struct session_config *c)
{
	bool chosen = c->nr_pids || c->nr_tids || c->follow;

	skel->rodata->share_cap[SHARE_KEYS] = chosen ? SHARE_UNBOUNDED : c->hash_storage;
	skel->rodata->share_cap[SHARE_STACKS] = chosen ? SHARE_UNBOUNDED :
						2ULL * c->stack_storage;
}

/*
 * profile -- CMD: the command and its children, followed by three programs
 * that only such a run loads.  They read task fields at offsets from the
 * kernel's BTF, parsed here and only here.
 */
static int configure_follow(struct profile_bpf *skel, const struct session_config *c,
			    const struct kbtf *kb)
{
	struct bpf_program *progs[] = {
		skel->progs.follow_exec, skel->progs.follow_fork, skel->progs.follow_exit,
	};
	const char *test = getenv("PROFILE_TEST_FOLLOW_SET");
	__u32 size = FOLLOW_SET_SIZE;
	struct start_offsets leader;
	struct follow_offsets off;
	int err;

	if (!c->follow) {
		for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
			bpf_program__set_autoload(progs[i], false);
		return 0;
	}
	err = kbtf__follow_offsets(kb, &off);
	/* Exits are marked on the group leader (bpf/profile.bpf.c, follow_exits). */
	if (!err)
		err = kbtf__start_offsets(kb, &leader);
	if (err) {
		pr_err("profiling a command needs the kernel's BTF (/sys/kernel/btf/vmlinux): %s",
			strerror(-err));
		return err;
	}
	skel->rodata->follow = true;
	skel->rodata->off_group_leader = leader.group_leader;
	skel->rodata->cmd_pid = c->cmd_pid;
	skel->rodata->off_tgid = off.tgid;
	skel->rodata->off_signal = off.signal;
	skel->rodata->off_live = off.live;
	/* A test fills a small map to see the count of those left out. */
	if (test) {
		size = strtoul(test, NULL, 10);
		if (!size)
			size = 1;
		pr_warn("PROFILE_TEST_FOLLOW_SET is set: %u processes are followed at once (tests only)",
			size);
	}
	err = bpf_map__set_max_entries(skel->maps.follow_set, size);
	if (err)
		pr_err("cannot size the map of followed processes: %s", strerror(-err));
	return err;
}

static bool is_tracepoint(const struct session_config *c)
{
	return c->sampling.type == PERF_TYPE_TRACEPOINT;
}

/*
 * -e CATEGORY:NAME: do_tracepoint instead of do_sample, never both, so
 * that a CPU profile verifies no more than it did.
 */
static int configure_tracepoint(struct profile_bpf *skel, const struct session_config *c)
{
	if (!is_tracepoint(c))
		return bpf_program__set_autoload(skel->progs.do_tracepoint, false);
	skel->rodata->tp_cpu = c->cpu;
	skel->rodata->tp_period = c->sampling.period ? c->sampling.period : 1;
	return bpf_program__set_autoload(skel->progs.do_sample, false);
}

/* One link for every CPU: the program checks -C itself. */
static int attach_tracepoint(struct session *s)
{
	const char *name = s->cfg.event_name, *colon = strchr(name, ':');
	char cat[128];
	int err;

	snprintf(cat, sizeof(cat), "%.*s", colon ? (int)(colon - name) : 0, name);
	s->tp_link = bpf_program__attach_tracepoint(s->skel->progs.do_tracepoint, cat,
						    colon ? colon + 1 : name);
	if (s->tp_link)
		return 0;
	err = -errno;
	pr_err("cannot attach to tracepoint %s: %s; %s", name, strerror(-err),
	       err == -EACCES || err == -EPERM ? "run as root" : "see --list-events");
	return err;
}

/* Each CPU's hits of the tracepoint, summed. */
static __u64 tracepoint_hits(const struct session *s)
{
	struct tp_state *v;
	__u32 zero = 0;
	__u64 sum = 0;

	if (!s->tp_link)
		return 0;
	v = calloc(s->nr_cpus, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map__lookup_elem(s->skel->maps.tp_states, &zero, sizeof(zero), v,
				  s->nr_cpus * sizeof(*v), 0))
		for (int i = 0; i < s->nr_cpus; i++)
			sum += v[i].hits;
	free(v);
	return sum;
}

/*
 * Off-CPU time: its two programs load only when asked for, so that a CPU
 * profile verifies nothing more.  The task's state is read at an offset
 * from the kernel's BTF: a task that died must not leave a start behind,
 * which a new thread with its tid would find at its first switch-in.
 */
static int configure_offcpu(struct session *s, const struct session_config *c,
			    const struct kbtf *btf)
{
	struct profile_bpf *skel = s->skel;
	struct profile_bpf__rodata *rd = skel->rodata;
	bool chosen = c->nr_pids || c->nr_tids || c->follow;
	struct offcpu_btf kb = {};
	int err;

	if (!c->off_cpu) {
		bpf_map__set_autocreate(skel->maps.uw_memos, false);
		bpf_program__set_autoload(skel->progs.off_switch_out, false);
		bpf_program__set_autoload(skel->progs.off_switch_in_kprobe, false);
		bpf_program__set_autoload(skel->progs.off_switch_in_fentry, false);
		bpf_program__set_autoload(skel->progs.off_switch_in_tp, false);
		return 0;
	}
	/* --off-cpu alone samples no event: do_sample is not verified either. */
	if (!c->sample_events)
		bpf_program__set_autoload(skel->progs.do_sample, false);
	err = kbtf__offcpu(btf, &kb);
	if (err) {
		pr_err("off-CPU time needs the kernel's BTF (/sys/kernel/btf/vmlinux): %s",
		       strerror(-err));
		return err;
	}
	/*
	 * The switch-in: the end of __schedule() where the kernel has that
	 * tracepoint, else a kprobe where it has kprobes (their PMU), else
	 * fentry.
	 */
	if (kb.sched_exit_tp)
		s->off_in = skel->progs.off_switch_in_tp;
	else if (!access("/sys/bus/event_source/devices/kprobe", F_OK) || !kb.finish_task_switch)
		s->off_in = skel->progs.off_switch_in_kprobe;
	else
		s->off_in = skel->progs.off_switch_in_fentry;
	if (s->off_in != skel->progs.off_switch_in_kprobe)
		bpf_program__set_autoload(skel->progs.off_switch_in_kprobe, false);
	if (s->off_in != skel->progs.off_switch_in_fentry)
		bpf_program__set_autoload(skel->progs.off_switch_in_fentry, false);
	if (s->off_in != skel->progs.off_switch_in_tp)
		bpf_program__set_autoload(skel->progs.off_switch_in_tp, false);
	/* Only a kprobe keeps perf events' programs off its CPU. */
	rd->off_in_raw_tp = s->off_in != skel->progs.off_switch_in_kprobe;
	/*
	 * The threads' memos of their last walk (bpf/unwind/unwind.bpf.h):
	 * task storage, allocated in the switch-in, which only the raw
	 * tracepoint's runs where that is safe (no runqueue lock held).
	 */
	rd->uw_memo_on = s->off_in == skel->progs.off_switch_in_tp && c->unwind &&
			 libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) > 0;
	bpf_map__set_autocreate(skel->maps.uw_memos, rd->uw_memo_on);
	rd->off_task_state = kb.task_state;
	rd->off_min_ns = c->off_min_ns;
	rd->off_max_ns = c->off_max_ns;
	rd->off_states = c->off_states;
	rd->off_only_cpu = c->cpu;
	/* As the count map's: shared on a profile of the host or of cgroups. */
	rd->off_share_cap = chosen ? SHARE_UNBOUNDED : OFF_START_SIZE;
	err = bpf_map__set_max_entries(skel->maps.off_start, OFF_START_SIZE);
	if (err)
		pr_err("cannot size the off-CPU start table: %s", strerror(-err));
	return err;
}

/*
 * Read-only data and map sizes: everything that must be set before load.
 * kb: the kernel's BTF, parsed once for every offset read here.
 */
static int configure(struct session *s, const struct kbtf *kb)
{
	const struct session_config *c = &s->cfg;
	struct profile_bpf *skel = s->skel;
	int err;

	configure_filters(skel, c);
	err = configure_tracepoint(skel, c);
	if (!err)
		err = configure_offcpu(s, c, kb);
	if (!err)
		err = configure_follow(skel, c, kb);
	if (err)
		return err;
	skel->rodata->stack_bytes = c->max_stack_depth * sizeof(__u64);
	skel->rodata->max_depth = c->max_stack_depth;
	err = configure_unwind(skel, c);
	/*
	 * Loaded on first need (session__need_klist()), where the kernel can
	 * run it; -p and -L targets are listed before sampling starts.
	 */
	skel->rodata->uw_klist_on = c->unwind && c->sample_events && !is_tracepoint(c) &&
				    !c->nr_pids && !c->nr_tids &&
				    kbtf__has_func(kb, "bpf_iter_task_vma_new") &&
				    !getenv("PROFILE_TEST_NO_KLIST");
	/*
	 * The exit tracepoint got its group_dead argument when it moved
	 * before the exit unmaps the memory (6.18 has both, 6.1 neither):
	 * then a process's last thread keeps its stack's slice for the rest
	 * of its exit.
	 */
	skel->rodata->uw_exit_on = c->unwind && c->sample_events && !is_tracepoint(c) &&
				   kbtf__tp_args(kb, "sched_process_exit") >= 3 &&
				   !getenv("PROFILE_TEST_NO_EXIT_KEEP");
	if (!err && !c->interps)
		err = bpf_map__set_max_entries(skel->maps.interp_procs, 1);
	/* Loaded on first need, from a second open (walker__load()). */
	if (!err)
		err = bpf_program__set_autoload(skel->progs.do_sample_interp, false);
	if (!err)
		err = interps__configure(c->interps, skel, kb);
	if (err)
		return err;
	skel->rodata->notify_new = true;
	configure_start(skel, kb);
	err = configure_pidns(skel);
	if (!err)
		err = configure_spill_key(skel);
	if (err)
		return err;
	configure_shares(skel, c);
	err = size_set(&s->sets[0], c, true);
	if (!err)
		err = size_set(&s->sets[1], c, c->two_sets);
	if (err) {
		pr_err("cannot size the maps: %s", strerror(-err));
		return err;
	}
	if (c->cgroupmap && (err = reuse_pinned(skel->maps.cgroupmap, c->cgroupmap, "--cgroupmap")))
		return err;
	if (c->mntnsmap && (err = reuse_pinned(skel->maps.mntnsmap, c->mntnsmap, "--mntnsmap")))
		return err;
	if (c->mntnsmap)
		return configure_mntns(skel, kb);
	return 0;
}

/* The BTF is freed here, before profile_bpf__load() parses its own. */
static int session__configure(struct session *s)
{
	struct kbtf kb;
	int err;

	kbtf__load(&kb);
	err = configure(s, &kb);
	kbtf__free(&kb);
	return err;
}

static int fill_set(struct bpf_map *map, const __u32 *ids, size_t nr)
{
	__u8 one = 1;

	for (size_t i = 0; i < nr; i++)
		if (bpf_map__update_elem(map, &ids[i], sizeof(ids[i]), &one,
					 sizeof(one), BPF_ANY))
			return -errno;
	return 0;
}

static int fill_cgroup(struct profile_bpf *skel, const char *path)
{
	__u32 zero = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (bpf_map__update_elem(skel->maps.cgroup_set, &zero, sizeof(zero), &fd,
				 sizeof(fd), BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

/*
 * The skeleton's load, with the stack maps' template (the inner map of
 * the array that holds them, select_set() in bpf/profile.bpf.c) made here
 * at their value size: libbpf makes one from the object, but an inner
 * map's setters read the object it does not have from libbpf 1.4 on.
 * One entry, and gone once the array is made.
 */
static int load_skel(struct session *s)
{
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, "set_stacks_tmpl", sizeof(__u32),
			    s->cfg.max_stack_depth * sizeof(__u64), 1, NULL);
	if (fd < 0)
		return -errno;
	err = bpf_map__set_inner_map_fd(s->skel->maps.set_stacks, fd);
	if (!err)
		err = profile_bpf__load(s->skel);
	close(fd);
	return err;
}

int session__load(struct session *s)
{
	const struct session_config *c = &s->cfg;
	struct profile_bpf *skel = s->skel;
	double t0 = mono_ms();
	__u64 cpu0 = cputime__now();
	int err;

	err = load_skel(s);
	if (err && s->cfg.unwind) {
		int uw_err = err;

		/* Without it; if that fails too, its error is the one to report. */
		profile_bpf__destroy(skel);
		s->skel = NULL;
		s->cfg.unwind = false;
		err = open_skel(s);
		skel = s->skel;
		if (!err)
			err = load_skel(s);
		if (!err)
			pr_warn("cannot load the .eh_frame unwinder: %s; user stacks are walked by frame pointer only (-vv shows why)",
				strerror(-uw_err));
	}
	if (err) {
		pr_err("cannot load the BPF program: %s; %s",
			strerror(-err), load_hint(err));
		return err;
	}
	s->load_ms = mono_ms() - t0;
	cputime__section("BPF load", cpu0);
	err = fill_set(skel->maps.pid_set, c->pids, c->nr_pids);
	if (!err)
		err = fill_set(skel->maps.tid_set, c->tids, c->nr_tids);
	if (!err && c->cgroup)
		err = fill_cgroup(skel, c->cgroup);
	if (err)
		pr_err("cannot fill the filter maps: %s", strerror(-err));
	return err;
}

static const char *open_hint(int err, const struct perf_sampling *ps)
{
	if (err == -EACCES || err == -EPERM)
		return "run as root or with CAP_PERFMON, or lower kernel.perf_event_paranoid";
	if (ps->type == PERF_TYPE_SOFTWARE && ps->config == PERF_COUNT_SW_CPU_CLOCK)
		return "check that perf events work here";
	/* No hardware PMU (a VM), or not this event: say so, never fall back. */
	return "this machine cannot sample it (see --list-events); use -e cpu-clock";
}

static int attach_cpu(struct session *s, const struct perf_sampling *ps,
		      const char *name, int cpu)
{
	struct bpf_link *link;
	int fd, err;

	fd = perf__open_sampling(ps, cpu);
	if (fd == -ENODEV)
		return 0;	/* went offline meanwhile: nothing to sample */
	if (fd < 0) {
		pr_err("cannot open event '%s' on CPU %d: %s; %s",
			name, cpu, strerror(-fd), open_hint(fd, ps));
		return fd;
	}
	link = bpf_program__attach_perf_event(s->skel->progs.do_sample, fd);
	if (!link) {
		err = -errno;
		close(fd);
		pr_err("cannot attach to CPU %d: %s", cpu, strerror(-err));
		return err;
	}
	s->pfds[s->nr_links] = fd;
	s->pcpus[s->nr_links] = cpu;
	s->links[s->nr_links++] = link;
	return 0;
}

/*
 * Exec and exit drop a process's mappings and interpreter entry in the
 * kernel at once.
 */
static int attach_unwind(struct session *s)
{
	struct bpf_program *progs[2] = { s->skel->progs.uw_exec, s->skel->progs.uw_exit };

	if (!s->cfg.unwind && !s->cfg.interps)
		return 0;
	for (int i = 0; i < 2; i++) {
		s->uw_links[i] = bpf_program__attach(progs[i]);
		if (!s->uw_links[i]) {
			int err = -errno;

			pr_err("cannot attach to %s: %s; try --unwind=fp%s",
			       bpf_program__section_name(progs[i]), strerror(-err),
			       interps__off_options(s->cfg.interps));
			return err;
		}
	}
	return 0;
}

/* profile -- CMD: before the command's exec, so that it is followed from there. */
static int attach_follow(struct session *s)
{
	struct bpf_program *progs[] = {
		s->skel->progs.follow_exec, s->skel->progs.follow_fork, s->skel->progs.follow_exit,
	};

	if (!s->cfg.follow)
		return 0;
	for (int i = 0; i < 3; i++) {
		s->follow_links[i] = bpf_program__attach(progs[i]);
		if (!s->follow_links[i]) {
			int err = -errno;

			pr_err("cannot attach to %s: %s; the command cannot be followed",
			       bpf_program__section_name(progs[i]), strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * The kernel's name for finish_task_switch: a compiler's clone of it
 * (finish_task_switch.isra.0) where it made one.  0, or -ENOENT.
 */
static int switch_in_symbol(char *name, size_t sz)
{
	const char *base = "finish_task_switch";
	size_t len = strlen(base);
	char line[512], sym[256], type;
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %c %255s", &type, sym) != 2 ||
		    strncmp(sym, base, len) || (type != 't' && type != 'T'))
			continue;
		/* The function itself, or a clone of it: not finish_task_switch_foo. */
		if (sym[len] && sym[len] != '.')
			continue;
		snprintf(name, sz, "%s", sym);
		err = 0;
		if (!sym[len])
			break;
	}
	fclose(f);
	return err;
}

/* The off-CPU switch-in: a tracepoint or fentry by its section, a kprobe by name. */
static int attach_switch_in(struct session *s)
{
	char name[256];
	int err;

	if (s->off_in != s->skel->progs.off_switch_in_kprobe) {
		s->off_links[1] = bpf_program__attach(s->off_in);
		if (!s->off_links[1]) {
			err = -errno;
			pr_err("cannot attach to %s: %s; off-CPU time needs it",
			       bpf_program__section_name(s->off_in), strerror(-err));
			return err;
		}
		pr_debug("off-CPU: switch-ins at %s", bpf_program__section_name(s->off_in));
		return 0;
	}
	err = switch_in_symbol(name, sizeof(name));
	if (err) {
		pr_err("no finish_task_switch in /proc/kallsyms (%s): off-CPU time needs a kprobe on it",
		       strerror(-err));
		return err;
	}
	s->off_links[1] = bpf_program__attach_kprobe(s->off_in, false, name);
	if (!s->off_links[1]) {
		err = -errno;
		pr_err("cannot attach a kprobe to %s: %s; off-CPU time needs it (CONFIG_KPROBES)",
		       name, strerror(-err));
		return err;
	}
	pr_debug("off-CPU: switch-ins at kprobe %s", name);
	return 0;
}

/*
 * Off-CPU time: the switch-in first, so that every start the switch-out
 * records from then on finds its end.
 */
static int attach_offcpu(struct session *s)
{
	int err;

	if (!s->cfg.off_cpu)
		return 0;
	err = attach_switch_in(s);
	if (err)
		return err;
	s->off_links[0] = bpf_program__attach(s->skel->progs.off_switch_out);
	if (!s->off_links[0]) {
		err = -errno;
		pr_err("cannot attach to sched_switch: %s; off-CPU time needs it", strerror(-err));
		return err;
	}
	return 0;
}

__u32 session__verified_insns(const struct session *s, const char *prog)
{
	struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, prog);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!p || bpf_program__fd(p) < 0 ||
	    bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return 0;
	return info.verified_insns;
}

static void warn_lost(const __u64 *c, const struct sample_tally *t)
{
	/* bcc's words, without our prefix, for scripts that grep for them. */
	if (t->missed_stacks)
		log__raw_at(LOG_WARN, "WARNING: %llu stack traces could not be displayed.%s",
			    (unsigned long long)t->missed_stacks,
			    t->missed_enomem ? " Consider increasing --stack-storage-size." : "");
	if (c[CNT_HASH_FULL])
		log__raw_at(LOG_WARN, "WARNING: %llu samples were dropped because the count map was full. Consider increasing --hash-storage-size.",
			    (unsigned long long)c[CNT_HASH_FULL]);
	/* Off-CPU time lost, by where: each is a block whose time is not shown. */
	if (c[CNT_OFF_HASH_FULL])
		pr_warn("%llu off-CPU blocks were dropped because the count map was full: raise --hash-storage-size",
			(unsigned long long)c[CNT_OFF_HASH_FULL]);
	if (c[CNT_OFF_START_FULL])
		pr_warn("%llu off-CPU blocks were not timed: the table of blocks in progress (or their user's share of it) was full; -p or --cgroup narrows what is timed",
			(unsigned long long)c[CNT_OFF_START_FULL]);
	if (c[CNT_OFF_RESTARTED])
		pr_warn("%llu off-CPU blocks were lost: the kernel skipped their switch-in program while their CPU was in another BPF program",
			(unsigned long long)c[CNT_OFF_RESTARTED]);
	if (c[CNT_OFF_NESTED])
		pr_warn("%llu CPU samples were not taken: they came during an off-CPU switch-in on their CPU",
			(unsigned long long)c[CNT_OFF_NESTED]);
}

/* Users named in the warning at most; share__report() names as many. */
#define SHARE_WARN_USERS 5

struct user_refused {
	__u32 uid;
	__u64 n;
};

static int by_refused(const void *a, const void *b)
{
	const struct user_refused *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/*
 * The users whose samples were refused over their share of the count and
 * spill maps (the BPF map share_refused), most first, named as
 * share__report() names them.
 */
static void warn_shares(const struct session *s, const __u64 *c)
{
	int fd = bpf_map__fd(s->skel->maps.share_refused);
	struct user_refused *v = NULL;
	size_t n = 0, cap = 0;
	__u32 key, *prev = NULL;
	char name[300];

	if (!c[CNT_SHARE_KEYS] && !c[CNT_SHARE_STACKS])
		return;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		if (util__grow_array((void **)&v, &cap, n + 1, sizeof(*v)))
			break;
		v[n].uid = key;
		if (!bpf_map_lookup_elem(fd, &key, &v[n].n))
			n++;
		prev = &key;
	}
	/* Only refusals while other users held entries are named. */
	if (!n) {
		free(v);
		return;
	}
	qsort(v, n, sizeof(*v), by_refused);
	for (size_t i = 0; i < n && i < SHARE_WARN_USERS; i++)
		pr_warn("count and spill maps: user %s filled its share: %llu new keys or stacks refused (samples dropped or shown as missed); raise --hash-storage-size or --stack-storage-size",
			share__user_name(v[i].uid, name, sizeof(name)),
			(unsigned long long)v[i].n);
	if (n > SHARE_WARN_USERS)
		pr_warn("count and spill maps: and %zu more users filled their share",
			n - SHARE_WARN_USERS);
	free(v);
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

/*
 * A program loaded on first need: when, what it cost; what, if not.
 * without: what came without it, said after each (NULL: nothing).
 */
static void report_lazy(struct lazy_prog *p, const char *label, const char *prog,
			const char *without, const char *none)
{
	const char *sep = without ? "; " : "";

	without = without ? without : "";
	/* Only its lock is written: the loading thread may be at work. */
	pthread_mutex_lock(&p->lock);
	if (p->started && !p->done)
		pr_info("%s: still loading%s%s", label, sep, without);
	else if (p->loaded)
		pr_info("%s: %s loaded on first need in %.1f ms, %u instructions verified%s%s%s",
			label, prog, p->load_ms, p->insns, sep, without, *without ? " before" : "");
	else
		pr_info("%s: not loaded (%s)%s%s", label,
			p->started ? strerror(-p->err) : none, sep, without);
	pthread_mutex_unlock(&p->lock);
}

/* The interpreters' walker, and the kernel's lists of new processes. */
static void report_walkers(const struct session *s, const __u64 *c)
{
	struct session *m = (struct session *)s;
	char without[96];

	if (s->cfg.interps && s->cfg.sample_events && !is_tracepoint(&s->cfg)) {
		snprintf(without, sizeof(without),
			 "%llu samples of interpreters' processes counted without it",
			 (unsigned long long)c[CNT_INTERP_NOT_READY]);
		report_lazy(&m->walker, "interpreter walker", "do_sample_interp", without,
			    "no interpreter's process seen");
	}
	if (s->skel->rodata->uw_exit_on)
		pr_info("exits: %llu processes' last stacks and lists kept for the rest of their exit",
			(unsigned long long)c[CNT_UW_EXIT_KEPT]);
	if (!s->skel->rodata->uw_klist_on)
		return;
	report_lazy(&m->klist, "kernel lists", "uw_klist_exec, uw_klist_rtld and uw_klist_fork",
		    NULL, "no new process seen");
	pr_info("kernel lists: %llu made at execs and when ld.so mapped objects, %llu not (the mappings were busy), %llu copied from the parent's at forks; %llu of the loader's lists replaced, older than ld.so's objects",
		(unsigned long long)c[CNT_UW_KLIST_BUILDS], (unsigned long long)c[CNT_UW_KLIST_BUSY],
		(unsigned long long)c[CNT_UW_KLIST_FORKS],
		(unsigned long long)c[CNT_UW_KLIST_SUPERSEDED]);
}

void session__report(const struct session *s, const __u64 *c,
		     const struct sample_tally *t, enum report_pass pass)
{
	struct bulk_stats bs;

	if (pass == REPORT_WARN) {
		warn_lost(c, t);
		warn_shares(s, c);
		return;
	}
	if (is_tracepoint(&s->cfg))
		pr_info("tracepoint %s: %llu hits%s, one in %llu taken as a sample",
			s->cfg.event_name, (unsigned long long)session__events(s),
			s->cfg.cpu >= 0 ? " on the CPU of -C" : "",
			(unsigned long long)s->skel->rodata->tp_period);
	pr_info("samples: taken %llu, counted %llu, filtered %llu, dropped %llu (count map full)",
		(unsigned long long)c[CNT_TAKEN], (unsigned long long)t->counted,
		(unsigned long long)c[CNT_FILTERED], (unsigned long long)c[CNT_HASH_FULL]);
	pr_info("users' shares: %llu dropped samples and %llu missed stacks were over their user's share",
		(unsigned long long)c[CNT_SHARE_KEYS], (unsigned long long)c[CNT_SHARE_STACKS]);
	pr_info("count and spill maps: %llu keys held by %llu users, %llu stacks by %llu users at the end",
		(unsigned long long)s->skel->bss->share_total[s->read_set][SHARE_KEYS],
		(unsigned long long)s->skel->bss->share_holders[s->read_set][SHARE_KEYS],
		(unsigned long long)s->skel->bss->share_total[s->read_set][SHARE_STACKS],
		(unsigned long long)s->skel->bss->share_holders[s->read_set][SHARE_STACKS]);
	report_part("user", PART_USER, c);
	report_part("kernel", PART_KERNEL, c);
	pr_info("stacks cut at --perf-max-stack-depth %u: in %llu samples",
		s->cfg.max_stack_depth, (unsigned long long)t->truncated);
	pr_info("spilled stacks: stored %llu, spill map full %llu, read errors %llu, hash collisions %llu",
		(unsigned long long)c[CNT_SPILLED], (unsigned long long)c[CNT_SPILL_FULL],
		(unsigned long long)c[CNT_SPILL_ERR], (unsigned long long)c[CNT_SPILL_COLLISION]);
	bulk__stats(s->bulk, &bs);
	pr_info("spilled stacks read: %llu in batches (%llu runs of the batch reader), %llu one by one",
		(unsigned long long)bs.stacks, (unsigned long long)bs.stack_runs,
		(unsigned long long)s->read_one);
	pr_info("prefetches: %llu new keys read in bulk, in %llu runs",
		(unsigned long long)bs.keys, (unsigned long long)bs.key_runs);
	report_walkers(s, c);
}

void session__report_verifier(const struct session *s)
{
	const char *prog = is_tracepoint(&s->cfg) ? "do_tracepoint" : "do_sample";

	/* --off-cpu alone loads no sampling program. */
	if (s->cfg.sample_events || is_tracepoint(&s->cfg))
		pr_info("verified instructions: %s %u, uw_exec %u, uw_exit %u (limit 1000000)",
			prog, session__verified_insns(s, prog),
			session__verified_insns(s, "uw_exec"), session__verified_insns(s, "uw_exit"));
	else
		pr_info("verified instructions: uw_exec %u, uw_exit %u (limit 1000000)",
			session__verified_insns(s, "uw_exec"), session__verified_insns(s, "uw_exit"));
	pr_info("BPF load: %.1f ms, the verifier's included", s->load_ms);
	if (s->cfg.off_cpu)
		pr_info("verified instructions: off_switch_out %u, %s %u",
			session__verified_insns(s, "off_switch_out"), bpf_program__name(s->off_in),
			session__verified_insns(s, bpf_program__name(s->off_in)));
}

/* The kernel's count of runs of prog it skipped (another BPF program ran). */
static __u64 recursion_misses(const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_program__fd(p) < 0 || bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return 0;
	return info.recursion_misses;
}

void session__report_offcpu(const struct session *s, const __u64 *c,
			    const struct sample_tally *t)
{
	__u64 missed, counted;

	if (!s->cfg.off_cpu)
		return;
	missed = recursion_misses(s->skel->progs.off_switch_out) +
		 recursion_misses(s->off_in);
	counted = c[CNT_OFF_BLOCKS] - c[CNT_OFF_SHORT] - c[CNT_OFF_LONG] -
		  c[CNT_OFF_FILTERED] - c[CNT_OFF_HASH_FULL];
	pr_info("off-CPU: %llu switch-outs recorded, %llu blocks counted (%.3f s), %llu shorter than --min-block-time, %llu longer than --max-block-time, %llu not in --state, %llu filtered at switch-in, %llu dropped (count map full), %llu without a start (blocked before the profile began, or not timed), %llu start table full, %llu missed by the kernel",
		(unsigned long long)c[CNT_OFF_RECORDED], (unsigned long long)counted,
		t->off_ns / 1e9, (unsigned long long)c[CNT_OFF_SHORT],
		(unsigned long long)c[CNT_OFF_LONG], (unsigned long long)c[CNT_OFF_STATE],
		(unsigned long long)c[CNT_OFF_FILTERED], (unsigned long long)c[CNT_OFF_HASH_FULL],
		(unsigned long long)c[CNT_OFF_NO_START], (unsigned long long)c[CNT_OFF_START_FULL],
		(unsigned long long)missed);
	/*
	 * A kprobe does not run while its CPU is in BPF (bpf_prog_active),
	 * which a task in a bpf() call holds even while preempted: its next
	 * switch-out finds the start still there.
	 */
	if (c[CNT_OFF_RESTARTED])
		pr_info("off-CPU: %llu switch-ins missed (the kernel skipped the program): their blocks are lost, their next switch-outs started anew",
			(unsigned long long)c[CNT_OFF_RESTARTED]);
	if (s->skel->rodata->uw_memo_on)
		pr_info("off-CPU: %llu user stacks from the thread's last walk (the same registers and stack words)",
			(unsigned long long)c[CNT_UW_MEMO_HITS]);
	if (s->cfg.sample_events)
		pr_info("off-CPU: %llu CPU samples not taken: they came during a switch-in on their CPU",
			(unsigned long long)c[CNT_OFF_NESTED]);
}

void session__report_balance(const __u64 *c, const struct sample_tally *t)
{
	pr_info("process notes (first samples and execs): sent %llu, failed %llu",
		(unsigned long long)c[CNT_NOTES], (unsigned long long)c[CNT_NOTE_ERR]);
	pr_info("counted + filtered + dropped %s taken",
		t->counted + c[CNT_FILTERED] + c[CNT_HASH_FULL] == c[CNT_TAKEN] ? "==" : "!=");
}

int session__unwind_maps(const struct session *s, struct unwind_maps *maps)
{
	if (!s->cfg.unwind)
		return -ENOENT;
	maps->tables_fd = bpf_map__fd(s->skel->maps.uw_tables);
	maps->procs_fd = bpf_map__fd(s->skel->maps.uw_procs);
	maps->execs_fd = bpf_map__fd(s->skel->maps.uw_execs);
	maps->asks_fd = bpf_map__fd(s->skel->maps.uw_asks);
	/*
	 * Kept only for the kernel's lists, where this kernel can make them;
	 * the slots' serials also for the lists an exit keeps (-p, -L).
	 */
	maps->files_fd = s->skel->rodata->uw_klist_on ? bpf_map__fd(s->skel->maps.uw_files) : -1;
	maps->serials_fd = s->skel->rodata->uw_klist_on || s->skel->rodata->uw_exit_on ?
			   bpf_map__fd(s->skel->maps.uw_slot_serials) : -1;
	return 0;
}

/*
 * Each map of to takes the fd of from's map in the same place (one object
 * file, opened twice): nothing is created, and what the first load was
 * configured with (read-only data, sizes) holds for the second.  A map
 * the first did not create is not created either.
 */
static int walker__share_maps(struct bpf_object *to, const struct bpf_object *from)
{
	struct bpf_map *m, *orig = NULL;
	int err;

	/*
	 * Both objects come from one ELF: their maps are in the same order.
	 * Names are not compared: a map reused from a pin (--cgroupmap,
	 * --mntnsmap) took the pinned map's name in the first object.
	 */
	bpf_object__for_each_map(m, to) {
		orig = bpf_object__next_map(from, orig);
		if (!orig || bpf_map__type(m) != bpf_map__type(orig)) {
			pr_warn("interpreter walker: map %s is not the loaded program's %s: a bug, please report it",
				bpf_map__name(m), orig ? bpf_map__name(orig) : "(none)");
			return -EINVAL;
		}
		if (bpf_map__fd(orig) < 0)
			err = bpf_map__set_autocreate(m, false);
		else
			err = bpf_map__reuse_fd(m, bpf_map__fd(orig));
		if (err)
			return err;
	}
	return 0;
}

/*
 * do_sample_interp alone, on s's maps, then in interp_walker's slot.  The
 * slot holds the program: the second object goes at once (its ELF and BTF
 * were a few MiB of the run's peak).
 */
static int walker__load(struct session *s, __u32 *insns)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), zero = 0;
	struct profile_bpf *skel;
	struct bpf_program *p;
	int err = 0, fd;

	skel = profile_bpf__open();
	if (!skel)
		return -errno;
	bpf_object__for_each_program(p, skel->obj)
		if (!err)
			err = bpf_program__set_autoload(p, p == skel->progs.do_sample_interp);
	if (!err)
		err = walker__share_maps(skel->obj, s->skel->obj);
	if (!err)
		err = bpf_object__load(skel->obj);
	fd = bpf_program__fd(skel->progs.do_sample_interp);
	if (!err && bpf_map_update_elem(bpf_map__fd(s->skel->maps.interp_walker), &zero, &fd,
					BPF_ANY))
		err = -errno;
	if (!err && !bpf_obj_get_info_by_fd(fd, &info, &len))
		*insns = info.verified_insns;
	profile_bpf__destroy(skel);
	return err;
}

/*
 * The probe of ld.so's _dl_debug_state(), which it calls once the objects
 * are mapped: the system's ld.so, which every dynamic program but a
 * container's maps (uprobes are of a file).
 */
#define KLIST_RTLD "/lib64/ld-linux-x86-64.so.2"

static int klist__attach_rtld(struct session *s, struct klist_bpf *k)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "_dl_debug_state");

	s->klist_rtld = bpf_program__attach_uprobe_opts(k->progs.uw_klist_rtld, -1, KLIST_RTLD,
							 0, &uo);
	return s->klist_rtld ? 0 : -errno;
}

/*
 * bpf/klist.bpf.c, on the sampler's maps, attached: its programs make
 * each new thread's list at its exec and when ld.so has mapped objects.
 * The object stays (its links) until the session goes.
 */
static int klist__load(struct session *s, __u32 *insns)
{
	struct bpf_map *shared[][2] = {
		{ NULL, s->skel->maps.uw_files }, { NULL, s->skel->maps.uw_klist_store },
		{ NULL, s->skel->maps.stats }, { NULL, s->skel->maps.uw_slot_serials },
		{ NULL, s->skel->maps.follow_set }, { NULL, s->skel->maps.uw_procs },
		{ NULL, s->skel->maps.uw_exit_slices },
	};
	struct bpf_program *progs[3];
	struct klist_bpf *k;
	int err = 0;

	k = klist_bpf__open();
	if (!k)
		return -errno;
	shared[0][0] = k->maps.uw_files;
	shared[1][0] = k->maps.uw_klist_store;
	shared[2][0] = k->maps.stats;
	shared[3][0] = k->maps.uw_slot_serials;
	shared[4][0] = k->maps.follow_set;
	shared[5][0] = k->maps.uw_procs;
	shared[6][0] = k->maps.uw_exit_slices;
	k->rodata->follow_only = s->cfg.follow;
	k->rodata->use_pidns = s->skel->rodata->use_pidns;
	k->rodata->pidns_dev = s->skel->rodata->pidns_dev;
	k->rodata->pidns_ino = s->skel->rodata->pidns_ino;
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]) && !err; i++)
		err = bpf_map__reuse_fd(shared[i][0], bpf_map__fd(shared[i][1]));
	if (!err)
		err = klist_bpf__load(k);
	if (!err)
		err = klist_bpf__attach(k);
	if (!err)
		err = klist__attach_rtld(s, k);
	if (err) {
		klist_bpf__destroy(k);
		return err;
	}
	progs[0] = k->progs.uw_klist_exec;
	progs[1] = k->progs.uw_klist_rtld;
	progs[2] = k->progs.uw_klist_fork;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			*insns += info.verified_insns;
	}
	s->klist_skel = k;
	return 0;
}

static void lazy__init(struct lazy_prog *p, struct session *s, const char *what,
		       const char *without, int (*load)(struct session *, __u32 *))
{
	*p = (struct lazy_prog){ .what = what, .without = without, .load = load, .s = s };
	pthread_mutex_init(&p->lock, NULL);
}

static void *lazy__run(void *arg)
{
	struct lazy_prog *p = arg;
	double t0 = mono_ms();
	__u32 insns = 0;
	int err;

	cputime__thread_start("BPF load");
	err = p->load(p->s, &insns);
	pthread_mutex_lock(&p->lock);
	p->loaded = !err;
	p->insns = insns;
	p->err = err;
	p->load_ms = mono_ms() - t0;
	p->done = true;
	pthread_mutex_unlock(&p->lock);
	if (err && p->quiet)
		pr_debug("cannot load %s: %s; %s (-vv shows libbpf's log)",
			 p->what, strerror(-err), p->without);
	else if (err)
		pr_warn("cannot load %s: %s; %s (-v shows the verifier's log when it refused the program)",
			p->what, strerror(-err), p->without);
	else
		pr_debug("%s loaded in %.1f ms, %u instructions verified",
			 p->what, mono_ms() - t0, insns);
	cputime__thread_end();
	return NULL;
}

/* The first call starts p's load; it never waits.  Its error, if known. */
static int lazy__need(struct lazy_prog *p)
{
	int err;

	pthread_mutex_lock(&p->lock);
	if (!p->started) {
		p->started = true;
		err = pthread_create(&p->thread, NULL, lazy__run, p);
		if (err) {
			p->joined = p->done = true;
			p->err = -err;
			if (!p->quiet)
				pr_warn("cannot start loading %s: %s; %s", p->what, strerror(err),
					p->without);
		}
	}
	err = p->err;
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* Wait for p's load, if one was started. */
static void lazy__wait(struct lazy_prog *p)
{
	bool join;

	pthread_mutex_lock(&p->lock);
	join = p->started && !p->joined;
	p->joined |= join;
	pthread_mutex_unlock(&p->lock);
	if (join)
		pthread_join(p->thread, NULL);
}

/*
 * interp_config.need_walker: the first call starts its load, which
 * overlaps the runtime's reading of the process (an interpreter starting
 * up runs no code of its own for a while).
 */
static int walker__need(void *arg)
{
	struct session *s = arg;

	/* The tracepoint's and off-CPU's programs walk inline: no tail call. */
	if (!s->cfg.sample_events || is_tracepoint(&s->cfg))
		return 0;
	return lazy__need(&s->walker);
}

int session__need_klist(void *arg)
{
	struct session *s = arg;

	if (!s->skel->rodata->uw_klist_on)
		return 0;
	return lazy__need(&s->klist);
}

void session__start_interps(struct session *s)
{
	interps__set_walker(s->cfg.interps, walker__need, s);
	/* For tests on kernels without an interpreter at hand (tests/kernels). */
	if (s->cfg.interps && getenv("PROFILE_TEST_WALKER_AT_START"))
		walker__need(s);
	interps__start(s->cfg.interps, s->skel);
	/* A -p target that is an interpreter's is walked from its first sample. */
	lazy__wait(&s->walker);
}

int session__attach(struct session *s)
{
	const struct session_config *c = &s->cfg;
	int err;

	if (is_tracepoint(c)) {
		err = attach_tracepoint(s);
		if (!err)
			err = attach_follow(s);
		return err ? err : attach_unwind(s);
	}
	for (int cpu = 0; cpu < c->nr_cpus && cpu < s->nr_cpus && c->sample_events; cpu++) {
		if (!c->cpu_online[cpu] || (c->cpu >= 0 && cpu != c->cpu))
			continue;
		err = attach_cpu(s, &c->sampling, c->event_name, cpu);
		if (err)
			return err;
	}
	if (!s->nr_links && c->sample_events) {
		pr_err("no online CPU to sample on");
		return -ENODEV;
	}
	err = attach_offcpu(s);
	if (!err)
		err = attach_follow(s);
	if (err)
		return err;
	return attach_unwind(s);
}

int session__nr_attached(const struct session *s)
{
	return s->nr_links;
}

/* A sampling event's count: every event since it was opened. */
static __u64 event_count(int fd)
{
	__u64 v;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

__u64 session__events(const struct session *s)
{
	__u64 sum = s->events_closed + tracepoint_hits(s);

	for (int i = 0; i < s->nr_links; i++)
		sum += event_count(s->pfds[i]);
	return sum;
}

void session__detach(struct session *s)
{
	s->events_closed += tracepoint_hits(s);
	for (int i = 0; i < s->nr_links; i++) {
		s->events_closed += event_count(s->pfds[i]);
		bpf_link__destroy(s->links[i]);
		close(s->pfds[i]);
	}
	s->nr_links = 0;
	bpf_link__destroy(s->tp_link);
	s->tp_link = NULL;
	/* Blocks still open at the end are not counted: they have not ended. */
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(s->off_links[i]);
		s->off_links[i] = NULL;
	}
	/* No sample is walked from a kernel list now: its programs stop. */
	lazy__wait(&s->klist);
	bpf_link__destroy(s->klist_rtld);
	s->klist_rtld = NULL;
	if (s->klist_skel)
		klist_bpf__detach(s->klist_skel);
}

void session__destroy(struct session *s)
{
	if (!s)
		return;
	if (s->links)
		session__detach(s);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(s->uw_links[i]);
	for (int i = 0; i < 3; i++)
		bpf_link__destroy(s->follow_links[i]);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(s->off_links[i]);
	lazy__wait(&s->walker);
	lazy__wait(&s->klist);
	bpf_link__destroy(s->klist_rtld);
	klist_bpf__destroy(s->klist_skel);
	pthread_mutex_destroy(&s->walker.lock);
	pthread_mutex_destroy(&s->klist.lock);
	bulk__free(s->bulk);
	free(s->want_ids);
	profile_bpf__destroy(s->skel);
	free(s->links);
	free(s->pfds);
	free(s->pcpus);
	free(s->batch_keys);
	free(s->batch_vals);
	free(s->batch);
	free(s);
}

/*
 * The stats map's counters, CPU by CPU (NR_COUNTERS each), in a new array
 * the caller frees; NULL and errno.
 */
static __u64 *read_stats(const struct session *s)
{
	size_t sz = NR_COUNTERS * sizeof(__u64);
	__u32 zero = 0;
	__u64 *vals;

	vals = calloc(s->nr_cpus, sz);
	if (!vals)
		return NULL;
	if (bpf_map__lookup_elem(s->skel->maps.stats, &zero, sizeof(zero), vals,
				 s->nr_cpus * sz, 0)) {
		int err = errno;

		free(vals);
		errno = err;
		return NULL;
	}
	return vals;
}

int session__counters(struct session *s, __u64 out[NR_COUNTERS])
{
	__u64 *vals = read_stats(s);

	memset(out, 0, NR_COUNTERS * sizeof(__u64));
	if (!vals)
		return -errno;
	for (int cpu = 0; cpu < s->nr_cpus; cpu++)
		for (int i = 0; i < NR_COUNTERS; i++)
			out[i] += vals[cpu * NR_COUNTERS + i];
	free(vals);
	return 0;
}

int session__nr_cpus(const struct session *s)
{
	return s->nr_cpus;
}

/*
 * Timer samples that came: taken, and those a switch-in kept from being
 * taken (CNT_OFF_NESTED); a CPU with no event of ours is UINT64_MAX.
 */
int session__cpu_samples(struct session *s, __u64 *out)
{
	__u64 *vals = read_stats(s);

	if (!vals)
		return -errno;
	for (int cpu = 0; cpu < s->nr_cpus; cpu++)
		out[cpu] = UINT64_MAX;
	for (int i = 0; i < s->nr_links; i++) {
		const __u64 *c = &vals[s->pcpus[i] * NR_COUNTERS];

		out[s->pcpus[i]] = c[CNT_TAKEN] + c[CNT_OFF_NESTED];
	}
	free(vals);
	return 0;
}

int session__restart_cpu(struct session *s, int cpu)
{
	for (int i = 0; i < s->nr_links; i++) {
		if (s->pcpus[i] != cpu)
			continue;
		if (ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0) ||
		    ioctl(s->pfds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
		return 0;
	}
	return -ENOENT;
}

/* Batched read: one syscall per thousand keys instead of two per key. */
static int drain_batch(struct session *s, int fd, session_drain_fn fn, void *ctx)
{
	__u64 token;
	void *in = NULL;
	int err;

	for (;;) {
		__u32 count = DRAIN_CHUNK;

		err = bpf_map_lookup_batch(fd, in, &token, s->batch_keys, s->batch_vals,
					   &count, NULL);
		if (err && errno != ENOENT)
			return -errno;
		for (__u32 i = 0; i < count; i++) {
			s->batch[i].key = s->batch_keys[i];
			s->batch[i].count = s->batch_vals[i] & ~COUNT_SEEN;
		}
		if (count) {
			int ret = fn(ctx, s->batch, count);

			if (ret)
				return ret;
		}
		if (err)	/* ENOENT: that was the last batch */
			return 0;
		in = &token;
	}
}

/* Kernels without batch operations: a key at a time, handed on in batches. */
static int drain_iter(struct session *s, int fd, session_drain_fn fn, void *ctx)
{
	struct count_key key, next;
	void *prev = NULL;
	size_t n = 0;
	int ret;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &s->batch[n].count)) {
			s->batch[n].count &= ~COUNT_SEEN;
			s->batch[n++].key = next;
		}
		if (n == DRAIN_CHUNK) {
			ret = fn(ctx, s->batch, n);
			if (ret)
				return ret;
			n = 0;
		}
		key = next;
		prev = &key;
	}
	return n ? fn(ctx, s->batch, n) : 0;
}

int session__drain_each(struct session *s, session_drain_fn fn, void *ctx)
{
	int fd = bpf_map__fd(s->sets[s->read_set].counts);
	int err;

	/* Unsupported batches fail on the first call, before fn is called. */
	err = drain_batch(s, fd, fn, ctx);
	if (err == -EINVAL || err == -ENOTSUP || err == -ENOTSUPP)
		err = drain_iter(s, fd, fn, ctx);
	return err;
}

struct drained {
	struct sample *samples;
	size_t nr, cap;
};

static int append_samples(void *ctx, const struct sample *batch, size_t nr)
{
	struct drained *d = ctx;

	if (util__grow_array((void **)&d->samples, &d->cap, d->nr + nr, sizeof(*batch)))
		return -ENOMEM;
	memcpy(d->samples + d->nr, batch, nr * sizeof(*batch));
	d->nr += nr;
	return 0;
}

int session__drain(struct session *s, struct sample **samples, size_t *nr)
{
	struct drained d = {};
	int err;

	err = session__drain_each(s, append_samples, &d);
	if (err) {
		free(d.samples);
		return err;
	}
	*samples = d.samples;
	*nr = d.nr;
	return 0;
}

/*
 * Frames of a stored stack, leaf first; their number or a negative errno.
 * *end: how an unwinder's walk ended (struct hashed_stack), else 0.
 */
static int read_ips(struct session *s, const struct stack_ref *ref, __u64 *ips, __u32 *end)
{
	const struct map_set *ms = &s->sets[s->read_set];
	__u32 depth = s->cfg.max_stack_depth, id = ref->id;
	struct hashed_stack hs;
	const __u64 *fetched;
	int n = 0;

	*end = 0;
	switch (ref->src) {
	case STACK_MAP:
		memset(ips, 0, depth * sizeof(*ips));
		if (bpf_map_lookup_elem(bpf_map__fd(ms->stacks), &id, ips))
			return -errno;
		while (n < (int)depth && ips[n])
			n++;
		return n;
	case STACK_HASHED:
		fetched = bulk__find_stack(s->bulk, s->read_set, ref->id, &hs.nr, end);
		if (fetched) {
			n = hs.nr < MAX_STACK_DEPTH ? hs.nr : MAX_STACK_DEPTH;
			memcpy(ips, fetched, n * sizeof(*ips));
			return n;
		}
		s->read_one++;
		if (bpf_map_lookup_elem(bpf_map__fd(ms->spilled), &ref->id, &hs))
			return -errno;
		n = hs.nr < MAX_STACK_DEPTH ? hs.nr : MAX_STACK_DEPTH;
		memcpy(ips, hs.ips, n * sizeof(*ips));
		*end = hs.end;
		return n;
	default:
		return -ENOENT;
	}
}

/*
 * An interpreter's stack deeper than one stored stack holds (bpf/profile.h,
 * INTERP_END_MORE): its outer frames' words after ips[0..n), the key of
 * their stack dropped; their number.  Outer frames lost since say so
 * (INTERP_END_CUT).
 */
static int read_more(struct session *s, __u64 *ips, int n, __u32 *end)
{
	const struct map_set *ms = &s->sets[s->read_set];
	struct hashed_stack hs;
	__u64 key;

	if (!(*end & INTERP_END_MORE) || n < 1)
		return n;
	key = ips[--n];
	if (bpf_map_lookup_elem(bpf_map__fd(ms->spilled), &key, &hs) ||
	    INTERP_END_KIND(hs.end) != INTERP_END_KIND(*end)) {
		*end = (*end & ~INTERP_END_MORE) | INTERP_END_CUT;
		return n;
	}
	hs.nr = hs.nr < MAX_STACK_DEPTH ? hs.nr : MAX_STACK_DEPTH;
	memcpy(ips + n, hs.ips, hs.nr * sizeof(*ips));
	*end = hs.end;
	return n + hs.nr;
}

/*
 * bpf_get_stack[id]() stacks: the first frame is where the CPU was, every
 * other one a return address (bpf/profile.h, FRAME_RETADDR); a stack that
 * fills the depth was cut there (FRAME_TRUNCATED on its outermost frame).
 */
static int read_trace(void *ctx, const struct stack_ref *ref, struct trace_frame *frames)
{
	struct session *s = ctx;
	__u64 ips[2 * MAX_STACK_DEPTH];		/* an interpreter's: two stacks */
	__u32 end;
	int n = read_ips(s, ref, ips, &end);

	/* An interpreter's words: it reads them itself. */
	if (n > 0 && ref->kind == FRAME_INTERP)
		return interps__decode(s->cfg.interps, ips, read_more(s, ips, n, &end), end,
				       frames);

	for (int i = 0; i < n; i++)
		frames[i] = (struct trace_frame){ .addr = ips[i], .kind = ref->kind,
						  .flags = i ? FRAME_RETADDR : 0 };
	/* As deep as we asked for: the walk stopped there. */
	if (n > 0 && n >= (int)s->cfg.max_stack_depth)
		frames[n - 1].flags |= FRAME_TRUNCATED;
	else if (n > 0 && s->cfg.unwind_debug && unwind__ended_early(end))
		frames[n++] = (struct trace_frame){ .addr = end - 1, .kind = FRAME_NONE,
						    .flags = FRAME_UNWIND_END };
	return n;
}

/*
 * The maps' bulk reader, made on first need; NULL where it cannot load.
 * PROFILE_TEST_READ_ONE: the tests' way to read as kernels without
 * syscall programs do.
 */
static struct bulk *get_bulk(struct session *s)
{
	int spilled[2], counts[2];

	if (s->bulk_tried)
		return s->bulk;
	s->bulk_tried = true;
	if (getenv("PROFILE_TEST_READ_ONE"))
		return NULL;
	for (int i = 0; i < 2; i++) {
		spilled[i] = bpf_map__fd(s->sets[i].spilled);
		counts[i] = bpf_map__fd(s->sets[i].counts);
	}
	s->bulk = bulk__new(spilled, counts);
	if (!s->bulk)
		pr_debug("bulk reads: cannot load bpf/bulk.bpf.c (%s); stacks are read a call each, and prefetches read every key",
			 strerror(errno));
	return s->bulk;
}

int session__drain_new(struct session *s, struct sample **samples, size_t *nr)
{
	struct bulk *b = get_bulk(s);
	int err;

	if (b && !s->new_keys_failed) {
		err = bulk__read_new_keys(b, s->read_set, samples, nr);
		if (!err)
			return 0;
		s->new_keys_failed = true;
		pr_debug("bulk reads: cannot read new keys (%s); prefetches read every key",
			 strerror(-err));
	}
	return session__drain(s, samples, nr);
}

/*
 * The stored stacks a naming pass is about to read: the spill map's are
 * fetched in batches (src/loader/bulk.c).  Stack-map stacks are read one
 * by one: a BPF program cannot read a stack map.
 */
static void want_trace(void *ctx, const struct stack_ref *refs, size_t n)
{
	struct session *s = ctx;
	size_t nr = 0;

	if (!get_bulk(s) ||
	    util__grow_array((void **)&s->want_ids, &s->want_cap, n, sizeof(*s->want_ids)))
		return;
	for (size_t i = 0; i < n; i++)
		if (refs[i].src == STACK_HASHED)
			s->want_ids[nr++] = refs[i].id;
	if (bulk__fetch_stacks(s->bulk, s->read_set, s->want_ids, nr))
		pr_debug("bulk reads: a batch of stacks failed; the rest are read one by one");
}

void session__trace_source(struct session *s, struct trace_source *src)
{
	src->read = read_trace;
	src->want = want_trace;
	src->ctx = s;
}

int session__events_fd(const struct session *s)
{
	return bpf_map__fd(s->skel->maps.events);
}

/*
 * *cpu: the first CPU still running the program on set `set`, or about to
 * pick a set; -1 when there is none.  0 or -errno.
 */
static int busy_cpu(struct session *s, int set, int *cpu)
{
	__u32 zero = 0;
	__u64 *vals;
	int err = 0;

	vals = calloc(s->nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	*cpu = -1;
	if (bpf_map__lookup_elem(s->skel->maps.inflight, &zero, sizeof(zero), vals,
				 s->nr_cpus * sizeof(*vals), 0)) {
		err = -errno;
		goto out;
	}
	for (int i = 0; i < s->nr_cpus && *cpu < 0; i++)
		if (vals[i] == INFLIGHT_SET((__u64)set) || vals[i] == INFLIGHT_UNKNOWN)
			*cpu = i;
out:
	free(vals);
	return err;
}

static double elapsed_s(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) + (now.tv_nsec - since->tv_nsec) / 1e9;
}

/*
 * Programs run in interrupt context: the wait takes microseconds, unless a
 * virtual CPU was descheduled in the middle of one.  Then it takes what it
 * takes: a warning after FLIP_WARN_S and every FLIP_REWARN_S after that, but
 * no failure, since counting into a set being drained would lose samples.
 */
#define FLIP_WARN_S 1
#define FLIP_REWARN_S 10

static int wait_set_idle(struct session *s, int set, const volatile sig_atomic_t *stop)
{
	const struct timespec ms = { 0, 1000000 };
	double warn_at = FLIP_WARN_S;
	struct timespec start;
	int cpu, err;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		err = busy_cpu(s, set, &cpu);
		if (err || cpu < 0)
			return err;
		if (stop && *stop)
			return -EINTR;
		if (elapsed_s(&start) >= warn_at) {
			pr_warn("CPU %d has not left the sampler on the old map set for %.0f s; still waiting to switch",
				cpu, elapsed_s(&start));
			warn_at += FLIP_REWARN_S;
		}
		nanosleep(&ms, NULL);
	}
}

int session__flip(struct session *s, const volatile sig_atomic_t *stop)
{
	int err;

	/* A flip that a stop request interrupted resumes its wait. */
	if (!s->flip_pending) {
		s->flip_from = s->skel->bss->active_set & 1;
		/* The store, then a full barrier, then the flags: see enter() in bpf/profile.bpf.c. */
		__atomic_store_n(&s->skel->bss->active_set, !s->flip_from, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		s->flip_pending = true;
	}
	err = wait_set_idle(s, s->flip_from, stop);
	if (err)
		return err;
	s->flip_pending = false;
	s->read_set = s->flip_from;
	return 0;
}

/*
 * Delete every entry: first collect the keys (a chain of get_next_key calls,
 * one pass over the map), then delete them, so that deleting never restarts
 * the walk from the first bucket.
 */
static int clear_map(struct bpf_map *map, size_t key_size)
{
	int fd = bpf_map__fd(map);
	size_t n = 0, cap = 0;
	char *keys = NULL;
	int err = 0;

	for (;;) {
		if (util__grow_array((void **)&keys, &cap, n + 1, key_size)) {
			err = -ENOMEM;
			break;
		}
		if (bpf_map_get_next_key(fd, n ? keys + (n - 1) * key_size : NULL,
					 keys + n * key_size))
			break;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * key_size);
	free(keys);
	return err;
}

int session__clear(struct session *s, const struct sample *samples, size_t nr)
{
	const struct map_set *ms = &s->sets[s->read_set];
	int fd = bpf_map__fd(ms->counts);
	int err;

	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(fd, &samples[i].key);
	bulk__drop_stacks(s->bulk);
	/* Stacks whose sample was dropped are referenced by no count: sweep. */
	err = clear_map(ms->stacks, sizeof(__u32));
	if (!err)
		err = clear_map(ms->spilled, sizeof(__u64));
	/* The set is empty: so are its users' shares (no program runs on it). */
	if (!err)
		err = clear_map(ms->users, sizeof(__u32));
	for (int m = 0; !err && m < NR_SHARE_MAPS; m++) {
		s->skel->bss->share_total[s->read_set][m] = 0;
		s->skel->bss->share_holders[s->read_set][m] = 0;
		s->skel->bss->share_spare[s->read_set].n[m] = 0;
	}
	return err;
}
