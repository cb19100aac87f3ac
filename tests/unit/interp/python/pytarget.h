/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Live CPython interpreters for test_pycode and test_pyversions: finding
 * the interpreters this machine has, running tests/unit/interp/python/pycode_target.py
 * in one, parsing what it prints (the ground truth) and reading its memory
 * with process_vm_readv.  Header-only: each unit test is one .c file.
 * Include after unit.h and ../fixtures/skip.h.
 */
#ifndef PYTARGET_H
#define PYTARGET_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interp/python/pycode.h"

/* The interpreter the tests require: Debian's 3.11 (python3.11-minimal). */
#define PY_REQUIRED "/usr/bin/python3.11"

/* An interpreter to test: its path and a name for TAP lines. */
struct pyinterp {
	char path[PATH_MAX];
	char name[96];
};

#define PY_INTERPS_MAX 32

static inline bool pyinterp__runs(const char *path)
{
	return !access(path, X_OK);
}

static inline void pyinterp__add(struct pyinterp *v, int *nr, const char *path,
			  const char *name)
{
	int i;

	if (*nr >= PY_INTERPS_MAX)
		return;
	for (i = 0; i < *nr; i++)
		if (!strcmp(v[i].path, path))
			return;
	snprintf(v[*nr].path, sizeof(v[*nr].path), "%s", path);
	snprintf(v[*nr].name, sizeof(v[*nr].name), "%s", name);
	(*nr)++;
}

static inline int pyinterp__cmp(const void *a, const void *b)
{
	return strcmp(((const struct pyinterp *)a)->name,
		      ((const struct pyinterp *)b)->name);
}

/*
 * The interpreters to test beside PY_REQUIRED (which the caller tests
 * always, skipping visibly when it is missing): Debian's debug build,
 * every python3.8 to 3.13 that pyenv installed ($PYENV_ROOT, else
 * ~/.pyenv), and the paths in $PROFILE_PYTHONS (colon-separated).
 */
static inline int pyinterp__find_more(struct pyinterp *v)
{
	const char *root = getenv("PYENV_ROOT"), *home = getenv("HOME");
	const char *extra = getenv("PROFILE_PYTHONS");
	char dir[PATH_MAX], path[PATH_MAX + 300], name[96];
	struct dirent *e;
	int nr = 0;
	DIR *d;

	if (pyinterp__runs("/usr/bin/python3.11d"))
		pyinterp__add(v, &nr, "/usr/bin/python3.11d", "debian-3.11d");
	if (root)
		snprintf(dir, sizeof(dir), "%s/versions", root);
	else
		snprintf(dir, sizeof(dir), "%s/.pyenv/versions", home ? home : "/root");
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		unsigned int minor;

		if (sscanf(e->d_name, "3.%u.", &minor) != 1 || minor < 8 || minor > 13)
			continue;
		snprintf(path, sizeof(path), "%s/%s/bin/python3", dir, e->d_name);
		snprintf(name, sizeof(name), "pyenv-%.60s", e->d_name);
		if (pyinterp__runs(path))
			pyinterp__add(v, &nr, path, name);
	}
	if (d)
		closedir(d);
	qsort(v, (size_t)nr, sizeof(*v), pyinterp__cmp);
	while (extra && *extra) {
		size_t n = strcspn(extra, ":");

		snprintf(path, sizeof(path), "%.*s", (int)n, extra);
		if (n && pyinterp__runs(path))
			pyinterp__add(v, &nr, path, path);
		extra += n + (extra[n] == ':');
	}
	return nr;
}

/* One code object as the interpreter described it. */
struct pyrun {
	__u32 start, end, line;
};

struct pyexpect {
	__u64 id;
	__u32 firstlineno;
	char *name, *file;
	__u32 units;
	struct pyrun *runs;
	size_t nr_runs;
};

/* A frame of the main thread's stack while it blocks. */
struct pywalk {
	__u64 code;
	__u32 line;
};

struct pytarget {
	pid_t pid;
	int in;				/* its stdin: closing it ends it */
	char scratch[PATH_MAX];
	unsigned int major, minor;
	struct pytypes types;
	__u64 runtime;
	__u64 main_ident, spin_ident;
	struct pywalk walk[8];
	int nr_walk;
	struct pyexpect *codes;
	size_t nr_codes;
	char *out;			/* all it printed */
};

/* Where tests/unit/interp/python/FILE is: found as fx_srcdir() finds the fixtures. */
static inline const char *pytarget__unit_file(const char *file, char *path, size_t len)
{
	const char *top = getenv("PROFILE_TOP");
	char exe[PATH_MAX];
	ssize_t n;

	if (top) {
		snprintf(path, len, "%.*s/tests/unit/interp/python/%s", PATH_MAX - 64, top, file);
		return path;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(path, len, "tests/unit/interp/python/%s", file);
		return path;
	}
	exe[n] = '\0';
	snprintf(path, len, "%.*s/../tests/unit/interp/python/%s", PATH_MAX - 64,
		 dirname(dirname(exe)), file);
	return path;
}

/* Hex to bytes, NUL-terminated; "-" is the empty string.  NULL if bad. */
static inline char *pytarget__unhex(const char *hex)
{
	size_t n = strlen(hex), i;
	char *s;

	if (!strcmp(hex, "-"))
		return strdup("");
	if (n % 2)
		return NULL;
	s = malloc(n / 2 + 1);
	if (!s)
		return NULL;
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1) {
			free(s);
			return NULL;
		}
		s[i] = (char)b;
	}
	s[n / 2] = '\0';
	return s;
}

static inline int pytarget__parse_line(struct pytarget *t, char *line)
{
	char name[8192], file[16384];
	struct pyexpect *c;
	unsigned long long a, b, x;
	unsigned int u, w, z;

	if (sscanf(line, "version %u %u", &t->major, &t->minor) == 2)
		return 0;
	if (sscanf(line, "types %llu %llu %llu", &a, &b, &x) == 3) {
		t->types = (struct pytypes){ .code = a, .str = b, .bytes = x };
		return 0;
	}
	if (sscanf(line, "runtime %llu", &a) == 1) {
		t->runtime = a;
		return 0;
	}
	if (sscanf(line, "thread %llu %llu", &a, &b) == 2) {
		t->main_ident = a;
		t->spin_ident = b;
		return 0;
	}
	if (sscanf(line, "walk %llu %u", &a, &u) == 2) {
		if (t->nr_walk == 8)
			return -1;
		t->walk[t->nr_walk++] = (struct pywalk){ a, u };
		return 0;
	}
	if (sscanf(line, "code %llu %u %8191s %16383s %u", &a, &u, name, file, &w) == 5) {
		c = realloc(t->codes, (t->nr_codes + 1) * sizeof(*c));
		if (!c)
			return -1;
		t->codes = c;
		c = &t->codes[t->nr_codes++];
		*c = (struct pyexpect){ .id = a, .firstlineno = u, .units = w };
		c->name = pytarget__unhex(name);
		c->file = pytarget__unhex(file);
		return c->name && c->file ? 0 : -1;
	}
	if (sscanf(line, "lines %u %u %u", &u, &w, &z) == 3) {
		struct pyrun *r;

		if (!t->nr_codes)
			return -1;
		c = &t->codes[t->nr_codes - 1];
		r = realloc(c->runs, (c->nr_runs + 1) * sizeof(*r));
		if (!r)
			return -1;
		c->runs = r;
		c->runs[c->nr_runs++] = (struct pyrun){ u, w, z };
		return 0;
	}
	return -1;
}

/* Read its output up to "ready", 30 s at most. */
static inline int pytarget__read_out(struct pytarget *t, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), *save, *line;
	ssize_t n;

	if (!buf)
		return -1;
	for (;;) {
		buf[len] = '\0';
		if (strstr(buf, "\nready\n"))
			break;
		if (len + 1 >= cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				goto fail;
			buf = b;
			cap *= 2;
		}
		if (poll(&pfd, 1, 30000) != 1)
			goto fail;
		n = read(fd, buf + len, cap - 1 - len);
		if (n <= 0)
			goto fail;
		len += (size_t)n;
	}
	t->out = strdup(buf);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "ready"))
			break;
		if (pytarget__parse_line(t, line)) {
			fprintf(stderr, "  pytarget: cannot parse \"%.80s\"\n", line);
			goto fail;
		}
	}
	free(buf);
	return 0;
fail:
	free(buf);
	return -1;
}

static inline void pytarget__stop(struct pytarget *t)
{
	size_t i;

	if (t->in >= 0)
		close(t->in);
	t->in = -1;
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
	t->pid = 0;
	for (i = 0; i < t->nr_codes; i++) {
		free(t->codes[i].name);
		free(t->codes[i].file);
		free(t->codes[i].runs);
	}
	free(t->codes);
	free(t->out);
	t->codes = NULL;
	t->out = NULL;
	t->nr_codes = 0;
	if (t->scratch[0]) {
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->scratch);
		if (system(cmd))
			fprintf(stderr, "  pytarget: cannot remove %s\n", t->scratch);
	}
	t->scratch[0] = '\0';
}

/* Run the target in python; 0 when it printed everything and waits. */
static inline int pytarget__start(struct pytarget *t, const char *python)
{
	char tmpl[] = "/tmp/profile-pycode-XXXXXX";
	char script[PATH_MAX];
	int to[2], from[2], err;

	memset(t, 0, sizeof(*t));
	t->in = -1;
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(t->scratch, sizeof(t->scratch), "%s", tmpl);
	if (pipe2(to, O_CLOEXEC))
		return -1;
	if (pipe2(from, O_CLOEXEC)) {
		close(to[0]);
		close(to[1]);
		return -1;
	}
	pytarget__unit_file("pycode_target.py", script, sizeof(script));
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (!t->pid) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl(python, python, "-S", script, t->scratch, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	t->in = to[1];
	err = pytarget__read_out(t, from[0]);
	close(from[0]);
	if (err) {
		pytarget__stop(t);
		return -1;
	}
	return 0;
}

/*
 * Wait until its main thread blocks reading stdin (/proc/PID/syscall:
 * read(0, ...)), 10 s at most: "ready" is printed just before the calls
 * that get there.
 */
static inline int pytarget__wait_blocked(struct pytarget *t)
{
	struct timespec ms = { 0, 10 * 1000 * 1000 };
	char path[64], line[256];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)t->pid);
	for (i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		bool blocked = false;

		if (!f)
			return -1;
		if (fgets(line, sizeof(line), f))
			blocked = !strncmp(line, "0 0x0 ", 6);
		fclose(f);
		if (blocked)
			return 0;
		nanosleep(&ms, NULL);
	}
	return -1;
}

/* pymem over process_vm_readv: all of it, or -EFAULT. */
static inline int pytarget__vm_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static inline struct pymem pytarget__mem(struct pytarget *t)
{
	return (struct pymem){ .read = pytarget__vm_read, .ctx = &t->pid };
}

/*
 * A TAP line for a test named at run time: name, then detail (the
 * interpreter); counted like RUN_S().
 */
static inline void pytarget__run(const char *name, const char *detail,
			  void (*fn)(const struct pyinterp *), const struct pyinterp *py)
{
	int before = unit_failed_checks;

	skip_why = NULL;
	fn(py);
	if (unit_failed_checks != before) {
		unit_failed++;
		printf("not ok - %s %s\n", name, detail);
	} else {
		unit_passed++;
		printf("ok - %s %s%s%s\n", name, detail,
		       skip_why ? " # SKIP " : "", skip_why ? skip_why : "");
	}
	fflush(stdout);
}

#endif /* PYTARGET_H */
