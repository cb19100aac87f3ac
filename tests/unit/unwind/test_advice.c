// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * unwind__advice(): the warning for an incomplete profile names
 * --unwind=dwarf when frame-pointer steps in objects --unwind=auto walked
 * by frame pointer are what stopped the walks, and only then.
 */
#include <string.h>
#include <linux/types.h>

#include "bpf/profile.h"
#include "bpf/unwind/uwtable.h"
#include "unwind/unwind.h"
#include "unit.h"

static __u64 c[NR_COUNTERS];

/* walks walks, roots of them whole, the others ended by why. */
static void walks(__u64 walks, __u64 roots, enum uw_end why)
{
	memset(c, 0, sizeof(c));
	c[CNT_UW_WALKS] = walks;
	c[CNT_UW_END + UW_END_ROOT] = roots;
	c[CNT_UW_END + why] += walks - roots;
}

static bool names_dwarf(const char *advice)
{
	return advice && strstr(advice, "--unwind=dwarf");
}

TEST(fp_steps_stopped_them)
{
	walks(1000, 100, UW_END_FP_BAD);
	CHECK(names_dwarf(unwind__advice(UNWIND_AUTO, 1, c)));
	walks(1000, 100, UW_END_BP_LOST);
	CHECK(names_dwarf(unwind__advice(UNWIND_AUTO, 2, c)));
}

TEST(nothing_to_add)
{
	/* No file walked by frame pointer: the tables were used everywhere. */
	walks(1000, 100, UW_END_FP_BAD);
	CHECK(!unwind__advice(UNWIND_AUTO, 0, c));
	/* Already --unwind=dwarf. */
	CHECK(!unwind__advice(UNWIND_DWARF, 1, c));
	/* Other reasons stopped them: no table, the depth limit. */
	walks(1000, 100, UW_END_NO_TABLE);
	CHECK(!unwind__advice(UNWIND_AUTO, 1, c));
	walks(1000, 100, UW_END_DEPTH);
	CHECK(!unwind__advice(UNWIND_AUTO, 1, c));
	/* Every walk whole. */
	walks(1000, 1000, UW_END_FP_BAD);
	CHECK(!unwind__advice(UNWIND_AUTO, 1, c));
}

TEST(ends_past_walks)
{
	/*
	 * More roots than walks (counters read while walks go on, or ends
	 * counted for walks that are not): the difference must not wrap into
	 * early ends that frame-pointer steps could then claim.
	 */
	walks(1000, 100, UW_END_FP_BAD);
	c[CNT_UW_END + UW_END_ROOT] = 1200;
	CHECK(!unwind__advice(UNWIND_AUTO, 1, c));
	c[CNT_UW_END + UW_END_ROOT] = 600;
	c[CNT_UW_END + UW_END_ROOT_FP] = 600;
	CHECK(!unwind__advice(UNWIND_AUTO, 1, c));
	/* Roots equal to the walks: none ended early. */
	c[CNT_UW_END + UW_END_ROOT_FP] = 400;
	CHECK(!unwind__advice(UNWIND_AUTO, 1, c));
}

int main(void)
{
	RUN(fp_steps_stopped_them);
	RUN(nothing_to_add);
	RUN(ends_past_walks);
	return unit_summary();
}
