// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the user-space symbolizer: the test process itself (libc,
 * the vdso, its own code), and fixture processes that print the runtime
 * addresses of their functions, then exit, get deleted, or dlopen().
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "../fixtures/fixtures.h"
#include "usyms.h"
#include "unit.h"

static char dir[FX_DIR_MAX];
static char pie[PATH_MAX], nopie[PATH_MAX], slib[PATH_MAX];

static int build_fixtures(void)
{
	char lib[PATH_MAX];

	if (fx_tmpdir(dir))
		return -1;
	snprintf(pie, sizeof(pie), "%s/pie", dir);
	snprintf(nopie, sizeof(nopie), "%s/nopie", dir);
	snprintf(lib, sizeof(lib), "%s/fixlib.so", dir);
	snprintf(slib, sizeof(slib), "%s/fixlib-stripped.so", dir);
	if (fx_cc("fixture.c", "-fPIE -pie", pie) ||
	    fx_cc("fixture.c", "-fno-pie -no-pie", nopie) ||
	    fx_cc("fixlib.c", "-shared -fPIC", lib) ||
	    fx_sh("cp '%s' '%s' && strip '%s'", lib, slib, slib))
		return -1;
	return 0;
}

static __u32 self(void)
{
	return (__u32)getpid();
}

TEST(libc_function)
{
	struct usyms *u = usyms__new();
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	struct usym sym;

	CHECK(u && fn);
	if (!u || !fn)
		goto out;
	CHECK_INT(usyms__resolve(u, self(), (unsigned long)fn, &sym), 0);
	CHECK_STR(sym.name, "getpid");
	CHECK_INT(sym.offset, 0);
	CHECK(sym.module && strstr(sym.module, "/libc.so"));
	CHECK(sym.build_id != NULL);
	CHECK(sym.map_start <= (unsigned long)fn &&
	      (unsigned long)fn < sym.map_end);
	CHECK(sym.file_offset == (unsigned long)fn - sym.map_start +
				 sym.map_pgoff);
	CHECK_INT(usyms__resolve(u, self(), (unsigned long)fn + 1, &sym), 0);
	CHECK_STR(sym.name, "getpid");
	CHECK_INT(sym.offset, 1);
out:
	usyms__free(u);
}

/* This test binary is not stripped: its own functions have names. */
TEST(own_code)
{
	struct usyms *u = usyms__new();
	unsigned long fn = (unsigned long)&usyms__resolve;
	char exe[PATH_MAX];
	struct usym sym;
	ssize_t n;

	CHECK(u != NULL);
	if (!u)
		return;
	CHECK_INT(usyms__resolve(u, self(), fn + 4, &sym), 0);
	CHECK_STR(sym.name, "usyms__resolve");
	CHECK_INT(sym.offset, 4);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	CHECK_STR(sym.module, exe);
	usyms__free(u);
}

/* An address nm finds in a dump of our vdso, resolved through /proc. */
TEST(vdso)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct usyms *u = usyms__new();
	unsigned long long value = 0;
	char dump[PATH_MAX];
	struct usym sym;
	FILE *f;

	CHECK(u && base);
	if (!u || !base)
		goto out;
	CHECK_INT(usyms__resolve(u, self(), base, &sym), 0);
	CHECK_STR(sym.module, "[vdso]");
	snprintf(dump, sizeof(dump), "%s/vdso.so", dir);
	f = fopen(dump, "w");
	CHECK(f != NULL);
	if (!f)
		goto out;
	fwrite((void *)base, 1, sym.map_end - sym.map_start, f);
	fclose(f);
	CHECK_INT(fx_nm(dump, "clock_gettime", true, &value), 0);
	/* The vdso is linked at 0, so its load bias is its base. */
	CHECK_INT(usyms__resolve(u, self(), base + value + 3, &sym), 0);
	CHECK(sym.name && (!strcmp(sym.name, "clock_gettime") ||
			   !strcmp(sym.name, "__vdso_clock_gettime")));
	CHECK_INT(sym.offset, 3);
out:
	usyms__free(u);
}

TEST(unmapped_and_gone)
{
	struct usyms *u = usyms__new();
	struct usyms_stats st;
	struct usym sym;
	pid_t pid;

	CHECK(u != NULL);
	if (!u)
		return;
	CHECK_INT(usyms__resolve(u, self(), 0x10, &sym), -ENOENT);
	/* The first miss re-reads the maps; the next ones do not. */
	CHECK_INT(usyms__resolve(u, self(), 0x20, &sym), -ENOENT);
	usyms__stats(u, &st);
	CHECK_INT(st.maps_reads, 2);

	pid = fork();
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	CHECK_INT(usyms__add_process(u, (__u32)pid), -ENOENT);
	CHECK_INT(usyms__resolve(u, (__u32)pid, 0x1000, &sym), -ENOENT);
	CHECK_INT(usyms__add_process(u, (__u32)pid), -ENOENT);
	usyms__stats(u, &st);
	CHECK_INT(st.maps_reads, 2);
	CHECK_INT(st.procs, 2);
	CHECK_INT(st.procs_gone, 1);
	usyms__free(u);
}

/* Resolve target (+5) in a fixture child and check name and module. */
static void check_target(struct usyms *u, const struct fx_child *c,
			 unsigned long long target, const char *module)
{
	struct usym sym;

	CHECK_INT(usyms__resolve(u, (__u32)c->pid, target, &sym), 0);
	CHECK_STR(sym.name, "fixture_target");
	CHECK_INT(sym.offset, 0);
	CHECK_STR(sym.module, module);
	CHECK_INT(usyms__resolve(u, (__u32)c->pid, target + 5, &sym), 0);
	CHECK_STR(sym.name, "fixture_target");
	CHECK_INT(sym.offset, 5);
}

static void check_child(const char *path)
{
	struct fx_child c = { 0 };
	unsigned long long target, nosize;
	struct usyms *u = usyms__new();
	struct usym sym;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(path, &c), 0);
	target = fx_expect(&c, "target");
	nosize = fx_expect(&c, "nosize");
	CHECK(target && nosize);
	if (!u || !target || !nosize)
		goto out;
	/* No add_process: looked up on first use. */
	check_target(u, &c, target, path);
	CHECK_INT(usyms__resolve(u, (__u32)c.pid, nosize + 4, &sym), 0);
	CHECK_STR(sym.name, "fixture_nosize");
	CHECK_INT(sym.offset, 4);
out:
	fx_kill(&c);
	usyms__free(u);
}

TEST(child_pie)
{
	check_child(pie);
}

TEST(child_nopie)
{
	check_child(nopie);
}

/* Added while it runs, resolved after it was killed and reaped. */
TEST(child_exited)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long target;
	struct usyms_stats st;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(pie, &c), 0);
	target = fx_expect(&c, "target");
	CHECK(target != 0);
	if (!u || !target)
		goto out;
	CHECK_INT(usyms__add_process(u, (__u32)c.pid), 0);
	CHECK_INT(usyms__add_process(u, (__u32)c.pid), 0);
	{
		struct fx_child gone = c;

		fx_kill(&c);
		check_target(u, &gone, target, pie);
	}
	usyms__stats(u, &st);
	CHECK_INT(st.maps_reads, 1);
out:
	fx_kill(&c);
	usyms__free(u);
}

/* The binary is deleted while it runs, before we ever look at it. */
TEST(child_deleted)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long target;
	char copy[PATH_MAX];

	CHECK(u != NULL);
	snprintf(copy, sizeof(copy), "%s/doomed", dir);
	CHECK_INT(fx_sh("cp '%s' '%s'", pie, copy), 0);
	CHECK_INT(fx_spawn(copy, &c), 0);
	target = fx_expect(&c, "target");
	CHECK(target != 0);
	CHECK_INT(unlink(copy), 0);
	if (u && target)
		check_target(u, &c, target, copy);
	fx_kill(&c);
	usyms__free(u);
}

/* A library dlopen()ed after we read the maps; it is stripped, too. */
TEST(child_dlopen)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long target, alpha;
	char cmd[PATH_MAX + 16];
	struct usym sym;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(pie, &c), 0);
	target = fx_expect(&c, "target");
	CHECK(target != 0);
	if (!u || !target)
		goto out;
	CHECK_INT(usyms__add_process(u, (__u32)c.pid), 0);
	snprintf(cmd, sizeof(cmd), "dlopen %s\n", slib);
	fx_send(&c, cmd);
	alpha = fx_expect(&c, "lib");
	CHECK(alpha != 0);
	CHECK_INT(usyms__resolve(u, (__u32)c.pid, alpha + 2, &sym), 0);
	CHECK_STR(sym.name, "fixlib_alpha");
	CHECK_INT(sym.offset, 2);
	CHECK_STR(sym.module, slib);
	/* What was known before is still there. */
	check_target(u, &c, target, pie);
out:
	fx_kill(&c);
	usyms__free(u);
}

/* Two processes of one binary: each file is opened and parsed once. */
TEST(files_shared)
{
	struct usyms *u = usyms__new();
	struct fx_child a = { 0 }, b = { 0 };
	unsigned long long ta, tb;
	struct usyms_stats st1, st2;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(nopie, &a), 0);
	CHECK_INT(fx_spawn(nopie, &b), 0);
	ta = fx_expect(&a, "target");
	tb = fx_expect(&b, "target");
	CHECK(ta && tb);
	if (!u || !ta || !tb)
		goto out;
	check_target(u, &a, ta, nopie);
	usyms__stats(u, &st1);
	check_target(u, &b, tb, nopie);
	usyms__stats(u, &st2);
	CHECK(st1.files >= 2);	/* the fixture and libc at least */
	CHECK_INT(st2.files, st1.files);
	CHECK_INT(st2.files_parsed, st1.files_parsed);
	CHECK_INT(st2.vdsos, st1.vdsos);
	CHECK_INT(st2.procs, 2);
out:
	fx_kill(&a);
	fx_kill(&b);
	usyms__free(u);
}

/* Executable memory with no file, or with one we must not parse. */
TEST(odd_mappings)
{
	struct usyms *u = usyms__new();
	struct usyms_stats st;
	struct usym sym;
	void *anon, *mfd = MAP_FAILED;
	int fd;

	CHECK(u != NULL);
	if (!u)
		return;
	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED);
	fd = memfd_create("fixture-jit", MFD_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0 && !ftruncate(fd, 4096))
		mfd = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	CHECK(mfd != MAP_FAILED);

	CHECK_INT(usyms__resolve(u, self(), (unsigned long)anon + 8, &sym), 0);
	CHECK_STR(sym.module, "[anon]");
	CHECK(sym.name == NULL);
	if (mfd != MAP_FAILED) {
		CHECK_INT(usyms__resolve(u, self(), (unsigned long)mfd, &sym), 0);
		CHECK_STR(sym.module, "/memfd:fixture-jit");
		CHECK(sym.name == NULL);
	}
	/* Neither counts as a file. */
	usyms__stats(u, &st);
	CHECK(st.files >= 2);
	CHECK_INT(st.files, st.files_parsed);
	if (mfd != MAP_FAILED)
		munmap(mfd, 4096);
	if (fd >= 0)
		close(fd);
	munmap(anon, 4096);
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
	RUN(libc_function);
	RUN(own_code);
	RUN(vdso);
	RUN(unmapped_and_gone);
	RUN(child_pie);
	RUN(child_nopie);
	RUN(child_exited);
	RUN(child_deleted);
	RUN(child_dlopen);
	RUN(files_shared);
	RUN(odd_mappings);
	fx_rmdir(dir);
	return unit_summary();
}
