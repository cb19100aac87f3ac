// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Prints the offsets src/interp/python/pyversions.c tabulates, as the C compiler lays out
 * CPython's own structures: test_pyversions compiles this at test time
 * against an installed interpreter's headers (its include directory and
 * internal/, with -DPy_BUILD_CORE) and compares each line with the table.
 * Not part of the profiler's build: make only builds tests/unit/test_*.c.
 *
 * One "name value" line a field, named as in struct py_layout and struct
 * py_offsets; 65535 (PY_NO_OFF) where the version has no such field.
 */
#include <Python.h>
#include <stddef.h>
#include <stdio.h>

#if PY_VERSION_HEX < 0x03080000 || PY_VERSION_HEX >= 0x030e0000
#error "pyoffsets_probe knows CPython 3.8 to 3.13"
#endif

#if PY_VERSION_HEX < 0x03090000
#include <code.h>
#include <frameobject.h>
#include <internal/pycore_pystate.h>
#elif PY_VERSION_HEX < 0x030b0000
#include <frameobject.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#else
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#endif

#define NO_OFF 65535

static void put(const char *name, size_t value)
{
	printf("%s %zu\n", name, value);
}

int main(void)
{
	put("version", (PY_MAJOR_VERSION << 8) | PY_MINOR_VERSION);

	/* _PyRuntime: the GIL holder, until 3.12 made it a thread local. */
#if PY_VERSION_HEX < 0x030c0000
	put("rt_tstate_current", offsetof(_PyRuntimeState, gilstate.tstate_current));
#else
	put("rt_tstate_current", NO_OFF);
#endif
	put("rt_interp_head", offsetof(_PyRuntimeState, interpreters.head));

	/* From 3.12 the GIL is the interpreter's. */
#if PY_VERSION_HEX < 0x030c0000
	put("interp_gil", NO_OFF);
	put("gil_holder", 0xff);
	put("gil_locked", 0xff);
#else
	put("interp_gil", offsetof(PyInterpreterState, ceval.gil));
	put("gil_holder", offsetof(struct _gil_runtime_state, last_holder));
	put("gil_locked", offsetof(struct _gil_runtime_state, locked));
#endif

#if PY_VERSION_HEX < 0x030b0000
	put("interp_threads_head", offsetof(PyInterpreterState, tstate_head));
#else
	put("interp_threads_head", offsetof(PyInterpreterState, threads.head));
#endif
	put("ts_next", offsetof(PyThreadState, next));
	put("ts_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX < 0x030b0000
	put("ts_native_id", NO_OFF);
#else
	put("ts_native_id", offsetof(PyThreadState, native_thread_id));
#endif

	/* The thread's innermost frame, and the frame's fields. */
#if PY_VERSION_HEX < 0x030b0000
	put("ts_frame", offsetof(PyThreadState, frame));
	put("cframe_current_frame", NO_OFF);
	put("fr_code", offsetof(PyFrameObject, f_code));
	put("fr_previous", offsetof(PyFrameObject, f_back));
	put("fr_instr", offsetof(PyFrameObject, f_lasti));
	put("fr_entry", NO_OFF);
	put("fr_owner", NO_OFF);
	put("owner_cstack", 0xff);
#elif PY_VERSION_HEX < 0x030d0000
	put("ts_frame", offsetof(PyThreadState, cframe));
	put("cframe_current_frame", offsetof(_PyCFrame, current_frame));
	put("fr_code", offsetof(_PyInterpreterFrame, f_code));
	put("fr_previous", offsetof(_PyInterpreterFrame, previous));
	put("fr_instr", offsetof(_PyInterpreterFrame, prev_instr));
#if PY_VERSION_HEX < 0x030c0000
	put("fr_entry", offsetof(_PyInterpreterFrame, is_entry));
	put("owner_cstack", 0xff);
#else
	put("fr_entry", NO_OFF);
	put("owner_cstack", FRAME_OWNED_BY_CSTACK);
#endif
	put("fr_owner", offsetof(_PyInterpreterFrame, owner));
#else
	put("ts_frame", offsetof(PyThreadState, current_frame));
	put("cframe_current_frame", NO_OFF);
	put("fr_code", offsetof(_PyInterpreterFrame, f_executable));
	put("fr_previous", offsetof(_PyInterpreterFrame, previous));
	put("fr_instr", offsetof(_PyInterpreterFrame, instr_ptr));
	put("fr_entry", NO_OFF);
	put("fr_owner", offsetof(_PyInterpreterFrame, owner));
	put("owner_cstack", FRAME_OWNED_BY_CSTACK);
#endif

	/* The code object. */
	put("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	put("co_filename", offsetof(PyCodeObject, co_filename));
	put("co_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX < 0x030a0000
	put("co_qualname", NO_OFF);
	put("co_lines", offsetof(PyCodeObject, co_lnotab));
	put("co_code", NO_OFF);
#elif PY_VERSION_HEX < 0x030b0000
	put("co_qualname", NO_OFF);
	put("co_lines", offsetof(PyCodeObject, co_linetable));
	put("co_code", NO_OFF);
#else
	put("co_qualname", offsetof(PyCodeObject, co_qualname));
	put("co_lines", offsetof(PyCodeObject, co_linetable));
	put("co_code", offsetof(PyCodeObject, co_code_adaptive));
#endif

	/* Objects: the header, bytes, str. */
	put("ob_type", offsetof(PyObject, ob_type));
	put("bytes_size", offsetof(PyVarObject, ob_size));
	put("bytes_data", offsetof(PyBytesObject, ob_sval));
	put("str_length", offsetof(PyASCIIObject, length));
	put("str_state", offsetof(PyASCIIObject, state));
	put("str_ascii_data", sizeof(PyASCIIObject));
	put("str_compact_data", sizeof(PyCompactUnicodeObject));
	return 0;
}
