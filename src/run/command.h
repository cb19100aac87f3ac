/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * profile -- CMD [ARGS...]: the command's life.  It is forked first, held
 * on a pipe until sampling is attached, then let exec; the run ends when
 * it exits, and profile exits with its status, as a shell would.
 *
 * It keeps profile's stdin, stdout, stderr, environment and process group
 * (so that the terminal's Ctrl-C reaches it as it would without the
 * profiler); it is forked before profile opens anything, and every file
 * profile opened by then is close-on-exec, so none of profile's own files
 * reach it.
 */
#ifndef COMMAND_H
#define COMMAND_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "lib/report_pass.h"

struct command;

/* Exit statuses of a command that could not be run, as shells give them. */
#define EXIT_NOT_FOUND 127
#define EXIT_NOT_EXECUTABLE 126

/*
 * Before profile sets its own signal handlers: note which signals it was
 * started with ignored, for the command to inherit as it would without
 * the profiler.
 */
void command__save_signals(void);

/*
 * Who the command runs as, with --user: a user of passwd, its group and its
 * supplementary groups (initgroups(3)'s).  Looked up before the fork, so
 * that the child makes only system calls between fork and exec.  Without
 * --user the command keeps profile's own identity: as root, with every
 * capability, as `sudo perf record -- COMMAND` does.
 */
struct command_user {
	char *name;		/* NULL: profile's own identity */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int nr_groups;
};

/*
 * USER, a name or a numeric uid, looked up in passwd into u.  0, or
 * -errno after printing one line.
 */
int command_user__lookup(struct command_user *u, const char *user);
void command_user__free(struct command_user *u);

/*
 * Fork argv[0] (searched in PATH), held before its exec until
 * command__release(); as user when user->name is set (user may be NULL).
 * Its groups, then its gid, then its uid are set in the child after the
 * fork, each checked, and a command that is not root also loses every
 * capability; a failure is reported as a failed exec.  NULL after
 * printing a one-line error.
 */
struct command *command__start(char *const argv[], const struct command_user *user);

/* Its pid, as seen from profile's PID namespace. */
pid_t command__pid(const struct command *c);

/*
 * Let it exec and wait for the exec's outcome: 0 once the new image runs,
 * or the exec's -errno, after printing "cannot run 'CMD': REASON" (or
 * "cannot run 'CMD' as USER: setuid: REASON"); the child has then exited
 * (command__status() is 127 or 126).
 */
int command__release(struct command *c);

/* Has it exited?  Does not reap it. */
bool command__exited(struct command *c);

/*
 * An fd that polls readable once the command has exited (a pidfd), for
 * the run's waits: a SIGCHLD that comes just before a wait begins would
 * wake nothing.  -1 without a command, or where the kernel has no pidfd.
 */
int command__wake_fd(const struct command *c);

/*
 * Wait until it exits, or until *stop is set (a second signal: see
 * command__take_signal()); stop may be NULL.  Returns true when it has
 * exited (and is reaped).
 */
bool command__wait(struct command *c, const volatile sig_atomic_t *stop);

/*
 * Once reaped: its status as a shell reports it, the exit code, or 128 + N
 * for a signal N.  A command killed by a signal other than SIGINT or SIGPIPE
 * gets one line naming it on stderr, as shells print one.
 */
int command__status(struct command *c);

/*
 * A command held before exec is killed and reaped; one that runs is left
 * running (profile was stopped before it exited: said in one line).
 */
void command__free(struct command *c);

/*
 * The exit status of a run with a command, status profile's own: the
 * shell's 127 or 126 when it could not be run; its own status when it
 * failed (a failing build is never hidden); else status.  Sampling over
 * (after duration seconds, 0 if none), the report is out and profile
 * waits for it; a second signal stops the wait, leaving it running, with
 * 128 + that signal.  c NULL: status.
 */
int command__end(struct command *c, int status, const volatile sig_atomic_t *stop,
		__u64 duration);

/*
 * From profile's handler of SIGINT, SIGTERM, SIGHUP and SIGQUIT, while a
 * command runs.  The first such signal is the command's to act on:
 * one the terminal sent went to the command too, and one sent to profile
 * alone with kill() (SI_USER, SI_QUEUE) is passed on to it; true: the run
 * goes on until the command exits.  A second one, or any signal when no
 * command runs, is profile's own: false, the run stops.  Async-signal-safe.
 */
bool command__take_signal(int sig, const siginfo_t *si);

/*
 * The run's last words (lib/report_pass.h), counters the sampler's: with the
 * warnings, the processes it and its children started that found no room
 * to be followed, and at -v how many were followed.  c NULL: nothing.
 */
void command__report(const struct command *c, const __u64 *counters,
		     enum report_pass pass);

#endif /* COMMAND_H */
