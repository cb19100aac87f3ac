/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one way messages reach the user: a line on stderr, "profile: " and
 * the text.  An error says what failed and what to do; a warning says what
 * the run does instead; info and debug lines are printed from -v and -vv.
 *
 * Who prints: the layers that know what the user asked for (options and
 * checks, the run, the BPF session, the writer, kernel symbols).  Parsers
 * and tables below them (usyms, ufiles, elf_file, debuginfo, perfmap,
 * procmaps, tracker) print nothing: they return a negative errno, and
 * their caller reports it once, in words the user can act on.  The one
 * exception is the end of a run, where each module prints its own
 * statistics and warnings (lib/report_pass.h).
 *
 * Under systemd, when stderr is journald's stream (JOURNAL_STREAM names
 * its device and inode), each line starts with sd-daemon(3)'s priority,
 * "<3>" error, "<4>" warning, "<6>" info, "<7>" debug, and the "profile: "
 * is left out: journald records the program's name itself.
 */
#ifndef LOG_H
#define LOG_H

#include <stdbool.h>

enum log_level {
	LOG_ERROR,
	LOG_WARN,
	LOG_INFO,	/* -v */
	LOG_DEBUG,	/* -vv */
};

/* From -v: 0 prints errors and warnings, 1 adds info, 2 debug; -1 (-q)
 * prints errors only. */
void log__set_verbosity(int verbose);
int log__verbosity(void);

__attribute__((format(printf, 2, 3)))
void log__print(enum log_level level, const char *fmt, ...);

/* One line, no "profile: " prefix, for bcc's own "WARNING: ..." lines;
 * printed whatever the verbosity.  log__raw's priority for journald is
 * info's, log__raw_at's the level given. */
__attribute__((format(printf, 1, 2)))
void log__raw(const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
void log__raw_at(enum log_level level, const char *fmt, ...);

/* Whether fd is the stream JOURNAL_STREAM ("DEV:INODE") names. */
bool log__is_journal(int fd);

#define pr_err(...) log__print(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) log__print(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log__print(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log__print(LOG_DEBUG, __VA_ARGS__)

#endif /* LOG_H */
