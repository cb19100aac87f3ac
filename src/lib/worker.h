/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A queue of requests and the threads that serve them, for the modules that
 * do slow work (reading other processes' files and memory, asking servers)
 * off the main thread: the unwinder's sync, an interpreter's reader, debuginfod.
 *
 * A request is a fixed number of bytes (a small struct, or a pointer the
 * caller owns), copied into the queue by worker__push() and out of it by
 * the thread that serves it.  The queue is FIFO: with one thread, requests
 * are served in the order they were pushed.  worker__push() refuses a
 * request when queue_max are queued and counts it (worker__dropped());
 * worker__push_always() never refuses one for that, for requests the
 * caller must not lose.
 *
 * The worker's lock guards only the queue: a job runs without it and
 * guards the caller's own state with the caller's own lock.  A job may
 * push more requests.  Jobs never run under a caller's lock, so a caller
 * may push while it holds its lock.
 *
 * Stopping: worker__stop() makes the threads take no more requests, wakes
 * them (and sends stop_signal, to cut a blocking call short), and joins
 * them.  A job that is under way runs to its end: a job that may block for
 * long checks a flag of its own, which the caller sets before it stops the
 * worker.  Requests still queued are never served; worker__free() hands
 * them to discard().
 */
#ifndef WORKER_H
#define WORKER_H

#include <stddef.h>
#include <linux/types.h>

struct worker;

struct worker_opts {
	unsigned int threads;	/* at least 1 */
	size_t req_size;	/* bytes of a request, at least 1 */
	size_t queue_max;	/* requests queued at most by worker__push(), at least 1 */
	void *ctx;		/* passed to every callback */
	/* Serves one request, in one of the threads; thread is its index. */
	void (*job)(void *ctx, unsigned int thread, void *req);

	/* Optional, all of them. */
	/* The threads' part in the -v CPU line (lib/cputime.h); "workers" if NULL. */
	const char *name;
	/* In each thread, before its first job, and after its last one. */
	void (*thread_init)(void *ctx, unsigned int thread);
	void (*thread_exit)(void *ctx, unsigned int thread);
	/*
	 * Every tick_ms, between jobs of the thread that runs it: periodic
	 * upkeep.  The first tick is tick_ms after worker__new().  With more
	 * than one thread, a tick longer than tick_ms may overlap the next.
	 */
	void (*tick)(void *ctx);
	unsigned int tick_ms;
	/* By worker__free(), for each request that was never served. */
	void (*discard)(void *ctx, void *req);
	/* Sent to every thread by worker__stop(), if not 0: see above. */
	int stop_signal;
};

/* Starts the threads; NULL and errno if one cannot be started. */
struct worker *worker__new(const struct worker_opts *o);

/* Queue req (req_size bytes): 0, or -ENOSPC when queue_max are queued. */
int worker__push(struct worker *w, const void *req);

/* Queue req even past queue_max: 0, or -ENOMEM (counted as dropped). */
int worker__push_always(struct worker *w, const void *req);

/* Requests worker__push() or worker__push_always() refused so far. */
__u64 worker__dropped(struct worker *w);

/*
 * Wait until nothing is queued and no job or tick runs, or the worker is
 * stopped: 0.  -ETIMEDOUT when timeout_ms ran out first.
 */
int worker__settle(struct worker *w, unsigned int timeout_ms);

/*
 * Stop and join the threads, waiting at most timeout_ms for them (0: as
 * long as it takes).  0 when all have ended; -ETIMEDOUT when one is still
 * in its job: it still uses the worker and the caller's ctx, which must
 * then both be left allocated (the process is about to exit).  May be
 * called again.
 */
int worker__stop(struct worker *w, unsigned int timeout_ms);

/*
 * Stop the threads, waiting as long as it takes, unless worker__stop()
 * ended them all; discard what is queued, and free w.  NULL is a no-op.
 */
void worker__free(struct worker *w);

#endif /* WORKER_H */
