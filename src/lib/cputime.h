/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where the profiler's own CPU time went, for the -v line "CPU: ...".
 *
 * The ledger is the process's, as its threads are: one table under one
 * lock, which any thread may add to.  Each part is a name (a static
 * string) and the nanoseconds charged to it.  Two ways to charge:
 *
 *  - a thread of its own: cputime__thread_start(part) first thing in the
 *    thread, cputime__thread_end() last.  While the thread lives, the
 *    report reads its CPU clock (pthread_getcpuclockid()); at its end, the
 *    thread folds its clock into the part.  Threads of one part add up.
 *
 *  - a section of the main thread: t = cputime__now(); ...;
 *    cputime__section(part, t).  The main thread's time not in a section
 *    is reported as its rest.
 *
 * The clocks are the kernel's per-thread run time, exact to the
 * nanosecond; the total is getrusage(RUSAGE_SELF)'s user + sys, which
 * counts the same run time, of every thread, so the parts add up to it
 * but for threads no one registered (a library's own) and the
 * microseconds between a thread's end and its exit.
 */
#ifndef CPUTIME_H
#define CPUTIME_H

#include <linux/types.h>

/* The calling thread's CPU time so far, ns. */
__u64 cputime__now(void);

/* The main thread's time since t0 (cputime__now()) goes to part. */
void cputime__section(const char *part, __u64 t0);

/*
 * Give part its place in the line before its threads start, so that the
 * order of the line is the order of the setup, not the threads' race.
 */
void cputime__declare(const char *part);

/* The calling thread's time goes to part: see above. */
void cputime__thread_start(const char *part);
void cputime__thread_end(void);

/* The -v line, from the main thread: the parts and the total. */
void cputime__report(void);

#endif /* CPUTIME_H */
