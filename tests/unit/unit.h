/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A tiny unit-test harness.  Each test binary defines tests with TEST(name),
 * lists them in main() with RUN(name), and ends with `return unit_summary();`.
 * Output is TAP: one "ok"/"not ok" line per test, then the plan "1..N",
 * which tests/run counts and checks.
 */
#ifndef UNIT_H
#define UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int unit_failed_checks;
static int unit_passed, unit_failed;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "  %s:%d: check failed: %s\n",       \
				__FILE__, __LINE__, #cond);                  \
			unit_failed_checks++;                                \
		}                                                            \
	} while (0)

#define CHECK_STR(a, b)                                                      \
	do {                                                                 \
		const char *_a = (a), *_b = (b);                             \
		if (!_a || !_b || strcmp(_a, _b)) {                          \
			fprintf(stderr, "  %s:%d: \"%s\" != \"%s\"\n",       \
				__FILE__, __LINE__, _a ? _a : "(null)",      \
				_b ? _b : "(null)");                         \
			unit_failed_checks++;                                \
		}                                                            \
	} while (0)

#define CHECK_INT(a, b)                                                      \
	do {                                                                 \
		long long _a = (long long)(a), _b = (long long)(b);          \
		if (_a != _b) {                                              \
			fprintf(stderr, "  %s:%d: %s == %lld, expected %lld\n", \
				__FILE__, __LINE__, #a, _a, _b);             \
			unit_failed_checks++;                                \
		}                                                            \
	} while (0)

#define TEST(name) static void test_##name(void)

#define RUN(name)                                                            \
	do {                                                                 \
		int _before = unit_failed_checks;                            \
		test_##name();                                               \
		if (unit_failed_checks == _before) {                         \
			unit_passed++;                                       \
			printf("ok - %s\n", #name);                          \
		} else {                                                     \
			unit_failed++;                                       \
			printf("not ok - %s\n", #name);                      \
		}                                                            \
		fflush(stdout);                                              \
	} while (0)

/* The plan, last: tests/run checks it against the lines above. */
static inline int unit_summary(void)
{
	printf("1..%d\n", unit_passed + unit_failed);
	return unit_failed ? 1 : 0;
}

#endif /* UNIT_H */
