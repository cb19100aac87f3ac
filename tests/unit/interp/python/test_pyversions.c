// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for CPython's layouts (src/interp/python/pyversions.c).
 *
 * - The table against the compiler: pyoffsets_probe.c, built at test time
 *   against each installed interpreter's own headers, prints the offsets.
 * - The table against running interpreters: the walker's path, followed
 *   here as the BPF walker will (_PyRuntime, the thread states, a window
 *   of PY_FRAME_WINDOW bytes a frame), must reach the frames and lines
 *   pycode_target.py says its main thread is blocked in.
 * - What every entry must hold for the walker, and the _Py_DebugOffsets
 *   parse on buffers made here and read from a running 3.13.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "interp/python/pycode.h"
#include "interp/python/pyversions.h"
#include "unit.h"
#include "fixtures/skip.h"
#include "fixtures/fixtures.h"
#include "pytarget.h"

/* --- Every field, by the names the probe prints --- */

struct field {
	const char *name;
	size_t off, size;
};

#define FIELD(n, member)                                                     \
	{ n, offsetof(struct py_layout, member),                              \
	  sizeof(((struct py_layout *)0)->member) }

static const struct field fields[] = {
	FIELD("version", version),
	FIELD("rt_tstate_current", bpf.rt_tstate_current),
	FIELD("rt_interp_head", bpf.rt_interp_head),
	FIELD("interp_gil", bpf.interp_gil),
	FIELD("gil_holder", bpf.gil_holder),
	FIELD("gil_locked", bpf.gil_locked),
	FIELD("interp_threads_head", bpf.interp_threads_head),
	FIELD("ts_next", bpf.ts_next),
	FIELD("ts_thread_id", bpf.ts_thread_id),
	FIELD("ts_native_id", bpf.ts_native_id),
	FIELD("ts_frame", bpf.ts_frame),
	FIELD("cframe_current_frame", bpf.cframe_current_frame),
	FIELD("fr_code", bpf.fr_code),
	FIELD("fr_previous", bpf.fr_previous),
	FIELD("fr_instr", bpf.fr_instr),
	FIELD("fr_entry", bpf.fr_entry),
	FIELD("fr_owner", bpf.fr_owner),
	FIELD("owner_cstack", bpf.owner_cstack),
	FIELD("co_firstlineno", co_firstlineno),
	FIELD("co_code", bpf.co_code),
	FIELD("co_filename", co_filename),
	FIELD("co_name", co_name),
	FIELD("co_qualname", co_qualname),
	FIELD("co_lines", co_lines),
	FIELD("ob_type", ob_type),
	FIELD("bytes_size", bytes_size),
	FIELD("bytes_data", bytes_data),
	FIELD("str_length", str_length),
	FIELD("str_state", str_state),
	FIELD("str_ascii_data", str_ascii_data),
	FIELD("str_compact_data", str_compact_data),
};

#define NR_FIELDS (sizeof(fields) / sizeof(fields[0]))

static __u64 field_get(const struct py_layout *l, const struct field *f)
{
	const __u8 *p = (const __u8 *)l + f->off;
	__u16 v16;
	__u32 v32;

	switch (f->size) {
	case 1:
		return *p;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	default:
		memcpy(&v32, p, 4);
		return v32;
	}
}

/* Field by field; prints what differs. */
static int layout_diff(const struct py_layout *a, const struct py_layout *b)
{
	size_t i;
	int n = 0;

	for (i = 0; i < NR_FIELDS; i++) {
		__u64 x = field_get(a, &fields[i]), y = field_get(b, &fields[i]);

		if (x != y) {
			fprintf(stderr, "  %s: %llu != %llu\n", fields[i].name,
				(unsigned long long)x, (unsigned long long)y);
			n++;
		}
	}
	n += a->bpf.instr_kind != b->bpf.instr_kind;
	n += a->lines_kind != b->lines_kind;
	return n;
}

/* --- The table --- */

TEST(lookup)
{
	static const unsigned int known[][2] = {
		{ 3, 8 }, { 3, 9 }, { 3, 10 }, { 3, 11 }, { 3, 12 }, { 3, 13 },
	};
	static const unsigned int unknown[][2] = {
		{ 3, 7 }, { 3, 14 }, { 3, 15 }, { 2, 7 }, { 4, 0 }, { 3, 0 },
		{ 3, 255 }, { 3, 256 + 11 }, { 256 + 3, 11 }, { 0, 0 },
	};
	struct py_layout l;
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		CHECK_INT(pyversions__lookup(known[i][0], known[i][1], &l), 0);
		CHECK_INT(l.version, known[i][0] << 8 | known[i][1]);
	}
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		CHECK_INT(pyversions__lookup(unknown[i][0], unknown[i][1], &l), -ENOENT);
}

/* A frame field the walker reads: there, and inside its window. */
static void check_frame_field(__u16 off, size_t width, const char *what,
			      unsigned int minor)
{
	if (off == PY_NO_OFF || off + width > PY_FRAME_WINDOW) {
		fprintf(stderr, "  3.%u: %s at %u\n", minor, what, off);
		CHECK(0);
	}
}

/* What the walker and the naming need of every entry. */
TEST(invariants)
{
	unsigned int minor;

	for (minor = 8; minor <= 13; minor++) {
		struct py_layout l;
		const struct py_offsets *o = &l.bpf;
		bool v311 = minor >= 11, v312 = minor >= 12;

		CHECK_INT(pyversions__lookup(3, minor, &l), 0);
		/* The path from _PyRuntime to a frame. */
		CHECK(o->rt_interp_head != PY_NO_OFF);
		CHECK(o->interp_threads_head != PY_NO_OFF);
		CHECK(o->ts_next != PY_NO_OFF);
		CHECK(o->ts_thread_id != PY_NO_OFF);
		CHECK(o->ts_frame != PY_NO_OFF);
		CHECK(o->ts_next != o->ts_thread_id && o->ts_next != o->ts_frame &&
		      o->ts_frame != o->ts_thread_id);
		CHECK_INT(o->rt_tstate_current == PY_NO_OFF, v312);
		/* The GIL: the runtime's holder, or the interpreter's GIL. */
		CHECK_INT(o->interp_gil != PY_NO_OFF, v312);
		if (v312)
			CHECK(o->gil_holder + 8 <= PY_GIL_WINDOW &&
			      o->gil_locked + 4 <= PY_GIL_WINDOW &&
			      o->gil_holder != o->gil_locked);
		else
			CHECK(o->gil_holder == 0xff && o->gil_locked == 0xff);
		CHECK_INT(o->cframe_current_frame != PY_NO_OFF, minor == 11 || minor == 12);
		if (o->cframe_current_frame != PY_NO_OFF)
			CHECK(o->cframe_current_frame < 64);
		/* The frame: every field inside the window. */
		check_frame_field(o->fr_code, 8, "code", minor);
		check_frame_field(o->fr_previous, 8, "previous", minor);
		check_frame_field(o->fr_instr, o->instr_kind == PY_INSTR_PTR ? 8 : 4,
				  "instr", minor);
		if (minor == 11)
			check_frame_field(o->fr_entry, 1, "is_entry", minor);
		else
			CHECK_INT(o->fr_entry, PY_NO_OFF);
		if (v311)
			check_frame_field(o->fr_owner, 1, "owner", minor);
		else
			CHECK_INT(o->fr_owner, PY_NO_OFF);
		CHECK(o->fr_code != o->fr_previous && o->fr_code != o->fr_instr &&
		      o->fr_previous != o->fr_instr);
		CHECK_INT(o->owner_cstack, v312 ? 3 : 0xff);
		CHECK_INT(o->instr_kind, v311 ? PY_INSTR_PTR :
			  minor == 10 ? PY_INSTR_LASTI_UNITS : PY_INSTR_LASTI_BYTES);
		/* The code object. */
		CHECK(l.co_firstlineno != PY_NO_OFF);
		CHECK_INT(o->co_code != PY_NO_OFF, v311);
		CHECK_INT(l.co_qualname != PY_NO_OFF, v311);
		CHECK(l.co_filename != PY_NO_OFF && l.co_name != PY_NO_OFF &&
		      l.co_lines != PY_NO_OFF);
		CHECK(l.co_filename < 256 && l.co_name < 256 && l.co_lines < 256);
		if (v311)
			CHECK(o->co_code > l.co_lines && o->co_code < 512);
		CHECK_INT(l.lines_kind, v311 ? PY_LINES_LOCATIONS :
			  minor == 10 ? PY_LINES_310 : PY_LINES_LNOTAB);
		/* Objects. */
		CHECK_INT(l.ob_type, 8);
		CHECK(l.bytes_size >= 16 && l.bytes_data > l.bytes_size);
		CHECK(l.str_state >= l.str_length + 8);
		CHECK(l.str_ascii_data >= l.str_state + 4);
		CHECK(l.str_compact_data > l.str_ascii_data);
		CHECK_INT(l.str_ascii_data, v312 ? 40 : 48);
	}
}

/* --- The table against the headers --- */

/* The include directories python says its headers are in. */
static int python_includes(const char *python, char *inc, char *platinc, size_t len)
{
	char cmd[PATH_MAX + 200];
	FILE *f;
	int ok;

	snprintf(cmd, sizeof(cmd), "'%s' -S -c 'import sysconfig; p = sysconfig.get_paths();"
		 " print(p[\"include\"]); print(p[\"platinclude\"])' 2>/dev/null", python);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	ok = fgets(inc, (int)len, f) && fgets(platinc, (int)len, f);
	pclose(f);
	if (!ok)
		return -1;
	inc[strcspn(inc, "\n")] = '\0';
	platinc[strcspn(platinc, "\n")] = '\0';
	return 0;
}

static void headers(const struct pyinterp *py)
{
	char inc[PATH_MAX], platinc[PATH_MAX], internal[PATH_MAX + 16];
	char dir[FX_DIR_MAX], probe[PATH_MAX], src[PATH_MAX];
	char line[256], name[64], cmd[7 * PATH_MAX];
	unsigned long long value;
	struct py_layout l;
	size_t seen = 0, i;
	bool found = false;
	FILE *f;

	SKIP_UNLESS(pyinterp__runs(py->path), "no " PY_REQUIRED);
	SKIP_UNLESS(!python_includes(py->path, inc, platinc, sizeof(inc)),
		    "the interpreter does not say where its headers are");
	snprintf(internal, sizeof(internal), "%s/internal", inc);
	SKIP_UNLESS(!access(internal, R_OK), "no internal headers (python3.x-dev)");
	SKIP_UNLESS(!fx_sh("command -v cc >/dev/null"), "no cc");

	CHECK_INT(fx_tmpdir(dir), 0);
	snprintf(probe, sizeof(probe), "%s/probe", dir);
	pytarget__unit_file("pyoffsets_probe.c", src, sizeof(src));
	snprintf(cmd, sizeof(cmd),
		 "cc -DPy_BUILD_CORE -I'%s' -I'%s' -I'%s' '%s' -o '%s' 2>&1 && '%s'",
		 inc, internal, platinc, src, probe, probe);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", name, &value) != 2) {
			fprintf(stderr, "  probe: %s", line);
			CHECK(0);
			continue;
		}
		if (!strcmp(name, "version")) {
			CHECK_INT(pyversions__lookup((unsigned int)value >> 8,
						     (unsigned int)value & 0xff, &l), 0);
			found = true;
		}
		for (i = 0; found && i < NR_FIELDS; i++) {
			if (strcmp(name, fields[i].name))
				continue;
			if (field_get(&l, &fields[i]) != value) {
				fprintf(stderr, "  %s: table %llu, headers %llu\n", name,
					(unsigned long long)field_get(&l, &fields[i]), value);
				CHECK(0);
			}
			seen++;
		}
	}
	if (f)
		CHECK_INT(pclose(f), 0);
	CHECK_INT(seen, NR_FIELDS);
	fx_rmdir(dir);
}

/* --- _Py_DebugOffsets --- */

/*
 * Word indices in 3.13's _Py_DebugOffsets, counted from its declaration
 * here independently of src/interp/python/pyversions.c's struct.
 */
enum {
	W_COOKIE, W_VERSION, W_FREE_THREADED,
	W_RT_SIZE, W_RT_FINALIZING, W_RT_INTERP_HEAD,
	W_IS_SIZE, W_IS_ID, W_IS_NEXT, W_IS_THREADS_HEAD,
	W_IS_CEVAL_GIL = W_IS_SIZE + 8, W_IS_GIL, W_IS_GIL_ENABLED, W_IS_GIL_LOCKED,
	W_IS_GIL_HOLDER,
	W_TS_SIZE, W_TS_PREV, W_TS_NEXT, W_TS_INTERP, W_TS_CURRENT_FRAME,
	W_TS_THREAD_ID, W_TS_NATIVE_ID, W_TS_DATASTACK, W_TS_STATUS,
	W_FR_SIZE, W_FR_PREVIOUS, W_FR_EXECUTABLE, W_FR_INSTR_PTR,
	W_FR_LOCALSPLUS, W_FR_OWNER,
	W_CO_SIZE, W_CO_FILENAME, W_CO_NAME, W_CO_QUALNAME, W_CO_LINETABLE,
	W_CO_FIRSTLINENO, W_CO_ARGCOUNT, W_CO_NAMES, W_CO_KINDS, W_CO_CODE,
	W_OB_SIZE, W_OB_TYPE,
	W_TYPE_SIZE, W_TUPLE_SIZE = W_TYPE_SIZE + 4,
	W_LIST_SIZE = W_TUPLE_SIZE + 3,
	W_DICT_SIZE = W_LIST_SIZE + 3,
	W_FLOAT_SIZE = W_DICT_SIZE + 3,
	W_LONG_SIZE = W_FLOAT_SIZE + 2,
	W_BYTES_SIZE = W_LONG_SIZE + 3, W_BYTES_OB_SIZE, W_BYTES_SVAL,
	W_UNI_SIZE, W_UNI_STATE, W_UNI_LENGTH, W_UNI_ASCII_SIZE,
	W_GC_SIZE, W_GC_COLLECTING,
	NR_WORDS,
};

_Static_assert(NR_WORDS == 73, "3.13's _Py_DebugOffsets is 73 words");
_Static_assert(W_IS_GIL_HOLDER == W_IS_SIZE + 12, "the GIL's holder is the section's last word");

/* What a running CPython 3.13.0 (pyenv, x86-64) has at its _PyRuntime. */
static const __u64 words_3130[NR_WORDS] = {
	0, 0x030d00f0, 0,
	283320, 608, 632,
	194968, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16, 7752, 0, 7768, 7760,
	304, 0, 8, 16, 72, 152, 160, 232, 32,
	80, 8, 0, 56, 72, 70,
	208, 112, 120, 128, 136, 68, 52, 96, 104, 200,
	16, 8,
	416, 24, 88, 168,
	32, 24, 16,
	40, 24, 16,
	48, 32, 40,
	24, 16,
	32, 16, 24,
	40, 16, 32,
	64, 32, 16, 40,
	240, 200,
};

static __u64 dbg[PY_DEBUG_OFFSETS_MAX / 8];

static void dbg_reset(void)
{
	memset(dbg, 0, sizeof(dbg));
	memcpy(dbg, words_3130, sizeof(words_3130));
	memcpy(&dbg[W_COOKIE], "xdebugpy", 8);
}

static int dbg_parse(struct py_layout *l)
{
	return pyversions__from_debug_offsets(dbg, sizeof(dbg), l);
}

/* A parse that succeeds keeps every promise the table keeps. */
static bool layout_sane(const struct py_layout *l)
{
	const struct py_offsets *o = &l->bpf;

	return o->rt_interp_head != PY_NO_OFF && o->interp_threads_head != PY_NO_OFF &&
	       o->ts_next != PY_NO_OFF && o->ts_thread_id != PY_NO_OFF &&
	       o->ts_frame != PY_NO_OFF && o->fr_code + 8 <= PY_FRAME_WINDOW &&
	       o->fr_previous + 8 <= PY_FRAME_WINDOW &&
	       o->fr_instr + 8 <= PY_FRAME_WINDOW && o->fr_owner + 1 <= PY_FRAME_WINDOW &&
	       l->co_firstlineno != PY_NO_OFF && o->co_code != PY_NO_OFF &&
	       l->co_filename != PY_NO_OFF && l->co_qualname != PY_NO_OFF &&
	       l->co_lines != PY_NO_OFF && l->str_compact_data > l->str_ascii_data &&
	       o->instr_kind == PY_INSTR_PTR && l->version == 0x030d &&
	       (o->interp_gil == PY_NO_OFF ||
		(o->gil_holder + 8 <= PY_GIL_WINDOW && o->gil_locked + 4 <= PY_GIL_WINDOW));
}

TEST(debug_offsets_valid)
{
	struct py_layout l, t;

	CHECK_INT(pyversions__lookup(3, 13, &t), 0);
	dbg_reset();
	CHECK_INT(dbg_parse(&l), 0);
	CHECK_INT(layout_diff(&l, &t), 0);
	CHECK(layout_sane(&l));

	/* Exactly the struct's 584 bytes are enough. */
	CHECK_INT(pyversions__from_debug_offsets(dbg, 584, &l), 0);

	/* Other 3.13s, other numbers: taken from the buffer. */
	dbg[W_VERSION] = 0x030d00c2;		/* 3.13.0rc2 */
	CHECK_INT(dbg_parse(&l), 0);
	dbg[W_VERSION] = 0x030d0cf0;		/* 3.13.12 */
	dbg[W_RT_INTERP_HEAD] = 640;
	dbg[W_IS_THREADS_HEAD] = 7352;
	dbg[W_TS_THREAD_ID] = 160;
	dbg[W_FR_OWNER] = 127;			/* the window's last byte */
	dbg[W_FR_SIZE] = 128;
	dbg[W_CO_CODE] = 208;			/* right at the end: allowed */
	dbg[W_UNI_ASCII_SIZE] = 48;		/* compact data then at 64 */
	CHECK_INT(dbg_parse(&l), 0);
	CHECK_INT(l.bpf.rt_interp_head, 640);
	CHECK_INT(l.bpf.interp_threads_head, 7352);
	CHECK_INT(l.bpf.ts_thread_id, 160);
	CHECK_INT(l.bpf.fr_owner, 127);
	CHECK_INT(l.bpf.co_code, 208);
	CHECK_INT(l.str_ascii_data, 48);
	CHECK_INT(l.str_compact_data, 64);
	CHECK_INT(l.bpf.rt_tstate_current, PY_NO_OFF);
	CHECK_INT(l.bpf.cframe_current_frame, PY_NO_OFF);
	CHECK(layout_sane(&l));

	/* The GIL's fields are offsets into the interpreter: made relative. */
	dbg_reset();
	dbg[W_IS_CEVAL_GIL] = 24;
	dbg[W_IS_GIL] = 8000;
	dbg[W_IS_GIL_HOLDER] = 8016;		/* the window's last word */
	dbg[W_IS_GIL_LOCKED] = 8000;
	CHECK_INT(dbg_parse(&l), 0);
	CHECK_INT(l.bpf.interp_gil, 24);
	CHECK_INT(l.bpf.gil_holder, 16);
	CHECK_INT(l.bpf.gil_locked, 0);
}

/*
 * GIL fields that make no sense: the layout is still taken (the walk does
 * not need them), without the GIL (no mark).
 */
TEST(debug_offsets_gil_invalid)
{
	static const struct { int word; __u64 value; } bad[] = {
		{ W_IS_CEVAL_GIL, 194968 },		/* = size */
		{ W_IS_CEVAL_GIL, 0xffff },
		{ W_IS_CEVAL_GIL, ~0ull },
		{ W_IS_GIL, 7761 },			/* past the holder */
		{ W_IS_GIL, 7700 },			/* holder past the window */
		{ W_IS_GIL_HOLDER, 7770 },		/* 7770 + 8 > 7752 + 24 */
		{ W_IS_GIL_HOLDER, 7744 },		/* before the GIL */
		{ W_IS_GIL_HOLDER, ~0ull },
		{ W_IS_GIL_LOCKED, 7773 },		/* 7773 + 4 > 7752 + 24 */
		{ W_IS_GIL_LOCKED, 1ull << 40 },
		{ W_IS_SIZE, 7764 },			/* the holder past it */
	};
	struct py_layout l;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dbg_reset();
		dbg[bad[i].word] = bad[i].value;
		CHECK_INT(dbg_parse(&l), 0);
		if (l.bpf.interp_gil != PY_NO_OFF || l.bpf.gil_holder != 0xff ||
		    l.bpf.gil_locked != 0xff) {
			fprintf(stderr, "  word %d = %#llx: GIL taken\n", bad[i].word,
				(unsigned long long)bad[i].value);
			CHECK(0);
		}
	}
}

TEST(debug_offsets_invalid)
{
	static const struct { int word; __u64 value; } bad[] = {
		{ W_VERSION, 0x030c0af0 },		/* 3.12.10 */
		{ W_VERSION, 0x030e00f0 },		/* 3.14.0 */
		{ W_VERSION, 0x030d00c1 },		/* 3.13.0rc1: shorter */
		{ W_VERSION, 0x030d00b1 },
		{ W_VERSION, 0 },
		{ W_FREE_THREADED, 1 },
		{ W_RT_SIZE, 0 },
		{ W_RT_SIZE, 1ull << 40 },
		{ W_RT_SIZE, ~0ull },
		{ W_RT_INTERP_HEAD, 283320 },		/* = size */
		{ W_RT_INTERP_HEAD, ~0ull - 4 },	/* wraps */
		{ W_IS_THREADS_HEAD, 0x10000 },		/* inside, past u16 */
		{ W_IS_THREADS_HEAD, 0xffff },		/* PY_NO_OFF */
		{ W_TS_NEXT, 300 },			/* 300 + 8 > 304 */
		{ W_TS_THREAD_ID, 1ull << 32 },
		{ W_TS_CURRENT_FRAME, 304 },
		{ W_FR_PREVIOUS, 80 },			/* = frame size */
		{ W_FR_EXECUTABLE, 73 },
		{ W_FR_INSTR_PTR, ~0ull },
		{ W_FR_OWNER, 80 },
		{ W_FR_SIZE, 0 },
		{ W_CO_SIZE, 100 },			/* fields past it */
		{ W_CO_FILENAME, 204 },
		{ W_CO_FIRSTLINENO, 205 },
		{ W_CO_CODE, 209 },
		{ W_CO_QUALNAME, 1ull << 20 },
		{ W_CO_LINETABLE, 0xffff },
		{ W_OB_SIZE, 1ull << 20 },
		{ W_OB_TYPE, 12 },
		{ W_BYTES_SVAL, 8 },			/* inside the header */
		{ W_BYTES_OB_SIZE, 40 },
		{ W_UNI_ASCII_SIZE, 100 },
		{ W_UNI_ASCII_SIZE, 30 },		/* before state's end */
		{ W_UNI_ASCII_SIZE, 56 },		/* compact past the str */
		{ W_UNI_STATE, 62 },
		{ W_UNI_LENGTH, 60 },
	};
	struct py_layout l;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dbg_reset();
		dbg[bad[i].word] = bad[i].value;
		if (dbg_parse(&l) != -EINVAL) {
			fprintf(stderr, "  word %d = %#llx accepted\n", bad[i].word,
				(unsigned long long)bad[i].value);
			CHECK(0);
		}
	}
	/* A frame field past the window, in a frame big enough for it. */
	dbg_reset();
	dbg[W_FR_SIZE] = 256;
	dbg[W_FR_INSTR_PTR] = 124;
	CHECK_INT(dbg_parse(&l), -EINVAL);
	dbg[W_FR_INSTR_PTR] = 120;
	CHECK_INT(dbg_parse(&l), 0);
	dbg[W_FR_OWNER] = 128;
	CHECK_INT(dbg_parse(&l), -EINVAL);

	/* Cookies, lengths, nothing. */
	dbg_reset();
	memcpy(&dbg[W_COOKIE], "xdebugpz", 8);
	CHECK_INT(dbg_parse(&l), -EINVAL);
	memcpy(&dbg[W_COOKIE], "XDEBUGPY", 8);
	CHECK_INT(dbg_parse(&l), -EINVAL);
	dbg_reset();
	CHECK_INT(pyversions__from_debug_offsets(dbg, 583, &l), -EINVAL);
	CHECK_INT(pyversions__from_debug_offsets(dbg, 0, &l), -EINVAL);
	CHECK_INT(pyversions__from_debug_offsets(NULL, sizeof(dbg), &l), -EINVAL);
	memset(dbg, 0xff, sizeof(dbg));
	memcpy(&dbg[W_COOKIE], "xdebugpy", 8);
	dbg[W_VERSION] = 0x030d00f0;
	CHECK_INT(dbg_parse(&l), -EINVAL);
	memset(dbg, 0, sizeof(dbg));
	memcpy(&dbg[W_COOKIE], "xdebugpy", 8);
	dbg[W_VERSION] = 0x030d00f0;
	CHECK_INT(dbg_parse(&l), -EINVAL);
}

/* Any one word anything: refused, or a layout that keeps the promises. */
TEST(debug_offsets_fuzz)
{
	__u64 seed = 0x2545f4914f6cdd1dull;
	static const __u64 edges[] = {
		0, 1, 7, 8, 63, 64, 120, 121, 127, 128, 255, 4096, 0xfffe, 0xffff,
		0x10000, 1ull << 24, 1ull << 32, 1ull << 63, ~0ull,
	};
	struct py_layout l;
	int w, round, accepted = 0;

	for (w = 1; w < NR_WORDS; w++) {
		for (round = 0; round < 64; round++) {
			__u64 v;

			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			v = round < 19 ? edges[round] :
			    round < 40 ? seed % 512 : seed;
			dbg_reset();
			dbg[w] = v;
			if (dbg_parse(&l))
				continue;
			accepted++;
			if (!layout_sane(&l)) {
				fprintf(stderr, "  word %d = %#llx: insane layout\n", w,
					(unsigned long long)v);
				CHECK(0);
			}
		}
	}
	CHECK(accepted > 0);
}

/* --- The table against running interpreters --- */

struct walked {
	__u64 code;
	__u32 instr;
	bool entry;
};

static int rd(const struct pymem *m, __u64 addr, void *buf, size_t len)
{
	return m->read(m->ctx, addr, buf, len);
}

static __u64 rd_u64(const struct pymem *m, __u64 addr)
{
	__u64 v = 0;

	if (rd(m, addr, &v, sizeof(v)))
		return 0;
	return v;
}

static __u64 win_u64(const __u8 *w, __u16 off)
{
	__u64 v;

	memcpy(&v, w + off, sizeof(v));
	return v;
}

/* The instruction's index, as the walker computes it. */
static __u32 instr_index(const struct py_offsets *o, const __u8 *w, __u64 code)
{
	__s32 lasti;

	switch (o->instr_kind) {
	case PY_INSTR_PTR:
		return (__u32)((win_u64(w, o->fr_instr) - (code + o->co_code)) / 2);
	case PY_INSTR_LASTI_BYTES:
		memcpy(&lasti, w + o->fr_instr, 4);
		return (__u32)lasti / 2;
	default:
		memcpy(&lasti, w + o->fr_instr, 4);
		return (__u32)lasti;
	}
}

/* The main thread's frames, innermost first, skipping C-stack shims. */
static int walk_frames(const struct py_offsets *o, const struct pymem *m,
		       __u64 tstate, struct walked *out, int max)
{
	__u64 f = rd_u64(m, tstate + o->ts_frame);
	int n = 0, steps;

	if (o->cframe_current_frame != PY_NO_OFF)
		f = rd_u64(m, f + o->cframe_current_frame);
	for (steps = 0; f && steps < PY_MAX_FRAMES; steps++) {
		__u8 w[PY_FRAME_WINDOW];
		__u64 code;

		if (rd(m, f, w, sizeof(w)))
			return -1;
		if (o->fr_owner != PY_NO_OFF && w[o->fr_owner] == o->owner_cstack) {
			if (n)
				out[n - 1].entry = true;
			f = win_u64(w, o->fr_previous);
			continue;
		}
		if (n == max)
			return -1;
		code = win_u64(w, o->fr_code);
		out[n] = (struct walked){
			.code = code,
			.instr = instr_index(o, w, code),
			.entry = o->fr_entry != PY_NO_OFF && w[o->fr_entry],
		};
		n++;
		f = win_u64(w, o->fr_previous);
	}
	return n;
}

static void walk_with(struct pytarget *t, const struct py_layout *l, const char *what)
{
	const struct py_offsets *o = &l->bpf;
	struct pymem m = pytarget__mem(t);
	__u64 interp, ts, main_ts = 0, spin_ts = 0;
	struct walked fr[16];
	int i, n;

	interp = rd_u64(&m, t->runtime + o->rt_interp_head);
	CHECK(interp != 0);
	ts = rd_u64(&m, interp + o->interp_threads_head);
	for (i = 0; ts && i < PY_MAX_THREADS; i++) {
		__u64 id = rd_u64(&m, ts + o->ts_thread_id);

		if (id == t->main_ident)
			main_ts = ts;
		if (id == t->spin_ident)
			spin_ts = ts;
		ts = rd_u64(&m, ts + o->ts_next);
	}
	CHECK(main_ts != 0);
	CHECK(spin_ts != 0);

	/* The GIL holder: the spinning thread, once it runs. */
	if (o->rt_tstate_current != PY_NO_OFF) {
		__u64 cur = 0;

		for (i = 0; i < 200 && cur != spin_ts; i++) {
			struct timespec ms = { 0, 10 * 1000 * 1000 };

			cur = rd_u64(&m, t->runtime + o->rt_tstate_current);
			if (cur != spin_ts)
				nanosleep(&ms, NULL);
		}
		CHECK(cur == spin_ts);
	}
	/* From 3.12 the interpreter's GIL: locked, its last holder spin's. */
	if (o->interp_gil != PY_NO_OFF) {
		__u64 gil = rd_u64(&m, interp + o->interp_gil), cur = 0;
		__u8 g[PY_GIL_WINDOW];
		__s32 locked = 0;

		CHECK(gil != 0);
		for (i = 0; i < 200 && !(locked == 1 && cur == spin_ts); i++) {
			struct timespec ms = { 0, 10 * 1000 * 1000 };

			if (rd(&m, gil, g, sizeof(g)))
				break;
			memcpy(&cur, g + o->gil_holder, sizeof(cur));
			memcpy(&locked, g + o->gil_locked, sizeof(locked));
			if (!(locked == 1 && cur == spin_ts))
				nanosleep(&ms, NULL);
		}
		CHECK_INT(locked, 1);
		CHECK(cur == spin_ts);
	}

	n = walk_frames(o, &m, main_ts, fr, 16);
	CHECK_INT(n, t->nr_walk);
	for (i = 0; i < n && i < t->nr_walk; i++) {
		struct pycode c;

		CHECK(fr[i].code == t->walk[i].code);
		if (pycode__read(l, &t->types, &m, fr[i].code, &c)) {
			CHECK(0);
			continue;
		}
		if (pycode__line(l, &c, fr[i].instr) != t->walk[i].line) {
			fprintf(stderr, "  %s: frame %d (%s): instr %u, line %u, expected %u\n",
				what, i, c.qualname, fr[i].instr,
				pycode__line(l, &c, fr[i].instr), t->walk[i].line);
			CHECK(0);
		}
		/* Only the module's frame began a C call of the eval loop. */
		if (l->version >= 0x030b)
			CHECK_INT(fr[i].entry, i == t->nr_walk - 1);
		pycode__free(&c);
	}
}

static void walk(const struct pyinterp *py)
{
	struct pytarget t;
	struct py_layout l;

	SKIP_UNLESS(pyinterp__runs(py->path), "no " PY_REQUIRED);
	if (pytarget__start(&t, py->path)) {
		fprintf(stderr, "  %s did not run pycode_target.py\n", py->path);
		CHECK(0);
		return;
	}
	CHECK_INT(pyversions__lookup(t.major, t.minor, &l), 0);
	CHECK_INT(t.nr_walk, 4);
	if (!t.runtime) {
		skip_why = "ctypes does not find _PyRuntime";
		pytarget__stop(&t);
		return;
	}
	/* It printed "ready" before the calls that block: let it block. */
	CHECK_INT(pytarget__wait_blocked(&t), 0);
	walk_with(&t, &l, "table");

	/* 3.13 describes itself: the same layout, and the same walk. */
	if (l.version >= 0x030d) {
		struct pymem m = pytarget__mem(&t);
		__u8 buf[PY_DEBUG_OFFSETS_MAX];
		struct py_layout d;

		CHECK_INT(rd(&m, t.runtime, buf, sizeof(buf)), 0);
		CHECK_INT(pyversions__from_debug_offsets(buf, sizeof(buf), &d), 0);
		CHECK_INT(layout_diff(&d, &l), 0);
		walk_with(&t, &d, "debug offsets");
	}
	pytarget__stop(&t);
}

static void run_interps(void)
{
	struct pyinterp more[PY_INTERPS_MAX];
	struct pyinterp req = { PY_REQUIRED, "debian-3.11" };
	int i, nr = pyinterp__find_more(more);

	pytarget__run("headers", req.name, headers, &req);
	for (i = 0; i < nr; i++)
		pytarget__run("headers", more[i].name, headers, &more[i]);
	pytarget__run("walk", req.name, walk, &req);
	for (i = 0; i < nr; i++)
		pytarget__run("walk", more[i].name, walk, &more[i]);
}

int main(void)
{
	RUN(lookup);
	RUN(invariants);
	RUN(debug_offsets_valid);
	RUN(debug_offsets_invalid);
	RUN(debug_offsets_gil_invalid);
	RUN(debug_offsets_fuzz);
	run_interps();
	return unit_summary();
}
