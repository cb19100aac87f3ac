/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Untrusted text made safe to print.  Every name we print (symbol names
 * from anyone's ELF files, JIT names from perf maps, comms, mapping paths)
 * is chosen by some unprivileged user, and root reads it on a terminal or
 * feeds it to tools that split lines.  Safe text is well-formed UTF-8 of
 * printable characters only: no C0 or C1 control (so no newline, tab or
 * escape), no DEL, no surrogate, overlong or out-of-range sequence, no
 * noncharacter (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF), no line or paragraph
 * separator and no bidirectional override, embedding or isolate (which
 * reorder what a terminal shows).  Such text is valid in XML 1.0 and in
 * proto3 strings as is.
 */
#ifndef PROFILE_TEXT_H
#define PROFILE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Length (1 to 4) of the printable, well-formed UTF-8 character at s, of
 * the len bytes there; 0 if s does not start one (or len is 0).
 */
int text__char_len(const char *s, size_t len);

/* Whether s[0..len) is safe text. */
bool text__is_safe(const char *s, size_t len);

/*
 * Make s[0..len) safe in place, byte for byte: every byte that is not part
 * of a printable, well-formed character becomes '?', so that lengths and
 * offsets stay valid.  Returns how many bytes were replaced.
 */
size_t text__sanitize(char *s, size_t len);

/* text__sanitize() of a NUL-terminated string. */
size_t text__sanitize_str(char *s);

#endif /* PROFILE_TEXT_H */
