// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "lib/log.h"

/* The process's one verbosity, set once from -v before anything runs. */
static int verbosity;

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

void log__print(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!wanted(level))
		return;
	va_start(ap, fmt);
	fputs("profile: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void log__raw(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
