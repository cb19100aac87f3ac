// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The profiled command: fork, hold, exec, wait, as perf record does for
 * `perf record -- CMD`.  Two close-on-exec pipes: profile writes one byte
 * on the first to let the child exec; the child writes its errno on the
 * second if the exec fails, and the exec itself closes it when it works,
 * so that profile reads either an errno or end-of-file.  With --user, the
 * child becomes that user between the go and the exec: groups, gid, uid,
 * then capabilities, in that order (a step after setuid could not undo
 * what it left), and a failed step is reported on the same pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "run/command.h"
#include "bpf/profile.h"
#include "lib/log.h"

struct command {
	const char *name;	/* argv[0], for messages */
	const char *user;	/* --user's name, for messages; NULL without */
	pid_t pid;
	int go_fd;		/* write end: one byte lets it exec; -1 once used */
	int err_fd;		/* read end: the exec's errno, or EOF once it ran */
	int pidfd;		/* readable once it exits (command__wake_fd()); -1 */
	bool released;		/* told to exec */
	int exec_err;		/* -errno: the exec failed */
	bool exited;		/* seen exited, maybe not reaped */
	bool reaped;
	int wstatus;		/* from waitpid(), once reaped */
};

/*
 * For the signal handler: the command while it may still run, and how
 * many stop signals came meanwhile (command__take_signal()).
 */
static volatile sig_atomic_t signal_pid;
static volatile sig_atomic_t signals_taken;

/*
 * The signals profile handles or ignores: the command gets them back as
 * profile found them, ignored (a background job's SIGINT, nohup's SIGHUP)
 * or not.
 */
static const int profile_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD,
};
#define NR_PROFILE_SIGNALS (sizeof(profile_signals) / sizeof(profile_signals[0]))
static bool ignored_at_start[NR_PROFILE_SIGNALS];

void command__save_signals(void)
{
	struct sigaction old;

	for (size_t i = 0; i < NR_PROFILE_SIGNALS; i++)
		ignored_at_start[i] = !sigaction(profile_signals[i], NULL, &old) &&
				      old.sa_handler == SIG_IGN;
}

/* What getpwnam(3) may leave in errno for a user that is not there. */
static bool not_found(int err)
{
	return !err || err == ENOENT || err == ESRCH || err == EBADF || err == EPERM;
}

int command_user__lookup(struct command_user *u, const char *user)
{
	struct passwd *pw;
	char *end;
	unsigned long id;

	memset(u, 0, sizeof(*u));
	errno = 0;
	pw = getpwnam(user);
	if (!pw && *user >= '0' && *user <= '9') {
		errno = 0;
		id = strtoul(user, &end, 10);
		if (!*end && id < (uid_t)-1)
			pw = getpwuid((uid_t)id);
	}
	if (!pw && !not_found(errno)) {
		pr_err("--user '%.64s': cannot look it up: %s", user, strerror(errno));
		return -errno;
	}
	if (!pw) {
		pr_err("--user '%.64s': no such user in the passwd database (see --help)", user);
		return -EINVAL;
	}
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->name = strdup(pw->pw_name);
	/* getgrouplist() says how many groups there are when they do not fit. */
	for (int n = 32; u->name;) {
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(*g));
		int want = n;

		if (!g)
			break;
		u->groups = g;
		if (getgrouplist(u->name, u->gid, g, &want) >= 0) {
			u->nr_groups = want;
			return 0;
		}
		n = want > n ? want : 2 * n;
	}
	pr_err("out of memory");
	command_user__free(u);
	return -ENOMEM;
}

void command_user__free(struct command_user *u)
{
	free(u->name);
	free(u->groups);
	memset(u, 0, sizeof(*u));
}

/* What the child writes on the error pipe: the step that failed, its errno. */
enum child_step {
	STEP_EXEC,
	STEP_GROUPS,
	STEP_GID,
	STEP_UID,
	STEP_CAPS,
};

static const char *const step_names[] = {
	[STEP_EXEC] = "exec",
	[STEP_GROUPS] = "setgroups",
	[STEP_GID] = "setgid",
	[STEP_UID] = "setuid",
	[STEP_CAPS] = "dropping capabilities",
};

/*
 * In the child: become u.  Setting every uid to one that is not 0 clears
 * the permitted and effective capabilities already, unless securebits
 * keep them: clear them and the ambient set anyway.  Root keeps them,
 * as its exec would give them back.  0, or the step that failed.
 */
static int become(const struct command_user *u)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};

	if (setgroups((size_t)u->nr_groups, u->groups))
		return STEP_GROUPS;
	if (setresgid(u->gid, u->gid, u->gid))
		return STEP_GID;
	if (setresuid(u->uid, u->uid, u->uid))
		return STEP_UID;
	if (u->uid == 0)
		return 0;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) ||
	    syscall(SYS_capset, &hdr, none))
		return STEP_CAPS;
	return 0;
}

/* In the child: wait for the go, become the user, then exec; never returns. */
static void __attribute__((noreturn)) child(char *const argv[], const struct command_user *u,
					    int go_fd, int err_fd)
{
	int msg[2] = { STEP_EXEC, 0 };
	char go;
	ssize_t n;

	for (size_t i = 0; i < NR_PROFILE_SIGNALS; i++)
		signal(profile_signals[i], ignored_at_start[i] ? SIG_IGN : SIG_DFL);
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	/* End of file: profile failed, or died, before sampling began. */
	if (n != 1)
		_exit(EXIT_NOT_FOUND);
	if (u && u->name)
		msg[0] = become(u);
	if (msg[0] == STEP_EXEC)
		execvp(argv[0], argv);
	msg[1] = errno;
	if (write(err_fd, msg, sizeof(msg)) != sizeof(msg))
		_exit(EXIT_NOT_FOUND);
	_exit(msg[0] == STEP_EXEC && msg[1] == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE);
}

struct command *command__start(char *const argv[], const struct command_user *user)
{
	struct command *c = calloc(1, sizeof(*c));
	int go[2] = { -1, -1 }, err[2] = { -1, -1 };

	if (!c) {
		pr_err("out of memory");
		return NULL;
	}
	c->name = argv[0];
	c->user = user ? user->name : NULL;
	c->go_fd = c->err_fd = c->pidfd = -1;
	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		pr_err("cannot make a pipe to start '%s': %s", c->name, strerror(errno));
		goto fail;
	}
	/* Nothing buffered may be written twice, by the child too. */
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0) {
		pr_err("cannot start '%s': fork: %s", c->name, strerror(errno));
		goto fail;
	}
	if (c->pid == 0) {
		close(go[1]);
		close(err[0]);
		child(argv, user, go[0], err[1]);
	}
	close(go[0]);
	close(err[1]);
	c->go_fd = go[1];
	c->err_fd = err[0];
	/* Without it (before 5.3), the exit is seen at the run's next tick. */
	c->pidfd = syscall(SYS_pidfd_open, c->pid, 0);
	signals_taken = 0;
	signal_pid = c->pid;
	return c;
fail:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	free(c);
	return NULL;
}

pid_t command__pid(const struct command *c)
{
	return c->pid;
}

int command__wake_fd(const struct command *c)
{
	return c ? c->pidfd : -1;
}

/* Block until it has exited; *stop ends the wait.  true once reaped. */
static bool reap(struct command *c, const volatile sig_atomic_t *stop)
{
	siginfo_t si;

	while (!c->reaped) {
		if (stop && *stop && !command__exited(c))
			return false;
		memset(&si, 0, sizeof(si));
		/* Seen exited first, reaped after: its pid is never signalled reused. */
		if (waitid(P_PID, c->pid, &si, WEXITED | WNOWAIT) && errno != EINTR)
			break;
		if (si.si_pid != c->pid)
			continue;
		signal_pid = 0;
		if (waitpid(c->pid, &c->wstatus, 0) == c->pid)
			c->exited = c->reaped = true;
	}
	return c->reaped;
}

int command__release(struct command *c)
{
	const char go = 1;
	int msg[2] = { STEP_EXEC, 0 }, e;
	ssize_t n;

	c->released = true;
	/* EPIPE: it died before the go (a signal); the pipe below says EOF. */
	do
		n = write(c->go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	close(c->go_fd);
	c->go_fd = -1;
	do
		n = read(c->err_fd, msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n != sizeof(msg))
		return 0;
	e = msg[1] > 0 ? msg[1] : EPERM;
	if (msg[0] <= STEP_EXEC || msg[0] > STEP_CAPS || !c->user)
		msg[0] = STEP_EXEC;
	if (msg[0] == STEP_EXEC)
		pr_err("cannot run '%s': %s", c->name, strerror(e));
	else
		pr_err("cannot run '%s' as %s: %s: %s", c->name, c->user, step_names[msg[0]],
		       strerror(e));
	/* Not found is the exec's alone: a failed setuid is 126, not 127. */
	if (msg[0] != STEP_EXEC && e == ENOENT)
		e = EPERM;
	reap(c, NULL);
	c->exec_err = -e;
	return -e;
}

bool command__exited(struct command *c)
{
	siginfo_t si;

	if (c->exited)
		return true;
	memset(&si, 0, sizeof(si));
	if (!waitid(P_PID, c->pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == c->pid)
		c->exited = true;
	return c->exited;
}

bool command__wait(struct command *c, const volatile sig_atomic_t *stop)
{
	return reap(c, stop);
}

int command__status(struct command *c)
{
	int sig;

	if (!c->reaped)
		return 1;
	if (WIFEXITED(c->wstatus))
		return WEXITSTATUS(c->wstatus);
	sig = WTERMSIG(c->wstatus);
	/* Shells say nothing of an interrupt or a closed pipe either. */
	if (sig != SIGINT && sig != SIGPIPE)
		pr_warn("'%s' was killed by signal %d (%s)%s", c->name, sig, strsignal(sig),
			WCOREDUMP(c->wstatus) ? ", core dumped" : "");
	return 128 + sig;
}

void command__free(struct command *c)
{
	if (!c)
		return;
	if (!c->released) {
		/* Never let run: profile failed before sampling began. */
		kill(c->pid, SIGKILL);
		reap(c, NULL);
	} else if (!c->reaped) {
		signal_pid = 0;
		pr_warn("'%s' (PID %d) is still running: profile stopped before it exited",
			c->name, (int)c->pid);
	}
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c);
}

bool command__take_signal(int sig, const siginfo_t *si)
{
	pid_t pid = signal_pid;

	if (!pid || signals_taken++)
		return false;
	if (si && (si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_code == SI_TKILL))
		kill(pid, sig);
	return true;
}

int command__end(struct command *c, int status, const volatile sig_atomic_t *stop,
		__u64 duration)
{
	int cmd_status;

	if (!c)
		return status;
	if (c->exec_err)
		return c->exec_err == -ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE;
	if (!c->released)
		return status;	/* profile failed first: command__free() kills it */
	if (!*stop && !command__exited(c) && duration)
		pr_warn("sampling ended after %llu s; waiting for '%s' (PID %d) to exit",
			(unsigned long long)duration, c->name, (int)c->pid);
	else if (!*stop && !command__exited(c))
		pr_warn("waiting for '%s' (PID %d) to exit", c->name, (int)c->pid);
	if (!command__wait(c, stop))
		return 128 + *stop;
	cmd_status = command__status(c);
	return cmd_status ? cmd_status : status;
}

/* How many processes were followed, and whether any found no room. */
void command__report(const struct command *c, const __u64 *counters,
		     enum report_pass pass)
{
	if (!c || pass != REPORT_WARN)
		return;
	if (counters[CNT_FOLLOW_FULL])
		pr_warn("%llu processes started by '%s' were not profiled: more than %u ran at once",
			(unsigned long long)counters[CNT_FOLLOW_FULL], c->name, FOLLOW_SET_SIZE);
	if (counters[CNT_FOLLOW_EXIT_LOST])
		pr_warn("%llu exits of '%s' threads found no kernel memory to mark them: the ends of some exits were not profiled",
			(unsigned long long)counters[CNT_FOLLOW_EXIT_LOST], c->name);
	pr_info("followed processes: %llu (the command and those it started), %llu found no room",
		(unsigned long long)counters[CNT_FOLLOWED], (unsigned long long)counters[CNT_FOLLOW_FULL]);
}
