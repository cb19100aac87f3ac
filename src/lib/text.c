// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Untrusted text made safe to print: see text.h. */
#include <stdint.h>
#include <string.h>

#include "lib/text.h"

/* Line and paragraph separators, bidirectional format controls. */
static bool is_format_control(uint32_t cp)
{
	return cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) ||	/* LRE RLE PDF LRO RLO */
	       (cp >= 0x2066 && cp <= 0x2069);		/* LRI RLI FSI PDI */
}

static bool is_noncharacter(uint32_t cp)
{
	return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
}

/* cp is a Unicode scalar value (no surrogate, at most U+10FFFF). */
static bool is_printable(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return false;
	return !is_noncharacter(cp) && !is_format_control(cp);
}

/* Sequence length announced by a lead byte, 0 if it cannot lead one. */
static int lead_len(unsigned char c, uint32_t *bits)
{
	if (c < 0x80) {
		*bits = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		*bits = c & 0x1f;
		return 2;
	}
	if (c >= 0xe0 && c <= 0xef) {
		*bits = c & 0x0f;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		*bits = c & 0x07;
		return 4;
	}
	return 0;	/* a continuation byte, 0xc0, 0xc1 or 0xf5..0xff */
}

int text__char_len(const char *s, size_t len)
{
	static const uint32_t min_cp[] = { 0, 0, 0x80, 0x800, 0x10000 };
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	int n;

	if (!len)
		return 0;
	n = lead_len(p[0], &cp);
	if (!n || (size_t)n > len)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates, beyond U+10FFFF. */
	if (cp < min_cp[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return is_printable(cp) ? n : 0;
}

bool text__is_safe(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		int n = text__char_len(s + i, len - i);

		if (!n)
			return false;
		i += (size_t)n;
	}
	return true;
}

size_t text__sanitize(char *s, size_t len)
{
	size_t i = 0, replaced = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		int n;

		if (c >= 0x20 && c < 0x7f) {	/* printable ASCII: most of it */
			i++;
			continue;
		}
		n = text__char_len(s + i, len - i);
		if (n) {
			i += (size_t)n;
			continue;
		}
		/* One byte at a time: the next may start a good character. */
		s[i++] = '?';
		replaced++;
	}
	return replaced;
}

size_t text__sanitize_str(char *s)
{
	return text__sanitize(s, strlen(s));
}
