// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for pruning the parsed files (usyms__forget_exited()): a file
 * that only forgotten processes mapped is freed, and opened again when a
 * new process maps it; a file that a process still known maps is kept,
 * whether its maps were read or copied at a fork.
 */
#include "fixtures/fixtures.h"
#include "symbols/usyms.h"
#include "unit.h"

static char dir[FX_DIR_MAX];
static char bin_a[PATH_MAX], bin_b[PATH_MAX];

/* One fixture, copied: two binaries with the same code, not one inode. */
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

/* Start path and read its target's address; 0 on failure. */
static unsigned long long start(const char *path, struct fx_child *c)
{
	if (fx_spawn(path, c))
		return 0;
	return fx_expect(c, "target");
}

static void check_target(struct usyms *u, pid_t pid, unsigned long long target,
			 const char *module)
{
	struct usym sym;

	CHECK_INT(usyms__resolve(u, (__u32)pid, target, &sym), 0);
	CHECK_STR(sym.name, "fixture_target");
	CHECK_STR(sym.module, module);
}

static struct usyms_stats stats(const struct usyms *u)
{
	struct usyms_stats st;

	usyms__stats(u, &st);
	return st;
}

/*
 * a and b map the same libraries; a exits: its binary, and only it, is
 * freed.  b resolves still, its files not opened again; a new process of
 * a opens a again, and nothing else.
 */
TEST(exited_only_file_freed)
{
	struct usyms *u = usyms__new();
	struct fx_child a = { 0 }, b = { 0 }, a2 = { 0 };
	unsigned long long ta = start(bin_a, &a), tb = start(bin_b, &b), ta2;
	struct usyms_stats st0, st1, st2;
	pid_t gone = a.pid;

	CHECK(u && ta && tb);
	if (!u || !ta || !tb)
		goto out;
	CHECK_INT(usyms__add_process(u, (__u32)a.pid), 0);
	CHECK_INT(usyms__add_process(u, (__u32)b.pid), 0);
	check_target(u, a.pid, ta, bin_a);
	st0 = stats(u);
	CHECK(st0.files >= 3);		/* a, b and libc at least */
	CHECK_INT(st0.files_pruned, 0);
	/* Nothing exited: nothing freed. */
	usyms__forget_exited(u);
	CHECK_INT(stats(u).files_pruned, 0);

	fx_kill(&a);
	CHECK_INT(usyms__exit(u, (__u32)gone), 0);
	check_target(u, gone, ta, bin_a);	/* until it is forgotten */
	usyms__forget_exited(u);
	st1 = stats(u);
	CHECK_INT(st1.files_pruned, 1);
	CHECK_INT(st1.files, st0.files);
	check_target(u, b.pid, tb, bin_b);
	CHECK_INT(stats(u).files, st0.files);

	ta2 = start(bin_a, &a2);
	CHECK(ta2 != 0);
	CHECK_INT(usyms__add_process(u, (__u32)a2.pid), 0);
	check_target(u, a2.pid, ta2, bin_a);
	st2 = stats(u);
	CHECK_INT(st2.files, st0.files + 1);
	CHECK_INT(st2.files_parsed, st0.files_parsed + 1);
	CHECK_INT(st2.files_pruned, 1);
out:
	fx_kill(&a);
	fx_kill(&b);
	fx_kill(&a2);
	usyms__free(u);
}

/*
 * Maps copied at a fork keep their files when the parent is forgotten;
 * once the child execs, no process maps any file and all are freed.
 */
TEST(forked_copy_keeps_files)
{
	struct usyms *u = usyms__new();
	struct fx_child a = { 0 }, c = { 0 };
	unsigned long long ta = start(bin_a, &a), tc = start(bin_b, &c);
	struct usyms_stats st0, st1;
	pid_t gone = a.pid;

	CHECK(u && ta && tc);
	if (!u || !ta || !tc)
		goto out;
	CHECK_INT(usyms__add_process(u, (__u32)a.pid), 0);
	/* c is alive: make it a child of a that has not exec()ed. */
	CHECK_INT(usyms__fork(u, (__u32)a.pid, (__u32)c.pid), 0);
	st0 = stats(u);
	fx_kill(&a);
	CHECK_INT(usyms__exit(u, (__u32)gone), 0);
	usyms__forget_exited(u);
	st1 = stats(u);
	CHECK_INT(st1.files_pruned, 0);
	check_target(u, c.pid, ta, bin_a);
	CHECK_INT(stats(u).files, st0.files);

	CHECK_INT(usyms__exec(u, (__u32)c.pid), 0);
	usyms__forget_exited(u);
	st1 = stats(u);
	CHECK(st1.files >= 2);		/* a and libc at least */
	CHECK_INT(st1.files_pruned, st1.files);
out:
	fx_kill(&a);
	fx_kill(&c);
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
	RUN(exited_only_file_freed);
	RUN(forked_copy_keeps_files);
	fx_rmdir(dir);
	return unit_summary();
}
