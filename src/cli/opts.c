// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Options.  The set and spelling follow bcc's profile(8) so that users can
 * switch without retraining; every number is range-checked and every
 * conflict is a usage error, reported before anything is loaded.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cli/opts.h"
#include "export/otlp_config.h"
#include "symbols/debuginfod.h"
#include "bpf/profile.h"
#include "lib/log.h"
#include "lib/util.h"

enum {
	OPT_STACK_STORAGE = 256,
	OPT_HASH_STORAGE,
	OPT_MAX_STACK_DEPTH,
	OPT_CGROUP,
	OPT_CGROUPMAP,
	OPT_MNTNSMAP,
	OPT_FORMAT,
	OPT_TITLE,
	OPT_INVERTED,
	OPT_MIN_WIDTH,
	OPT_LIST_EVENTS,
	OPT_REPORT,
	OPT_LIMIT,
	OPT_TOP,
	OPT_NO_DEMANGLE,
	OPT_KALLSYMS,
	OPT_PER_CPU,
	OPT_PER_THREAD,
	OPT_UNWIND,
	OPT_UNWIND_MEM,
	OPT_UNWIND_DEBUG,
	OPT_PYTHON,
	OPT_LINES,
	OPT_PY_LINES,
	OPT_INLINE,
	OPT_DEBUGINFOD,
	OPT_DEBUGINFOD_WAIT,
	OPT_UNKNOWN,
	OPT_NAMES,
	OPT_USER,
	OPT_OFF_CPU,
	OPT_WALL,
	OPT_STATE,
	OPT_OTLP,
	OPT_OTLP_QUEUE,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 'L' },
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "frequency", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "delimited", no_argument, NULL, 'd' },
	{ "annotations", no_argument, NULL, 'a' },
	{ "include-idle", no_argument, NULL, 'I' },
	{ "folded", no_argument, NULL, 'f' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
	{ "hash-storage-size", required_argument, NULL, OPT_HASH_STORAGE },
	{ "perf-max-stack-depth", required_argument, NULL, OPT_MAX_STACK_DEPTH },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "cgroupmap", required_argument, NULL, OPT_CGROUPMAP },
	{ "mntnsmap", required_argument, NULL, OPT_MNTNSMAP },
	{ "interval", required_argument, NULL, 'i' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "min-width", required_argument, NULL, OPT_MIN_WIDTH },
	{ "report", no_argument, NULL, OPT_REPORT },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "top", no_argument, NULL, OPT_TOP },
	{ "event", required_argument, NULL, 'e' },
	{ "list-events", no_argument, NULL, OPT_LIST_EVENTS },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "kallsyms", no_argument, NULL, OPT_KALLSYMS },
	{ "per-cpu", no_argument, NULL, OPT_PER_CPU },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "unwind-mem", required_argument, NULL, OPT_UNWIND_MEM },
	{ "unwind-debug", no_argument, NULL, OPT_UNWIND_DEBUG },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "py-lines", no_argument, NULL, OPT_PY_LINES },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "debuginfod", required_argument, NULL, OPT_DEBUGINFOD },
	{ "debuginfod-wait", required_argument, NULL, OPT_DEBUGINFOD_WAIT },
	{ "unknown", required_argument, NULL, OPT_UNKNOWN },
	{ "names", required_argument, NULL, OPT_NAMES },
	{ "user", required_argument, NULL, OPT_USER },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "wall", no_argument, NULL, OPT_WALL },
	{ "min-block-time", required_argument, NULL, 'm' },
	{ "max-block-time", required_argument, NULL, 'M' },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "otlp", optional_argument, NULL, OPT_OTLP },
	{ "otlp-queue", required_argument, NULL, OPT_OTLP_QUEUE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

/*
 * "-": positionals come back in order (as option 1) instead of being moved
 * to the end, so that getopt stops at "--" and what follows it is the
 * command, never mistaken for a duration; ":": a missing value is ':'.
 */
static const char short_opts[] = "-:p:L:UKF:c:daIfC:e:o:i:m:M:vqhV";

void options__usage(FILE *out)
{
	fprintf(out,
"Usage: profile [OPTIONS] [duration]\n"
"       profile [OPTIONS] [duration] -- COMMAND [ARGS...]\n"
"Profile CPU usage by sampling stack traces at a timed interval: of the whole\n"
"host, or of COMMAND and every process it starts, until it exits.\n"
"\n"
"  -p, --pid PID[,PID...]      profile these processes only\n"
"  -L, --tid TID[,TID...]      profile these threads only\n"
"  -U, --user-stacks-only      show user space stacks only (no kernel)\n"
"  -K, --kernel-stacks-only    show kernel space stacks only (no user)\n"
"  -F, --frequency HZ          sample frequency in Hertz (default %d; other events\n"
"                              than cpu-clock and task-clock: %d)\n"
"  -c, --count PERIOD          sample once every PERIOD events (cpu-clock: ns)\n"
"  -e, --event EVENT           sample on this perf event (default cpu-clock), or\n"
"                              count a tracepoint's hits (CATEGORY:NAME)\n"
"      --list-events           list the events, marking those this machine supports,\n"
"                              and the tracepoints\n"
"  -d, --delimited             insert delimiters between kernel and user stacks\n"
"  -a, --annotations           add _[k] annotations to kernel frames\n"
"  -I, --include-idle          include CPU idle stacks\n"
"  -f, --folded                output folded format, one line per stack\n"
"      --format FMT            output format: plain, folded, svg, pprof or report\n"
"      --unknown STYLE         folded and plain: an unnamed frame is bcc's [unknown]\n"
"                              (bcc, the default) or its module, [libc.so.6] (module)\n"
"      --names STYLE           C++ and Rust names: short, without parameters and\n"
"                              template arguments (default for svg and --top), or\n"
"                              full (default for plain, folded, pprof and report)\n"
"      --report                print a perf-report-style table of the hottest functions\n"
"      --limit N               report: print the first N lines only\n"
"      --top                   live view of the hottest functions, refreshed every\n"
"                              second (or -i); plain snapshots when not a terminal\n"
"  -i, --interval SECONDS      report every SECONDS, without losing samples between\n"
"  -o, --output FILE           write to FILE, in the format its name implies (.svg,\n"
"                              .pb.gz or .pprof, .folded), else the one asked for;\n"
"                              repeat for several outputs from one run (up to %d);\n"
"                              with -i, a strftime pattern gives a file per interval\n"
"      --title TEXT            title of the SVG flame graph\n"
"      --inverted              SVG: draw an icicle graph (root at the top)\n"
"      --min-width PCT         SVG: omit frames under PCT%% of samples (default 0.1)\n"
"      --otlp[=URL]            send each interval's profile (-i; %d s without it) to\n"
"                              an OpenTelemetry Collector, OTLP/HTTP: URL, else the\n"
"                              OTEL_EXPORTER_OTLP_* variables, else localhost:4318;\n"
"                              nothing on stdout unless -o names it\n"
"      --otlp-queue N          --otlp: profiles kept while the collector is away\n"
"                              (default %d, and 64 MiB); then the oldest is dropped\n"
"  -C, --cpu CPU               profile this CPU only\n"
"      --off-cpu               profile the time tasks spend blocked (off the CPU),\n"
"                              by stack, instead of CPU samples; counts in us\n"
"      --wall                  CPU samples and blocked time of -p, -L or -- COMMAND\n"
"                              in one profile, both in us (a clock event and -F)\n"
"  -m, --min-block-time US     off-CPU: count blocks of at least US us (default 1)\n"
"  -M, --max-block-time US     off-CPU: count blocks of at most US us (default: any)\n"
"      --state LIST            off-CPU: count blocks that began in these task states:\n"
"                              R (preempted), S (sleep), D (uninterruptible), or\n"
"                              bcc's mask, 0 (R), 1 (S), 2 (D), 3 (default: all)\n"
"      --stack-storage-size N  number of unique stack traces stored (default %d)\n"
"      --hash-storage-size N   number of unique counted keys (default %d)\n"
"      --perf-max-stack-depth N  deepest stack recorded (default %d)\n"
"      --unwind MODE           user stacks: auto (default: frame pointers where the\n"
"                              code has them, .eh_frame tables elsewhere), fp, dwarf\n"
"      --unwind-mem MIB        kernel memory for unwind tables (default %llu)\n"
"      --unwind-debug          end incomplete user stacks with [unwind: REASON]\n"
"      --python MODE           CPython's frames in user stacks: auto (default), off\n"
"      --lines                 name frames with their source line: FUNC (FILE:LINE),\n"
"                              native ones from DWARF too\n"
"      --py-lines              lines for Python frames only\n"
"      --inline                frames for inlined functions, where DWARF has them\n"
"      --cgroup PATH           profile tasks in this cgroup v2 directory and below\n"
"      --cgroupmap PATH        profile cgroups whose ids are in this pinned map\n"
"      --mntnsmap PATH         profile mount namespaces in this pinned map\n"
"      --no-demangle           print C++ and Rust names as they are in the binary\n"
"      --debuginfod MODE       fetch the debug files of stripped binaries from the\n"
"                              servers in DEBUGINFOD_URLS: auto (default), off\n"
"      --debuginfod-wait SECS  wait at most SECS for each of those (default %d)\n"
"      --kallsyms              name kernel frames from /proc/kallsyms, as perf does\n"
"      --per-cpu               break stacks down by CPU (folded: cpu_N;...)\n"
"      --per-thread            break stacks down by thread (folded: comm-PID/TID;...)\n"
"  -v, --verbose               print counters, addresses and modules; -vv adds libbpf debug output\n"
"  -q, --quiet                 no summary line after writing -o files, no warnings;\n"
"                              errors and lost-sample warnings are still printed\n"
"  -h, --help                  show this help and exit\n"
"  -V, --version               show the version and exit\n"
"  duration                    seconds to profile (default: until Ctrl-C, or until\n"
"                              COMMAND exits)\n"
"  -- COMMAND [ARGS...]        run COMMAND and profile it and its children; exit\n"
"                              with its status (use -o: it shares stdout); it runs\n"
"                              as profile does, root, unless --user is given\n"
"      --user USER             run COMMAND as USER (a name or uid), with its groups\n"
"                              and no capabilities: --user \"$SUDO_USER\" under sudo\n",
		DEFAULT_FREQ, DEFAULT_EVENT_FREQ, MAX_OUTPUTS, OTLP_DEFAULT_INTERVAL,
		OTLP_QUEUE_DEFAULT, DEFAULT_STACK_STORAGE, DEFAULT_HASH_STORAGE,
		MAX_STACK_DEPTH, UNWIND_MEM_DEFAULT >> 20, DEBUGINFOD_WAIT_S);
}

/* Parse a decimal number in [min, max]: no sign, no spaces, no trailing text. */
int options__parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static bool id_listed(const __u32 *ids, size_t nr, __u32 id)
{
	for (size_t i = 0; i < nr; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* "1,2,3" into a fresh array; empty items and duplicates are errors. */
int options__parse_id_list(const char *s, __u32 **ids, size_t *nr)
{
	__u32 *out = NULL;
	size_t n = 0, cap = 0;
	const char *p = s;
	char buf[32];
	int err = -EINVAL;

	for (;;) {
		size_t len = strcspn(p, ",");
		__u64 v;

		if (len == 0 || len >= sizeof(buf))
			goto fail;
		memcpy(buf, p, len);
		buf[len] = '\0';
		err = options__parse_u64(buf, 1, INT_MAX, &v);
		if (err)
			goto fail;
		err = -EINVAL;
		if (id_listed(out, n, v))
			goto fail;
		if (util__grow_array((void **)&out, &cap, n + 1, sizeof(*out))) {
			err = -ENOMEM;
			goto fail;
		}
		out[n++] = v;
		if (!p[len])
			break;
		p += len + 1;
	}
	*ids = out;
	*nr = n;
	return 0;
fail:
	free(out);
	return err;
}

/* fmt has one %s, for arg. */
static int usage_error(const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	pr_err("%s (see --help)", msg);
	return -EINVAL;
}

/* -e: a tracepoint that is not there names where it was looked for. */
static int parse_event(struct options *o, const char *arg)
{
	char path[PATH_MAX];
	int err = event__parse(arg, &o->event);

	if (!err)
		return 0;
	if (!strchr(arg, ':'))
		return usage_error("-e '%s' is not a known event; see --list-events", arg);
	if (err == -ENODEV)
		pr_err("-e '%s': tracefs is not mounted and could not be: mount -t tracefs nodev /sys/kernel/tracing",
		       arg);
	else if (event__tracepoint_path(arg, path, sizeof(path)))
		pr_err("-e '%s' is not a tracepoint's CATEGORY:NAME; see --list-events", arg);
	else
		pr_err("-e '%s': no such tracepoint (no %s); see --list-events", arg, path);
	return -EINVAL;
}

static int parse_num_opt(const char *name, const char *arg, __u64 min,
			 __u64 max, __u64 *out)
{
	int err = options__parse_u64(arg, min, max, out);

	if (err == -ERANGE) {
		pr_err("%s '%s' is out of range [%llu, %llu] (see --help)",
			name, arg, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	if (err) {
		pr_err("%s '%s' is not a valid number (see --help)",
			name, arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_list_opt(const char *name, const char *arg, __u32 **ids,
			  size_t *nr)
{
	if (*ids) {
		pr_err("%s given twice (see --help)", name);
		return -EINVAL;
	}
	if (options__parse_id_list(arg, ids, nr)) {
		pr_err("%s '%s' is not a comma-separated list of distinct positive ids (see --help)",
			name, arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_path_opt(const char *name, const char *arg, const char **out)
{
	if (!arg[0]) {
		pr_err("%s needs a non-empty path (see --help)", name);
		return -EINVAL;
	}
	*out = arg;
	return 0;
}

static int parse_percent(const char *name, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!isdigit((unsigned char)arg[0]) || errno || *end || v < 0 || v > 100) {
		pr_err("%s '%s' is not a percentage in [0, 100] (see --help)",
			name, arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A two-way switch: *out is true for `yes`, false for `no`. */
static int parse_choice(const char *name, const char *arg, const char *yes,
			const char *no, bool *out)
{
	if (strcmp(arg, yes) && strcmp(arg, no)) {
		pr_err("%s '%s' is not one of %s, %s (see --help)", name, arg, yes, no);
		return -EINVAL;
	}
	*out = !strcmp(arg, yes);
	return 0;
}

static const char *const format_names[] = {
	[FMT_PLAIN] = "plain",
	[FMT_FOLDED] = "folded",
	[FMT_SVG] = "svg",
	[FMT_PPROF] = "pprof",
	[FMT_REPORT] = "report",
};

enum output_format format__from_name(const char *name)
{
	for (int f = FMT_PLAIN; f <= FMT_REPORT; f++)
		if (!strcmp(name, format_names[f]))
			return f;
	return FMT_UNSET;
}

const char *format__name(enum output_format f)
{
	return f >= FMT_PLAIN && f <= FMT_REPORT ? format_names[f] : "?";
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The format a file name implies: "out.svg", "cpu.pb.gz", "x.folded". */
enum output_format format__implied(const char *path)
{
	if (ends_with(path, ".svg"))
		return FMT_SVG;
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof"))
		return FMT_PPROF;
	if (ends_with(path, ".folded"))
		return FMT_FOLDED;
	return FMT_UNSET;
}

enum output_format format__from_path(const char *path)
{
	enum output_format f = format__implied(path);

	return f == FMT_UNSET ? FMT_PLAIN : f;
}

/* -o once more: a name not seen before, and not too many. */
static int add_output(struct options *o, const char *path)
{
	if (!path[0])
		return usage_error("%s needs a non-empty path", "-o/--output");
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (!strcmp(o->outputs[i].path, path))
			return usage_error("-o '%s' given twice; name each output once", path);
	if (o->nr_outputs == MAX_OUTPUTS) {
		pr_err("more than %d -o outputs; write fewer from one run (see --help)",
		       MAX_OUTPUTS);
		return -EINVAL;
	}
	o->outputs[o->nr_outputs++].path = path;
	o->output = o->outputs[0].path;
	return 0;
}

/* "an SVG file name but --report asks for a report" */
static const char *const format_file_names[] = {
	[FMT_FOLDED] = "a folded file name",
	[FMT_SVG] = "an SVG file name",
	[FMT_PPROF] = "a pprof file name",
};

static const char *const format_wants[] = {
	[FMT_PLAIN] = "plain text",
	[FMT_FOLDED] = "folded output",
	[FMT_SVG] = "an SVG flame graph",
	[FMT_PPROF] = "a pprof profile",
	[FMT_REPORT] = "a report",
};

static int format_mismatch(const struct options *o, const char *path,
			   enum output_format implied)
{
	bool named = !strcmp(o->format_opt, "--format");

	pr_err("-o %s is %s but %s%s%s asks for %s; drop one or rename the file (see --help)",
	       path, format_file_names[implied], o->format_opt, named ? " " : "",
	       named ? format__name(o->format) : "", format_wants[o->format]);
	return -EINVAL;
}

/*
 * Each -o takes the format its name implies; a name that implies none
 * takes the format asked for, or plain.  A name that implies another
 * format than the one asked for is refused: text in x.svg helps no one.
 */
static int settle_outputs(struct options *o)
{
	for (size_t i = 0; i < o->nr_outputs; i++) {
		struct output_spec *out = &o->outputs[i];
		enum output_format implied = format__implied(out->path);

		if (implied != FMT_UNSET && o->format != FMT_UNSET && implied != o->format)
			return format_mismatch(o, out->path, implied);
		if (implied != FMT_UNSET)
			out->format = implied;
		else
			out->format = o->format != FMT_UNSET ? o->format : FMT_PLAIN;
	}
	return 0;
}

/*
 * --state: letters (R, S, D, as ps prints them; "S,D" or "SD") or bcc's
 * numeric mask of the kernel's task states, where 0 means runnable only.
 */
static int parse_state(struct options *o, const char *arg)
{
	static const char *const bcc_masks[] = { "0", "1", "2", "3" };
	static const __u32 bcc_states[] = {
		OFF_STATE_R, OFF_STATE_S, OFF_STATE_D, OFF_STATE_S | OFF_STATE_D,
	};
	__u32 mask = 0;

	for (size_t i = 0; i < sizeof(bcc_masks) / sizeof(bcc_masks[0]); i++)
		if (!strcmp(arg, bcc_masks[i]))
			mask = bcc_states[i];
	for (const char *p = arg; !mask && *p; p++) {
		if (*p == ',')
			continue;
		if (*p == 'R' || *p == 'S' || *p == 'D')
			continue;
		return usage_error("--state '%s' is not a list of R, S, D nor one of 0, 1, 2, 3", arg);
	}
	if (!mask) {
		mask |= strchr(arg, 'R') ? OFF_STATE_R : 0;
		mask |= strchr(arg, 'S') ? OFF_STATE_S : 0;
		mask |= strchr(arg, 'D') ? OFF_STATE_D : 0;
	}
	if (!mask)
		return usage_error("--state '%s' names no state: give R, S or D", arg);
	o->state_mask = mask;
	o->state_set = true;
	return 0;
}

/*
 * --otlp is one more output, after the -o ones (so that none of them
 * goes to stdout unless -o says so), and makes the run an agent: a
 * profile every OTLP_DEFAULT_INTERVAL seconds unless -i says otherwise.
 */
static int settle_otlp(struct options *o)
{
	if (!o->otlp) {
		if (o->otlp_queue)
			return usage_error("%s is for --otlp: add --otlp[=URL]", "--otlp-queue");
		return 0;
	}
	if (o->top)
		return usage_error("%s: --top and --otlp cannot be used together",
				   "conflicting options");
	if (o->nr_outputs == MAX_OUTPUTS) {
		pr_err("more than %d outputs with --otlp; write fewer -o files (see --help)",
		       MAX_OUTPUTS);
		return -EINVAL;
	}
	o->outputs[o->nr_outputs++] = (struct output_spec){
		.path = o->otlp_url, .format = FMT_OTLP,
	};
	if (!o->interval)
		o->interval = OTLP_DEFAULT_INTERVAL;
	return 0;
}

/* -f is bcc's name for --format folded. */
static int settle_format(struct options *o)
{
	int err;

	if (o->folded && o->format != FMT_UNSET && o->format != FMT_FOLDED)
		return usage_error("conflicting options: -f and --format %s", format__name(o->format));
	if (o->folded && o->format == FMT_UNSET) {
		o->format = FMT_FOLDED;
		o->format_opt = "-f";
	}
	if (o->top) {
		if (o->format != FMT_UNSET && o->format != FMT_REPORT)
			return usage_error("conflicting options: --top and --format %s",
					   format__name(o->format));
		if (o->format == FMT_UNSET)
			o->format_opt = "--top";
		o->format = FMT_REPORT;
		if (!o->interval)
			o->interval = 1;
	}
	err = settle_outputs(o);
	if (err)
		return err;
	if (o->format == FMT_UNSET)
		o->format = o->nr_outputs ? o->outputs[0].format : FMT_PLAIN;
	o->folded = o->format == FMT_FOLDED;
	return settle_otlp(o);
}

static int parse_one(struct options *o, int c, const char *arg)
{
	__u64 v;
	bool bcc = true;
	int err = 0;

	switch (c) {
	case 'p':
		o->pids_arg = arg;
		return parse_list_opt("-p/--pid", arg, &o->pids, &o->nr_pids);
	case 'L':
		o->tids_arg = arg;
		return parse_list_opt("-L/--tid", arg, &o->tids, &o->nr_tids);
	case 'U': o->user_only = true; break;
	case 'K': o->kernel_only = true; break;
	case 'F':
		/* Its range is the sysctl's, checked by options__check(). */
		err = parse_num_opt("-F/--frequency", arg, 0, (1ULL << 63) - 1, &o->freq);
		o->freq_set = true;
		break;
	case 'c':
		err = parse_num_opt("-c/--count", arg, 1, (1ULL << 63) - 1, &o->period);
		break;
	case 'd': o->delimited = true; break;
	case 'a': o->annotations = true; break;
	case 'I': o->include_idle = true; break;
	case 'f': o->folded = true; break;
	case 'C':
		err = parse_num_opt("-C/--cpu", arg, 0, INT_MAX, &v);
		o->cpu = v;
		break;
	case OPT_STACK_STORAGE:
		err = parse_num_opt("--stack-storage-size", arg, 1, 1U << 24, &v);
		o->stack_storage = v;
		break;
	case OPT_HASH_STORAGE:
		err = parse_num_opt("--hash-storage-size", arg, 1, 1U << 24, &v);
		o->hash_storage = v;
		break;
	case OPT_MAX_STACK_DEPTH:
		err = parse_num_opt("--perf-max-stack-depth", arg, 1, MAX_STACK_DEPTH, &v);
		o->max_stack_depth = v;
		o->max_stack_depth_set = true;
		break;
	case OPT_CGROUP: return parse_path_opt("--cgroup", arg, &o->cgroup);
	case OPT_CGROUPMAP: return parse_path_opt("--cgroupmap", arg, &o->cgroupmap);
	case OPT_MNTNSMAP: return parse_path_opt("--mntnsmap", arg, &o->mntnsmap);
	case OPT_FORMAT:
		o->format = format__from_name(arg);
		if (o->format == FMT_UNSET)
			return usage_error("--format '%s' is not one of plain, folded, svg, pprof, report", arg);
		o->format_opt = "--format";
		break;
	case OPT_REPORT:
		if (o->format != FMT_UNSET && o->format != FMT_REPORT)
			return usage_error("conflicting options: --report and --format %s",
					   format__name(o->format));
		o->format = FMT_REPORT;
		o->format_opt = "--report";
		break;
	case OPT_LIMIT:
		err = parse_num_opt("--limit", arg, 1, UINT_MAX, &o->limit);
		break;
	case OPT_TOP: o->top = true; break;
	case 'o':
		return add_output(o, arg);
	case 'i':
		err = parse_num_opt("-i/--interval", arg, 1, 1U << 31, &o->interval);
		break;
	case OPT_TITLE: o->title = arg; break;
	case OPT_INVERTED: o->inverted = true; break;
	case OPT_MIN_WIDTH:
		return parse_percent("--min-width", arg, &o->min_width);
	case 'e':
		return parse_event(o, arg);
	case OPT_LIST_EVENTS: o->list_events = true; break;
	case OPT_NO_DEMANGLE: o->no_demangle = true; break;
	case OPT_KALLSYMS: o->kallsyms = true; break;
	case OPT_PER_CPU: o->per_cpu = true; break;
	case OPT_PER_THREAD: o->per_thread = true; break;
	case OPT_UNWIND:
		if (!strcmp(arg, "auto"))
			o->unwind = UNWIND_AUTO;
		else if (!strcmp(arg, "fp"))
			o->unwind = UNWIND_FP;
		else if (!strcmp(arg, "dwarf"))
			o->unwind = UNWIND_DWARF;
		else
			return usage_error("--unwind '%s' is not one of auto, fp, dwarf", arg);
		break;
	case OPT_UNWIND_MEM:
		err = parse_num_opt("--unwind-mem", arg, 1, 1U << 16, &v);
		o->unwind_mem = v << 20;
		break;
	case OPT_UNWIND_DEBUG: o->unwind_debug = true; break;
	case OPT_PYTHON:
		return parse_choice("--python", arg, "auto", "off", &o->interp);
	case OPT_LINES: o->native_lines = o->interp_lines = true; break;
	case OPT_PY_LINES: o->interp_lines = true; break;
	case OPT_INLINE: o->inline_frames = true; break;
	case OPT_DEBUGINFOD:
		return parse_choice("--debuginfod", arg, "auto", "off", &o->debuginfod);
	case OPT_DEBUGINFOD_WAIT:
		err = parse_num_opt("--debuginfod-wait", arg, 0, 3600,
				    &o->debuginfod_wait);
		break;
	case OPT_UNKNOWN:
		err = parse_choice("--unknown", arg, "bcc", "module", &bcc);
		o->unknown_module = !bcc;
		break;
	case OPT_NAMES:
		o->names_given = true;
		return parse_choice("--names", arg, "short", "full", &o->short_names);
	case OPT_USER:
		if (!*arg)
			return usage_error("%s needs a user name or uid", "--user");
		o->user = arg;
		break;
	case OPT_OFF_CPU:
		if (o->kind == PROFILE_WALL)
			return usage_error("%s: --off-cpu and --wall cannot be used together",
					   "conflicting options");
		o->kind = PROFILE_OFF_CPU;
		break;
	case OPT_WALL:
		if (o->kind == PROFILE_OFF_CPU)
			return usage_error("%s: --off-cpu and --wall cannot be used together",
					   "conflicting options");
		o->kind = PROFILE_WALL;
		break;
	case 'm':
		err = parse_num_opt("-m/--min-block-time", arg, 0, UINT64_MAX / 1000,
				    &o->min_block_us);
		o->min_block_set = true;
		break;
	case 'M':
		err = parse_num_opt("-M/--max-block-time", arg, 1, UINT64_MAX / 1000,
				    &o->max_block_us);
		o->max_block_set = true;
		break;
	case OPT_STATE:
		return parse_state(o, arg);
	case OPT_OTLP:
		if (o->otlp)
			return usage_error("%s given twice; send to one collector", "--otlp");
		if (arg && !*arg)
			return usage_error("%s needs a URL after '=', or none", "--otlp");
		o->otlp = true;
		o->otlp_url = arg;
		break;
	case OPT_OTLP_QUEUE:
		err = parse_num_opt("--otlp-queue", arg, 1, 1000000, &o->otlp_queue);
		break;
	case 'v': o->verbose++; break;
	case 'q': o->quiet = true; break;
	case 'h': o->help = true; break;
	case 'V': o->version = true; break;
	default:
		return -EINVAL;
	}
	return err;
}

/* Edits (insert, delete, replace) that turn a[0..n) into b: Levenshtein. */
static size_t edit_distance(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b), row[64], diag, up;

	if (n >= 64 || m >= 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			up = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return row[m];
}

/*
 * The long option the user most likely meant by name (without its dashes
 * or "=VALUE"): every one it is a prefix of, when it is more than one
 * (getopt refuses an ambiguous prefix), else the nearest by a few edits.
 * "" when none is close.
 */
static void near_options(const char *name, char *out, size_t sz)
{
	size_t n = strcspn(name, "="), best = n / 3 + 1, off = 0, prefixed = 0;
	const struct option *pick = NULL;

	*out = '\0';
	for (const struct option *lo = long_opts; lo->name && n; lo++)
		if (!strncmp(lo->name, name, n))
			prefixed++;
	for (const struct option *lo = long_opts; lo->name && n; lo++) {
		size_t d;

		if (prefixed > 1) {
			if (!strncmp(lo->name, name, n) && off < sz)
				off += snprintf(out + off, sz - off, "%s--%s", off ? ", " : "",
						lo->name);
			continue;
		}
		d = edit_distance(name, n, lo->name);
		if (d < best) {
			best = d;
			pick = lo;
		}
	}
	if (pick)
		snprintf(out, sz, "--%s", pick->name);
}

/*
 * --off-cpu and --wall: what they need, and the options that only mean
 * something with them.
 */
static int check_offcpu(const struct options *o)
{
	const char *opt = o->min_block_set ? "-m/--min-block-time" :
			  o->max_block_set ? "-M/--max-block-time" : "--state";

	if (o->kind == PROFILE_CPU && (o->min_block_set || o->max_block_set || o->state_set))
		return usage_error("%s is for blocked time: add --off-cpu or --wall", opt);
	if (o->min_block_us > o->max_block_us) {
		pr_err("-m %llu is above -M %llu: no block could count (see --help)",
		       (unsigned long long)o->min_block_us, (unsigned long long)o->max_block_us);
		return -EINVAL;
	}
	if (o->kind == PROFILE_OFF_CPU && (o->freq_set || o->period || !event__is_default(&o->event)))
		return usage_error("%s samples no event: drop -F, -c and -e, or use --wall for both",
				   "--off-cpu");
	if (o->kind != PROFILE_WALL)
		return 0;
	if (!o->pids && !o->tids && !o->cmd)
		return usage_error("%s shows one program's time: give -p PID, -L TID or -- COMMAND",
				   "--wall");
	if (o->period)
		return usage_error("%s weighs samples by time: give -F HZ, not -c", "--wall");
	if (!event__is_clock(&o->event))
		return usage_error("--wall weighs samples by time: -e %s is not a clock; use -e cpu-clock or task-clock",
				   o->event.name);
	return 0;
}

static int check_conflicts(const struct options *o)
{
	if (o->pids && o->tids)
		return usage_error("%s: -p and -L cannot be used together", "conflicting options");
	if (o->user_only && o->kernel_only)
		return usage_error("%s: -U and -K cannot be used together", "conflicting options");
	if (o->freq_set && event__is_tracepoint(&o->event))
		return usage_error("-F cannot be used with a tracepoint (-e %s): every hit is counted, or every Nth with -c N",
				   o->event.name);
	if (o->freq_set && o->period)
		return usage_error("%s: -F and -c cannot be used together", "conflicting options");
	if (o->quiet && o->verbose)
		return usage_error("%s: -q and -v cannot be used together", "conflicting options");
	if (o->cmd && (o->pids || o->tids))
		return usage_error("conflicting options: %s and a command after -- cannot be used together",
				   o->pids ? "-p" : "-L");
	if (o->user && !o->cmd)
		return usage_error("%s is who runs a command: profile --user USER -- COMMAND [ARGS...]",
				   "--user");
	return check_offcpu(o);
}

/*
 * What a perf user means by `profile make -j8`: said with the usage error.
 * The command is the first positional that is not a number.
 */
static const char *guess_command(char **pos, int nr)
{
	for (int i = 0; i < nr; i++)
		if (strspn(pos[i], "0123456789") != strlen(pos[i]))
			return pos[i];
	return NULL;
}

/* "; to profile a command, put it after --: ..." or nothing. */
static void command_hint(char *buf, size_t sz, char **pos, int nr)
{
	const char *cmd = guess_command(pos, nr);

	buf[0] = '\0';
	if (cmd)
		snprintf(buf, sz, "; to profile a command, put it after --: profile [OPTIONS] -- %s ...",
			 cmd);
}

/*
 * getopt's own messages are off: name the offending argument in one line.
 * After a word that is not a duration (`profile make -j8`), say where a
 * command goes.
 */
static int bad_option(int c, char **argv, char **pos, int nr_pos)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, 0 }, near[256] = "";
	char hint[256];

	if (optopt && strncmp(arg, "--", 2))
		arg = shortopt;
	else if (c == '?')
		near_options(arg + 2, near, sizeof(near));
	command_hint(hint, sizeof(hint), pos, nr_pos);
	/* The argument is echoed, but not at any length. */
	if (c == ':')
		pr_err("option '%.64s' needs a value%s (see --help)", arg, hint);
	else if (strchr(near, ','))
		pr_err("option '%.64s' is ambiguous: %s%s (see --help)", arg, near, hint);
	else if (near[0])
		pr_err("unknown option '%.64s'; did you mean '%s'?%s (see --help)", arg, near, hint);
	else
		pr_err("unknown option '%.64s'%s (see --help)", arg, hint);
	return -EINVAL;
}

/*
 * The positionals before "--" (collected in order by getopt, see
 * short_opts): the duration, at most one.
 */
static int parse_duration(struct options *o, char **pos, int nr)
{
	char msg[512], hint[256];
	__u64 v;
	int err;

	if (nr == 0)
		return 0;
	command_hint(hint, sizeof(hint), pos, nr);
	err = options__parse_u64(pos[0], 1, 1ULL << 32, &v);
	if (err == -ERANGE)
		return parse_num_opt("duration", pos[0], 1, 1ULL << 32, &v);
	if (err) {
		snprintf(msg, sizeof(msg), "duration '%s' is not a valid number%s", pos[0], hint);
		return usage_error("%s", msg);
	}
	if (nr > 1) {
		snprintf(msg, sizeof(msg), "too many arguments: '%s' after the duration%s",
			 pos[1], hint);
		return usage_error("%s", msg);
	}
	o->duration = v;
	return 0;
}

/*
 * getopt stopped at "--" (with "-" leading short_opts it stops nowhere
 * else before argc): the rest is the command and its arguments.  A "--"
 * with nothing after it ends the options, as it always did.
 */
static void take_command(struct options *o, int argc, char **argv)
{
	if (optind < argc)
		o->cmd = &argv[optind];
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, i ? argv[i] : "profile");
	}
	return s;
}

int options__parse(struct options *o, int argc, char **argv)
{
	char **pos = NULL;
	int c, err, nr_pos = 0;

	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	o->stack_storage = DEFAULT_STACK_STORAGE;
	o->hash_storage = DEFAULT_HASH_STORAGE;
	o->unwind_mem = UNWIND_MEM_DEFAULT;
	o->interp = true;
	o->debuginfod = true;
	o->debuginfod_wait = DEBUGINFOD_WAIT_S;
	o->max_stack_depth = MAX_STACK_DEPTH;
	o->min_width = 0.1;
	o->min_block_us = 1;
	o->max_block_us = UINT64_MAX / 1000;
	o->state_mask = OFF_STATE_ALL;
	event__parse(DEFAULT_EVENT, &o->event);
	o->cmdline = join_args(argc, argv);
	optind = 0;
	opterr = 0;
	pos = calloc(argc + 1, sizeof(*pos));
	if (!pos) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		if (c == 1) {
			pos[nr_pos++] = optarg;
			continue;
		}
		if (c == '?' || c == ':')
			err = bad_option(c, argv, pos, nr_pos);
		else
			err = parse_one(o, c, optarg);
		if (err)
			goto out;
	}
	take_command(o, argc, argv);
	err = 0;
	if (o->help || o->version || o->list_events)
		goto out;
	err = parse_duration(o, pos, nr_pos);
	free(pos);
	pos = NULL;
	if (err)
		return err;
	/* A tracepoint has no frequency: every hit, unless -c says every Nth. */
	if (!o->freq_set && !o->period && event__is_tracepoint(&o->event))
		o->period = 1;
	if (!o->freq_set && !o->period)
		o->freq = event__is_clock(&o->event) ? DEFAULT_FREQ : DEFAULT_EVENT_FREQ;
	err = settle_format(o);
	if (err)
		return err;
	return check_conflicts(o);
out:
	free(pos);
	return err;
}

void options__free(struct options *o)
{
	free(o->pids);
	free(o->tids);
	free(o->cmdline);
	command_user__free(&o->run_as);
	if (o->otlp_config)
		otlp_config__free(o->otlp_config);
	free(o->otlp_config);
	o->otlp_config = NULL;
	o->pids = o->tids = NULL;
	o->cmdline = NULL;
}
