// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* -p and -L targets that exit: see targets.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "run/targets.h"
#include "lib/log.h"

int targets__init(struct targets *t, const struct options *o)
{
	t->pids = o->pids != NULL;
	t->ids = o->pids ? o->pids : o->tids;
	t->nr = o->pids ? o->nr_pids : o->nr_tids;
	t->gone = calloc(o->nr_pids + o->nr_tids + 1, sizeof(bool));
	if (!t->gone) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

bool targets__check(struct targets *t)
{
	char path[32];

	for (size_t i = 0; i < t->nr && t->gone; i++) {
		if (t->gone[i])
			continue;
		/*
		 * A process: kill(0) asks the kernel in our own pid namespace,
		 * which /proc may not show (mounted for another); a zombie
		 * still counts.  A thread: only /proc/TID tells.
		 */
		snprintf(path, sizeof(path), "/proc/%u", t->ids[i]);
		if (t->pids ? kill((pid_t)t->ids[i], 0) == 0 || errno != ESRCH
			    : access(path, F_OK) == 0)
			continue;
		t->gone[i] = true;
		t->nr_gone++;
		if (!t->pids)
			pr_warn("TID %u has exited; profiling continues until the end", t->ids[i]);
		else if (t->nr_gone < t->nr)
			pr_warn("PID %u has exited; profiling the other processes goes on", t->ids[i]);
		else
			pr_warn("PID %u has exited, the last of the -p processes: the profile ends",
				t->ids[i]);
	}
	return t->pids && t->nr && t->nr_gone == t->nr;
}

void targets__free(struct targets *t)
{
	free(t->gone);
	t->gone = NULL;
}
