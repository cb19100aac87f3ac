// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for pid reuse in usyms: a process that a new one under its
 * pid replaced stays named, by its start, for its samples; records and
 * notes of a process that had the pid before the one known are told
 * apart (usyms__current(), usyms__add_noted()); a mapping from before the
 * maps were read is left alone.
 */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fixtures/fixtures.h"
#include "symbols/procfs.h"
#include "symbols/usyms.h"
#include "unit.h"

static char dir[FX_DIR_MAX];
static char bin_a[PATH_MAX], bin_b[PATH_MAX];

static int build_fixtures(void)
{
	if (fx_tmpdir(dir))
		return -1;
	snprintf(bin_a, sizeof(bin_a), "%s/a", dir);
	snprintf(bin_b, sizeof(bin_b), "%s/b", dir);
	if (fx_cc("fixture.c", "-fPIE -pie", bin_a))
		return -1;
	return fx_sh("cp '%s' '%s'", bin_a, bin_b);
}

static unsigned long long start(const char *path, struct fx_child *c)
{
	if (fx_spawn(path, c))
		return 0;
	return fx_expect(c, "target");
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* pid's start as the kernel's notes give it, near enough: from /proc. */
static __u64 start_of(pid_t pid)
{
	__u64 ticks = 0;
	int dirfd = procfs__open_pid((__u32)pid);

	if (dirfd < 0)
		return 0;
	if (procfs__starttime(dirfd, &ticks))
		ticks = 0;
	close(dirfd);
	return ticks ? procfs__start_monotonic_ns(ticks) + 1 : 0;
}

/* A macro, for the line of a failure. */
#define check_named(u, pid, st, addr, mod)						\
	do {										\
		struct usym sym_;							\
											\
		CHECK_INT(usyms__resolve_start(u, (__u32)(pid), st, addr, &sym_), 0);	\
		CHECK_STR(sym_.name, "fixture_target");					\
		CHECK_STR(sym_.module, mod);						\
	} while (0)

/*
 * a is sampled and exits; a process forked from b takes its pid.  Samples
 * by a's start are still named from a's binary, those by the new one's
 * from b's (the maps it copied), any other start is no one's.
 */
TEST(replaced_process_named_by_start)
{
	struct usyms *u = usyms__new();
	struct fx_child a = { 0 }, b = { 0 };
	unsigned long long ta = start(bin_a, &a), tb = start(bin_b, &b);
	__u64 sa = start_of(a.pid), snew;
	pid_t pid = a.pid;
	struct usyms_stats st;
	struct usym sym;

	CHECK(u && ta && tb && sa);
	if (!u || !ta || !tb || !sa)
		goto out;
	CHECK_INT(usyms__add_noted(u, (__u32)pid, sa), 0);
	check_named(u, pid, (__u32)sa, ta, bin_a);
	CHECK_INT(usyms__add_process(u, (__u32)b.pid), 0);

	fx_kill(&a);
	CHECK(usyms__current(u, (__u32)pid, mono_ns()));
	CHECK_INT(usyms__exit(u, (__u32)pid), 0);
	/* Well after a's start, as a pid goes round all pid_max pids between. */
	snew = mono_ns() > sa + 100000000ULL ? mono_ns() : sa + 100000000ULL;
	CHECK_INT(usyms__fork_at(u, (__u32)b.pid, (__u32)pid, snew), 0);
	CHECK_INT(usyms__add_noted(u, (__u32)pid, snew - 1000), 0);
	usyms__stats(u, &st);
	CHECK_INT(st.procs_retired, 1);

	check_named(u, pid, (__u32)sa, ta, bin_a);
	check_named(u, pid, (__u32)(snew - 1000), tb, bin_b);
	check_named(u, pid, (__u32)sa, ta, bin_a);
	CHECK_INT(usyms__resolve_start(u, (__u32)pid, (__u32)sa + 7, ta, &sym), -ESRCH);
	/* Without a start (a kernel that does not say): the pid's process now. */
	check_named(u, pid, 0, tb, bin_b);

	/* After the report both are forgotten. */
	usyms__forget_exited(u);
	CHECK(usyms__resolve_start(u, (__u32)pid, (__u32)sa, ta, &sym) != 0);
out:
	fx_kill(&a);
	fx_kill(&b);
	usyms__free(u);
}

/*
 * Records and notes older than the process known under the pid are of
 * another process; a fork record a round after the note is the same one.
 */
TEST(stale_records_told_apart)
{
	struct usyms *u = usyms__new();
	struct fx_child a = { 0 };
	unsigned long long ta = start(bin_a, &a);
	__u64 sa = start_of(a.pid);

	CHECK(u && ta && sa);
	if (!u || !ta || !sa)
		goto out;
	CHECK(usyms__current(u, (__u32)a.pid, 1));	/* not known: any */
	CHECK_INT(usyms__add_noted(u, (__u32)a.pid, sa), 0);
	CHECK(!usyms__current(u, (__u32)a.pid, sa - 1));
	CHECK(usyms__current(u, (__u32)a.pid, sa));
	CHECK(usyms__current(u, (__u32)a.pid, mono_ns()));
	CHECK_INT(usyms__add_noted(u, (__u32)a.pid, sa - 1), -ESTALE);
	/* Its own fork record, applied late, leaves it as it is. */
	CHECK_INT(usyms__fork_at(u, (__u32)getpid(), (__u32)a.pid, sa + 1000), 0);
	check_named(u, a.pid, (__u32)sa, ta, bin_a);
	CHECK_INT(usyms__add_noted(u, (__u32)a.pid, sa), 0);
	check_named(u, a.pid, (__u32)sa, ta, bin_a);
out:
	fx_kill(&a);
	usyms__free(u);
}

/* A mapping recorded before the maps were read is in them, or went. */
TEST(mapping_older_than_maps_left_alone)
{
	struct usyms *u = usyms__new();
	struct fx_child a = { 0 };
	unsigned long long ta = start(bin_a, &a);
	__u64 sa = start_of(a.pid), t0 = mono_ns();
	struct usyms_mapping m = { .start = 0x10000, .end = 0x11000, .prot = PROT_EXEC,
				   .path = bin_b };
	struct usym sym;
	struct stat sb;

	CHECK(u && ta && sa && !stat(bin_b, &sb));
	if (!u || !ta || !sa)
		goto out;
	m.ino = sb.st_ino;
	m.maj = major(sb.st_dev);
	m.min = minor(sb.st_dev);
	/* The maps are read with a coarse clock: past its tick. */
	usleep(20000);
	CHECK_INT(usyms__add_noted(u, (__u32)a.pid, sa), 0);
	m.time = t0;
	CHECK_INT(usyms__add_mapping(u, (__u32)a.pid, &m), 0);
	CHECK_INT(usyms__resolve_start(u, (__u32)a.pid, (__u32)sa, 0x10010, &sym), -ENOENT);
	m.time = mono_ns() + 1000000000ULL;
	CHECK_INT(usyms__add_mapping(u, (__u32)a.pid, &m), 0);
	CHECK_INT(usyms__resolve_start(u, (__u32)a.pid, (__u32)sa, 0x10010, &sym), 0);
	CHECK_STR(sym.module, bin_b);
out:
	fx_kill(&a);
	usyms__free(u);
}

int main(void)
{
	if (build_fixtures()) {
		fprintf(stderr, "cannot build the fixtures with cc\n");
		printf("not ok - build_fixtures\n");
		fx_rmdir(dir);
		return 1;
	}
	RUN(replaced_process_named_by_start);
	RUN(stale_records_told_apart);
	RUN(mapping_older_than_maps_left_alone);
	fx_rmdir(dir);
	return unit_summary();
}
