// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fetching debug files through libdebuginfod, in worker threads.
 *
 * Each thread of the worker has its own client (libdebuginfod's are not
 * shared between threads).  The worker's queue holds one token per lookup
 * queued, not the lookup: the thread that takes a token serves the lookup
 * pick() chooses then, fair between users.  A lookup is
 * cut short by returning non-zero from the client's progress callback,
 * which the library calls at least once a second while it waits on its
 * sockets; to end one at once, the worker sends its threads SIGURG when it
 * stops, whose no-op handler makes that wait return early.  The callback
 * finds its thread's state through this_fetcher, set by each thread for
 * itself.
 *
 * The lock guards the lookups' states, the users and the share of bytes;
 * the progress callback takes it to count a download's bytes.  A thread
 * only checks that a file looks like ELF; the run's thread parses it when
 * it is handed out, without the lock.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/debuginfod.h>

#include "symbols/debuginfod.h"
#include "symbols/elf_file.h"
#include "lib/log.h"
#include "lib/share.h"
#include "lib/text.h"
#include "lib/util.h"
#include "lib/worker.h"

#define NR_WORKERS	4
/* A GNU build-id is 8 to 64 bytes; ours are hex. */
#define ID_MIN_HEX	8
#define ID_MAX_HEX	128
/* The report shows progress once it has waited this long. */
#define PROGRESS_AFTER_S	0.5
#define WAIT_STEP_MS		100

enum lookup_state {
	LK_QUEUED,
	LK_RUNNING,
	LK_FOUND,		/* dbg is the debug file */
	LK_NOT_FOUND,		/* no server has it */
	LK_FAILED,		/* fault says why */
};

enum fault {
	FAULT_NONE,
	FAULT_WAIT,		/* no answer within the report's wait */
	FAULT_STOPPED,		/* still under way when the run was stopped */
	FAULT_TIMEOUT,		/* DEBUGINFOD_TIMEOUT or _MAXTIME ran out */
	FAULT_TOO_BIG,		/* over DEBUGINFOD_MAX_BYTES or _MAXSIZE */
	FAULT_BYTES,		/* over its user's or the run's bytes: share__report() */
	FAULT_OTHER_ID,		/* an ELF file of another build-id */
	FAULT_NOT_ELF,		/* not an ELF file */
	FAULT_BAD_ELF,		/* an ELF file cut short, or corrupt */
	FAULT_NO_SYMTAB,	/* an ELF file without a symbol table */
	FAULT_ERRNO,		/* the library's error: err */
	NR_FAULTS,
};

struct lookup {
	char id[ID_MAX_HEX + 1];
	char *object;		/* for messages, sanitized */
	double asked;		/* when requested, monotonic seconds */
	enum lookup_state state;
	enum fault fault;
	int err;		/* FAULT_ERRNO: the library's errno */
	char *server;		/* the server that answered, if known */
	long bytes;		/* downloaded so far */
	char *path;		/* LK_FOUND: the file in the cache, parsed when handed out */
	bool taken;		/* handed out by debuginfod__next_wanted() */
	bool parsed;		/* ... at least once */
	__s64 uid;		/* of the first process that mapped the object */
	size_t user;		/* its index in debuginfod.users */
	__u64 held;		/* bytes counted against the user (never given back) */
	bool over;		/* went over the bytes: refused once */
};

/* A user whose processes asked for lookups, for pick(). */
struct dfd_user {
	__s64 uid;
	size_t started;		/* lookups started for it so far */
	bool over;		/* went over its bytes: no more lookups started */
};

/* A thread of the worker: its client and its lookup. */
struct fetcher {
	struct debuginfod *d;
	debuginfod_client *c;	/* NULL: out of memory */
	struct lookup *lk;	/* the lookup under way, or NULL */
	bool too_big;		/* set by the progress callback */
	bool over;		/* ... over the bytes */
	bool cut;		/* the progress callback ended the lookup */
};

/* The library's entry points, from dlopen(). */
struct dfd_api {
	void *handle;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int,
			      char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	const char *(*get_url)(debuginfod_client *);
};

struct debuginfod {
	struct debuginfod_opts o;
	char *urls;		/* for messages, sanitized */
	char *cache;		/* the library's cache directory, or NULL */
	struct dfd_api api;
	struct worker *worker;	/* its queue of struct lookup *, its threads */
	struct fetcher fetchers[NR_WORKERS];
	pthread_mutex_t lock;
	pthread_cond_t done;	/* a lookup ended */
	bool quit;		/* atomic: read by the progress callback */
	struct lookup **v;	/* in the order asked */
	size_t nr, cap;
	struct dfd_user *users;
	size_t nr_users, cap_users;
	struct share bytes;	/* debug files' bytes per user, of the run's */
	__u64 refused;
	__s64 refused_uid;	/* the first user refused */
	double waited;
};

/* The fetcher this thread is, for the library's progress callback. */
static __thread struct fetcher *this_fetcher;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the library ---- */

static int load_api(struct dfd_api *a)
{
	a->handle = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!a->handle)
		return -ENOENT;
	*(void **)&a->begin = dlsym(a->handle, "debuginfod_begin");
	*(void **)&a->end = dlsym(a->handle, "debuginfod_end");
	*(void **)&a->find_debuginfo = dlsym(a->handle, "debuginfod_find_debuginfo");
	*(void **)&a->set_progressfn = dlsym(a->handle, "debuginfod_set_progressfn");
	*(void **)&a->get_url = dlsym(a->handle, "debuginfod_get_url");
	if (!a->begin || !a->end || !a->find_debuginfo || !a->set_progressfn ||
	    !a->get_url) {
		dlclose(a->handle);
		a->handle = NULL;
		return -ENOSYS;
	}
	return 0;
}

/*
 * The library's cache directory, found as it finds it:
 * DEBUGINFOD_CACHE_PATH, else an existing ~/.debuginfod_client_cache, else
 * $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client, with
 * / for ~ when HOME is unset.
 */
static char *cache_dir(void)
{
	const char *env = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR);
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CACHE_HOME");
	char path[4096];
	struct stat st;

	if (env && *env)
		return strdup(env);
	if (!home || !*home)
		home = "/";
	snprintf(path, sizeof(path), "%s/.debuginfod_client_cache", home);
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return strdup(path);
	if (xdg && *xdg)
		snprintf(path, sizeof(path), "%s/debuginfod_client", xdg);
	else
		snprintf(path, sizeof(path), "%s/.cache/debuginfod_client", home);
	return strdup(path);
}

/* ---- one lookup, in a worker ---- */

static void nop_handler(int sig)
{
	(void)sig;
}

/*
 * Called locked: count lk's file, `bytes` of it so far, against its
 * user's bytes and the run's.  False when over either: refused, once, and
 * the user starts no more lookups.  What was downloaded stays counted, whatever becomes of
 * the file.  Root's processes map only files root chose: their bytes are
 * bounded per file only (DEBUGINFOD_MAX_BYTES), as before users shared.
 */
static bool charge(struct debuginfod *d, struct lookup *lk, __u64 bytes)
{
	__u32 uid = (__u32)lk->uid, evict;
	__u64 n;

	if (lk->over)
		return false;
	if (bytes <= lk->held)
		return true;
	n = bytes - lk->held;
	if (lk->uid == 0) {
		lk->held = bytes;
		return true;
	}
	if (share__held(&d->bytes, uid) + n > DEBUGINFOD_USER_BYTES) {
		share__refuse(&d->bytes, uid);
	} else {
		switch (share__take(&d->bytes, uid, n, &evict)) {
		case SHARE_TAKEN:
			lk->held += n;
			return true;
		case SHARE_EVICT:
			/* Bytes downloaded cannot be taken back. */
			share__refuse(&d->bytes, uid);
			break;
		case SHARE_REFUSED:
			break;
		}
	}
	lk->over = true;
	d->users[lk->user].over = true;
	return false;
}

/*
 * The library's progress callback, in the worker's thread: a non-zero
 * return ends the lookup.  done and total are bytes; total is 0 until the
 * server has said.
 */
static int on_progress(debuginfod_client *c, long done, long total)
{
	struct fetcher *w = this_fetcher;

	(void)c;
	if (!w || !w->lk)
		return 0;
	/* Before a server answers, done counts the library's loops. */
	if (total > 0)
		__atomic_store_n(&w->lk->bytes, done, __ATOMIC_RELAXED);
	if ((unsigned long)done > DEBUGINFOD_MAX_BYTES ||
	    (unsigned long)total > DEBUGINFOD_MAX_BYTES) {
		w->too_big = true;
	} else if (total > 0) {
		pthread_mutex_lock(&w->d->lock);
		if (!charge(w->d, w->lk, (__u64)(done > total ? done : total)))
			w->over = true;
		pthread_mutex_unlock(&w->d->lock);
	}
	w->cut = w->too_big || w->over ||
		 __atomic_load_n(&w->d->quit, __ATOMIC_RELAXED);
	return w->cut;
}

static bool is_temp_name(const char *name)
{
	return !strncmp(name, "debuginfo.", 10) && strlen(name) == 16;
}

/*
 * After a lookup that was cut short, failed or found nothing: remove
 * what it left in the cache directory of id since `since` (seconds,
 * CLOCK_REALTIME), so that no later run takes it for an answer.  The
 * library leaves an empty "debuginfo" (its mark for "no server has it",
 * trusted for 10 minutes, DEBUGINFOD_CACHE_PATH/cache_miss_s) when a
 * server says 404 or its progress callback ends a lookup, and its
 * temporary file when a transfer times out.  The marks of a real 404 go
 * too: any user makes one, and a directory, in root's cache for every
 * build-id it invents, and a mark only saves one request to a later run
 * within those minutes.  A mark that was there before stays.
 */
static void clean_cache(const struct debuginfod *d, const char *id,
			bool had_entry, time_t since)
{
	char dir[4096];
	struct dirent *de;
	struct stat st;
	DIR *dp;

	if (!d->cache ||
	    snprintf(dir, sizeof(dir), "%s/%s", d->cache, id) >= (int)sizeof(dir))
		return;
	dp = opendir(dir);
	if (!dp)
		return;
	while ((de = readdir(dp))) {
		if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if ((!strcmp(de->d_name, "debuginfo") && !had_entry && st.st_size == 0) ||
		    (is_temp_name(de->d_name) && st.st_mtime >= since))
			unlinkat(dirfd(dp), de->d_name, 0);
	}
	closedir(dp);
	rmdir(dir);	/* if empty */
}

/* Whether the cache holds an entry for id now (an answer, or a miss). */
static bool has_entry(const struct debuginfod *d, const char *id)
{
	char path[4096];
	struct stat st;

	if (!d->cache || snprintf(path, sizeof(path), "%s/%s/debuginfo", d->cache,
				  id) >= (int)sizeof(path))
		return false;
	return !lstat(path, &st);
}

static enum fault fault_of(int err)
{
	switch (err) {
	case -ETIME:
	case -ETIMEDOUT:
		return FAULT_TIMEOUT;
	case -EFBIG:
		return FAULT_TOO_BIG;
	default:
		return FAULT_ERRNO;
	}
}

/*
 * What the library gave, at a glance: a regular file that starts as ELF,
 * not over the size cap, not cut short.  FAULT_NONE with its size in
 * *bytes, or why not.  parse_file() checks the rest.
 */
static enum fault check_file(int fd, long *bytes)
{
	Elf64_Ehdr eh;
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return FAULT_NOT_ELF;
	if ((__u64)st.st_size > DEBUGINFOD_MAX_BYTES)
		return FAULT_TOO_BIG;
	/* Cut short: its section headers, at the end, are past it. */
	if (eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_shoff + (__u64)eh.e_shnum * eh.e_shentsize > (__u64)st.st_size)
		return FAULT_BAD_ELF;
	*bytes = st.st_size;
	return FAULT_NONE;
}

/*
 * Parse the debug file at path: an ELF file with a symbol table and id's
 * build-id.  FAULT_NONE with *dbg set, or why not.
 */
static enum fault parse_file(const char *path, const char *id,
			     struct elf_file **dbg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct elf_file *ef;
	enum fault fault;
	const char *got;
	long size;

	*dbg = NULL;
	if (fd < 0)
		return FAULT_NOT_ELF;
	fault = check_file(fd, &size);
	ef = fault == FAULT_NONE ? elf_file__open_fd(fd) : NULL;
	close(fd);
	if (fault != FAULT_NONE)
		return fault;
	if (!ef)
		return FAULT_BAD_ELF;
	got = elf_file__build_id(ef);
	if (!got || strcmp(got, id))
		fault = FAULT_OTHER_ID;
	else if (elf_file__sym_source(ef) != ELF_SYMS_SYMTAB)
		fault = FAULT_NO_SYMTAB;
	if (fault != FAULT_NONE) {
		elf_file__free(ef);
		return fault;
	}
	*dbg = ef;
	return FAULT_NONE;
}

/* The server of a file's URL: up to its "/buildid/", sanitized. */
static char *server_url(const char *url)
{
	const char *end = strstr(url, "/buildid/");
	char *s = strndup(url, end ? (size_t)(end - url) : strlen(url));

	if (s)
		text__sanitize_str(s);
	return s;
}

/* Ask the servers for lk's debug file, without the lock. */
static void run_lookup(struct fetcher *w, debuginfod_client *c,
		       struct lookup *lk)
{
	struct debuginfod *d = w->d;
	bool had = has_entry(d, lk->id);
	time_t since = time(NULL);
	enum lookup_state state;
	enum fault fault;
	const char *url;
	char *path = NULL;
	long size = 0;
	int fd;

	w->too_big = w->over = w->cut = false;
	fd = d->api.find_debuginfo(c, (const unsigned char *)lk->id, 0, &path);
	/*
	 * The library's own error (a connection reset while the server cut
	 * another user's download, say), not the server's answer: once more,
	 * so that one user's cut downloads do not fail another's.
	 */
	if (fd < 0 && fd != -ENOENT && fault_of(fd) == FAULT_ERRNO && !w->too_big && !w->over &&
	    !w->cut)
		fd = d->api.find_debuginfo(c, (const unsigned char *)lk->id, 0, &path);
	if (fd >= 0) {
		fault = path ? check_file(fd, &size) : FAULT_NOT_ELF;
		close(fd);
		/* Read from the cache, or sent without a size: counted now. */
		pthread_mutex_lock(&d->lock);
		if (fault == FAULT_NONE && !charge(d, lk, (__u64)size))
			fault = FAULT_BYTES;
		pthread_mutex_unlock(&d->lock);
		/* Not ours: out of the cache, where others would find it. */
		if (fault != FAULT_NONE && fault != FAULT_BYTES && path)
			unlink(path);
	} else if (w->too_big) {
		fault = FAULT_TOO_BIG;
	} else if (w->over) {
		fault = FAULT_BYTES;
	} else if (w->cut) {
		fault = FAULT_WAIT;
	} else {
		fault = fd == -ENOENT ? FAULT_NONE : fault_of(fd);
	}
	if (fault != FAULT_NONE || w->cut || fd == -ENOENT)
		clean_cache(d, lk->id, had, since);
	state = fd >= 0 && fault == FAULT_NONE ? LK_FOUND :
		fault == FAULT_NONE ? LK_NOT_FOUND : LK_FAILED;
	url = d->api.get_url(c);
	pthread_mutex_lock(&d->lock);
	lk->state = state;
	lk->fault = fault;
	lk->err = fd < 0 ? -fd : 0;
	if (state == LK_FOUND) {
		__atomic_store_n(&lk->bytes, size, __ATOMIC_RELAXED);
		lk->path = path;
		path = NULL;
	}
	if (url && !lk->server)
		lk->server = server_url(url);
	pthread_cond_broadcast(&d->done);
	pthread_mutex_unlock(&d->lock);
	free(path);
}

/* In each of the worker's threads, before its first lookup. */
static void fetcher_init(void *ctx, unsigned int i)
{
	struct debuginfod *d = ctx;
	struct fetcher *f = &d->fetchers[i];
	sigset_t urg;

	this_fetcher = f;
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	pthread_sigmask(SIG_UNBLOCK, &urg, NULL);
	f->d = d;
	f->c = d->api.begin();
	if (f->c)
		d->api.set_progressfn(f->c, on_progress);
}

static void fetcher_exit(void *ctx, unsigned int i)
{
	struct debuginfod *d = ctx;

	if (d->fetchers[i].c)
		d->api.end(d->fetchers[i].c);
}

/*
 * Called locked: the queued lookup to serve next: of the user with the
 * fewest lookups started so far, the oldest.  Round-robin between the
 * users waiting, and a user who comes late goes first until it has had
 * as many as the others.
 */
static struct lookup *pick(const struct debuginfod *d)
{
	struct lookup *best = NULL;

	for (size_t i = 0; i < d->nr; i++) {
		struct lookup *lk = d->v[i];

		if (lk->state == LK_QUEUED &&
		    (!best || d->users[lk->user].started < d->users[best->user].started))
			best = lk;
	}
	return best;
}

/* A token of the queue: serve the lookup pick() chooses. */
static void fetch(void *ctx, unsigned int i, void *req)
{
	struct debuginfod *d = ctx;
	struct fetcher *f = &d->fetchers[i];
	struct lookup *lk;

	(void)req;
	pthread_mutex_lock(&d->lock);
	lk = pick(d);
	if (lk && d->users[lk->user].over) {
		/* Its user's bytes are spent: not even asked for. */
		share__refuse(&d->bytes, (__u32)lk->uid);
		lk->state = LK_FAILED;
		lk->fault = FAULT_BYTES;
		lk = NULL;
		pthread_cond_broadcast(&d->done);
	} else if (lk) {
		lk->state = LK_RUNNING;
		d->users[lk->user].started++;
	}
	f->lk = lk;
	pthread_mutex_unlock(&d->lock);
	if (!lk)
		return;
	if (f->c) {
		run_lookup(f, f->c, lk);
	} else {
		pthread_mutex_lock(&d->lock);
		lk->state = LK_FAILED;
		lk->fault = FAULT_ERRNO;
		lk->err = ENOMEM;
		pthread_cond_broadcast(&d->done);
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_lock(&d->lock);
	f->lk = NULL;
	pthread_mutex_unlock(&d->lock);
}

/* ---- the run's side ---- */

static bool blank(const char *s)
{
	return !s || !s[strspn(s, " \t\n")];
}

static char *sanitized(const char *s)
{
	char *t = strdup(s);

	if (t)
		text__sanitize_str(t);
	return t;
}

static int start_workers(struct debuginfod *d)
{
	struct sigaction sa = { .sa_handler = nop_handler, .sa_flags = SA_RESTART };
	struct worker_opts wo = { .threads = NR_WORKERS, .req_size = sizeof(struct lookup *),
				  .queue_max = DEBUGINFOD_MAX_LOOKUPS, .job = fetch, .ctx = d,
				  .thread_init = fetcher_init, .thread_exit = fetcher_exit,
				  .stop_signal = SIGURG, .name = "debuginfod" };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL))
		return -errno;
	d->worker = worker__new(&wo);
	return d->worker ? 0 : -errno;
}

struct debuginfod *debuginfod__new(const struct debuginfod_opts *o)
{
	struct debuginfod *d;
	int err;

	if (blank(o->urls)) {
		errno = 0;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->o = *o;
	share__init(&d->bytes, "debuginfod bytes", "bytes", DEBUGINFOD_RUN_BYTES);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->done, NULL);
	err = load_api(&d->api);
	if (err) {
		pr_warn("DEBUGINFOD_URLS is set but %s cannot be loaded: %s; install libdebuginfod1 to name stripped binaries",
			DEBUGINFOD_SONAME, dlerror() ? : "no such library");
		goto fail;
	}
	d->urls = sanitized(o->urls);
	d->cache = cache_dir();
	if (!d->urls) {
		err = -ENOMEM;
		goto fail;
	}
	err = start_workers(d);
	if (err) {
		pr_warn("cannot start the debuginfod lookups: %s", strerror(-err));
		goto fail;
	}
	return d;
fail:
	debuginfod__free(d);
	errno = -err;
	return NULL;
}

static void free_lookup(struct lookup *lk)
{
	free(lk->path);
	free(lk->object);
	free(lk->server);
	free(lk);
}

void debuginfod__free(struct debuginfod *d)
{
	if (!d)
		return;
	/* Lookups under way see quit at their next progress call, or SIGURG's. */
	__atomic_store_n(&d->quit, true, __ATOMIC_RELAXED);
	worker__free(d->worker);
	for (size_t i = 0; i < d->nr; i++)
		free_lookup(d->v[i]);
	free(d->v);
	free(d->users);
	share__exit(&d->bytes);
	/*
	 * The library stays loaded: libcurl and its TLS library keep global
	 * state until their destructors run at exit, which unloading now
	 * would strand.
	 */
	pthread_cond_destroy(&d->done);
	pthread_mutex_destroy(&d->lock);
	free(d->urls);
	free(d->cache);
	free(d);
}

static bool valid_id(const char *id)
{
	size_t n = strlen(id);

	return n >= ID_MIN_HEX && n <= ID_MAX_HEX && n % 2 == 0 &&
	       strspn(id, "0123456789abcdef") == n;
}

static struct lookup *find(const struct debuginfod *d, const char *id)
{
	for (size_t i = 0; i < d->nr; i++)
		if (!strcmp(d->v[i]->id, id))
			return d->v[i];
	return NULL;
}

static size_t lookups_of(const struct debuginfod *d, __s64 uid)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nr; i++)
		n += d->v[i]->uid == uid;
	return n;
}

/*
 * Whether uid may have one more lookup: the run's bound, and a share of
 * it per user, so that one user's processes cannot use it all up.
 */
static bool may_ask(struct debuginfod *d, __s64 uid)
{
	if (d->nr < DEBUGINFOD_MAX_LOOKUPS &&
	    lookups_of(d, uid) < DEBUGINFOD_MAX_USER_LOOKUPS)
		return true;
	if (!d->refused++)
		d->refused_uid = uid;
	return false;
}

/* Called locked: uid's index in d->users, made if new; -ENOMEM. */
static int user_index(struct debuginfod *d, __s64 uid, size_t *index)
{
	for (size_t i = 0; i < d->nr_users; i++) {
		if (d->users[i].uid == uid) {
			*index = i;
			return 0;
		}
	}
	if (util__grow_array((void **)&d->users, &d->cap_users, d->nr_users + 1,
			     sizeof(*d->users)))
		return -ENOMEM;
	d->users[d->nr_users] = (struct dfd_user){ .uid = uid };
	*index = d->nr_users++;
	return 0;
}

/*
 * Called locked: a token for lk to the worker's queue.  Each lookup is
 * queued once, and there are at most the queue's bound: it has room.
 */
static void queue(struct debuginfod *d, struct lookup *lk)
{
	struct lookup *token = NULL;
	int err;

	lk->state = LK_QUEUED;
	lk->asked = now_s();
	err = worker__push(d->worker, &token);
	if (err) {
		lk->state = LK_FAILED;
		lk->fault = FAULT_ERRNO;
		lk->err = -err;
	}
}

/* A new queued lookup, or NULL (out of memory, or over the bound). */
static struct lookup *add(struct debuginfod *d, const char *id,
			  const char *object, __s64 uid)
{
	struct lookup *lk;

	if (!may_ask(d, uid))
		return NULL;
	if (util__grow_array((void **)&d->v, &d->cap, d->nr + 1, sizeof(*d->v)))
		return NULL;
	lk = calloc(1, sizeof(*lk));
	if (!lk)
		return NULL;
	lk->object = sanitized(object ? object : "?");
	if (!lk->object || user_index(d, uid, &lk->user)) {
		free(lk->object);
		free(lk);
		return NULL;
	}
	strcpy(lk->id, id);
	lk->uid = uid;
	d->v[d->nr++] = lk;
	queue(d, lk);
	return lk;
}


/*
 * Called locked: a process of uid maps lk's object too.  A lookup refused
 * over its user's bytes is asked again for uid, and one still queued
 * moves to uid if uid has had fewer lookups: whoever maps another user's
 * files first must not spend that user's debug files, nor queue them
 * behind its own thousand lookups.
 */
static void offer(struct debuginfod *d, struct lookup *lk, __s64 uid)
{
	bool refused = lk->state == LK_FAILED && lk->fault == FAULT_BYTES;
	size_t user;

	if ((!refused && lk->state != LK_QUEUED) || user_index(d, uid, &user) ||
	    d->users[user].over)
		return;
	if (!refused && d->users[user].started >= d->users[lk->user].started)
		return;
	lk->uid = uid;
	lk->user = user;
	if (!refused)
		return;
	/* What the first user downloaded stays counted against it. */
	lk->held = 0;
	lk->over = false;
	lk->fault = FAULT_NONE;
	queue(d, lk);
}

void debuginfod__ask(struct debuginfod *d, const char *id, const char *object,
		     __s64 uid)
{
	struct lookup *lk;

	if (!d || !id || !valid_id(id))
		return;
	pthread_mutex_lock(&d->lock);
	lk = find(d, id);
	if (!lk)
		add(d, id, object, uid);
	else if (lk->state == LK_FOUND && lk->taken)
		lk->taken = false;	/* handed out and freed: parse it again */
	else if (lk->uid != uid)
		offer(d, lk, uid);
	pthread_mutex_unlock(&d->lock);
}

/* Called locked: the next file to hand out, marked taken, or NULL. */
static struct lookup *next_found(struct debuginfod *d,
				 bool (*want)(void *ctx, const char *id),
				 void *ctx)
{
	for (size_t i = 0; i < d->nr; i++) {
		struct lookup *lk = d->v[i];

		if (lk->state == LK_FOUND && !lk->taken &&
		    (!want || want(ctx, lk->id))) {
			lk->taken = true;
			return lk;
		}
	}
	return NULL;
}

/* A file that failed to parse: out of the cache, and its directory. */
static void drop_file(const char *path)
{
	char *dir = strdup(path), *slash;

	unlink(path);
	slash = dir ? strrchr(dir, '/') : NULL;
	if (slash) {
		*slash = '\0';
		rmdir(dir);	/* if empty */
	}
	free(dir);
}

/*
 * Only the run's thread hands files out: a lookup LK_FOUND and taken is
 * left alone by the others, so its path is read and parsed without the
 * lock.
 */
struct elf_file *debuginfod__next_wanted(struct debuginfod *d,
					 bool (*want)(void *ctx, const char *id),
					 void *ctx, char *id, size_t len)
{
	struct elf_file *dbg = NULL;
	struct lookup *lk;
	enum fault fault;

	if (!d)
		return NULL;
	for (;;) {
		pthread_mutex_lock(&d->lock);
		lk = next_found(d, want, ctx);
		pthread_mutex_unlock(&d->lock);
		if (!lk)
			return NULL;
		fault = parse_file(lk->path, lk->id, &dbg);
		/* Not ours: out of the cache, where others would find it. */
		if (fault != FAULT_NONE)
			drop_file(lk->path);
		pthread_mutex_lock(&d->lock);
		if (fault == FAULT_NONE) {
			lk->parsed = true;
		} else {
			lk->state = LK_FAILED;
			lk->fault = fault;
		}
		pthread_mutex_unlock(&d->lock);
		if (dbg)
			break;
	}
	snprintf(id, len, "%s", lk->id);
	return dbg;
}

struct elf_file *debuginfod__next(struct debuginfod *d, char *id, size_t len)
{
	return debuginfod__next_wanted(d, NULL, NULL, id, len);
}

/* Lookups still worth waiting for at t, and the bytes and ends so far. */
static size_t count_waiting(const struct debuginfod *d, double t,
			    size_t *ended, long *bytes)
{
	size_t waiting = 0;

	*ended = 0;
	*bytes = 0;
	for (size_t i = 0; i < d->nr; i++) {
		const struct lookup *lk = d->v[i];

		*bytes += __atomic_load_n(&lk->bytes, __ATOMIC_RELAXED);
		if (lk->state != LK_QUEUED && lk->state != LK_RUNNING)
			(*ended)++;
		else if (t < lk->asked + d->o.wait)
			waiting++;
	}
	return waiting;
}

static void show_progress(size_t ended, size_t all, long bytes, double secs)
{
	fprintf(stderr, "\rprofile: debuginfod: %zu of %zu debug files, %.1f MiB, %.1f s ",
		ended, all, (double)bytes / (1 << 20), secs);
	fflush(stderr);
}

void debuginfod__wait(struct debuginfod *d, const volatile sig_atomic_t *stop)
{
	double t0 = now_s(), t = t0;
	bool shown = false;
	struct timespec until;
	size_t ended = 0;
	long bytes = 0;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	while (!(stop && *stop) && count_waiting(d, t, &ended, &bytes)) {
		if (d->o.progress && t - t0 >= PROGRESS_AFTER_S) {
			show_progress(ended, d->nr, bytes, t - t0);
			shown = true;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += WAIT_STEP_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->done, &d->lock, &until);
		t = now_s();
	}
	if (shown) {
		count_waiting(d, t, &ended, &bytes);
		show_progress(ended, d->nr, bytes, t - t0);
		fputc('\n', stderr);
	}
	d->waited += t - t0;
	pthread_mutex_unlock(&d->lock);
}

static const char *fault_text(enum fault f, int err, double wait,
			      char *buf, size_t len)
{
	switch (f) {
	case FAULT_WAIT:
		snprintf(buf, len, "no answer within %g s (--debuginfod-wait)", wait);
		break;
	case FAULT_STOPPED:
		snprintf(buf, len, "no answer yet when the run was stopped");
		break;
	case FAULT_TIMEOUT:
		snprintf(buf, len, "timed out (DEBUGINFOD_TIMEOUT)");
		break;
	case FAULT_TOO_BIG:
		snprintf(buf, len, "file too large (over %llu MiB, or DEBUGINFOD_MAXSIZE)",
			 DEBUGINFOD_MAX_BYTES >> 20);
		break;
	case FAULT_OTHER_ID:
		snprintf(buf, len, "sent a file with another build-id");
		break;
	case FAULT_NOT_ELF:
		snprintf(buf, len, "sent a file that is not ELF");
		break;
	case FAULT_BAD_ELF:
		snprintf(buf, len, "sent a truncated or corrupt ELF file");
		break;
	case FAULT_NO_SYMTAB:
		snprintf(buf, len, "sent an ELF file without a symbol table");
		break;
	default:
		snprintf(buf, len, "%s", strerror(err));
		break;
	}
	return buf;
}

/*
 * Lookups still under way at t failed for want of time: the wait's, or
 * the run's if it was stopped before.  Those over the bytes are
 * share__report()'s.
 */
static enum fault fault_at(const struct debuginfod *d, const struct lookup *lk,
			   double t)
{
	if (lk->state == LK_QUEUED || lk->state == LK_RUNNING)
		return t >= lk->asked + d->o.wait ? FAULT_WAIT : FAULT_STOPPED;
	return lk->state == LK_FAILED && lk->fault != FAULT_BYTES ? lk->fault : FAULT_NONE;
}

static const char *server_of(const struct debuginfod *d, const struct lookup *lk)
{
	return lk->server ? lk->server : d->urls;
}

/* Lookups in [from, to) that failed at t like `like` did, for its user. */
static size_t count_like(const struct debuginfod *d, size_t from, size_t to,
			 const struct lookup *like, double t)
{
	enum fault f = fault_at(d, like, t);
	size_t n = 0;

	for (size_t j = from; j < to; j++) {
		const struct lookup *lk = d->v[j];

		if (fault_at(d, lk, t) == f && lk->uid == like->uid &&
		    !strcmp(server_of(d, lk), server_of(d, like)) &&
		    (f != FAULT_ERRNO || lk->err == like->err))
			n++;
	}
	return n;
}

/* "user nobody (uid 65534)", or "an unknown user". */
static const char *user_text(__s64 uid, char *buf, size_t len)
{
	char name[300];

	if (uid < 0)
		snprintf(buf, len, "an unknown user");
	else
		snprintf(buf, len, "user %s", share__user_name((__u32)uid, name, sizeof(name)));
	return buf;
}

/*
 * One line per user, too: a user's thousand failed lookups cannot hide
 * another user's one behind "and 999 more".
 */
void debuginfod__warn(struct debuginfod *d)
{
	double t = now_s();
	char why[128], user[340], advice[160];

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->nr; i++) {
		const struct lookup *lk = d->v[i];
		enum fault f = fault_at(d, lk, t);
		size_t more;

		/* One line per server and kind of failure: at its first lookup. */
		if (f == FAULT_NONE || count_like(d, 0, i, lk, t))
			continue;
		more = count_like(d, i, d->nr, lk, t) - 1;
		fault_text(f, lk->err, d->o.wait, why, sizeof(why));
		user_text(lk->uid, user, sizeof(user));
		if (more)
			pr_warn("debuginfod: cannot fetch the debug files of %s and %zu more, mapped by %s, from %s: %s; their frames stay unnamed",
				lk->object, more, user, server_of(d, lk), why);
		else
			pr_warn("debuginfod: cannot fetch the debug file of %s, mapped by %s, from %s: %s; its frames stay unnamed",
				lk->object, user, server_of(d, lk), why);
	}
	snprintf(advice, sizeof(advice), "their debug files were cut short or not used (%llu MiB a user, %llu MiB a run); their frames stay unnamed",
		 DEBUGINFOD_USER_BYTES >> 20, DEBUGINFOD_RUN_BYTES >> 20);
	share__report(&d->bytes, advice, REPORT_WARN);
	if (d->refused)
		pr_warn("debuginfod: %llu objects not looked up, over the bound of %d a run and %d per user (user %lld's processes were first); their frames stay unnamed",
			(unsigned long long)d->refused, DEBUGINFOD_MAX_LOOKUPS,
			DEBUGINFOD_MAX_USER_LOOKUPS, (long long)d->refused_uid);
	pthread_mutex_unlock(&d->lock);
}

void debuginfod__stats(struct debuginfod *d, struct debuginfod_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->nr; i++) {
		const struct lookup *lk = d->v[i];

		st->lookups++;
		st->bytes += (__u64)__atomic_load_n(&lk->bytes, __ATOMIC_RELAXED);
		st->parsed += lk->parsed;
		st->over_bytes += lk->state == LK_FAILED && lk->fault == FAULT_BYTES;
		switch (lk->state) {
		case LK_FOUND:
			st->fetched++;
			break;
		case LK_NOT_FOUND:
			st->not_found++;
			break;
		case LK_FAILED:
			st->failed++;
			break;
		default:
			st->pending++;
			break;
		}
	}
	st->refused = d->refused;
	st->waited = d->waited;
	pthread_mutex_unlock(&d->lock);
}

void debuginfod__report(struct debuginfod *d, enum report_pass pass)
{
	struct debuginfod_stats ds;

	if (!d)
		return;
	if (pass == REPORT_WARN) {
		debuginfod__warn(d);
		return;
	}
	debuginfod__stats(d, &ds);
	pr_info("debuginfod: %llu lookups, %llu fetched (%llu parsed), %llu not found, %llu failed, %llu still under way, %llu over the bound, %llu over the bytes; %.1f MiB of debug files; reports waited %.1f s",
		(unsigned long long)ds.lookups, (unsigned long long)ds.fetched,
		(unsigned long long)ds.parsed,
		(unsigned long long)ds.not_found, (unsigned long long)ds.failed,
		(unsigned long long)ds.pending, (unsigned long long)ds.refused,
		(unsigned long long)ds.over_bytes,
		(double)ds.bytes / (1 << 20), ds.waited);
	pthread_mutex_lock(&d->lock);
	share__report(&d->bytes, NULL, REPORT_STATS);
	pthread_mutex_unlock(&d->lock);
}
