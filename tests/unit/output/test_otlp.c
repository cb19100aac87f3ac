// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OTLP profiles encoder, read back with a decoder written here from
 * opentelemetry-proto's field numbers (profiles v1development, as pdata
 * v1.67.0 reads them), not with the encoder's code: names, stack order
 * (leaf first), values, the request-wide dictionary (deduplicated, every
 * table's entry 0 the zero value) and the attributes.  And the container
 * id parser against cgroup files of each runtime and hostile ones.
 *
 * With PROFILE_TEST_OTLP_OUT=DIR, also writes DIR/unit-cpu.pb and
 * DIR/unit-wall.pb, requests to POST to a real collector.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

#include "unit.h"
#include "output/otlp.h"
#include "export/otlp_send.h"
#include "lib/pb.h"
#include "output/output.h"
#include "records.h"
#include "pbread.h"

#define MAXN 64

struct dattr {			/* KeyValue or KeyValueAndUnit */
	__u64 key_idx;		/* KeyValueAndUnit */
	char *key;		/* KeyValue */
	char *str;		/* NULL: an int */
	__s64 num;
};

struct dvt { __u64 type, unit; };

struct dsample {
	__u64 stack, attrs[4], vals[4];
	size_t nr_attrs, nr_vals;
};

struct dprof {
	struct dvt type, period_type;
	__u64 period, time, duration;
	size_t id_len;
	bool id_nonzero;
	struct dsample samples[MAXN];
	size_t nr_samples;
};

struct dres {
	struct dattr attrs[16];
	size_t nr_attrs;
	char *scope_name;
	struct dprof profs[2];
	size_t nr_profs;
};

struct dline { __u64 func, line; };
struct dloc {
	__u64 mapping, addr, attrs[4];
	struct dline lines[4];
	size_t nr_lines, nr_attrs;
};
struct dfunc { __u64 name, system_name, file; };
struct dmap { __u64 start, limit, offset, file, attrs[4]; size_t nr_attrs; };
struct dstack { __u64 locs[MAXN]; size_t nr; };

struct dreq {
	struct dres res[8];
	size_t nr_res;
	char *strs[MAXN];
	struct dmap maps[MAXN];
	struct dloc locs[MAXN];
	struct dfunc funcs[MAXN];
	struct dattr attrs[MAXN];
	struct dstack stacks[MAXN];
	size_t nr_strs, nr_maps, nr_locs, nr_funcs, nr_attrs, nr_stacks, nr_links, nr_dicts;
	/* The byte size of each table's entry 0: 0 for the zero value. */
	size_t zero_len[8];
	int err;
};

static char *dup_str(const struct rd *sub)
{
	return strndup((const char *)sub->p, sub->end - sub->p);
}

static void dec_anyvalue(struct rd *r, struct dattr *a)
{
	struct rd sub;
	__u64 v;
	__u32 f;

	while (rd_field(r, &f, &v, &sub))
		if (f == 1)
			a->str = dup_str(&sub);
		else if (f == 3)
			a->num = v;
}

/* KeyValue (key a string, kvu false) or KeyValueAndUnit (key_strindex). */
static void dec_attr(struct rd *r, struct dattr *a, bool kvu)
{
	struct rd sub;
	__u64 v;
	__u32 f;

	while (rd_field(r, &f, &v, &sub))
		if (f == 1 && kvu)
			a->key_idx = v;
		else if (f == 1)
			a->key = dup_str(&sub);
		else if (f == 2)
			dec_anyvalue(&sub, a);
}

static void dec_vt(struct rd *r, struct dvt *vt)
{
	rd_uints(r, (__u64 *const []){ &vt->type, &vt->unit }, 2);
}

static void dec_sample(struct rd *r, struct dsample *s)
{
	struct rd sub;
	__u64 v;
	__u32 f;

	while (rd_field(r, &f, &v, &sub))
		if (f == 1)
			s->stack = v;
		else if (f == 2)
			rd_packed(&sub, v, s->attrs, &s->nr_attrs, 4);
		else if (f == 4)
			rd_packed(&sub, v, s->vals, &s->nr_vals, 4);
}

static void dec_profile(struct rd *r, struct dprof *p)
{
	struct rd sub;
	__u64 v;
	__u32 f;

	while (rd_field(r, &f, &v, &sub)) {
		switch (f) {
		case 1: dec_vt(&sub, &p->type); break;
		case 2:
			if (p->nr_samples < MAXN)
				dec_sample(&sub, &p->samples[p->nr_samples++]);
			break;
		case 3: p->time = v; break;
		case 4: p->duration = v; break;
		case 5: dec_vt(&sub, &p->period_type); break;
		case 6: p->period = v; break;
		case 7:
			p->id_len = sub.end - sub.p;
			for (const __u8 *b = sub.p; b < sub.end; b++)
				p->id_nonzero |= *b != 0;
			break;
		}
	}
}

static void dec_scope_profiles(struct rd *r, struct dres *res)
{
	struct rd sub, sub2;
	__u64 v;
	__u32 f, f2;

	while (rd_field(r, &f, &v, &sub))
		if (f == 1) {
			while (rd_field(&sub, &f2, &v, &sub2))
				if (f2 == 1)
					res->scope_name = dup_str(&sub2);
		} else if (f == 2 && res->nr_profs < 2) {
			dec_profile(&sub, &res->profs[res->nr_profs++]);
		}
}

static void dec_resource_profiles(struct rd *r, struct dres *res)
{
	struct rd sub, sub2;
	__u64 v;
	__u32 f, f2;

	while (rd_field(r, &f, &v, &sub))
		if (f == 1) {
			while (rd_field(&sub, &f2, &v, &sub2))
				if (f2 == 1 && res->nr_attrs < 16)
					dec_attr(&sub2, &res->attrs[res->nr_attrs++], false);
		} else if (f == 2) {
			dec_scope_profiles(&sub, res);
		}
}

static void dec_location(struct rd *r, struct dloc *l)
{
	struct rd sub, sub2;
	__u64 v, v2;
	__u32 f, f2;

	while (rd_field(r, &f, &v, &sub))
		if (f == 1)
			l->mapping = v;
		else if (f == 2)
			l->addr = v;
		else if (f == 3 && l->nr_lines < 4) {
			struct dline *ln = &l->lines[l->nr_lines++];

			while (rd_field(&sub, &f2, &v2, &sub2))
				if (f2 == 1)
					ln->func = v2;
				else if (f2 == 2)
					ln->line = v2;
		} else if (f == 4)
			rd_packed(&sub, v, l->attrs, &l->nr_attrs, 4);
}

static void dec_function(struct rd *r, struct dfunc *fn)
{
	rd_uints(r, (__u64 *const []){ &fn->name, &fn->system_name, &fn->file }, 3);
}

static void dec_mapping(struct rd *r, struct dmap *m)
{
	struct rd sub;
	__u64 v;
	__u32 f;

	while (rd_field(r, &f, &v, &sub))
		switch (f) {
		case 1: m->start = v; break;
		case 2: m->limit = v; break;
		case 3: m->offset = v; break;
		case 4: m->file = v; break;
		case 5: rd_packed(&sub, v, m->attrs, &m->nr_attrs, 4); break;
		}
}

static void dec_stack(struct rd *r, struct dstack *s)
{
	struct rd sub;
	__u64 v;
	__u32 f;

	while (rd_field(r, &f, &v, &sub))
		if (f == 1)
			rd_packed(&sub, v, s->locs, &s->nr, MAXN);
}

/* One dictionary entry of table f; entry 0's size is kept. */
static void dec_dict_entry(struct dreq *d, __u32 f, struct rd *sub)
{
	size_t *nr[] = { NULL, &d->nr_maps, &d->nr_locs, &d->nr_funcs, &d->nr_links,
			 &d->nr_strs, &d->nr_attrs, &d->nr_stacks };
	size_t i;

	if (f < 1 || f > 7)
		return;
	i = *nr[f];
	if (i >= MAXN)
		return;
	if (!i)
		d->zero_len[f] = sub->end - sub->p;
	switch (f) {
	case 1: dec_mapping(sub, &d->maps[i]); break;
	case 2: dec_location(sub, &d->locs[i]); break;
	case 3: dec_function(sub, &d->funcs[i]); break;
	case 5: d->strs[i] = dup_str(sub); break;
	case 6: dec_attr(sub, &d->attrs[i], true); break;
	case 7: dec_stack(sub, &d->stacks[i]); break;
	}
	(*nr[f])++;
}

static void decode(struct dreq *d, const __u8 *buf, size_t len)
{
	struct rd r = { .p = buf, .end = buf + len }, sub, sub2;
	__u64 v;
	__u32 f, f2;

	while (rd_field(&r, &f, &v, &sub))
		if (f == 1 && d->nr_res < 8) {
			dec_resource_profiles(&sub, &d->res[d->nr_res++]);
		} else if (f == 2) {
			d->nr_dicts++;
			while (rd_field(&sub, &f2, &v, &sub2))
				dec_dict_entry(d, f2, &sub2);
			d->err |= sub.err;
		}
	d->err |= r.err || r.p != r.end;
}

static void dattr_free(struct dattr *a)
{
	free(a->key);
	free(a->str);
}

static void dreq_free(struct dreq *d)
{
	for (size_t i = 0; i < d->nr_strs; i++)
		free(d->strs[i]);
	for (size_t i = 0; i < d->nr_attrs; i++)
		dattr_free(&d->attrs[i]);
	for (size_t i = 0; i < d->nr_res; i++) {
		for (size_t j = 0; j < d->res[i].nr_attrs; j++)
			dattr_free(&d->res[i].attrs[j]);
		free(d->res[i].scope_name);
	}
	memset(d, 0, sizeof(*d));
}

static const char *str(const struct dreq *d, __u64 i)
{
	return i < d->nr_strs && d->strs[i] ? d->strs[i] : "(bad string index)";
}

/* The function names of a location, innermost first, joined by '+'. */
static size_t loc_names(const struct dreq *d, __u64 li, char *buf, size_t size)
{
	const struct dloc *l = li < d->nr_locs ? &d->locs[li] : NULL;
	size_t len = 0;

	if (!l || !l->nr_lines)
		return snprintf(buf, size, l ? "0x%llx" : "(bad location)",
				l ? (unsigned long long)l->addr : 0ULL);
	for (size_t i = 0; i < l->nr_lines && len < size; i++) {
		__u64 fi = l->lines[i].func;

		len += snprintf(buf + len, size - len, "%s%s", i ? "+" : "",
				fi < d->nr_funcs ? str(d, d->funcs[fi].name) : "(bad function)");
	}
	return len;
}

/* "leaf;...;root" of a sample, as its stack lists the locations. */
static const char *sample_names(const struct dreq *d, const struct dsample *s)
{
	static char buf[1024];
	const struct dstack *st = s->stack < d->nr_stacks ? &d->stacks[s->stack] : NULL;
	size_t len = 0;

	buf[0] = '\0';
	if (!st)
		return "(bad stack)";
	for (size_t i = 0; i < st->nr && len < sizeof(buf); i++) {
		if (i)
			buf[len++] = ';';
		len += loc_names(d, st->locs[i], buf + len, sizeof(buf) - len);
	}
	return buf;
}

/* The dictionary attribute of key among idx[0..n), or NULL. */
static const struct dattr *attr_of(const struct dreq *d, const __u64 *idx, size_t n,
				   const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (idx[i] < d->nr_attrs && !strcmp(str(d, d->attrs[idx[i]].key_idx), key))
			return &d->attrs[idx[i]];
	return NULL;
}

static const struct dattr *res_attr(const struct dres *r, const char *key)
{
	for (size_t i = 0; i < r->nr_attrs; i++)
		if (r->attrs[i].key && !strcmp(r->attrs[i].key, key))
			return &r->attrs[i];
	return NULL;
}

/* The resource of pid, or NULL. */
static const struct dres *res_of(const struct dreq *d, __s64 pid)
{
	for (size_t i = 0; i < d->nr_res; i++) {
		const struct dattr *a = res_attr(&d->res[i], "process.pid");

		if (a && !a->str && a->num == pid)
			return &d->res[i];
	}
	return NULL;
}

static int encode(struct dreq *d, const struct records *p, const struct output_opts *oo,
		  const struct otlp_meta *m, struct otlp_counts *c, struct pb *keep)
{
	struct pb out = {};
	int err;

	dreq_free(d);
	err = otlp__encode(&out, p, oo, m, c);
	if (!err) {
		decode(d, out.buf, out.len);
		err = d->err ? -EINVAL : 0;
	}
	if (keep)
		*keep = out;
	else
		pb__free(&out);
	return err;
}

/* ---- the records ---- */

static STACK(ust_py, 3);
static STACK(ust_inl, 3);
static const struct frame_mapping burn_map = {
	.file = "/bin/burn", .build_id = "0123456789abcdef0123456789abcdef01234567",
	.start = 0x400000, .limit = 0x410000, .pgoff = 0,
};
static struct frame inl_a = { .name = "inner_a", .kind = FRAME_NATIVE, .inlined = true,
			      .line = 7, .file = "burn.c" };
static const struct frame *const inl_list[] = { &inl_a };

static void setup(void)
{
	burn_stacks_init(&burn_map);
	/* Python: two interpreter frames on top of the interpreter's own. */
	ust_py.frames[0] = (struct frame){ .name = "work (app.py:12)", .func = "work",
					   .module = "app.py", .line = 12, .kind = FRAME_INTERP,
					   .interp = 1 };
	ust_py.frames[1] = (struct frame){ .name = "<module> (app.py:3)", .func = "<module>",
					   .module = "app.py", .line = 3, .kind = FRAME_INTERP,
					   .interp = 1 };
	ust_py.frames[2] = ust_b.frames[1];
	/* outer_c at 0x401100, inner_a inlined there: in the stack too. */
	inl_a.addr = 0x401100;
	ust_inl.frames[0] = inl_a;
	ust_inl.frames[1] = (struct frame){ .name = "outer_c", .addr = 0x401100, .module = "/bin/burn",
					    .mapping = &burn_map, .inl = inl_list, .nr_inl = 1,
					    .line = 30, .file = "burn.c" };
	ust_inl.frames[2] = ust_b.frames[1];
}

static const struct output_opts both = { .view.parts[PART_USER] = true,
					 .view.parts[PART_KERNEL] = true };
static const struct otlp_attr run_attrs[] = {
	{ "host.name", "box" },
	{ "service.name", "burner" },
	{ "process.pid", "not this one" },	/* the process's own wins */
};

/* A lookup that knows pid 10 only, in a container. */
static int fake_process(void *ctx, __u32 pid, struct otlp_process *out)
{
	int *calls = ctx;

	(*calls)++;
	if (pid != 10)
		return -ESRCH;
	out->exe_path = "/usr/local/bin/burn-1.2";
	out->container_id = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	return 0;
}

static struct otlp_meta meta(int *calls)
{
	return (struct otlp_meta){
		.time_nanos = 1700000000123456789ULL, .duration_nanos = 10000000000ULL,
		.period_ns = 10101010, .event = "cpu-clock",
		.resource = run_attrs, .nr_resource = 3,
		.process = fake_process, .process_ctx = calls,
	};
}

static struct record cpu_recs[6];
static struct records cpu_records(void)
{
	cpu_recs[0] = rec("burn", 10, 11, 6, &ust_b, PART_OK, &kst, PART_OK);
	cpu_recs[1] = rec("py", 20, 21, 4, &ust_py, PART_OK, NULL, PART_ABSENT);
	cpu_recs[2] = rec("burn", 10, 12, 2, &ust_a, PART_OK, NULL, PART_ABSENT);
	cpu_recs[3] = rec("lost", 12, 0, 1, NULL, PART_MISSED, NULL, PART_MISSED);
	cpu_recs[4] = rec("zero", 13, 0, 0, &ust_a, PART_OK, NULL, PART_ABSENT);	/* skipped */
	cpu_recs[5] = rec("burn", 10, 11, 3, &ust_inl, PART_OK, NULL, PART_ABSENT);
	return (struct records){ .recs = cpu_recs, .nr = 6 };
}

/* --wall: a process on and off the CPU, and one only off it. */
static struct record wall_recs[3];
static struct records wall_records(void)
{
	wall_recs[0] = rec("app", 10, 10, 3, &ust_b, PART_OK, NULL, PART_ABSENT);
	wall_recs[1] = off("app", 10, 10, 4500000, &ust_b, &kst);
	wall_recs[2] = off("sleeper", 40, 40, 700, &ust_a, NULL);
	return (struct records){ .recs = wall_recs, .nr = 3 };
}

/* ---- the tests ---- */

TEST(otlp_cpu_profile)
{
	struct records p = cpu_records();
	int calls = 0;
	struct otlp_meta m = meta(&calls);
	struct otlp_counts c;
	static struct dreq d;
	const struct dres *r;
	const struct dprof *pr;
	const struct dattr *a;

	CHECK_INT(encode(&d, &p, &both, &m, &c, NULL), 0);
	CHECK_INT(c.samples, 6 + 4 + 2 + 1 + 3);
	CHECK_INT(c.off_cpu_ns, 0);
	CHECK_INT(c.resources, 3);
	CHECK_INT(c.profiles, 3);
	CHECK_INT(calls, 3);
	CHECK_INT(d.nr_res, 3);
	CHECK_INT(d.nr_dicts, 1);

	/* Process 10: two threads, one resource, its lookup's attributes. */
	r = res_of(&d, 10);
	CHECK(r != NULL);
	if (!r)
		goto out;
	CHECK_STR(r->scope_name, "profile");
	a = res_attr(r, "host.name");
	CHECK(a && a->str && !strcmp(a->str, "box"));
	a = res_attr(r, "service.name");
	CHECK(a && a->str && !strcmp(a->str, "burner"));
	a = res_attr(r, "process.executable.path");
	CHECK(a && a->str && !strcmp(a->str, "/usr/local/bin/burn-1.2"));
	a = res_attr(r, "process.executable.name");
	CHECK(a && a->str && !strcmp(a->str, "burn-1.2"));
	a = res_attr(r, "container.id");
	CHECK(a && a->str && strlen(a->str) == 64);
	CHECK_INT(r->nr_attrs, 6);		/* process.pid once, an int */
	CHECK_INT(r->nr_profs, 1);
	pr = &r->profs[0];
	CHECK_STR(str(&d, pr->type.type), "samples");
	CHECK_STR(str(&d, pr->type.unit), "count");
	CHECK_STR(str(&d, pr->period_type.type), "cpu");
	CHECK_STR(str(&d, pr->period_type.unit), "nanoseconds");
	CHECK_INT(pr->period, 10101010);
	CHECK_INT(pr->time, 1700000000123456789ULL);
	CHECK_INT(pr->duration, 10000000000ULL);
	CHECK_INT(pr->id_len, 16);
	CHECK(pr->id_nonzero);
	CHECK_INT(pr->nr_samples, 3);
	/* Leaf first, kernel on top of user; in the records' order. */
	CHECK_STR(sample_names(&d, &pr->samples[0]), "kleaf;kroot;func_b;main");
	CHECK_INT(pr->samples[0].nr_vals, 1);
	CHECK_INT(pr->samples[0].vals[0], 6);
	a = attr_of(&d, pr->samples[0].attrs, pr->samples[0].nr_attrs, "thread.id");
	CHECK(a && !a->str && a->num == 11);
	a = attr_of(&d, pr->samples[0].attrs, pr->samples[0].nr_attrs, "thread.name");
	CHECK(a && a->str && !strcmp(a->str, "burn"));
	CHECK_STR(sample_names(&d, &pr->samples[1]), "func_a;main");
	CHECK_INT(pr->samples[1].vals[0], 2);
	a = attr_of(&d, pr->samples[1].attrs, pr->samples[1].nr_attrs, "thread.id");
	CHECK(a && !a->str && a->num == 12);
	/* An inlined function: a Line before its caller's, one Location. */
	CHECK_STR(sample_names(&d, &pr->samples[2]), "inner_a+outer_c;main");
	CHECK_INT(pr->samples[2].vals[0], 3);

	/* Python: the interpreter's functions, no mapping, cpython frames. */
	r = res_of(&d, 20);
	CHECK(r && r->nr_profs == 1 && r->profs[0].nr_samples == 1);
	if (r && r->nr_profs == 1 && r->profs[0].nr_samples == 1) {
		const struct dsample *s = &r->profs[0].samples[0];
		const struct dstack *st = &d.stacks[s->stack];
		const struct dloc *l = &d.locs[st->locs[0]];

		CHECK_STR(sample_names(&d, s), "work;<module>;main");
		CHECK_INT(s->vals[0], 4);
		CHECK_INT(l->mapping, 0);
		CHECK_INT(l->addr, 0);
		CHECK_INT(l->lines[0].line, 12);
		CHECK_STR(str(&d, d.funcs[l->lines[0].func].file), "app.py");
		a = attr_of(&d, l->attrs, l->nr_attrs, "profile.frame.type");
		CHECK(a && a->str && !strcmp(a->str, "cpython"));
		/* No lookup: the comm names the executable. */
		a = res_attr(r, "process.executable.name");
		CHECK(a && a->str && !strcmp(a->str, "py"));
		CHECK(res_attr(r, "process.executable.path") == NULL);
		CHECK(res_attr(r, "container.id") == NULL);
	}

	/* Lost stacks: markers, without a thread.id (none known). */
	r = res_of(&d, 12);
	CHECK(r && r->nr_profs == 1 && r->profs[0].nr_samples == 1);
	if (r && r->nr_profs == 1 && r->profs[0].nr_samples == 1) {
		const struct dsample *s = &r->profs[0].samples[0];

		CHECK_STR(sample_names(&d, s), "[Missed Kernel Stack];[Missed User Stack]");
		CHECK(attr_of(&d, s->attrs, s->nr_attrs, "thread.id") == NULL);
	}
	CHECK(res_of(&d, 13) == NULL);
out:
	dreq_free(&d);
}

/*
 * The dictionary: each string, function, mapping, location, stack and
 * attribute once across every resource, entry 0 the zero value, every
 * index in range; frame types and build-ids where they belong.
 */
TEST(otlp_dictionary)
{
	struct records p = cpu_records();
	struct record more[8];
	int calls = 0;
	struct otlp_meta m = meta(&calls);
	struct otlp_counts c;
	static struct dreq d;
	size_t burn_maps = 0, kernel_maps = 0;

	memcpy(more, cpu_recs, sizeof(cpu_recs));
	/* Process 30 has process 10's stack: one Stack for both. */
	more[6] = rec("burn", 30, 31, 5, &ust_b, PART_OK, &kst, PART_OK);
	more[7] = rec("burn", 30, 31, 1, &ust_a, PART_OK, NULL, PART_ABSENT);
	p = (struct records){ .recs = more, .nr = 8 };
	CHECK_INT(encode(&d, &p, &both, &m, &c, NULL), 0);
	CHECK_INT(d.nr_res, 4);

	CHECK(d.nr_strs > 0 && !strcmp(d.strs[0], ""));
	CHECK_INT(d.nr_links, 1);
	for (int t = 1; t <= 7; t++)
		CHECK_INT(d.zero_len[t], 0);
	for (size_t i = 0; i < d.nr_strs; i++)
		for (size_t j = i + 1; j < d.nr_strs; j++)
			CHECK(strcmp(d.strs[i], d.strs[j]));
	for (size_t i = 1; i < d.nr_funcs; i++) {
		CHECK(d.funcs[i].name && d.funcs[i].name < d.nr_strs);
		for (size_t j = i + 1; j < d.nr_funcs; j++)
			CHECK(d.funcs[i].name != d.funcs[j].name ||
			      d.funcs[i].file != d.funcs[j].file);
	}
	for (size_t i = 1; i < d.nr_attrs; i++) {
		CHECK(d.attrs[i].key_idx && d.attrs[i].key_idx < d.nr_strs);
		for (size_t j = i + 1; j < d.nr_attrs; j++)
			CHECK(d.attrs[i].key_idx != d.attrs[j].key_idx ||
			      !d.attrs[i].str != !d.attrs[j].str ||
			      (d.attrs[i].str ? strcmp(d.attrs[i].str, d.attrs[j].str) :
						d.attrs[i].num != d.attrs[j].num));
	}
	for (size_t i = 1; i < d.nr_stacks; i++) {
		CHECK(d.stacks[i].nr > 0);
		for (size_t k = 0; k < d.stacks[i].nr; k++)
			CHECK(d.stacks[i].locs[k] && d.stacks[i].locs[k] < d.nr_locs);
		for (size_t j = i + 1; j < d.nr_stacks; j++)
			CHECK(d.stacks[i].nr != d.stacks[j].nr ||
			      memcmp(d.stacks[i].locs, d.stacks[j].locs,
				     d.stacks[i].nr * sizeof(__u64)));
	}
	/* Same stack, two processes: one index. */
	{
		const struct dres *a = res_of(&d, 10), *b = res_of(&d, 30);

		CHECK(a && b);
		if (a && b)
			CHECK_INT(a->profs[0].samples[0].stack, b->profs[0].samples[0].stack);
	}
	/* Mappings: /bin/burn (with its build-id) and the kernel, once each. */
	for (size_t i = 1; i < d.nr_maps; i++) {
		const struct dmap *mp = &d.maps[i];
		const struct dattr *a = attr_of(&d, mp->attrs, mp->nr_attrs,
						"process.executable.build_id.gnu");

		if (!strcmp(str(&d, mp->file), "/bin/burn")) {
			burn_maps++;
			CHECK_INT(mp->start, 0x400000);
			CHECK_INT(mp->limit, 0x410000);
			CHECK(a && a->str && !strcmp(a->str, burn_map.build_id));
		} else {
			kernel_maps++;
			CHECK_STR(str(&d, mp->file), "[kernel.kallsyms]");
			CHECK_INT(mp->start, 0xffffffff81000010);
			CHECK_INT(mp->limit, 0xffffffff81000100);
			CHECK(a == NULL);
		}
	}
	CHECK_INT(burn_maps, 1);
	CHECK_INT(kernel_maps, 1);
	/* Locations: distinct, typed by their frame's kind. */
	for (size_t i = 1; i < d.nr_locs; i++) {
		const struct dloc *l = &d.locs[i];
		const struct dattr *a = attr_of(&d, l->attrs, l->nr_attrs, "profile.frame.type");
		const char *fn = l->nr_lines ? str(&d, d.funcs[l->lines[l->nr_lines - 1].func].name) : "";

		CHECK(l->mapping < d.nr_maps);
		for (size_t j = i + 1; j < d.nr_locs; j++)
			CHECK(l->addr != d.locs[j].addr || l->mapping != d.locs[j].mapping ||
			      l->lines[0].func != d.locs[j].lines[0].func ||
			      l->lines[0].line != d.locs[j].lines[0].line);
		if (fn[0] == 'k')
			CHECK(a && !strcmp(a->str, "kernel") && l->mapping);
		else if (!strcmp(fn, "main") || !strncmp(fn, "func_", 5))
			CHECK(a && !strcmp(a->str, "native") && l->mapping);
		else if (fn[0] == '[')
			CHECK(a == NULL && !l->mapping);
		/* A return address: the call is the byte before it. */
		if (!strcmp(fn, "main"))
			CHECK_INT(l->addr, 0x402000 - 1);
	}
	/* main: one function, one location, though in four stacks. */
	{
		size_t mains = 0;

		for (size_t i = 1; i < d.nr_funcs; i++)
			mains += !strcmp(str(&d, d.funcs[i].name), "main");
		CHECK_INT(mains, 1);
	}
	dreq_free(&d);
}

/* --wall: two Profiles per process, CPU samples and off-CPU time. */
TEST(otlp_wall)
{
	struct output_opts oo = wall_opts(both, 10101010);
	struct records p = wall_records();
	int calls = 0;
	struct otlp_meta m = meta(&calls);
	struct otlp_counts c;
	static struct dreq d;
	const struct dres *res;

	CHECK_INT(encode(&d, &p, &oo, &m, &c, NULL), 0);
	CHECK_INT(c.samples, 3);
	CHECK_INT(c.off_cpu_ns, 4500700);
	CHECK_INT(c.profiles, 3);
	CHECK_INT(c.resources, 2);
	res = res_of(&d, 10);
	CHECK(res && res->nr_profs == 2);
	if (res && res->nr_profs == 2) {
		const struct dprof *cpu = &res->profs[0], *offp = &res->profs[1];

		CHECK_STR(str(&d, cpu->type.type), "samples");
		CHECK_STR(str(&d, cpu->type.unit), "count");
		CHECK_INT(cpu->nr_samples, 1);
		CHECK_INT(cpu->samples[0].vals[0], 3);
		CHECK_STR(sample_names(&d, &cpu->samples[0]), "func_b;main");
		CHECK_STR(str(&d, offp->type.type), "off_cpu");
		CHECK_STR(str(&d, offp->type.unit), "nanoseconds");
		CHECK_INT(offp->nr_samples, 1);
		CHECK_INT(offp->samples[0].vals[0], 4500000);
		/* As every other writer shows --wall's blocked stacks. */
		CHECK_STR(sample_names(&d, &offp->samples[0]), "[off-cpu];kleaf;kroot;func_b;main");
	}
	res = res_of(&d, 40);
	CHECK(res && res->nr_profs == 1);
	if (res && res->nr_profs == 1)
		CHECK_STR(str(&d, res->profs[0].type.type), "off_cpu");
	dreq_free(&d);
}

/* --off-cpu: one Profile of blocked time. */
TEST(otlp_off_cpu)
{
	struct output_opts oo = both;
	struct record r[] = { off("sleep", 10, 10, 2500000, &ust_b, &kst) };
	struct records p = { .recs = r, .nr = 1 };
	struct otlp_meta m = { .time_nanos = 5 };
	struct otlp_counts c;
	static struct dreq d;

	oo.kind = PROFILE_OFF_CPU;
	CHECK_INT(encode(&d, &p, &oo, &m, &c, NULL), 0);
	CHECK_INT(c.samples, 0);
	CHECK_INT(c.off_cpu_ns, 2500000);
	CHECK_INT(c.profiles, 1);
	CHECK(d.nr_res == 1 && d.res[0].nr_profs == 1);
	if (d.nr_res == 1 && d.res[0].nr_profs == 1) {
		const struct dprof *pr = &d.res[0].profs[0];

		CHECK_STR(str(&d, pr->type.type), "off_cpu");
		CHECK_STR(str(&d, pr->period_type.unit), "nanoseconds");
		CHECK_STR(sample_names(&d, &pr->samples[0]), "kleaf;kroot;func_b;main");
		CHECK_INT(pr->samples[0].vals[0], 2500000);
		/* No run attributes, no lookup: pid and the comm. */
		CHECK_INT(d.res[0].nr_attrs, 2);
	}
	dreq_free(&d);
}

/* The parts a view asks for only, as in every other writer. */
TEST(otlp_view)
{
	struct output_opts user_only = { .view.parts[PART_USER] = true };
	struct record r[] = { rec("burn", 10, 11, 6, &ust_b, PART_OK, &kst, PART_OK) };
	struct records p = { .recs = r, .nr = 1 };
	struct otlp_meta m = {};
	struct otlp_counts c;
	static struct dreq d;

	CHECK_INT(encode(&d, &p, &user_only, &m, &c, NULL), 0);
	CHECK(d.nr_res == 1 && d.res[0].nr_profs == 1);
	if (d.nr_res == 1 && d.res[0].nr_profs == 1)
		CHECK_STR(sample_names(&d, &d.res[0].profs[0].samples[0]), "func_b;main");
	CHECK_INT(d.nr_maps, 2);		/* the zero one and /bin/burn */
	dreq_free(&d);
}

/* Nothing to send: no resources, a dictionary of zero entries only. */
TEST(otlp_empty)
{
	struct records p = {};
	struct otlp_meta m = {};
	struct otlp_counts c;
	static struct dreq d;

	CHECK_INT(encode(&d, &p, &both, &m, &c, NULL), 0);
	CHECK_INT(d.nr_res, 0);
	CHECK_INT(c.profiles, 0);
	CHECK_INT(c.resources, 0);
	CHECK_INT(d.nr_strs, 1);
	CHECK_INT(d.nr_funcs, 1);
	CHECK_INT(d.nr_maps, 1);
	CHECK_INT(d.nr_locs, 1);
	CHECK_INT(d.nr_stacks, 1);
	CHECK_INT(d.nr_attrs, 1);
	dreq_free(&d);
}

/* Two requests with one writer: appended, each whole. */
TEST(otlp_profile_ids_differ)
{
	struct records p = cpu_records();
	struct otlp_meta m = {};
	struct otlp_counts c;
	static struct dreq d1, d2;
	struct pb a = {}, b = {};

	CHECK_INT(encode(&d1, &p, &both, &m, &c, &a), 0);
	CHECK_INT(encode(&d2, &p, &both, &m, &c, &b), 0);
	CHECK_INT(a.len, b.len);
	/* Same records, same bytes but for the random profile ids. */
	CHECK(a.len == b.len && memcmp(a.buf, b.buf, a.len));
	pb__free(&a);
	pb__free(&b);
	dreq_free(&d1);
	dreq_free(&d2);
}

static const char *cid(const char *text)
{
	static char id[65];

	if (otlp__container_id(text, strlen(text), id))
		return "(none)";
	return id;
}

#define H64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define H64B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

TEST(otlp_container_id)
{
	static char big[20000];
	char id[65];

	CHECK_STR(cid("0::/system.slice/docker-" H64 ".scope\n"), H64);
	CHECK_STR(cid("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-" H64 ".scope\n"), H64);
	CHECK_STR(cid("0::/machine.slice/libpod-" H64 ".scope/container\n"), H64);
	CHECK_STR(cid("0::/kubepods.slice/crio-" H64 ".scope"), H64);
	CHECK_STR(cid("12:memory:/docker/" H64 "\n11:cpu:/docker/" H64 "\n"), H64);
	CHECK_STR(cid("5:cpuset:/kubepods/besteffort/pod1234/" H64 "\n"), H64);
	/* The innermost id of a nested one. */
	CHECK_STR(cid("0::/docker/" H64B "/docker/" H64 "\n"), H64);
	/* Not ids: on a host, too short, too long, uppercase, mid-word. */
	CHECK_STR(cid("0::/user.slice/user-0.slice/session-1.scope\n"), "(none)");
	CHECK_STR(cid("0::/docker/" H64 "0\n"), "(none)");
	CHECK_STR(cid("0::/docker/0123456789abcdef\n"), "(none)");
	CHECK_STR(cid("0::/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\n"), "(none)");
	CHECK_STR(cid("0::/x" H64 "\n"), "(none)");
	CHECK_STR(cid("0::/docker-" H64 ".scopes\n"), "(none)");
	CHECK_STR(cid(""), "(none)");
	/* Hostile: NULs, no newline, a line longer than anything real. */
	CHECK_INT(otlp__container_id("\0\0/docker/" H64, 2 + 8 + 64, id), 0);
	CHECK_STR(id, H64);
	memset(big, '/', sizeof(big));
	CHECK_INT(otlp__container_id(big, sizeof(big), id), -ENOENT);
	memcpy(big + sizeof(big) - 64, H64, 64);
	CHECK_INT(otlp__container_id(big, sizeof(big), id), 0);
	CHECK_STR(id, H64);
	/* An id cut at the end of what was read is no id. */
	CHECK_INT(otlp__container_id("0::/docker/" H64, 11 + 40, id), -ENOENT);
}

/* This process, read as the profiler reads any other. */
TEST(otlp_proc_process)
{
	static struct otlp_proc_buf buf;
	struct otlp_process proc;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(n > 0);
	if (n <= 0)
		return;
	exe[n] = '\0';
	CHECK_INT(otlp__proc_process(&buf, getpid(), &proc), 0);
	CHECK_STR(proc.exe_path, exe);
	CHECK(strstr(proc.exe_path, "test_otlp") != NULL);
	CHECK_INT(otlp__proc_process(NULL, getpid(), &proc), -EINVAL);
	/* A pid that cannot exist (above pid_max's limit). */
	CHECK(otlp__proc_process(&buf, 0x7fffffff, &proc) < 0);
	CHECK(proc.exe_path == NULL && proc.container_id == NULL);
}

/* An event that is not a clock: the period is in its count, named after it. */
TEST(otlp_event_period)
{
	struct records p = cpu_records();
	int calls = 0;
	struct otlp_meta m = meta(&calls);
	struct otlp_counts c;
	static struct dreq d;
	const struct dres *r;

	m.event = "page-faults";
	m.period_events = 1000;
	CHECK_INT(encode(&d, &p, &both, &m, &c, NULL), 0);
	r = res_of(&d, 10);
	CHECK(r && r->nr_profs == 1);
	if (r && r->nr_profs == 1) {
		CHECK_STR(str(&d, r->profs[0].type.type), "samples");
		CHECK_STR(str(&d, r->profs[0].period_type.type), "page-faults");
		CHECK_STR(str(&d, r->profs[0].period_type.unit), "count");
		CHECK_INT(r->profs[0].period, 1000);
	}
	dreq_free(&d);
}

/* A binary deleted since its exec: its path without the kernel's " (deleted)". */
TEST(otlp_proc_deleted)
{
	static struct otlp_proc_buf buf;
	char path[] = "/tmp/test_otlp_exe_XXXXXX";
	struct otlp_process proc;
	char cmd[256];
	pid_t pid;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp /bin/sleep %s && chmod 755 %s", path, path);
	CHECK_INT(system(cmd), 0);
	pid = fork();
	if (!pid) {
		execl(path, path, "5", (char *)NULL);
		_exit(127);
	}
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	/* Until the child has exec'd, its exe is this test's. */
	for (int i = 0; i < 200; i++) {
		if (!otlp__proc_process(&buf, pid, &proc) && proc.exe_path &&
		    !strcmp(proc.exe_path, path))
			break;
		usleep(10000);
	}
	unlink(path);
	CHECK_INT(otlp__proc_process(&buf, pid, &proc), 0);
	CHECK_STR(proc.exe_path, path);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int write_request(const char *dir, const char *name, const struct records *p,
			 const struct output_opts *oo, const struct otlp_meta *m)
{
	struct otlp_counts c;
	struct pb out = {};
	char path[4096];
	FILE *f;
	int err;

	err = otlp__encode(&out, p, oo, m, &c);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		err = -errno;
	} else {
		if (fwrite(out.buf, 1, out.len, f) != out.len)
			err = -EIO;
		if (fclose(f) && !err)
			err = -errno;
	}
	pb__free(&out);
	return err;
}

/* Requests for a real collector (PROFILE_TEST_OTLP_OUT=DIR). */
TEST(collector_fixture)
{
	const char *dir = getenv("PROFILE_TEST_OTLP_OUT");
	struct records p = cpu_records();
	int calls = 0;
	struct otlp_meta m = meta(&calls);
	struct output_opts oo = wall_opts(both, 10101010);
	struct records w = wall_records();

	CHECK_INT(write_request(dir, "unit-cpu.pb", &p, &both, &m), 0);
	CHECK_INT(write_request(dir, "unit-wall.pb", &w, &oo, &m), 0);
}

int main(void)
{
	setup();
	RUN(otlp_cpu_profile);
	RUN(otlp_dictionary);
	RUN(otlp_wall);
	RUN(otlp_off_cpu);
	RUN(otlp_view);
	RUN(otlp_empty);
	RUN(otlp_profile_ids_differ);
	RUN(otlp_container_id);
	RUN(otlp_proc_process);
	RUN(otlp_proc_deleted);
	RUN(otlp_event_period);
	if (getenv("PROFILE_TEST_OTLP_OUT"))
		RUN(collector_fixture);
	return unit_summary();
}
