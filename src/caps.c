// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "caps.h"

void caps__hit(struct caps *c, unsigned int mask, const char *name,
	       size_t name_len)
{
	for (int k = 0; k < NR_CAPS; k++) {
		char *first = c->first[k];
		size_t n = name_len < CAP_OBJECT_MAX - 1 ? name_len : CAP_OBJECT_MAX - 1;

		if (!(mask & CAP_BIT(k)))
			continue;
		if (!c->hits[k]++) {
			/* It goes to a terminal: nothing but printable ASCII. */
			for (size_t i = 0; i < n; i++)
				first[i] = name[i] > 0x20 && name[i] < 0x7f ? name[i] : '?';
			first[n] = '\0';
		}
	}
}

const char *caps__describe(enum cap_kind kind)
{
	switch (kind) {
	case CAP_SECTION:
		return "ELF section size (32 MiB)";
	case CAP_NAMES:
		return "symbol names per file (32 MiB, 64 KiB a name)";
	case CAP_OBJECT:
		return "memory per parsed file (96 MiB)";
	case CAP_PERFMAP:
		return "perf map size (64 MiB) or entries (1M)";
	case CAP_CRC:
		return "debug file CRC input (1 GiB)";
	default:
		return "?";
	}
}
