/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A tiny protocol-buffers writer: just what profile.proto needs (varints,
 * length-delimited fields, packed repeated varints, nested messages).  It
 * appends to one growable buffer; an allocation failure is sticky in
 * pb->err, so encoders write on and check once at the end.
 */
#ifndef PB_H
#define PB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Wire types, as in the protobuf encoding spec. */
enum pb_wire {
	PB_VARINT = 0,
	PB_I64 = 1,
	PB_LEN = 2,
	PB_I32 = 5,
};

struct pb {
	__u8 *buf;
	size_t len, cap;
	int err;		/* sticky: -ENOMEM after a failed growth */
};

/* Raw pieces. */
void pb__raw(struct pb *b, const void *data, size_t n);
void pb__varint(struct pb *b, __u64 v);
void pb__tag(struct pb *b, __u32 field, enum pb_wire wire);

/*
 * Scalar fields, always written (even when zero: callers that want proto3's
 * "absent means zero" just skip the call).  int64 is a plain two's-complement
 * varint, as proto's int64 (not sint64) is.
 */
void pb__uint64(struct pb *b, __u32 field, __u64 v);
void pb__int64(struct pb *b, __u32 field, __s64 v);
/* fixed64: eight bytes, little-endian. */
void pb__fixed64(struct pb *b, __u32 field, __u64 v);
void pb__bool(struct pb *b, __u32 field, bool v);
void pb__bytes(struct pb *b, __u32 field, const void *data, size_t n);
/* s as written is made safe text (text.h): valid UTF-8, as proto3 wants. */
void pb__string(struct pb *b, __u32 field, const char *s);

/* A packed repeated uint64/int64 field; nothing at all when n == 0. */
void pb__packed_u64(struct pb *b, __u32 field, const __u64 *v, size_t n);

/*
 * Nested messages: pb__open() writes the tag and returns a mark; the message
 * body follows; pb__close() inserts the body's length in front of it.  The
 * body is moved by the size of that varint, so keep big bodies top-level.
 * Opens and closes nest like parentheses.
 */
size_t pb__open(struct pb *b, __u32 field);
void pb__close(struct pb *b, size_t mark);

/* Number of bytes pb__varint() writes for v. */
size_t pb__varint_size(__u64 v);

void pb__free(struct pb *b);

#endif /* PB_H */
