// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Option parsing and validation, without root. */
#include <stdlib.h>
#include "unit.h"
#include "opts.h"

static int parse(struct options *o, const char *line)
{
	static char buf[512];
	char *argv[32];
	int argc = 0, err;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "profile";
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	/* Keep stderr quiet: usage errors are expected here. */
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");
	err = options_parse(o, argc, argv);
	fclose(stderr);
	stderr = saved;
	return err;
}

TEST(defaults)
{
	struct options o;

	CHECK_INT(parse(&o, ""), 0);
	CHECK_INT(o.freq, 49);
	CHECK_INT(o.period, 0);
	CHECK_INT(o.stack_storage, 16384);
	CHECK_INT(o.hash_storage, 40960);
	CHECK_INT(o.max_stack_depth, 127);
	CHECK_INT(o.cpu, -1);
	CHECK_INT(o.duration, 0);
	options_free(&o);
}

TEST(bcc_options)
{
	struct options o;

	CHECK_INT(parse(&o, "-p 12,34 -U -F 99 -d -a -I -f -C 1 -v -v 30"), 0);
	CHECK_INT(o.nr_pids, 2);
	CHECK_INT(o.pids[0], 12);
	CHECK_INT(o.pids[1], 34);
	CHECK_STR(o.pids_arg, "12,34");
	CHECK(o.user_only && o.delimited && o.annotations && o.include_idle && o.folded);
	CHECK_INT(o.freq, 99);
	CHECK_INT(o.cpu, 1);
	CHECK_INT(o.verbose, 2);
	CHECK_INT(o.duration, 30);
	options_free(&o);

	CHECK_INT(parse(&o, "--tid 7 --kernel-stacks-only --count 1000000 --delimited "
			"--annotations --include-idle --folded --cpu 0 "
			"--stack-storage-size 4 --hash-storage-size 8 "
			"--perf-max-stack-depth 20 --cgroup /x 5"), 0);
	CHECK_INT(o.nr_tids, 1);
	CHECK(o.kernel_only);
	CHECK_INT(o.period, 1000000);
	CHECK_INT(o.freq, 0);
	CHECK_INT(o.stack_storage, 4);
	CHECK_INT(o.hash_storage, 8);
	CHECK_INT(o.max_stack_depth, 20);
	CHECK_STR(o.cgroup, "/x");
	options_free(&o);
}

TEST(usage_errors)
{
	static const char *bad[] = {
		"-p 1 -L 2", "-U -K", "-F 0", "-F -5", "-F 99999999999", "-F 1x",
		"-F +9", "-p 12x", "-p 1,,2", "-p ,1", "-p 1,", "-p 1,1", "-p 0",
		"-c 0", "-C x", "--stack-storage-size 0", "--hash-storage-size -1",
		"--perf-max-stack-depth 128", "--perf-max-stack-depth 0",
		"--bogus", "1 2", "0", "-F 99 -c 100", "-p", "x",
		"--cpu", "99999999999999999999",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct options o;
		int err = parse(&o, bad[i]);

		if (!err)
			fprintf(stderr, "  accepted: %s\n", bad[i]);
		CHECK(err != 0);
		options_free(&o);
	}
}

TEST(number_parser)
{
	__u64 v;

	CHECK_INT(parse_u64("42", 0, 100, &v), 0);
	CHECK_INT(v, 42);
	CHECK(parse_u64("", 0, 100, &v) != 0);
	CHECK(parse_u64(" 4", 0, 100, &v) != 0);
	CHECK(parse_u64("4 ", 0, 100, &v) != 0);
	CHECK(parse_u64("101", 0, 100, &v) != 0);
	CHECK(parse_u64("18446744073709551616", 0, ~0ULL, &v) != 0);
}

TEST(cpu_list)
{
	bool *on;
	int nr;

	CHECK_INT(parse_cpu_list("0-2,5\n", &on, &nr), 0);
	CHECK_INT(nr, 6);
	CHECK(on[0] && on[1] && on[2] && !on[3] && !on[4] && on[5]);
	free(on);
	CHECK(parse_cpu_list("3-1", &on, &nr) != 0);
	CHECK(parse_cpu_list("", &on, &nr) != 0);
	CHECK(parse_cpu_list("a", &on, &nr) != 0);
}

TEST(system_checks)
{
	bool online[2] = { true, false };
	struct limits lim = { .max_sample_rate = 1000, .max_stack = 64,
			      .cpu_online = online, .nr_cpus = 2 };
	struct options o;

	CHECK_INT(parse(&o, "-F 1000"), 0);
	CHECK_INT(options_check(&o, &lim), 0);
	options_free(&o);
	CHECK_INT(parse(&o, "-F 1001"), 0);
	CHECK(options_check(&o, &lim) != 0);
	options_free(&o);
	CHECK_INT(parse(&o, "--perf-max-stack-depth 65"), 0);
	CHECK(options_check(&o, &lim) != 0);
	options_free(&o);
	CHECK_INT(parse(&o, "-C 1"), 0);
	CHECK(options_check(&o, &lim) != 0);
	options_free(&o);
	CHECK_INT(parse(&o, "-C 2"), 0);
	CHECK(options_check(&o, &lim) != 0);
	options_free(&o);
	CHECK_INT(parse(&o, "-C 0"), 0);
	CHECK_INT(options_check(&o, &lim), 0);
	options_free(&o);
	CHECK_INT(parse(&o, "--cgroup /proc/self/status"), 0);
	CHECK(options_check(&o, &lim) != 0);
	options_free(&o);
	CHECK_INT(parse(&o, "--cgroup /nonexistent"), 0);
	CHECK(options_check(&o, &lim) != 0);
	options_free(&o);
	CHECK_INT(parse(&o, "-p 2147483646"), 0);
	CHECK(options_check(&o, &lim) != 0);
	options_free(&o);
}

int main(void)
{
	RUN(defaults);
	RUN(bcc_options);
	RUN(usage_errors);
	RUN(number_parser);
	RUN(cpu_list);
	RUN(system_checks);
	return unit_summary();
}
