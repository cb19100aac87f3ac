/*
 * fakepy: a program that looks like CPython to a profiler, and is not.
 *
 * It exports a data symbol _PyRuntime (in .dynsym and .symtab: built with
 * -rdynamic), what a profiler looks for to find the interpreter's state.
 * Built as fakepy-v (-DFAKEPY_VERSION=0x030b02f0), it also exports
 * Py_Version, saying CPython 3.11.2, and the type objects PyCode_Type,
 * PyUnicode_Type and PyBytes_Type, so that a profiler believes it and
 * follows _PyRuntime with 3.11's layout.  Whatever it finds there is
 * hostile: no Python frame can be named from it, and a profiler must show
 * this program's native stacks only, without hanging, crashing or stopping
 * it.
 *
 *   fakepy [MODE [SECONDS]]      (default: zero 10)
 *   fakepy offsets               print the 3.11 offsets the chain is built
 *                                with, "NAME OFFSET" a line
 *
 * MODE says what _PyRuntime holds:
 *   zero      nothing (all zero but one byte)
 *   self      every 8-byte word points to _PyRuntime itself
 *   loop      every word points to block A, whose words point to block B,
 *             whose words point to A
 *   unmapped  every word is an address that cannot be read: unmapped,
 *             PROT_NONE, NULL, kernel, non-canonical, -1, misaligned
 *   chain     3.11's shape, filled with traps: runtime -> interpreter ->
 *             a ring of two thread states (one is this thread's, so a
 *             walker gets to its frames) -> a ring of six frames whose
 *             code objects are each wrong in one way: wrong type, a file
 *             name in unmapped memory, a name of the wrong type, a name that
 *             claims 2^40 characters and ends at an unreadable page, a UCS4
 *             file name claiming 2^61, a name whose header straddles an
 *             unreadable page; every line table claims 2^62 bytes
 *   flip      chain, while a second thread (fake_flipper) rewrites its links
 *             at random, without pause, between good and bad values
 *   cookie    3.13's _Py_DebugOffsets cookie "xdebugpy" and version, then
 *             offsets that are huge, zero, or past any structure
 *
 * The main thread burns the CPU in fake_spin_outer -> fake_spin_inner for
 * SECONDS.  It prints "fakepy: MODE ready, pid PID" once _PyRuntime is
 * filled, and "fakepy: done N" at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* CPython 3.11's sizeof(_PyRuntimeState). */
#define RUNTIME_SIZE 166688

/*
 * CPython 3.11 (x86-64) offsets, from its headers (pycore_runtime.h,
 * pycore_interp.h, cpython/pystate.h, pycore_frame.h, cpython/code.h,
 * cpython/unicodeobject.h, cpython/bytesobject.h); t80 checks them against
 * the installed headers (libpython3.11-dev).
 */
#define RT_INTERP_HEAD		40	/* interpreters.head */
#define RT_TSTATE_CURRENT	576	/* gilstate.tstate_current */
#define INTERP_THREADS_HEAD	16	/* threads.head */
#define TS_NEXT			8
#define TS_INTERP		16
#define TS_CFRAME		56
#define TS_THREAD_ID		152
#define CFRAME_CURRENT_FRAME	8
#define FR_CODE			32	/* f_code */
#define FR_PREVIOUS		48
#define FR_PREV_INSTR		56
#define FR_IS_ENTRY		68
#define FR_OWNER		69
#define CO_FIRSTLINENO		72
#define CO_FILENAME		112
#define CO_NAME			120
#define CO_QUALNAME		128
#define CO_LINETABLE		136
#define CO_CODE			184	/* co_code_adaptive */
#define OB_TYPE			8
#define OB_SIZE			16
#define BYTES_SVAL		32
#define STR_LENGTH		16
#define STR_STATE		32
#define STR_ASCII_DATA		48	/* sizeof(PyASCIIObject) */
#define STR_COMPACT_DATA	72	/* sizeof(PyCompactUnicodeObject) */
/* state: kind in bits 2-4, compact bit 5, ascii bit 6 */
#define STATE_ASCII		(1u << 2 | 1u << 5 | 1u << 6)
#define STATE_UCS4		(4u << 2 | 1u << 5)

#ifdef FAKEPY_VERSION
const unsigned long Py_Version = FAKEPY_VERSION;
unsigned char PyCode_Type[416] = { 1 };
unsigned char PyUnicode_Type[416] = { 1 };
unsigned char PyBytes_Type[416] = { 1 };
#define TYPE_CODE PyCode_Type
#define TYPE_STR PyUnicode_Type
#define TYPE_BYTES PyBytes_Type
#else
static unsigned char type_code[416] = { 1 }, type_str[416] = { 1 }, type_bytes[416] = { 1 };
#define TYPE_CODE type_code
#define TYPE_STR type_str
#define TYPE_BYTES type_bytes
#endif

/* Initialised, so that it is in .data as CPython's is. */
__attribute__((aligned(64))) unsigned char _PyRuntime[RUNTIME_SIZE] = { 1 };

static volatile int stop;
static int built;
static volatile unsigned long sink;
static const long page = 4096;

#define W(base, off) (*(uint64_t *)((unsigned char *)(base) + (off)))

__attribute__((noinline)) void fake_spin_inner(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i++)
		;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void fake_spin_outer(double seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		fake_spin_inner(200000);
		sink++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!stop && (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	__asm__ volatile("" ::: "memory");
}

static unsigned char *map_pages(int n)
{
	unsigned char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("fakepy: mmap");
		exit(1);
	}
	return p;
}

/*
 * n pages of memory, then a page that is not mapped at all: PROT_NONE
 * would not do, since /proc/PID/mem reads it all the same (FOLL_FORCE).
 * The hole is one page, and fakepy maps nothing smaller than two after
 * setting up, so nothing fills it.
 */
static unsigned char *guarded(int n)
{
	unsigned char *p = map_pages(n + 1);

	munmap(p + n * page, page);
	return p;
}

/* A page that is mapped PROT_NONE. */
static unsigned char *prot_none(void)
{
	unsigned char *p = map_pages(2);

	mprotect(p + page, page, PROT_NONE);
	return p + page;
}

/* An address that was mapped and is not any more: a hole of one page
 * between two mapped ones. */
static uint64_t unmapped_address(void)
{
	unsigned char *p = map_pages(3);

	munmap(p + page, page);
	return (uint64_t)(p + page);
}

static void fill(void *base, size_t len, uint64_t v)
{
	for (size_t i = 0; i + 8 <= len; i += 8)
		W(base, i) = v;
}

/* A compact ASCII str at p: len characters, text (len may be a lie). */
static void ascii_str(unsigned char *p, uint64_t len, const char *text)
{
	memset(p, 0, STR_ASCII_DATA);
	W(p, 0) = 1000;				/* ob_refcnt */
	W(p, OB_TYPE) = (uint64_t)TYPE_STR;
	W(p, STR_LENGTH) = len;
	W(p, 24) = (uint64_t)-1;		/* hash */
	*(uint32_t *)(p + STR_STATE) = STATE_ASCII;
	memcpy(p + STR_ASCII_DATA, text, strlen(text));
}

/* The chain: see the comment at the top.  Returns the words a flipper may change. */
struct chain {
	unsigned char *interp, *ts[2], *cframe, *frames[6], *codes[6];
	uint64_t bad[8];
};

static struct chain ch;

static void build_chain(pthread_t self)
{
	unsigned char *heap = guarded(8), *edge = guarded(1), *edge2 = guarded(1),
		      *edge3 = guarded(1);
	unsigned char *good_name = heap + 6 * page, *good_file = good_name + 128;
	unsigned char *bad_type = good_file + 128, *lines = bad_type + 128;
	uint64_t gone = unmapped_address();

	ch.interp = heap;
	ch.ts[0] = heap + 512;
	ch.ts[1] = heap + 1024;
	ch.cframe = heap + 1536;
	for (int i = 0; i < 6; i++) {
		ch.frames[i] = heap + page + i * 128;
		ch.codes[i] = heap + 2 * page + i * 512;
	}
	ascii_str(good_name, 9, "FAKE_NAME");
	ascii_str(good_file, 7, "fake.py");
	ascii_str(bad_type, 7, "fake.py");
	W(bad_type, OB_TYPE) = (uint64_t)TYPE_CODE;
	memset(lines, 0, 64);
	W(lines, 0) = 1000;
	W(lines, OB_TYPE) = (uint64_t)TYPE_BYTES;
	W(lines, OB_SIZE) = 1ull << 62;

	W(_PyRuntime, RT_INTERP_HEAD) = (uint64_t)ch.interp;
	W(_PyRuntime, RT_TSTATE_CURRENT) = (uint64_t)ch.ts[0];
	W(ch.interp, INTERP_THREADS_HEAD) = (uint64_t)ch.ts[1];
	for (int i = 0; i < 2; i++) {
		W(ch.ts[i], TS_NEXT) = (uint64_t)ch.ts[!i];	/* a ring of two */
		W(ch.ts[i], TS_INTERP) = (uint64_t)ch.interp;
		W(ch.ts[i], TS_CFRAME) = (uint64_t)ch.cframe;
	}
	W(ch.ts[0], TS_THREAD_ID) = (uint64_t)self;
	W(ch.ts[1], TS_THREAD_ID) = 0x4242;
	W(ch.cframe, CFRAME_CURRENT_FRAME) = (uint64_t)ch.frames[0];
	for (int i = 0; i < 6; i++) {
		unsigned char *f = ch.frames[i], *c = ch.codes[i];

		W(f, FR_CODE) = (uint64_t)c;
		W(f, FR_PREVIOUS) = (uint64_t)ch.frames[(i + 1) % 6];	/* a ring */
		W(f, FR_PREV_INSTR) = (uint64_t)(c + CO_CODE + 2 * i);
		f[FR_IS_ENTRY] = i == 5;
		f[FR_OWNER] = 0;
		W(c, 0) = 1000;
		W(c, OB_TYPE) = (uint64_t)TYPE_CODE;
		*(int32_t *)(c + CO_FIRSTLINENO) = i == 4 ? -1 : 10 * i + 1;
		W(c, CO_FILENAME) = (uint64_t)good_file;
		W(c, CO_NAME) = (uint64_t)good_name;
		W(c, CO_QUALNAME) = (uint64_t)good_name;
		W(c, CO_LINETABLE) = (uint64_t)lines;
		memset(c + CO_CODE, 0x97, 64);		/* RESUME, say */
	}
	/* 0: not a code object */
	W(ch.codes[0], OB_TYPE) = (uint64_t)TYPE_BYTES;
	/* 1: its file name is in memory that is gone */
	W(ch.codes[1], CO_FILENAME) = gone;
	/* 2: its names are not strs */
	W(ch.codes[2], CO_QUALNAME) = (uint64_t)bad_type;
	W(ch.codes[2], CO_NAME) = (uint64_t)bad_type;
	/* 3: a name of 2^40 characters, 16 of them readable */
	ascii_str(edge + page - STR_ASCII_DATA - 16, 1ull << 40, "FAKE_HUGE_NAME");
	W(ch.codes[3], CO_QUALNAME) = (uint64_t)(edge + page - STR_ASCII_DATA - 16);
	W(ch.codes[3], CO_NAME) = W(ch.codes[3], CO_QUALNAME);
	/* 4: a UCS4 file name of 2^61 characters (2^63 bytes), 8 readable */
	{
		unsigned char *s = edge2 + page - STR_COMPACT_DATA - 32;
		const char *t = "fake.py";

		memset(s, 0, STR_COMPACT_DATA + 32);
		W(s, 0) = 1000;
		W(s, OB_TYPE) = (uint64_t)TYPE_STR;
		W(s, STR_LENGTH) = 1ull << 61;
		*(uint32_t *)(s + STR_STATE) = STATE_UCS4;
		for (int i = 0; i < 7; i++)
			*(uint32_t *)(s + STR_COMPACT_DATA + 4 * i) = (unsigned char)t[i];
		W(ch.codes[4], CO_FILENAME) = (uint64_t)s;
	}
	/* 5: a name whose header runs into an unreadable page: only its
	 * refcount, type and length fit */
	{
		unsigned char *s = edge3 + page - 24;

		W(s, 0) = 1000;
		W(s, OB_TYPE) = (uint64_t)TYPE_STR;
		W(s, STR_LENGTH) = 5;
		W(ch.codes[5], CO_QUALNAME) = (uint64_t)s;
		W(ch.codes[5], CO_NAME) = (uint64_t)s;
	}

	/* What a flipper writes: good links, self links, the unreadable. */
	ch.bad[0] = 0;
	ch.bad[1] = gone;
	ch.bad[2] = (uint64_t)prot_none();
	ch.bad[3] = (uint64_t)_PyRuntime;
	ch.bad[4] = 0xffffffff81000000ull;		/* kernel */
	ch.bad[5] = 0xdead000000000000ull;		/* non-canonical */
	ch.bad[6] = (uint64_t)-1;
	ch.bad[7] = (uint64_t)(ch.frames[0] + 1);	/* misaligned */
}

/* A flipper's xorshift, its own. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Rewrites one link of the chain at a time, and puts it back a moment later. */
__attribute__((noinline)) void *fake_flipper(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&built, __ATOMIC_ACQUIRE))
		;
	while (!stop) {
		uint64_t r = next_rand();
		unsigned char *obj;
		int off;

		switch (r % 8) {
		case 0: obj = _PyRuntime, off = RT_INTERP_HEAD; break;
		case 1: obj = ch.interp, off = INTERP_THREADS_HEAD; break;
		case 2: obj = ch.ts[r >> 8 & 1], off = TS_NEXT; break;
		case 3: obj = ch.ts[0], off = TS_CFRAME; break;
		case 4: obj = ch.cframe, off = CFRAME_CURRENT_FRAME; break;
		case 5: obj = ch.frames[(r >> 8) % 6], off = FR_PREVIOUS; break;
		case 6: obj = ch.frames[(r >> 8) % 6], off = FR_CODE; break;
		default: obj = ch.codes[(r >> 8) % 6], off = CO_QUALNAME; break;
		}
		uint64_t old = W(obj, off);
		uint64_t r2 = next_rand();

		/* half the time another object of the chain, else a bad value */
		W(obj, off) = r2 & 1 ? (uint64_t)ch.frames[(r2 >> 1) % 6] : ch.bad[(r2 >> 1) % 8];
		for (volatile int i = 0; i < 200; i++)
			;
		W(obj, off) = old;
	}
	return NULL;
}

static void fill_unmapped(void)
{
	uint64_t v[] = { unmapped_address(), (uint64_t)prot_none(), 0, 0xffffffff81000000ull,
			 0x0000800000000000ull, 0xdead000000000000ull, (uint64_t)-1,
			 (uint64_t)(_PyRuntime + 1) };

	for (size_t i = 0; i + 8 <= RUNTIME_SIZE; i += 8)
		W(_PyRuntime, i) = v[(i / 8) % (sizeof(v) / sizeof(v[0]))];
}

static void fill_cookie(void)
{
	uint64_t v[] = { (uint64_t)-1, 0x7fffffff, 0x10000, RUNTIME_SIZE, 0, 8, 0xffff, 1ull << 40 };

	for (size_t i = 0; i + 8 <= RUNTIME_SIZE; i += 8)
		W(_PyRuntime, i) = v[(i / 8) % (sizeof(v) / sizeof(v[0]))];
	memcpy(_PyRuntime, "xdebugpy", 8);
	W(_PyRuntime, 8) = 0x030d00f0;		/* 3.13.0 final */
}

static void print_offsets(void)
{
#define O(x) printf("%s %d\n", #x, x)
	O(RT_INTERP_HEAD); O(RT_TSTATE_CURRENT); O(INTERP_THREADS_HEAD);
	O(TS_NEXT); O(TS_INTERP); O(TS_CFRAME); O(TS_THREAD_ID);
	O(CFRAME_CURRENT_FRAME); O(FR_CODE); O(FR_PREVIOUS); O(FR_PREV_INSTR);
	O(FR_IS_ENTRY); O(FR_OWNER); O(CO_FIRSTLINENO); O(CO_FILENAME); O(CO_NAME);
	O(CO_QUALNAME); O(CO_LINETABLE); O(CO_CODE); O(OB_TYPE); O(OB_SIZE);
	O(BYTES_SVAL); O(STR_LENGTH); O(STR_STATE); O(STR_ASCII_DATA);
	O(STR_COMPACT_DATA); O(RUNTIME_SIZE);
#undef O
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "zero";
	double seconds = argc > 2 ? atof(argv[2]) : 10;
	pthread_t flipper;
	int flipping = 0;

	if (!strcmp(mode, "offsets")) {
		print_offsets();
		return 0;
	}
	if (!strcmp(mode, "zero")) {
		;
	} else if (!strcmp(mode, "self")) {
		fill(_PyRuntime, RUNTIME_SIZE, (uint64_t)_PyRuntime);
	} else if (!strcmp(mode, "loop")) {
		unsigned char *a = guarded(1), *b = guarded(1);

		fill(a, page, (uint64_t)b);
		fill(b, page, (uint64_t)a);
		fill(_PyRuntime, RUNTIME_SIZE, (uint64_t)a);
	} else if (!strcmp(mode, "unmapped")) {
		fill_unmapped();
	} else if (!strcmp(mode, "chain") || !strcmp(mode, "flip")) {
		/* The flipper's stack is mapped first, so that it fills no hole;
		 * it waits until the chain is built. */
		if (!strcmp(mode, "flip")) {
			if (pthread_create(&flipper, NULL, fake_flipper, NULL)) {
				fprintf(stderr, "fakepy: pthread_create failed\n");
				return 1;
			}
			flipping = 1;
		}
		build_chain(pthread_self());
		__atomic_store_n(&built, 1, __ATOMIC_RELEASE);
	} else if (!strcmp(mode, "cookie")) {
		fill_cookie();
	} else {
		fprintf(stderr, "usage: fakepy [zero|self|loop|unmapped|chain|flip|cookie [SECONDS]] | offsets\n");
		return 2;
	}
	printf("fakepy: %s ready, pid %d\n", mode, (int)getpid());
	fflush(stdout);
	fake_spin_outer(seconds);
	stop = 1;
	if (flipping)
		pthread_join(flipper, NULL);
	printf("fakepy: done %lu\n", sink);
	return 0;
}
