// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The worker threads and their queue: see worker.h.
 *
 * The queue is a ring of req_size-byte slots, allocated for queue_max
 * requests at the start so that worker__push() never needs memory; only
 * worker__push_always() grows it.  `running` counts the threads inside a
 * job or a tick, for worker__settle().  The conditions wait on
 * CLOCK_MONOTONIC: a change of the wall clock moves no deadline.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/worker.h"
#include "lib/cputime.h"

struct worker_thread {
	struct worker *w;
	unsigned int index;
	pthread_t id;
	bool joinable;		/* started, not yet joined */
	void *req;		/* the request being served, out of the ring */
};

struct worker {
	struct worker_opts o;
	pthread_mutex_t lock;	/* everything below */
	pthread_cond_t wake;	/* a request was queued, or stop */
	pthread_cond_t idle;	/* nothing queued and nothing running, or stop */
	unsigned char *ring;
	size_t cap, head, len;	/* slots, the oldest request's slot, requests */
	unsigned int running;	/* threads in a job or a tick */
	bool stop;
	struct timespec tick_due;
	__u64 dropped;
	struct worker_thread *threads;
};

static void deadline_in(struct timespec *t, clockid_t clock, unsigned int ms)
{
	clock_gettime(clock, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

static bool passed(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static void *slot(const struct worker *w, size_t i)
{
	return w->ring + ((w->head + i) % w->cap) * w->o.req_size;
}

/* Called locked: the ring, twice as large, its requests first in order. */
static int grow(struct worker *w)
{
	size_t sz = w->o.req_size, first = w->cap - w->head;
	unsigned char *ring;

	if (w->cap > ((size_t)-1 / 2) / sz)
		return -ENOMEM;
	ring = malloc(2 * w->cap * sz);
	if (!ring)
		return -ENOMEM;
	if (first > w->len)
		first = w->len;
	memcpy(ring, w->ring + w->head * sz, first * sz);
	memcpy(ring + first * sz, w->ring, (w->len - first) * sz);
	free(w->ring);
	w->ring = ring;
	w->cap *= 2;
	w->head = 0;
	return 0;
}

static int push(struct worker *w, const void *req, bool always)
{
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (!always && w->len >= w->o.queue_max)
		err = -ENOSPC;
	else if (w->len == w->cap)
		err = grow(w);
	if (err) {
		w->dropped++;
	} else {
		memcpy(slot(w, w->len), req, w->o.req_size);
		w->len++;
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

int worker__push(struct worker *w, const void *req)
{
	return push(w, req, false);
}

int worker__push_always(struct worker *w, const void *req)
{
	return push(w, req, true);
}

__u64 worker__dropped(struct worker *w)
{
	__u64 n;

	pthread_mutex_lock(&w->lock);
	n = w->dropped;
	pthread_mutex_unlock(&w->lock);
	return n;
}

/* Called locked: run a job (req) or a tick (NULL) without the lock. */
static void run(struct worker *w, struct worker_thread *t, void *req)
{
	w->running++;
	pthread_mutex_unlock(&w->lock);
	if (req)
		w->o.job(w->o.ctx, t->index, req);
	else
		w->o.tick(w->o.ctx);
	pthread_mutex_lock(&w->lock);
	w->running--;
	if (!w->len && !w->running)
		pthread_cond_broadcast(&w->idle);
}

static void *thread_main(void *arg)
{
	struct worker_thread *t = arg;
	struct worker *w = t->w;

	cputime__thread_start(w->o.name ? w->o.name : "workers");
	if (w->o.thread_init)
		w->o.thread_init(w->o.ctx, t->index);
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		if (w->o.tick && passed(&w->tick_due)) {
			deadline_in(&w->tick_due, CLOCK_MONOTONIC, w->o.tick_ms);
			run(w, t, NULL);
		} else if (w->len) {
			memcpy(t->req, slot(w, 0), w->o.req_size);
			w->head = (w->head + 1) % w->cap;
			w->len--;
			run(w, t, t->req);
		} else if (w->o.tick) {
			pthread_cond_timedwait(&w->wake, &w->lock, &w->tick_due);
		} else {
			pthread_cond_wait(&w->wake, &w->lock);
		}
	}
	pthread_mutex_unlock(&w->lock);
	if (w->o.thread_exit)
		w->o.thread_exit(w->o.ctx, t->index);
	cputime__thread_end();
	return NULL;
}

int worker__settle(struct worker *w, unsigned int timeout_ms)
{
	struct timespec deadline;
	int err = 0;

	deadline_in(&deadline, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&w->lock);
	while ((w->len || w->running) && !w->stop && !err)
		err = -pthread_cond_timedwait(&w->idle, &w->lock, &deadline);
	pthread_mutex_unlock(&w->lock);
	return err;
}

int worker__stop(struct worker *w, unsigned int timeout_ms)
{
	struct timespec deadline;
	int err = 0;

	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->wake);
	pthread_cond_broadcast(&w->idle);
	pthread_mutex_unlock(&w->lock);
	for (unsigned int i = 0; w->o.stop_signal && i < w->o.threads; i++)
		if (w->threads[i].joinable)
			pthread_kill(w->threads[i].id, w->o.stop_signal);
	/* pthread_timedjoin_np() measures on CLOCK_REALTIME. */
	deadline_in(&deadline, CLOCK_REALTIME, timeout_ms);
	for (unsigned int i = 0; i < w->o.threads; i++) {
		struct worker_thread *t = &w->threads[i];
		int e;

		if (!t->joinable)
			continue;
		e = timeout_ms ? pthread_timedjoin_np(t->id, NULL, &deadline) :
				 pthread_join(t->id, NULL);
		if (e)
			err = -e;
		else
			t->joinable = false;
	}
	return err;
}

void worker__free(struct worker *w)
{
	if (!w)
		return;
	if (w->threads) {
		worker__stop(w, 0);
		for (unsigned int i = 0; i < w->o.threads; i++)
			free(w->threads[i].req);
		free(w->threads);
	}
	for (; w->len; w->len--) {
		if (w->o.discard)
			w->o.discard(w->o.ctx, slot(w, 0));
		w->head = (w->head + 1) % w->cap;
	}
	free(w->ring);
	pthread_cond_destroy(&w->idle);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

static int init_sync(struct worker *w)
{
	pthread_condattr_t attr;
	int err;

	err = pthread_condattr_init(&attr);
	if (err)
		return -err;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&w->wake, &attr);
	if (!err)
		err = pthread_cond_init(&w->idle, &attr);
	if (!err)
		err = pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_destroy(&attr);
	return -err;
}

static int start(struct worker *w)
{
	unsigned int n = w->o.threads;
	int err;

	w->threads = calloc(n, sizeof(*w->threads));
	if (!w->threads)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		w->threads[i].req = malloc(w->o.req_size);
		if (!w->threads[i].req)
			return -ENOMEM;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct worker_thread *t = &w->threads[i];

		t->w = w;
		t->index = i;
		err = pthread_create(&t->id, NULL, thread_main, t);
		if (err)
			return -err;
		t->joinable = true;
	}
	return 0;
}

struct worker *worker__new(const struct worker_opts *o)
{
	struct worker *w;
	int err;

	if (!o->threads || !o->req_size || !o->queue_max || !o->job ||
	    (o->tick && !o->tick_ms)) {
		errno = EINVAL;
		return NULL;
	}
	if (o->queue_max > ((size_t)-1 / 2) / o->req_size) {
		errno = ENOMEM;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->o = *o;
	err = init_sync(w);
	if (err) {
		free(w);
		errno = -err;
		return NULL;
	}
	w->cap = o->queue_max;
	cputime__declare(o->name ? o->name : "workers");
	w->ring = malloc(w->cap * o->req_size);
	deadline_in(&w->tick_due, CLOCK_MONOTONIC, o->tick_ms);
	err = w->ring ? start(w) : -ENOMEM;
	if (err) {
		worker__free(w);
		errno = -err;
		return NULL;
	}
	return w;
}
