/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Naming a CPython code object from another process's memory: its
 * qualified name, file and first line, and the line of an instruction.
 * The process may be hostile: every read is bounded, every object's type
 * is checked against the interpreter's own type objects, and whatever does
 * not check out is an error, never a name.
 */
#ifndef PYCODE_H
#define PYCODE_H

#include <stddef.h>
#include <linux/types.h>
#include "interp/python/pyversions.h"

/* Reads len bytes at addr of the process: 0, or -errno (short read: -EFAULT). */
struct pymem {
	int (*read)(void *ctx, __u64 addr, void *buf, size_t len);
	void *ctx;
};

/* The addresses of the interpreter's type objects, to check objects by. */
struct pytypes {
	__u64 code;			/* &PyCode_Type */
	__u64 str;			/* &PyUnicode_Type */
	__u64 bytes;			/* &PyBytes_Type */
};

#define PYCODE_NAME_MAX 1024		/* bytes of UTF-8 kept of a name */
#define PYCODE_FILE_MAX 4096		/* ... of a file name */
#define PYCODE_LINES_MAX (256 * 1024)	/* bytes of a line table read */

/*
 * One range of a code object's line index: the instructions from start to
 * the next range's start (the last: to lines_end) are on line (0: none).
 * start is in the table's own unit: bytes of bytecode for co_lnotab and
 * 3.10's co_linetable, 2-byte code units for the location table.
 */
struct pyline {
	__u32 start;
	__u32 line;
};

/*
 * The line table is parsed once, when the object is read, into ranges
 * sorted by start (the first at 0, adjacent ones on different lines):
 * a line is then a binary search, not a walk of up to PYCODE_LINES_MAX
 * bytes for every instruction asked about.
 */
struct pycode {
	char *qualname;			/* co_qualname, or co_name before 3.11 */
	char *file;			/* co_filename */
	__u32 firstlineno;
	size_t lines_len;		/* bytes of the line table read */
	struct pyline *lines;		/* its index; NULL when it has no range */
	size_t nr_lines;
	__u64 lines_end;		/* where the last range ends */
};

/*
 * Read the code object at addr.  Names are UTF-8, with any control
 * character or invalid sequence replaced; 0 or -errno, and then out holds
 * nothing to free.
 */
int pycode__read(const struct py_layout *l, const struct pytypes *types,
		 const struct pymem *mem, __u64 addr, struct pycode *out);

/*
 * Index c's line table tab[0..len) of l's kind (at most PYCODE_LINES_MAX
 * bytes are looked at), from c->firstlineno; c->lines must be empty.
 * 0 or -ENOMEM.  A table of an unknown kind indexes to no range.
 */
int pycode__index_lines(const struct py_layout *l, struct pycode *c,
			const __u8 *tab, size_t len);

/* The line of the instruction at index instr (2-byte code units); 0 if none. */
__u32 pycode__line(const struct py_layout *l, const struct pycode *c, __u32 instr);

/* Bytes c holds: its strings and its line index. */
size_t pycode__bytes(const struct pycode *c);

void pycode__free(struct pycode *c);

#endif /* PYCODE_H */
