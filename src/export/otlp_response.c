// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Just enough protobuf reading to walk a collector's answer.  A field
 * with an expected number but another wire type is skipped, not read:
 * only length-delimited fields give bytes, only varints give numbers.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "export/otlp_response.h"
#include "lib/pb.h"
#include "lib/text.h"

struct pbr {
	const __u8 *p, *end;
};

static bool pbr_varint(struct pbr *r, __u64 *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
		__u8 b = *r->p++;

		*v |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * The next field: its number in *field, and its wire type returned; -1
 * at the end or on bad input.  A varint's value is in *v (else 0), a
 * length-delimited field's bytes in *sub (else empty).
 */
static int pbr_field(struct pbr *r, __u32 *field, __u64 *v, struct pbr *sub)
{
	__u64 key, len;
	int wt;

	*v = 0;
	sub->p = sub->end = NULL;
	if (r->p >= r->end || !pbr_varint(r, &key))
		return -1;
	*field = key >> 3;
	wt = key & 7;
	switch (wt) {
	case PB_VARINT:
		return pbr_varint(r, v) ? wt : -1;
	case PB_I64:
		if (r->end - r->p < 8)
			return -1;
		r->p += 8;
		return wt;
	case PB_I32:
		if (r->end - r->p < 4)
			return -1;
		r->p += 4;
		return wt;
	case PB_LEN:
		if (!pbr_varint(r, &len) || len > (__u64)(r->end - r->p))
			return -1;
		sub->p = r->p;
		sub->end = r->p + len;
		r->p += len;
		return wt;
	default:
		return -1;
	}
}

/* Safe text (lib/text.h) of at most sz - 1 bytes. */
static void pbr_text(const struct pbr *r, char *out, size_t sz)
{
	size_t n = r->end - r->p;

	if (n >= sz)
		n = sz - 1;
	memcpy(out, r->p, n);
	out[n] = '\0';
	text__sanitize(out, n);
	/* A NUL inside would cut the text short, harmlessly; say '?' instead. */
	for (size_t i = 0; i < n; i++)
		if (!out[i])
			out[i] = '?';
}

/*
 * google.protobuf.Duration{1 int64 seconds, 2 int32 nanos}, in ms: a
 * negative one is 0, a long one OTLP_HINT_MAX_MS.
 */
static __u64 pb_duration_ms(struct pbr r)
{
	__s64 sec = 0, nanos = 0;
	struct pbr sub;
	__u64 v;
	__u32 f;
	int wt;

	while ((wt = pbr_field(&r, &f, &v, &sub)) >= 0) {
		if (wt != PB_VARINT)
			continue;
		if (f == 1)
			sec = (__s64)v;
		else if (f == 2)
			nanos = (__s32)(__u32)v;
	}
	if (sec < 0 || (sec == 0 && nanos <= 0))
		return 0;
	if (sec >= OTLP_HINT_MAX_MS / 1000)
		return OTLP_HINT_MAX_MS;
	return (__u64)sec * 1000 + (nanos > 0 ? (__u64)nanos / 1000000 : 0);
}

/* google.rpc.Status{1 code, 2 message, 3 details: Any{1 type_url, 2 value}}. */
void otlp_response__status(const void *body, size_t len, char *msg, size_t sz, __u64 *hint_ms)
{
	struct pbr r = { body, (const __u8 *)body + len }, sub, any;
	char type[128];
	__u64 v;
	__u32 f, g;
	int wt;

	while ((wt = pbr_field(&r, &f, &v, &sub)) >= 0) {
		if (wt != PB_LEN)
			continue;
		if (f == 2)
			pbr_text(&sub, msg, sz);
		if (f != 3)
			continue;
		struct pbr value = {};

		type[0] = '\0';
		while ((wt = pbr_field(&sub, &g, &v, &any)) >= 0) {
			if (wt != PB_LEN)
				continue;
			if (g == 1)
				pbr_text(&any, type, sizeof(type));
			else if (g == 2)
				value = any;
		}
		if (!value.p || !strstr(type, "google.rpc.RetryInfo"))
			continue;
		/* RetryInfo{1 retry_delay: Duration}. */
		struct pbr d;

		while ((wt = pbr_field(&value, &g, &v, &d)) >= 0)
			if (wt == PB_LEN && g == 1)
				*hint_ms = pb_duration_ms(d);
	}
}

/*
 * ExportProfilesServiceResponse{1 partial_success:
 * ExportProfilesPartialSuccess{1 rejected_profiles, 2 error_message}}.
 */
void otlp_response__partial(const void *body, size_t len, __u64 *rejected, char *msg,
			    size_t sz)
{
	struct pbr r = { body, (const __u8 *)body + len }, sub, s2;
	__u64 v;
	__u32 f, g;
	int wt;

	*rejected = 0;
	msg[0] = '\0';
	while ((wt = pbr_field(&r, &f, &v, &sub)) >= 0) {
		if (wt != PB_LEN || f != 1)
			continue;
		while ((wt = pbr_field(&sub, &g, &v, &s2)) >= 0) {
			if (g == 1 && wt == PB_VARINT)
				*rejected = v;
			else if (g == 2 && wt == PB_LEN)
				pbr_text(&s2, msg, sz);
		}
	}
}

__u64 otlp_response__retry_after_ms(const char *v, time_t now, otlp_getdate_fn getdate)
{
	__u64 sec = 0;
	const char *p = v;
	time_t when;

	if (isdigit((unsigned char)*p)) {
		/* Saturating: a huge number is the cap, not a wrapped small one. */
		for (; isdigit((unsigned char)*p); p++)
			if (sec < OTLP_HINT_MAX_MS / 1000)
				sec = sec * 10 + (*p - '0');
		if (*p && *p != ' ' && *p != '\t')
			return 0;
		if (sec >= OTLP_HINT_MAX_MS / 1000)
			return OTLP_HINT_MAX_MS;
		return sec * 1000;
	}
	if (!isalpha((unsigned char)*p))
		return 0;
	when = getdate(v, &now);
	if (when < 0 || when <= now)
		return 0;
	if ((__u64)(when - now) >= OTLP_HINT_MAX_MS / 1000)
		return OTLP_HINT_MAX_MS;
	return (__u64)(when - now) * 1000;
}
