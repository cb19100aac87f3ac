// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The stall watch's judgement of one CPU: windows of at least 100 due
 * samples, short only beyond the noise of two samplings of one busy time,
 * and what a short window lacked counted as missed.
 */
#include <math.h>
#include "unit.h"
#include "run/stall.h"

/* A whole second at 999 Hz that gave 99% of its due: nothing missed. */
TEST(healthy_second)
{
	struct stall_cpu c = {};

	CHECK(!stall__judge(&c, 999, 989, 1.0));
	CHECK_INT(c.short_checks, 0);
	CHECK(c.missed == 0);
	CHECK_INT(c.samples, 989);
	CHECK(fabs(c.busy_s - 1.0) < 1e-9);
}

/*
 * At 49 Hz a second promises 49: the window grows until 100 are due
 * (three seconds) and is judged then, once, on its sum.
 */
TEST(low_rate_window)
{
	struct stall_cpu c = {};

	CHECK(!stall__judge(&c, 49, 30, 1.0));	/* alone, 30 of 49 would be "short" */
	CHECK(!stall__judge(&c, 49, 60, 1.0));	/* 98 due: not judged yet */
	CHECK_INT(c.win_samples, 90);
	CHECK(!stall__judge(&c, 49, 52, 1.0));	/* 142 of 147: fine */
	CHECK_INT(c.short_checks, 0);
	CHECK(c.missed == 0);
	CHECK_INT(c.win_samples, 0);		/* a new window */
}

/*
 * 70 of 100 due at 100 Hz: under 80%, but within four deviations of the
 * two samplings' noise (sqrt(100 * (1 + 100 / 100)) = 14.1: down to 43).
 */
TEST(noise_is_not_loss)
{
	struct stall_cpu c = {};

	CHECK(!stall__judge(&c, 100, 70, 1.0));
	CHECK_INT(c.short_checks, 0);
	CHECK(c.missed == 0);
}

/*
 * Throttled to a quarter (the sysctl at 250 under -F 999): short, not
 * stopped.  At 999 Hz /proc/stat's ticks are the larger noise: a
 * deviation of sqrt(999 * 11) = 105, so only under 580 of 999 is short.
 */
TEST(throttled)
{
	struct stall_cpu c = {};

	CHECK(!stall__judge(&c, 999, 600, 1.0));	/* 60%: within the noise */
	CHECK_INT(c.short_checks, 0);
	c = (struct stall_cpu){};

	CHECK(!stall__judge(&c, 999, 250, 1.0));
	CHECK_INT(c.short_checks, 1);
	CHECK(fabs(c.missed - 749) < 1e-6);
	CHECK(!stall__judge(&c, 999, 250, 1.0));
	CHECK_INT(c.short_checks, 2);
	CHECK(fabs(c.missed - 1498) < 1e-6);
}

/* Almost nothing from a busy CPU: stopped, the caller restarts it. */
TEST(stopped)
{
	struct stall_cpu c = {};

	CHECK(stall__judge(&c, 999, 10, 1.0));
	CHECK_INT(c.short_checks, 1);
	CHECK(fabs(c.missed - 989) < 1e-6);
}

/* An idle CPU (no busy time) is never judged, whatever it gave. */
TEST(idle)
{
	struct stall_cpu c = {};

	for (int i = 0; i < 100; i++)
		CHECK(!stall__judge(&c, 999, 0, 0.0));
	CHECK_INT(c.short_checks, 0);
	CHECK(c.missed == 0);
}

int main(void)
{
	RUN(healthy_second);
	RUN(low_rate_window);
	RUN(noise_is_not_loss);
	RUN(throttled);
	RUN(stopped);
	RUN(idle);
	return unit_summary();
}
