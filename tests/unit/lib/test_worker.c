// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The worker threads and their queue: every job runs once, FIFO with one
 * thread, drops counted when full, settle waits for the work and times out
 * on a job that blocks, stop and free join a job that is blocked.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "unit.h"
#include "lib/worker.h"

#define MANY 2000

/* What the jobs saw, under its own lock like a caller's state. */
struct seen {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned int runs[MANY];
	unsigned int order[MANY];
	unsigned int n;			/* jobs run */
	bool gate;			/* blocking jobs wait for it */
	bool stop;			/* blocked jobs give up */
	unsigned int ticks, inits, exits, discarded;
};

static void seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->changed, NULL);
}

static void seen_free(struct seen *s)
{
	pthread_cond_destroy(&s->changed);
	pthread_mutex_destroy(&s->lock);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void count(void *ctx, unsigned int thread, void *req)
{
	struct seen *s = ctx;
	unsigned int v = *(unsigned int *)req;

	(void)thread;
	pthread_mutex_lock(&s->lock);
	if (v < MANY)
		s->runs[v]++;
	if (s->n < MANY)
		s->order[s->n] = v;
	s->n++;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
}

/* Request 0 waits for the gate (or stop); all are counted, after. */
static void gated(void *ctx, unsigned int thread, void *req)
{
	struct seen *s = ctx;

	if (*(unsigned int *)req == 0) {
		pthread_mutex_lock(&s->lock);
		s->runs[0] = 100;		/* started: marked, not counted */
		pthread_cond_broadcast(&s->changed);
		while (!s->gate && !s->stop)
			pthread_cond_wait(&s->changed, &s->lock);
		s->runs[0] = 0;
		pthread_mutex_unlock(&s->lock);
	}
	count(ctx, thread, req);
}

static void wait_started(struct seen *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->runs[0] != 100)
		pthread_cond_wait(&s->changed, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static void open_gate(struct seen *s)
{
	pthread_mutex_lock(&s->lock);
	s->gate = true;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
}

static void on_discard(void *ctx, void *req)
{
	struct seen *s = ctx;

	(void)req;
	s->discarded++;
}

static void on_init(void *ctx, unsigned int thread)
{
	struct seen *s = ctx;

	(void)thread;
	pthread_mutex_lock(&s->lock);
	s->inits++;
	pthread_mutex_unlock(&s->lock);
}

static void on_exit_(void *ctx, unsigned int thread)
{
	struct seen *s = ctx;

	(void)thread;
	pthread_mutex_lock(&s->lock);
	s->exits++;
	pthread_mutex_unlock(&s->lock);
}

static void tick(void *ctx);

TEST(rejects_bad_options)
{
	struct worker_opts o = { .threads = 1, .req_size = 4, .queue_max = 1, .job = count };

	o.threads = 0;
	errno = 0;
	CHECK(worker__new(&o) == NULL);
	CHECK_INT(errno, EINVAL);
	o.threads = 1;
	o.job = NULL;
	CHECK(worker__new(&o) == NULL);
	o.job = count;
	o.tick = tick;				/* a tick without a period */
	CHECK(worker__new(&o) == NULL);
}

/* Four threads, many requests: each is served exactly once. */
TEST(every_job_runs_once)
{
	struct seen s;
	struct worker_opts o = { .threads = 4, .req_size = sizeof(unsigned int),
				 .queue_max = MANY, .job = count, .ctx = &s,
				 .thread_init = on_init, .thread_exit = on_exit_ };
	struct worker *w;
	unsigned int wrong = 0;

	seen_init(&s);
	w = worker__new(&o);
	CHECK(w != NULL);
	if (!w)
		return;
	for (unsigned int i = 0; i < MANY; i++)
		CHECK_INT(worker__push(w, &i), 0);
	CHECK_INT(worker__settle(w, 10000), 0);
	CHECK_INT(worker__dropped(w), 0);
	pthread_mutex_lock(&s.lock);
	CHECK_INT(s.n, MANY);
	for (unsigned int i = 0; i < MANY; i++)
		wrong += s.runs[i] != 1;
	pthread_mutex_unlock(&s.lock);
	CHECK_INT(wrong, 0);
	CHECK_INT(worker__stop(w, 2000), 0);
	CHECK_INT(s.inits, 4);
	CHECK_INT(s.exits, 4);
	worker__free(w);
	seen_free(&s);
}

/* One thread serves in the order of the pushes, across the ring's wrap. */
TEST(fifo_with_one_thread)
{
	struct seen s;
	struct worker_opts o = { .threads = 1, .req_size = sizeof(unsigned int),
				 .queue_max = 7, .job = gated, .ctx = &s };
	struct worker *w;
	unsigned int wrong = 0, v = 0;

	seen_init(&s);
	w = worker__new(&o);
	CHECK(w != NULL);
	if (!w)
		return;
	/* Batches of 7 behind a blocked job, so that slots are reused. */
	for (unsigned int round = 0; round < 50; round++) {
		if (!round) {
			CHECK_INT(worker__push(w, &v), 0);
			v++;
			wait_started(&s);
		}
		for (unsigned int i = 0; i < 7; i++, v++)
			CHECK_INT(worker__push(w, &v), 0);
		if (!round)
			open_gate(&s);
		CHECK_INT(worker__settle(w, 10000), 0);
	}
	pthread_mutex_lock(&s.lock);
	CHECK_INT(s.n, v);
	for (unsigned int i = 0; i < v; i++)
		wrong += s.order[i] != i;
	pthread_mutex_unlock(&s.lock);
	CHECK_INT(wrong, 0);
	worker__free(w);
	seen_free(&s);
}

/*
 * A full queue refuses and counts; push_always goes past the bound (the
 * ring grows while it wraps) and keeps the order.
 */
TEST(drops_when_full)
{
	struct seen s;
	struct worker_opts o = { .threads = 1, .req_size = sizeof(unsigned int),
				 .queue_max = 4, .job = gated, .ctx = &s };
	struct worker *w;
	unsigned int v, wrong = 0;

	seen_init(&s);
	w = worker__new(&o);
	CHECK(w != NULL);
	if (!w)
		return;
	v = 0;
	CHECK_INT(worker__push(w, &v), 0);	/* taken, blocked */
	wait_started(&s);
	for (v = 1; v <= 4; v++)
		CHECK_INT(worker__push(w, &v), 0);
	v = 1000;
	CHECK_INT(worker__push(w, &v), -ENOSPC);
	CHECK_INT(worker__push(w, &v), -ENOSPC);
	CHECK_INT(worker__dropped(w), 2);
	for (v = 5; v < 20; v++)
		CHECK_INT(worker__push_always(w, &v), 0);
	CHECK_INT(worker__dropped(w), 2);
	open_gate(&s);
	CHECK_INT(worker__settle(w, 10000), 0);
	pthread_mutex_lock(&s.lock);
	CHECK_INT(s.n, 20);
	for (unsigned int i = 0; i < 20; i++)
		wrong += s.order[i] != i;
	pthread_mutex_unlock(&s.lock);
	CHECK_INT(wrong, 0);
	worker__free(w);
	seen_free(&s);
}

/* Settle waits for a blocked job only as long as it is told. */
TEST(settle_times_out_then_returns)
{
	struct seen s;
	struct worker_opts o = { .threads = 2, .req_size = sizeof(unsigned int),
				 .queue_max = 8, .job = gated, .ctx = &s };
	struct worker *w;
	unsigned int v = 0;
	double t0;

	seen_init(&s);
	w = worker__new(&o);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_INT(worker__settle(w, 0), 0);		/* idle: at once */
	CHECK_INT(worker__push(w, &v), 0);
	wait_started(&s);
	t0 = now_ms();
	CHECK_INT(worker__settle(w, 150), -ETIMEDOUT);
	CHECK(now_ms() - t0 >= 140);
	CHECK(now_ms() - t0 < 5000);
	open_gate(&s);
	CHECK_INT(worker__settle(w, 10000), 0);
	CHECK_INT(s.n, 1);
	worker__free(w);
	seen_free(&s);
}

static void nop(int sig)
{
	(void)sig;
}

/*
 * Blocks for far longer than the test waits, until the stop flag is set:
 * only the stop signal cuts its wait short.  SIGURG is blocked but while
 * ppoll() waits, so a signal sent between the look at the flag and the
 * wait stays pending and ends the wait at once: no signal is lost.
 */
static void sleeper(void *ctx, unsigned int thread, void *req)
{
	struct timespec ten_s = { .tv_sec = 10 };
	struct seen *s = ctx;
	sigset_t urg, waiting;

	(void)thread;
	(void)req;
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	pthread_sigmask(SIG_BLOCK, &urg, &waiting);
	sigdelset(&waiting, SIGURG);
	pthread_mutex_lock(&s->lock);
	s->runs[0] = 100;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
		ppoll(NULL, 0, &ten_s, &waiting);
	pthread_sigmask(SIG_UNBLOCK, &urg, NULL);
	pthread_mutex_lock(&s->lock);
	s->n++;
	pthread_mutex_unlock(&s->lock);
}

/*
 * Stop while a job is blocked: the stop signal wakes it, it sees the
 * caller's flag and ends, and stop returns at once; what was queued is
 * discarded by free, never served.  The job would block for 10 s: without
 * the signal, stop times out after 5 s and the test fails.
 */
TEST(stop_wakes_a_blocked_job)
{
	struct sigaction sa = { .sa_handler = nop }, old;
	struct seen s;
	struct worker_opts o = { .threads = 1, .req_size = sizeof(unsigned int),
				 .queue_max = 8, .job = sleeper, .ctx = &s,
				 .discard = on_discard, .stop_signal = SIGURG };
	struct worker *w;
	unsigned int v = 0;
	double t0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGURG, &sa, &old);
	seen_init(&s);
	w = worker__new(&o);
	CHECK(w != NULL);
	if (!w)
		return;
	for (v = 0; v < 3; v++)
		CHECK_INT(worker__push(w, &v), 0);
	wait_started(&s);
	poll(NULL, 0, 50);		/* the job is in its wait, most likely */
	__atomic_store_n(&s.stop, true, __ATOMIC_RELEASE);
	t0 = now_ms();
	CHECK_INT(worker__stop(w, 5000), 0);
	CHECK(now_ms() - t0 < 1000);
	CHECK_INT(s.n, 1);
	CHECK_INT(worker__settle(w, 10000), 0);		/* stopped: at once */
	worker__free(w);
	CHECK_INT(s.discarded, 2);
	seen_free(&s);
	sigaction(SIGURG, &old, NULL);
}

/*
 * A job that does not end in time: stop says so and leaves it running;
 * once it ends, stopping again joins it, and free is safe.
 */
TEST(stop_times_out_on_a_stuck_job)
{
	struct seen s;
	struct worker_opts o = { .threads = 2, .req_size = sizeof(unsigned int),
				 .queue_max = 8, .job = gated, .ctx = &s,
				 .discard = on_discard };
	struct worker *w;
	unsigned int v = 0;
	double t0;

	seen_init(&s);
	w = worker__new(&o);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_INT(worker__push(w, &v), 0);
	wait_started(&s);
	t0 = now_ms();
	CHECK_INT(worker__stop(w, 150), -ETIMEDOUT);
	CHECK(now_ms() - t0 >= 140);
	v = 1;
	CHECK_INT(worker__push(w, &v), 0);	/* stopped: queued, never served */
	pthread_mutex_lock(&s.lock);
	s.stop = true;
	pthread_cond_broadcast(&s.changed);
	pthread_mutex_unlock(&s.lock);
	CHECK_INT(worker__stop(w, 5000), 0);
	CHECK_INT(s.n, 1);
	worker__free(w);
	CHECK_INT(s.discarded, 1);
	seen_free(&s);
}

static void tick(void *ctx)
{
	struct seen *s = ctx;

	pthread_mutex_lock(&s->lock);
	s->ticks++;
	pthread_mutex_unlock(&s->lock);
}

/* Ticks come every tick_ms, with or without requests. */
TEST(ticks)
{
	struct seen s;
	struct worker_opts o = { .threads = 1, .req_size = sizeof(unsigned int),
				 .queue_max = 8, .job = count, .ctx = &s,
				 .tick = tick, .tick_ms = 20 };
	struct worker *w;
	unsigned int v = 1, ticks;
	double t0 = now_ms(), due;

	seen_init(&s);
	w = worker__new(&o);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_INT(worker__push(w, &v), 0);
	usleep(300 * 1000);
	CHECK_INT(worker__stop(w, 2000), 0);
	due = (now_ms() - t0) / 20;
	ticks = s.ticks;
	/* A loaded machine may run fewer than are due, never more. */
	CHECK(ticks >= 3 && ticks <= due + 1);
	CHECK_INT(s.n, 1);
	worker__free(w);
	seen_free(&s);
}

int main(void)
{
	RUN(rejects_bad_options);
	RUN(every_job_runs_once);
	RUN(fifo_with_one_thread);
	RUN(drops_when_full);
	RUN(settle_times_out_then_returns);
	RUN(stop_wakes_a_blocked_job);
	RUN(stop_times_out_on_a_stuck_job);
	RUN(ticks);
	return unit_summary();
}
