/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Bounds on what a file that any local user controls may cost us.  The
 * profiler runs as root and parses every executable mapping on the host,
 * perf maps in /tmp and debug files; each of those is someone's input.
 * A cap stops the work or the copy at its bound, the object is used as
 * far as it went (names past the cap are [unknown]), and the hit is
 * counted here: the run prints one warning per kind of cap, naming the
 * first object that hit it, and -v prints the counts.
 */
#ifndef CAPS_H
#define CAPS_H

#include <stddef.h>
#include <linux/types.h>
#include "lib/report_pass.h"

enum cap_kind {
	/*
	 * One ELF section read into memory (a symbol or string table, notes,
	 * .gnu_debuglink, .gnu_debugdata).  The largest in Debian's own
	 * binaries and debug files are a few MiB; a 1 GiB sparse section
	 * would otherwise cost 1 GiB.
	 */
	CAP_SECTION,
	/*
	 * Symbol-name bytes kept for one file, and the length of one name.
	 * Names are shared by their offset in the string table, so 250
	 * symbols naming one string cost it once; the cap bounds tables whose
	 * names overlap as suffixes.  The longest C++ names seen in practice
	 * are a few KiB; a symbol with a longer name than CAP_NAME_LEN is left
	 * out, so that finding its end costs little.
	 */
	CAP_NAMES,
	/* All a parsed file keeps: its table, names and a debug file's. */
	CAP_OBJECT,
	/* A perf map's size, or its entries after duplicates are dropped. */
	CAP_PERFMAP,
	/* Bytes of a debug file read to check its .gnu_debuglink CRC. */
	CAP_CRC,
	NR_CAPS,
};

#define CAP_SECTION_BYTES	(32u << 20)
#define CAP_NAMES_BYTES		(32u << 20)
#define CAP_NAME_LEN		(64u << 10)
#define CAP_SCAN_BYTES		(64u << 20)	/* name bytes scanned per table */
#define CAP_OBJECT_BYTES	(96u << 20)
#define CAP_PERFMAP_BYTES	(64u << 20)
#define CAP_PERFMAP_ENTRIES	(1u << 20)
#define CAP_CRC_BYTES		(1u << 30)

/* A bit per cap kind, for parsers to say which ones they hit. */
#define CAP_BIT(kind)		(1u << (kind))

/* Longest object name kept for the warning. */
#define CAP_OBJECT_MAX		160

struct caps {
	__u64 hits[NR_CAPS];	/* objects that hit each cap */
	char first[NR_CAPS][CAP_OBJECT_MAX];	/* "" until one does */
};

/*
 * Count object (name_len bytes, not NUL-terminated) under every cap in
 * mask, and keep its name, made printable, if it is the first.
 */
void caps__hit(struct caps *c, unsigned int mask, const char *name,
	       size_t name_len);

/* What a cap bounds and its size, into buf: "ELF section size (32 MiB)". */
void caps__describe(enum cap_kind kind, char *buf, size_t len);

/* The run's last words on the caps (lib/report_pass.h). */
void caps__report(const struct caps *c, enum report_pass pass);

#endif /* CAPS_H */
