// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the .eh_frame compiler (src/unwind/ehframe.c).
 *
 * Real objects are checked against a reference read from binutils:
 * readelf --debug-dump=frames-interp gives, per FDE, the rows LOC → CFA
 * rule, rbp rule, return address rule; the test maps each to the row the
 * table must have (bpf/unwind/uwtable.h) and compares at every LOC, at each FDE's
 * end, and at 10,000 pseudo-random addresses inside FDEs.  What readelf
 * cannot say is taken from elsewhere and named: which CFA expressions are
 * GCC's PLT one (readelf --debug-dump=frames spells them out), signal
 * frames (the CIE's "S"), the entry point (readelf -h).
 *
 * Crafted sections, wrapped in a minimal ELF (fuzz/targets.h), check the
 * interpreter's answers and that broken input gives an error or a sound
 * partial table.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <time.h>

#include "fixtures/fixtures.h"
#include "fixtures/skip.h"
#include "fuzz/targets.h"
#include "unit.h"

#define RANDOM_CHECKS	10000
#define COL_MAX		24

/* --- The reference, from readelf --- */

struct ref_row {
	__u64 loc;
	char cfa[COL_MAX], bp[COL_MAX], ra[COL_MAX];
};

struct ref_fde {
	__u64 off, start, end;
	size_t row, n_rows;	/* in ref.rows */
	bool signal, entry;
	int plt_thr;		/* 10 or 11: its CFA expression is GCC's PLT one */
};

struct ref_cie {
	__u64 off;
	bool signal;
	struct ref_row init;
};

struct ref {
	struct ref_fde *fdes;
	size_t n_fdes;
	struct ref_row *rows;
	size_t n_rows;
	struct ref_cie cies[64];
	size_t n_cies;
	__u64 entry;
};

/* Room for element n: doubling at 16, 32, 64...; called at each one. */
static void *grow(void *p, size_t n, size_t elem)
{
	if (n >= 16 && (n & (n - 1)))
		return p;
	p = realloc(p, (n < 16 ? 16 : 2 * n) * elem);
	if (!p)
		abort();
	return p;
}

/* Which column of a readelf table holds CFA, rbp, ra (-1: none). */
struct cols {
	int cfa, bp, ra;
};

static void parse_cols(const char *line, struct cols *c)
{
	char buf[1024], *tok, *save = NULL;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	*c = (struct cols){ -1, -1, -1 };
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), i++) {
		if (!strcmp(tok, "CFA"))
			c->cfa = i;
		else if (!strcmp(tok, "rbp"))
			c->bp = i;
		else if (!strcmp(tok, "ra"))
			c->ra = i;
	}
}

/*
 * A table row: "LOC CFA reg...", the columns named by the header.  A
 * register rule reads "r10 (r10)": the part in brackets is no column.
 */
static bool parse_row(const char *line, const struct cols *c,
		      struct ref_row *r)
{
	char buf[1024], *tok, *save = NULL;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	*r = (struct ref_row){ .bp = "u", .ra = "u" };
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), i++) {
		if (tok[0] == '(')
			i--;
		else if (i == 0)
			r->loc = strtoull(tok, NULL, 16);
		else if (i == c->cfa)
			snprintf(r->cfa, COL_MAX, "%s", tok);
		else if (i == c->bp)
			snprintf(r->bp, COL_MAX, "%s", tok);
		else if (i == c->ra)
			snprintf(r->ra, COL_MAX, "%s", tok);
	}
	return i > 1;
}

static struct ref_cie *ref_cie(struct ref *ref, __u64 off)
{
	size_t i;

	for (i = 0; i < ref->n_cies; i++) {
		if (ref->cies[i].off == off)
			return &ref->cies[i];
	}
	return NULL;
}

/* An FDE that ended: no rows means the CIE's initial ones. */
static void close_fde(struct ref *ref, struct ref_fde *f, __u64 cie_off)
{
	struct ref_cie *cie = ref_cie(ref, cie_off);

	if (!f)
		return;
	f->signal = cie && cie->signal;
	if (!f->n_rows && cie) {
		ref->rows = grow(ref->rows, ref->n_rows, sizeof(*ref->rows));
		ref->rows[ref->n_rows] = cie->init;
		ref->rows[ref->n_rows].loc = f->start;
		f->row = ref->n_rows++;
		f->n_rows = 1;
	}
}

static int read_interp(const char *path, struct ref *ref)
{
	char cmd[PATH_MAX + 64], line[1024], aug[32];
	unsigned long long off, len, id, cie_off = 0, a, b;
	struct ref_fde *f = NULL;
	struct ref_cie *cie = NULL;
	struct cols cols = { -1, -1, -1 };
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		struct ref_row r;

		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx",
			   &off, &len, &id, &a, &a, &b) == 6) {
			close_fde(ref, f, cie_off);
			sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx",
			       &off, &len, &id, &cie_off, &a, &b);
			ref->fdes = grow(ref->fdes, ref->n_fdes, sizeof(*ref->fdes));
			f = &ref->fdes[ref->n_fdes++];
			*f = (struct ref_fde){ .off = off, .start = a, .end = b,
					       .row = ref->n_rows };
			cie = NULL;
		} else if (sscanf(line, "%llx %llx %llx CIE \"%31[^\"]\"",
				  &off, &len, &id, aug) >= 3 && strstr(line, " CIE")) {
			close_fde(ref, f, cie_off);
			f = NULL;
			if (ref->n_cies == 64)
				break;
			cie = &ref->cies[ref->n_cies++];
			*cie = (struct ref_cie){ .off = off,
				.signal = strchr(line, '"') && strchr(strchr(line, '"'), 'S') };
		} else if (strstr(line, "   LOC ")) {
			parse_cols(line, &cols);
		} else if (line[0] == '0' && strlen(line) > 17 && line[16] == ' ' &&
			   parse_row(line, &cols, &r)) {
			if (cie) {
				cie->init = r;
			} else if (f) {
				ref->rows = grow(ref->rows, ref->n_rows, sizeof(*ref->rows));
				ref->rows[ref->n_rows++] = r;
				f->n_rows++;
			}
		}
	}
	close_fde(ref, f, cie_off);
	/* readelf exits 1 on libc and ld.so without a word: not checked. */
	return pclose(p) == -1 ? -1 : 0;
}

/* The PLT expression of each FDE, from the raw dump; same FDE order. */
static int read_plt_exprs(const char *path, struct ref *ref)
{
	static const char plt[] = "DW_CFA_def_cfa_expression (DW_OP_breg7 (rsp): 8; "
		"DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and; DW_OP_lit1%d; "
		"DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus)";
	char cmd[PATH_MAX + 64], line[1024], want[256];
	unsigned long long off, len, id;
	struct ref_fde *f = NULL;
	size_t i = 0;
	FILE *p;
	int lit;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *e = strstr(line, "DW_CFA_def_cfa_expression");

		if (sscanf(line, "%llx %llx %llx FDE", &off, &len, &id) == 3 &&
		    strstr(line, " FDE ")) {
			f = i < ref->n_fdes && ref->fdes[i].off == off ? &ref->fdes[i] : NULL;
			i++;
			continue;
		}
		if (!e || !f)
			continue;
		e[strcspn(e, "\n")] = '\0';
		f->plt_thr = -1;	/* any other expression */
		for (lit = 0; lit <= 1; lit++) {
			snprintf(want, sizeof(want), plt, lit);
			if (!strcmp(e, want))
				f->plt_thr = 10 + lit;
		}
	}
	CHECK_INT(i, ref->n_fdes);
	return pclose(p) == -1 ? -1 : 0;
}

static __u64 read_entry(const char *path)
{
	char cmd[PATH_MAX + 64], line[256];
	unsigned long long e = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -h '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		sscanf(line, " Entry point address: %llx", &e);
	pclose(p);
	return e;
}

static int cmp_ref_fde(const void *pa, const void *pb)
{
	const struct ref_fde *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

static void ref_free(struct ref *ref)
{
	free(ref->fdes);
	free(ref->rows);
}

/* --- What the table must say, from the reference --- */

static int expect_bp(const char *s)
{
	long long off;

	if (!strcmp(s, "u") || !strcmp(s, "s"))
		return UW_BP_SAME;
	if (sscanf(s, "c%lld", &off) != 1 || off % 8 || off == 0 ||
	    off < -128 * 8 || off >= UW_BP_UNKNOWN * 8)
		return UW_BP_UNKNOWN;
	return (int)(off / 8);
}

static __u32 expect_rule(const struct ref_fde *f, const struct ref_row *r)
{
	unsigned int op;
	long long off;
	int bp;

	if (f->signal)
		return uw_rule(UW_OP_SIGRETURN, 0, 0);
	if (f->entry || !strcmp(r->ra, "u"))
		return uw_rule(UW_OP_STOP, 0, 0);
	if (strcmp(r->ra, "c-8"))
		return uw_rule(UW_OP_UNSUPPORTED, 0, 0);
	bp = expect_bp(r->bp);
	if (!strcmp(r->cfa, "exp"))
		return f->plt_thr > 0 ? uw_rule(UW_OP_PLT, bp, (unsigned int)f->plt_thr)
				      : uw_rule(UW_OP_UNSUPPORTED, 0, 0);
	if (sscanf(r->cfa, "rsp%lld", &off) == 1)
		op = UW_OP_CFA_SP;
	else if (sscanf(r->cfa, "rbp%lld", &off) == 1)
		op = UW_OP_CFA_BP;
	else
		return uw_rule(UW_OP_UNSUPPORTED, 0, 0);
	if (off < 0 || off > UW_CFA_OFF_MAX)
		return uw_rule(UW_OP_UNSUPPORTED, 0, 0);
	return uw_rule(op, bp, (unsigned int)off);
}

/* The reference row in force at addr inside f. */
static const struct ref_row *ref_at(const struct ref *ref,
				    const struct ref_fde *f, __u64 addr)
{
	const struct ref_row *best = &ref->rows[f->row];
	size_t i;

	for (i = 0; i < f->n_rows; i++) {
		if (ref->rows[f->row + i].loc <= addr)
			best = &ref->rows[f->row + i];
	}
	return best;
}

struct tally {
	size_t boundaries, randoms, mismatches;
	size_t signal;		/* signal frames among the FDEs */
};

/* Of the last compare_with_readelf(). */
static struct tally last;

static void describe(char *buf, size_t len, __u32 rule)
{
	snprintf(buf, len, "op %u bp %d off %u", uw_rule_op(rule),
		 uw_rule_bp(rule), uw_rule_cfa_off(rule));
}

static void check_at(const struct uw_table *t, __u64 addr, __u32 want,
		     const char *what, struct tally *ty)
{
	const struct uw_row *row = addr >= t->base && addr - t->base <= UINT32_MAX ?
		ehframe__find(t, (__u32)(addr - t->base)) : NULL;
	char w[64], g[64];

	if (row && row->rule == want)
		return;
	if (++ty->mismatches <= 8) {
		describe(w, sizeof(w), want);
		describe(g, sizeof(g), row ? row->rule : 0);
		fprintf(stderr, "  %s at %#llx: want %s, got %s%s\n", what,
			(unsigned long long)addr, w, row ? g : "no row", "");
	}
}

/* xorshift64*: the same addresses on every run. */
static __u64 next_rand(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Every LOC, every FDE end, and the byte before a widened signal frame. */
static void check_boundaries(const struct uw_table *t, struct ref *ref,
			     __u64 *eff_end, struct tally *ty)
{
	__u64 max_end = 0;
	size_t i, j;

	for (i = 0; i < ref->n_fdes; i++) {
		struct ref_fde *f = &ref->fdes[i];
		__u64 next = i + 1 < ref->n_fdes ? ref->fdes[i + 1].start : UINT64_MAX;

		eff_end[i] = f->end < next ? f->end : next;
		ty->signal += f->signal;
		if (f->signal && f->start && max_end < f->start) {
			check_at(t, f->start - 1, expect_rule(f, &ref->rows[f->row]),
				 "byte before signal frame", ty);
			ty->boundaries++;
		}
		if (f->end > max_end)
			max_end = f->end;
		if (eff_end[i] <= f->start)
			continue;
		for (j = 0; j < f->n_rows; j++) {
			const struct ref_row *r = &ref->rows[f->row + j];

			if (r->loc < f->start || r->loc >= eff_end[i])
				continue;
			check_at(t, r->loc, expect_rule(f, ref_at(ref, f, r->loc)),
				 "LOC", ty);
			ty->boundaries++;
		}
		if (next - eff_end[i] > 16) {
			check_at(t, eff_end[i], uw_rule(UW_OP_GAP, 0, 0), "FDE end", ty);
			ty->boundaries++;
		}
	}
}

static void check_random(const struct uw_table *t, struct ref *ref,
			 const __u64 *eff_end, struct tally *ty)
{
	__u64 *cum = calloc(ref->n_fdes + 1, sizeof(*cum)), seed = 0x5eed1234abcdull;
	size_t i, n;

	if (!cum)
		return;
	for (i = 0; i < ref->n_fdes; i++) {
		__u64 len = eff_end[i] > ref->fdes[i].start ?
			eff_end[i] - ref->fdes[i].start : 0;

		cum[i + 1] = cum[i] + len;
	}
	for (n = 0; n < RANDOM_CHECKS && cum[ref->n_fdes]; n++) {
		__u64 x = next_rand(&seed) % cum[ref->n_fdes];
		size_t lo = 0, hi = ref->n_fdes;
		const struct ref_fde *f;
		__u64 addr;

		while (hi - lo > 1) {	/* the FDE with cum[i] <= x < cum[i + 1] */
			size_t mid = (lo + hi) / 2;

			if (cum[mid] <= x)
				lo = mid;
			else
				hi = mid;
		}
		f = &ref->fdes[lo];
		addr = f->start + (x - cum[lo]);
		check_at(t, addr, expect_rule(f, ref_at(ref, f, addr)), "random", ty);
		ty->randoms++;
	}
	free(cum);
}

/* fde_count of .eh_frame_hdr (udata4, after an sdata4 eh_frame_ptr). */
static long hdr_fde_count(const char *path)
{
	unsigned char h[12];
	long count = -1;
	Elf_Data *d;
	Elf_Scn *scn;
	GElf_Shdr sh;
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_file__begin(fd, NULL, 0) : NULL;

	if (elf && !elf_file__section_by_name(elf, ".eh_frame_hdr", &scn, &sh) &&
	    (d = elf_rawdata(scn, NULL)) && d->d_size >= sizeof(h)) {
		memcpy(h, d->d_buf, sizeof(h));
		if (h[0] == 1 && h[1] == 0x1b && h[2] == 0x03)
			count = (long)(h[8] | h[9] << 8 | h[10] << 16 | (__u32)h[11] << 24);
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return count;
}

/*
 * An entry point no FDE holds (ld.so's): the outermost frame from it to
 * the next FDE, 256 bytes at most, as the compiler makes it.
 */
static void add_ref_entry(struct ref *ref)
{
	struct ref_fde e = { .start = ref->entry, .end = ref->entry + 256, .entry = true };
	size_t i;

	if (!ref->entry || !ref->n_rows)
		return;
	for (i = 0; i < ref->n_fdes; i++) {
		if (ref->fdes[i].entry)
			return;
		if (ref->fdes[i].start > e.start && ref->fdes[i].start < e.end)
			e.end = ref->fdes[i].start;
	}
	ref->fdes = grow(ref->fdes, ref->n_fdes, sizeof(*ref->fdes));
	ref->fdes[ref->n_fdes++] = e;
}

/*
 * The whole comparison of t (built from path) with readelf's view of
 * path; mismatches counted and the first ones printed.
 */
static void compare_with_readelf(const char *path, const char *label,
				 const struct uw_table *t)
{
	struct ref ref = {};
	struct tally ty = {};
	__u64 *eff_end;
	size_t i;

	CHECK_INT(read_interp(path, &ref), 0);
	CHECK_INT(read_plt_exprs(path, &ref), 0);
	ref.entry = read_entry(path);
	CHECK(ref.n_fdes > 0);
	CHECK_INT(t->n_fdes, ref.n_fdes);
	CHECK_INT(t->n_cies, ref.n_cies);
	for (i = 0; i < ref.n_fdes; i++) {
		struct ref_fde *f = &ref.fdes[i];

		f->entry = ref.entry && f->start <= ref.entry && ref.entry < f->end;
	}
	add_ref_entry(&ref);
	qsort(ref.fdes, ref.n_fdes, sizeof(*ref.fdes), cmp_ref_fde);
	eff_end = calloc(ref.n_fdes + 1, sizeof(*eff_end));
	if (eff_end) {
		check_boundaries(t, &ref, eff_end, &ty);
		check_random(t, &ref, eff_end, &ty);
	}
	free(eff_end);
	printf("# %s: %zu FDEs (%zu signal frames), %zu readelf rows; checked %zu boundaries and %zu random addresses: %zu mismatches\n",
	       label, ref.n_fdes, ty.signal, ref.n_rows, ty.boundaries, ty.randoms,
	       ty.mismatches);
	last = ty;
	CHECK(ty.boundaries >= ref.n_fdes / 2);
	CHECK_INT(ty.randoms, RANDOM_CHECKS);
	CHECK_INT(ty.mismatches, 0);
	ref_free(&ref);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void check_object(const char *path, const char *label)
{
	struct uw_table t;
	double ms;
	long hdr;
	int fd;

	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	ms = now_ms();
	CHECK_INT(ehframe__build_fd(fd, &t), 0);
	ms = now_ms() - ms;
	close(fd);
	hdr = hdr_fde_count(path);
	CHECK_INT(t.n_fdes, hdr);
	CHECK(t.n_rows > 0);
	CHECK_INT(t.n_overlaps, 0);
	CHECK_INT(t.n_bad_fdes, 0);
	compare_with_readelf(path, label, &t);
	printf("# %s: %zu rows (%u unsupported), %u FDEs (.eh_frame_hdr: %ld), %u CIEs, FP-style %u of %u non-trivial FDEs (%.1f%%), fp_built %d, built in %.1f ms\n",
	       label, t.n_rows, t.n_unsupported, t.n_fdes, hdr, t.n_cies,
	       t.n_fp_fdes, t.n_nontrivial_fdes,
	       t.n_nontrivial_fdes ? 100.0 * t.n_fp_fdes / t.n_nontrivial_fdes : 0.0,
	       t.fp_built, ms);
	ehframe__free(&t);
}

/* fp_built of an object, -1 if it cannot be built. */
static int fp_built(const char *path)
{
	struct uw_table t;
	int fd = open(path, O_RDONLY), r = -1;

	if (fd < 0)
		return -1;
	if (!ehframe__build_fd(fd, &t))
		r = t.fp_built;
	ehframe__free(&t);
	close(fd);
	return r;
}

/*
 * A workload built by make workloads: in $WORKLOADS (tests/run sets it),
 * else in the build directory this test binary runs from (OUTPUT/tests/).
 */
static const char *workload(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("WORKLOADS");
	char exe[PATH_MAX];
	ssize_t n;

	if (dir) {
		snprintf(buf, len, "%s/%s", dir, name);
		return buf;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(buf, len, "%s/workloads/%s", dirname(dirname(exe)), name);
	return buf;
}

#define SYSTEM_OBJECT(name, path)                                            \
	TEST(name)                                                           \
	{                                                                    \
		SKIP_UNLESS(!access(path, R_OK), "no " path);                \
		check_object(path, #name);                                   \
	}

/* libc has __restore_rt, a signal frame: its SIGRETURN rows are checked. */
TEST(libc)
{
	const char *path = "/lib/x86_64-linux-gnu/libc.so.6";

	SKIP_UNLESS(!access(path, R_OK), "no libc");
	check_object(path, "libc");
	CHECK(last.signal >= 1);
}

SYSTEM_OBJECT(ld_so, "/lib64/ld-linux-x86-64.so.2")
SYSTEM_OBJECT(libstdcxx, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
SYSTEM_OBJECT(python3_11, "/usr/bin/python3.11")

TEST(workloads)
{
	char burn[PATH_MAX], nofp[PATH_MAX];

	workload("burn", burn, sizeof(burn));
	workload("burn-nofp", nofp, sizeof(nofp));
	SKIP_UNLESS(!access(burn, R_OK) && !access(nofp, R_OK),
		    "no workloads: make workloads");
	check_object(burn, "burn");
	check_object(nofp, "burn-nofp");
	CHECK_INT(fp_built(burn), 1);
	CHECK_INT(fp_built(nofp), 0);
}

/*
 * A Rust release build mixes frame-pointer code (its standard library)
 * with code without (its own): not FP-built, so auto gives it a table.
 */
TEST(classifier_mixed)
{
	char rust[PATH_MAX];
	struct uw_table t;
	int fd;

	workload("rustburn", rust, sizeof(rust));
	SKIP_UNLESS(!access(rust, R_OK), "no rustburn: rustc, then make workloads");
	check_object(rust, "rustburn");
	fd = open(rust, O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(ehframe__build_fd(fd, &t), 0);
	close(fd);
	/* Both kinds, the frame-pointer kind the most of them. */
	CHECK(t.n_fp_fdes * 2 > t.n_nontrivial_fdes);
	CHECK(t.n_fp_fdes < t.n_nontrivial_fdes);
	CHECK_INT(t.fp_built, 0);
	ehframe__free(&t);
}

/* The system's objects are built without frame pointers (Debian 12). */
TEST(classifier_system)
{
	static const char *const paths[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/bin/python3.11",
	};
	size_t i;

	SKIP_UNLESS(!access(paths[0], R_OK), "no libc");
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!access(paths[i], R_OK))
			CHECK_INT(fp_built(paths[i]), 0);
	}
}

/* The vdso, from memory, against readelf on a copy of it. */
TEST(vdso)
{
	const unsigned char *vdso = (const void *)getauxval(AT_SYSINFO_EHDR);
	char dir[FX_DIR_MAX], path[PATH_MAX];
	struct uw_table t;
	size_t size;
	FILE *f;

	SKIP_UNLESS(vdso, "no vdso");
	/* Its section headers come last. */
	{
		const Elf64_Ehdr *eh = (const void *)vdso;

		size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	}
	CHECK_INT(ehframe__build_mem(vdso, size, &t), 0);
	CHECK_INT(fx_tmpdir(dir), 0);
	snprintf(path, sizeof(path), "%s/vdso.so", dir);
	f = fopen(path, "w");
	CHECK(f && fwrite(vdso, 1, size, f) == size);
	if (f)
		fclose(f);
	compare_with_readelf(path, "vdso", &t);
	ehframe__free(&t);
}

/* Without section headers, through PT_GNU_EH_FRAME: the same table. */
TEST(no_section_headers)
{
	char burn[PATH_MAX];
	struct uw_table a, b;
	unsigned char *img;
	size_t size, i;
	FILE *f;

	workload("burn-nofp", burn, sizeof(burn));
	SKIP_UNLESS(!access(burn, R_OK), "no workloads: make workloads");
	f = fopen(burn, "r");
	img = malloc(1 << 20);
	size = f && img ? fread(img, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	CHECK(size > 64);
	CHECK_INT(ehframe__build_mem(img, size, &a), 0);
	memset(img + 40, 0, 8);		/* e_shoff */
	memset(img + 60, 0, 4);		/* e_shnum, e_shstrndx */
	CHECK_INT(ehframe__build_mem(img, size, &b), 0);
	CHECK_INT(a.n_rows, b.n_rows);
	CHECK_INT(a.n_fdes, b.n_fdes);
	for (i = 0; i < a.n_rows && i < b.n_rows; i++) {
		CHECK_INT(a.rows[i].addr, b.rows[i].addr);
		CHECK_INT(a.rows[i].rule, b.rows[i].rule);
	}
	ehframe__free(&a);
	ehframe__free(&b);
	free(img);
}

/* A .plt without an FDE (ld --no-ld-generated-unwind-info). */
TEST(plt_without_fde)
{
	char dir[FX_DIR_MAX], exe[PATH_MAX];
	unsigned long long plt = 0, size = 0;
	const struct uw_row *r;
	struct uw_table t;
	char line[PATH_MAX + 64];
	FILE *p;
	int fd;

	CHECK_INT(fx_tmpdir(dir), 0);
	snprintf(exe, sizeof(exe), "%s/noplt", dir);
	SKIP_UNLESS(!fx_cc("fixture.c", "-Wl,--no-ld-generated-unwind-info -Wl,-z,lazy", exe),
		    "cc cannot link without PLT unwind info");
	snprintf(line, sizeof(line), "readelf -SW '%s'", exe);
	p = popen(line, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char *s = strstr(line, " .plt ");

		if (s)
			sscanf(s, " .plt PROGBITS %llx %*x %llx", &plt, &size);
	}
	if (p)
		pclose(p);
	SKIP_UNLESS(plt && size, "no .plt");
	fd = open(exe, O_RDONLY);
	CHECK_INT(ehframe__build_fd(fd, &t), 0);
	close(fd);
	r = ehframe__find(&t, (__u32)(plt - t.base));
	CHECK(r && r->rule == uw_rule(UW_OP_CFA_SP, UW_BP_SAME, 8));
	r = ehframe__find(&t, (__u32)(plt + size - 1 - t.base));
	CHECK(r && r->rule == uw_rule(UW_OP_CFA_SP, UW_BP_SAME, 8));
	ehframe__free(&t);
}

/* --- Crafted sections --- */

/* A growing byte buffer for hand-made .eh_frame contents. */
struct buf {
	unsigned char b[1 << 16];
	size_t n;
};

static void put(struct buf *b, __u64 v, size_t n)
{
	if (b->n + n <= sizeof(b->b))
		fuzz_put(b->b + b->n, v, n);
	b->n += n;
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	if (n && b->n + n <= sizeof(b->b))
		memcpy(b->b + b->n, p, n);
	b->n += n;
}

/* Patch a 32-bit length at 'at' to cover up to the end. */
static void end_entry(struct buf *b, size_t at)
{
	fuzz_put(b->b + at, b->n - at - 4, 4);
}

/* CIE "zR", pcrel|sdata4, code 1, data -8, ra 16: CFA = rsp+8, ra at c-8. */
static size_t put_cie(struct buf *b, const char *aug)
{
	static const unsigned char init[] = { 0x0c, 7, 8, 0x90, 1 };
	size_t at = b->n;

	put(b, 0, 4);
	put(b, 0, 4);		/* CIE id */
	put(b, 1, 1);		/* version */
	put_bytes(b, aug, strlen(aug) + 1);
	put(b, 1, 1);		/* code alignment */
	put(b, 0x78, 1);	/* data alignment: -8 */
	put(b, 16, 1);		/* return address column */
	put(b, 1, 1);		/* augmentation data length */
	put(b, 0x1b, 1);	/* FDE pointers: pcrel sdata4 */
	put_bytes(b, init, sizeof(init));
	while ((b->n - at) % 4)
		put(b, 0, 1);
	end_entry(b, at);
	return at;
}

/* An FDE of cie for [start, start + len) running prog. */
static void put_fde(struct buf *b, size_t cie, __u64 start, __u32 len,
		    const void *prog, size_t prog_len)
{
	size_t at = b->n;

	put(b, 0, 4);
	put(b, b->n - cie, 4);	/* CIE pointer */
	put(b, start - (FUZZ_EH_VADDR + b->n), 4);
	put(b, len, 4);
	put(b, 0, 1);		/* augmentation data length */
	put_bytes(b, prog, prog_len);
	end_entry(b, at);
}

static int build_crafted(const struct buf *b, __u64 entry, struct uw_table *t)
{
	size_t size;
	void *img = fuzz_eh_elf(b->b, b->n, 1, entry, &size);
	int err = img ? ehframe__build_mem(img, size, t) : -ENOMEM;

	free(img);
	return err;
}

/* Sorted, unique, and found by lookup. */
static void check_sound(const struct uw_table *t)
{
	size_t i;

	for (i = 0; i < t->n_rows; i++) {
		CHECK(ehframe__find(t, t->rows[i].addr) == &t->rows[i]);
		if (i)
			CHECK(t->rows[i - 1].addr < t->rows[i].addr);
		if (i)
			CHECK(t->rows[i - 1].rule != t->rows[i].rule);
	}
}

static __u32 rule_at(const struct uw_table *t, __u64 vaddr)
{
	const struct uw_row *r = ehframe__find(t, (__u32)(vaddr - t->base));

	return r ? r->rule : 0xffffffff;
}

#define SP(off)		uw_rule(UW_OP_CFA_SP, UW_BP_SAME, off)
#define GAP		uw_rule(UW_OP_GAP, 0, 0)
#define UNSUP		uw_rule(UW_OP_UNSUPPORTED, 0, 0)

/* Every instruction the compiler emits, with known answers. */
TEST(crafted_program)
{
	static const unsigned char prog[] = {
		0x41,			/* advance 1 */
		0x0e, 16,		/* def_cfa_offset 16 */
		0x86, 2,		/* rbp at c-16 */
		0x41,			/* 0x1001 */
		0x0d, 6,		/* def_cfa_register rbp */
		0x0a,			/* remember_state */
		0x42,			/* 0x1004 */
		0x0c, 7, 8,		/* def_cfa rsp+8 */
		0xc6,			/* restore rbp */
		0x41,			/* 0x1005 */
		0x0b,			/* restore_state */
		0x02, 4,		/* advance_loc1 4: 0x1009 */
		0x12, 7, 0x7e,		/* def_cfa_sf rsp, -2 * -8 = 16 */
		0x2e, 8,		/* GNU_args_size: ignored */
		0x03, 8, 0,		/* advance_loc2 8: 0x1011 */
		0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
		0x41,			/* 0x1012: another expression */
		0x0f, 2, 0x77, 0,
		0x41,			/* 0x1013 */
		0x0c, 7, 0x80, 0x80, 0x40,	/* rsp + 2^20: over the max */
		0x41,			/* 0x1014 */
		0x0c, 3, 8,		/* CFA by rbx */
		0x41,			/* 0x1015 */
		0x0c, 7, 8, 0x07, 16,	/* rsp + 8, ra undefined */
		0x41,			/* 0x1016 */
		0x08, 16, 0x09, 16, 3,	/* ra same value, then in rbx */
		0x41,			/* 0x1017 */
		0x90, 1, 0x2f, 6, 2,	/* ra back; rbp at c+16 (negative offset) */
	};
	struct buf b = {};
	struct uw_table t;
	size_t cie = put_cie(&b, "zR");

	put_fde(&b, cie, 0x1000, 0x20, prog, sizeof(prog));
	put(&b, 0, 4);
	CHECK_INT(build_crafted(&b, 0, &t), 0);
	check_sound(&t);
	CHECK_INT(t.n_fdes, 1);
	CHECK_INT(t.n_cies, 1);
	CHECK_INT(rule_at(&t, 0x1000), SP(8));
	CHECK_INT(rule_at(&t, 0x1001), uw_rule(UW_OP_CFA_SP, -2, 16));
	CHECK_INT(rule_at(&t, 0x1002), uw_rule(UW_OP_CFA_BP, -2, 16));
	CHECK_INT(rule_at(&t, 0x1003), uw_rule(UW_OP_CFA_BP, -2, 16));
	CHECK_INT(rule_at(&t, 0x1004), SP(8));
	CHECK_INT(rule_at(&t, 0x1005), uw_rule(UW_OP_CFA_BP, -2, 16));
	CHECK_INT(rule_at(&t, 0x1008), uw_rule(UW_OP_CFA_BP, -2, 16));
	CHECK_INT(rule_at(&t, 0x1009), uw_rule(UW_OP_CFA_SP, -2, 16));
	CHECK_INT(rule_at(&t, 0x1010), uw_rule(UW_OP_CFA_SP, -2, 16));
	CHECK_INT(rule_at(&t, 0x1011), uw_rule(UW_OP_PLT, -2, 11));
	CHECK_INT(rule_at(&t, 0x1012), UNSUP);
	CHECK_INT(rule_at(&t, 0x1013), UNSUP);
	CHECK_INT(rule_at(&t, 0x1014), UNSUP);
	CHECK_INT(rule_at(&t, 0x1015), uw_rule(UW_OP_STOP, 0, 0));
	CHECK_INT(rule_at(&t, 0x1016), UNSUP);
	CHECK_INT(rule_at(&t, 0x1017), uw_rule(UW_OP_CFA_SP, 2, 8));
	CHECK_INT(rule_at(&t, 0x101f), uw_rule(UW_OP_CFA_SP, 2, 8));
	CHECK_INT(rule_at(&t, 0x1020), GAP);
	/* The PLT section of the wrapper has no FDE: CFA = rsp + 8. */
	CHECK_INT(rule_at(&t, FUZZ_PLT_VADDR), SP(8));
	CHECK_INT(rule_at(&t, FUZZ_PLT_VADDR + FUZZ_PLT_SIZE), GAP);
	CHECK_INT(t.n_unsupported, 2);
	/* It has GCC's PLT expression: not compiled code, not classified. */
	CHECK_INT(t.n_nontrivial_fdes, 0);
	CHECK_INT(t.n_fp_fdes, 0);
	ehframe__free(&t);
}

/* Gaps, overlaps, the entry point, a signal frame's early byte. */
TEST(crafted_layout)
{
	static const unsigned char push[] = { 0x41, 0x0e, 16 };
	struct buf b = {};
	struct uw_table t;
	size_t cie = put_cie(&b, "zR"), sig = put_cie(&b, "zRS");

	put_fde(&b, cie, 0x1000, 0x10, push, sizeof(push));
	put_fde(&b, cie, 0x1020, 0x8, push, sizeof(push));	/* 16 bytes on */
	put_fde(&b, cie, 0x1100, 0x100, push, sizeof(push));
	put_fde(&b, cie, 0x1180, 0x10, NULL, 0);		/* inside */
	put_fde(&b, sig, 0x1301, 0x10, NULL, 0);
	put_fde(&b, cie, 0x1400, 0x10, push, sizeof(push));	/* _start */
	put_fde(&b, cie, 0x1421, 0x10, push, sizeof(push));	/* 17 bytes on */
	CHECK_INT(build_crafted(&b, 0x1404, &t), 0);
	check_sound(&t);
	CHECK_INT(t.n_fdes, 7);
	CHECK_INT(t.n_overlaps, 1);
	CHECK_INT(rule_at(&t, 0x1001), SP(16));
	CHECK_INT(rule_at(&t, 0x101f), SP(16));		/* padding */
	CHECK_INT(rule_at(&t, 0x1020), SP(8));
	CHECK_INT(rule_at(&t, 0x1028), GAP);
	CHECK_INT(rule_at(&t, 0x117f), SP(16));
	CHECK_INT(rule_at(&t, 0x1180), SP(8));		/* the later start */
	CHECK_INT(rule_at(&t, 0x1190), GAP);
	CHECK_INT(rule_at(&t, 0x12ff), GAP);
	CHECK_INT(rule_at(&t, 0x1300), uw_rule(UW_OP_SIGRETURN, 0, 0));
	CHECK_INT(rule_at(&t, 0x1310), uw_rule(UW_OP_SIGRETURN, 0, 0));
	CHECK_INT(rule_at(&t, 0x1311), GAP);
	CHECK_INT(rule_at(&t, 0x1400), uw_rule(UW_OP_STOP, 0, 0));
	CHECK_INT(rule_at(&t, 0x1401), uw_rule(UW_OP_STOP, 0, 0));
	CHECK_INT(rule_at(&t, 0x1410), GAP);	/* not padding: 17 bytes */
	CHECK_INT(rule_at(&t, 0x1421), SP(8));
	ehframe__free(&t);
}

/*
 * An entry point no FDE holds (ld.so's _start): the outermost frame from
 * it to the next FDE, or 256 bytes; counted as no FDE, no overlap.
 */
TEST(crafted_entry_without_fde)
{
	static const unsigned char push[] = { 0x41, 0x0e, 16 };
	struct buf b = {};
	struct uw_table t;
	size_t cie = put_cie(&b, "zR");

	put_fde(&b, cie, 0x1000, 0x10, push, sizeof(push));
	put_fde(&b, cie, 0x1080, 0x10, push, sizeof(push));
	CHECK_INT(build_crafted(&b, 0x1040, &t), 0);
	check_sound(&t);
	CHECK_INT(t.n_fdes, 2);
	CHECK_INT(t.n_overlaps, 0);
	CHECK_INT(rule_at(&t, 0x1010), GAP);
	CHECK_INT(rule_at(&t, 0x103f), GAP);
	CHECK_INT(rule_at(&t, 0x1040), uw_rule(UW_OP_STOP, 0, 0));
	CHECK_INT(rule_at(&t, 0x107f), uw_rule(UW_OP_STOP, 0, 0));
	CHECK_INT(rule_at(&t, 0x1080), SP(8));
	ehframe__free(&t);
	/* Past every FDE: 256 bytes. */
	CHECK_INT(build_crafted(&b, 0x2000, &t), 0);
	check_sound(&t);
	CHECK_INT(rule_at(&t, 0x1fff), GAP);
	CHECK_INT(rule_at(&t, 0x2000), uw_rule(UW_OP_STOP, 0, 0));
	CHECK_INT(rule_at(&t, 0x20ff), uw_rule(UW_OP_STOP, 0, 0));
	CHECK_INT(rule_at(&t, 0x2100), GAP);
	ehframe__free(&t);
	/* An FDE holds it: that FDE's, as before (crafted_layout). */
	CHECK_INT(build_crafted(&b, 0x1004, &t), 0);
	CHECK_INT(rule_at(&t, 0x1040), GAP);
	CHECK_INT(rule_at(&t, 0x1004), uw_rule(UW_OP_STOP, 0, 0));
	ehframe__free(&t);
}

/* The same CIE and FDE in 64-bit DWARF: the same rows. */
TEST(crafted_64bit_lengths)
{
	static const unsigned char init[] = { 0x0c, 7, 8, 0x90, 1, 0x41, 0x0e, 16 };
	struct buf b = {};
	struct uw_table t;
	size_t fde;

	put(&b, 0xffffffff, 4);
	put(&b, 8 + 1 + 3 + 5 + 5, 8);
	put(&b, 0, 8);			/* CIE id */
	put(&b, 1, 1);
	put_bytes(&b, "zR", 3);
	put_bytes(&b, "\x01\x78\x10\x01\x1b", 5);
	put_bytes(&b, init, 5);
	fde = b.n;
	put(&b, 0xffffffff, 4);
	put(&b, 8 + 4 + 4 + 1 + 3, 8);
	put(&b, b.n, 8);		/* back to the CIE at 0 */
	put(&b, 0x1000 - (FUZZ_EH_VADDR + b.n), 4);
	put(&b, 0x20, 4);
	put(&b, 0, 1);
	put_bytes(&b, init + 5, 3);
	CHECK_INT(b.n - fde, 12 + 8 + 4 + 4 + 1 + 3);
	CHECK_INT(build_crafted(&b, 0, &t), 0);
	CHECK_INT(t.n_fdes, 1);
	CHECK_INT(t.n_cies, 1);
	CHECK_INT(rule_at(&t, 0x1000), SP(8));
	CHECK_INT(rule_at(&t, 0x1001), SP(16));
	CHECK_INT(rule_at(&t, 0x1020), GAP);
	ehframe__free(&t);
}

/* Cut anywhere: an error or a sound table, never more FDEs. */
TEST(crafted_truncated)
{
	static const unsigned char push[] = { 0x41, 0x0e, 16, 0x41, 0x0e, 24 };
	struct buf b = {};
	struct uw_table t;
	size_t cie = put_cie(&b, "zR"), n, full;
	int ok = 0;

	put_fde(&b, cie, 0x1000, 0x10, push, sizeof(push));
	put_fde(&b, cie, 0x1100, 0x10, push, sizeof(push));
	full = b.n;
	for (n = 0; n <= full; n++) {
		b.n = n;
		if (build_crafted(&b, 0, &t))
			continue;
		ok++;
		check_sound(&t);
		CHECK(t.n_fdes <= 2);
		/* An FDE cut short is left out, not read past its end. */
		if (n < full)
			CHECK(t.n_fdes < 2);
		ehframe__free(&t);
	}
	CHECK(ok > 2);
	b.n = 0;
	CHECK_INT(build_crafted(&b, 0, &t), -ENOENT);	/* zero-length */
}

/* CIE pointers: out of the section, into an FDE, to itself, mid-entry. */
TEST(crafted_cie_pointers)
{
	size_t i;

	for (i = 0; i < 6; i++) {
		struct buf b = {};
		struct uw_table t;
		size_t cie = put_cie(&b, "zR"), fde1 = b.n, fde2, id_pos;
		__u32 bad;

		put_fde(&b, cie, 0x1000, 0x10, NULL, 0);
		fde2 = b.n;
		put_fde(&b, cie, 0x1100, 0x10, NULL, 0);
		/* The second FDE's pointer: the distance back from itself. */
		id_pos = fde2 + 4;
		switch (i) {
		case 0: bad = (__u32)id_pos + 1; break;	/* before the section */
		case 1: bad = 0x7fffffff; break;
		case 2: bad = 0xfffffffc; break;
		case 3: bad = (__u32)(id_pos - fde2); break;	/* itself */
		case 4: bad = (__u32)(id_pos - fde1); break;	/* another FDE */
		default: bad = (__u32)(id_pos - 2); break;	/* inside the CIE */
		}
		fuzz_put(b.b + id_pos, bad, 4);
		CHECK_INT(build_crafted(&b, 0, &t), 0);
		CHECK_INT(t.n_fdes, 1);
		CHECK_INT(t.n_bad_fdes, 1);
		check_sound(&t);
		ehframe__free(&t);
	}
}

/* An FDE longer than the section: reading stops there. */
TEST(crafted_fde_past_end)
{
	struct buf b = {};
	struct uw_table t;
	size_t cie = put_cie(&b, "zR"), fde2;

	put_fde(&b, cie, 0x1000, 0x10, NULL, 0);
	fde2 = b.n;
	put_fde(&b, cie, 0x1100, 0x10, NULL, 0);
	fuzz_put(b.b + fde2, 0x1000, 4);
	CHECK_INT(build_crafted(&b, 0, &t), 0);
	CHECK_INT(t.n_fdes, 1);
	ehframe__free(&t);
}

/* LEB128 of 20 bytes; 17 nested remember_state; restore with none. */
TEST(crafted_bounds)
{
	unsigned char prog[64];
	struct buf b = {};
	struct uw_table t;
	size_t cie = put_cie(&b, "zR"), n = 0, i;

	prog[n++] = 0x41;
	prog[n++] = 0x0e;
	for (i = 0; i < 20; i++)
		prog[n++] = 0x80;
	prog[n++] = 0;
	put_fde(&b, cie, 0x1000, 0x10, prog, n);
	n = 0;
	for (i = 0; i < 16; i++) {
		prog[n++] = 0x41;
		prog[n++] = 0x0a;
	}
	prog[n++] = 0x41;
	prog[n++] = 0x0a;	/* the 17th, at 0x1111 */
	put_fde(&b, cie, 0x1100, 0x20, prog, n);
	prog[0] = 0x41;
	prog[1] = 0x0b;
	put_fde(&b, cie, 0x1200, 0x10, prog, 2);
	CHECK_INT(build_crafted(&b, 0, &t), 0);
	check_sound(&t);
	CHECK_INT(rule_at(&t, 0x1000), SP(8));
	CHECK_INT(rule_at(&t, 0x1001), UNSUP);
	CHECK_INT(rule_at(&t, 0x1110), SP(8));
	CHECK_INT(rule_at(&t, 0x1111), UNSUP);
	CHECK_INT(rule_at(&t, 0x1201), UNSUP);
	CHECK_INT(t.n_unsupported, 3);
	ehframe__free(&t);
}

/* More rows than UW_MAX_ROWS: -EFBIG, in bounded time. */
TEST(crafted_row_cap)
{
	static struct buf b;	/* too big for the stack: grown below */
	size_t n = 3 * (UW_MAX_ROWS + 2) + 64, i, cie;
	unsigned char *prog = malloc(n), *sec;
	struct uw_table t;
	size_t size;
	void *img;

	CHECK(prog != NULL);
	if (!prog)
		return;
	for (i = 0; i + 3 <= n; i += 3) {
		prog[i] = 0x41;
		prog[i + 1] = 0x0e;
		prog[i + 2] = (i / 3) & 1 ? 16 : 24;
	}
	cie = put_cie(&b, "zR");
	put_fde(&b, cie, 0x1000, UW_MAX_ROWS + 100, NULL, 0);
	sec = malloc(b.n + n);
	CHECK(sec != NULL);
	if (sec) {
		memcpy(sec, b.b, b.n);
		memcpy(sec + b.n, prog, n);
		fuzz_put(sec + cie + 0x18, b.n - 0x18 - 4 + n, 4);
		img = fuzz_eh_elf(sec, b.n + n, 1, 0, &size);
		CHECK_INT(img ? ehframe__build_mem(img, size, &t) : -ENOMEM, -EFBIG);
		free(img);
	}
	free(sec);
	free(prog);
}

TEST(crafted_headers)
{
	struct buf b = {};
	struct uw_table t;
	unsigned char *img;
	size_t size;

	put_cie(&b, "zR");
	img = fuzz_eh_elf(b.b, b.n, 8 /* SHT_NOBITS */, 0, &size);
	CHECK_INT(ehframe__build_mem(img, size, &t), -ENOENT);
	free(img);
	img = fuzz_eh_elf(b.b, b.n, 1, 0, &size);
	img[18] = 183;		/* EM_AARCH64 */
	CHECK_INT(ehframe__build_mem(img, size, &t), -ENOEXEC);
	img[18] = 62;
	img[4] = 1;		/* ELFCLASS32 */
	CHECK_INT(ehframe__build_mem(img, size, &t), -ENOEXEC);
	CHECK_INT(ehframe__build_mem(img, 10, &t), -ENOEXEC);
	free(img);
}

int main(void)
{
	RUN_S(libc);
	RUN_S(ld_so);
	RUN_S(libstdcxx);
	RUN_S(python3_11);
	RUN_S(workloads);
	RUN_S(classifier_system);
	RUN_S(classifier_mixed);
	RUN_S(vdso);
	RUN_S(no_section_headers);
	RUN_S(plt_without_fde);
	RUN(crafted_program);
	RUN(crafted_layout);
	RUN(crafted_entry_without_fde);
	RUN(crafted_64bit_lengths);
	RUN(crafted_truncated);
	RUN(crafted_cie_pointers);
	RUN(crafted_fde_past_end);
	RUN(crafted_bounds);
	RUN(crafted_row_cap);
	RUN(crafted_headers);
	return unit_summary();
}
