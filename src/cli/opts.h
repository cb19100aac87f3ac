/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Command-line options: parsing and the checks that need only the command
 * line (opts.c), and the checks against the running system (checks.c).
 */
#ifndef OPTS_H
#define OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "loader/events.h"
#include "bpf/profile.h"
#include "unwind/unwind.h"
#include "output/config.h"	/* enum output_format, struct output_spec */
#include "run/command.h"	/* struct command_user */

#define DEFAULT_FREQ 49
/* With --otlp and no -i: a profile sent every this many seconds. */
#define OTLP_DEFAULT_INTERVAL 10
/*
 * Without -F or -c, an event other than a clock samples at this rate in the
 * kernel's frequency mode.  The kernel tunes the period only from overflows
 * that come less than two ticks apart, so at bcc's 49 Hz a software event
 * such as page-faults ends up with a period so long that it fires a few
 * times a run (measured here, 6.18: 2 samples a second at 49 and 200 Hz
 * against 370,000 faults a second, the same with perf record -F); at 999 Hz
 * it holds (580 a second).
 */
#define DEFAULT_EVENT_FREQ 999

/* Exit statuses. */
#define EXIT_USAGE 2

struct options {
	__u32 *pids;			/* -p, NULL when absent */
	size_t nr_pids;
	const char *pids_arg;		/* as typed, for the header */
	__u32 *tids;			/* -L */
	size_t nr_tids;
	const char *tids_arg;
	bool user_only;			/* -U */
	bool kernel_only;		/* -K */
	__u64 freq;			/* -F; 0 when a period is used */
	bool freq_set;			/* -F given: checked against the sysctl */
	__u64 period;			/* -c */
	bool delimited;			/* -d */
	bool annotations;		/* -a */
	bool include_idle;		/* -I */
	bool folded;			/* -f */
	/*
	 * Settled by options__parse(): the format asked for (--format, -f,
	 * --report, --top), else that of the first -o, else plain.
	 */
	enum output_format format;
	const char *format_opt;		/* the option that asked for it, or NULL */
	const char *output;		/* the first -o FILE, NULL for stdout */
	struct output_spec outputs[MAX_OUTPUTS];	/* every -o, in order */
	size_t nr_outputs;		/* 0: the report goes to stdout */
	bool quiet;			/* -q: no summary line, no warnings */
	const char *title;		/* --title, SVG */
	bool inverted;			/* --inverted, SVG icicle graph */
	double min_width;		/* --min-width, SVG, percent */
	__u32 stack_storage;
	__u32 hash_storage;
	__u32 max_stack_depth;		/* effective after options__check() */
	bool max_stack_depth_set;
	int cpu;			/* -C, -1 for all */
	const char *cgroup;
	const char *cgroupmap;
	const char *mntnsmap;
	struct event_spec event;	/* -e, cpu-clock by default */
	bool list_events;		/* --list-events */
	__u64 limit;			/* --limit: report lines, 0 for all */
	bool top;			/* --top: live report every interval */
	bool no_demangle;		/* --no-demangle */
	bool kallsyms;			/* --kallsyms */
	bool per_cpu;			/* --per-cpu */
	bool per_thread;		/* --per-thread */
	enum unwind_mode unwind;	/* --unwind, UNWIND_AUTO by default */
	__u64 unwind_mem;		/* --unwind-mem, bytes */
	bool unwind_debug;		/* --unwind-debug */
	bool interp;			/* walk interpreters' frames: auto (true) or off */
	bool interp_lines;		/* --lines, --py-lines: interpreter frames with their line */
	bool native_lines;		/* --lines: native frames with their DWARF line */
	bool inline_frames;		/* --inline: frames for inlined functions */
	bool debuginfod;		/* --debuginfod: auto (true) or off */
	__u64 debuginfod_wait;		/* --debuginfod-wait, seconds */
	bool unknown_module;		/* --unknown=module: [gzip], not [unknown] */
	bool names_given;		/* --names: short_names is the user's */
	bool short_names;		/* --names short (true) or full */
	int verbose;
	__u64 duration;			/* seconds; 0 means until signalled */
	__u64 interval;			/* -i seconds between reports, 0: one report */
	char **cmd;			/* -- CMD [ARGS...]: argv's tail, NULL-terminated;
					 * NULL when no command is given */
	const char *user;		/* --user, as typed: run the command as USER */
	/*
	 * --off-cpu, --wall: what the profile measures (enum profile_kind,
	 * output/config.h), and which blocks count: those of
	 * [min_block_us, max_block_us] microseconds whose switch-out was in
	 * one of the states of state_mask (OFF_STATE_*, bpf/profile.h).
	 */
	enum profile_kind kind;
	__u64 min_block_us;		/* -m, default 1 */
	__u64 max_block_us;		/* -M, default unlimited (U64_MAX) */
	bool min_block_set, max_block_set;
	__u32 state_mask;		/* --state, default OFF_STATE_ALL */
	bool state_set;
	struct command_user run_as;	/* ... looked up by options__check() */
	/*
	 * --otlp[=URL]: an output (FMT_OTLP, last in outputs) sent to a
	 * collector; otlp_config read from the URL and the environment by
	 * options__check(), freed by options__free().
	 */
	bool otlp;
	const char *otlp_url;		/* as typed, or NULL */
	__u64 otlp_queue;		/* --otlp-queue, 0: the default */
	struct otlp_config *otlp_config;
	bool help;
	bool version;
	char *cmdline;			/* argv joined, for SVG subtitles */
};

/* What the running system allows; read by limits__read(), faked in tests. */
struct limits {
	__u64 max_sample_rate;		/* kernel.perf_event_max_sample_rate */
	__u32 max_stack;		/* kernel.perf_event_max_stack */
	bool *cpu_online;		/* indexed by CPU number */
	int nr_cpus;			/* entries in cpu_online */
};

/*
 * Parse argv into opts.  On a usage error, prints one line to stderr and
 * returns -EINVAL; the caller exits EXIT_USAGE.
 */
int options__parse(struct options *opts, int argc, char **argv);

/*
 * Checks that need the system: rates, depth, CPUs, PIDs, cgroup paths.
 * Also settles defaults that depend on it (the stack depth).
 */
int options__check(struct options *opts, const struct limits *lim);

void options__free(struct options *opts);
void options__usage(FILE *out);

int limits__read(struct limits *lim);
void limits__free(struct limits *lim);

/* Parsers shared with tests. */
int options__parse_u64(const char *s, __u64 min, __u64 max, __u64 *out);
int options__parse_id_list(const char *s, __u32 **ids, size_t *nr);
int options__parse_cpu_list(const char *s, bool **online, int *nr);
enum output_format format__from_name(const char *name);
enum output_format format__from_path(const char *path);
/* The format a file name implies, or FMT_UNSET when it implies none. */
enum output_format format__implied(const char *path);
const char *format__name(enum output_format f);

#endif /* OPTS_H */
