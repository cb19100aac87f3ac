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

void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_u64(struct strbuf *sb, __u64 v);
void sb_hex(struct strbuf *sb, __u64 v);
void sb_free(struct strbuf *sb);

#endif /* STRBUF_H */
