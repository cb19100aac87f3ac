// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols/demangle.h"
#include "lib/text.h"

/*
 * Longer names are left alone: the demangler's work grows with the name,
 * and names this long come from crafted files or template explosions.
 */
#define MANGLED_MAX	4096

bool demangle__is_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *demangle__name(const char *name)
{
	char *dm;

	if (!demangle__is_mangled(name) || strnlen(name, MANGLED_MAX) >= MANGLED_MAX)
		return NULL;
	/*
	 * DMGL_AUTO tries Rust (legacy and v0) first, then C++.  The style
	 * is passed, not taken from libiberty's global default.  Without
	 * DMGL_VERBOSE, Rust legacy hashes are dropped.
	 */
	dm = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	/* Rust v0 identifiers decode from Punycode to any code point. */
	if (dm)
		text__sanitize_str(dm);
	return dm;
}

/* ---- short names ---- */

/* Deeper nesting than this is left alone: no real name needs it. */
#define NEST_MAX	64

struct shortener {
	const char *s;		/* the demangled name */
	size_t n;		/* its length */
	size_t i;		/* the next byte to read */
	char *out;		/* the short name so far */
	size_t size, len;
	size_t base;		/* out holds a kept prefix ("virtual thunk to ") */
	bool start;		/* at the start of a component of the name */
	bool type_text;		/* '*' or '&' since the last space: a return type */
	bool failed;		/* in doubt, or out of room: keep the name */
};

static bool is_ident(char c)
{
	/* Bytes of UTF-8 sequences too: Rust v0 identifiers may be Unicode. */
	return isalnum((unsigned char)c) || c == '_' || c == '$' ||
	       (unsigned char)c >= 0x80;
}

static bool at(const struct shortener *sh, size_t i, const char *lit)
{
	size_t len = strlen(lit);

	return i <= sh->n && sh->n - i >= len && !memcmp(sh->s + i, lit, len);
}

/* lit at i as a whole word: not followed by an identifier character. */
static bool at_word(const struct shortener *sh, size_t i, const char *lit)
{
	size_t end = i + strlen(lit);

	return at(sh, i, lit) && (end == sh->n || !is_ident(sh->s[end]));
}

static void emit(struct shortener *sh, const char *p, size_t len)
{
	if (sh->failed)
		return;
	if (len >= sh->size - sh->len) {
		sh->failed = true;
		return;
	}
	memcpy(sh->out + sh->len, p, len);
	sh->len += len;
}

/* Copy len bytes of the name as they are. */
static void copy(struct shortener *sh, size_t len)
{
	emit(sh, sh->s + sh->i, len);
	sh->i += len;
}

static char closer_of(char c)
{
	switch (c) {
	case '(': return ')';
	case '[': return ']';
	case '{': return '}';
	case '<': return '>';
	}
	return 0;
}

/*
 * One past the closer of the group that opens at s[i], or 0: unbalanced,
 * cut short, or nested too deep.  Angle brackets count only between angle
 * brackets ("std::function<void (int)>", "Foo<(1)>(2))>" as libiberty
 * parenthesizes expressions), and Rust's "->" closes nothing.
 */
static size_t group_end(const struct shortener *sh, size_t i)
{
	char stack[NEST_MAX];
	int depth = 0;

	for (; i < sh->n; i++) {
		char c = sh->s[i], top = depth ? stack[depth - 1] : 0;

		if (c == '(' || c == '[' || c == '{' || (c == '<' && (!depth || top == '<'))) {
			if (depth == NEST_MAX)
				return 0;
			stack[depth++] = c;
		} else if (c == ')' || c == ']' || c == '}' ||
			   (c == '>' && top == '<' && sh->s[i - 1] != '-')) {
			if (!depth || closer_of(top) != c)
				return 0;
			if (!--depth)
				return i + 1;
		}
	}
	return 0;
}

/* Skip the group at i; nothing of it is kept. */
static void skip_group(struct shortener *sh)
{
	size_t end = group_end(sh, sh->i);

	if (!end)
		sh->failed = true;
	else
		sh->i = end;
}

/* Operators, longest first where one is the start of another. */
static const char *const operator_tokens[] = {
	"->*", "<=>", "<<=", ">>=", "()", "[]", "->", "<<", ">>", "<=", ">=",
	"==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=",
	"|=", "^=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!",
	"=", ",",
};

static const char *const operator_words[] = {
	"new[]", "delete[]", "new", "delete", "co_await",
};

/* A conversion operator's type: "operator std::string" up to "(". */
static void conversion_type(struct shortener *sh)
{
	while (!sh->failed && sh->i < sh->n && sh->s[sh->i] != '(') {
		char c = sh->s[sh->i];

		if (c == '<')
			skip_group(sh);
		else if (is_ident(c) || c == ':' || c == ' ' || c == '*' || c == '&')
			copy(sh, 1);
		else
			sh->failed = true;
	}
}

/* "operator" and what it is: "operator<<", "operator new[]", "operator bool". */
static void operator_name(struct shortener *sh)
{
	copy(sh, strlen("operator"));
	for (size_t k = 0; k < sizeof(operator_tokens) / sizeof(*operator_tokens); k++) {
		if (at(sh, sh->i, operator_tokens[k])) {
			copy(sh, strlen(operator_tokens[k]));
			/* "operator< <int>": libiberty keeps "<" from "<<". */
			if (at(sh, sh->i, " <"))
				sh->i++;
			return;
		}
	}
	if (at(sh, sh->i, "\"\"")) {
		/* A literal operator: operator"" _km */
		copy(sh, 2);
		if (at(sh, sh->i, " "))
			copy(sh, 1);
		while (sh->i < sh->n && is_ident(sh->s[sh->i]))
			copy(sh, 1);
		return;
	}
	if (!at(sh, sh->i, " ")) {
		sh->failed = true;
		return;
	}
	for (size_t k = 0; k < sizeof(operator_words) / sizeof(*operator_words); k++) {
		if (at_word(sh, sh->i + 1, operator_words[k])) {
			copy(sh, 1 + strlen(operator_words[k]));
			return;
		}
	}
	copy(sh, 1);
	conversion_type(sh);
}

static const char *const qualifiers[] = {
	" const", " volatile", " restrict", " &&", " &", " noexcept",
	" transaction_safe",
};

/*
 * A parameter list, dropped with the qualifiers and clone suffixes after
 * it.  Then the name ends, or goes on with a local entity:
 * "f(int)::{lambda(int)#1}::operator()(int) const".
 */
static void params(struct shortener *sh)
{
	bool more = true;

	skip_group(sh);
	while (!sh->failed && more) {
		more = false;
		for (size_t k = 0; k < sizeof(qualifiers) / sizeof(*qualifiers); k++) {
			const char *q = qualifiers[k];

			if ((q[1] == '&' && at(sh, sh->i, q)) || at_word(sh, sh->i, q)) {
				sh->i += strlen(q);
				more = true;
				break;
			}
		}
	}
	while (!sh->failed && at(sh, sh->i, " [clone ")) {
		sh->i++;
		skip_group(sh);
	}
	if (sh->failed || sh->i == sh->n)
		return;
	if (at(sh, sh->i, "::") && !at(sh, sh->i, "::<")) {
		copy(sh, 2);
		sh->start = true;
		return;
	}
	/* A function pointer's return type ("void (*f(int))(int)"), or worse. */
	sh->failed = true;
}

/*
 * "{lambda(int)#1}" as "{lambda()#1}", Rust's "{closure#0}" as it is:
 * parameters and template arguments inside go.
 */
static void brace_group(struct shortener *sh)
{
	size_t end = group_end(sh, sh->i);

	if (!end) {
		sh->failed = true;
		return;
	}
	copy(sh, 1);
	while (!sh->failed && sh->i < end - 1) {
		char c = sh->s[sh->i];
		size_t inner;

		if (c != '(' && c != '<' && c != '{' && c != '[') {
			copy(sh, 1);
			continue;
		}
		inner = group_end(sh, sh->i);
		if (!inner || inner > end - 1) {
			sh->failed = true;
			return;
		}
		if (c == '(')
			emit(sh, "()", 2);
		else if (c != '<')
			emit(sh, sh->s + sh->i, inner - sh->i);
		sh->i = inner;
	}
	copy(sh, 1);
}

/*
 * Rust's qualified path, "<alloc::vec::Vec<u8> as core::ops::drop::Drop>",
 * kept but for generic arguments: "<alloc::vec::Vec as ...>".
 */
static void qualified_path(struct shortener *sh, int depth)
{
	if (depth == NEST_MAX) {
		sh->failed = true;
		return;
	}
	copy(sh, 1);
	while (!sh->failed && sh->i < sh->n) {
		char c = sh->s[sh->i];

		if (c == '>' && sh->s[sh->i - 1] != '-') {
			copy(sh, 1);
			return;
		}
		if (c == '<' && is_ident(sh->s[sh->i - 1]))
			skip_group(sh);
		else if (c == '<')
			qualified_path(sh, depth + 1);
		else
			copy(sh, 1);
	}
	sh->failed = true;
}

/* One step of the name at the top level. */
static void name_step(struct shortener *sh)
{
	char c = sh->s[sh->i];

	if (sh->start && at_word(sh, sh->i, "operator")) {
		sh->start = false;
		operator_name(sh);
		return;
	}
	sh->start = false;
	if (is_ident(c) || c == '~' || c == '.') {
		copy(sh, 1);
	} else if (at(sh, sh->i, "::<impl ")) {
		/* Rust's impl block: "core::array::<impl [T; N]>::map" */
		copy(sh, 2);
		qualified_path(sh, 0);
	} else if (at(sh, sh->i, "::<")) {
		/* Rust's turbofish: "drop_in_place::<T>" */
		sh->i += 2;
		skip_group(sh);
	} else if (at(sh, sh->i, "::")) {
		copy(sh, 2);
		sh->start = true;
	} else if (c == '<' && sh->len == sh->base) {
		qualified_path(sh, 0);
	} else if (c == '<') {
		skip_group(sh);
	} else if (at(sh, sh->i, "(anonymous namespace)")) {
		copy(sh, strlen("(anonymous namespace)"));
	} else if (c == '(') {
		params(sh);
	} else if (c == '{') {
		brace_group(sh);
	} else if (at(sh, sh->i, "[abi:")) {
		skip_group(sh);
	} else if (c == ' ') {
		/* What came before is a return type: "void ns::f<int>(int)". */
		sh->len = sh->base;
		sh->type_text = false;
		sh->start = true;
		sh->i++;
	} else if (c == '*' || c == '&') {
		sh->type_text = true;
		copy(sh, 1);
	} else {
		sh->failed = true;
	}
}

/* Special names that are code: kept, with the name they are for shortened. */
static const char *const code_prefixes[] = {
	"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
	"TLS init function for ", "TLS wrapper function for ",
	"transaction clone for ",
};

size_t demangle__shorten(const char *name, char *buf, size_t size)
{
	struct shortener sh = {
		.s = name, .n = strlen(name), .out = buf, .size = size, .start = true,
	};

	if (!size)
		return 0;
	for (size_t k = 0; k < sizeof(code_prefixes) / sizeof(*code_prefixes); k++) {
		if (at(&sh, 0, code_prefixes[k])) {
			copy(&sh, strlen(code_prefixes[k]));
			sh.base = sh.len;
			break;
		}
	}
	while (!sh.failed && sh.i < sh.n)
		name_step(&sh);
	if (sh.failed || sh.type_text || sh.len == sh.base || sh.len == sh.n ||
	    sh.out[sh.len - 1] == ':') {
		buf[0] = '\0';
		return 0;
	}
	buf[sh.len] = '\0';
	return sh.len;
}
