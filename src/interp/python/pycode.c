// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Naming a CPython code object from another process's memory, and the
 * line of an instruction from its line table, indexed once.
 *
 * The process is not trusted: every object is checked against the
 * interpreter's type objects before its fields mean anything, no length it
 * states is read past our caps, and the line-table decoders take one step
 * per byte of a table they hold whole, so that a corrupt table ends in a
 * wrong line (or none), never in a read past it or a loop.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python/pycode.h"

/* Bytes of a code object's start read in one go: every field we use. */
#define CODE_HEAD_MAX 256
/* ... of a str or bytes object's header. */
#define OBJ_HEAD_MAX 128

/* A str's state bits (PyASCIIObject.state, the same in 3.8 to 3.13). */
#define STR_KIND(state)		(((state) >> 2) & 7)
#define STR_COMPACT(state)	(((state) >> 5) & 1)
#define STR_ASCII(state)	(((state) >> 6) & 1)

#define REPLACEMENT 0xfffd	/* U+FFFD, for what cannot be shown */

/* One read through mem: 0, or -errno (anything else is -EIO). */
static int mem__read(const struct pymem *mem, __u64 addr, void *buf, size_t len)
{
	int err;

	if (len == 0)
		return 0;
	if (addr + len < addr)
		return -EFAULT;
	err = mem->read(mem->ctx, addr, buf, len);
	if (err > 0)
		return -EIO;
	return err;
}

static __u64 load_u64(const __u8 *p, __u16 off)
{
	__u64 v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static __u32 load_u32(const __u8 *p, __u16 off)
{
	__u32 v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* The end of a field, or 0 when the layout does not have it. */
static size_t field_end(__u16 off, size_t width)
{
	return off == PY_NO_OFF ? 0 : off + width;
}

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

/*
 * Read an object's first len bytes (len at most OBJ_HEAD_MAX or
 * CODE_HEAD_MAX, the caller's buffer) and check its type.
 */
static int obj__read_head(const struct py_layout *l, const struct pymem *mem,
			  __u64 addr, __u64 type, __u8 *head, size_t len)
{
	int err;

	if (!type || len < field_end(l->ob_type, 8))
		return -EINVAL;
	err = mem__read(mem, addr, head, len);
	if (err)
		return err;
	if (load_u64(head, l->ob_type) != type)
		return -EINVAL;
	return 0;
}

/*
 * What a name may show of code point c: control characters (C0, DEL, C1),
 * surrogates (which no valid UTF-8 holds; CPython uses them for undecodable
 * file-name bytes) and values past Unicode become U+FFFD.
 */
static __u32 shown(__u32 c)
{
	if (c < 0x20 || (c >= 0x7f && c < 0xa0))
		return REPLACEMENT;
	if (c >= 0xd800 && c < 0xe000)
		return REPLACEMENT;
	if (c > 0x10ffff)
		return REPLACEMENT;
	return c;
}

/* UTF-8 of c (valid, from shown()) into p; its length. */
static size_t utf8_put(__u32 c, char *p)
{
	if (c < 0x80) {
		p[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		p[0] = (char)(0xc0 | c >> 6);
		p[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		p[0] = (char)(0xe0 | c >> 12);
		p[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		p[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	p[0] = (char)(0xf0 | c >> 18);
	p[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	p[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	p[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* Code point i of n-byte characters at data. */
static __u32 char_at(const __u8 *data, unsigned int kind, size_t i)
{
	__u16 c2;
	__u32 c4;

	switch (kind) {
	case 1:
		return data[i];
	case 2:
		memcpy(&c2, data + 2 * i, sizeof(c2));
		return c2;
	default:
		memcpy(&c4, data + 4 * i, sizeof(c4));
		return c4;
	}
}

/*
 * nr characters of kind bytes each as UTF-8, at most max - 1 bytes of it
 * (cut at a character) and a NUL: a new string, or NULL (ENOMEM).  An
 * ASCII str holds nothing above 0x7f: such a byte is shown as U+FFFD.
 */
static char *utf8_from(const __u8 *data, unsigned int kind, bool ascii,
		       size_t nr, size_t max)
{
	char *s = malloc(max), *t;
	char enc[4];
	size_t i, n, len = 0;

	if (!s)
		return NULL;
	for (i = 0; i < nr; i++) {
		__u32 c = char_at(data, kind, i);

		if (ascii && c > 0x7f)
			c = REPLACEMENT;
		n = utf8_put(shown(c), enc);
		if (len + n > max - 1)
			break;
		memcpy(s + len, enc, n);
		len += n;
	}
	s[len] = '\0';
	t = realloc(s, len + 1);
	return t ? t : s;
}

/*
 * The str at addr as UTF-8, at most max - 1 bytes.  Only compact strs are
 * read (their characters follow the header; a code object's names are
 * always compact): a legacy str, an unknown kind or a negative length is
 * -EINVAL.  The length is trusted only up to max characters, as many as
 * could be kept.
 */
static int str__read(const struct py_layout *l, const struct pytypes *types,
		     const struct pymem *mem, __u64 addr, size_t max, char **out)
{
	__u8 head[OBJ_HEAD_MAX], *data;
	size_t need, nr;
	__s64 length;
	__u32 state;
	unsigned int kind;
	__u64 at;
	bool ascii;
	int err;

	need = max_size(field_end(l->ob_type, 8), field_end(l->str_length, 8));
	need = max_size(need, field_end(l->str_state, 4));
	if (need > sizeof(head) || l->str_length == PY_NO_OFF ||
	    l->str_state == PY_NO_OFF)
		return -EINVAL;
	err = obj__read_head(l, mem, addr, types->str, head, need);
	if (err)
		return err;

	length = (__s64)load_u64(head, l->str_length);
	state = load_u32(head, l->str_state);
	kind = STR_KIND(state);
	ascii = STR_ASCII(state);
	if (length < 0 || !STR_COMPACT(state))
		return -EINVAL;
	if (ascii ? kind != 1 : (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	at = addr + (ascii ? l->str_ascii_data : l->str_compact_data);

	/* Each character is one byte of UTF-8 at least. */
	nr = (__u64)length < max - 1 ? (size_t)length : max - 1;
	data = malloc(nr * kind + 1);
	if (!data)
		return -ENOMEM;
	err = mem__read(mem, at, data, nr * kind);
	if (!err) {
		*out = utf8_from(data, kind, ascii, nr, max);
		if (!*out)
			err = -ENOMEM;
	}
	free(data);
	return err;
}

/*
 * The bytes object at addr: at most PYCODE_LINES_MAX of its bytes, in a
 * new buffer (NULL when empty).
 */
static int bytes__read(const struct py_layout *l, const struct pytypes *types,
		       const struct pymem *mem, __u64 addr, __u8 **out,
		       size_t *out_len)
{
	__u8 head[OBJ_HEAD_MAX], *data = NULL;
	size_t need, n;
	__s64 size;
	int err;

	need = max_size(field_end(l->ob_type, 8), field_end(l->bytes_size, 8));
	if (need > sizeof(head) || l->bytes_size == PY_NO_OFF ||
	    l->bytes_data == PY_NO_OFF)
		return -EINVAL;
	err = obj__read_head(l, mem, addr, types->bytes, head, need);
	if (err)
		return err;

	size = (__s64)load_u64(head, l->bytes_size);
	if (size < 0)
		return -EINVAL;
	n = (__u64)size < PYCODE_LINES_MAX ? (size_t)size : PYCODE_LINES_MAX;
	if (n) {
		data = malloc(n);
		if (!data)
			return -ENOMEM;
		err = mem__read(mem, addr + l->bytes_data, data, n);
		if (err) {
			free(data);
			return err;
		}
	}
	*out = data;
	*out_len = n;
	return 0;
}

/* Bytes of the code object's start that hold every field we read. */
static size_t code_head_len(const struct py_layout *l)
{
	size_t n = field_end(l->ob_type, 8);

	n = max_size(n, field_end(l->co_filename, 8));
	n = max_size(n, field_end(l->co_name, 8));
	n = max_size(n, field_end(l->co_qualname, 8));
	n = max_size(n, field_end(l->co_lines, 8));
	return max_size(n, field_end(l->co_firstlineno, 4));
}

int pycode__read(const struct py_layout *l, const struct pytypes *types,
		 const struct pymem *mem, __u64 addr, struct pycode *out)
{
	__u8 head[CODE_HEAD_MAX];
	struct pycode c = {};
	__u8 *tab = NULL;
	__u16 name_off;
	__s32 first;
	size_t need;
	int err;

	/* co_qualname from 3.11 on; co_name, the bare name, before. */
	name_off = l->co_qualname != PY_NO_OFF ? l->co_qualname : l->co_name;
	need = code_head_len(l);
	if (need > sizeof(head) || name_off == PY_NO_OFF ||
	    l->co_filename == PY_NO_OFF || l->co_lines == PY_NO_OFF ||
	    l->co_firstlineno == PY_NO_OFF)
		return -EINVAL;
	err = obj__read_head(l, mem, addr, types->code, head, need);
	if (err)
		return err;

	err = str__read(l, types, mem, load_u64(head, name_off),
			PYCODE_NAME_MAX, &c.qualname);
	if (err)
		goto fail;
	err = str__read(l, types, mem, load_u64(head, l->co_filename),
			PYCODE_FILE_MAX, &c.file);
	if (err)
		goto fail;
	err = bytes__read(l, types, mem, load_u64(head, l->co_lines),
			  &tab, &c.lines_len);
	if (err)
		goto fail;
	/* A negative first line is no line. */
	first = (__s32)load_u32(head, l->co_firstlineno);
	c.firstlineno = first > 0 ? (__u32)first : 0;
	err = pycode__index_lines(l, &c, tab, c.lines_len);
	free(tab);
	if (err)
		goto fail;
	*out = c;
	return 0;
fail:
	pycode__free(&c);
	return err;
}

size_t pycode__bytes(const struct pycode *c)
{
	return strlen(c->qualname) + 1 + strlen(c->file) + 1 +
	       c->nr_lines * sizeof(c->lines[0]);
}

void pycode__free(struct pycode *c)
{
	free(c->qualname);
	free(c->file);
	free(c->lines);
	memset(c, 0, sizeof(*c));
}

/* A computed line as returned: 0 when it is none or not a line. */
static __u32 line_or_none(__s64 line)
{
	return line > 0 && line <= INT32_MAX ? (__u32)line : 0;
}

/* The index as it is built: ranges are given in order, each where the last ended. */
struct index {
	struct pyline *v;
	size_t nr, cap;
	__u64 end;
};

/* [start, end) is on line: a new range, or the last one made longer. */
static void index__add(struct index *x, __u64 start, __u64 end, __u32 line)
{
	if (end <= start)
		return;
	x->end = end;
	if (x->nr && x->v[x->nr - 1].line == line)
		return;
	if (x->nr == x->cap)
		return;		/* cannot be: cap is a bound on the ranges */
	x->v[x->nr++] = (struct pyline){ .start = (__u32)start, .line = line };
}

/*
 * co_lnotab (3.8, 3.9): pairs of (bytecode bytes advanced, signed line
 * change); the line at an offset is the first line plus the changes of
 * every pair whose start is not past it.  Past the end: the last line, as
 * PyCode_Addr2Line says.  Starts stay below 2^32: at most 128 Ki pairs of
 * 255 bytes.
 */
static void lnotab__index(struct index *x, const __u8 *tab, size_t len, __u32 first)
{
	__u64 start = 0, addr = 0;
	__s64 line = first;

	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > start) {
			index__add(x, start, addr, line_or_none(line));
			start = addr;
		}
		line += (__s8)tab[i + 1];
	}
	index__add(x, start, UINT64_MAX, line_or_none(line));
}

/*
 * 3.10's co_linetable: pairs of (bytecode bytes the range covers, signed
 * line change), a change of -128 saying the range has no line (and the
 * line does not change).  Past the end: no line.
 */
static void linetable310__index(struct index *x, const __u8 *tab, size_t len, __u32 first)
{
	__s64 line = first;
	__u64 start, end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		__s8 delta = (__s8)tab[i + 1];
		bool none = delta == -128;

		if (!none)
			line += delta;
		start = end;
		end += tab[i];
		index__add(x, start, end, none ? 0 : line_or_none(line));
	}
}

/* Location-table entry codes (3.11+, Objects/locations.md). */
enum {
	LOC_ONE_LINE0 = 10,	/* 10 to 12: the line moves by code - 10 */
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13,	/* a signed varint line change */
	LOC_LONG = 14,		/* the same, then end line and columns */
	LOC_NONE = 15,		/* no location */
};

/*
 * An unsigned varint at tab[*i]: 6 bits a byte, least significant first,
 * bit 6 set on all but the last.  It ends at the table's end or at a byte
 * with bit 7 set (the next entry) in a corrupt table, and keeps at most 36
 * bits (no line change is bigger).
 */
static __u64 varint(const __u8 *tab, size_t len, size_t *i)
{
	__u64 v = 0;
	unsigned int shift = 0;
	__u8 b;

	while (*i < len) {
		b = tab[*i];
		if (b & 0x80)
			break;
		(*i)++;
		if (shift < 36)
			v |= (__u64)(b & 0x3f) << shift;
		shift += 6;
		if (!(b & 0x40))
			break;
	}
	return v;
}

/* The signed form: the low bit is the sign, the rest the magnitude. */
static __s64 svarint(const __u8 *tab, size_t len, size_t *i)
{
	__u64 v = varint(tab, len, i);

	return v & 1 ? -(__s64)(v >> 1) : (__s64)(v >> 1);
}

/*
 * The location table (3.11+): one entry per range of 1 to 8 code units.
 * An entry's first byte has bit 7 set, the code in bits 3-6 and the
 * length - 1 in bits 0-2; what follows it, up to the next byte with bit 7
 * set, is the code's data.  The line starts at co_firstlineno and moves
 * by each entry's change; a LOC_NONE range has no line.  Past the end:
 * no line.
 */
static void locations__index(struct index *x, const __u8 *tab, size_t len, __u32 first)
{
	__s64 line = first;
	__u64 start, end = 0;
	size_t i = 0;

	while (i < len) {
		__u8 b = tab[i++];
		unsigned int code = (b >> 3) & 15;

		/* Not an entry's start: corrupt, skip to the next one. */
		if (!(b & 0x80))
			continue;
		if (code == LOC_NO_COLUMNS || code == LOC_LONG)
			line += svarint(tab, len, &i);
		else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2)
			line += code - LOC_ONE_LINE0;
		start = end;
		end += (b & 7) + 1;
		index__add(x, start, end, code == LOC_NONE ? 0 : line_or_none(line));
		/* The rest of the entry: columns, which no line needs. */
		while (i < len && !(tab[i] & 0x80))
			i++;
	}
}

int pycode__index_lines(const struct py_layout *l, struct pycode *c,
			const __u8 *tab, size_t len)
{
	/* A range per byte of a location table at most, one more for co_lnotab. */
	struct index x = {};
	struct pyline *v;

	if (len > PYCODE_LINES_MAX)
		len = PYCODE_LINES_MAX;
	x.cap = len + 1;
	x.v = malloc(x.cap * sizeof(*x.v));
	if (!x.v)
		return -ENOMEM;
	switch (l->lines_kind) {
	case PY_LINES_LNOTAB:
		lnotab__index(&x, tab, len, c->firstlineno);
		break;
	case PY_LINES_310:
		linetable310__index(&x, tab, len, c->firstlineno);
		break;
	case PY_LINES_LOCATIONS:
		locations__index(&x, tab, len, c->firstlineno);
		break;
	}
	if (!x.nr) {
		free(x.v);
		x.v = NULL;
	} else if ((v = realloc(x.v, x.nr * sizeof(*x.v)))) {
		x.v = v;
	}
	c->lines = x.v;
	c->nr_lines = x.nr;
	c->lines_end = x.end;
	return 0;
}

__u32 pycode__line(const struct py_layout *l, const struct pycode *c, __u32 instr)
{
	size_t lo = 0, hi = c->nr_lines;
	__u64 at;

	switch (l->lines_kind) {
	case PY_LINES_LNOTAB:
	case PY_LINES_310:
		at = (__u64)instr * 2;
		break;
	case PY_LINES_LOCATIONS:
		at = instr;
		break;
	default:
		return 0;
	}
	if (!hi || at >= c->lines_end || at < c->lines[0].start)
		return 0;
	/* The last range starting at or before at. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->lines[mid].start <= at)
			lo = mid;
		else
			hi = mid;
	}
	return c->lines[lo].line;
}
