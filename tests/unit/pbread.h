/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A protobuf reader for the tests, written apart from the writer
 * (src/output/pb.c) so that the two check each other: varints,
 * length-delimited fields and fixed64, nothing else; and the two shapes
 * of message the profile formats repeat: packed varints, varints alone.
 */
#ifndef TEST_PBREAD_H
#define TEST_PBREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct rd {
	const __u8 *p, *end;
	int err;
};

static __u64 rd_varint(struct rd *r)
{
	__u64 v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end) {
			r->err = 1;
			return 0;
		}
		v |= (__u64)(*r->p & 0x7f) << shift;
		if (!(*r->p++ & 0x80))
			return v;
	}
	r->err = 1;
	return 0;
}

/*
 * The next field: a varint or a fixed64 in *val, or a length-delimited
 * body in *sub (sub->p NULL for the others).
 */
static bool rd_field(struct rd *r, __u32 *field, __u64 *val, struct rd *sub)
{
	__u64 key, n;

	if (r->err || r->p >= r->end)
		return false;
	key = rd_varint(r);
	*field = key >> 3;
	*sub = (struct rd){};
	*val = 0;
	switch (key & 7) {
	case 0:
		*val = rd_varint(r);
		break;
	case 1:
		if (r->end - r->p < 8) {
			r->err = 1;
			return false;
		}
		for (int i = 0; i < 8; i++)
			*val |= (__u64)r->p[i] << (8 * i);
		r->p += 8;
		break;
	case 2:
		n = rd_varint(r);
		if (n > (__u64)(r->end - r->p)) {
			r->err = 1;
			return false;
		}
		*sub = (struct rd){ .p = r->p, .end = r->p + n };
		r->p += n;
		break;
	default:
		r->err = 1;
		return false;
	}
	return !r->err;
}

/*
 * A repeated varint field: one value (v, sub->p NULL) or a packed body
 * (sub), appended to out[*nr] while *nr < max; the rest is dropped.
 */
static void rd_packed(struct rd *sub, __u64 v, __u64 *out, size_t *nr, size_t max)
{
	if (!sub->p) {
		if (*nr < max)
			out[(*nr)++] = v;
		return;
	}
	while (sub->p < sub->end && !sub->err && *nr < max)
		out[(*nr)++] = rd_varint(sub);
}

/*
 * A message whose fields 1..n are single varints: field i into *to[i - 1]
 * (to[i - 1] NULL: passed over), as are fields above n.
 */
static void rd_uints(struct rd *r, __u64 *const to[], size_t n)
{
	struct rd sub;
	__u64 v;
	__u32 f;

	while (rd_field(r, &f, &v, &sub))
		if (f >= 1 && f <= n && to[f - 1])
			*to[f - 1] = v;
}

#endif /* TEST_PBREAD_H */
