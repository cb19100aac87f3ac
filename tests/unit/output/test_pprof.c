// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The protobuf writer against hand-encoded bytes (the examples of the
 * protobuf encoding guide), and pprof output read back with a small
 * decoder written here, not with the writer's own code.
 *
 * With PROFILE_TEST_OUTPUT=DIR, also writes DIR/unit.pb.gz and, from the
 * same records, DIR/unit.folded, which tests/e2e/t10-svg-pprof.sh compares
 * with what `go tool pprof` reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "unit.h"
#include "lib/pb.h"
#include "output/pprof.h"
#include "output/output.h"
#include "trace/symbolize.h"
#include "records.h"
#include "pbread.h"
#include "symbols/usyms.h"


static bool bytes_eq(const struct pb *b, const char *hex)
{
	char got[1024] = "";

	for (size_t i = 0; i < b->len && 2 * i + 2 < sizeof(got); i++)
		snprintf(got + 2 * i, 3, "%02x", b->buf[i]);
	if (strcmp(got, hex))
		fprintf(stderr, "  got %s\n  want %s\n", got, hex);
	return !strcmp(got, hex);
}

static bool varint_is(__u64 v, const char *hex)
{
	struct pb b = {};
	bool ok;

	pb__varint(&b, v);
	ok = bytes_eq(&b, hex) && pb__varint_size(v) == b.len;
	pb__free(&b);
	return ok;
}

TEST(pb_varints)
{
	CHECK(varint_is(0, "00"));
	CHECK(varint_is(1, "01"));
	CHECK(varint_is(127, "7f"));
	CHECK(varint_is(128, "8001"));
	CHECK(varint_is(150, "9601"));
	CHECK(varint_is(300, "ac02"));
	CHECK(varint_is(16384, "808001"));
	CHECK(varint_is(~0ULL, "ffffffffffffffffff01"));
}

TEST(pb_fields)
{
	static const __u64 packed[] = { 3, 270, 86942 };
	struct pb b = {};

	pb__uint64(&b, 1, 150);
	CHECK(bytes_eq(&b, "089601"));
	b.len = 0;
	pb__string(&b, 2, "testing");
	CHECK(bytes_eq(&b, "120774657374696e67"));
	/* proto3 strings are valid UTF-8: bad bytes and U+FFFF become '?'. */
	b.len = 0;
	pb__string(&b, 2, "a\xff\xef\xbf\xbf\xc3\xa9\n");
	CHECK(bytes_eq(&b, "1208613f3f3f3fc3a93f"));
	/* Bytes are bytes. */
	b.len = 0;
	pb__bytes(&b, 2, "\xff", 1);
	CHECK(bytes_eq(&b, "1201ff"));
	b.len = 0;
	pb__int64(&b, 2, -1);	/* int64, not sint64: ten bytes */
	CHECK(bytes_eq(&b, "10ffffffffffffffffff01"));
	b.len = 0;
	pb__bool(&b, 7, true);
	CHECK(bytes_eq(&b, "3801"));
	b.len = 0;
	pb__packed_u64(&b, 4, packed, 3);
	CHECK(bytes_eq(&b, "2206038e029ea705"));
	b.len = 0;
	pb__packed_u64(&b, 4, packed, 0);	/* nothing, not an empty field */
	CHECK_INT(b.len, 0);
	pb__uint64(&b, 16, 1);			/* two-byte tag */
	CHECK(bytes_eq(&b, "800101"));
	CHECK_INT(b.err, 0);
	pb__free(&b);
}

TEST(pb_nested)
{
	struct pb b = {};
	size_t outer, inner;

	outer = pb__open(&b, 3);
	pb__uint64(&b, 1, 150);
	CHECK_INT(outer, 1);
	pb__close(&b, outer);
	CHECK(bytes_eq(&b, "1a03089601"));

	/* Two levels, and a body long enough for a two-byte length. */
	b.len = 0;
	outer = pb__open(&b, 1);
	inner = pb__open(&b, 2);
	for (int i = 0; i < 130; i++)
		pb__raw(&b, "x", 1);
	pb__close(&b, inner);
	pb__close(&b, outer);
	CHECK_INT(b.len, 1 + 2 + 1 + 2 + 130);
	CHECK_INT(b.buf[0], 0x0a);
	CHECK_INT(b.buf[1], 0x85);	/* 133 = 1 + 2 + 130 */
	CHECK_INT(b.buf[2], 0x01);
	CHECK_INT(b.buf[3], 0x12);
	CHECK_INT(b.buf[4], 0x82);	/* 130 */
	CHECK_INT(b.buf[5], 0x01);
	CHECK_INT(b.buf[6], 'x');
	CHECK_INT(b.buf[b.len - 1], 'x');
	pb__free(&b);
}

#define MAXN 64

struct dlabel { __u64 key, str, num; };
struct dsample {
	__u64 locs[MAXN], vals[4];
	size_t nr_locs, nr_vals, nr_labels;
	struct dlabel labels[4];
};
struct dloc { __u64 id, mapping, addr, func; size_t nr_lines; };
struct dfunc { __u64 id, name, system_name; };
struct dmap { __u64 id, start, limit, offset, file, build_id, has_functions; };
struct dvt { __u64 type, unit; };

struct dprofile {
	char *strs[MAXN];
	size_t nr_strs, nr_types, nr_samples, nr_locs, nr_funcs, nr_maps;
	struct dvt types[4], period_type;
	__u64 period, time, duration, default_type;
	struct dsample samples[MAXN];
	struct dloc locs[MAXN];
	struct dfunc funcs[MAXN];
	struct dmap maps[MAXN];
	int err;
};

static void dec_vt(struct rd *r, struct dvt *vt)
{
	rd_uints(r, (__u64 *const []){ &vt->type, &vt->unit }, 2);
}

static void dec_sample(struct rd *r, struct dsample *s)
{
	struct rd sub, sub2;
	__u64 v, v2;
	__u32 f, f2;

	while (rd_field(r, &f, &v, &sub)) {
		if (f == 1) {
			rd_packed(&sub, v, s->locs, &s->nr_locs, MAXN);
		} else if (f == 2) {
			rd_packed(&sub, v, s->vals, &s->nr_vals, 4);
		} else if (f == 3 && s->nr_labels < 4) {
			struct dlabel *l = &s->labels[s->nr_labels++];

			while (rd_field(&sub, &f2, &v2, &sub2))
				if (f2 == 1)
					l->key = v2;
				else if (f2 == 2)
					l->str = v2;
				else if (f2 == 3)
					l->num = v2;
		}
	}
}

static void dec_loc(struct rd *r, struct dloc *l)
{
	struct rd sub, sub2;
	__u64 v, v2;
	__u32 f, f2;

	while (rd_field(r, &f, &v, &sub)) {
		if (f == 1)
			l->id = v;
		else if (f == 2)
			l->mapping = v;
		else if (f == 3)
			l->addr = v;
		else if (f == 4) {
			l->nr_lines++;
			while (rd_field(&sub, &f2, &v2, &sub2))
				if (f2 == 1)
					l->func = v2;
		}
	}
}

static void dec_func(struct rd *r, struct dfunc *fn)
{
	rd_uints(r, (__u64 *const []){ &fn->id, &fn->name, &fn->system_name }, 3);
}

static void dec_map(struct rd *r, struct dmap *m)
{
	rd_uints(r, (__u64 *const []){ &m->id, &m->start, &m->limit, &m->offset,
				       &m->file, &m->build_id, &m->has_functions }, 7);
}

static void decode(struct dprofile *d, const __u8 *buf, size_t len)
{
	struct rd r = { .p = buf, .end = buf + len }, sub;
	__u64 v;
	__u32 f;

	while (rd_field(&r, &f, &v, &sub)) {
		if (f == 1 && d->nr_types < 4)
			dec_vt(&sub, &d->types[d->nr_types++]);
		else if (f == 2 && d->nr_samples < MAXN)
			dec_sample(&sub, &d->samples[d->nr_samples++]);
		else if (f == 3 && d->nr_maps < MAXN)
			dec_map(&sub, &d->maps[d->nr_maps++]);
		else if (f == 4 && d->nr_locs < MAXN)
			dec_loc(&sub, &d->locs[d->nr_locs++]);
		else if (f == 5 && d->nr_funcs < MAXN)
			dec_func(&sub, &d->funcs[d->nr_funcs++]);
		else if (f == 6 && d->nr_strs < MAXN)
			d->strs[d->nr_strs++] = strndup((const char *)sub.p, sub.end - sub.p);
		else if (f == 9)
			d->time = v;
		else if (f == 10)
			d->duration = v;
		else if (f == 11)
			dec_vt(&sub, &d->period_type);
		else if (f == 12)
			d->period = v;
		else if (f == 14)
			d->default_type = v;
	}
	d->err = r.err || r.p != r.end;
}

static void dprofile_free(struct dprofile *d)
{
	for (size_t i = 0; i < d->nr_strs; i++)
		free(d->strs[i]);
}

static const char *str(const struct dprofile *d, __u64 i)
{
	return i < d->nr_strs ? d->strs[i] : "(bad string index)";
}

static const struct dloc *loc(const struct dprofile *d, __u64 id)
{
	for (size_t i = 0; i < d->nr_locs; i++)
		if (d->locs[i].id == id)
			return &d->locs[i];
	return NULL;
}

static const struct dmap *map(const struct dprofile *d, __u64 id)
{
	for (size_t i = 0; i < d->nr_maps; i++)
		if (d->maps[i].id == id)
			return &d->maps[i];
	return NULL;
}

static const char *func_name(const struct dprofile *d, __u64 id)
{
	for (size_t i = 0; i < d->nr_funcs; i++)
		if (d->funcs[i].id == id)
			return str(d, d->funcs[i].name);
	return "(no function)";
}

/* "name;name;..." of a sample, leaf first; "0x..." for a nameless location. */
static char *sample_names(const struct dprofile *d, const struct dsample *s)
{
	static char buf[1024];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->nr_locs; i++) {
		const struct dloc *l = loc(d, s->locs[i]);

		if (!l)
			len += snprintf(buf + len, sizeof(buf) - len, "%s(no location)", i ? ";" : "");
		else if (!l->func)
			len += snprintf(buf + len, sizeof(buf) - len, "%s0x%llx", i ? ";" : "",
					(unsigned long long)l->addr);
		else
			len += snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ";" : "",
					func_name(d, l->func));
		if (len >= sizeof(buf))
			break;
	}
	return buf;
}

static const struct dlabel *label(const struct dprofile *d, const struct dsample *s,
				  const char *key)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(str(d, s->labels[i].key), key))
			return &s->labels[i];
	return NULL;
}

/* Write p with pprof__write(), gunzip it, and decode it into d. */
static int roundtrip(struct dprofile *d, const struct records *p,
		     const struct output_opts *oo, const struct pprof_meta *m)
{
	static __u8 raw[1 << 20];
	char *gz = NULL;
	size_t gzlen = 0;
	FILE *f = open_memstream(&gz, &gzlen);
	z_stream zs = {};
	int err;

	memset(d, 0, sizeof(*d));
	err = pprof__write(f, p, oo, m);
	fclose(f);
	if (err)
		goto out;
	err = -EINVAL;
	if (gzlen < 2 || (__u8)gz[0] != 0x1f || (__u8)gz[1] != 0x8b)
		goto out;
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		goto out;
	zs.next_in = (__u8 *)gz;
	zs.avail_in = gzlen;
	zs.next_out = raw;
	zs.avail_out = sizeof(raw);
	if (inflate(&zs, Z_FINISH) == Z_STREAM_END && zs.avail_in == 0) {
		decode(d, raw, sizeof(raw) - zs.avail_out);
		err = d->err ? -EINVAL : 0;
	}
	inflateEnd(&zs);
out:
	free(gz);
	return err;
}

static STACK(ust_unknown, 2);

static void setup(void)
{
	burn_stacks_init(NULL);
	ust_unknown.frames[0] = (struct frame){ .name = NULL, .addr = 0x7f0010, .module = "/lib/x.so" };
	ust_unknown.frames[1] = (struct frame){ .name = "main", .addr = 0x402000, .module = "/bin/burn" };
}

static const struct output_opts both = { .folded = true, .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };

TEST(pprof_header_and_samples)
{
	struct record r[] = {
		rec("burn", 10, 11, 6, &ust_b, PART_OK, &kst, PART_OK),
		rec("burn", 10, 0, 2, &ust_a, PART_OK, NULL, PART_ABSENT),
		rec("lost", 12, 0, 1, NULL, PART_MISSED, NULL, PART_MISSED),
		rec("zero", 13, 0, 0, &ust_a, PART_OK, NULL, PART_ABSENT),	/* skipped */
	};
	struct records p = { .recs = r, .nr = 4 };
	struct pprof_meta m = { .time_nanos = 1700000000123456789ULL,
				.duration_nanos = 5000000000ULL, .period = 10101010 };
	static struct dprofile d;
	const struct dlabel *l;

	CHECK_INT(roundtrip(&d, &p, &both, &m), 0);
	CHECK_INT(d.nr_strs > 0, 1);
	CHECK_STR(str(&d, 0), "");
	CHECK_INT(d.nr_types, 2);
	CHECK_STR(str(&d, d.types[0].type), "samples");
	CHECK_STR(str(&d, d.types[0].unit), "count");
	CHECK_STR(str(&d, d.types[1].type), "cpu");
	CHECK_STR(str(&d, d.types[1].unit), "nanoseconds");
	CHECK_STR(str(&d, d.period_type.type), "cpu");
	CHECK_STR(str(&d, d.period_type.unit), "nanoseconds");
	CHECK_INT(d.period, 10101010);
	CHECK_INT(d.time, 1700000000123456789ULL);
	CHECK_INT(d.duration, 5000000000ULL);

	CHECK_INT(d.nr_samples, 3);
	CHECK_STR(sample_names(&d, &d.samples[0]), "kleaf;kroot;func_b;main");
	CHECK_INT(d.samples[0].nr_vals, 2);
	CHECK_INT(d.samples[0].vals[0], 6);
	CHECK_INT(d.samples[0].vals[1], 6 * 10101010ULL);
	l = label(&d, &d.samples[0], "pid");
	CHECK(l && l->num == 10 && !l->str);
	l = label(&d, &d.samples[0], "comm");
	CHECK(l && !strcmp(str(&d, l->str), "burn"));
	l = label(&d, &d.samples[0], "tid");
	CHECK(l && l->num == 11);

	CHECK_STR(sample_names(&d, &d.samples[1]), "func_a;main");
	CHECK_INT(d.samples[1].vals[0], 2);
	CHECK(label(&d, &d.samples[1], "tid") == NULL);

	CHECK_STR(sample_names(&d, &d.samples[2]), "[Missed Kernel Stack];[Missed User Stack]");
	l = label(&d, &d.samples[2], "comm");
	CHECK(l && !strcmp(str(&d, l->str), "lost"));
	dprofile_free(&d);
}

TEST(pprof_tables_deduplicated)
{
	struct record r[] = {
		rec("burn", 10, 0, 6, &ust_b, PART_OK, &kst, PART_OK),
		rec("burn", 10, 0, 2, &ust_a, PART_OK, &kst, PART_OK),
		rec("burn", 20, 0, 1, &ust_a, PART_OK, NULL, PART_ABSENT),
	};
	struct records p = { .recs = r, .nr = 3 };
	struct pprof_meta m = { .period = 1 };
	static struct dprofile d;
	const struct dloc *main_loc = NULL;
	size_t mains = 0;

	CHECK_INT(roundtrip(&d, &p, &both, &m), 0);
	for (size_t i = 0; i < d.nr_strs; i++)
		for (size_t j = i + 1; j < d.nr_strs; j++)
			CHECK(strcmp(d.strs[i], d.strs[j]));
	for (size_t i = 0; i < d.nr_funcs; i++) {
		CHECK_INT(d.funcs[i].id, i + 1);
		CHECK_INT(d.funcs[i].system_name, d.funcs[i].name);
		mains += !strcmp(str(&d, d.funcs[i].name), "main");
	}
	CHECK_INT(mains, 1);
	/* kleaf kroot func_b main func_a: one location each. */
	CHECK_INT(d.nr_funcs, 5);
	CHECK_INT(d.nr_locs, 5);
	for (size_t i = 0; i < d.nr_locs; i++) {
		CHECK_INT(d.locs[i].id, i + 1);
		CHECK_INT(d.locs[i].nr_lines, 1);
		if (!strcmp(func_name(&d, d.locs[i].func), "main"))
			main_loc = &d.locs[i];
	}
	/* A return address: the call is the byte before it. */
	CHECK(main_loc && main_loc->addr == 0x402000 - 1);

	CHECK_INT(d.nr_maps, 2);
	for (size_t i = 0; i < d.nr_maps; i++) {
		const struct dmap *mp = &d.maps[i];

		CHECK_INT(mp->id, i + 1);
		CHECK_INT(mp->has_functions, 1);
		if (!strcmp(str(&d, mp->file), "[kernel.kallsyms]")) {
			CHECK_INT(mp->start, 0xffffffff81000010);	/* kleaf: exact */
			CHECK_INT(mp->limit, 0xffffffff81000100);	/* kroot - 1, + 1 */
		} else {
			CHECK_STR(str(&d, mp->file), "/bin/burn");
			CHECK_INT(mp->start, 0x401000);
			CHECK_INT(mp->limit, 0x402000);
		}
	}
	for (size_t i = 0; i < d.nr_locs; i++) {
		const struct dmap *mp = map(&d, d.locs[i].mapping);

		CHECK(mp && d.locs[i].addr >= mp->start && d.locs[i].addr < mp->limit);
	}
	dprofile_free(&d);
}

/*
 * pprof calls the first mapping the main binary: one named like the comm,
 * never the kernel, even when met after others.
 */
TEST(pprof_mapping_order)
{
	STACK(thread, 3);
	struct record r[] = {
		rec("idle", 0, 0, 6, NULL, PART_ABSENT, &kst, PART_OK),
		rec("burn", 10, 0, 2, &thread, PART_OK, NULL, PART_ABSENT),
	};
	struct records p = { .recs = r, .nr = 2 };
	static struct dprofile d;

	thread.frames[0] = ust_a.frames[0];
	thread.frames[1] = (struct frame){ .name = "start_thread", .addr = 0x7f0100, .module = "/lib/libc.so.6" };
	thread.frames[2] = (struct frame){ .name = "clone3", .addr = 0x7f0200, .module = "/lib/libc.so.6" };
	CHECK_INT(roundtrip(&d, &p, &both, NULL), 0);
	CHECK_INT(d.nr_maps, 3);
	CHECK_INT(d.maps[0].id, 1);
	CHECK_STR(str(&d, d.maps[0].file), "/bin/burn");
	CHECK_INT(d.maps[1].id, 2);
	CHECK_STR(str(&d, d.maps[1].file), "/lib/libc.so.6");
	CHECK_INT(d.maps[2].id, 3);
	CHECK_STR(str(&d, d.maps[2].file), "[kernel.kallsyms]");
	CHECK_STR(sample_names(&d, &d.samples[0]), "kleaf;kroot");
	CHECK_STR(sample_names(&d, &d.samples[1]), "func_a;start_thread;clone3");
	for (size_t i = 0; i < d.nr_locs; i++) {
		const char *fn = func_name(&d, d.locs[i].func);

		CHECK_INT(d.locs[i].mapping, fn[0] == 'k' ? 3 : fn[0] == 'f' ? 1 : 2);
	}
	dprofile_free(&d);
}

TEST(pprof_unknown_frames_and_filters)
{
	struct record r[] = {
		rec("x", 1, 0, 3, &ust_unknown, PART_OK, &kst, PART_OK),
	};
	struct records p = { .recs = r, .nr = 1 };
	struct output_opts user_only = { .view.parts[PART_USER] = true };
	struct output_opts kern_only = { .view.parts[PART_KERNEL] = true };
	static struct dprofile d;
	const struct dloc *l;

	CHECK_INT(roundtrip(&d, &p, &user_only, NULL), 0);
	CHECK_INT(d.nr_samples, 1);
	CHECK_STR(sample_names(&d, &d.samples[0]), "0x7f0010;main");
	l = loc(&d, d.samples[0].locs[0]);
	CHECK(l && l->nr_lines == 0 && l->func == 0);
	/* pprof may symbolize a mapping with a nameless location itself. */
	CHECK(l && map(&d, l->mapping) && !map(&d, l->mapping)->has_functions);
	CHECK_STR(str(&d, map(&d, l->mapping)->file), "/lib/x.so");
	dprofile_free(&d);

	CHECK_INT(roundtrip(&d, &p, &kern_only, NULL), 0);
	CHECK_STR(sample_names(&d, &d.samples[0]), "kleaf;kroot");
	CHECK_INT(d.nr_maps, 1);
	dprofile_free(&d);
}

TEST(pprof_custom_period_type)
{
	struct record r[] = { rec("a", 1, 0, 4, &ust_a, PART_OK, NULL, PART_ABSENT) };
	struct records p = { .recs = r, .nr = 1 };
	struct pprof_meta m = { .period = 100000, .period_type = "cycles", .period_unit = "count" };
	static struct dprofile d;

	CHECK_INT(roundtrip(&d, &p, &both, &m), 0);
	CHECK_STR(str(&d, d.types[1].type), "cycles");
	CHECK_STR(str(&d, d.period_type.unit), "count");
	CHECK_INT(d.samples[0].vals[1], 400000);
	dprofile_free(&d);
}

__attribute__((noinline)) static int here(void)
{
	return 42;
}

/* The one stored stack of a process: here(), as the sampler saw it. */
static int read_here(void *ctx, const struct stack_ref *ref, struct trace_frame *frames)
{
	frames[0] = (struct trace_frame){ .addr = (__u64)(unsigned long)here,
					  .kind = FRAME_NATIVE };
	return 1;
}

/*
 * A real mapping, this test binary's own text, from the symbolizer to the
 * Mapping message: the frame carries it, the writer asks no one.
 */
TEST(pprof_symbolizer_mapping)
{
	struct trace_source ts = { .read = read_here };
	struct sample s = { .count = 1 };
	struct usyms *us = usyms__new();
	struct symbolizer sym;
	static struct dprofile d;
	const struct dmap *mp;
	const struct dloc *l;
	struct records p;

	CHECK(us != NULL);
	if (!us)
		return;
	s.key.pid = getpid();
	s.key.parts[PART_USER] = (struct stack_ref){ .src = STACK_MAP, .kind = FRAME_NATIVE,
						     .id = 1 };
	snprintf(s.key.comm, sizeof(s.key.comm), "t");
	symbolizer__init(&sym, &ts, NULL, us, NULL);
	CHECK_INT(records__build(&p, &sym, &s, 1), 0);
	CHECK_INT(roundtrip(&d, &p, &both, NULL), 0);
	l = d.nr_samples ? loc(&d, d.samples[0].locs[0]) : NULL;
	mp = l ? map(&d, l->mapping) : NULL;
	CHECK(mp != NULL);
	if (mp) {
		CHECK(strstr(str(&d, mp->file), "test_pprof") != NULL);
		CHECK(mp->start <= l->addr && l->addr < mp->limit);
		CHECK_INT(mp->has_functions, 1);
		/* Debian's gcc links with --build-id: 40 hex digits of SHA-1. */
		CHECK(mp->build_id && strlen(str(&d, mp->build_id)) == 40);
	}
	dprofile_free(&d);
	records__free(&p);
	usyms__free(us);
	CHECK_INT(here(), 42);
}

TEST(pprof_write_error)
{
	struct record r[] = { rec("a", 1, 0, 4, &ust_a, PART_OK, NULL, PART_ABSENT) };
	struct records p = { .recs = r, .nr = 1 };
	FILE *f = fopen("/dev/full", "w");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(pprof__write(f, &p, &both, NULL), -ENOSPC);
	fclose(f);
}

TEST(pprof_empty)
{
	struct records p = {};
	static struct dprofile d;

	CHECK_INT(roundtrip(&d, &p, &both, NULL), 0);
	CHECK_INT(d.nr_samples, 0);
	CHECK_INT(d.nr_types, 2);
	dprofile_free(&d);
}

__attribute__((noinline)) static int fixture_leaf(void)
{
	return 1;
}

__attribute__((noinline)) static int fixture_caller(void)
{
	return fixture_leaf() + 1;
}

__attribute__((noinline)) static int fixture_root(void)
{
	return fixture_caller() + 1;
}

static int write_file(const char *dir, const char *name, const struct records *p,
		      bool pprof)
{
	struct output_opts oo = { .folded = true, .view.parts[PART_USER] = true, .view.parts[PART_KERNEL] = true };
	struct pprof_meta m = { .period = 10101010, .duration_nanos = 1000000000 };
	char path[4096];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	err = pprof ? pprof__write(f, p, &oo, &m) : output__write(f, p, &oo);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* What the symbolizer records of f: the mapping usyms finds its pc in. */
static void map_frame(struct usyms *us, __u32 pid, struct frame *f, struct frame_mapping *m)
{
	struct usym sym;

	if (usyms__resolve(us, pid, frame__pc(f), &sym))
		return;
	*m = (struct frame_mapping){ .file = sym.module ? sym.module : "",
				     .build_id = sym.build_id, .start = sym.map_start,
				     .limit = sym.map_end, .pgoff = sym.map_pgoff };
	f->mapping = m;
}

TEST(consumer_fixture)
{
	const char *dir = getenv("PROFILE_TEST_OUTPUT");
	STACK(u1, 3);
	STACK(u2, 2);
	struct usyms *us = usyms__new();
	struct frame_mapping maps[5] = {};
	__u32 me = getpid();
	struct record r[] = {
		rec("app", me, me, 30, &u1, PART_OK, &kst, PART_OK),
		rec("app", me, me + 1, 12, &u1, PART_OK, NULL, PART_ABSENT),
		rec("app", me, me, 7, &u2, PART_OK, NULL, PART_ABSENT),
		rec("other app", 1, 1, 3, &ust_a, PART_OK, NULL, PART_ABSENT),
		rec("lost", 12, 0, 2, NULL, PART_MISSED, &kst, PART_OK),
	};
	struct records p = { .recs = r, .nr = 5 };

	CHECK(us != NULL);
	u1.frames[0] = (struct frame){ .name = "fixture_leaf", .addr = (__u64)(unsigned long)fixture_leaf + 1 };
	u1.frames[1] = (struct frame){ .name = "fixture_caller", .addr = (__u64)(unsigned long)fixture_caller + 8 };
	u1.frames[2] = (struct frame){ .name = "fixture_root", .addr = (__u64)(unsigned long)fixture_root + 8 };
	u2.frames[0] = u1.frames[1];
	u2.frames[0].addr -= 4;		/* another sample in the same function */
	u2.frames[1] = u1.frames[2];
	if (us) {
		for (int i = 0; i < 3; i++)
			map_frame(us, me, &u1.frames[i], &maps[i]);
		for (int i = 0; i < 2; i++)
			map_frame(us, me, &u2.frames[i], &maps[3 + i]);
	}
	CHECK_INT(write_file(dir, "unit.pb.gz", &p, true), 0);
	CHECK_INT(write_file(dir, "unit.folded", &p, false), 0);
	usyms__free(us);
	CHECK_INT(fixture_root(), 3);
}

/* --off-cpu: one sample type, off_cpu in nanoseconds, the time as counted. */
TEST(pprof_off_cpu)
{
	struct output_opts oo = both;
	struct record r[] = {
		off("sleep", 10, 0, 2500000, &ust_b, &kst),
		off("sleep", 10, 0, 700, &ust_a, NULL),
	};
	struct records p = { .recs = r, .nr = 2 };
	struct pprof_meta m = { .period = 1 };
	static struct dprofile d;

	oo.kind = PROFILE_OFF_CPU;
	CHECK_INT(roundtrip(&d, &p, &oo, &m), 0);
	CHECK_INT(d.nr_types, 1);
	CHECK_STR(str(&d, d.types[0].type), "off_cpu");
	CHECK_STR(str(&d, d.types[0].unit), "nanoseconds");
	CHECK_STR(str(&d, d.period_type.type), "off_cpu");
	CHECK_STR(str(&d, d.period_type.unit), "nanoseconds");
	CHECK_INT(d.default_type, 0);
	CHECK_INT(d.nr_samples, 2);
	CHECK_STR(sample_names(&d, &d.samples[0]), "kleaf;kroot;func_b;main");
	CHECK_INT(d.samples[0].nr_vals, 1);
	CHECK_INT(d.samples[0].vals[0], 2500000);
	CHECK_INT(d.samples[1].nr_vals, 1);
	CHECK_INT(d.samples[1].vals[0], 700);
	dprofile_free(&d);
}

/*
 * --wall: wall, cpu and off_cpu, all nanoseconds, wall shown by default;
 * an on-CPU sample is period_ns of both wall and cpu, off-CPU time of
 * wall and off_cpu, and its stack has [off-cpu] at the leaf.
 */
TEST(pprof_wall)
{
	struct output_opts oo = wall_opts(both, 10101010);
	struct record r[] = {
		rec("app", 10, 0, 3, &ust_b, PART_OK, NULL, PART_ABSENT),
		off("app", 10, 0, 4500000, &ust_b, &kst),
	};
	struct records p = { .recs = r, .nr = 2 };
	struct pprof_meta m = { .period = 10101010 };
	static struct dprofile d;

	CHECK_INT(roundtrip(&d, &p, &oo, &m), 0);
	CHECK_INT(d.nr_types, 3);
	CHECK_STR(str(&d, d.types[0].type), "wall");
	CHECK_STR(str(&d, d.types[1].type), "cpu");
	CHECK_STR(str(&d, d.types[2].type), "off_cpu");
	for (int i = 0; i < 3; i++)
		CHECK_STR(str(&d, d.types[i].unit), "nanoseconds");
	CHECK_STR(str(&d, d.default_type), "wall");
	CHECK_STR(str(&d, d.period_type.type), "wall");
	CHECK_STR(str(&d, d.period_type.unit), "nanoseconds");
	CHECK_INT(d.period, 10101010);
	CHECK_INT(d.nr_samples, 2);
	CHECK_STR(sample_names(&d, &d.samples[0]), "func_b;main");
	CHECK_INT(d.samples[0].nr_vals, 3);
	CHECK_INT(d.samples[0].vals[0], 30303030);
	CHECK_INT(d.samples[0].vals[1], 30303030);
	CHECK_INT(d.samples[0].vals[2], 0);
	CHECK_STR(sample_names(&d, &d.samples[1]), "[off-cpu];kleaf;kroot;func_b;main");
	CHECK_INT(d.samples[1].nr_vals, 3);
	CHECK_INT(d.samples[1].vals[0], 4500000);
	CHECK_INT(d.samples[1].vals[1], 0);
	CHECK_INT(d.samples[1].vals[2], 4500000);
	dprofile_free(&d);
}

/*
 * DIR/unit-wall.pb.gz, a --wall profile for t10 to read with go tool
 * pprof: 30.30 ms on the CPU in func_b, 4.5 ms off it there, 1.5 ms off
 * it in func_a; and DIR/unit-offcpu.pb.gz, its off-CPU part (--off-cpu).
 */
TEST(wall_fixture)
{
	const char *dir = getenv("PROFILE_TEST_OUTPUT");
	struct output_opts oo = wall_opts(both, 10101010);
	struct record r[] = {
		rec("app", 10, 0, 3, &ust_b, PART_OK, NULL, PART_ABSENT),
		off("app", 10, 0, 4500000, &ust_b, &kst),
		off("app", 10, 0, 1500000, &ust_a, NULL),
	};
	struct records p = { .recs = r, .nr = 3 };
	struct pprof_meta m = { .period = 10101010, .duration_nanos = 1000000000 };
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/unit-wall.pb.gz", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(pprof__write(f, &p, &oo, &m), 0);
	CHECK_INT(fclose(f), 0);

	/* And its off-CPU part alone, as --off-cpu writes it. */
	oo.kind = PROFILE_OFF_CPU;
	oo.view.mark_off_cpu = false;
	p = (struct records){ .recs = r + 1, .nr = 2 };
	m.period = 1;
	snprintf(path, sizeof(path), "%s/unit-offcpu.pb.gz", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(pprof__write(f, &p, &oo, &m), 0);
	CHECK_INT(fclose(f), 0);
}

int main(void)
{
	setup();
	RUN(pb_varints);
	RUN(pb_fields);
	RUN(pb_nested);
	RUN(pprof_header_and_samples);
	RUN(pprof_tables_deduplicated);
	RUN(pprof_mapping_order);
	RUN(pprof_unknown_frames_and_filters);
	RUN(pprof_custom_period_type);
	RUN(pprof_symbolizer_mapping);
	RUN(pprof_write_error);
	RUN(pprof_empty);
	RUN(pprof_off_cpu);
	RUN(pprof_wall);
	if (getenv("PROFILE_TEST_OUTPUT"))
		RUN(consumer_fixture);
	if (getenv("PROFILE_TEST_OUTPUT"))
		RUN(wall_fixture);
	return unit_summary();
}
