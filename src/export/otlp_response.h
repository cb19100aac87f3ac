/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading what a collector answers, for the sender (otlp_send.c) and its
 * unit tests.  Everything here is untrusted input from the network: a
 * body may be anything (HTML from a proxy, a truncated or hostile
 * protobuf), and each reader takes only what it understands, never reads
 * outside the len bytes given, and gives printable text only.
 */
#ifndef EXPORT_OTLP_RESPONSE_H
#define EXPORT_OTLP_RESPONSE_H

#include <stddef.h>
#include <time.h>
#include <linux/types.h>

/* A server's hint longer than this is taken as this: the queue must move. */
#define OTLP_HINT_MAX_MS 300000

/*
 * A refusal's google.rpc.Status: its message into msg (sz bytes, NUL
 * terminated; left as it is when none), and the delay of a
 * google.rpc.RetryInfo among its details into *hint_ms (at most
 * OTLP_HINT_MAX_MS; left as it is when none).
 */
void otlp_response__status(const void *body, size_t len, char *msg, size_t sz, __u64 *hint_ms);

/*
 * A success's ExportProfilesServiceResponse: partial_success's
 * rejected_profiles into *rejected and error_message into msg (both empty
 * when none).
 */
void otlp_response__partial(const void *body, size_t len, __u64 *rejected, char *msg,
			    size_t sz);

/* An HTTP date's time, or -1: libcurl's curl_getdate(), loaded by the sender. */
typedef time_t (*otlp_getdate_fn)(const char *date, const time_t *unused);

/*
 * A Retry-After value (delay-seconds, or an HTTP date read by getdate) at
 * time now, in ms, at most OTLP_HINT_MAX_MS; 0 when it is not one, or
 * asks for no wait.
 */
__u64 otlp_response__retry_after_ms(const char *v, time_t now, otlp_getdate_fn getdate);

#endif /* EXPORT_OTLP_RESPONSE_H */
