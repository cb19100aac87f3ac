// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Untrusted text made safe: each class of bad byte, and what must stay. */
#include <stdlib.h>
#include "unit.h"
#include "lib/text.h"

/* s (len bytes, may hold NULs) sanitized, compared with want. */
static int check_sanitized(const char *s, size_t len, const char *want,
			   size_t want_replaced)
{
	char buf[64];
	size_t replaced;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	replaced = text__sanitize(buf, len);
	if (replaced != want_replaced || strlen(want) != len ||
	    memcmp(buf, want, len)) {
		fprintf(stderr, "  sanitized to \"%.*s\", %zu replaced; expected \"%s\", %zu\n",
			(int)len, buf, replaced, want, want_replaced);
		return 0;
	}
	/* What comes out is safe, and sanitizing it again changes nothing. */
	return text__is_safe(buf, len) && text__sanitize(buf, len) == 0;
}

#define SAN(lit, want, nr) CHECK(check_sanitized(lit, sizeof(lit) - 1, want, nr))

TEST(ascii_kept)
{
	SAN("", "", 0);
	SAN("main", "main", 0);
	SAN("ns::f(int, char const*) const", "ns::f(int, char const*) const", 0);
	SAN(" !~;<>&\"'", " !~;<>&\"'", 0);
	CHECK(text__is_safe("abc", 3));
	CHECK(text__is_safe("", 0));
}

TEST(c0_controls)
{
	SAN("a\nb", "a?b", 1);
	SAN("a\tb\rc", "a?b?c", 2);
	SAN("\x1b]0;owned\x07\x1b[2J", "?]0;owned??[2J", 3);
	SAN("\x01\x1f", "??", 2);
	SAN("a\0b", "a?b", 1);	/* a NUL inside the length, too */
	CHECK(!text__is_safe("a\nb", 3));
}

TEST(del_and_c1)
{
	SAN("a\x7f" "b", "a?b", 1);
	SAN("\xc2\x80", "??", 2);	/* U+0080 */
	SAN("\xc2\x9b" "2J", "??2J", 2);	/* U+009B, CSI */
	SAN("\xc2\x9f", "??", 2);	/* U+009F */
	SAN("\xc2\xa0", "\xc2\xa0", 0);	/* U+00A0, the first after C1 */
	/* C1 controls as raw bytes are lone continuation bytes. */
	SAN("\x9b" "2J\x85", "?2J?", 2);
}

TEST(multibyte_kept)
{
	SAN("caf\xc3\xa9", "caf\xc3\xa9", 0);			/* U+00E9 */
	SAN("\xe2\x82\xac 1", "\xe2\x82\xac 1", 0);		/* U+20AC */
	SAN("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac", 0);
	SAN("\xf0\x9f\x94\xa5", "\xf0\x9f\x94\xa5", 0);	/* U+1F525 */
	SAN("\xc3\xa9\n\xc3\xa9", "\xc3\xa9?\xc3\xa9", 1);
	CHECK_INT(text__char_len("\xc3\xa9", 2), 2);
	CHECK_INT(text__char_len("\xe2\x82\xac", 3), 3);
	CHECK_INT(text__char_len("\xf0\x9f\x94\xa5", 4), 4);
	CHECK_INT(text__char_len("a", 1), 1);
	CHECK_INT(text__char_len("a", 0), 0);
}

TEST(boundary_code_points)
{
	SAN("\xed\x9f\xbf", "\xed\x9f\xbf", 0);		/* U+D7FF */
	SAN("\xed\xa0\x80", "???", 3);			/* U+D800, surrogate */
	SAN("\xed\xbf\xbf", "???", 3);			/* U+DFFF, surrogate */
	SAN("\xee\x80\x80", "\xee\x80\x80", 0);		/* U+E000 */
	SAN("\xef\xb7\x8f", "\xef\xb7\x8f", 0);		/* U+FDCF */
	SAN("\xef\xb7\x90", "???", 3);			/* U+FDD0, nonchar */
	SAN("\xef\xb7\xaf", "???", 3);			/* U+FDEF, nonchar */
	SAN("\xef\xb7\xb0", "\xef\xb7\xb0", 0);		/* U+FDF0 */
	SAN("\xef\xbf\xbd", "\xef\xbf\xbd", 0);		/* U+FFFD */
	SAN("\xef\xbf\xbe", "???", 3);			/* U+FFFE */
	SAN("\xef\xbf\xbf", "???", 3);			/* U+FFFF */
	SAN("\xf0\x90\x80\x80", "\xf0\x90\x80\x80", 0);	/* U+10000 */
	SAN("\xf0\x9f\xbf\xbf", "????", 4);		/* U+1FFFF */
	SAN("\xf4\x8f\xbf\xbd", "\xf4\x8f\xbf\xbd", 0);	/* U+10FFFD */
	SAN("\xf4\x8f\xbf\xbf", "????", 4);		/* U+10FFFF, nonchar */
	SAN("\xf4\x90\x80\x80", "????", 4);		/* U+110000 */
	SAN("\xf7\xbf\xbf\xbf", "????", 4);		/* U+1FFFFF */
}

TEST(format_controls)
{
	SAN("a\xe2\x80\xae" "b", "a???b", 3);		/* U+202E, RLO */
	SAN("\xe2\x80\xa8", "???", 3);			/* U+2028 */
	SAN("\xe2\x80\xa9", "???", 3);			/* U+2029 */
	SAN("\xe2\x81\xa6\xe2\x81\xa9", "??????", 6);	/* U+2066, U+2069 */
	SAN("\xe2\x80\xa7", "\xe2\x80\xa7", 0);		/* U+2027 */
	SAN("\xe2\x80\xaf", "\xe2\x80\xaf", 0);		/* U+202F */
}

TEST(overlong)
{
	SAN("\xc0\x8a", "??", 2);		/* '\n' in two bytes */
	SAN("\xc1\xbf", "??", 2);
	SAN("\xe0\x80\xaf", "???", 3);		/* '/' in three */
	SAN("\xe0\x9f\xbf", "???", 3);		/* U+07FF in three */
	SAN("\xe0\xa0\x80", "\xe0\xa0\x80", 0);	/* U+0800, the shortest */
	SAN("\xf0\x80\x80\x80", "????", 4);
	SAN("\xf0\x8f\xbf\xbf", "????", 4);	/* U+FFFF in four */
}

TEST(malformed)
{
	SAN("\x80", "?", 1);				/* lone continuation */
	SAN("a\xbf" "b", "a?b", 1);
	SAN("\xc3" "a", "?a", 1);			/* lead, no continuation */
	SAN("\xe2\x82" "a", "??a", 2);
	SAN("\xe2\x82\xc3\xa9", "??\xc3\xa9", 2);	/* a good char after */
	SAN("\xf8\x88\x80\x80\x80", "?????", 5);	/* five-byte form */
	SAN("\xfe\xff", "??", 2);
}

TEST(truncated_at_end)
{
	SAN("ab\xc3", "ab?", 1);
	SAN("ab\xe2\x82", "ab??", 2);
	SAN("ab\xf0\x9f\x94", "ab???", 3);
	/* The length bounds the look: a good char cut by len is bad. */
	CHECK_INT(text__char_len("\xc3\xa9", 1), 0);
	CHECK_INT(text__char_len("\xf0\x9f\x94\xa5", 3), 0);
	CHECK(!text__is_safe("\xc3\xa9", 1));
	CHECK(text__is_safe("\xc3\xa9", 2));
}

TEST(forged_symbol)
{
	char s[] = "evil 999999\nfakeroot;injected_frame;z";

	CHECK_INT(text__sanitize_str(s), 1);
	CHECK_STR(s, "evil 999999?fakeroot;injected_frame;z");
}

/* Every two-byte input: the result is safe, and good input is untouched. */
TEST(all_byte_pairs)
{
	for (int a = 0; a < 256; a++) {
		for (int b = 0; b < 256; b++) {
			char in[2] = { (char)a, (char)b }, out[2];

			memcpy(out, in, 2);
			text__sanitize(out, 2);
			if (!text__is_safe(out, 2)) {
				CHECK(!"unsafe output");
				return;
			}
			if (text__is_safe(in, 2) && memcmp(in, out, 2)) {
				CHECK(!"safe input changed");
				return;
			}
		}
	}
}

/* Plain encoder, surrogates included, for the test below. */
static int encode(unsigned int cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The rule of text.h spelled out once more, code point by code point. */
static int want_ok(unsigned int cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return 0;
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
		return 0;
	if (cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return cp <= 0x10ffff;
}

TEST(every_code_point)
{
	unsigned int bad = 0;

	for (unsigned int cp = 0; cp <= 0x13ffff; cp++) {
		char buf[4];
		int n = encode(cp, buf);
		int got = text__char_len(buf, (size_t)n);

		if (got != (want_ok(cp) ? n : 0) && bad++ < 5)
			fprintf(stderr, "  U+%04X: length %d\n", cp, got);
	}
	CHECK_INT(bad, 0);
}

int main(void)
{
	RUN(ascii_kept);
	RUN(c0_controls);
	RUN(del_and_c1);
	RUN(multibyte_kept);
	RUN(boundary_code_points);
	RUN(format_controls);
	RUN(overlong);
	RUN(malformed);
	RUN(truncated_at_end);
	RUN(forged_symbol);
	RUN(all_byte_pairs);
	RUN(every_code_point);
	return unit_summary();
}
