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
#include <sys/stat.h>
#include <time.h>

#include "fixtures/fixtures.h"
#include "symbols/demangle.h"
#include "symbols/procmaps.h"
#include "symbols/usyms.h"
#include "unit.h"
#include "fixtures/skip.h"

static char dir[FX_DIR_MAX];
static char pie[PATH_MAX], nopie[PATH_MAX], slib[PATH_MAX], lib[PATH_MAX];
static char linked[PATH_MAX];

static int build_fixtures(void)
{
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
	/* Stripped, with its symbols in a debug file beside it. */
	snprintf(linked, sizeof(linked), "%s/linked.so", dir);
	return fx_sh("cd '%s' && objcopy --only-keep-debug fixlib.so fixlib.debug && "
		     "strip --strip-all fixlib.so -o linked.so && "
		     "objcopy --add-gnu-debuglink=fixlib.debug linked.so", dir);
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

/* ---- the lifetime API, fed as perf's MMAP2 records would be ---- */

struct feed {
	struct usyms *u;
	__u32 pid;
	int added;
};

static int feed_vma(const struct vma *vma, void *ctx)
{
	struct feed *f = ctx;
	struct usyms_mapping m = {
		.start = vma->start, .end = vma->end, .pgoff = vma->pgoff,
		.ino = vma->inode, .maj = vma->dev_major, .min = vma->dev_minor,
		.prot = (vma->flags & VMA_EXEC ? PROT_EXEC : 0) |
			(vma->flags & VMA_READ ? PROT_READ : 0),
	};
	char path[PATH_MAX + 16];

	if (vma->kind == VMA_ANON)
		snprintf(path, sizeof(path), "//anon");
	else
		snprintf(path, sizeof(path), "%.*s%s", (int)vma->path_len,
			 vma->path, vma->deleted ? " (deleted)" : "");
	m.path = path;
	if (!usyms__add_mapping(f->u, f->pid, &m) && (m.prot & PROT_EXEC))
		f->added++;
	return 0;
}

/* What perf would have reported of pid's mappings so far. */
static int feed_maps(struct usyms *u, pid_t pid)
{
	struct feed f = { .u = u, .pid = (__u32)pid };

	if (procmaps__read((__u32)pid, feed_vma, &f) < 0)
		return -1;
	return f.added;
}

/*
 * Mappings learned while the process ran; then it is killed and its binary
 * deleted: it still resolves, and /proc was never read for it.
 */
TEST(events_exited_deleted)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long target;
	struct usyms_stats st;
	char copy[PATH_MAX];

	CHECK(u != NULL);
	snprintf(copy, sizeof(copy), "%s/shortlived", dir);
	CHECK_INT(fx_sh("cp '%s' '%s'", pie, copy), 0);
	CHECK_INT(fx_spawn(copy, &c), 0);
	target = fx_expect(&c, "target");
	CHECK(target != 0);
	if (!u || !target)
		goto out;
	CHECK(feed_maps(u, c.pid) >= 3);	/* the binary, ld.so, libc... */
	{
		struct fx_child gone = c;

		fx_kill(&c);
		CHECK_INT(unlink(copy), 0);
		CHECK_INT(usyms__exit(u, (__u32)gone.pid), 0);
		check_target(u, &gone, target, copy);
	}
	usyms__stats(u, &st);
	CHECK_INT(st.maps_reads, 0);
	CHECK(st.mappings >= 3);
	CHECK_INT(st.procs, 1);
out:
	fx_kill(&c);
	usyms__free(u);
}

/*
 * The records are read after the process is gone (a 50 ms process, read
 * late): its file is opened by the path we see, because it has the very
 * device and inode of the mapping; then deleted, it still resolves.
 */
TEST(events_read_late)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long target;
	char copy[PATH_MAX], maps[64], *text = NULL;
	size_t len;
	pid_t pid;

	CHECK(u != NULL);
	snprintf(copy, sizeof(copy), "%s/late", dir);
	CHECK_INT(fx_sh("cp '%s' '%s'", pie, copy), 0);
	CHECK_INT(fx_spawn(copy, &c), 0);
	target = fx_expect(&c, "target");
	pid = c.pid;
	snprintf(maps, sizeof(maps), "/proc/%d", pid);
	{
		int dirfd = open(maps, O_RDONLY | O_DIRECTORY);

		CHECK(dirfd >= 0);
		CHECK_INT(procmaps__read_text_at(dirfd, "maps", 1 << 20, &text,
						 &len), 0);
		close(dirfd);
	}
	fx_kill(&c);
	if (!u || !target || !text)
		goto out;
	{
		struct feed f = { .u = u, .pid = (__u32)pid };

		procmaps__parse(text, len, feed_vma, &f);
	}
	CHECK_INT(unlink(copy), 0);
	{
		struct fx_child gone = { .pid = pid };

		check_target(u, &gone, target, copy);
	}
	/* A path with another inode is refused, not trusted by name. */
	{
		struct usyms_mapping m = {
			.start = 0x10000, .end = 0x20000, .ino = 1,
			.maj = 8, .min = 1, .prot = PROT_EXEC, .path = pie,
		};
		struct usym sym;

		CHECK_INT(usyms__add_mapping(u, (__u32)pid, &m), 0);
		CHECK_INT(usyms__resolve(u, (__u32)pid, 0x10010, &sym), 0);
		CHECK_STR(sym.module, pie);
		CHECK(sym.name == NULL);
	}
out:
	free(text);
	fx_kill(&c);
	usyms__free(u);
}

/* A real exec: the old image's mappings go, the new one is read lazily. */
TEST(events_exec)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long target, target2;
	char cmd[PATH_MAX + 16];
	struct usyms_stats st;
	struct usym sym;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(pie, &c), 0);
	target = fx_expect(&c, "target");
	CHECK(target != 0);
	if (!u || !target)
		goto out;
	CHECK(feed_maps(u, c.pid) >= 3);
	check_target(u, &c, target, pie);
	snprintf(cmd, sizeof(cmd), "exec %s\n", nopie);
	fx_send(&c, cmd);
	target2 = fx_expect(&c, "target");
	CHECK(target2 != 0 && target2 != target);
	CHECK_INT(usyms__exec(u, (__u32)c.pid), 0);
	/* Where the PIE was, there is nothing now. */
	CHECK_INT(usyms__resolve(u, (__u32)c.pid, target, &sym), -ENOENT);
	usyms__stats(u, &st);
	CHECK_INT(st.maps_reads, 1);
	check_target(u, &c, target2, nopie);
out:
	fx_kill(&c);
	usyms__free(u);
}

/* A forked child shares its parent's mappings, without any /proc read. */
TEST(events_fork)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long target;
	struct usyms_stats st;
	struct usym sym;
	pid_t dead;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(pie, &c), 0);
	target = fx_expect(&c, "target");
	CHECK(target != 0);
	if (!u || !target)
		goto out;
	CHECK(feed_maps(u, c.pid) >= 3);
	/* The child: a pid that is gone by the time we resolve. */
	dead = fork();
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	CHECK_INT(usyms__fork(u, (__u32)c.pid, (__u32)dead), 0);
	CHECK_INT(usyms__exit(u, (__u32)dead), 0);
	{
		struct fx_child child = { .pid = dead };

		check_target(u, &child, target, pie);
	}
	/* Once reported, an exited process is forgotten; a live one is kept. */
	usyms__forget_exited(u);
	CHECK_INT(usyms__resolve(u, (__u32)dead, target, &sym), -ENOENT);
	check_target(u, &c, target, pie);
	/* Not the other way round: the parent's own table is untouched. */
	CHECK_INT(usyms__exec(u, (__u32)dead), 0);
	CHECK_INT(usyms__resolve(u, (__u32)dead, target, &sym), -ENOENT);
	check_target(u, &c, target, pie);
	usyms__stats(u, &st);
	CHECK_INT(st.maps_reads, 0);
	/* A first sample of a process known from records: read it once. */
	CHECK_INT(usyms__add_process(u, (__u32)c.pid), 0);
	CHECK_INT(usyms__add_process(u, (__u32)c.pid), 0);
	usyms__stats(u, &st);
	CHECK_INT(st.maps_reads, 1);
out:
	fx_kill(&c);
	usyms__free(u);
}

/* After an exit, /proc/PID is never read: here PID is alive (it is us). */
/* A dead pid, forked from us and reaped, for records about it. */
static __u32 dead_pid(void)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	return (__u32)pid;
}

/*
 * A fork shares its parent's mappings until one side changes them; a
 * process that exits without a sample is freed a round of records later,
 * unless records were lost in that round.
 */
TEST(events_fork_shared_reaped)
{
	struct usyms_mapping anon = { .prot = PROT_READ | PROT_EXEC, .path = "//anon" };
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long target;
	__u32 child, quiet, kept;
	struct usyms_stats st;
	struct usym sym;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(pie, &c), 0);
	target = fx_expect(&c, "target");
	CHECK(target != 0);
	if (!u || !target)
		goto out;
	CHECK(feed_maps(u, c.pid) >= 3);
	child = dead_pid();
	CHECK_INT(usyms__fork(u, (__u32)c.pid, child), 0);
	CHECK_INT(usyms__resolve(u, child, target, &sym), 0);
	CHECK_STR(sym.name, "fixture_target");
	/* The child maps anonymous code over the target: the parent keeps it. */
	anon.start = target & ~0xfffULL;
	anon.end = anon.start + 4096;
	CHECK_INT(usyms__add_mapping(u, child, &anon), 0);
	CHECK_INT(usyms__resolve(u, child, target, &sym), 0);
	CHECK_STR(sym.module, "[anon]");
	check_target(u, &c, target, pie);
	/* Exited without a sample: kept one round, freed the next. */
	quiet = dead_pid();
	CHECK_INT(usyms__fork(u, (__u32)c.pid, quiet), 0);
	CHECK_INT(usyms__exit(u, quiet), 0);
	usyms__reap(u, false);
	usyms__stats(u, &st);
	CHECK_INT(st.procs_reaped, 0);
	usyms__reap(u, false);
	usyms__stats(u, &st);
	CHECK_INT(st.procs_reaped, 1);
	CHECK_INT(usyms__resolve(u, quiet, target, &sym), -ENOENT);
	/* Records lost in its round: it may have had samples, keep it. */
	kept = dead_pid();
	CHECK_INT(usyms__fork(u, (__u32)c.pid, kept), 0);
	CHECK_INT(usyms__exit(u, kept), 0);
	usyms__reap(u, true);
	usyms__reap(u, false);
	usyms__stats(u, &st);
	CHECK_INT(st.procs_reaped, 1);
	/* The child was resolved (sampled): it stays until reported. */
	CHECK_INT(usyms__exit(u, child), 0);
	usyms__reap(u, false);
	usyms__reap(u, false);
	CHECK_INT(usyms__resolve(u, child, target, &sym), 0);
	CHECK_STR(sym.module, "[anon]");
out:
	fx_kill(&c);
	usyms__free(u);
}

TEST(events_exit_unknown)
{
	struct usyms *u = usyms__new();
	struct usyms_stats st;
	struct usym sym;

	CHECK(u != NULL);
	if (!u)
		return;
	CHECK_INT(usyms__exit(u, self()), 0);
	CHECK_INT(usyms__resolve(u, self(), (unsigned long)&usyms__resolve,
				 &sym), -ENOENT);
	CHECK_INT(usyms__add_process(u, self()), -ENOENT);
	usyms__stats(u, &st);
	CHECK_INT(st.maps_reads, 0);
	/* A new process under that pid (pid reuse) starts afresh. */
	CHECK_INT(usyms__fork(u, (__u32)getppid(), self()), 0);
	CHECK_INT(usyms__resolve(u, self(), (unsigned long)&usyms__resolve,
				 &sym), 0);
	CHECK_STR(sym.name, "usyms__resolve");
	usyms__free(u);
}

/* Mappings replace what they overlap, in whole or in part. */
TEST(events_overlap)
{
	struct usyms *u = usyms__new();
	struct usyms_mapping m = { .prot = PROT_EXEC, .path = "//anon" };
	struct usym sym;
	pid_t dead;

	CHECK(u != NULL);
	if (!u)
		return;
	dead = fork();
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	m.start = 0x10000;
	m.end = 0x20000;
	CHECK_INT(usyms__add_mapping(u, (__u32)dead, &m), 0);
	m.start = 0x14000;
	m.end = 0x15000;
	m.path = "[vdso]";
	CHECK_INT(usyms__add_mapping(u, (__u32)dead, &m), 0);
	CHECK_INT(usyms__resolve(u, (__u32)dead, 0x13fff, &sym), 0);
	CHECK_STR(sym.module, "[anon]");
	CHECK_INT(sym.map_end, 0x14000);
	CHECK_INT(usyms__resolve(u, (__u32)dead, 0x14000, &sym), 0);
	CHECK_STR(sym.module, "[vdso]");
	CHECK_INT(usyms__resolve(u, (__u32)dead, 0x15000, &sym), 0);
	CHECK_STR(sym.module, "[anon]");
	CHECK_INT(sym.map_start, 0x15000);
	CHECK_INT(sym.map_end, 0x20000);
	CHECK_INT(sym.map_pgoff, 0x5000);
	/* Non-executable mappings are ignored, malformed ones refused. */
	m.prot = PROT_READ;
	m.start = 0x10000;
	m.end = 0x30000;
	CHECK_INT(usyms__add_mapping(u, (__u32)dead, &m), 0);
	CHECK_INT(usyms__resolve(u, (__u32)dead, 0x25000, &sym), -ENOENT);
	m.prot = PROT_EXEC;
	m.end = m.start;
	CHECK_INT(usyms__add_mapping(u, (__u32)dead, &m), -EINVAL);
	usyms__free(u);
}

/* A path from a record is raw (newlines and all): its module name is safe. */
TEST(unsafe_mapping_path)
{
	struct usyms *u = usyms__new();
	struct usyms_mapping m = {
		.prot = PROT_EXEC, .start = 0x10000, .end = 0x20000,
		.path = "/tmp/x\n[fake]\033[2J\xef\xbf\xbf.so",
	};
	struct usym sym;
	pid_t dead;

	CHECK(u != NULL);
	if (!u)
		return;
	dead = fork();
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	CHECK_INT(usyms__add_mapping(u, (__u32)dead, &m), 0);
	CHECK_INT(usyms__resolve(u, (__u32)dead, 0x10000, &sym), 0);
	CHECK_STR(sym.module, "/tmp/x?[fake]?[2J???.so");
	usyms__free(u);
}

/* ---- more sources: debug files, perf maps; demangling ---- */

/* A stripped library, dlopen()ed: its static function, by its debuglink. */
TEST(child_debuglink)
{
	struct usyms_opts opts = { .debug_dir = "/nonexistent" };
	struct usyms *u = usyms__new_opts(&opts);
	unsigned long long alpha, alpha_v = 0, helper_v = 0;
	struct fx_child c = { 0 };
	char cmd[PATH_MAX + 16];
	struct usyms_stats st;
	struct usym sym;

	CHECK(u != NULL);
	CHECK_INT(fx_nm(lib, "fixlib_alpha", false, &alpha_v), 0);
	CHECK_INT(fx_nm(lib, "fixlib_helper", false, &helper_v), 0);
	CHECK_INT(fx_spawn(pie, &c), 0);
	CHECK(fx_expect(&c, "target") != 0);
	snprintf(cmd, sizeof(cmd), "dlopen %s\n", linked);
	fx_send(&c, cmd);
	alpha = fx_expect(&c, "lib");
	CHECK(alpha != 0);
	if (!u || !alpha)
		goto out;
	CHECK_INT(usyms__resolve(u, (__u32)c.pid, alpha - alpha_v + helper_v + 3,
				 &sym), 0);
	CHECK_STR(sym.name, "fixlib_helper");
	CHECK_INT(sym.offset, 3);
	CHECK_STR(sym.module, linked);
	usyms__stats(u, &st);
	CHECK_INT(st.debug_files, 1);
out:
	fx_kill(&c);
	usyms__free(u);
}

/*
 * A process that maps ROOTED.so (stripped, its debug file beside it) and,
 * with jail, chroots there: "lib" is its fixlib_alpha.  0 if it cannot.
 */
static unsigned long long spawn_mapper(struct fx_child *c, const char *so,
				       const char *jail)
{
	char cmd[PATH_MAX + 16];
	unsigned long long alpha;

	if (fx_spawn(pie, c) || !fx_expect(c, "target"))
		return 0;
	snprintf(cmd, sizeof(cmd), "dlopen %s\n", so);
	fx_send(c, cmd);
	alpha = fx_expect(c, "lib");
	if (!jail || !alpha)
		return alpha;
	snprintf(cmd, sizeof(cmd), "chroot %s\n", jail);
	fx_send(c, cmd);
	return fx_expect(c, "chroot") == 1 ? alpha : 0;
}

/*
 * A debug file in a process's own root (here a forged one, its names
 * prefixed) names the file for the processes of that view only, whichever
 * process is seen first; the processes of one view share one parse.
 */
TEST(debug_file_in_root)
{
	struct usyms_opts opts = { .debug_dir = "/dbg" };
	unsigned long long alpha_v = 0, helper_v = 0, at[3];
	static const char *const want[3] = {
		"FORGED_fixlib_helper", "fixlib_helper", "FORGED_fixlib_helper",
	};
	static const int orders[2][3] = { { 0, 1, 2 }, { 1, 0, 2 } };
	char so[PATH_MAX], jail[PATH_MAX], id[128];
	struct fx_child c[3];
	struct usyms_stats st;
	struct usyms *u;
	struct usym sym;
	int i, k, n;

	snprintf(so, sizeof(so), "%s/rooted.so", dir);
	snprintf(jail, sizeof(jail), "%s/jail", dir);
	CHECK_INT(fx_cc("fixlib.c", "-shared -fPIC -Wl,--build-id=sha1", so), 0);
	fx_build_id(so, id, sizeof(id));
	CHECK(strlen(id) == 40);
	CHECK_INT(fx_sh("cd '%s' && objcopy --only-keep-debug rooted.so rooted.debug && "
			"strip --strip-all rooted.so && "
			"objcopy --add-gnu-debuglink=rooted.debug rooted.so && "
			"mkdir -p jail/dbg/.build-id/%.2s && "
			"objcopy --prefix-symbols=FORGED_ rooted.debug "
			"jail/dbg/.build-id/%.2s/%s.debug", dir, id, id, id + 2), 0);
	CHECK_INT(fx_nm(lib, "fixlib_alpha", false, &alpha_v), 0);
	CHECK_INT(fx_nm(lib, "fixlib_helper", false, &helper_v), 0);
	for (k = 0; k < 2; k++) {
		memset(c, 0, sizeof(c));
		n = 0;
		for (i = 0; i < 3; i++, n++) {
			at[i] = spawn_mapper(&c[i], so, i == 1 ? NULL : jail);
			if (!at[i])
				break;
		}
		u = usyms__new_opts(&opts);
		CHECK(u != NULL);
		for (i = 0; u && n == 3 && i < 3; i++) {
			int p = orders[k][i];

			CHECK_INT(usyms__resolve(u, (__u32)c[p].pid,
						 at[p] - alpha_v + helper_v + 1, &sym), 0);
			CHECK_STR(sym.name, want[p]);
		}
		if (u && n == 3) {
			usyms__stats(u, &st);
			/* The real one, and the forged one the jailed two share. */
			CHECK_INT(st.debug_files, 2);
		}
		usyms__free(u);
		for (i = 0; i <= n && i < 3; i++)
			fx_kill(&c[i]);
		SKIP_UNLESS(n == 3, "a process cannot chroot here (no user namespaces)");
	}
}

/* Our own libc: start_thread is only in libc6-dbg's debug file. */
TEST(libc_debug_file)
{
	static const char *const names[] = {
		"start_thread", "__libc_start_call_main",
	};
	struct usyms *u = usyms__new();
	char id[128], dbgfile[PATH_MAX];
	unsigned long long v;
	struct usym sym;
	Dl_info info;
	size_t i;

	CHECK(u != NULL);
	CHECK(dladdr((void *)&getpid, &info) && info.dli_fname);
	if (!u || !info.dli_fname)
		goto out;
	fx_build_id(info.dli_fname, id, sizeof(id));
	snprintf(dbgfile, sizeof(dbgfile),
		 "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	if (strlen(id) < 4 || access(dbgfile, R_OK)) {
		skip_why = "no debug file for libc (libc6-dbg)";
		goto out;
	}
	for (i = 0; i < 2; i++) {
		CHECK_INT(fx_nm(dbgfile, names[i], false, &v), 0);
		/* libc is linked at 0: its load address is its base. */
		CHECK_INT(usyms__resolve(u, self(),
					 (unsigned long)info.dli_fbase + v + 2,
					 &sym), 0);
		CHECK_STR(sym.name, names[i]);
		CHECK_INT(sym.offset, 2);
	}
out:
	usyms__free(u);
}

static int write_perfmap(pid_t pid, const char *text, const char *mode)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	f = fopen(path, mode);
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

/* A JIT writes its map, then appends to it as it compiles more. */
TEST(perfmap_jit)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long jit;
	struct usyms_stats st;
	char line[128];
	struct usym sym;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(pie, &c), 0);
	fx_send(&c, "jit\n");
	jit = fx_expect(&c, "jit");
	CHECK(jit != 0);
	if (!u || !jit)
		goto out;
	snprintf(line, sizeof(line), "%llx 40 jit_first\n", jit);
	CHECK_INT(write_perfmap(c.pid, line, "w"), 0);
	CHECK_INT(usyms__resolve(u, (__u32)c.pid, jit + 4, &sym), 0);
	CHECK_STR(sym.name, "jit_first");
	CHECK_INT(sym.offset, 4);
	CHECK_STR(sym.module, "[anon]");
	CHECK_INT(usyms__resolve(u, (__u32)c.pid, jit + 0x104, &sym), 0);
	CHECK(sym.name == NULL);
	/* Appended, and looked at again (at most once a second). */
	snprintf(line, sizeof(line), "0x%llx 0x40 _ZN3jit6secondEv\n", jit + 0x100);
	CHECK_INT(write_perfmap(c.pid, line, "a"), 0);
	usleep(1100 * 1000);
	CHECK_INT(usyms__resolve(u, (__u32)c.pid, jit + 0x104, &sym), 0);
	CHECK_STR(sym.name, "jit::second()");
	CHECK_INT(usyms__resolve(u, (__u32)c.pid, jit + 4, &sym), 0);
	CHECK_STR(sym.name, "jit_first");
	usyms__stats(u, &st);
	CHECK_INT(st.perfmaps, 2);
	CHECK_INT(st.perfmaps_refused, 0);
out:
	rm_perfmap(c.pid);
	fx_kill(&c);
	usyms__free(u);
}

/* Resolve jit in a new usyms; the name, or NULL if the map was refused. */
static void check_refused(const struct fx_child *c, unsigned long long jit)
{
	struct usyms *u = usyms__new();
	struct usyms_stats st;
	struct usym sym;

	CHECK(u != NULL);
	if (!u)
		return;
	CHECK_INT(usyms__resolve(u, (__u32)c->pid, jit, &sym), 0);
	CHECK(sym.name == NULL);
	usyms__stats(u, &st);
	CHECK(st.perfmaps_refused >= 1);
	CHECK_INT(st.perfmaps, 0);
	usyms__free(u);
}

/* A map planted by another user, or left by an earlier process. */
TEST(perfmap_refused)
{
	struct fx_child c = { 0 };
	unsigned long long jit;
	struct timespec old[2];
	char line[128], path[64];

	CHECK_INT(fx_spawn(pie, &c), 0);
	fx_send(&c, "jit\n");
	jit = fx_expect(&c, "jit");
	CHECK(jit != 0);
	if (!jit)
		goto out;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", c.pid);
	snprintf(line, sizeof(line), "%llx 40 planted\n", jit);
	CHECK_INT(write_perfmap(c.pid, line, "w"), 0);
	/* Older than the process. */
	clock_gettime(CLOCK_REALTIME, &old[0]);
	old[0].tv_sec -= 3600;
	old[1] = old[0];
	CHECK_INT(utimensat(AT_FDCWD, path, old, 0), 0);
	check_refused(&c, jit);
	/* Writable by anyone. */
	CHECK_INT(write_perfmap(c.pid, line, "w"), 0);
	CHECK_INT(chmod(path, 0666), 0);
	check_refused(&c, jit);
	/* Owned by another user (needs root to plant). */
	if (!geteuid()) {
		CHECK_INT(chmod(path, 0644), 0);
		CHECK_INT(chown(path, 4242, 4242), 0);
		check_refused(&c, jit);
	}
	/* A symlink to a map the process might trust. */
	unlink(path);
	CHECK_INT(symlink("/etc/hostname", path), 0);
	check_refused(&c, jit);
out:
	rm_perfmap(c.pid);
	fx_kill(&c);
}

/* A JIT process that wrote its map and exited: read at its exit. */
TEST(perfmap_at_exit)
{
	struct usyms *u = usyms__new();
	struct fx_child c = { 0 };
	unsigned long long jit;
	char line[128];
	struct usym sym;
	pid_t pid;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(pie, &c), 0);
	fx_send(&c, "jit\n");
	jit = fx_expect(&c, "jit");
	CHECK(jit != 0);
	pid = c.pid;
	if (!u || !jit)
		goto out;
	CHECK(feed_maps(u, pid) >= 4);
	/* Its first sample: a process that exits without one is forgotten. */
	CHECK_INT(usyms__add_process(u, (__u32)pid), 0);
	snprintf(line, sizeof(line), "%llx 40 jit_short\n", jit);
	CHECK_INT(write_perfmap(pid, line, "w"), 0);
	fx_kill(&c);
	CHECK_INT(usyms__exit(u, (__u32)pid), 0);
	CHECK_INT(usyms__resolve(u, (__u32)pid, jit + 1, &sym), 0);
	CHECK_STR(sym.name, "jit_short");
	CHECK_STR(sym.module, "[anon]");
out:
	rm_perfmap(pid);
	fx_kill(&c);
	usyms__free(u);
}

static void check_mangled(bool no_demangle)
{
	static const struct {
		const char *key, *mangled, *demangled;
	} fns[] = {
		{ "cxx", "_ZNK7fixture6EngineIdE8multiplyEm",
		  "fixture::Engine<double>::multiply(unsigned long) const" },
		{ "rust", "_ZN7fixture4rust4func17h0123456789abcdefE",
		  "fixture::rust::func" },
		{ "rustv0", "_RNvNtCs1234_7fixture4rust2v0", "fixture::rust::v0" },
	};
	struct usyms_opts opts = { .no_demangle = no_demangle };
	struct usyms *u = usyms__new_opts(&opts);
	unsigned long long addr[3];
	struct fx_child c = { 0 };
	struct usyms_stats st;
	struct usym sym;
	size_t i;

	CHECK(u != NULL);
	CHECK_INT(fx_spawn(nopie, &c), 0);
	for (i = 0; i < 3; i++)
		CHECK((addr[i] = fx_expect(&c, fns[i].key)) != 0);
	for (i = 0; u && i < 3; i++) {
		CHECK_INT(usyms__resolve(u, (__u32)c.pid, addr[i] + 1, &sym), 0);
		CHECK_STR(sym.name, no_demangle ? fns[i].mangled
						: fns[i].demangled);
		CHECK_INT(sym.offset, 1);
		/* Again: the same string, demangled once. */
		CHECK_INT(usyms__resolve(u, (__u32)c.pid, addr[i], &sym), 0);
		CHECK_STR(sym.name, no_demangle ? fns[i].mangled
						: fns[i].demangled);
	}
	if (u) {
		usyms__stats(u, &st);
		CHECK_INT(st.demangled, no_demangle ? 0 : 3);
	}
	fx_kill(&c);
	usyms__free(u);
}

TEST(demangled)
{
	check_mangled(false);
}

TEST(no_demangle)
{
	check_mangled(true);
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
	RUN(events_exited_deleted);
	RUN(events_read_late);
	RUN(events_exec);
	RUN(events_fork);
	RUN(events_fork_shared_reaped);
	RUN(events_exit_unknown);
	RUN(events_overlap);
	RUN(unsafe_mapping_path);
	RUN(child_debuglink);
	RUN_S(debug_file_in_root);
	RUN_S(libc_debug_file);
	RUN(perfmap_jit);
	RUN(perfmap_refused);
	RUN(perfmap_at_exit);
	RUN(demangled);
	RUN(no_demangle);
	fx_rmdir(dir);
	return unit_summary();
}
