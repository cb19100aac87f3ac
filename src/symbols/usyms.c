// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space symbolizer: processes, their executable mappings, and a cache
 * of parsed files shared by all processes.
 *
 * Every process we profile is untrusted: it picks its file names, can map
 * FIFOs and devices, truncate or replace its files, exit at any time and
 * have its pid reused.  So files are reached through the process's own
 * /proc entries (procfs.h), only regular files are read, with pread(), not
 * mmap(), and /proc/PID is read only while we believe PID is still the
 * process we know (its start time is checked).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "symbols/caps.h"
#include "symbols/demangle.h"
#include "lib/text.h"
#include "symbols/elf_file.h"
#include "lib/htab.h"
#include "symbols/perfmap.h"
#include "symbols/procfs.h"
#include "symbols/procmaps.h"
#include "symbols/ufiles.h"
#include "symbols/usyms.h"
#include "symbols/dwlines.h"
#include "lib/util.h"
#include "lib/log.h"

/* Minimum time between two re-reads of one process's maps or perf map. */
#define REFRESH_NS		1000000000ULL
/* Exited processes kept because records were lost, at most. */
#define REAP_HOLD_MAX		65536
/*
 * How far a start time known only roughly (a fork record's time, /proc's
 * clock ticks) may be from the kernel's: two processes that had one pid
 * in turn started further apart than this, as the pid went round all
 * pid_max pids in between.
 */
#define START_SLACK_NS		20000000ULL
/*
 * A process that a new one under its pid replaced, kept for its samples
 * under (pid, RETIRED | the low 32 bits of its start) until the report.
 */
#define RETIRED			(1ULL << 32)

struct umap {
	__u64 start, end, pgoff;
	const char *module;
	struct ufile *file;	/* NULL: nothing to read symbols from */
};

/*
 * A process's mappings, sorted by start, not overlapping.  A fork shares
 * its parent's until either side changes them: a process with thousands
 * of mappings that forks in a loop costs one pointer per child.
 */
struct umaps {
	unsigned int refs;
	size_t nr, cap;
	struct umap *v;
};

struct uproc {
	__u32 pid;
	int err;		/* < 0: nothing known, resolves return it */
	bool alive;		/* /proc/PID may still be read */
	bool maps_read;		/* /proc/PID/maps read since the last exec */
	bool owner_known;	/* owner and nspid are valid */
	bool same_mntns;	/* its /tmp is ours */
	unsigned int refreshes;
	__u64 starttime;	/* from /proc/PID/stat: tells pid reuse */
	/*
	 * When it started, CLOCK_MONOTONIC ns as the kernel's records
	 * count: exactly (the sampler's note), or within START_SLACK_NS (its
	 * fork record's time, /proc); 0 when not known.
	 */
	__u64 start_ns;
	bool start_exact;
	bool retired;		/* another process has its pid now */
	bool sampled;		/* it has samples: keep it until the report */
	__u64 read_ns;		/* when maps were last read */
	__u64 maps_ns;		/* ... successfully; they hold what was mapped before */
	struct umaps *maps;	/* NULL: none */
	/* The JIT symbols of /tmp/perf-NSPID.map. */
	struct perfmap *pmap;
	struct perfmap_stamp pstamp;
	struct perfmap_owner owner;
	__u32 nspid;
	unsigned int pmap_looks;
	__u64 pmap_ns;
};

struct usyms {
	struct htab procs;	/* (pid, 0) -> struct uproc */
	/*
	 * Processes that exited without a sample, freed after one more
	 * round of records (a late first-sample note saves one).
	 */
	__u32 *reap_now, *reap_next;
	size_t nr_now, cap_now, nr_next, cap_next;
	size_t held;		/* ... kept instead, as records were lost */
	struct caps caps;
	const volatile sig_atomic_t *stop;
	struct ufiles *files;
	struct htab names;	/* struct dname, see demangled() */
	struct strpool strs;	/* module paths, JIT names */
	struct uproc *last;	/* frames come in runs of one process */
	bool demangle;
	struct usyms_stats stats;
};

/*
 * A demangled name, demangled once while in use: "MANGLED\0DEMANGLED\0",
 * or "MANGLED\0\0" when it does not demangle.  One that no resolve asked
 * for since the last usyms__forget_exited() is freed there.
 */
struct dname {
	bool used;
	char s[];
};

static bool name_eq(const void *val, const void *ctx)
{
	const struct dname *d = val;

	return !strcmp(d->s, ctx);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static __u64 realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* The uid whose eyes a process's debug files are read with; -1: unknown. */
static __s64 reader_of(const struct uproc *p)
{
	return p->owner_known ? (__s64)p->owner.euid : -1;
}

/*
 * A mapping's path as its module name, made safe to print: a path may hold
 * any byte but '/' and NUL, newlines included (a PERF_RECORD_MMAP2 path is
 * raw).  The path itself is left alone: files are opened by it.
 */
static const char *intern_module(struct usyms *u, const char *path, size_t len)
{
	const char *s;
	char *copy;

	if (text__is_safe(path, len))
		return strpool__intern(&u->strs, path, len);
	copy = malloc(len ? len : 1);
	if (!copy)
		return NULL;
	memcpy(copy, path, len);
	text__sanitize(copy, len);
	s = strpool__intern(&u->strs, copy, len);
	free(copy);
	return s;
}

/* A mapping as we keep it; -ENOMEM if its name cannot be kept. */
static int make_umap(struct usyms *u, const struct uproc *p, int dirfd,
		     const struct vma *vma, struct umap *m)
{
	m->start = vma->start;
	m->end = vma->end;
	m->pgoff = vma->pgoff;
	if (vma->kind == VMA_ANON)
		m->module = strpool__intern(&u->strs, "[anon]", 6);
	else
		m->module = intern_module(u, vma->path, vma->path_len);
	if (!m->module)
		return -ENOMEM;
	m->file = ufiles__get(u->files, dirfd, vma, reader_of(p));
	return 0;
}

/* ---- the mappings of a process ---- */

static void umaps__put(struct umaps *ms)
{
	if (ms && !--ms->refs) {
		free(ms->v);
		free(ms);
	}
}

static struct umaps *umaps__get(struct umaps *ms)
{
	if (ms)
		ms->refs++;
	return ms;
}

/* p's mappings, its own (not shared with a fork), with room for extra more. */
static struct umaps *own_maps(struct uproc *p, size_t extra)
{
	struct umaps *ms = p->maps, *copy;

	if (!ms || ms->refs > 1) {
		copy = calloc(1, sizeof(*copy));
		if (!copy)
			return NULL;
		copy->refs = 1;
		if (ms && util__grow_array((void **)&copy->v, &copy->cap,
					   ms->nr + extra, sizeof(*copy->v))) {
			free(copy);
			return NULL;
		}
		if (ms) {
			memcpy(copy->v, ms->v, ms->nr * sizeof(*ms->v));
			copy->nr = ms->nr;
		}
		umaps__put(ms);
		p->maps = ms = copy;
	}
	if (util__grow_array((void **)&ms->v, &ms->cap, ms->nr + extra, sizeof(*ms->v)))
		return NULL;
	return ms;
}

static size_t nr_maps(const struct uproc *p)
{
	return p->maps ? p->maps->nr : 0;
}

static const struct umap *find_map(const struct uproc *p, __u64 addr);

static bool same_map(const struct umap *a, const struct umap *b)
{
	return a && a->start == b->start && a->end == b->end &&
	       a->pgoff == b->pgoff && a->file == b->file && a->module == b->module;
}

/*
 * Insert m, which replaces what it overlaps: mappings it covers go, ones
 * it covers in part are cut to what is left of them.
 */
static int insert_map(struct uproc *p, const struct umap *m)
{
	struct umap left, right, *maps;
	size_t lo = 0, hi, n, at;
	bool has_left, has_right;
	struct umaps *ms;

	/* Known already (maps read again): keep a table shared with forks. */
	if (same_map(find_map(p, m->start), m))
		return 0;
	/* Room for m and the two pieces of a mapping it splits. */
	ms = own_maps(p, 3);
	if (!ms)
		return -ENOMEM;
	maps = ms->v;
	hi = ms->nr;
	while (lo < hi) {	/* the first one ending after m starts */
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].end <= m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < ms->nr && maps[hi].start < m->end; hi++)
		;
	has_left = lo < hi && maps[lo].start < m->start;
	has_right = lo < hi && maps[hi - 1].end > m->end;
	if (has_left) {
		left = maps[lo];
		left.end = m->start;
	}
	if (has_right) {
		right = maps[hi - 1];
		right.pgoff += m->end - right.start;
		right.start = m->end;
	}
	n = (size_t)has_left + 1 + (size_t)has_right;
	memmove(&maps[lo + n], &maps[hi], (ms->nr - hi) * sizeof(*maps));
	ms->nr = ms->nr - (hi - lo) + n;
	at = lo;
	if (has_left)
		maps[at++] = left;
	maps[at++] = *m;
	if (has_right)
		maps[at] = right;
	return 0;
}

static void drop_maps(struct uproc *p)
{
	umaps__put(p->maps);
	p->maps = NULL;
}

/* What the maps walk of one process collects. */
struct scan {
	struct usyms *u;
	struct uproc *p;
	int dirfd;
};

static int scan_vma(const struct vma *vma, void *ctx)
{
	struct scan *sc = ctx;
	struct umap m;
	int err;

	/* Only code can be in a stack; skip the rest. */
	if (!(vma->flags & VMA_EXEC))
		return 0;
	err = make_umap(sc->u, sc->p, sc->dirfd, vma, &m);
	return err ? err : insert_map(sc->p, &m);
}

/*
 * Read the maps of the process open at dirfd into what we knew: what is
 * there now wins, mappings that nothing replaced stay (their code may be
 * in older samples).
 */
static int read_maps(struct usyms *u, struct uproc *p, int dirfd)
{
	struct scan sc = { .u = u, .p = p, .dirfd = dirfd };
	int err;

	u->stats.maps_reads++;
	p->read_ns = now_ns();
	err = procmaps__read_at(dirfd, scan_vma, &sc);
	if (err < 0)
		return err;
	p->maps_read = true;
	p->maps_ns = p->read_ns;
	return 0;
}

/* ---- processes ---- */

/* /proc/PID, if PID is still the process we know; else it is gone. */
static int open_proc(struct uproc *p)
{
	__u64 start;
	int dirfd;

	if (!p->alive)
		return -ESRCH;
	dirfd = procfs__open_pid(p->pid);
	if (dirfd >= 0 && (procfs__starttime(dirfd, &start) ||
			   start != p->starttime)) {
		close(dirfd);
		dirfd = -ESRCH;
	}
	if (dirfd < 0)
		p->alive = false;
	return dirfd;
}

/*
 * Read the perf map through dirfd (the process's /proc dir) or, with -1,
 * through our own /tmp if that is the process's too.
 */
static void read_perfmap(struct usyms *u, struct uproc *p, int dirfd)
{
	struct perfmap *pm;
	char path[40];
	int rootfd, n, err;

	if (!p->owner_known)
		return;
	if (dirfd >= 0)
		rootfd = openat(dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else if (p->same_mntns && p->nspid == p->pid)
		rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else
		return;
	if (rootfd < 0)
		return;
	/* The runtime names the file with its pid as it sees it. */
	n = snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->nspid);
	err = perfmap__read_at(rootfd, path, (size_t)n, &p->owner, &p->pstamp,
			       &pm);
	close(rootfd);
	if (err == -EPERM)
		u->stats.perfmaps_refused++;
	if (err == -EFBIG || (!err && perfmap__capped(pm)))
		caps__hit(&u->caps, CAP_BIT(CAP_PERFMAP), path, (size_t)n);
	if (err)
		return;
	perfmap__free(p->pmap);
	p->pmap = pm;
	u->stats.perfmaps++;
}

/* What tells pid reuse and who may write its perf map; alive or not. */
static void learn_process(struct usyms *u, struct uproc *p, int dirfd)
{
	struct procfs_status st;

	p->alive = dirfd >= 0 && !procfs__starttime(dirfd, &p->starttime);
	if (!p->alive)
		return;
	if (!p->start_ns)
		p->start_ns = procfs__start_monotonic_ns(p->starttime);
	p->owner_known = !procfs__status(dirfd, &st);
	if (p->owner_known) {
		p->owner.euid = st.euid;
		p->owner.fsuid = st.fsuid;
		p->owner.not_before_ns = procfs__start_realtime_ns(p->starttime);
		p->nspid = st.nspid ? st.nspid : p->pid;
		p->same_mntns = procfs__same_mntns(dirfd);
	}
	read_perfmap(u, p, dirfd);
}

static void free_proc(struct uproc *p)
{
	umaps__put(p->maps);
	perfmap__free(p->pmap);
	free(p);
}

/*
 * The process that had pid before a new one: kept apart for its samples if
 * it has some that the sampler told by its start; else freed.  -ENOMEM.
 */
static int retire(struct usyms *u, struct uproc *old)
{
	__u64 key = RETIRED | (__u32)old->start_ns;
	struct uproc *was;

	old->alive = false;
	/* It is freed below, or kept apart where is_start() looks for it. */
	if (u->last == old)
		u->last = NULL;
	if (!old->sampled || !old->start_exact) {
		free_proc(old);
		return 0;
	}
	old->retired = true;
	was = htab__get(&u->procs, old->pid, key);
	if (htab__put(&u->procs, old->pid, key, old)) {
		free_proc(old);
		return -ENOMEM;
	}
	if (was) {
		if (u->last == was)
			u->last = NULL;
		free_proc(was);
	}
	u->stats.procs_retired++;
	return 0;
}

/* A new entry for pid, replacing any older one (pid reuse). */
static struct uproc *new_proc(struct usyms *u, __u32 pid)
{
	struct uproc *p = calloc(1, sizeof(*p)), *old;

	if (!p)
		return NULL;
	p->pid = pid;
	old = htab__get(&u->procs, pid, 0);
	if (htab__put(&u->procs, pid, 0, p)) {
		free(p);
		return NULL;
	}
	if (old && retire(u, old)) {
		htab__del_key(&u->procs, pid, 0);
		free(p);
		return NULL;
	}
	u->stats.procs++;
	return p;
}

/* A new entry for pid, learned from /proc now if it is alive. */
static struct uproc *learn_new(struct usyms *u, __u32 pid, int *dirfdp)
{
	struct uproc *p = new_proc(u, pid);
	int dirfd;

	if (!p)
		return NULL;
	dirfd = procfs__open_pid(pid);
	learn_process(u, p, dirfd);
	if (dirfdp)
		*dirfdp = dirfd;
	else if (dirfd >= 0)
		close(dirfd);
	return p;
}

/* A process met in a resolve: learn it and read all its maps now. */
static int add_process(struct usyms *u, __u32 pid, struct uproc **out)
{
	struct uproc *p;
	int dirfd = -1;

	p = learn_new(u, pid, &dirfd);
	if (!p)
		return -ENOMEM;
	p->err = p->alive ? read_maps(u, p, dirfd) : -ENOENT;
	if (dirfd >= 0)
		close(dirfd);
	/* ESRCH: the task died between open and read. */
	if (p->err == -ESRCH)
		p->err = -ENOENT;
	if (p->err) {
		p->alive = false;
		u->stats.procs_gone++;
	}
	*out = p;
	return 0;
}

/*
 * Whether p may be the process that started at start (low 32 bits; 0: the
 * pid's process now): the very start if p's is exact, else one within the
 * slack either way.
 */
static bool is_start(const struct uproc *p, __u32 start)
{
	__u32 d = start - (__u32)p->start_ns;

	if (!start)
		return !p->retired;
	if (!p->start_ns)
		return true;
	if (p->start_exact)
		return !d;
	return d <= START_SLACK_NS || -d <= START_SLACK_NS;
}

/*
 * The process pid names for a sample whose process started at start (the
 * low 32 bits, 0 if the sampler did not say): one a new one under its pid
 * replaced, or the one known now, read on first use.  -ESRCH: the pid's
 * process now is another, and the sample's is not known.
 */
static int get_process(struct usyms *u, __u32 pid, __u32 start, struct uproc **out)
{
	struct uproc *p;

	if (u->last && u->last->pid == pid && is_start(u->last, start)) {
		*out = u->last;
		return 0;
	}
	p = start ? htab__get(&u->procs, pid, RETIRED | start) : NULL;
	if (!p)
		p = htab__get(&u->procs, pid, 0);
	if (p && !is_start(p, start))
		return -ESRCH;
	if (!p) {
		int err = add_process(u, pid, &p);

		if (err)
			return err;
		/* /proc/PID is another process now. */
		if (!is_start(p, start))
			return -ESRCH;
	}
	u->last = p;
	*out = p;
	return 0;
}

static int read_rest(struct usyms *u, struct uproc *p);

int usyms__add_process(struct usyms *u, __u32 pid)
{
	struct uproc *p;
	int err;

	err = get_process(u, pid, 0, &p);
	if (err)
		return err;
	return read_rest(u, p);
}

/*
 * Whether something of pid at time ns (CLOCK_MONOTONIC, a record's time or
 * a process's start) may be of the process known under pid now: not if
 * that one started after it.
 */
static bool is_current(const struct uproc *p, __u64 ns)
{
	__u64 slack = p->start_exact ? 0 : START_SLACK_NS;

	return !p->start_ns || !ns || ns + slack >= p->start_ns;
}

bool usyms__current(const struct usyms *u, __u32 pid, __u64 ns)
{
	const struct uproc *p = htab__get(&u->procs, pid, 0);

	return !p || is_current(p, ns);
}

int usyms__add_noted(struct usyms *u, __u32 pid, __u64 start)
{
	struct uproc *p = htab__get(&u->procs, pid, 0);
	bool fresh;

	if (!start)
		return usyms__add_process(u, pid);
	if (p && !is_current(p, start))
		return -ESTALE;
	/* A process started after the one known: its fork record was lost. */
	if (p && (p->start_exact ? start != p->start_ns :
				   start > p->start_ns + START_SLACK_NS))
		p = NULL;
	fresh = !p;
	if (fresh) {
		p = learn_new(u, pid, NULL);
		if (!p)
			return -ENOMEM;
	}
	/* /proc shows a process that started later: this one is gone. */
	if (p->alive && !p->start_exact && p->start_ns > start + START_SLACK_NS)
		p->alive = false;
	if (fresh && !p->alive) {
		p->err = -ENOENT;
		u->stats.procs_gone++;
	}
	p->start_ns = start;
	p->start_exact = true;
	u->last = p;
	return read_rest(u, p);
}

/* A process sampled: what records did not tell of it is read now. */
static int read_rest(struct usyms *u, struct uproc *p)
{
	int dirfd;

	p->sampled = true;
	/* Known from records only: read the rest while it is there. */
	if (!p->maps_read && p->alive) {
		dirfd = open_proc(p);
		if (dirfd >= 0) {
			if (!read_maps(u, p, dirfd))
				p->err = 0;
			close(dirfd);
		}
	}
	return p->err;
}

int usyms__add_mapping(struct usyms *u, __u32 pid,
		       const struct usyms_mapping *m)
{
	struct vma vma = {
		.start = m->start, .end = m->end, .pgoff = m->pgoff,
		.inode = m->ino, .dev_major = m->maj, .dev_minor = m->min,
		.flags = VMA_EXEC,
	};
	struct uproc *p = htab__get(&u->procs, pid, 0);
	struct umap um;
	int dirfd = -1, err;

	if (!(m->prot & PROT_EXEC))
		return 0;
	if (m->start >= m->end || !m->path)
		return -EINVAL;
	/* Its maps were read since: they hold the mapping, or it went. */
	if (p && p->maps_read && m->time && m->time < p->maps_ns)
		return 0;
	procmaps__set_path(&vma, m->path, strlen(m->path));
	if (!p) {
		p = learn_new(u, pid, &dirfd);
		if (!p)
			return -ENOMEM;
	} else {
		dirfd = open_proc(p);
	}
	err = make_umap(u, p, dirfd, &vma, &um);
	if (dirfd >= 0)
		close(dirfd);
	if (!err)
		err = insert_map(p, &um);
	if (err)
		return err;
	/* Known now, even if it was gone when first looked at. */
	p->err = 0;
	u->stats.mappings++;
	return 0;
}

int usyms__exec(struct usyms *u, __u32 pid)
{
	struct uproc *p = htab__get(&u->procs, pid, 0);
	int dirfd;

	if (!p)
		return learn_new(u, pid, NULL) ? 0 : -ENOMEM;
	drop_maps(p);
	perfmap__free(p->pmap);
	p->pmap = NULL;
	memset(&p->pstamp, 0, sizeof(p->pstamp));
	p->maps_read = false;
	p->maps_ns = 0;
	p->refreshes = 0;
	p->pmap_looks = 0;
	p->err = 0;
	/* A set-user-ID image changes who may write its perf map. */
	dirfd = open_proc(p);
	if (dirfd >= 0) {
		learn_process(u, p, dirfd);
		close(dirfd);
	}
	return 0;
}

int usyms__fork(struct usyms *u, __u32 ppid, __u32 pid)
{
	return usyms__fork_at(u, ppid, pid, 0);
}

int usyms__fork_at(struct usyms *u, __u32 ppid, __u32 pid, __u64 time)
{
	struct uproc *parent, *child;
	int err;

	if (ppid == pid)
		return 0;	/* a thread, not a process */
	child = htab__get(&u->procs, pid, 0);
	/* Known already from its note: the record came a round late. */
	if (time && child && child->start_exact && child->start_ns <= time &&
	    time - child->start_ns <= START_SLACK_NS)
		return 0;
	parent = htab__get(&u->procs, ppid, 0);
	if (!parent) {
		err = add_process(u, ppid, &parent);
		if (err)
			return err;
	}
	child = learn_new(u, pid, NULL);
	if (!child)
		return -ENOMEM;
	child->maps = umaps__get(parent->maps);
	if (!time)
		return 0;
	/* /proc shows a process that started later: the child is gone. */
	if (child->alive && child->start_ns > time + START_SLACK_NS)
		child->alive = false;
	child->start_ns = time;
	return 0;
}

/* pid exited without samples: nothing to name for it, forget it soon. */
static int reap_later(struct usyms *u, __u32 pid)
{
	if (util__grow_array((void **)&u->reap_now, &u->cap_now, u->nr_now + 1,
			     sizeof(*u->reap_now)))
		return -ENOMEM;
	u->reap_now[u->nr_now++] = pid;
	return 0;
}

int usyms__exit(struct usyms *u, __u32 pid)
{
	struct uproc *p = htab__get(&u->procs, pid, 0);

	if (!p) {
		/* Remember it is gone, so that its pid is not read for now. */
		p = new_proc(u, pid);
		if (!p)
			return -ENOMEM;
		p->err = -ENOENT;
		return reap_later(u, pid);
	}
	/* Also one gone when first looked at: a fork that exited at once. */
	if (!p->sampled) {
		p->alive = false;
		return reap_later(u, pid);
	}
	if (!p->alive)
		return 0;
	p->alive = false;
	/* A runtime may leave its perf map behind: a last look. */
	if (p->owner_known) {
		p->owner.not_after_ns = realtime_ns();
		read_perfmap(u, p, -1);
	}
	return 0;
}

/* Free pid's entry if it is still a process that exited without samples. */
static void reap_one(struct usyms *u, __u32 pid)
{
	struct hent *e = htab__slot(&u->procs, pid, 0, NULL, NULL);
	struct uproc *p = e ? e->val : NULL;

	if (!p || p->alive || p->sampled)
		return;		/* a new process under the pid, or sampled late */
	if (u->last == p)
		u->last = NULL;
	htab__del(&u->procs, e);
	free_proc(p);
	u->stats.procs_reaped++;
}

/*
 * Records were lost: the processes of these lists may have lost their
 * first-sample note with them, so keep them as if sampled, up to a bound
 * (a flood could otherwise hold every exit for ever: past it, a lost note
 * costs [unknown] frames, not memory).
 */
static void hold(struct usyms *u, const __u32 *pids, size_t nr)
{
	struct uproc *p;

	for (size_t i = 0; i < nr && u->held < REAP_HOLD_MAX; i++) {
		p = htab__get(&u->procs, pids[i], 0);
		if (p && !p->alive && !p->sampled) {
			p->sampled = true;
			u->held++;
		}
	}
}

void usyms__reap(struct usyms *u, bool keep)
{
	__u32 *t;
	size_t c;

	if (keep) {
		hold(u, u->reap_next, u->nr_next);
		hold(u, u->reap_now, u->nr_now);
	}
	for (size_t i = 0; i < u->nr_next; i++)
		reap_one(u, u->reap_next[i]);
	/* This round's exits wait one round more; the older list is reused. */
	t = u->reap_next, u->reap_next = u->reap_now, u->reap_now = t;
	c = u->cap_next, u->cap_next = u->cap_now, u->cap_now = c;
	u->nr_next = u->nr_now;
	u->nr_now = 0;
}

size_t usyms__take_fetched(struct usyms *u)
{
	return ufiles__take_fetched(u->files);
}

bool usyms__knows(const struct usyms *u, __u32 pid)
{
	return htab__get(&u->procs, pid, 0) != NULL;
}

size_t usyms__recover(struct usyms *u)
{
	struct uproc *p;
	struct hent *e;
	size_t n = 0;
	int dirfd;

	for (size_t pos = 0; (e = htab__next(&u->procs, &pos));) {
		if (u->stop && *u->stop)
			break;
		p = e->val;
		dirfd = open_proc(p);
		if (dirfd < 0)
			continue;
		if (!read_maps(u, p, dirfd))
			n++;
		close(dirfd);
	}
	return n;
}

/* Drop the processes that exited from the table. */
static void forget_procs(struct usyms *u)
{
	struct uproc *p;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&u->procs, &pos));) {
		p = e->val;
		if (p->alive)
			continue;
		if (u->last == p)
			u->last = NULL;
		htab__del(&u->procs, e);
		free_proc(p);
	}
	htab__compact(&u->procs);
}

/* Free the parsed files that no process we still know maps. */
static void prune_files(struct usyms *u)
{
	const struct uproc *p;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&u->procs, &pos));) {
		p = e->val;
		for (size_t j = 0; j < nr_maps(p); j++) {
			if (p->maps->v[j].file)
				ufiles__keep(p->maps->v[j].file);
		}
	}
	ufiles__sweep(u->files);
}

/*
 * Intern the module of every mapping we still know into to, or with
 * repoint, point the mappings at the copies interned before.  -ENOMEM.
 */
static int move_modules(struct usyms *u, struct strpool *to, bool repoint)
{
	const char *s;
	struct uproc *p;
	struct umap *m;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&u->procs, &pos));) {
		p = e->val;
		for (size_t j = 0; j < nr_maps(p); j++) {
			m = &p->maps->v[j];
			s = repoint ? strpool__find(to, m->module, strlen(m->module))
				    : strpool__intern(to, m->module, strlen(m->module));
			if (!s)
				return -ENOMEM;
			if (repoint)
				m->module = s;
		}
	}
	return 0;
}

/*
 * Rebuild the string pool with only the module paths of the mappings we
 * still know: the JIT names and the paths of forgotten processes go.
 */
static void compact_strs(struct usyms *u)
{
	struct strpool fresh = {};

	if (move_modules(u, &fresh, false)) {
		strpool__free(&fresh);	/* out of memory: keep the old one */
		return;
	}
	move_modules(u, &fresh, true);	/* finds them all: no allocation */
	strpool__free(&u->strs);
	u->strs = fresh;
}

/* Free the demangled names no resolve asked for since the last prune. */
static void prune_names(struct usyms *u)
{
	struct dname *d;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&u->names, &pos));) {
		d = e->val;
		if (d->used) {
			d->used = false;
			continue;
		}
		htab__del(&u->names, e);
		free(d);
	}
	htab__compact(&u->names);
}

void usyms__forget_exited(struct usyms *u)
{
	forget_procs(u);
	prune_files(u);
	compact_strs(u);
	prune_names(u);
}

/* ---- lookups ---- */

static bool may_refresh(const struct uproc *p)
{
	return p->alive && (!p->maps_read || !p->refreshes ||
			    now_ns() - p->read_ns >= REFRESH_NS);
}

static void refresh_process(struct usyms *u, struct uproc *p)
{
	int dirfd;

	p->refreshes++;
	p->read_ns = now_ns();
	dirfd = open_proc(p);
	if (dirfd < 0)
		return;
	if (read_maps(u, p, dirfd))
		p->alive = false;
	close(dirfd);
}

static const struct umap *find_map(const struct uproc *p, __u64 addr)
{
	const struct umap *v = p->maps ? p->maps->v : NULL;
	size_t lo = 0, hi = nr_maps(p);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= v[lo - 1].end)
		return NULL;
	return &v[lo - 1];
}

static void symbolize(const struct umap *m, __u64 addr, struct usym *sym)
{
	const struct ufile *f = m->file;
	__u64 vaddr;

	sym->module = m->module;
	sym->map_start = m->start;
	sym->map_end = m->end;
	sym->map_pgoff = m->pgoff;
	/* A vdso image is the mapping itself, whatever pgoff says. */
	sym->file_offset = addr - m->start + (f && f->image ? 0 : m->pgoff);
	if (!f || !f->elf)
		return;
	m->file->sampled = true;	/* its debug file is wanted (ufiles.h) */
	sym->build_id = elf_file__build_id(f->elf);
	if (elf_file__offset_to_vaddr(f->elf, sym->file_offset, &vaddr))
		return;
	sym->name = elf_file__find(f->elf, vaddr, &sym->offset);
}

/* The perf map's name for addr, looked for again if the JIT went on. */
static const char *find_jit(struct usyms *u, struct uproc *p, __u64 addr,
			    __u64 *offset)
{
	const char *name;
	int dirfd;

	if (p->alive && (!p->pmap_looks || now_ns() - p->pmap_ns >= REFRESH_NS)) {
		p->pmap_looks++;
		p->pmap_ns = now_ns();
		dirfd = open_proc(p);
		if (dirfd >= 0) {
			read_perfmap(u, p, dirfd);
			close(dirfd);
		}
	}
	if (!p->pmap)
		return NULL;
	name = perfmap__find(p->pmap, addr, offset);
	/* Keep it: the map is replaced when the file is read again. */
	return name ? strpool__intern(&u->strs, name, strlen(name)) : NULL;
}

static struct dname *new_dname(const char *name, size_t len)
{
	char *dm = demangle__name(name);
	size_t dlen = dm ? strlen(dm) : 0;
	struct dname *d = malloc(sizeof(*d) + len + dlen + 2);

	if (d) {
		d->used = false;
		memcpy(d->s, name, len + 1);
		memcpy(d->s + len + 1, dm ? dm : "", dlen + 1);
	}
	free(dm);
	return d;
}

static const char *demangled(struct usyms *u, const char *name)
{
	struct dname *d;
	struct hent *e;
	size_t len;
	__u64 h;

	if (!u->demangle || !demangle__is_mangled(name))
		return name;
	len = strlen(name);
	h = htab__hash_bytes(name, len);
	e = htab__slot(&u->names, h, len, name_eq, name);
	if (!e)
		return name;
	if (!e->val) {
		d = new_dname(name, len);
		if (!d)
			return name;
		htab__fill(&u->names, e, h, len, d);
		if (d->s[len + 1])
			u->stats.demangled++;
	}
	d = e->val;
	d->used = true;
	return d->s[len + 1] ? d->s + len + 1 : name;
}

int usyms__resolve(struct usyms *u, __u32 pid, __u64 addr, struct usym *sym)
{
	return usyms__resolve_start(u, pid, 0, addr, sym);
}

int usyms__resolve_start(struct usyms *u, __u32 pid, __u32 start, __u64 addr,
			 struct usym *sym)
{
	const struct umap *m;
	struct uproc *p;
	int err;

	err = get_process(u, pid, start, &p);
	if (err)
		return err;
	p->sampled = true;
	if (p->err)
		return p->err;
	m = find_map(p, addr);
	if (!m && may_refresh(p)) {
		refresh_process(u, p);
		m = find_map(p, addr);
	}
	memset(sym, 0, sizeof(*sym));
	if (m)
		symbolize(m, addr, sym);
	if (!sym->name)
		sym->name = find_jit(u, p, addr, &sym->offset);
	if (!m && !sym->name)
		return -ENOENT;
	if (!m) {
		/* JIT code in a mapping we never saw: the process is gone. */
		sym->module = strpool__intern(&u->strs, "[anon]", 6);
		sym->file_offset = addr;
	}
	if (sym->name) {
		const char *raw = sym->name;

		sym->name = demangled(u, raw);
		sym->demangled = sym->name != raw;
	}
	return 0;
}

int usyms__lines(struct usyms *u, __u32 pid, __u32 start, __u64 addr,
		 struct dwline *out, int max)
{
	const struct umap *m;
	struct dwlines *dw;
	struct uproc *p;
	__u64 off, vaddr;
	int n;

	if (get_process(u, pid, start, &p) || p->err)
		return 0;
	m = find_map(p, addr);
	if (!m || !m->file || !m->file->elf || m->file->image)
		return 0;
	off = addr - m->start + m->pgoff;
	if (elf_file__offset_to_vaddr(m->file->elf, off, &vaddr))
		return 0;
	dw = ufiles__dwlines(u->files, m->file);
	if (!dw)
		return 0;
	n = dwlines__find(dw, vaddr, out, max);
	for (int i = 0; i < n; i++) {
		const char *raw = out[i].name;

		if (raw)
			out[i].name = demangled(u, raw);
		out[i].demangled = raw && out[i].name != raw;
	}
	return n;
}

struct usyms *usyms__new_opts(const struct usyms_opts *opts)
{
	struct usyms *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->demangle = !(opts && opts->no_demangle);
	u->stop = opts ? opts->stop : NULL;
	u->files = ufiles__new(opts ? opts->debug_dir : NULL,
			       opts ? opts->debuginfod : NULL, u->stop, &u->caps);
	if (!u->files) {
		free(u);
		return NULL;
	}
	return u;
}

struct usyms *usyms__new(void)
{
	return usyms__new_opts(NULL);
}

void usyms__free(struct usyms *u)
{
	struct hent *e;

	if (!u)
		return;
	for (size_t pos = 0; (e = htab__next(&u->procs, &pos));)
		free_proc(e->val);
	for (size_t pos = 0; (e = htab__next(&u->names, &pos));)
		free(e->val);
	ufiles__free(u->files);
	free(u->reap_now);
	free(u->reap_next);
	htab__free(&u->procs);
	htab__free(&u->names);
	strpool__free(&u->strs);
	free(u);
}

void usyms__stats(const struct usyms *u, struct usyms_stats *st)
{
	struct ufiles_stats fs;

	ufiles__stats(u->files, &fs);
	*st = u->stats;
	st->files = fs.files;
	st->files_parsed = fs.files_parsed;
	st->files_pruned = fs.files_pruned;
	st->vdsos = fs.vdsos;
	st->debug_files = fs.debug_files;
	st->minidebug = fs.minidebug;
	st->debuginfod_files = fs.debuginfod_files;
	st->dwarf_opened = fs.dwarf_opened;
	st->dwarf_closed = fs.dwarf_closed;
	st->dwarf_refused = fs.dwarf_refused;
	st->str_bytes = strpool__bytes(&u->strs);
	st->names = u->names.nr;
	st->vdsos_pruned = fs.vdsos_pruned;
	st->procs_now = u->procs.nr;
}

void usyms__report(const struct usyms *u, enum report_pass pass)
{
	struct usyms_stats st = {};

	if (pass == REPORT_WARN) {
		if (u)
			caps__report(&u->caps, REPORT_WARN);
		return;
	}
	if (u)
		usyms__stats(u, &st);
	pr_info("files: %llu opened, %llu parsed, %llu pruned, %llu with debug files, %llu with MiniDebugInfo, %llu from debuginfod, %llu perf maps, %llu perf maps refused; vdso images: %llu, %llu pruned",
		(unsigned long long)st.files, (unsigned long long)st.files_parsed,
		(unsigned long long)st.files_pruned,
		(unsigned long long)st.debug_files, (unsigned long long)st.minidebug,
		(unsigned long long)st.debuginfod_files,
		(unsigned long long)st.perfmaps, (unsigned long long)st.perfmaps_refused,
		(unsigned long long)st.vdsos, (unsigned long long)st.vdsos_pruned);
	pr_info("DWARF lines: %llu opened, %llu closed for the budget, %llu refused",
		(unsigned long long)st.dwarf_opened, (unsigned long long)st.dwarf_closed,
		(unsigned long long)st.dwarf_refused);
	if (u)
		caps__report(&u->caps, REPORT_STATS);
}
