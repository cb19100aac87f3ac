// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rusage OUT.json -- CMD...: run CMD, write its resource use to OUT.json.
 *
 * Like /usr/bin/time, but with microsecond CPU times (GNU time rounds %U and
 * %S to 10 ms, too coarse for a profiler that uses 50 ms in all) and JSON
 * out.  In C rather than Python because ru_maxrss also covers the forked
 * child before its exec: a Python wrapper would report at least its own
 * ~10 MiB.  SIGINT and SIGTERM are passed on to CMD, so bench/run can stop
 * an open-ended tool through this wrapper.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = forward };
	struct rusage ru;
	double t0, t1;
	int status, code;
	FILE *f;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: rusage OUT.json -- CMD...\n");
		return 2;
	}
	t0 = now();
	child = fork();
	if (child < 0) {
		perror("rusage: fork");
		return 1;
	}
	if (child == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "rusage: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (wait4(child, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("rusage: wait4");
			return 1;
		}
	t1 = now();
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fprintf(f, "{\"start\": %.6f, \"end\": %.6f, \"wall\": %.6f, \"user\": %.6f, "
		"\"sys\": %.6f, \"maxrss_kb\": %ld, \"inblock\": %ld, \"majflt\": %ld, "
		"\"exit\": %d}\n", t0, t1, t1 - t0,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, ru.ru_inblock,
		ru.ru_majflt, code);
	fclose(f);
	return code;
}
