/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Debug files fetched by GNU build-id from the servers in DEBUGINFOD_URLS,
 * through libdebuginfod, elfutils' client: its cache
 * (DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client), its timeout
 * (DEBUGINFOD_TIMEOUT), retries, size and time limits and verbosity
 * (DEBUGINFOD_VERBOSE) are the user's, as for perf, gdb and valgrind.
 *
 * Lookups run in a few background threads from the moment an object is
 * first seen, so sampling never waits for them.  The run's last report
 * waits for each at most `wait` seconds from when it was asked
 * (debuginfod__wait()).
 *
 * Every user's processes choose the build-ids asked for, so the lookups
 * are shared between users (the euid of the first process that mapped the
 * object): the threads serve first the user with the fewest lookups
 * started so far, oldest first, so that one user's thousand lookups do not
 * go ahead of another user's first; and debug files count their bytes
 * against their user (DEBUGINFOD_USER_BYTES) and the run
 * (DEBUGINFOD_RUN_BYTES), downloaded or read from the cache: a file over
 * either is cut short, or not used.  Root's own processes (uid 0) map only
 * files root chose: their debug files are bounded per file only.  A
 * fetched file is parsed only when it
 * is handed out (debuginfod__next_wanted()), which the caller does only
 * for the files its samples need.
 * The library is loaded with dlopen() only when a client is made: a run
 * without DEBUGINFOD_URLS neither loads libcurl nor touches the network.
 *
 * A fetched file is trusted no more than any other input: it is parsed
 * with the same checked reader, used only if it is an ELF file with a
 * symbol table and the object's build-id, and removed from the cache
 * otherwise.  A lookup cut short (by our wait, Ctrl-C, or the size cap)
 * leaves nothing in the cache that a later run would take for an answer.
 *
 * debuginfod__*() is this module; debuginfod_*() (one underscore) is the
 * library's.  Not thread-safe: one caller thread, the run's.
 */
#ifndef DEBUGINFOD_H
#define DEBUGINFOD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/report_pass.h"

struct elf_file;
struct debuginfod;

/* Debug files larger than this are not fetched (a hostile server). */
#define DEBUGINFOD_MAX_BYTES	(2ull << 30)
/*
 * Objects looked up in one run, at most, and for the processes of one user
 * (who chooses the build-ids of their binaries); more are left unnamed.
 */
#define DEBUGINFOD_MAX_LOOKUPS		4096
#define DEBUGINFOD_MAX_USER_LOOKUPS	1024
/*
 * Bytes of debug files, fetched or read from the cache, for the processes
 * of one user, and in one run: a download is cut as soon as its size or
 * its bytes so far go over, and counted refused.  A per-user cap, not
 * only a share of the run's: bytes downloaded cannot be taken back, so
 * the first user to ask would keep a share for good; with the cap, the
 * run's bytes hold four users at their cap whatever came first, and past
 * four, lib/share.h splits them max-min.  32 MiB hold the debug files of
 * a python3 and its libraries (about 20 MB).  A file of symbols only costs
 * about four times its size while it is parsed (measured: 105 MB for 26
 * MB): with 32 MiB, one user's files keep root under 200 MiB.
 */
#define DEBUGINFOD_USER_BYTES	(32ull << 20)
#define DEBUGINFOD_RUN_BYTES	(4 * DEBUGINFOD_USER_BYTES)
/* Seconds a report waits for a lookup, by default (--debuginfod-wait). */
#define DEBUGINFOD_WAIT_S	10

struct debuginfod_opts {
	const char *urls;	/* DEBUGINFOD_URLS: servers, space-separated */
	double wait;		/* seconds a report waits for a lookup */
	bool progress;		/* show progress on stderr while waiting */
};

struct debuginfod_stats {
	__u64 lookups;		/* objects asked for */
	__u64 fetched;		/* ... whose debug file came */
	__u64 parsed;		/* ... and was handed out, parsed, at least once */
	__u64 not_found;	/* ... that no server has */
	__u64 failed;		/* ... that failed: see the warnings */
	__u64 refused;		/* ... over the bounds, not asked */
	__u64 over_bytes;	/* ... cut or not used: over the bytes of debug files */
	__u64 pending;		/* ... not answered yet */
	__u64 bytes;		/* debug files' sizes, or as far as downloaded */
	double waited;		/* seconds reports waited for lookups */
};

/*
 * A client for o->urls, its threads started, or NULL: no servers (urls
 * NULL or blank: errno 0), or the library could not be loaded or the
 * threads started (errno set; a warning was printed).
 */
struct debuginfod *debuginfod__new(const struct debuginfod_opts *o);

/* Cancel the lookups under way, join the threads, free all. */
void debuginfod__free(struct debuginfod *d);

/*
 * Ask for the debug file of the object with build-id id (lowercase hex),
 * for object (its path: messages only), mapped by a process of user uid
 * (-1: unknown).  The lookup is queued; asked before, it is not made
 * again, unless its file was handed out by debuginfod__next() since (a
 * process mapped the object again after it was freed): then the file is
 * read again, from the cache.  Asked before for another user, a lookup
 * refused over that user's bytes is made again for uid, and one still
 * queued is served in uid's turn if that comes sooner.  Cheap; never
 * blocks on the network.
 */
void debuginfod__ask(struct debuginfod *d, const char *id, const char *object,
		     __s64 uid);

/*
 * Wait until every lookup has ended or is older than the wait, or until
 * *stop is set.  With progress on, a line on stderr tells how it goes
 * once the wait has lasted a moment.
 */
void debuginfod__wait(struct debuginfod *d, const volatile sig_atomic_t *stop);

/*
 * The next debug file fetched and not handed out yet for which want(ctx,
 * build-id) is true, parsed now (a file that is not an ELF file of that
 * build-id with a symbol table is dropped, from the cache too, and
 * warned about), its build-id copied to id (len bytes); the caller owns it
 * (elf_file__free()).  NULL when none is left.  Files not wanted yet stay
 * for a later call.  want is called under the module's lock: it must not
 * call back.
 */
struct elf_file *debuginfod__next_wanted(struct debuginfod *d,
					 bool (*want)(void *ctx, const char *id),
					 void *ctx, char *id, size_t len);

/* debuginfod__next_wanted() wanting every file. */
struct elf_file *debuginfod__next(struct debuginfod *d, char *id, size_t len);

/*
 * One warning line per server, kind of failure and user, naming an object
 * and the user; one per user whose debug files went over the bytes.
 */
void debuginfod__warn(struct debuginfod *d);

void debuginfod__stats(struct debuginfod *d, struct debuginfod_stats *st);

/*
 * The run's last words (lib/report_pass.h): the warnings above; at -v, the
 * lookups, fetches and time spent waiting.
 */
void debuginfod__report(struct debuginfod *d, enum report_pass pass);

#endif /* DEBUGINFOD_H */
