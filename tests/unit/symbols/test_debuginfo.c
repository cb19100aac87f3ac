// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the symbol sources of stripped files: MiniDebugInfo
 * (.gnu_debugdata, built here with objcopy and xz as Fedora does) and
 * separate debug files found by build-id or .gnu_debuglink (built with
 * objcopy --only-keep-debug), on PIE, non-PIE and shared fixtures; and
 * this machine's libc with its libc6-dbg debug file.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "fixtures/fixtures.h"
#include "symbols/debuginfo.h"
#include "symbols/elf_file.h"
#include "symbols/minidebug.h"
#include "unit.h"
#include "fixtures/skip.h"

static char dir[FX_DIR_MAX];
static char lib[PATH_MAX], pie[PATH_MAX], nopie[PATH_MAX];

/*
 * mini IN OUT: OUT is IN stripped, with a .gnu_debugdata holding the
 * function symbols that .dynsym lacks, xz-compressed.
 */
static const char mini_sh[] =
	"mini() { t=$(mktemp -d) && "
	"nm -D \"$1\" --format=posix --defined-only | awk '{print $1}' | sort >$t/dyn && "
	"nm \"$1\" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ {print $1}' | sort >$t/funcs && "
	"comm -13 $t/dyn $t/funcs >$t/keep && "
	"objcopy --only-keep-debug \"$1\" $t/dbg && "
	"objcopy -S --remove-section .gdb_index --remove-section .comment "
	"--keep-symbols=$t/keep $t/dbg $t/mini && "
	"xz -f $t/mini && "
	"strip --strip-all -R .comment \"$1\" -o \"$2\" && "
	"objcopy --add-section .gnu_debugdata=$t/mini.xz \"$2\" && rm -rf $t; }; ";

static int build_fixtures(void)
{
	if (fx_tmpdir(dir))
		return -1;
	snprintf(lib, sizeof(lib), "%s/fixlib.so", dir);
	snprintf(pie, sizeof(pie), "%s/pie", dir);
	snprintf(nopie, sizeof(nopie), "%s/nopie", dir);
	if (fx_cc("fixlib.c", "-shared -fPIC -Wl,--build-id=sha1", lib) ||
	    fx_cc("fixture.c", "-fPIE -pie -Wl,--build-id=sha1", pie) ||
	    fx_cc("fixture.c", "-fno-pie -no-pie -Wl,--build-id=sha1", nopie))
		return -1;
	/* A debug file, a stripped copy without a link, one with a link. */
	return fx_sh("cd '%s' && objcopy --only-keep-debug fixlib.so fixlib.debug && "
		     "strip --strip-all fixlib.so -o nolink.so && "
		     "cp nolink.so linked.so && "
		     "objcopy --add-gnu-debuglink=fixlib.debug linked.so", dir);
}

/* Open path and check where its names come from. */
static struct elf_file *open_checked(const char *path,
				     enum elf_sym_source source)
{
	struct elf_file *ef = elf_file__open(path);

	CHECK(ef != NULL);
	if (ef)
		CHECK_INT(elf_file__sym_source(ef), source);
	return ef;
}

/* name is found at the address nm gives for it in the unstripped ref. */
static void check_named(const struct elf_file *ef, const char *ref,
			const char *name)
{
	unsigned long long addr = 0;
	__u64 off = 99;

	CHECK_INT(fx_nm(ref, name, false, &addr), 0);
	CHECK_STR(elf_file__find(ef, addr + 1, &off), name);
	CHECK_INT(off, 1);
}

static void check_unnamed(const struct elf_file *ef, const char *ref,
			  const char *name)
{
	unsigned long long addr = 0;
	const char *got;

	CHECK_INT(fx_nm(ref, name, false, &addr), 0);
	got = elf_file__find(ef, addr + 1, NULL);
	CHECK(!got || strcmp(got, name));
}

/* The library alone has only .dynsym: fixlib_helper (static) is not in it. */
TEST(stripped_only)
{
	char path[PATH_MAX];
	struct elf_file *ef;

	snprintf(path, sizeof(path), "%s/nolink.so", dir);
	ef = open_checked(path, ELF_SYMS_DYNSYM);
	if (!ef)
		return;
	check_named(ef, lib, "fixlib_alpha");
	check_unnamed(ef, lib, "fixlib_helper");
	CHECK(elf_file__debuglink(ef, NULL) == NULL);
	/* Nothing to find: no build-id file, no link. */
	CHECK_INT(debuginfo__load(ef, path, strlen(path), -1,
				&(struct debuginfo_opts){ .debug_dir = dir, .reader = -1 }), -ENOENT);
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_DYNSYM);
	elf_file__free(ef);
}


static void check_minidebug(const char *src, const char *name,
			    const char *const *only_mini, size_t n,
			    const char *dynamic)
{
	char path[PATH_MAX];
	struct elf_file *ef;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK_INT(fx_sh("%s mini '%s' '%s'", mini_sh, src, path), 0);
	CHECK_INT(fx_sh("readelf -S '%s' | grep -q gnu_debugdata && "
			"! readelf -S '%s' | grep -q '\\.symtab'", path, path), 0);
	ef = open_checked(path, ELF_SYMS_MINIDEBUG);
	if (!ef)
		return;
	for (i = 0; i < n; i++)
		check_named(ef, src, only_mini[i]);
	if (dynamic)
		check_named(ef, src, dynamic);
	elf_file__free(ef);
}

TEST(minidebuginfo)
{
	static const char *const lib_syms[] = { "fixlib_helper" };
	static const char *const exe_syms[] = {
		"fixture_static", "fixture_target", "main",
	};

	/* The library: statics from the mini table, exports from .dynsym. */
	check_minidebug(lib, "mini.so", lib_syms, 1, "fixlib_alpha");
	check_minidebug(pie, "mini-pie", exe_syms, 3, NULL);
	check_minidebug(nopie, "mini-nopie", exe_syms, 3, NULL);
}

/* A .gnu_debugdata that is not xz, or that is cut short, is ignored. */
TEST(minidebuginfo_corrupt)
{
	char path[PATH_MAX], junk[PATH_MAX];
	struct elf_file *ef;

	snprintf(path, sizeof(path), "%s/badmini.so", dir);
	snprintf(junk, sizeof(junk), "%s/junk", dir);
	CHECK_INT(fx_sh("head -c 300 /dev/urandom >'%s' && "
			"objcopy --add-section .gnu_debugdata='%s' '%s/nolink.so' '%s'",
			junk, junk, dir, path), 0);
	ef = open_checked(path, ELF_SYMS_DYNSYM);
	elf_file__free(ef);
	/* A real stream, truncated. */
	CHECK_INT(fx_sh("%s mini '%s' '%s/t.so' && objcopy -O binary "
			"--only-section=.gnu_debugdata '%s/t.so' '%s' && "
			"truncate -s -20 '%s' && "
			"objcopy --add-section .gnu_debugdata='%s' '%s/nolink.so' '%s'",
			mini_sh, lib, dir, dir, junk, junk, junk, dir, path), 0);
	ef = open_checked(path, ELF_SYMS_DYNSYM);
	elf_file__free(ef);
}

TEST(decompress_limits)
{
	void *out = NULL;
	size_t len = 0;
	char xz[PATH_MAX];
	char *buf = NULL;
	FILE *f;
	long n;

	CHECK_INT(minidebug__decompress("", 0, 100, &out, &len), -EINVAL);
	CHECK_INT(minidebug__decompress("garbage!", 8, 100, &out, &len), -EINVAL);
	/* 1 MiB of zeros: compresses to almost nothing; a bomb for a small max. */
	snprintf(xz, sizeof(xz), "%s/zeros.xz", dir);
	CHECK_INT(fx_sh("head -c 1048576 /dev/zero | xz >'%s'", xz), 0);
	f = fopen(xz, "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	buf = malloc(1 << 16);
	n = buf ? (long)fread(buf, 1, 1 << 16, f) : 0;
	fclose(f);
	CHECK(n > 0 && n < 4096);
	CHECK_INT(minidebug__decompress(buf, (size_t)n, 65536, &out, &len), -EFBIG);
	CHECK_INT(minidebug__decompress(buf, (size_t)n, 1 << 20, &out, &len), 0);
	CHECK_INT(len, 1 << 20);
	free(out);
	free(buf);
}

/* Debuglink in the file's directory, in .debug/, and under the debug dir. */
static void check_link_at(const char *where, const char *debug_dir)
{
	char path[PATH_MAX], nodbg[PATH_MAX];
	struct elf_file *ef;

	snprintf(path, sizeof(path), "%s/%s/linked.so", dir, where);
	snprintf(nodbg, sizeof(nodbg), "%s/nowhere", dir);
	ef = open_checked(path, ELF_SYMS_DYNSYM);
	if (!ef)
		return;
	CHECK_STR(elf_file__debuglink(ef, NULL), "fixlib.debug");
	CHECK_INT(debuginfo__load(ef, path, strlen(path), -1,
				&(struct debuginfo_opts){ .debug_dir = debug_dir ? debug_dir : nodbg, .reader = -1 }), 0);
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_DEBUGFILE);
	check_named(ef, lib, "fixlib_helper");
	check_named(ef, lib, "fixlib_alpha");
	check_named(ef, lib, "fixlib_beta");
	elf_file__free(ef);
}

TEST(debuglink)
{
	char dbg[PATH_MAX];

	snprintf(dbg, sizeof(dbg), "%s/dbgroot", dir);
	CHECK_INT(fx_sh("cd '%s' && mkdir -p same dot/.debug under \"dbgroot$PWD/under\" && "
			"cp linked.so fixlib.debug same/ && "
			"cp linked.so dot/ && cp fixlib.debug dot/.debug/ && "
			"cp linked.so under/ && "
			"cp fixlib.debug \"dbgroot$PWD/under/\"", dir), 0);
	check_link_at("same", NULL);
	check_link_at("dot", NULL);
	check_link_at("under", dbg);
}

/*
 * Without build-ids, the CRC decides: a debug file whose CRC is not the
 * link's is not used.  With build-ids in both files, they decide, and the
 * debug file is not read whole.
 */
static void check_crc_case(const char *sub, const char *ref, const char *prep,
			   bool used)
{
	char path[PATH_MAX], nodbg[PATH_MAX];
	struct elf_file *ef;

	snprintf(path, sizeof(path), "%s/%s/linked.so", dir, sub);
	snprintf(nodbg, sizeof(nodbg), "%s/nowhere", dir);
	CHECK_INT(fx_sh("cd '%s' && mkdir -p %s && cd %s && %s", dir, sub, sub,
			prep), 0);
	ef = open_checked(path, ELF_SYMS_DYNSYM);
	if (!ef)
		return;
	CHECK_INT(debuginfo__load(ef, path, strlen(path), -1,
				  &(struct debuginfo_opts){ .debug_dir = nodbg, .reader = -1 }),
		  used ? 0 : -ENOENT);
	CHECK_INT(elf_file__sym_source(ef), used ? ELF_SYMS_DEBUGFILE : ELF_SYMS_DYNSYM);
	if (used)
		check_named(ef, ref, "fixlib_helper");
	else
		check_unnamed(ef, ref, "fixlib_helper");
	elf_file__free(ef);
}

/* A library without a build-id, its debug file, and a stripped copy linked to it. */
#define NO_ID "objcopy --only-keep-debug ../noid.so fixlib.debug && " \
	      "strip --strip-all ../noid.so -o linked.so && " \
	      "objcopy --add-gnu-debuglink=fixlib.debug linked.so"

TEST(debuglink_crc)
{
	char noid[PATH_MAX];

	snprintf(noid, sizeof(noid), "%s/noid.so", dir);
	CHECK_INT(fx_cc("fixlib.c", "-shared -fPIC -Wl,--build-id=none", noid), 0);
	check_crc_case("crc_ok", noid, NO_ID, true);
	check_crc_case("crc_bad", noid, NO_ID " && printf x >>fixlib.debug", false);
	/* One byte appended: the CRC differs, the build-ids still match. */
	check_crc_case("crc_by_id", lib, "cp ../linked.so ../fixlib.debug . && "
		       "printf x >>fixlib.debug", true);
}

TEST(file_crc)
{
	char path[PATH_MAX];
	unsigned int crc = 0;
	int fd;

	/* The CRC-32 of "123456789" is the standard check value. */
	snprintf(path, sizeof(path), "%s/check", dir);
	CHECK_INT(fx_sh("printf 123456789 >'%s'", path), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_INT(debuginfo__file_crc(fd, UINT64_MAX, NULL, &crc), 0);
	CHECK_INT(crc, 0xcbf43926);
	close(fd);
}

/* By build-id under DEBUG_DIR/.build-id/, with no debuglink at all. */
TEST(build_id)
{
	char path[PATH_MAX], dbg[PATH_MAX], id[128];
	struct elf_file *ef;

	snprintf(path, sizeof(path), "%s/nolink.so", dir);
	snprintf(dbg, sizeof(dbg), "%s/bidroot", dir);
	fx_build_id(lib, id, sizeof(id));
	CHECK(strlen(id) == 40);
	CHECK_INT(fx_sh("mkdir -p '%s/.build-id/%.2s' && cp '%s/fixlib.debug' "
			"'%s/.build-id/%.2s/%s.debug'", dbg, id, dir, dbg, id,
			id + 2), 0);
	ef = open_checked(path, ELF_SYMS_DYNSYM);
	if (!ef)
		return;
	CHECK_STR(elf_file__build_id(ef), id);
	CHECK_INT(debuginfo__load(ef, path, strlen(path), -1,
				  &(struct debuginfo_opts){ .debug_dir = dbg, .reader = -1 }), 0);
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_DEBUGFILE);
	check_named(ef, lib, "fixlib_helper");
	elf_file__free(ef);
}

/* A debug file bigger than the cap is not read to check its CRC. */
TEST(crc_cap)
{
	unsigned int crc = 0;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/huge.debug", dir);
	/* 8 TiB, sparse: read whole, it would take hours. */
	CHECK_INT(fx_sh("truncate -s 8T '%s'", path), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(debuginfo__file_crc(fd, 1u << 30, NULL, &crc), -EFBIG);
	CHECK_INT(debuginfo__file_crc(fd, UINT64_MAX,
				      &(volatile sig_atomic_t){ 1 }, &crc), -EINTR);
	close(fd);
	unlink(path);
}

/* A file at the build-id path with another build-id is not used. */
TEST(build_id_mismatch)
{
	char path[PATH_MAX], dbg[PATH_MAX], id[128], other[PATH_MAX];
	struct elf_file *ef;

	snprintf(path, sizeof(path), "%s/nolink.so", dir);
	snprintf(dbg, sizeof(dbg), "%s/wrongroot", dir);
	snprintf(other, sizeof(other), "%s/other.so", dir);
	fx_build_id(lib, id, sizeof(id));
	CHECK_INT(fx_cc("fixlib.c", "-shared -fPIC -O2 -Wl,--build-id=sha1", other), 0);
	CHECK_INT(fx_sh("mkdir -p '%s/.build-id/%.2s' && objcopy --only-keep-debug "
			"'%s' '%s/.build-id/%.2s/%s.debug'", dbg, id, other, dbg, id,
			id + 2), 0);
	ef = open_checked(path, ELF_SYMS_DYNSYM);
	if (!ef)
		return;
	CHECK_INT(debuginfo__load(ef, path, strlen(path), -1,
				&(struct debuginfo_opts){ .debug_dir = dbg, .reader = -1 }), -ENOENT);
	check_unnamed(ef, lib, "fixlib_helper");
	elf_file__free(ef);
}

/* A debug file is looked for inside the process's root first. */
TEST(in_root)
{
	char root[PATH_MAX], path[PATH_MAX];
	struct elf_file *ef;
	int rootfd;

	snprintf(root, sizeof(root), "%s/container", dir);
	snprintf(path, sizeof(path), "/opt/lib/linked.so");
	CHECK_INT(fx_sh("mkdir -p '%s/opt/lib' && cp '%s/linked.so' '%s/fixlib.debug' "
			"'%s/opt/lib/'", root, dir, dir, root), 0);
	rootfd = open(root, O_PATH | O_DIRECTORY);
	CHECK(rootfd >= 0);
	snprintf(root + strlen(root), sizeof(root) - strlen(root), "%s", path);
	ef = open_checked(root, ELF_SYMS_DYNSYM);
	if (ef && rootfd >= 0) {
		/* The path as the process sees it, inside its root. */
		CHECK_INT(debuginfo__load(ef, path, strlen(path), rootfd,
				&(struct debuginfo_opts){ .debug_dir = "/none", .reader = -1 }), 0);
		check_named(ef, lib, "fixlib_helper");
	}
	elf_file__free(ef);
	if (rootfd >= 0)
		close(rootfd);
}

/*
 * Root's DEBUG_DIR comes before the process's root: a forged debug file
 * there (its names prefixed) for a file root's directory names is not
 * read.  debuginfo__find() looks only where it is told.
 */
TEST(debug_dir_first)
{
	char root[PATH_MAX], dbg[PATH_MAX], path[PATH_MAX], id[128];
	struct debuginfo_opts o = { .debug_dir = dbg, .reader = -1 };
	unsigned long long addr = 0;
	struct debuginfo_file found;
	struct elf_file *ef;
	int rootfd;

	snprintf(root, sizeof(root), "%s/forging", dir);
	snprintf(dbg, sizeof(dbg), "%s/realdbg", dir);
	snprintf(path, sizeof(path), "%s/nolink.so", dir);
	fx_build_id(lib, id, sizeof(id));
	CHECK(strlen(id) == 40);
	/* DEBUG_DIR: the real debug file; the same path in root: a forged one. */
	CHECK_INT(fx_sh("mkdir -p '%s/.build-id/%.2s' '%s%s/.build-id/%.2s' && "
			"cp '%s/fixlib.debug' '%s/.build-id/%.2s/%s.debug' && "
			"objcopy --prefix-symbols=FORGED_ '%s/fixlib.debug' "
			"'%s%s/.build-id/%.2s/%s.debug'", dbg, id, root, dbg, id,
			dir, dbg, id, id + 2, dir, root, dbg, id, id + 2), 0);
	CHECK_INT(fx_nm(lib, "fixlib_helper", false, &addr), 0);
	rootfd = open(root, O_PATH | O_DIRECTORY);
	CHECK(rootfd >= 0);
	ef = open_checked(path, ELF_SYMS_DYNSYM);
	if (!ef || rootfd < 0)
		goto out;
	/* Only where it is told: the root's DEBUG_DIR, not beside the file. */
	CHECK_INT(debuginfo__find(ef, path, strlen(path), rootfd,
				  DEBUGINFO_BESIDE, &o, &found), -ENOENT);
	CHECK_INT(debuginfo__find(ef, path, strlen(path), rootfd,
				  DEBUGINFO_DEBUG_DIR, &o, &found), 0);
	CHECK_STR(elf_file__find(found.elf, addr + 1, NULL), "FORGED_fixlib_helper");
	elf_file__free(found.elf);
	close(found.fd);
	/* Root's own DEBUG_DIR first: the real names. */
	CHECK_INT(debuginfo__load(ef, path, strlen(path), rootfd, &o), 0);
	check_named(ef, lib, "fixlib_helper");
out:
	elf_file__free(ef);
	if (rootfd >= 0)
		close(rootfd);
}

/* This machine's libc: stripped, with its debug file from libc6-dbg. */
TEST(libc_debug_file)
{
	static const char *const names[] = {
		"start_thread", "__libc_start_call_main",
	};
	char libc[PATH_MAX], dbgfile[PATH_MAX], id[128];
	struct elf_file *ef;
	size_t i;

	if (fx_sh("ldd /bin/true | awk '/libc.so/ {print $3}' >'%s/libc'", dir))
		return;
	{
		char p[PATH_MAX];
		FILE *f;

		snprintf(p, sizeof(p), "%s/libc", dir);
		f = fopen(p, "r");
		libc[0] = '\0';
		if (f && fgets(libc, sizeof(libc), f))
			libc[strcspn(libc, "\n")] = '\0';
		if (f)
			fclose(f);
	}
	CHECK(libc[0] == '/');
	fx_build_id(libc, id, sizeof(id));
	snprintf(dbgfile, sizeof(dbgfile), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 id, id + 2);
	SKIP_UNLESS(strlen(id) > 2 && !access(dbgfile, R_OK), "no libc debug file");
	ef = open_checked(libc, ELF_SYMS_DYNSYM);
	if (!ef)
		return;
	for (i = 0; i < 2; i++)
		check_unnamed(ef, dbgfile, names[i]);
	CHECK_INT(debuginfo__load(ef, libc, strlen(libc), -1,
				&(struct debuginfo_opts){ .debug_dir = NULL, .reader = -1 }), 0);
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_DEBUGFILE);
	for (i = 0; i < 2; i++)
		check_named(ef, dbgfile, names[i]);
	/* Exported names are still the usual ones, without "@@GLIBC_2.17". */
	check_named(ef, dbgfile, "getpid");
	check_named(ef, dbgfile, "clock_gettime");
	elf_file__free(ef);
}

int main(void)
{
	if (build_fixtures()) {
		fprintf(stderr, "cannot build the fixtures with cc and objcopy\n");
		printf("not ok - build_fixtures\n");
		fx_rmdir(dir);
		return 1;
	}
	RUN(stripped_only);
	RUN(minidebuginfo);
	RUN(minidebuginfo_corrupt);
	RUN(decompress_limits);
	RUN(debuglink);
	RUN(debuglink_crc);
	RUN(file_crc);
	RUN(crc_cap);
	RUN(build_id);
	RUN(build_id_mismatch);
	RUN(in_root);
	RUN(debug_dir_first);
	RUN_S(libc_debug_file);
	fx_rmdir(dir);
	return unit_summary();
}
