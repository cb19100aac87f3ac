// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the writers add around a report, by the profile's kind: the plain
 * header (bcc profile's, or offcputime's for --off-cpu), the SVG's
 * subtitle, pprof's period, and the [off-cpu] mark --wall asks the
 * trace view for.
 * Written to -o files in a temporary directory and read back.
 */
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include "unit.h"
#include "lib/pb.h"
#include "output/writer.h"
#include "stacks.h"

static char dir[64];
static STACK(ust, 2);
static STACK(kst, 1);

static void setup(void)
{
	ust.frames[0] = (struct frame){ .name = "func_b", .addr = 0x401000 };
	ust.frames[1] = (struct frame){ .name = "main", .addr = 0x402000 };
	kst.frames[0] = (struct frame){ .name = "schedule", .kind = FRAME_KERNEL };
}

/* The whole text of dir/name, malloc'ed ("" when missing). */
static char *slurp(const char *name)
{
	char path[128], *buf = calloc(1, 65536);
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f && buf) {
		n = fread(buf, 1, 65535, f);
		fclose(f);
	}
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* -p 123 for 5 s at 49 Hz of the clock, both stacks, to dir/name as format. */
static void config(struct output_config *c, enum profile_kind kind, const char *name,
		   enum output_format format)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*c = (struct output_config){
		.outputs = { { .path = path, .format = format } }, .nr_outputs = 1,
		.format = format, .user = true, .kernel = true, .delimited = true,
		.event = "cpu-clock", .event_default = true, .event_clock = true,
		.freq = 49, .pids = "123", .cpu = -1, .duration = 5,
		.min_width = 0, .kind = kind,
		.period_ns = kind == PROFILE_WALL ? 1000000000ULL / 49 : 0,
	};
}

/* A run of one report: open, start, write recs, close. */
static void run(const struct output_config *c, struct record *recs, size_t nr)
{
	struct records p = { .recs = recs, .nr = nr };
	struct timespec start = { 100, 0 }, end = { 105, 0 };
	struct writers ws;

	CHECK_INT(writers__open(&ws, c), 0);
	writers__start(&ws);
	CHECK_INT(writers__write(&ws, &p, 1, &start, &end), 0);
	CHECK_INT(writers__close(&ws), 0);
}

static struct record off(__u64 ns)
{
	struct record r = test_record("app", 123, ns, &ust, PART_OK, &kst, PART_OK);

	r.what = COUNT_OFF_CPU;
	return r;
}

/* A CPU profile's header is bcc profile's, as before. */
TEST(cpu_header)
{
	struct record r[] = { test_record("app", 123, 7, &ust, PART_OK, NULL, PART_ABSENT) };
	struct output_config c;
	char *out;

	config(&c, PROFILE_CPU, "cpu.txt", FMT_PLAIN);
	run(&c, r, 1);
	out = slurp("cpu.txt");
	CHECK_STR(out,
		  "Sampling at 49 Hertz of PID 123 by user + kernel stack for 5 secs.\n"
		  "\n"
		  "    func_b\n"
		  "    main\n"
		  "    -                app (123)\n"
		  "        7\n\n");
	free(out);
}

/* --off-cpu: bcc offcputime's header and its microseconds. */
TEST(off_cpu_header)
{
	struct record r[] = { off(2000400) };
	struct output_config c;
	char *out;

	config(&c, PROFILE_OFF_CPU, "off.txt", FMT_PLAIN);
	run(&c, r, 1);
	out = slurp("off.txt");
	CHECK_STR(out,
		  "Tracing off-CPU time (us) of PID 123 by user + kernel stack for 5 secs.\n"
		  "\n"
		  "    schedule\n"
		  "    --\n"
		  "    func_b\n"
		  "    main\n"
		  "    -                app (123)\n"
		  "        2000\n\n");
	free(out);
}

#define WALL_HEADER "Sampling at 49 Hertz and tracing off-CPU time, both in us, " \
		    "of PID 123 by user + kernel stack for 5 secs.\n"

/* --wall: both in the header; the writer asks for the [off-cpu] mark. */
TEST(wall_header_and_mark)
{
	struct record r[] = {
		test_record("app", 123, 2, &ust, PART_OK, NULL, PART_ABSENT),
		off(3000000),
	};
	struct output_config c;
	char *out;

	config(&c, PROFILE_WALL, "wall.folded", FMT_FOLDED);
	run(&c, r, 2);
	out = slurp("wall.folded");
	CHECK_STR(out,
		  "app;main;func_b;-;schedule;[off-cpu] 3000\n"
		  "app;main;func_b 40816\n");
	free(out);

	config(&c, PROFILE_WALL, "wall.txt", FMT_PLAIN);
	run(&c, r, 2);
	out = slurp("wall.txt");
	CHECK(!strncmp(out, WALL_HEADER, strlen(WALL_HEADER)));
	free(out);
}

/* The SVG's subtitle ends with the profile's time, not its samples. */
TEST(svg_subtitle)
{
	struct record r[] = { off(4000000) };
	struct output_config c;
	char *out;

	config(&c, PROFILE_OFF_CPU, "off.svg", FMT_SVG);
	run(&c, r, 1);
	out = slurp("off.svg");
	CHECK(strstr(out, ">profile | 5.0 s | off-CPU | 4000 us</text>") != NULL);
	free(out);

	config(&c, PROFILE_CPU, "cpu.svg", FMT_SVG);
	r[0].what = COUNT_ON_CPU;
	r[0].count = 9;
	run(&c, r, 1);
	out = slurp("cpu.svg");
	CHECK(strstr(out, ">profile | 5.0 s | 49 Hz | 9 samples</text>") != NULL);
	free(out);
}

/* Whether dir/name, gunzipped, holds the field Profile.period = period. */
static bool has_period(const char *name, __u64 period)
{
	static __u8 raw[65536];
	struct pb want = {};
	char path[128];
	bool found = false;
	gzFile gz;
	int n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	gz = gzopen(path, "rb");
	if (!gz)
		return false;
	n = gzread(gz, raw, sizeof(raw));
	gzclose(gz);
	pb__uint64(&want, 12, period);
	for (int i = 0; n > 0 && !want.err && i + (int)want.len <= n && !found; i++)
		found = !memcmp(raw + i, want.buf, want.len);
	pb__free(&want);
	return found;
}

/*
 * pprof's period: a clock sample's nanoseconds for a CPU profile and for
 * --wall (whose wall and cpu values are in periods); 1 for --off-cpu.
 */
TEST(pprof_period)
{
	struct record r[] = {
		test_record("app", 123, 2, &ust, PART_OK, NULL, PART_ABSENT),
		off(3000000),
	};
	struct output_config c;

	config(&c, PROFILE_WALL, "wall.pb.gz", FMT_PPROF);
	run(&c, r, 2);
	CHECK(has_period("wall.pb.gz", 1000000000ULL / 49));
	config(&c, PROFILE_OFF_CPU, "off.pb.gz", FMT_PPROF);
	run(&c, r + 1, 1);
	CHECK(has_period("off.pb.gz", 1));
	CHECK(!has_period("off.pb.gz", 1000000000ULL / 49));
}

static void cleanup(void)
{
	static const char *const names[] = { "cpu.txt", "off.txt", "wall.folded", "wall.txt",
					     "off.svg", "cpu.svg", "wall.pb.gz", "off.pb.gz" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_writer.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	setup();
	RUN(cpu_header);
	RUN(off_cpu_header);
	RUN(wall_header_and_mark);
	RUN(svg_subtitle);
	RUN(pprof_period);
	cleanup();
	return unit_summary();
}
