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

struct pycode {
	char *qualname;			/* co_qualname, or co_name before 3.11 */
	char *file;			/* co_filename */
	__u32 firstlineno;
	__u8 *lines;			/* the line table's bytes */
	size_t lines_len;
};

/*
 * Read the code object at addr.  Names are UTF-8, with any control
 * character or invalid sequence replaced; 0 or -errno, and then out holds
 * nothing to free.
 */
int pycode__read(const struct py_layout *l, const struct pytypes *types,
		 const struct pymem *mem, __u64 addr, struct pycode *out);

/* The line of the instruction at index instr (2-byte code units); 0 if none. */
__u32 pycode__line(const struct py_layout *l, const struct pycode *c, __u32 instr);

void pycode__free(struct pycode *c);

#endif /* PYCODE_H */
