// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* -o and the formats: each output's format, the refused combinations. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "cli/opts.h"

/* What the last parse() printed on stderr. */
static char msg[512];

static int parse(struct options *o, const char *line)
{
	static char buf[1024];
	FILE *saved = stderr;
	char *argv[48];
	int argc = 0, err;
	size_t n;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "profile";
	for (char *t = strtok(buf, " "); t && argc < 47; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	stderr = tmpfile();
	if (!stderr)
		abort();
	err = options__parse(o, argc, argv);
	rewind(stderr);
	n = fread(msg, 1, sizeof(msg) - 1, stderr);
	msg[n] = '\0';
	fclose(stderr);
	stderr = saved;
	return err;
}

TEST(implied)
{
	CHECK_INT(format__implied("a.svg"), FMT_SVG);
	CHECK_INT(format__implied("dir.svg/a.pb.gz"), FMT_PPROF);
	CHECK_INT(format__implied("a.pprof"), FMT_PPROF);
	CHECK_INT(format__implied("cpu-%H%M%S.folded"), FMT_FOLDED);
	CHECK_INT(format__implied("a.txt"), FMT_UNSET);
	CHECK_INT(format__implied("/dev/stdout"), FMT_UNSET);
	CHECK_INT(format__implied("a.gz"), FMT_UNSET);
	CHECK_INT(format__from_path("a.txt"), FMT_PLAIN);
	CHECK_INT(format__from_path("a.svg"), FMT_SVG);
}

TEST(one_format_each)
{
	struct options o;

	CHECK_INT(parse(&o, "-o a.svg -o b.pb.gz -o c.folded -o d.txt"), 0);
	CHECK_INT(o.nr_outputs, 4);
	CHECK_STR(o.output, "a.svg");
	CHECK_INT(o.outputs[0].format, FMT_SVG);
	CHECK_INT(o.outputs[1].format, FMT_PPROF);
	CHECK_INT(o.outputs[2].format, FMT_FOLDED);
	CHECK_INT(o.outputs[3].format, FMT_PLAIN);
	CHECK_INT(o.format, FMT_SVG);
	options__free(&o);

	/* The explicit format goes to the names that imply none. */
	CHECK_INT(parse(&o, "--report -o r.txt -o out"), 0);
	CHECK_INT(o.outputs[0].format, FMT_REPORT);
	CHECK_INT(o.outputs[1].format, FMT_REPORT);
	options__free(&o);
	CHECK_INT(parse(&o, "-f -o a.folded -o b"), 0);
	CHECK_INT(o.outputs[1].format, FMT_FOLDED);
	CHECK(o.folded);
	options__free(&o);
	CHECK_INT(parse(&o, "--format svg -o a.svg -o b.html"), 0);
	CHECK_INT(o.outputs[1].format, FMT_SVG);
	options__free(&o);
	CHECK_INT(parse(&o, "--top -o t.txt"), 0);
	CHECK_INT(o.outputs[0].format, FMT_REPORT);
	options__free(&o);

	/* No -o: stdout, in the format asked for or plain. */
	CHECK_INT(parse(&o, ""), 0);
	CHECK_INT(o.nr_outputs, 0);
	CHECK(!o.output);
	CHECK_INT(o.format, FMT_PLAIN);
	options__free(&o);
}

TEST(refused)
{
	static const struct { const char *line, *msg; } bad[] = {
		{ "--report -o r.svg",
		  "-o r.svg is an SVG file name but --report asks for a report; drop one or rename the file" },
		{ "-f -o f.pb.gz",
		  "-o f.pb.gz is a pprof file name but -f asks for folded output; drop one or rename the file" },
		{ "-o x.folded --format svg",
		  "-o x.folded is a folded file name but --format svg asks for an SVG flame graph; drop one or rename the file" },
		{ "--top -o t.pprof",
		  "-o t.pprof is a pprof file name but --top asks for a report; drop one or rename the file" },
		{ "--format plain -o a.txt -o b.folded",
		  "-o b.folded is a folded file name but --format plain asks for plain text; drop one or rename the file" },
		{ "-o a.svg -o b.folded -o a.svg",
		  "-o 'a.svg' given twice; name each output once" },
		{ "-o ", "option '-o' needs a value" },
		{ "-q -v", "conflicting options: -q and -v cannot be used together" },
	};
	char want[512];
	struct options o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(parse(&o, bad[i].line), -EINVAL);
		snprintf(want, sizeof(want), "profile: %s (see --help)\n", bad[i].msg);
		CHECK_STR(msg, want);
		options__free(&o);
	}
}

TEST(bound)
{
	char line[1024];
	struct options o;
	size_t off = 0;

	for (int i = 0; i < MAX_OUTPUTS; i++)
		off += snprintf(line + off, sizeof(line) - off, "-o f%d.folded ", i);
	CHECK_INT(parse(&o, line), 0);
	CHECK_INT(o.nr_outputs, MAX_OUTPUTS);
	options__free(&o);
	snprintf(line + off, sizeof(line) - off, "-o one-more.svg");
	CHECK_INT(parse(&o, line), -EINVAL);
	CHECK_STR(msg, "profile: more than 16 -o outputs; write fewer from one run (see --help)\n");
	options__free(&o);
}

TEST(quiet)
{
	struct options o;

	CHECK_INT(parse(&o, "-q -o a.svg"), 0);
	CHECK(o.quiet);
	options__free(&o);
	CHECK_INT(parse(&o, "--quiet"), 0);
	CHECK(o.quiet);
	options__free(&o);
}

/* --otlp: one more output, after the -o ones; an agent's interval. */
TEST(otlp)
{
	struct options o;

	CHECK_INT(parse(&o, "--otlp"), 0);
	CHECK_INT(o.nr_outputs, 1);
	CHECK_INT(o.outputs[0].format, FMT_OTLP);
	CHECK(!o.outputs[0].path);
	CHECK_INT(o.interval, OTLP_DEFAULT_INTERVAL);
	CHECK_INT(o.format, FMT_PLAIN);
	options__free(&o);

	CHECK_INT(parse(&o, "-o a.svg --otlp=http://c:4318 -i 3 --otlp-queue 5"), 0);
	CHECK_INT(o.nr_outputs, 2);
	CHECK_INT(o.outputs[0].format, FMT_SVG);
	CHECK_INT(o.outputs[1].format, FMT_OTLP);
	CHECK_STR(o.outputs[1].path, "http://c:4318");
	CHECK_INT(o.interval, 3);
	CHECK_INT(o.otlp_queue, 5);
	options__free(&o);

	CHECK(parse(&o, "--otlp-queue 5") < 0);
	CHECK(strstr(msg, "--otlp-queue is for --otlp"));
	options__free(&o);
	CHECK(parse(&o, "--otlp --top") < 0);
	CHECK(strstr(msg, "--top and --otlp"));
	options__free(&o);
	CHECK(parse(&o, "--otlp --otlp=http://x:1") < 0);
	CHECK(strstr(msg, "--otlp given twice"));
	options__free(&o);
	CHECK(parse(&o, "--otlp= 1") < 0);
	options__free(&o);
	CHECK(parse(&o, "--otlp --otlp-queue 0") < 0);
	options__free(&o);
}

int main(void)
{
	RUN(implied);
	RUN(one_format_each);
	RUN(refused);
	RUN(bound);
	RUN(quiet);
	RUN(otlp);
	return unit_summary();
}
