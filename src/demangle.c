// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "demangle.h"
#include "text.h"

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
