// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exact bytes log.c writes: plain on a file or terminal, sd-daemon
 * priorities without the program's name when stderr is journald's. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "lib/log.h"

/* Every line log.c can print, at -vv so that none is filtered. */
static void print_all(void)
{
	log__set_verbosity(2);
	pr_err("cannot open %s: %s", "x.folded", "No such file or directory");
	pr_warn("%d CPUs offline", 2);
	pr_info("interval %d", 3);
	pr_debug("debug %s", "line");
	log__raw("WARNING: %d stack traces could not be displayed.", 4);
	log__raw_at(LOG_WARN, "WARNING: %d samples were dropped", 5);
	log__raw("profile: wrote %s", "a.svg");
	log__set_verbosity(0);
}

/*
 * stderr sent to a fresh file while print_all() runs; JOURNAL_STREAM set
 * to journal(dev, ino of that file) or unset.  Returns what was written.
 */
static char *captured(const char *(*journal)(const struct stat *st, char *buf, size_t size))
{
	char path[] = "/tmp/test_log.XXXXXX", env[64];
	static char out[4096];
	int fd = mkstemp(path), saved = dup(2);
	struct stat st;
	ssize_t n;

	if (fd < 0 || saved < 0 || fstat(fd, &st))
		return NULL;
	unlink(path);
	if (journal)
		setenv("JOURNAL_STREAM", journal(&st, env, sizeof(env)), 1);
	else
		unsetenv("JOURNAL_STREAM");
	fflush(stderr);
	dup2(fd, 2);
	print_all();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	if (n < 0)
		return NULL;
	out[n] = '\0';
	return out;
}

static const char *same(const struct stat *st, char *buf, size_t size)
{
	snprintf(buf, size, "%llu:%llu", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	return buf;
}

static const char *other_inode(const struct stat *st, char *buf, size_t size)
{
	snprintf(buf, size, "%llu:%llu", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino + 1);
	return buf;
}

static const char *garbage(const struct stat *st, char *buf, size_t size)
{
	snprintf(buf, size, "%llu:%llux", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	return buf;
}

static const char plain[] =
	"profile: cannot open x.folded: No such file or directory\n"
	"profile: 2 CPUs offline\n"
	"profile: interval 3\n"
	"profile: debug line\n"
	"WARNING: 4 stack traces could not be displayed.\n"
	"WARNING: 5 samples were dropped\n"
	"profile: wrote a.svg\n";

TEST(plain_without_journal)
{
	CHECK_STR(captured(NULL), plain);
}

TEST(journal_priorities)
{
	CHECK_STR(captured(same),
		  "<3>cannot open x.folded: No such file or directory\n"
		  "<4>2 CPUs offline\n"
		  "<6>interval 3\n"
		  "<7>debug line\n"
		  "<6>WARNING: 4 stack traces could not be displayed.\n"
		  "<4>WARNING: 5 samples were dropped\n"
		  "<6>wrote a.svg\n");
}

/* A JOURNAL_STREAM inherited from a service whose stderr the user has
 * since redirected: the file gets plain lines. */
TEST(other_stream_is_plain)
{
	CHECK_STR(captured(other_inode), plain);
	CHECK_STR(captured(garbage), plain);
}

TEST(is_journal)
{
	struct stat st;
	char env[64];

	CHECK(!fstat(2, &st));
	setenv("JOURNAL_STREAM", same(&st, env, sizeof(env)), 1);
	CHECK(log__is_journal(2));
	setenv("JOURNAL_STREAM", "", 1);
	CHECK(!log__is_journal(2));
	setenv("JOURNAL_STREAM", "1:", 1);
	CHECK(!log__is_journal(2));
	unsetenv("JOURNAL_STREAM");
	CHECK(!log__is_journal(2));
}

int main(void)
{
	RUN(plain_without_journal);
	RUN(journal_priorities);
	RUN(other_stream_is_plain);
	RUN(is_journal);
	return unit_summary();
}
