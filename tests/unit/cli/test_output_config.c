// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* options__output_config(): what the writers are told of a command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "cli/output_config.h"

static void argv_of(char *buf, char **argv, int *argc)
{
	*argc = 0;
	argv[(*argc)++] = "profile";
	for (char *t = strtok(buf, " "); t && *argc < 31; t = strtok(NULL, " "))
		argv[(*argc)++] = t;
	argv[*argc] = NULL;
}

/* Parse line into o (kept: the config borrows its strings) and fill oc. */
static int config(struct options *o, struct output_config *oc, const char *line)
{
	static char buf[512];
	static char *argv[32];
	int argc, err;

	snprintf(buf, sizeof(buf), "%s", line);
	argv_of(buf, argv, &argc);
	err = options__parse(o, argc, argv);
	if (!err)
		options__output_config(o, oc);
	return err;
}

TEST(defaults)
{
	struct output_config oc;
	struct options o;

	CHECK_INT(config(&o, &oc, "5"), 0);
	CHECK_INT(oc.nr_outputs, 0);
	CHECK_INT(oc.format, FMT_PLAIN);
	CHECK(oc.user && oc.kernel);
	CHECK_INT(oc.names, NAMES_BY_FORMAT);
	CHECK_STR(oc.event, "cpu-clock");
	CHECK(oc.event_default && oc.event_clock);
	CHECK_INT(oc.freq, 49);
	CHECK_INT(oc.duration, 5);
	CHECK_INT(oc.cpu, -1);
	CHECK(!oc.pids && !oc.tids && !oc.cmd && !oc.top && !oc.verbose);
	CHECK(!oc.delimited && !oc.annotations && !oc.per_cpu && !oc.per_thread);
	CHECK(!oc.module_labels && !oc.title && !oc.inverted);
	CHECK_INT(oc.interval, 0);
	CHECK_INT(oc.limit, 0);
	CHECK_INT(oc.period, 0);
	CHECK(oc.min_width == 0.1);
	CHECK_STR(oc.cmdline, "profile 5");
	options__free(&o);
}

TEST(what_is_shown)
{
	struct output_config oc;
	struct options o;

	CHECK_INT(config(&o, &oc, "-U -d -a -v --per-cpu --unknown=module --names short -p 1,2"), 0);
	CHECK(oc.user && !oc.kernel);
	CHECK(oc.delimited && oc.annotations && oc.verbose && oc.per_cpu && oc.module_labels);
	CHECK_INT(oc.names, NAMES_SHORT);
	CHECK_STR(oc.pids, "1,2");
	options__free(&o);
	CHECK_INT(config(&o, &oc, "-K --names full -L 7"), 0);
	CHECK(!oc.user && oc.kernel);
	CHECK_INT(oc.names, NAMES_FULL);
	CHECK_STR(oc.tids, "7");
	CHECK(!oc.pids);
	options__free(&o);
}

TEST(outputs_and_command)
{
	struct output_config oc;
	struct options o;

	CHECK_INT(config(&o, &oc, "-e page-faults -c 1000 -i 2 -o a.svg -o b.pb.gz -- sleep 1"), 0);
	CHECK_INT(oc.nr_outputs, 2);
	CHECK_STR(oc.outputs[0].path, "a.svg");
	CHECK_INT(oc.outputs[1].format, FMT_PPROF);
	CHECK_INT(oc.interval, 2);
	CHECK_STR(oc.event, "page-faults");
	CHECK(!oc.event_default && !oc.event_clock);
	CHECK_INT(oc.freq, 0);
	CHECK_INT(oc.period, 1000);
	CHECK_STR(oc.cmd, "sleep");
	CHECK_STR(oc.outputs[0].path, "a.svg");
	CHECK_INT(oc.outputs[0].format, FMT_SVG);
	CHECK_STR(oc.outputs[1].path, "b.pb.gz");
	CHECK_INT(oc.format, FMT_SVG);
	options__free(&o);
}

/* The SVG's own options, each with a value no default has. */
TEST(svg_options)
{
	struct output_config oc;
	struct options o;

	CHECK_INT(config(&o, &oc, "--title Hot --inverted --min-width 2.5 --per-thread -C 1 -F 97 -o x.svg 3"), 0);
	CHECK_STR(oc.title, "Hot");
	CHECK(oc.inverted);
	CHECK(oc.min_width == 2.5);
	CHECK_STR(oc.cmdline, "profile --title Hot --inverted --min-width 2.5 --per-thread -C 1 -F 97 -o x.svg 3");
	CHECK(oc.per_thread && !oc.per_cpu);
	CHECK_INT(oc.cpu, 1);
	CHECK_INT(oc.freq, 97);
	CHECK_INT(oc.duration, 3);
	CHECK_INT(oc.format, FMT_SVG);
	CHECK_INT(oc.nr_outputs, 1);
	options__free(&o);
}

/* --top: a report every second (unless -i), its lines limited. */
TEST(top_and_limit)
{
	struct output_config oc;
	struct options o;

	CHECK_INT(config(&o, &oc, "--top --limit 7"), 0);
	CHECK(oc.top);
	CHECK_INT(oc.limit, 7);
	CHECK_INT(oc.format, FMT_REPORT);
	CHECK_INT(oc.interval, 1);
	options__free(&o);
	CHECK_INT(config(&o, &oc, "--format report --limit 3 -i 4"), 0);
	CHECK(!oc.top);
	CHECK_INT(oc.limit, 3);
	CHECK_INT(oc.interval, 4);
	options__free(&o);
}

int main(void)
{
	RUN(defaults);
	RUN(what_is_shown);
	RUN(outputs_and_command);
	RUN(svg_options);
	RUN(top_and_limit);
	return unit_summary();
}
