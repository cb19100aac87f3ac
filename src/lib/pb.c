// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pb.h"
#include "lib/text.h"

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

void pb__raw(struct pb *b, const void *data, size_t n)
{
	if (!n || pb_grow(b, n))
		return;
	memcpy(b->buf + b->len, data, n);
	b->len += n;
}

size_t pb__varint_size(__u64 v)
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

void pb__varint(struct pb *b, __u64 v)
{
	__u8 tmp[10];

	pb__raw(b, tmp, encode_varint(tmp, v));
}

void pb__tag(struct pb *b, __u32 field, enum pb_wire wire)
{
	pb__varint(b, (__u64)field << 3 | wire);
}

void pb__uint64(struct pb *b, __u32 field, __u64 v)
{
	pb__tag(b, field, PB_VARINT);
	pb__varint(b, v);
}

void pb__fixed64(struct pb *b, __u32 field, __u64 v)
{
	__u8 le[8];

	for (int i = 0; i < 8; i++)
		le[i] = v >> (8 * i);
	pb__tag(b, field, PB_I64);
	pb__raw(b, le, sizeof(le));
}

void pb__int64(struct pb *b, __u32 field, __s64 v)
{
	pb__uint64(b, field, (__u64)v);
}

void pb__bool(struct pb *b, __u32 field, bool v)
{
	pb__uint64(b, field, v ? 1 : 0);
}

void pb__bytes(struct pb *b, __u32 field, const void *data, size_t n)
{
	pb__tag(b, field, PB_LEN);
	pb__varint(b, n);
	pb__raw(b, data, n);
}

/*
 * proto3 strings must be valid UTF-8 (Go's decoder refuses the whole
 * profile otherwise).  Names come safe from where they were read; make
 * sure of it as they are encoded, byte for byte in our own buffer.
 */
void pb__string(struct pb *b, __u32 field, const char *s)
{
	size_t n = strlen(s);

	pb__bytes(b, field, s, n);
	if (!b->err)
		text__sanitize((char *)b->buf + b->len - n, n);
}

void pb__packed_u64(struct pb *b, __u32 field, const __u64 *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += pb__varint_size(v[i]);
	pb__tag(b, field, PB_LEN);
	pb__varint(b, len);
	for (size_t i = 0; i < n; i++)
		pb__varint(b, v[i]);
}

size_t pb__open(struct pb *b, __u32 field)
{
	pb__tag(b, field, PB_LEN);
	return b->len;
}

void pb__close(struct pb *b, size_t mark)
{
	size_t body, n;

	if (b->err)
		return;
	body = b->len - mark;
	n = pb__varint_size(body);
	if (pb_grow(b, n))
		return;
	memmove(b->buf + mark + n, b->buf + mark, body);
	encode_varint(b->buf + mark, body);
	b->len += n;
}

void pb__free(struct pb *b)
{
	free(b->buf);
	*b = (struct pb){};
}
