// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/log.h"

/* The process's one verbosity, set once from -v before anything runs. */
static int verbosity;

/* sd-daemon(3)'s syslog priorities, by level: err, warning, info, debug. */
static const char *const journal_priority[] = {
	[LOG_ERROR] = "<3>",
	[LOG_WARN] = "<4>",
	[LOG_INFO] = "<6>",
	[LOG_DEBUG] = "<7>",
};

/* What journald records itself (SYSLOG_IDENTIFIER), left out of its lines. */
static const char program[] = "profile: ";

void log__set_verbosity(int verbose)
{
	verbosity = verbose;
}

int log__verbosity(void)
{
	return verbosity;
}

static bool wanted(enum log_level level)
{
	return level == LOG_ERROR || (int)level - LOG_WARN <= verbosity;
}

bool log__is_journal(int fd)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char extra;

	if (!env || sscanf(env, "%llu:%llu%c", &dev, &ino, &extra) != 2)
		return false;
	if (fstat(fd, &st))
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/*
 * One line to stderr.  To journald: the priority first, without the
 * program's name, and written under the stream's lock so that threads'
 * lines do not mix (journald splits its stream at newlines).  Asked every
 * time rather than once: messages are few, and stderr may be redirected
 * (the unit tests do) after the first.
 */
static void emit(enum log_level level, bool named, const char *fmt, va_list ap)
{
	bool journal = log__is_journal(fileno(stderr));

	flockfile(stderr);
	if (journal) {
		fputs(journal_priority[level], stderr);
		/* log__raw's callers may name the program themselves. */
		if (!named && !strncmp(fmt, program, strlen(program)))
			fmt += strlen(program);
	} else if (named) {
		fputs(program, stderr);
	}
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void log__print(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!wanted(level))
		return;
	va_start(ap, fmt);
	emit(level, true, fmt, ap);
	va_end(ap);
}

void log__raw(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(LOG_INFO, false, fmt, ap);
	va_end(ap);
}

void log__raw_at(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, false, fmt, ap);
	va_end(ap);
}
