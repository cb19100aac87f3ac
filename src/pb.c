// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"

static int pb_grow(struct pb *b, size_t extra)
{
	size_t cap = b->cap ? b->cap : 4096;
	__u8 *tmp;

	if (b->err)
		return b->err;
	if (b->len + extra <= b->cap)
		return 0;
	while (cap < b->len + extra)
		cap *= 2;
	tmp = realloc(b->buf, cap);
	if (!tmp)
		return b->err = -ENOMEM;
	b->buf = tmp;
	b->cap = cap;
	return 0;
}

void pb_raw(struct pb *b, const void *data, size_t n)
{
	if (!n || pb_grow(b, n))
		return;
	memcpy(b->buf + b->len, data, n);
	b->len += n;
}

size_t pb_varint_size(__u64 v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Seven bits at a time, low bits first, the top bit saying "more follows". */
static size_t encode_varint(__u8 *p, __u64 v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (__u8)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (__u8)v;
	return n;
}

void pb_varint(struct pb *b, __u64 v)
{
	__u8 tmp[10];

	pb_raw(b, tmp, encode_varint(tmp, v));
}

void pb_tag(struct pb *b, __u32 field, enum pb_wire wire)
{
	pb_varint(b, (__u64)field << 3 | wire);
}

void pb_uint64(struct pb *b, __u32 field, __u64 v)
{
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

void pb_int64(struct pb *b, __u32 field, __s64 v)
{
	pb_uint64(b, field, (__u64)v);
}

void pb_bool(struct pb *b, __u32 field, bool v)
{
	pb_uint64(b, field, v ? 1 : 0);
}

void pb_bytes(struct pb *b, __u32 field, const void *data, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	pb_raw(b, data, n);
}

void pb_string(struct pb *b, __u32 field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

void pb_packed_u64(struct pb *b, __u32 field, const __u64 *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += pb_varint_size(v[i]);
	pb_tag(b, field, PB_LEN);
	pb_varint(b, len);
	for (size_t i = 0; i < n; i++)
		pb_varint(b, v[i]);
}

size_t pb_open(struct pb *b, __u32 field)
{
	pb_tag(b, field, PB_LEN);
	return b->len;
}

void pb_close(struct pb *b, size_t mark)
{
	size_t body, n;

	if (b->err)
		return;
	body = b->len - mark;
	n = pb_varint_size(body);
	if (pb_grow(b, n))
		return;
	memmove(b->buf + mark + n, b->buf + mark, body);
	encode_varint(b->buf + mark, body);
	b->len += n;
}

void pb_free(struct pb *b)
{
	free(b->buf);
	*b = (struct pb){};
}
