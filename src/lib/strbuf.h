/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A growable byte buffer for building output text without stdio per frame. */
#ifndef STRBUF_H
#define STRBUF_H

#include <stddef.h>
#include <linux/types.h>

struct strbuf {
	char *buf;
	size_t len, cap;
	int err;		/* sticky: -ENOMEM after a failed growth */
};

void strbuf__add(struct strbuf *sb, const char *s, size_t n);
void strbuf__puts(struct strbuf *sb, const char *s);
void strbuf__putc(struct strbuf *sb, char c);
void strbuf__u64(struct strbuf *sb, __u64 v);
void strbuf__hex(struct strbuf *sb, __u64 v);
void strbuf__free(struct strbuf *sb);

#endif /* STRBUF_H */
