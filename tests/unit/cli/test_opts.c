// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Option parsing and validation, without root. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "cli/opts.h"

/* What the last parse() or check() printed on stderr. */
static char msg[512];
static FILE *saved_stderr;

/* Catch stderr: usage errors are expected here, and checked. */
static void catch_stderr(void)
{
	saved_stderr = stderr;
	stderr = tmpfile();
	if (!stderr)
		abort();
}

static void release_stderr(void)
{
	size_t n;

	rewind(stderr);
	n = fread(msg, 1, sizeof(msg) - 1, stderr);
	msg[n] = '\0';
	fclose(stderr);
	stderr = saved_stderr;
}

static int parse(struct options *o, const char *line)
{
	static char buf[512];
	static char *argv[32];	/* static: options.cmd points into it */
	int argc = 0, err;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "profile";
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	catch_stderr();
	err = options__parse(o, argc, argv);
	release_stderr();
	return err;
}

/* options__check() on the command line; its message, or "", in msg. */
static int check(const char *line, const struct limits *lim)
{
	struct options o;
	int err = parse(&o, line);

	if (!err) {
		catch_stderr();
		err = options__check(&o, lim);
		release_stderr();
	}
	options__free(&o);
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
	options__free(&o);
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
	options__free(&o);

	CHECK_INT(parse(&o, "--tid 7 --kernel-stacks-only --count 1000000 --delimited "
			"--annotations --include-idle --folded --cpu 0 "
			"--stack-storage-size 4 --hash-storage-size 8 "
			"--perf-max-stack-depth 20 --cgroup /x 5"), 0);
	CHECK_INT(o.nr_tids, 1);
	CHECK(o.kernel_only);
	CHECK_INT(o.period, 1000000);
	CHECK_INT(o.freq, 0);
	CHECK(!o.freq_set);
	CHECK_INT(o.stack_storage, 4);
	CHECK_INT(o.hash_storage, 8);
	CHECK_INT(o.max_stack_depth, 20);
	CHECK_STR(o.cgroup, "/x");
	options__free(&o);
}

/* A clock samples at bcc's 49 Hz; any other event at 999 Hz, unless told. */
TEST(event_rates)
{
	struct limits lim = { .max_sample_rate = 500, .max_stack = 127 };
	struct options o;

	CHECK_INT(parse(&o, "-e task-clock"), 0);
	CHECK_INT(o.freq, 49);
	options__free(&o);
	CHECK_INT(parse(&o, "-e page-faults"), 0);
	CHECK_INT(o.freq, 999);
	CHECK(!o.freq_set);
	/* A sysctl lowered by the kernel lowers the default, not -F. */
	CHECK_INT(options__check(&o, &lim), 0);
	CHECK_INT(o.freq, 500);
	options__free(&o);
	CHECK_INT(parse(&o, "-e page-faults -F 99"), 0);
	CHECK_INT(o.freq, 99);
	CHECK(o.freq_set);
	options__free(&o);
	CHECK_INT(parse(&o, "-e page-faults -c 1000"), 0);
	CHECK_INT(o.freq, 0);
	CHECK_INT(o.period, 1000);
	options__free(&o);
}

/*
 * -e CATEGORY:NAME: a name that is not one is refused before tracefs is
 * looked at; a tracepoint counts every hit unless -c says, and refuses -F.
 * The tracefs part only where this user can read it (root).
 */
TEST(tracepoints)
{
	static const char *const bad[] = { "a:b:c", ":x", "x:", "../sched:x", "sched:../x" };
	struct options o;
	char want[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct options t;
		char line[64];

		snprintf(line, sizeof(line), "-e %s", bad[i]);
		CHECK(parse(&t, line) < 0);
		options__free(&t);
		snprintf(want, sizeof(want),
			 "profile: -e '%s' is not a tracepoint's CATEGORY:NAME; see --list-events\n", bad[i]);
		CHECK_STR(msg, want);
	}
	if (access("/sys/kernel/tracing/events/sched/sched_switch/id", R_OK) &&
	    access("/sys/kernel/debug/tracing/events/sched/sched_switch/id", R_OK))
		return;
	CHECK_INT(parse(&o, "-e sched:sched_switch"), 0);
	CHECK_STR(o.event.name, "sched:sched_switch");
	CHECK_INT(o.freq, 0);
	CHECK_INT(o.period, 1);
	options__free(&o);
	CHECK_INT(parse(&o, "-e sched:sched_switch -c 10"), 0);
	CHECK_INT(o.period, 10);
	options__free(&o);
	CHECK(parse(&o, "-e sched:sched_switch -F 99") < 0);
	options__free(&o);
	CHECK_STR(msg, "profile: -F cannot be used with a tracepoint (-e sched:sched_switch): every hit is counted, or every Nth with -c N (see --help)\n");
	CHECK(parse(&o, "-e sched:no_such_tracepoint") < 0);
	options__free(&o);
	CHECK(strstr(msg, "no such tracepoint (no /sys/kernel/") != NULL);
	CHECK(strstr(msg, "/events/sched/no_such_tracepoint/id); see --list-events") != NULL);
}

/* profile [OPTIONS] [duration] -- CMD [ARGS...]: what follows -- is the command's. */
TEST(command)
{
	struct options o;

	CHECK_INT(parse(&o, "-F 99 -- ls -l --help /"), 0);
	CHECK(o.cmd != NULL);
	CHECK_STR(o.cmd[0], "ls");
	CHECK_STR(o.cmd[1], "-l");
	CHECK_STR(o.cmd[2], "--help");
	CHECK_STR(o.cmd[3], "/");
	CHECK(o.cmd[4] == NULL);
	CHECK(!o.help);
	CHECK_INT(o.freq, 99);
	CHECK_INT(o.duration, 0);
	options__free(&o);

	/* A duration before --, options after it: all profile's. */
	CHECK_INT(parse(&o, "5 -f -- 7 -f"), 0);
	CHECK_INT(o.duration, 5);
	CHECK(o.folded);
	CHECK_STR(o.cmd[0], "7");
	CHECK_STR(o.cmd[1], "-f");
	options__free(&o);

	/* A -- with nothing after it ends the options, as it always did. */
	CHECK_INT(parse(&o, "-f --"), 0);
	CHECK(o.cmd == NULL);
	options__free(&o);

	/* "--" as an option's value is not the end of the options. */
	CHECK_INT(parse(&o, "--title -- -- true"), 0);
	CHECK_STR(o.title, "--");
	CHECK_STR(o.cmd[0], "true");
	options__free(&o);
}

TEST(usage_errors)
{
	/* Each bad command line, and the one line it gets: what, and where to look. */
	static const struct { const char *line, *msg; } bad[] = {
#define RANGE(opt, v, hi) opt " '" v "' is out of range [1, " hi "]"
#define NOT_NUM(opt, v) opt " '" v "' is not a valid number"
#define NOT_IDS(v) "-p/--pid '" v "' is not a comma-separated list of distinct positive ids"
#define HINT(cmd) "; to profile a command, put it after --: profile [OPTIONS] -- " cmd " ..."
		{ "-p 1 -L 2", "conflicting options: -p and -L cannot be used together" },
		{ "-U -K", "conflicting options: -U and -K cannot be used together" },
		{ "-F -5", NOT_NUM("-F/--frequency", "-5") },
		{ "-F 99999999999999999999", NOT_NUM("-F/--frequency", "99999999999999999999") },
		{ "-F 1x", NOT_NUM("-F/--frequency", "1x") },
		{ "-F +9", NOT_NUM("-F/--frequency", "+9") },
		{ "-p 12x", NOT_IDS("12x") },
		{ "-p 1,,2", NOT_IDS("1,,2") },
		{ "-p ,1", NOT_IDS(",1") },
		{ "-p 1,", NOT_IDS("1,") },
		{ "-p 1,1", NOT_IDS("1,1") },
		{ "-p 0", NOT_IDS("0") },
		{ "-c 0", RANGE("-c/--count", "0", "9223372036854775807") },
		{ "-C x", NOT_NUM("-C/--cpu", "x") },
		{ "--stack-storage-size 0", RANGE("--stack-storage-size", "0", "16777216") },
		{ "--hash-storage-size -1", NOT_NUM("--hash-storage-size", "-1") },
		{ "--perf-max-stack-depth 128", RANGE("--perf-max-stack-depth", "128", "127") },
		{ "--perf-max-stack-depth 0", RANGE("--perf-max-stack-depth", "0", "127") },
		{ "--bogus", "unknown option '--bogus'" },
		{ "--frequncy 99", "unknown option '--frequncy'; did you mean '--frequency'?" },
		{ "--tops", "unknown option '--tops'; did you mean '--top'?" },
		{ "--unwnd=fp", "unknown option '--unwnd=fp'; did you mean '--unwind'?" },
		{ "--kalsyms", "unknown option '--kalsyms'; did you mean '--kallsyms'?" },
		{ "--per", "option '--per' is ambiguous: --perf-max-stack-depth, --per-cpu, --per-thread" },
		{ "--percpu", "unknown option '--percpu'; did you mean '--per-cpu'?" },
		{ "--xyzzy-plugh", "unknown option '--xyzzy-plugh'" },
		/* Echoed up to 64 bytes, whatever its length. */
		{ "--" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  "unknown option '--aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'" },
		{ "-j", "unknown option '-j'" },
		{ "1 2", "too many arguments: '2' after the duration" },
		{ "0", RANGE("duration", "0", "4294967296") },
		{ "-F 99 -c 100", "conflicting options: -F and -c cannot be used together" },
		{ "-p", "option '-p' needs a value" },
		{ "x", NOT_NUM("duration", "x") HINT("x") },
		{ "ls /", NOT_NUM("duration", "ls") HINT("ls") },
		{ "5 make -j8", "unknown option '-j'" HINT("make") },
		{ "5 make", "too many arguments: 'make' after the duration" HINT("make") },
		{ "-p 1 -- ls", "conflicting options: -p and a command after -- cannot be used together" },
		{ "-L 1 -- ls", "conflicting options: -L and a command after -- cannot be used together" },
		{ "--user nobody 5", "--user is who runs a command: profile --user USER -- COMMAND [ARGS...]" },
		{ "--use 5", "option '--use' is ambiguous: --user-stacks-only, --user" },
		{ "--cpu", "option '--cpu' needs a value" },
		{ "99999999999999999999", NOT_NUM("duration", "99999999999999999999") },
#undef RANGE
#undef NOT_NUM
#undef NOT_IDS
#undef HINT
	};
	char want[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct options o;
		int err = parse(&o, bad[i].line);

		if (!err)
			fprintf(stderr, "  accepted: %s\n", bad[i].line);
		CHECK_INT(err, -EINVAL);
		snprintf(want, sizeof(want), "profile: %s (see --help)\n", bad[i].msg);
		CHECK_STR(msg, want);
		options__free(&o);
	}
}

/* --off-cpu, --wall and the options of blocked time (issue 29). */
TEST(offcpu_options)
{
	static const struct { const char *line, *msg; } bad[] = {
		{ "--wall 5", "--wall shows one program's time: give -p PID, -L TID or -- COMMAND" },
		{ "--wall -p 1 -c 1000", "--wall weighs samples by time: give -F HZ, not -c" },
		{ "--wall -p 1 -e page-faults",
		  "--wall weighs samples by time: -e page-faults is not a clock; use -e cpu-clock or task-clock" },
		{ "--off-cpu -F 99", "--off-cpu samples no event: drop -F, -c and -e, or use --wall for both" },
		{ "--off-cpu --wall", "conflicting options: --off-cpu and --wall cannot be used together" },
		{ "-m 5", "-m/--min-block-time is for blocked time: add --off-cpu or --wall" },
		{ "--state S", "--state is for blocked time: add --off-cpu or --wall" },
		{ "--off-cpu --state X", "--state 'X' is not a list of R, S, D nor one of 0, 1, 2, 3" },
		{ "--off-cpu --state 4", "--state '4' is not a list of R, S, D nor one of 0, 1, 2, 3" },
		{ "--off-cpu --state ,", "--state ',' names no state: give R, S or D" },
		{ "--off-cpu -m 10 -M 5", "-m 10 is above -M 5: no block could count" },
		{ "--off-cpu -M 0", "-M/--max-block-time '0' is out of range [1, 18446744073709551]" },
	};
	char want[512];
	struct options o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(parse(&o, bad[i].line), -EINVAL);
		snprintf(want, sizeof(want), "profile: %s (see --help)\n", bad[i].msg);
		CHECK_STR(msg, want);
		options__free(&o);
	}
	CHECK_INT(parse(&o, "--off-cpu 5"), 0);
	CHECK_INT(o.kind, PROFILE_OFF_CPU);
	CHECK_INT(o.min_block_us, 1);
	CHECK_INT(o.state_mask, OFF_STATE_ALL);
	options__free(&o);
	CHECK_INT(parse(&o, "--off-cpu -m 100 --max-block-time 2000 --state S,D"), 0);
	CHECK_INT(o.min_block_us, 100);
	CHECK_INT(o.max_block_us, 2000);
	CHECK_INT(o.state_mask, OFF_STATE_S | OFF_STATE_D);
	options__free(&o);
	/* bcc's numbers: 0 is runnable only, else a mask of S (1) and D (2). */
	CHECK_INT(parse(&o, "--off-cpu --state 0"), 0);
	CHECK_INT(o.state_mask, OFF_STATE_R);
	options__free(&o);
	CHECK_INT(parse(&o, "--off-cpu --state 3"), 0);
	CHECK_INT(o.state_mask, OFF_STATE_S | OFF_STATE_D);
	options__free(&o);
	CHECK_INT(parse(&o, "--wall -F 99 -p 1"), 0);
	CHECK_INT(o.kind, PROFILE_WALL);
	options__free(&o);
}

/* --unknown: bcc's [unknown] by default, the module's label with "module". */
TEST(unknown_style)
{
	struct options o;

	CHECK_INT(parse(&o, "-f"), 0);
	CHECK(!o.unknown_module);
	options__free(&o);
	CHECK_INT(parse(&o, "-f --unknown=module"), 0);
	CHECK(o.unknown_module);
	options__free(&o);
	CHECK_INT(parse(&o, "--unknown module --unknown bcc"), 0);
	CHECK(!o.unknown_module);
	options__free(&o);
	CHECK_INT(parse(&o, "--unknown=kernel"), -EINVAL);
	CHECK_STR(msg, "profile: --unknown 'kernel' is not one of bcc, module (see --help)\n");
	options__free(&o);
	CHECK_INT(parse(&o, "--unknown"), -EINVAL);
	CHECK_STR(msg, "profile: option '--unknown' needs a value (see --help)\n");
	options__free(&o);
}

TEST(number_parser)
{
	__u64 v;

	CHECK_INT(options__parse_u64("42", 0, 100, &v), 0);
	CHECK_INT(v, 42);
	CHECK(options__parse_u64("", 0, 100, &v) != 0);
	CHECK(options__parse_u64(" 4", 0, 100, &v) != 0);
	CHECK(options__parse_u64("4 ", 0, 100, &v) != 0);
	CHECK(options__parse_u64("101", 0, 100, &v) != 0);
	CHECK(options__parse_u64("18446744073709551616", 0, ~0ULL, &v) != 0);
}

TEST(cpu_list)
{
	bool *on;
	int nr;

	CHECK_INT(options__parse_cpu_list("0-2,5\n", &on, &nr), 0);
	CHECK_INT(nr, 6);
	CHECK(on[0] && on[1] && on[2] && !on[3] && !on[4] && on[5]);
	free(on);
	CHECK(options__parse_cpu_list("3-1", &on, &nr) != 0);
	CHECK(options__parse_cpu_list("", &on, &nr) != 0);
	CHECK(options__parse_cpu_list("a", &on, &nr) != 0);
}

TEST(system_checks)
{
	bool online[2] = { true, false };
	struct limits lim = { .max_sample_rate = 1000, .max_stack = 64,
			      .cpu_online = online, .nr_cpus = 2 };
	static const struct { const char *line, *msg; } bad[] = {
		{ "-F 0", "-F 0 is out of range [1, 1000], the most kernel.perf_event_max_sample_rate allows (see --help)" },
		{ "-F 99999999999", "-F 99999999999 is above kernel.perf_event_max_sample_rate (1000); lower -F or raise the sysctl" },
		{ "-F 1001", "-F 1001 is above kernel.perf_event_max_sample_rate (1000); lower -F or raise the sysctl" },
		{ "--perf-max-stack-depth 65", "--perf-max-stack-depth 65 is above kernel.perf_event_max_stack (64); lower it or raise the sysctl" },
		{ "-C 1", "-C 1 is not an online CPU (see /sys/devices/system/cpu/online)" },
		{ "-C 2", "-C 2 is not an online CPU (see /sys/devices/system/cpu/online)" },
		{ "--cgroup /proc/self/status", "--cgroup '/proc/self/status' is not a directory; give a cgroup v2 directory" },
		{ "--cgroup /nonexistent", "--cgroup '/nonexistent': No such file or directory (see --help)" },
		{ "-p 2147483646", "PID 2147483646 does not exist (see --help)" },
	};
	char want[512];

	CHECK_INT(check("-F 1000", &lim), 0);
	CHECK_STR(msg, "");
	CHECK_INT(check("-C 0", &lim), 0);
	CHECK_STR(msg, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(check(bad[i].line, &lim) < 0);
		snprintf(want, sizeof(want), "profile: %s\n", bad[i].msg);
		CHECK_STR(msg, want);
	}
}

int main(void)
{
	RUN(defaults);
	RUN(bcc_options);
	RUN(event_rates);
	RUN(tracepoints);
	RUN(command);
	RUN(usage_errors);
	RUN(offcpu_options);
	RUN(unknown_style);
	RUN(number_parser);
	RUN(cpu_list);
	RUN(system_checks);
	return unit_summary();
}
