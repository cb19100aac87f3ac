// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for what usyms__forget_exited() frees besides files: the
 * string pool keeps only the module paths of processes still known (a
 * forgotten process's paths and JIT names go), and the demangled names
 * cache keeps only the names asked for since the last call.  What stays
 * still resolves to the same values.
 */
#include <stdlib.h>
#include <unistd.h>

#include "fixtures/fixtures.h"
#include "symbols/demangle.h"
#include "symbols/usyms.h"
#include "unit.h"

static char dir[FX_DIR_MAX];
static char bin_a[PATH_MAX], bin_b[PATH_MAX];

/* One fixture, copied: two binaries with two paths. */
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

static struct usyms_stats stats(const struct usyms *u)
{
	struct usyms_stats st;

	usyms__stats(u, &st);
	return st;
}

static void check_sym(struct usyms *u, pid_t pid, unsigned long long addr,
		      const char *name, const char *module)
{
	struct usym sym;

	CHECK_INT(usyms__resolve(u, (__u32)pid, addr, &sym), 0);
	CHECK_STR(sym.name, name);
	CHECK_STR(sym.module, module);
}

static int write_perfmap(pid_t pid, const char *text)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void rm_perfmap(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	unlink(path);
}

/* The pool bytes of a usyms that only ever knew pid. */
static __u64 pool_of(pid_t pid)
{
	struct usyms *u = usyms__new();
	__u64 n;

	CHECK(u != NULL);
	if (!u)
		return 0;
	CHECK_INT(usyms__add_process(u, (__u32)pid), 0);
	n = stats(u).str_bytes;
	usyms__free(u);
	return n;
}

/*
 * a has a JIT name and its own binary; once it exits and is forgotten,
 * the pool holds what a usyms that only knew b holds, and b resolves.
 */
TEST(pool_shrinks_to_live)
{
	struct usyms *u = usyms__new();
	struct fx_child a = { 0 }, b = { 0 };
	unsigned long long ta, tb, jit = 0;
	char line[512], name[300];
	struct usyms_stats st0, st1;
	pid_t gone;

	CHECK_INT(fx_spawn(bin_a, &a), 0);
	CHECK_INT(fx_spawn(bin_b, &b), 0);
	gone = a.pid;
	ta = fx_expect(&a, "target");
	tb = fx_expect(&b, "target");
	fx_send(&a, "jit\n");
	jit = fx_expect(&a, "jit");
	CHECK(u && ta && tb && jit);
	if (!u || !ta || !tb || !jit)
		goto out;
	memset(name, 'j', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(line, sizeof(line), "%llx 40 %s\n", jit, name);
	CHECK_INT(write_perfmap(a.pid, line), 0);
	CHECK_INT(usyms__add_process(u, (__u32)b.pid), 0);
	CHECK_INT(usyms__add_process(u, (__u32)a.pid), 0);
	check_sym(u, a.pid, ta, "fixture_target", bin_a);
	check_sym(u, a.pid, jit + 1, name, "[anon]");
	check_sym(u, b.pid, tb, "fixture_target", bin_b);
	st0 = stats(u);
	CHECK(st0.str_bytes >= sizeof(name) + strlen(bin_a) + strlen(bin_b));

	/* Nothing exited: only the JIT name, no mapping's path, goes. */
	usyms__forget_exited(u);
	CHECK_INT(stats(u).str_bytes, st0.str_bytes - sizeof(name));
	check_sym(u, a.pid, ta, "fixture_target", bin_a);

	fx_kill(&a);
	CHECK_INT(usyms__exit(u, (__u32)gone), 0);
	usyms__forget_exited(u);
	st1 = stats(u);
	CHECK(st1.str_bytes > 0);
	CHECK_INT(st1.str_bytes, pool_of(b.pid));
	check_sym(u, b.pid, tb, "fixture_target", bin_b);
	/* Resolves intern nothing new for b: the pool stays put. */
	CHECK_INT(stats(u).str_bytes, st1.str_bytes);
out:
	rm_perfmap(gone);
	fx_kill(&a);
	fx_kill(&b);
	usyms__free(u);
}

static const struct {
	const char *key, *mangled, *demangled;
} fns[] = {
	{ "cxx", "_ZNK7fixture6EngineIdE8multiplyEm",
	  "fixture::Engine<double>::multiply(unsigned long) const" },
	{ "rust", "_ZN7fixture4rust4func17h0123456789abcdefE",
	  "fixture::rust::func" },
	{ "rustv0", "_RNvNtCs1234_7fixture4rust2v0", "fixture::rust::v0" },
};

static const char *expected(size_t i)
{
	return fns[i].demangled;
}

/*
 * Names asked for since the last forget are kept (and resolve the same);
 * after a whole interval without being asked for, they are freed, and
 * demangled again when asked for once more.
 */
TEST(unused_names_freed)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long addr[3];
	__u64 demangled;
	size_t i;

	CHECK_INT(fx_spawn(bin_a, &c), 0);
	for (i = 0; i < 3; i++)
		CHECK((addr[i] = fx_expect(&c, fns[i].key)) != 0);
	CHECK(u != NULL);
	if (!u || !addr[0] || !addr[1] || !addr[2])
		goto out;
	for (i = 0; i < 3; i++)
		check_sym(u, c.pid, addr[i] + 1, expected(i), bin_a);
	CHECK_INT(stats(u).names, 3);
	demangled = stats(u).demangled;
	CHECK_INT(demangled, 3);

	usyms__forget_exited(u);	/* all asked for: all kept */
	CHECK_INT(stats(u).names, 3);
	check_sym(u, c.pid, addr[0], expected(0), bin_a);
	CHECK_INT(stats(u).demangled, demangled);

	usyms__forget_exited(u);	/* only the first asked for */
	CHECK_INT(stats(u).names, 1);
	check_sym(u, c.pid, addr[0] + 1, expected(0), bin_a);
	CHECK_INT(stats(u).demangled, demangled);

	usyms__forget_exited(u);
	usyms__forget_exited(u);
	CHECK_INT(stats(u).names, 0);
	for (i = 0; i < 3; i++)
		check_sym(u, c.pid, addr[i], expected(i), bin_a);
	CHECK_INT(stats(u).names, 3);
	CHECK_INT(stats(u).demangled, 6);
out:
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
	RUN(pool_shrinks_to_live);
	RUN(unused_names_freed);
	fx_rmdir(dir);
	return unit_summary();
}
