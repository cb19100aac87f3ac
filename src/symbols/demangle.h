/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Demangling of C++ (Itanium ABI: "_Z...") and Rust (legacy "_ZN...E" with
 * its "::h<16 hex>" hash dropped, and v0 "_R...") symbol names, through
 * libiberty's demangler (the one binutils and gdb use).
 */
#ifndef PROFILE_DEMANGLE_H
#define PROFILE_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether name looks mangled at all: cheap, no allocation. */
bool demangle__is_mangled(const char *name);

/*
 * The demangled form of name, malloc()ed, or NULL if name is not a mangled
 * name we can read (or is too long to be worth it).  Function parameters
 * are kept: "ns::f(int) const".
 */
char *demangle__name(const char *name);

/*
 * A demangled C++ or Rust name made short, the way Go's pprof shows them
 * by default: namespaces, classes and the function's name are kept;
 * parameter lists, template and generic arguments, the return type,
 * const/volatile/&/&& qualifiers, ABI tags and clone suffixes go.
 *   "std::vector<int, std::allocator<int> >::push_back(int const&)"
 *       -> "std::vector::push_back"
 *   "main::{lambda(int)#1}::operator()(int) const"
 *       -> "main::{lambda()#1}::operator()"
 *   "<alloc::vec::Vec<u8> as core::ops::drop::Drop>::drop"
 *       -> "<alloc::vec::Vec as core::ops::drop::Drop>::drop"
 * Writes the short name and its NUL into buf (size bytes; strlen(name) + 1
 * is always enough) and returns its length; or returns 0: keep name as it
 * is, because nothing would go, or it is not of that shape (a C name, a
 * perf map's "LazyCompile:*f x.js:3"), or is unbalanced or cut short, or
 * buf is too small, and buf holds "".  Reads no further than name's NUL.
 */
size_t demangle__shorten(const char *name, char *buf, size_t size);

#endif /* PROFILE_DEMANGLE_H */
