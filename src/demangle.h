/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Demangling of C++ (Itanium ABI: "_Z...") and Rust (legacy "_ZN...E" with
 * its "::h<16 hex>" hash dropped, and v0 "_R...") symbol names, through
 * libiberty's demangler (the one binutils and gdb use).
 */
#ifndef PROFILE_DEMANGLE_H
#define PROFILE_DEMANGLE_H

#include <stdbool.h>

/* Whether name looks mangled at all: cheap, no allocation. */
bool demangle__is_mangled(const char *name);

/*
 * The demangled form of name, malloc()ed, or NULL if name is not a mangled
 * name we can read (or is too long to be worth it).  Function parameters
 * are kept: "ns::f(int) const".
 */
char *demangle__name(const char *name);

#endif /* PROFILE_DEMANGLE_H */
