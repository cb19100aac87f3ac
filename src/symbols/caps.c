// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>

#include "symbols/caps.h"
#include "lib/log.h"

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

/* The cap's numbers come from caps.h, never written twice. */
void caps__describe(enum cap_kind kind, char *buf, size_t len)
{
	switch (kind) {
	case CAP_SECTION:
		snprintf(buf, len, "ELF section size (%u MiB)", CAP_SECTION_BYTES >> 20);
		break;
	case CAP_NAMES:
		snprintf(buf, len, "symbol names per file (%u MiB, %u KiB a name)",
			 CAP_NAMES_BYTES >> 20, CAP_NAME_LEN >> 10);
		break;
	case CAP_OBJECT:
		snprintf(buf, len, "memory per parsed file (%u MiB)", CAP_OBJECT_BYTES >> 20);
		break;
	case CAP_PERFMAP:
		snprintf(buf, len, "perf map size (%u MiB) or entries (%u)",
			 CAP_PERFMAP_BYTES >> 20, CAP_PERFMAP_ENTRIES);
		break;
	case CAP_CRC:
		snprintf(buf, len, "debug file CRC input (%u GiB)", CAP_CRC_BYTES >> 30);
		break;
	default:
		snprintf(buf, len, "?");
	}
}

/*
 * The warnings: one per kind of cap, naming the first object that hit it.
 * The -v line: how many hit each.
 */
void caps__report(const struct caps *c, enum report_pass pass)
{
	if (pass == REPORT_STATS) {
		pr_info("caps hit: section size %llu, symbol names %llu, memory per file %llu, perf map %llu, CRC input %llu",
			(unsigned long long)c->hits[CAP_SECTION], (unsigned long long)c->hits[CAP_NAMES],
			(unsigned long long)c->hits[CAP_OBJECT], (unsigned long long)c->hits[CAP_PERFMAP],
			(unsigned long long)c->hits[CAP_CRC]);
		return;
	}
	for (int k = 0; k < NR_CAPS; k++) {
		char what[96];

		if (!c->hits[k])
			continue;
		caps__describe(k, what, sizeof(what));
		pr_warn("'%s' hit the cap on %s; what lies past it is not named (%llu files in all; -v counts them)",
			c->first[k], what, (unsigned long long)c->hits[k]);
	}
}
