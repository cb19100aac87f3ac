/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Source lines and inlined functions of one ELF file, from its DWARF
 * (.debug_info and .debug_line), read with elfutils' libdw.
 *
 * Made lazily: dwlines__probe() only looks at the section headers when a
 * file is opened for its symbols; dwlines__open() hands the file to libdw
 * when a sampled address first asks for its line, and libdw reads the
 * units that sampled addresses fall in, no others.  A dwlines owns its file
 * descriptor (read with pread through libelf, never mmap()ed, so a file
 * truncated under us cannot SIGBUS).
 *
 * The file may be crafted by another user: dwlines__open() refuses a file
 * whose debug sections would take more than DWLINES_MAX_DEBUG_BYTES once
 * read (compressed sections by the size they claim), and what is kept
 * beyond libdw's own parse (names, made safe to print) is capped at
 * DWLINES_MAX_STR_BYTES per file; a name past the cap is left out.
 */
#ifndef DWLINES_H
#define DWLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Functions at one address, inlined ones included, that a lookup returns. */
#define DWLINES_MAX_DEPTH	32
#define DWLINES_MAX_DEBUG_BYTES	(512ull << 20)
#define DWLINES_MAX_STR_BYTES	(8u << 20)

struct dwlines;

/*
 * One function at an address: the innermost (where the address is) first,
 * then the functions it was inlined into, each at the line of the call;
 * the last is the function the code belongs to.  Strings live as long as
 * the dwlines; NULL when not known.  name is as in the file (a linkage
 * name, mangled, when the DWARF has one).
 */
struct dwline {
	const char *name;
	const char *file;
	__u32 line;
	bool demangled;		/* name demangled (by usyms__lines(), not here) */
};

/*
 * Whether the ELF file behind fd has DWARF lines to read (.debug_info and
 * .debug_line with contents).  Reads the section headers only.
 */
bool dwlines__probe(int fd);

/*
 * Take fd (closed by dwlines__free(), or here on failure) and open its
 * DWARF.  NULL + errno: ENOENT no DWARF, EFBIG over the caps, ENOTSUP
 * a form not read (.zdebug sections).
 */
struct dwlines *dwlines__open(int fd);
void dwlines__free(struct dwlines *dw);

/*
 * The functions at vaddr (an ELF virtual address, as in the file's symbol
 * table), innermost first, into out (room for max).  Returns how many, 0
 * when the DWARF does not cover vaddr.
 */
int dwlines__find(struct dwlines *dw, __u64 vaddr, struct dwline *out, int max);

/* Bytes kept beyond libdw's parse (names), and whether the cap was hit. */
size_t dwlines__bytes(const struct dwlines *dw);
bool dwlines__capped(const struct dwlines *dw);

#endif /* DWLINES_H */
