/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sending OTLP requests to a collector, off the sampling thread: a bounded
 * queue and one sender thread using libcurl.  A request that fails for a
 * reason that may pass (no connection, a timeout, 429, 502, 503, 504) is
 * retried with exponential backoff, or after the server's Retry-After or
 * RetryInfo; one refused for good (any other 4xx or 5xx) is dropped.  When
 * the queue is full the oldest request is dropped to make room.  Every
 * dropped request, and its samples, is counted.
 */
#ifndef EXPORT_OTLP_SEND_H
#define EXPORT_OTLP_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct pb;
struct otlp_config;
struct otlp_sender;

/* What one request carries, for the sender's counts and the tests. */
struct otlp_counts {
	__u64 samples;			/* on-CPU samples */
	__u64 off_cpu_ns;		/* blocked time */
	__u32 profiles;			/* Profile messages */
	__u32 resources;		/* ResourceProfiles messages */
};

struct otlp_stats {
	__u64 sent, sent_samples;	/* requests the collector took */
	__u64 dropped, dropped_samples;	/* queue full, refused, or unsent at exit */
	__u64 retries;			/* attempts that failed and were retried */
	__u64 partial_rejected;		/* profiles a partial success rejected */
	size_t queued, queued_bytes;	/* waiting now */
};

/*
 * A sender for c (which must outlive it), with its thread started; NULL +
 * errno.  ELIBACC: libcurl cannot be loaded, and this has said so.
 */
struct otlp_sender *otlp_sender__new(const struct otlp_config *c);

/*
 * Queue a request: body (uncompressed protobuf) is taken over, and body
 * left empty.  Never blocks on the network.  0 or -errno.
 */
int otlp_sender__push(struct otlp_sender *s, struct pb *body, const struct otlp_counts *counts);

void otlp_sender__stats(struct otlp_sender *s, struct otlp_stats *st);

/*
 * Send what is queued, for at most the config's timeout in all, then stop
 * the thread and free s.  What is still unsent is counted as dropped and
 * reported.  0, or -EIO when anything was dropped over the run.
 */
int otlp_sender__close(struct otlp_sender *s, struct otlp_stats *final);

#endif /* EXPORT_OTLP_SEND_H */
