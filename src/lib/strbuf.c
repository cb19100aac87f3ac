// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

static int strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t cap = sb->cap ? sb->cap : 4096;
	char *tmp;

	if (sb->err)
		return sb->err;
	if (sb->len + extra + 1 <= sb->cap)
		return 0;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	tmp = realloc(sb->buf, cap);
	if (!tmp)
		return sb->err = -ENOMEM;
	sb->buf = tmp;
	sb->cap = cap;
	return 0;
}

void strbuf__add(struct strbuf *sb, const char *s, size_t n)
{
	if (strbuf_grow(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf__puts(struct strbuf *sb, const char *s)
{
	strbuf__add(sb, s, strlen(s));
}

void strbuf__putc(struct strbuf *sb, char c)
{
	strbuf__add(sb, &c, 1);
}

void strbuf__u64(struct strbuf *sb, __u64 v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	strbuf__add(sb, tmp + i, sizeof(tmp) - i);
}

void strbuf__hex(struct strbuf *sb, __u64 v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	int i = sizeof(tmp);

	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	strbuf__add(sb, tmp + i, sizeof(tmp) - i);
}

void strbuf__free(struct strbuf *sb)
{
	free(sb->buf);
	memset(sb, 0, sizeof(*sb));
}
