// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sender's readers of what a collector answers (otlp_response.h), fed
 * good answers and hostile ones: fields of the expected number but another
 * wire type, truncated varints, lengths past the end, zero, negative and
 * huge retry delays, Retry-After as seconds and as a date (read by
 * libcurl).  Each must give the right answer or none, never read outside
 * the body (run under ASan and valgrind too), and give printable text
 * only.
 */
#include <dlfcn.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "export/otlp_response.h"
#include "lib/text.h"

#define SZ(a) (sizeof(a) - 1)

/* Status{2 message "slow down", 3 Any{RetryInfo{1 Duration{1 sec, 2 nanos}}}}. */
static size_t status_with_delay(unsigned char *out, const unsigned char *dur, size_t dlen)
{
	static const char type[] = "type.googleapis.com/google.rpc.RetryInfo";
	unsigned char *p = out;

	*p++ = 0x08, *p++ = 14;				/* code 14 UNAVAILABLE */
	*p++ = 0x12, *p++ = 9;
	memcpy(p, "slow down", 9), p += 9;
	*p++ = 0x1a, *p++ = 2 + SZ(type) + 2 + 2 + dlen;	/* details: Any */
	*p++ = 0x0a, *p++ = SZ(type);
	memcpy(p, type, SZ(type)), p += SZ(type);
	*p++ = 0x12, *p++ = 2 + dlen;			/* value: RetryInfo */
	*p++ = 0x0a, *p++ = dlen;			/* retry_delay: Duration */
	memcpy(p, dur, dlen), p += dlen;
	return p - out;
}

static __u64 delay_of(const unsigned char *dur, size_t dlen)
{
	unsigned char body[256];
	size_t len = status_with_delay(body, dur, dlen);
	char msg[64] = "";
	__u64 hint = 12345;		/* "none" leaves it as it is */

	otlp_response__status(body, len, msg, sizeof(msg), &hint);
	CHECK_STR(msg, "slow down");
	return hint;
}

TEST(status)
{
	static const unsigned char d2500[] = { 0x08, 2, 0x10, 0x80, 0xca, 0xb5, 0xee, 0x01 };
	static const unsigned char zero[] = {};
	static const unsigned char zero_sec[] = { 0x08, 0 };
	/* seconds -5: a 10-byte varint. */
	static const unsigned char neg[] = { 0x08, 0xfb, 0xff, 0xff, 0xff, 0xff,
					     0xff, 0xff, 0xff, 0xff, 0x01 };
	/* seconds 2^62: would wrap when multiplied by 1000. */
	static const unsigned char huge[] = { 0x08, 0x80, 0x80, 0x80, 0x80, 0x80,
					      0x80, 0x80, 0x80, 0x40 };
	/* nanos -1 with seconds 0. */
	static const unsigned char neg_nanos[] = { 0x10, 0xff, 0xff, 0xff, 0xff, 0xff,
						   0xff, 0xff, 0xff, 0xff, 0x01 };

	CHECK_INT(delay_of(d2500, sizeof(d2500)), 2500);
	/* A zero or negative delay asks for no wait: 0, the sender's backoff decides. */
	CHECK_INT(delay_of(zero, 0), 0);
	CHECK_INT(delay_of(zero_sec, sizeof(zero_sec)), 0);
	CHECK_INT(delay_of(neg, sizeof(neg)), 0);
	CHECK_INT(delay_of(neg_nanos, sizeof(neg_nanos)), 0);
	CHECK_INT(delay_of(huge, sizeof(huge)), OTLP_HINT_MAX_MS);
}

/* A body that must give no message and no hint, whatever else it does. */
static void check_nothing(const char *what, const void *body, size_t len)
{
	char msg[64] = "untouched";
	__u64 hint = 7, rejected = 99;

	otlp_response__status(body, len, msg, sizeof(msg), &hint);
	if (strcmp(msg, "untouched") || hint != 7) {
		fprintf(stderr, "  status of %s: message '%s', hint %llu\n", what, msg,
			(unsigned long long)hint);
		CHECK(0);
	}
	otlp_response__partial(body, len, &rejected, msg, sizeof(msg));
	if (rejected || msg[0]) {
		fprintf(stderr, "  partial of %s: %llu rejected, '%s'\n", what,
			(unsigned long long)rejected, msg);
		CHECK(0);
	}
}

TEST(hostile)
{
	/* Field 2 (message) and 3 (details) as varints, I64, I32: no slice to read. */
	static const unsigned char varint_msg[] = { 0x10, 0x05 };
	static const unsigned char varint_details[] = { 0x18, 0x05 };
	static const unsigned char i64_msg[] = { 0x11, 1, 2, 3, 4, 5, 6, 7, 8 };
	static const unsigned char i32_details[] = { 0x1d, 1, 2, 3, 4 };
	/* Partial success (field 1) as a varint, and its fields as the wrong types. */
	static const unsigned char varint_partial[] = { 0x08, 0x05 };
	static const unsigned char partial_bad[] = { 0x0a, 0x04, 0x0a, 0x00, 0x10, 0x03 };
	/* Cut short: a varint that never ends, a length past the end. */
	static const unsigned char trunc_varint[] = { 0x08, 0xff, 0xff };
	static const unsigned char trunc_key[] = { 0x80 };
	static const unsigned char long_len[] = { 0x12, 0x7f, 'a', 'b' };
	static const unsigned char huge_len[] = { 0x12, 0xff, 0xff, 0xff, 0xff, 0xff,
						  0xff, 0xff, 0xff, 0xff, 0x01, 'a' };
	static const unsigned char endless[] = { 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	/* Wire types 6 and 7 do not exist; 3 and 4 (groups) are not read. */
	static const unsigned char wt7[] = { 0x17, 0x00 };
	static const char html[] = "<html><body>502 Bad Gateway</body></html>";

	check_nothing("varint message", varint_msg, sizeof(varint_msg));
	check_nothing("varint details", varint_details, sizeof(varint_details));
	check_nothing("I64 message", i64_msg, sizeof(i64_msg));
	check_nothing("I32 details", i32_details, sizeof(i32_details));
	check_nothing("truncated varint", trunc_varint, sizeof(trunc_varint));
	check_nothing("truncated key", trunc_key, sizeof(trunc_key));
	check_nothing("length past the end", long_len, sizeof(long_len));
	check_nothing("huge length", huge_len, sizeof(huge_len));
	check_nothing("endless varint", endless, sizeof(endless));
	check_nothing("wire type 7", wt7, sizeof(wt7));
	check_nothing("HTML", html, SZ(html));
	check_nothing("empty", "", 0);

	/* As a partial success, these are not one either. */
	__u64 rejected = 99;
	char msg[32];

	otlp_response__partial(varint_partial, sizeof(varint_partial), &rejected, msg, sizeof(msg));
	CHECK_INT(rejected, 0);
	CHECK_STR(msg, "");
	/* rejected_profiles as LEN, error_message as a varint: neither is taken. */
	otlp_response__partial(partial_bad, sizeof(partial_bad), &rejected, msg, sizeof(msg));
	CHECK_INT(rejected, 0);
	CHECK_STR(msg, "");

	/* A RetryInfo whose delay is a varint, and one with a type_url varint. */
	static const unsigned char ri_varint[] = {
		0x1a, 0x2e, 0x0a, 0x28, 't', 'y', 'p', 'e', '.', 'g', 'o', 'o', 'g', 'l', 'e',
		'a', 'p', 'i', 's', '.', 'c', 'o', 'm', '/', 'g', 'o', 'o', 'g', 'l', 'e', '.',
		'r', 'p', 'c', '.', 'R', 'e', 't', 'r', 'y', 'I', 'n', 'f', 'o',
		0x12, 0x02, 0x08, 0x05,
	};
	__u64 hint = 7;

	msg[0] = '\0';
	otlp_response__status(ri_varint, sizeof(ri_varint), msg, sizeof(msg), &hint);
	CHECK_INT(hint, 7);
}

TEST(partial_and_text)
{
	/* partial_success{1: 3, 2: "bad\e[31mred"} */
	static const unsigned char body[] = { 0x0a, 0x0f, 0x08, 0x03, 0x12, 0x0b,
					      'b', 'a', 'd', 0x1b, '[', '3', '1', 'm', 'r', 'e', 'd' };
	/* Status{2: "a\0b\xff"} */
	static const unsigned char status[] = { 0x12, 0x04, 'a', 0, 'b', 0xff };
	__u64 rejected, hint = 0;
	char msg[64];

	otlp_response__partial(body, sizeof(body), &rejected, msg, sizeof(msg));
	CHECK_INT(rejected, 3);
	CHECK_STR(msg, "bad?[31mred");
	CHECK(text__is_safe(msg, strlen(msg)));
	otlp_response__status(status, sizeof(status), msg, sizeof(msg), &hint);
	CHECK_STR(msg, "a?b?");
	CHECK_INT(hint, 0);
	/* A message longer than the buffer is cut, still terminated. */
	otlp_response__partial(body, sizeof(body), &rejected, msg, 5);
	CHECK_STR(msg, "bad?");
}

/* libcurl's date reader, as the sender loads it. */
static otlp_getdate_fn load_getdate(void)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	otlp_getdate_fn fn = NULL;

	if (h)
		*(void **)&fn = dlsym(h, "curl_getdate");
	return fn;
}

TEST(retry_after)
{
	time_t now = 1700000000;	/* Tue, 14 Nov 2023 22:13:20 GMT */
	otlp_getdate_fn getdate = load_getdate();

	/* libcurl4 is a dependency of --otlp: its absence is a failure here. */
	CHECK(getdate != NULL);
	if (!getdate)
		return;

	CHECK_INT(otlp_response__retry_after_ms("3", now, getdate), 3000);
	CHECK_INT(otlp_response__retry_after_ms("120 ", now, getdate), 120000);
	/* No wait asked: the backoff decides. */
	CHECK_INT(otlp_response__retry_after_ms("0", now, getdate), 0);
	/* Not a delay: a sign, a fraction, words, nothing. */
	CHECK_INT(otlp_response__retry_after_ms("-5", now, getdate), 0);
	CHECK_INT(otlp_response__retry_after_ms("1.5", now, getdate), 0);
	CHECK_INT(otlp_response__retry_after_ms("soon", now, getdate), 0);
	CHECK_INT(otlp_response__retry_after_ms("", now, getdate), 0);
	/* Huge: the cap, not a wrapped small number. */
	CHECK_INT(otlp_response__retry_after_ms("18446744073709552", now, getdate), OTLP_HINT_MAX_MS);
	CHECK_INT(otlp_response__retry_after_ms("99999999999999999999999999", now, getdate),
		  OTLP_HINT_MAX_MS);
	CHECK_INT(otlp_response__retry_after_ms("301", now, getdate), OTLP_HINT_MAX_MS);
	/* HTTP dates: ahead, past, far ahead. */
	CHECK_INT(otlp_response__retry_after_ms("Tue, 14 Nov 2023 22:13:50 GMT", now, getdate), 30000);
	CHECK_INT(otlp_response__retry_after_ms("Tue, 14 Nov 2023 22:13:20 GMT", now, getdate), 0);
	CHECK_INT(otlp_response__retry_after_ms("Mon, 13 Nov 2023 22:13:20 GMT", now, getdate), 0);
	CHECK_INT(otlp_response__retry_after_ms("Fri, 01 Jan 2100 00:00:00 GMT", now, getdate),
		  OTLP_HINT_MAX_MS);
}

int main(void)
{
	RUN(status);
	RUN(hostile);
	RUN(partial_and_text);
	RUN(retry_after);
	return unit_summary();
}
