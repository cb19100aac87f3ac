// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profile: sample stack traces on every CPU at a timed interval, count them
 * in the kernel, and print them at the end (or every -i interval).
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "cli/opts.h"
#include "run/run.h"
#include "run/command.h"
#include "loader/events.h"
#include "lib/log.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* While a command runs, the first one is the command's: command.h. */
	if (command__take_signal(sig, si))
		return;
	stop_requested = sig;
}

/* Only to wake the run's wait when the command exits (run.c, run_over()). */
static void on_child(int sig)
{
	(void)sig;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's lines carry their own "libbpf: " prefix. */
	if (log__verbosity() < 2 && level != LIBBPF_WARN)
		return 0;
	if (log__verbosity() < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void set_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	struct sigaction child = { .sa_handler = on_child,
				   .sa_flags = SA_RESTART | SA_NOCLDSTOP };

	sigemptyset(&sa.sa_mask);
	/*
	 * Each ends the run early: the samples so far are printed.  With a
	 * command, the first is left to it (command__take_signal()).
	 */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	/* Sleeps (poll, nanosleep) end on it; other calls are restarted. */
	sigemptyset(&child.sa_mask);
	sigaction(SIGCHLD, &child, NULL);
	/* A closed pipe shows as EPIPE from write(), handled there. */
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	struct limits lim = {};
	struct options o;
	int status;

	/*
	 * Big blocks always in their own mappings, returned when freed.
	 * glibc's default raises the threshold to the size of the last such
	 * block freed: after the kernel BTF's (5.5 MB) parse, libbpf's own two
	 * copies come from the heap, whose top later allocations pin: 12 MiB
	 * of RSS held for the whole run.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (options__parse(&o, argc, argv)) {
		options__free(&o);
		return EXIT_USAGE;
	}
	if (o.help || o.version || o.list_events) {
		if (o.help)
			options__usage(stdout);
		else if (o.version)
			printf("profile %s\n", PROFILE_VERSION);
		else
			events__list(stdout);
		options__free(&o);
		return 0;
	}
	if (limits__read(&lim)) {
		pr_err("cannot read /sys/devices/system/cpu/online: %s",
			strerror(errno));
		options__free(&o);
		return 1;
	}
	status = EXIT_USAGE;
	if (!options__check(&o, &lim)) {
		log__set_verbosity(o.quiet ? -1 : o.verbose);
		libbpf_set_print(libbpf_print);
		command__save_signals();
		set_signals();
		status = run__exec(&o, &lim, &stop_requested);
	}
	limits__free(&lim);
	options__free(&o);
	return status;
}
