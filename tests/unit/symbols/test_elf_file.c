// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the ELF symbol reader, on fixtures built at test time and
 * checked against what nm and readelf say.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "fixtures/fixtures.h"
#include "symbols/caps.h"
#include "symbols/elf_file.h"
#include "unit.h"

static char dir[FX_DIR_MAX];
static char pie[PATH_MAX], nopie[PATH_MAX], lib[PATH_MAX], slib[PATH_MAX], spie[PATH_MAX];

static int build_fixtures(void)
{
	if (fx_tmpdir(dir))
		return -1;
	snprintf(pie, sizeof(pie), "%s/pie", dir);
	snprintf(nopie, sizeof(nopie), "%s/nopie", dir);
	snprintf(lib, sizeof(lib), "%s/fixlib.so", dir);
	snprintf(slib, sizeof(slib), "%s/fixlib-stripped.so", dir);
	snprintf(spie, sizeof(spie), "%s/pie-stripped", dir);
	if (fx_cc("fixture.c", "-fPIE -pie -Wl,--build-id=sha1", pie) ||
	    fx_cc("fixture.c", "-fno-pie -no-pie", nopie) ||
	    fx_cc("fixlib.c", "-shared -fPIC", lib) ||
	    fx_sh("cp '%s' '%s' && strip '%s'", lib, slib, slib) ||
	    fx_sh("cp '%s' '%s' && strip '%s'", pie, spie, spie))
		return -1;
	return 0;
}

/* The symbol nm reports: found at nm's address, and inside it by offset. */
static void check_sym(const struct elf_file *ef, const char *path,
		      const char *name, bool dynamic)
{
	unsigned long long addr = 0;
	const char *got;
	__u64 off = 99;

	CHECK_INT(fx_nm(path, name, dynamic, &addr), 0);
	got = elf_file__find(ef, addr, &off);
	CHECK_STR(got, name);
	CHECK_INT(off, 0);
	got = elf_file__find(ef, addr + 3, &off);
	CHECK_STR(got, name);
	CHECK_INT(off, 3);
}

static void check_executable(const char *path, int type)
{
	static const char *const names[] = {
		"fixture_target", "fixture_other", "fixture_static", "main",
		"fixture_nosize",
	};
	struct elf_file *ef = elf_file__open(path);
	size_t i;

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_INT(elf_file__type(ef), type);
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_SYMTAB);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_sym(ef, path, names[i], false);
	/* Data is not a function. */
	{
		unsigned long long sink;
		__u64 off;

		CHECK_INT(fx_nm(path, "fixture_sink", false, &sink), 0);
		CHECK(elf_file__find(ef, sink, &off) == NULL);
	}
	CHECK(elf_file__find(ef, 0, NULL) == NULL);
	elf_file__free(ef);
}

TEST(pie)
{
	check_executable(pie, ET_DYN);
}

TEST(nopie)
{
	check_executable(nopie, ET_EXEC);
}

/* fixture_nosize has no size: it must reach the next symbol, no further. */
TEST(size_zero_symbol)
{
	struct elf_file *ef = elf_file__open(pie);
	unsigned long long start = 0;
	struct elf_sym_info si = { 0 };
	const char *next;
	__u64 off;
	size_t i;

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_INT(fx_nm(pie, "fixture_nosize", false, &start), 0);
	for (i = 0; i < elf_file__nr_syms(ef); i++) {
		elf_file__sym(ef, i, &si);
		if (si.addr == start)
			break;
	}
	CHECK_STR(si.name, "fixture_nosize");
	CHECK(si.size > 0);
	CHECK_STR(elf_file__find(ef, start + si.size - 1, &off),
		  "fixture_nosize");
	CHECK_INT(off, si.size - 1);
	/* The byte after belongs to whatever symbol starts there. */
	next = elf_file__find(ef, start + si.size, &off);
	CHECK(next != NULL && strcmp(next, "fixture_nosize"));
	CHECK_INT(off, 0);
	elf_file__free(ef);
}

TEST(sorted_table)
{
	struct elf_file *ef = elf_file__open(nopie);
	struct elf_sym_info a, b;
	size_t i;

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK(elf_file__nr_syms(ef) > 5);
	for (i = 1; i < elf_file__nr_syms(ef); i++) {
		elf_file__sym(ef, i - 1, &a);
		elf_file__sym(ef, i, &b);
		CHECK(a.addr < b.addr);
		CHECK(a.addr + a.size <= b.addr);
	}
	CHECK_INT(elf_file__sym(ef, i, &a), -ENOENT);
	elf_file__free(ef);
}

/* file offset -> vaddr, checked against the .text section header. */
static void check_offsets(const char *path)
{
	unsigned long long text_addr, text_off, addr;
	struct elf_file *ef = elf_file__open(path);
	__u64 vaddr = 0;

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_INT(fx_section(path, ".text", &text_addr, &text_off), 0);
	CHECK_INT(fx_nm(path, "fixture_target", false, &addr), 0);
	CHECK_INT(elf_file__offset_to_vaddr(ef, addr - text_addr + text_off,
					    &vaddr), 0);
	CHECK(vaddr == addr);
	CHECK_INT(elf_file__offset_to_vaddr(ef, 1ULL << 60, &vaddr), -ENOENT);
	elf_file__free(ef);
}

TEST(offset_to_vaddr)
{
	check_offsets(pie);
	check_offsets(nopie);
}

TEST(build_id)
{
	struct elf_file *ef = elf_file__open(pie);
	char want[256];

	CHECK(ef != NULL);
	if (!ef)
		return;
	fx_build_id(pie, want, sizeof(want));
	CHECK_INT(strlen(want), 40);
	CHECK_STR(elf_file__build_id(ef), want);
	elf_file__free(ef);
}

TEST(shared_library)
{
	struct elf_file *ef = elf_file__open(lib);
	unsigned long long helper;
	__u64 off;

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_INT(elf_file__type(ef), ET_DYN);
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_SYMTAB);
	check_sym(ef, lib, "fixlib_alpha", false);
	check_sym(ef, lib, "fixlib_beta", false);
	CHECK_INT(fx_nm(lib, "fixlib_helper", false, &helper), 0);
	CHECK_STR(elf_file__find(ef, helper + 1, &off), "fixlib_helper");
	elf_file__free(ef);
}

/* Stripped: only .dynsym is left, the static helper is gone. */
TEST(stripped_library)
{
	struct elf_file *ef = elf_file__open(slib);
	unsigned long long helper;
	const char *name;
	__u64 off;

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_DYNSYM);
	check_sym(ef, slib, "fixlib_alpha", true);
	check_sym(ef, slib, "fixlib_beta", true);
	/* Where the helper was (address from the unstripped copy). */
	CHECK_INT(fx_nm(lib, "fixlib_helper", false, &helper), 0);
	name = elf_file__find(ef, helper + 1, &off);
	CHECK(!name || strcmp(name, "fixlib_helper"));
	elf_file__free(ef);
}

/* e_entry, read as libelf reads it; 0 if none. */
static __u64 entry_of(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_file__begin(fd, NULL, 0) : NULL;
	GElf_Ehdr eh;
	__u64 e = elf && gelf_getehdr(elf, &eh) ? eh.e_entry : 0;

	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return e;
}

/*
 * The entry point: _start where the file's table does not name it but
 * has names (ld.so's .dynsym), for 64 bytes at most; in a stripped
 * program, which names nothing, not at all (pprof would take the mapping
 * for symbolized).
 */
TEST(entry_point)
{
	struct elf_file *ef = elf_file__open(spie), *full = elf_file__open(pie);
	struct elf_file *ld = elf_file__open("/lib64/ld-linux-x86-64.so.2");
	unsigned long long start = 0;
	__u64 off = 99, entry;
	const char *name;

	CHECK(ef != NULL && full != NULL && ld != NULL);
	if (!ef || !full || !ld)
		goto out;
	CHECK_INT(fx_nm(pie, "_start", false, &start), 0);
	CHECK_STR(elf_file__find(full, start, &off), "_start");
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_NONE);
	CHECK(elf_file__find(ef, start, &off) == NULL);
	entry = entry_of("/lib64/ld-linux-x86-64.so.2");
	CHECK(entry != 0);
	CHECK_STR(elf_file__find(ld, entry, &off), "_start");
	CHECK_STR(elf_file__find(ld, entry + 8, &off), "_start");
	CHECK_INT(off, 8);
	name = elf_file__find(ld, entry + 64, &off);
	CHECK(!name || strcmp(name, "_start"));
out:
	elf_file__free(ld);
	elf_file__free(ef);
	elf_file__free(full);
}

/* libc as installed: stripped, and aliases resolve to the plain name. */
TEST(system_libc)
{
	unsigned long long addr;
	struct elf_file *ef;
	const char *path;
	Dl_info info;
	__u64 off;

	CHECK(dladdr(dlsym(RTLD_DEFAULT, "getpid"), &info) != 0);
	path = info.dli_fname;
	ef = elf_file__open(path);
	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_INT(fx_nm(path, "getpid", true, &addr), 0);
	CHECK_STR(elf_file__find(ef, addr + 1, &off), "getpid");
	CHECK_INT(off, 1);
	CHECK(elf_file__build_id(ef) != NULL);
	elf_file__free(ef);
}

static unsigned long vdso_size(unsigned long base)
{
	char line[512];
	unsigned long start, end;
	unsigned long size = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base)
			size = end - start;
	}
	if (f)
		fclose(f);
	return size;
}

/* The vdso, parsed from a copy of our own memory, against nm on a dump. */
TEST(vdso_in_memory)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR), size;
	unsigned long long want;
	char dump[PATH_MAX];
	struct elf_file *ef;
	const char *name;
	void *copy;
	FILE *f;
	__u64 off;

	CHECK(base != 0);
	size = base ? vdso_size(base) : 0;
	CHECK(size > 0);
	if (!size)
		return;
	copy = malloc(size);
	memcpy(copy, (void *)base, size);
	snprintf(dump, sizeof(dump), "%s/vdso.so", dir);
	f = fopen(dump, "w");
	CHECK(f && fwrite(copy, 1, size, f) == size);
	if (f)
		fclose(f);
	ef = elf_file__open_mem(copy, size);
	CHECK(ef != NULL);
	CHECK_INT(fx_nm(dump, "clock_gettime", true, &want), 0);
	if (ef) {
		name = elf_file__find(ef, want + 2, &off);
		CHECK(name && (!strcmp(name, "clock_gettime") ||
			       !strcmp(name, "__vdso_clock_gettime")));
		CHECK_INT(off, 2);
		CHECK(elf_file__build_id(ef) != NULL);
	}
	elf_file__free(ef);
	free(copy);
}

TEST(refuses_non_elf)
{
	char path[PATH_MAX];
	struct elf_file *ef;

	errno = 0;
	CHECK(elf_file__open("/nonexistent/file") == NULL);
	CHECK_INT(errno, ENOENT);

	/* A FIFO must not block us, nor a device be read. */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	errno = 0;
	CHECK(elf_file__open(path) == NULL);
	CHECK_INT(errno, EINVAL);
	errno = 0;
	CHECK(elf_file__open("/dev/null") == NULL);
	CHECK_INT(errno, EINVAL);

	snprintf(path, sizeof(path), "%s/text", dir);
	CHECK_INT(fx_sh("echo hello > '%s'", path), 0);
	errno = 0;
	CHECK(elf_file__open(path) == NULL);
	CHECK_INT(errno, ENOEXEC);

	/* A relocatable object has no addresses to map. */
	snprintf(path, sizeof(path), "%s/fixlib.o", dir);
	CHECK_INT(fx_sh("cc -c -o '%s' '%s/fixlib.c'", path, fx_srcdir()), 0);
	errno = 0;
	ef = elf_file__open(path);
	CHECK(ef == NULL);
	CHECK_INT(errno, ENOEXEC);
	elf_file__free(ef);

	errno = 0;
	CHECK(elf_file__open_mem(path, 3) == NULL);
	CHECK_INT(errno, ENOEXEC);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	struct stat st;
	FILE *f = fopen(path, "r");

	if (f && !fstat(fileno(f), &st) && (buf = malloc(st.st_size))) {
		*len = fread(buf, 1, st.st_size, f);
	}
	if (f)
		fclose(f);
	return buf;
}

/* Anything a parsed broken file answers must be sane. */
static void poke(struct elf_file *ef)
{
	struct elf_sym_info si;
	__u64 vaddr, off;
	size_t i;

	for (i = 0; i < elf_file__nr_syms(ef) && i < 64; i++) {
		CHECK_INT(elf_file__sym(ef, i, &si), 0);
		CHECK(si.name && si.name[0]);
		elf_file__find(ef, si.addr + si.size / 2, &off);
	}
	elf_file__offset_to_vaddr(ef, 0x1000, &vaddr);
	elf_file__build_id(ef);
}

/* Truncated files, from memory (exact-size buffers) and from a file. */
/* A crafted file: mkelf.py MODE FILE ARGS (tests/e2e/helpers/); NULL on failure. */
static struct elf_file *crafted(const char *mode, const char *args)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/crafted.elf", dir);
	if (fx_sh("python3 '%s/../e2e/helpers/mkelf.py' %s '%s' %s", fx_srcdir(),
		  mode, path, args))
		return NULL;
	return elf_file__open(path);
}

/* 250 symbols naming one 60,000-byte string keep one copy of it. */
TEST(names_shared)
{
	struct elf_file *ef = crafted("shared", "250 60000");
	struct elf_sym_info a, b;

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_INT(elf_file__nr_syms(ef), 250);
	CHECK_INT(elf_file__capped(ef), 0);
	CHECK(elf_file__bytes(ef) < 250 * 16 + 60001 + 1024);
	CHECK_INT(elf_file__sym(ef, 0, &a), 0);
	CHECK_INT(elf_file__sym(ef, 249, &b), 0);
	CHECK(a.name == b.name);
	CHECK_INT(strlen(a.name), 60000);
	elf_file__free(ef);
}

/*
 * Names past 64 KiB are left out, and so are names past 32 MiB in all:
 * both flagged, and the memory kept stays under the caps.
 */
TEST(names_capped)
{
	struct elf_file *ef = crafted("shared", "250 4000000");

	CHECK(ef != NULL);
	if (ef) {
		CHECK_INT(elf_file__nr_syms(ef), 0);
		CHECK_INT(elf_file__capped(ef), CAP_BIT(CAP_NAMES));
		elf_file__free(ef);
	}
	ef = crafted("suffixes", "1000 65000");
	CHECK(ef != NULL);
	if (ef) {
		/* Each name its own: 64,000 bytes on average, 32 MiB in all. */
		CHECK(elf_file__nr_syms(ef) > 400 && elf_file__nr_syms(ef) < 600);
		CHECK_INT(elf_file__capped(ef), CAP_BIT(CAP_NAMES));
		CHECK(elf_file__bytes(ef) <= CAP_NAMES_BYTES + 64 * 1024);
		elf_file__free(ef);
	}
}

/* A section that claims 1 GiB is not read. */
TEST(section_capped)
{
	struct elf_file *ef = crafted("bigsection", "1073741824");

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_INT(elf_file__capped(ef), CAP_BIT(CAP_SECTION));
	CHECK_INT(elf_file__sym_source(ef), ELF_SYMS_NONE);
	elf_file__free(ef);
}

TEST(truncated)
{
	char path[PATH_MAX];
	unsigned char *img;
	size_t len = 0, cut;
	struct elf_file *ef;
	FILE *f;

	img = slurp(lib, &len);
	CHECK(img && len > 4096);
	if (!img)
		return;
	snprintf(path, sizeof(path), "%s/cut.so", dir);
	for (cut = 0; cut < len; cut += cut < 256 ? 1 : 97) {
		unsigned char *copy = malloc(cut + 1);

		memcpy(copy, img, cut);
		ef = elf_file__open_mem(copy, cut);
		if (ef)
			poke(ef);
		elf_file__free(ef);
		free(copy);

		f = fopen(path, "w");
		if (f) {
			fwrite(img, 1, cut, f);
			fclose(f);
		}
		ef = elf_file__open(path);
		if (ef)
			poke(ef);
		elf_file__free(ef);
	}
	free(img);
}

/* Random byte changes, most of them where the headers are. */
TEST(corrupted)
{
	unsigned char *img, *copy;
	unsigned int seed = 42;
	size_t len = 0, i, j;
	struct elf_file *ef;
	int parsed = 0;

	img = slurp(lib, &len);
	CHECK(img && len > 4096);
	if (!img)
		return;
	copy = malloc(len);
	for (i = 0; i < 3000; i++) {
		memcpy(copy, img, len);
		for (j = 0; j < 1 + i % 8; j++) {
			size_t pos;

			seed = seed * 1103515245 + 12345;
			pos = (seed >> 4) % len;
			/* Headers: the start, and the section table at the end. */
			if (j & 1)
				pos = (seed >> 4) % 64;
			else if (j & 2)
				pos = len - 1 - (seed >> 4) % 2048;
			seed = seed * 1103515245 + 12345;
			copy[pos] = (unsigned char)(seed >> 16);
		}
		ef = elf_file__open_mem(copy, len);
		if (ef) {
			parsed++;
			poke(ef);
		}
		elf_file__free(ef);
	}
	CHECK(parsed > 0);
	free(copy);
	free(img);
}

/*
 * A symbol's name is whatever bytes the file's owner chose: one with a
 * newline, an escape and U+FFFF is kept, made safe to print.
 */
TEST(unsafe_symbol_names)
{
	char path[PATH_MAX];
	unsigned long long addr = 0;
	struct elf_file *ef;
	__u64 off = 99;

	snprintf(path, sizeof(path), "%s/unsafe", dir);
	CHECK_INT(fx_nm(pie, "fixture_target", false, &addr), 0);
	CHECK_INT(fx_sh("objcopy --redefine-sym \"fixture_target=$(printf "
			"'evil 9\\nroot;x\\033[2J\\357\\277\\277')\" '%s' '%s'",
			pie, path), 0);
	ef = elf_file__open(path);
	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK_STR(elf_file__find(ef, addr, &off), "evil 9?root;x?[2J???");
	CHECK_INT(off, 0);
	elf_file__free(ef);
}

int main(void)
{
	if (build_fixtures()) {
		fprintf(stderr, "cannot build the fixtures with cc\n");
		printf("not ok - build_fixtures\n");
		fx_rmdir(dir);
		return 1;
	}
	RUN(pie);
	RUN(nopie);
	RUN(size_zero_symbol);
	RUN(sorted_table);
	RUN(offset_to_vaddr);
	RUN(build_id);
	RUN(shared_library);
	RUN(stripped_library);
	RUN(entry_point);
	RUN(system_libc);
	RUN(vdso_in_memory);
	RUN(refuses_non_elf);
	RUN(names_shared);
	RUN(names_capped);
	RUN(section_capped);
	RUN(truncated);
	RUN(corrupted);
	RUN(unsafe_symbol_names);
	fx_rmdir(dir);
	return unit_summary();
}
