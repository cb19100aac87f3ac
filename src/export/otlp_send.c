// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sender: requests wait in a FIFO under one lock; one thread takes the
 * oldest, POSTs it with libcurl, and on a failure that may pass keeps it
 * and waits (backoff, or the server's hint) before trying again.  The
 * sampling thread only compresses, queues and reads counts: it never
 * waits on the network.
 *
 * Bodies are compressed when queued, so the queue's byte bound is on what
 * it really holds.  The request being sent is off the queue: the queue
 * holds queue_max requests besides it.
 *
 * curl_global_init() is called from otlp_sender__new(), before the thread
 * starts and on the caller's thread, as libcurl asks (it is not
 * thread-safe); curl_global_cleanup() from otlp_sender__close().  A run
 * has one sender.
 *
 * libcurl is dlopen()ed by otlp_sender__new(), not linked: it and its TLS
 * and authentication libraries (about 25 more shared objects, 6 MiB of
 * RSS) would otherwise be mapped and relocated at every start, although
 * only --otlp uses them.  Its headers give the types and constants only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <zlib.h>

#include "export/otlp_send.h"
#include "export/otlp_config.h"
#include "export/otlp_response.h"
#include "lib/pb.h"
#include "lib/log.h"
#include "lib/cputime.h"
#include "lib/text.h"

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000
/*
 * The request in flight is given up (dropped, counted) after the server
 * has answered it with a failure (429, 502, 503, 504) for this long: one
 * it never takes (a proxy's body limit) must not hold back the newer ones
 * for ever.  A collector that does not answer at all (down, unreachable,
 * not resolved) is no fault of the request: that one is retried until the
 * queue overflows, which bounds the wait.
 */
#define RETRY_MAX_MS 300000
/* A failure already reported is repeated at most this often. */
#define REPEAT_MS 60000
/* What is kept of a response body: enough for a Status and its message. */
#define BODY_MAX 65536
/* The ABI every libcurl since 7.16 has kept; the package that ships it. */
#define CURL_SONAME "libcurl.so.4"
#define CURL_PACKAGE "libcurl4"

/* The library's entry points, from dlopen(). */
struct curl_api {
	void *handle;
	CURLcode (*global_init)(long);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	otlp_getdate_fn getdate;
};

struct req {
	struct req *next;
	void *data;
	size_t len;
	struct otlp_counts counts;
};

/* What one attempt came to. */
enum outcome {
	SENT,
	RETRY,		/* may pass: keep the request, wait, try again */
	REFUSED,	/* for good: drop it */
};

struct attempt {
	CURLcode code;			/* curl's result */
	bool resolved;			/* the host's name was resolved */
	long status;			/* HTTP status, 0 when none came */
	char reason[160];		/* the status line's words */
	char message[512];		/* the body's Status.message, or curl's error */
	__u64 hint_ms;			/* Retry-After or RetryInfo; 0 none */
	otlp_getdate_fn getdate;	/* libcurl's, for Retry-After dates */
	char body[BODY_MAX];
	size_t body_len;
};

struct otlp_sender {
	const struct otlp_config *c;
	struct curl_api api;
	bool curl_inited;		/* curl_global_init() done */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* work queued, or stop asked */

	/* Under lock. */
	struct req *head, *tail;
	size_t nr, bytes;		/* on the queue (not the one in flight) */
	struct req *cur;		/* in flight, owned by the thread */
	bool stop;
	struct timespec deadline;	/* stop: give up sending after it */
	struct otlp_stats st;

	bool cur_overflowed;		/* newer ones dropped while cur was retried */

	/* The thread's own. */
	CURL *curl;
	char errbuf[CURL_ERROR_SIZE];	/* curl's, for as long as curl lives */
	struct curl_slist *headers;
	unsigned int seed;		/* backoff jitter */
	__u64 backoff_ms;
	bool failing;			/* the last attempt failed */
	CURLcode last_code;		/* ... with this: what a repeat is judged on */
	long last_status;
	char last_failure[512];		/* ... in words, for close() */
	const char *last_hint;		/* ... and what to do about it */
	__u64 last_failure_ms;
	__u64 answered_since;		/* cur failed with HTTP answers since; 0 none */
	struct attempt *a;		/* the attempt's buffers */
	__u64 recovered;		/* sent since the failing stopped */
	long last_refused;		/* status of the last refusal reported */
	__u64 last_full_ms;		/* the last "queue full" message */
	__u64 last_partial_ms;
	__u64 last_given_up_ms;		/* the last "gave up on a profile" message */
	__u64 given_up;			/* in flight, dropped after retrying */
};

/*
 * Messages formatted under the lock and printed after it is released: a
 * stderr that blocks (journald pushing back, a paused pager) must not
 * block otlp_sender__push() on the sampling thread.
 */
struct notes {
	/* Room for a URL, a reason, a message and the hint after them. */
	char line[3][2048];
	int n;
};

static void __attribute__((format(printf, 2, 3))) note(struct notes *ns, const char *fmt, ...)
{
	va_list ap;

	if (ns->n == (int)(sizeof(ns->line) / sizeof(ns->line[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(ns->line[ns->n++], sizeof(ns->line[0]), fmt, ap);
	va_end(ap);
}

/* Print what was noted; the lock is not held. */
static void notes__print(struct notes *ns)
{
	for (int i = 0; i < ns->n; i++)
		pr_warn("%s", ns->line[i]);
	ns->n = 0;
}

/* Print what was noted, releasing the lock meanwhile. */
static void notes__print_unlocked(struct otlp_sender *s, struct notes *ns)
{
	if (!ns->n)
		return;
	pthread_mutex_unlock(&s->lock);
	notes__print(ns);
	pthread_mutex_lock(&s->lock);
}

static __u64 now_ms(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (__u64)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void req__free(struct req *r)
{
	if (!r)
		return;
	free(r->data);
	free(r);
}

/* gzip (not zlib's own wrapping: Content-Encoding gzip wants the gzip header). */
static int gzip(const struct pb *in, void **out, size_t *out_len)
{
	z_stream z = {};
	size_t cap;
	void *buf;
	int ret;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, in->len);
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = in->buf;
	z.avail_in = in->len;
	z.next_out = buf;
	z.avail_out = cap;
	ret = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	/* Keep only what it came to: the queue's byte bound counts that. */
	*out = realloc(buf, *out_len ? *out_len : 1);
	if (!*out)
		*out = buf;
	return 0;
}

/* Drop the queue's oldest to make room for len more bytes; lock held. */
static void make_room(struct otlp_sender *s, size_t len, struct notes *ns)
{
	const struct otlp_config *c = s->c;
	bool by_count = s->nr + 1 > c->queue_max;
	size_t held = s->bytes;
	__u64 dropped = 0, now;

	while (s->head && (s->nr + 1 > c->queue_max || s->bytes + len > c->queue_max_bytes)) {
		struct req *r = s->head;

		s->head = r->next;
		if (!s->head)
			s->tail = NULL;
		s->nr--;
		s->bytes -= r->len;
		s->st.dropped++;
		s->st.dropped_samples += r->counts.samples;
		dropped++;
		req__free(r);
	}
	if (dropped && s->cur)
		s->cur_overflowed = true;
	now = now_ms(CLOCK_MONOTONIC);
	if (dropped && (!s->last_full_ms || now - s->last_full_ms >= REPEAT_MS)) {
		s->last_full_ms = now;
		if (by_count)
			note(ns, "otlp: the queue is full (%zu profiles, the --otlp-queue bound); "
				 "dropped the oldest, %llu so far; bring %s back, or raise --otlp-queue "
				 "to wait longer", c->queue_max, (unsigned long long)s->st.dropped,
			     c->shown_url);
		else
			note(ns, "otlp: the queue is full (%.1f MiB in %zu profiles, the %zu MiB bound); "
				 "dropped the oldest, %llu so far; bring %s back; profiles this big fill it "
				 "whatever --otlp-queue is: a longer -i, or fewer stacks (-F, -p), "
				 "makes it hold longer", held / 1048576.0, s->nr + (size_t)dropped,
			     c->queue_max_bytes >> 20, (unsigned long long)s->st.dropped, c->shown_url);
	}
}

int otlp_sender__push(struct otlp_sender *s, struct pb *body, const struct otlp_counts *counts)
{
	struct req *r = calloc(1, sizeof(*r));
	struct notes ns = {};
	int err = 0;

	if (!r)
		return -ENOMEM;
	r->counts = *counts;
	if (s->c->gzip) {
		err = gzip(body, &r->data, &r->len);
		pb__free(body);
	} else {
		r->data = body->buf;
		r->len = body->len;
	}
	memset(body, 0, sizeof(*body));
	if (err) {
		free(r);
		return err;
	}
	pthread_mutex_lock(&s->lock);
	make_room(s, r->len, &ns);
	if (s->tail)
		s->tail->next = r;
	else
		s->head = r;
	s->tail = r;
	s->nr++;
	s->bytes += r->len;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	notes__print(&ns);
	return 0;
}

void otlp_sender__stats(struct otlp_sender *s, struct otlp_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	st->queued = s->nr + (s->cur != NULL);
	st->queued_bytes = s->bytes + (s->cur ? s->cur->len : 0);
	pthread_mutex_unlock(&s->lock);
}

/* -- One attempt. -- */

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct attempt *a = ctx;
	size_t len = size * n, room = sizeof(a->body) - a->body_len;

	memcpy(a->body + a->body_len, data, len < room ? len : room);
	a->body_len += len < room ? len : room;
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct attempt *a = ctx;
	size_t len = size * n;
	char line[256];

	if (len >= sizeof(line))
		return len;
	memcpy(line, data, len);
	line[len] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (!strncmp(line, "HTTP/", 5)) {
		/* A new status line (after a 100 Continue): start over. */
		const char *words = strchr(line, ' ');

		words = words ? strchr(words + 1, ' ') : NULL;
		snprintf(a->reason, sizeof(a->reason), "%s", words ? words + 1 : "");
		/* The server's words go to the operator's terminal or journal. */
		text__sanitize_str(a->reason);
		a->hint_ms = 0;
	} else if (!strncasecmp(line, "Retry-After:", 12)) {
		a->hint_ms = otlp_response__retry_after_ms(line + 12 + strspn(line + 12, " \t"),
							   time(NULL), a->getdate);
	}
	return len;
}

/* What to do about a TLS failure, from curl's error. */
static const char *tls_hint(CURLcode rc, const struct otlp_config *c)
{
	if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
		return c->ca_file ? "check OTEL_EXPORTER_OTLP_CERTIFICATE: does it hold the CA that signed the collector's certificate?"
				  : "set OTEL_EXPORTER_OTLP_CERTIFICATE to the CA file that signed the collector's certificate";
	if (rc == CURLE_SSL_CERTPROBLEM)
		return "check OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY";
	return "is the collector serving TLS on this port? if not, use http://";
}

static bool tls_error(CURLcode rc)
{
	return rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION ||
	       rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CIPHER ||
	       rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_ENGINE_INITFAILED ||
	       rc == CURLE_SSL_ISSUER_ERROR || rc == CURLE_SSL_CRL_BADFILE;
}

/* What to do about a refusal, by its status. */
static const char *refusal_hint(long status)
{
	switch (status) {
	case 401:
	case 403:
		return "check the credentials in OTEL_EXPORTER_OTLP_HEADERS";
	case 404:
	case 405:
		return "check the URL's path: the collector's OTLP/HTTP receiver takes /v1development/profiles";
	case 400:
	case 415:
		return "is it an OpenTelemetry Collector with profiles on (--feature-gates=service.profilesSupport)?";
	case 413:
		return "lower -i or raise the collector's max_request_body_size";
	default:
		return status >= 500 ? "is it an OpenTelemetry Collector? see its log" : "check the URL";
	}
}

/* What to do about a failure that may pass; NULL when its words say it. */
static const char *retry_hint(const struct attempt *a)
{
	switch (a->status) {
	case 0:
		break;
	case 429:
	case 503:
		return "the collector is overloaded or starting: see its log";
	case 502:
	case 504:
		return "a proxy could not get an answer from the collector: is it running? see the proxy's log";
	default:
		return "see the collector's log";
	}
	if (tls_error(a->code))
		return NULL;
	switch (a->code) {
	case CURLE_COULDNT_CONNECT:
		return "is the collector running, on this host and port?";
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return "check the host name, and that DNS answers";
	case CURLE_OPERATION_TIMEDOUT:
		if (!a->resolved)
			return "check the host name, and that DNS answers";
		return "is the port reachable, or does a firewall drop the packets? is the collector answering? see its log";
	default:
		return "is the collector running? see its log";
	}
}

static void set_deadline_timeout(struct otlp_sender *s, bool stopping)
{
	long ms = s->c->timeout_ms;

	if (stopping) {
		struct timespec now;
		long left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (s->deadline.tv_sec - now.tv_sec) * 1000 +
		       (s->deadline.tv_nsec - now.tv_nsec) / 1000000;
		if (left < ms)
			ms = left > 1 ? left : 1;
	}
	s->api.easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, ms);
}

static enum outcome attempt(struct otlp_sender *s, const struct req *r, bool stopping,
			    struct attempt *a)
{
	char *ip = NULL;
	CURLcode rc;

	memset(a, 0, offsetof(struct attempt, body));
	a->getdate = s->api.getdate;
	a->body_len = 0;
	s->api.easy_setopt(s->curl, CURLOPT_POSTFIELDS, r->data);
	s->api.easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	s->api.easy_setopt(s->curl, CURLOPT_WRITEDATA, a);
	s->api.easy_setopt(s->curl, CURLOPT_HEADERDATA, a);
	s->errbuf[0] = '\0';
	set_deadline_timeout(s, stopping);
	rc = s->api.easy_perform(s->curl);
	a->code = rc;
	a->resolved = !s->api.easy_getinfo(s->curl, CURLINFO_PRIMARY_IP, &ip) && ip && *ip;
	if (rc != CURLE_OK) {
		const char *what = s->errbuf[0] ? s->errbuf : s->api.easy_strerror(rc);

		if (tls_error(rc))
			snprintf(a->message, sizeof(a->message), "TLS: %s (%s)", what,
				 tls_hint(rc, s->c));
		else
			snprintf(a->message, sizeof(a->message), "%s", what);
		/* curl's words may quote the server's (a status line, a name). */
		text__sanitize_str(a->message);
		/* A URL curl cannot use will not become usable. */
		return rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL ? REFUSED
										      : RETRY;
	}
	s->api.easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &a->status);
	if (a->status >= 200 && a->status < 300)
		return SENT;
	otlp_response__status(a->body, a->body_len, a->message, sizeof(a->message), &a->hint_ms);
	if (a->status == 429 || a->status == 502 || a->status == 503 || a->status == 504)
		return RETRY;
	return REFUSED;
}

/* -- The thread. -- */

/*
 * The wait before the next attempt: the backoff, always advanced, or the
 * server's hint when that is longer (a hint of 0, or a date past, must not
 * make a busy loop), at most OTLP_HINT_MAX_MS.
 */
static __u64 backoff(struct otlp_sender *s, __u64 hint_ms)
{
	__u64 ms;
	int jitter;

	s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : BACKOFF_FIRST_MS;
	if (s->backoff_ms > BACKOFF_MAX_MS)
		s->backoff_ms = BACKOFF_MAX_MS;
	/* +-20%: agents that lost one collector together do not return in step. */
	jitter = (int)(rand_r(&s->seed) % 41) - 20;
	ms = s->backoff_ms * (100 + jitter) / 100;
	if (hint_ms > ms)
		ms = hint_ms;
	return ms < OTLP_HINT_MAX_MS ? ms : OTLP_HINT_MAX_MS;
}

static void describe(const struct attempt *a, char *buf, size_t sz)
{
	if (!a->status)
		snprintf(buf, sz, "%.300s", a->message);
	else if (a->message[0])
		snprintf(buf, sz, "HTTP %ld %s: %.300s", a->status, a->reason, a->message);
	else
		snprintf(buf, sz, "HTTP %ld %s", a->status, a->reason);
}

/* Lock held. */
static void report_retry(struct otlp_sender *s, const struct attempt *a, struct notes *ns)
{
	char what[512];
	__u64 now = now_ms(CLOCK_MONOTONIC);

	describe(a, what, sizeof(what));
	s->recovered = 0;
	snprintf(s->last_failure, sizeof(s->last_failure), "%s", what);
	s->last_hint = retry_hint(a);
	/* On what failed, not its words: curl's carry a varying "after N ms". */
	if (s->failing && a->code == s->last_code && a->status == s->last_status &&
	    now - s->last_failure_ms < REPEAT_MS)
		return;
	s->failing = true;
	s->last_code = a->code;
	s->last_status = a->status;
	s->last_failure_ms = now;
	note(ns, "otlp: cannot send to %.512s: %s%s%s%s; retrying, %zu profile%s queued",
	     s->c->shown_url, what, s->last_hint ? " (" : "", s->last_hint ? s->last_hint : "",
	     s->last_hint ? ")" : "", s->nr + 1, s->nr ? "s" : "");
}

/* Lock held. */
static void report_refused(struct otlp_sender *s, const struct attempt *a, struct notes *ns)
{
	char what[512];

	describe(a, what, sizeof(what));
	if (s->last_refused == (a->status ? a->status : -1))
		return;
	s->last_refused = a->status ? a->status : -1;
	note(ns, "otlp: %.512s refused a profile: %s; dropped it (%s)", s->c->shown_url, what,
		a->status ? refusal_hint(a->status) : "check the URL");
}

/* Lock held: sent; say so once the failing is over and the backlog is out. */
static void report_sent(struct otlp_sender *s, const struct attempt *a, struct notes *ns)
{
	char msg[256];
	__u64 rejected, now;

	/* Counting from the first success after a failure until the queue is empty. */
	if (s->failing || s->recovered)
		s->recovered++;
	s->failing = false;
	s->last_failure[0] = '\0';
	s->last_hint = NULL;
	/* A refusal that comes back after this is a new episode: said again. */
	s->last_refused = 0;
	if (s->recovered && !s->nr) {
		note(ns, "otlp: %.512s reachable again, %llu queued profile%s sent", s->c->shown_url,
			(unsigned long long)s->recovered, s->recovered == 1 ? "" : "s");
		s->recovered = 0;
	}
	otlp_response__partial(a->body, a->body_len, &rejected, msg, sizeof(msg));
	if (!rejected && !msg[0])
		return;
	s->st.partial_rejected += rejected;
	now = now_ms(CLOCK_MONOTONIC);
	if (s->last_partial_ms && now - s->last_partial_ms < REPEAT_MS)
		return;
	s->last_partial_ms = now;
	note(ns, "otlp: %.512s took the request but rejected %llu profile%s: %.300s; see the collector's log",
		s->c->shown_url, (unsigned long long)rejected, rejected == 1 ? "" : "s",
		msg[0] ? msg : "no reason given");
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static bool past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return !before(&now, t);
}

/*
 * Wait ms (or until stop is asked, or the deadline after it); lock held.
 * was_stopping is what the attempt before saw: a stop asked during it, or
 * while its messages were printed, must end the wait too.
 */
static void wait_ms(struct otlp_sender *s, __u64 ms, bool was_stopping)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	while (!past(&until)) {
		/* Asked to stop: try at once, then wait no longer than the deadline. */
		if (s->stop != was_stopping)
			return;
		if (s->stop && past(&s->deadline))
			return;
		pthread_cond_timedwait(&s->cond, &s->lock,
				       s->stop && before(&s->deadline, &until) ? &s->deadline : &until);
	}
}

/*
 * Whether to give up on the request in flight, failing still: newer ones
 * were dropped for it (the queue overflowed while it was retried), or the
 * server has answered it with a failure for RETRY_MAX_MS.  Lock held.
 */
static bool give_up(struct otlp_sender *s, const struct attempt *a, __u64 since_ms,
		    struct notes *ns)
{
	__u64 now = now_ms(CLOCK_MONOTONIC);
	bool overflowed = s->cur_overflowed;

	if (a->status && !s->answered_since)
		s->answered_since = now;
	if (!overflowed && (!s->answered_since || now - s->answered_since < RETRY_MAX_MS))
		return false;
	s->given_up++;
	s->st.dropped++;
	s->st.dropped_samples += s->cur->counts.samples;
	if (s->last_given_up_ms && now - s->last_given_up_ms < REPEAT_MS)
		return true;
	s->last_given_up_ms = now;
	if (overflowed)
		note(ns, "otlp: gave up on a profile for %.512s after %llu s of retries: the queue "
			 "overflowed meanwhile; dropped it, %llu so far; bring the collector back, or "
			 "raise --otlp-queue", s->c->shown_url,
		     (unsigned long long)(now - since_ms) / 1000, (unsigned long long)s->given_up);
	else
		note(ns, "otlp: gave up on a profile for %.512s after %llu s of HTTP %ld answers "
			 "(%d minutes at most); dropped it, %llu so far; see the collector's log",
		     s->c->shown_url, (unsigned long long)(now - s->answered_since) / 1000,
		     a->status, RETRY_MAX_MS / 60000, (unsigned long long)s->given_up);
	return true;
}

static void *sender_main(void *arg)
{
	struct otlp_sender *s = arg;
	struct attempt *a = s->a;
	struct notes ns = {};

	cputime__thread_start("OTLP sender");
	pthread_mutex_lock(&s->lock);
	for (;;) {
		enum outcome out;
		bool stopping, gave_up = false;
		__u64 since;

		notes__print_unlocked(s, &ns);
		while (!s->head && !s->stop)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->head || (s->stop && past(&s->deadline)))
			break;
		s->cur = s->head;
		s->cur_overflowed = false;
		s->answered_since = 0;
		s->head = s->cur->next;
		if (!s->head)
			s->tail = NULL;
		s->nr--;
		s->bytes -= s->cur->len;
		since = now_ms(CLOCK_MONOTONIC);
		for (;;) {
			stopping = s->stop;
			pthread_mutex_unlock(&s->lock);
			notes__print(&ns);
			out = attempt(s, s->cur, stopping, a);
			pthread_mutex_lock(&s->lock);
			if (out != RETRY)
				break;
			/*
			 * Failing still after the stop: the rest is dropped now
			 * rather than retried until the deadline, which a collector
			 * that is away would only make the exit wait for.
			 */
			if (stopping) {
				describe(a, s->last_failure, sizeof(s->last_failure));
				s->last_hint = retry_hint(a);
				break;
			}
			s->st.retries++;
			report_retry(s, a, &ns);
			gave_up = give_up(s, a, since, &ns);
			if (gave_up)
				break;
			if (s->stop && past(&s->deadline))
				break;
			notes__print_unlocked(s, &ns);
			wait_ms(s, backoff(s, a->hint_ms), stopping);
			if (s->stop && past(&s->deadline))
				break;
		}
		if (out == SENT) {
			s->backoff_ms = 0;
			s->st.sent++;
			s->st.sent_samples += s->cur->counts.samples;
			report_sent(s, a, &ns);
			req__free(s->cur);
			s->cur = NULL;
			continue;
		}
		if (out == REFUSED) {
			s->st.dropped++;
			s->st.dropped_samples += s->cur->counts.samples;
			report_refused(s, a, &ns);
			req__free(s->cur);
			s->cur = NULL;
			continue;
		}
		if (gave_up) {
			/* Counted already; on to the next. */
			req__free(s->cur);
			s->cur = NULL;
			continue;
		}
		/* Out of time while retrying: close() counts it with the rest. */
		break;
	}
	pthread_mutex_unlock(&s->lock);
	notes__print(&ns);
	cputime__thread_end();
	return NULL;
}

/* l with line added; NULL (l freed) when l is NULL or out of memory. */
static struct curl_slist *slist_add(struct otlp_sender *s, struct curl_slist *l,
				    const char *line)
{
	struct curl_slist *more = l ? s->api.slist_append(l, line) : NULL;

	if (!more)
		s->api.slist_free_all(l);
	return more;
}

static int setup_curl(struct otlp_sender *s)
{
	const struct otlp_config *c = s->c;
	struct curl_slist *l = NULL;
	CURL *h = s->api.easy_init();

	if (!h)
		return -ENOMEM;
	s->curl = h;
	l = s->api.slist_append(l, "Content-Type: application/x-protobuf");
	if (c->gzip)
		l = slist_add(s, l, "Content-Encoding: gzip");
	/* curl would add "Expect: 100-continue" to a big body: a round trip lost. */
	l = slist_add(s, l, "Expect:");
	for (size_t i = 0; i < c->nr_headers; i++)
		l = slist_add(s, l, c->headers[i]);
	if (!l)
		return -ENOMEM;
	s->headers = l;
	/* In s, not on a stack: curl may write it outside a perform too. */
	s->api.easy_setopt(h, CURLOPT_ERRORBUFFER, s->errbuf);
	s->api.easy_setopt(h, CURLOPT_URL, c->url);
	s->api.easy_setopt(h, CURLOPT_POST, 1L);
	s->api.easy_setopt(h, CURLOPT_HTTPHEADER, l);
	s->api.easy_setopt(h, CURLOPT_USERAGENT, "profile/" PROFILE_VERSION);
	/* No signals from curl: the run owns them (SIGALRM for DNS timeouts). */
	s->api.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	s->api.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)c->timeout_ms);
#if LIBCURL_VERSION_NUM >= 0x075700
	/*
	 * A resolve that times out leaves its getaddrinfo() thread behind
	 * rather than joining it: else an attempt, and the exit, lasts as long
	 * as a DNS server that does not answer (seconds per server and try).
	 */
	s->api.easy_setopt(h, CURLOPT_QUICK_EXIT, 1L);
#endif
	s->api.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	s->api.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	s->api.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	if (c->ca_file)
		s->api.easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (c->client_cert)
		s->api.easy_setopt(h, CURLOPT_SSLCERT, c->client_cert);
	if (c->client_key)
		s->api.easy_setopt(h, CURLOPT_SSLKEY, c->client_key);
	return 0;
}

/* name's address in the library; the first name not found goes to *missing. */
static void *api_sym(void *handle, const char *name, const char **missing)
{
	void *p = dlsym(handle, name);

	if (!p && !*missing)
		*missing = name;
	return p;
}

/* 0, or -ELIBACC with why set to dlopen()'s words or the missing function. */
static int load_api(struct curl_api *a, char *why, size_t sz)
{
	const char *missing = NULL;
	void *h;

	a->handle = h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();

		snprintf(why, sz, "%s", e ? e : "not found");
		return -ELIBACC;
	}
	*(void **)&a->global_init = api_sym(h, "curl_global_init", &missing);
	*(void **)&a->global_cleanup = api_sym(h, "curl_global_cleanup", &missing);
	*(void **)&a->easy_init = api_sym(h, "curl_easy_init", &missing);
	*(void **)&a->easy_cleanup = api_sym(h, "curl_easy_cleanup", &missing);
	*(void **)&a->easy_setopt = api_sym(h, "curl_easy_setopt", &missing);
	*(void **)&a->easy_perform = api_sym(h, "curl_easy_perform", &missing);
	*(void **)&a->easy_getinfo = api_sym(h, "curl_easy_getinfo", &missing);
	*(void **)&a->easy_strerror = api_sym(h, "curl_easy_strerror", &missing);
	*(void **)&a->slist_append = api_sym(h, "curl_slist_append", &missing);
	*(void **)&a->slist_free_all = api_sym(h, "curl_slist_free_all", &missing);
	*(void **)&a->getdate = api_sym(h, "curl_getdate", &missing);
	if (missing) {
		snprintf(why, sz, "it has no %s", missing);
		dlclose(h);
		a->handle = NULL;
		return -ELIBACC;
	}
	return 0;
}

/*
 * The library stays loaded after the sender is freed, as libdebuginfod
 * does: its TLS library keeps global state until its destructors run at
 * exit.
 */
static void sender__free(struct otlp_sender *s)
{
	if (s->curl)
		s->api.easy_cleanup(s->curl);
	if (s->headers)
		s->api.slist_free_all(s->headers);
	if (s->curl_inited)
		s->api.global_cleanup();
	free(s->a);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

struct otlp_sender *otlp_sender__new(const struct otlp_config *c)
{
	struct otlp_sender *s;
	pthread_condattr_t ca;
	char why[256];
	int err;

	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->c = c;
	pthread_mutex_init(&s->lock, NULL);
	/* Waits are on the monotonic clock: a clock step must not stall a retry. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = load_api(&s->api, why, sizeof(why));
	if (err) {
		pr_err("--otlp needs %s, which cannot be loaded (%s): install %s",
		       CURL_SONAME, why, CURL_PACKAGE);
		goto fail;
	}
	if (s->api.global_init(CURL_GLOBAL_DEFAULT)) {
		err = -ENOMEM;
		goto fail;
	}
	s->curl_inited = true;
	/* Here, not in the thread: a failure is said by the caller, at start. */
	s->a = malloc(sizeof(*s->a));
	s->seed = (unsigned int)(now_ms(CLOCK_REALTIME) ^ getpid());
	err = s->a ? setup_curl(s) : -ENOMEM;
	if (!err)
		err = -pthread_create(&s->thread, NULL, sender_main, s);
	if (err)
		goto fail;
	return s;
fail:
	sender__free(s);
	errno = -err;
	return NULL;
}

int otlp_sender__close(struct otlp_sender *s, struct otlp_stats *final)
{
	__u64 left = 0, left_samples = 0;
	struct otlp_stats st;

	pthread_mutex_lock(&s->lock);
	clock_gettime(CLOCK_MONOTONIC, &s->deadline);
	s->deadline.tv_sec += s->c->timeout_ms / 1000;
	s->deadline.tv_nsec += (s->c->timeout_ms % 1000) * 1000000L;
	if (s->deadline.tv_nsec >= 1000000000) {
		s->deadline.tv_sec++;
		s->deadline.tv_nsec -= 1000000000;
	}
	s->stop = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);

	/* The thread is gone: what it did not send is counted here. */
	if (s->cur) {
		s->cur->next = s->head;
		s->head = s->cur;
		s->cur = NULL;
	}
	while (s->head) {
		struct req *r = s->head;

		s->head = r->next;
		left++;
		left_samples += r->counts.samples;
		req__free(r);
	}
	s->st.dropped += left;
	s->st.dropped_samples += left_samples;
	if (left && s->last_failure[0])
		pr_warn("otlp: %llu profile%s not sent to %.512s at exit: %s%s%s%s; dropped",
			(unsigned long long)left, left == 1 ? "" : "s", s->c->shown_url,
			s->last_failure, s->last_hint ? " (" : "", s->last_hint ? s->last_hint : "",
			s->last_hint ? ")" : "");
	else if (left)
		pr_warn("otlp: %llu profile%s not sent to %.512s within the %u ms timeout at exit; "
			"dropped; raise OTEL_EXPORTER_OTLP_TIMEOUT, or see the collector's log",
			(unsigned long long)left, left == 1 ? "" : "s", s->c->shown_url,
			s->c->timeout_ms);
	st = s->st;
	st.queued = st.queued_bytes = 0;
	if (final)
		*final = st;
	sender__free(s);
	return st.dropped ? -EIO : 0;
}
