/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython's layouts, version by version: the offsets the frame walker
 * follows (struct py_offsets, bpf/interp/python/pyframe.h) and those user space needs to
 * name a code object.  Written from CPython's own headers for 3.8 to 3.13;
 * 3.13 and later also describe themselves in _PyRuntime (_Py_DebugOffsets),
 * which is preferred to the table when present.
 */
#ifndef PYVERSIONS_H
#define PYVERSIONS_H

#include <stddef.h>
#include <linux/types.h>
#include "bpf/interp/python/pyframe.h"

/* How a code object maps instructions to lines. */
enum py_lines {
	PY_LINES_LNOTAB = 1,	/* co_lnotab (3.8, 3.9) */
	PY_LINES_310,		/* co_linetable, 3.10's format */
	PY_LINES_LOCATIONS,	/* co_linetable, the location table (3.11+) */
};

struct py_layout {
	__u32 version;			/* major << 8 | minor */
	struct py_offsets bpf;		/* for the walker */
	/* Naming a code object. */
	__u16 ob_type;			/* PyObject.ob_type */
	__u16 co_filename;		/* PyCodeObject fields, PY_NO_OFF if absent */
	__u16 co_name;
	__u16 co_qualname;		/* 3.11+ */
	__u16 co_firstlineno;
	__u16 co_lines;			/* co_lnotab or co_linetable: bytes */
	__u8 lines_kind;		/* enum py_lines */
	/* A bytes object: its size and where its data starts. */
	__u16 bytes_size;		/* PyVarObject.ob_size */
	__u16 bytes_data;		/* PyBytesObject.ob_sval */
	/*
	 * A str: length in code points, the state bit field (kind in bits
	 * 2-4, compact in bit 5, ascii in bit 6, on every version here),
	 * and where a compact str's characters start: after PyASCIIObject
	 * when ascii, else after PyCompactUnicodeObject.
	 */
	__u16 str_length;
	__u16 str_state;
	__u16 str_ascii_data;
	__u16 str_compact_data;
};

/* The layout of CPython major.minor from the table; -ENOENT if unknown. */
int pyversions__lookup(unsigned int major, unsigned int minor, struct py_layout *out);

/*
 * The layout from the _Py_DebugOffsets at the start of _PyRuntime (3.13+),
 * len bytes of it read from the process; -EINVAL when buf does not start
 * with the cookie or describes a version it cannot be trusted for
 * (its numbers are checked against what the walker can read).
 */
int pyversions__from_debug_offsets(const void *buf, size_t len, struct py_layout *out);

/* Bytes of _PyRuntime to read for pyversions__from_debug_offsets(). */
#define PY_DEBUG_OFFSETS_MAX 1024

#endif /* PYVERSIONS_H */
