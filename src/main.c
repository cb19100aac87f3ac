// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profile: sample stack traces on every CPU at a timed interval, count them
 * in the kernel, and print them once at the end.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "opts.h"
#include "session.h"
#include "ksyms.h"
#include "usyms.h"
#include "symbolize.h"
#include "output.h"

static volatile sig_atomic_t stop_requested;

/* libbpf's print callback takes no context; -vv is all it needs to know. */
static int libbpf_verbosity;

static void on_signal(int sig)
{
	stop_requested = sig;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (libbpf_verbosity < 2 && level != LIBBPF_WARN)
		return 0;
	if (libbpf_verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void set_signals(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* bcc's header, word for word. */
static void print_header(FILE *out, const struct options *o)
{
	const char *stack = o->user_only ? "user" :
			    o->kernel_only ? "kernel" : "user + kernel";

	if (o->freq)
		fprintf(out, "Sampling at %llu Hertz of ", (unsigned long long)o->freq);
	else
		fprintf(out, "Sampling at every %llu events of ", (unsigned long long)o->period);
	if (o->pids)
		fprintf(out, "PID %s", o->pids_arg);
	else if (o->tids)
		fprintf(out, "TID %s", o->tids_arg);
	else
		fprintf(out, "all threads");
	fprintf(out, " by %s stack", stack);
	if (o->cpu >= 0)
		fprintf(out, " on CPU#%d", o->cpu);
	if (o->duration)
		fprintf(out, " for %llu secs.\n", (unsigned long long)o->duration);
	else
		fprintf(out, "... Hit Ctrl-C to end.\n");
	fflush(out);
}

/* Sleep until the duration ends or a signal asks us to stop. */
static void wait_for_end(const struct options *o)
{
	struct timespec end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += o->duration;
	while (!stop_requested) {
		if (!o->duration) {
			pause();
			continue;
		}
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) == 0)
			break;
	}
}

static __u64 counted_samples(const struct sample *s, size_t nr)
{
	__u64 sum = 0;

	for (size_t i = 0; i < nr; i++)
		sum += s[i].count;
	return sum;
}

static void report_counters(const __u64 *c, __u64 counted, const struct options *o)
{
	if (c[CNT_HASH_FULL])
		fprintf(stderr, "WARNING: %llu samples were dropped because the count map was full. Consider increasing --hash-storage-size.\n",
			(unsigned long long)c[CNT_HASH_FULL]);
	if (!o->verbose)
		return;
	fprintf(stderr,
		"profile: samples: taken %llu, counted %llu, filtered %llu, dropped %llu (count map full)\n"
		"profile: user stacks: eexist %llu, enomem %llu, efault %llu, other %llu\n"
		"profile: kernel stacks: eexist %llu, enomem %llu, efault %llu, other %llu\n"
		"profile: spilled stacks: stored %llu, spill map full %llu, read errors %llu\n"
		"profile: counted + filtered + dropped %s taken\n",
		(unsigned long long)c[CNT_TAKEN], (unsigned long long)counted,
		(unsigned long long)c[CNT_FILTERED], (unsigned long long)c[CNT_HASH_FULL],
		(unsigned long long)c[CNT_USER_EEXIST], (unsigned long long)c[CNT_USER_ENOMEM],
		(unsigned long long)c[CNT_USER_EFAULT], (unsigned long long)c[CNT_USER_OTHER],
		(unsigned long long)c[CNT_KERN_EEXIST], (unsigned long long)c[CNT_KERN_ENOMEM],
		(unsigned long long)c[CNT_KERN_EFAULT], (unsigned long long)c[CNT_KERN_OTHER],
		(unsigned long long)c[CNT_SPILLED], (unsigned long long)c[CNT_SPILL_FULL],
		(unsigned long long)c[CNT_SPILL_ERR],
		counted + c[CNT_FILTERED] + c[CNT_HASH_FULL] == c[CNT_TAKEN] ? "==" : "!=");
}

static struct ksyms *load_ksyms(void)
{
	struct ksyms *ks = ksyms__load("/proc/kallsyms");

	if (!ks) {
		fprintf(stderr, "profile: cannot read /proc/kallsyms: %s; kernel frames will be [unknown]\n",
			strerror(errno));
		return NULL;
	}
	if (ksyms__hidden(ks))
		fprintf(stderr, "profile: /proc/kallsyms shows only zero addresses (kernel.kptr_restrict, or no CAP_SYSLOG); kernel frames will be [unknown]\n");
	return ks;
}

static int write_error(int err)
{
	if (err == -EPIPE)
		return 0;	/* the reader has gone (| head): not our failure */
	fprintf(stderr, "profile: cannot write the output: %s\n", strerror(-err));
	return 1;
}

static int write_profile(FILE *out, const struct profile *prof,
			 const struct options *o, const struct output_opts *oo)
{
	switch (o->format) {
	case FMT_PLAIN:
		if (fputc('\n', out) == EOF)
			return -errno;
		return output_stacks(out, prof, oo);
	case FMT_FOLDED:
		return output_stacks(out, prof, oo);
	default:
		fprintf(stderr, "profile: --format %s is not built in\n", format_name(o->format));
		return -ENOTSUP;
	}
}

/* Drain, symbolize and print.  Returns the exit status. */
static int report(struct session *s, const struct options *o, struct ksyms *ks,
		  FILE *out)
{
	struct output_opts oo = {
		.folded = o->folded, .delimited = o->delimited,
		.annotations = o->annotations, .verbose = o->verbose > 0,
		.want_user = !o->kernel_only, .want_kernel = !o->user_only,
		.per_cpu = o->per_cpu, .per_thread = o->per_thread,
	};
	struct symbolizer sym = { .session = s, .ksyms = ks };
	struct profile prof = {};
	struct sample *samples = NULL;
	__u64 counters[NR_COUNTERS];
	size_t nr = 0;
	int err, status = 1;

	sym.usyms = usyms__new();
	if (!sym.usyms)
		fprintf(stderr, "profile: cannot set up user symbols: %s\n", strerror(errno));
	err = session__counters(s, counters);
	if (!err)
		err = session__drain(s, &samples, &nr);
	if (err) {
		fprintf(stderr, "profile: cannot read the BPF maps: %s\n", strerror(-err));
		goto out;
	}
	err = profile_build(&prof, &sym, samples, nr);
	if (err) {
		fprintf(stderr, "profile: cannot symbolize: %s\n", strerror(-err));
		goto out;
	}
	err = write_profile(out, &prof, o, &oo);
	if (!err && out != stdout && fclose(out))
		err = -errno;
	if (err) {
		status = write_error(err);
		goto out;
	}
	if (prof.missed_stacks)
		fprintf(stderr, "WARNING: %llu stack traces could not be displayed.%s\n",
			(unsigned long long)prof.missed_stacks,
			prof.missed_enomem ? " Consider increasing --stack-storage-size." : "");
	report_counters(counters, counted_samples(samples, nr), o);
	status = 0;
out:
	profile_free(&prof);
	free(samples);
	usyms__free(sym.usyms);
	return status;
}

static FILE *open_output(const struct options *o)
{
	FILE *f;

	if (!o->output)
		return stdout;
	f = fopen(o->output, "we");
	if (!f)
		fprintf(stderr, "profile: cannot open '%s' for writing: %s\n",
			o->output, strerror(errno));
	return f;
}

static int run(const struct options *o, const struct limits *lim, FILE *out)
{
	struct ksyms *ks = NULL;
	struct session *s;
	int status = 1;

	if (o->format == FMT_PLAIN)
		print_header(out, o);
	s = session__open(o);
	if (!s)
		return 1;
	if (session__configure(s, o) || session__load(s, o) ||
	    session__attach(s, o, lim))
		goto out;
	/* Read kernel symbols while the samples come in, not after. */
	ks = load_ksyms();
	wait_for_end(o);
	session__detach(s);
	/* A second Ctrl-C while printing ends the process at once. */
	signal(SIGINT, SIG_DFL);
	status = report(s, o, ks, out);
out:
	ksyms__free(ks);
	session__destroy(s);
	return status;
}

int main(int argc, char **argv)
{
	struct limits lim = {};
	struct options o;
	FILE *out;
	int status;

	if (options_parse(&o, argc, argv)) {
		options_free(&o);
		return EXIT_USAGE;
	}
	if (o.help || o.version) {
		if (o.help)
			options_usage(stdout);
		else
			printf("profile %s\n", PROFILE_VERSION);
		options_free(&o);
		return 0;
	}
	if (limits_read(&lim)) {
		fprintf(stderr, "profile: cannot read /sys/devices/system/cpu/online: %s\n",
			strerror(errno));
		options_free(&o);
		return 1;
	}
	if (options_check(&o, &lim)) {
		status = EXIT_USAGE;
		goto out;
	}
	out = open_output(&o);
	if (!out) {
		status = 1;
		goto out;
	}
	libbpf_verbosity = o.verbose;
	libbpf_set_print(libbpf_print);
	signal(SIGPIPE, SIG_IGN);
	set_signals(on_signal);
	status = run(&o, &lim, out);
out:
	limits_free(&lim);
	options_free(&o);
	return status;
}
