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
 * The file may be crafted by another user.  dwlines__open() refuses a
 * file with a .gnu_debugaltlink or .debug_sup section (dwz): libdw would
 * open whatever path it names (a FIFO, a device) and mmap() it; so is
 * one with skeleton units (split DWARF: the .dwo path they name).  Each
 * file is charged what libdw reads at open: its debug sections' sizes
 * once read (compressed ones by the size they claim), .debug_line x100
 * (libdw's line table is that much bigger than one-byte opcodes).  A file
 * charged over DWLINES_MAX_DEBUG_BYTES (512 MiB) if root owns it, or over
 * DWLINES_MAX_USER_BYTES (64 MiB) if another user does, is refused; and
 * the files open at once share a budget (DWLINES_BUDGET_BYTES, 1 GiB
 * charged): to open one past it, the least recently used ones are
 * closed (their libdw state, reopened when asked again; what they
 * returned stays valid).  What is kept beyond libdw's own parse (names,
 * made safe to print) is capped at DWLINES_MAX_STR_BYTES per file; a
 * name past the cap is left out.
 */
#ifndef DWLINES_H
#define DWLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Functions at one address, inlined ones included, that a lookup returns. */
#define DWLINES_MAX_DEPTH	32
#define DWLINES_MAX_DEBUG_BYTES	(512ull << 20)	/* charged, root's files */
#define DWLINES_MAX_USER_BYTES	(64ull << 20)	/* charged, other users' files */
#define DWLINES_LINE_FACTOR	100		/* .debug_line's charge per byte */
#define DWLINES_BUDGET_BYTES	(1ull << 30)	/* charged, every file open */
#define DWLINES_MAX_STR_BYTES	(8u << 20)

struct dwlines;

/*
 * The files whose libdw state is open, and what they are charged: one
 * budget for the dwlines opened with it, outliving them.  Not thread-safe.
 */
struct dwlines_budget {
	__u64 max;		/* charged bytes open at once */
	__u64 charged;		/* ... now */
	struct dwlines *mru;	/* open ones, most recently used first */
	__u64 opened;		/* libdw opens, reopens included */
	__u64 closed;		/* ... closed to make room for another */
	__u64 refused;		/* ... refused: the file alone is past max */
};

/* An empty budget of max charged bytes (DWLINES_BUDGET_BYTES). */
void dwlines_budget__init(struct dwlines_budget *b, __u64 max);

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
 * DWARF, charged to b.  NULL + errno: ENOENT no DWARF, EFBIG over the
 * caps, ENOTSUP a form not read (.zdebug sections, .gnu_debugaltlink,
 * .debug_sup, skeleton units of split DWARF: libdw would open the .dwo
 * they name).  b outlives the dwlines.
 */
struct dwlines *dwlines__open(int fd, struct dwlines_budget *b);
void dwlines__free(struct dwlines *dw);

/*
 * The functions at vaddr (an ELF virtual address, as in the file's symbol
 * table), innermost first, into out (room for max).  Returns how many, 0
 * when the DWARF does not cover vaddr (or a closed file cannot be
 * reopened now).
 */
int dwlines__find(struct dwlines *dw, __u64 vaddr, struct dwline *out, int max);

/* Bytes kept beyond libdw's parse (names), and whether the cap was hit. */
size_t dwlines__bytes(const struct dwlines *dw);
bool dwlines__capped(const struct dwlines *dw);

#endif /* DWLINES_H */
