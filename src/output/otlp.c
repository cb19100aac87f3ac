// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * OTLP profiles encoder (otlp.h).  Records are grouped by process; each
 * group is a ResourceProfiles written as its samples are read, while the
 * strings, functions, mappings, locations, stacks and attributes they refer
 * to are interned into request-wide tables, written last as the
 * ProfilesDictionary (protobuf does not care about field order).  Every
 * table's entry 0 is its zero value, as the protocol requires: index 0
 * means "none" everywhere.
 *
 * Frames follow pprof.c's choices: markers ([Missed ... Stack],
 * [off-cpu]) and interpreter frames are functions without a mapping or an
 * address; kernel frames share one "[kernel.kallsyms]" mapping grown to
 * the addresses seen; a user frame sits in the mapping the symbolizer
 * found it in, else one named by its module; inlined functions are Lines
 * before their caller's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "output/otlp.h"
#include "export/otlp_send.h"
#include "interp/interp.h"
#include "lib/htab.h"
#include "lib/util.h"
#include "output/output.h"
#include "lib/pb.h"
#include "output/strtab.h"
#include "symbols/procfs.h"
#include "trace/trace.h"

/*
 * Field numbers of opentelemetry-proto's profiles v1development, as
 * pdata v1.67.0's generated code reads them.
 */
enum { REQ_RESOURCE_PROFILES = 1, REQ_DICTIONARY = 2 };
enum {
	DICT_MAPPING = 1,
	DICT_LOCATION = 2,
	DICT_FUNCTION = 3,
	DICT_LINK = 4,
	DICT_STRING = 5,
	DICT_ATTRIBUTE = 6,
	DICT_STACK = 7,
};
enum { RP_RESOURCE = 1, RP_SCOPE_PROFILES = 2 };
enum { RESOURCE_ATTRIBUTES = 1 };
enum { SP_SCOPE = 1, SP_PROFILES = 2 };
enum { SCOPE_NAME = 1, SCOPE_VERSION = 2 };
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLES = 2,
	PROFILE_TIME = 3,		/* fixed64 */
	PROFILE_DURATION = 4,
	PROFILE_PERIOD_TYPE = 5,
	PROFILE_PERIOD = 6,
	PROFILE_ID = 7,
};
enum { VT_TYPE = 1, VT_UNIT = 2 };
enum { SAMPLE_STACK = 1, SAMPLE_ATTRS = 2, SAMPLE_VALUES = 4 };
enum { STACK_LOCATIONS = 1 };
enum { LOC_MAPPING = 1, LOC_ADDRESS = 2, LOC_LINES = 3, LOC_ATTRS = 4 };
enum { LINE_FUNCTION = 1, LINE_LINE = 2 };
enum { FUNC_NAME = 1, FUNC_SYSTEM_NAME = 2, FUNC_FILENAME = 3 };
enum { MAP_START = 1, MAP_LIMIT = 2, MAP_OFFSET = 3, MAP_FILENAME = 4, MAP_ATTRS = 5 };
enum { KVU_KEY = 1, KVU_VALUE = 2 };		/* KeyValueAndUnit: key_strindex */
enum { KV_KEY = 1, KV_VALUE = 2 };		/* KeyValue: key as a string */
enum { ANY_STRING = 1, ANY_INT = 3 };

#define KERNEL_MAPPING "[kernel.kallsyms]"

#ifndef PROFILE_VERSION
#define PROFILE_VERSION "unknown"
#endif

/* An attribute_table entry: key, and a string (str) or an int value. */
struct ot_attr {
	__u32 key;
	const char *str;
	__s64 num;
};

struct ot_func {
	__u32 name, file;
	bool system;		/* system_name = name; see pprof.c */
};

struct ot_map {
	__u64 start, limit, pgoff;
	__u32 file, build_id;	/* strings; build_id 0: none */
	__u32 attr;		/* its build-id attribute; 0: none */
	bool synthetic;		/* by file alone, grown to cover its addresses */
};

struct ot_line {
	__u32 function, line;
};

struct ot_loc {
	__u64 addr;
	__u32 mapping, function, line;
	__u32 attr;		/* profile.frame.type; 0: none */
	/* Inlined functions' Lines, innermost first, in ot->lines. */
	__u32 first_inl, nr_inl;
};

struct ot_stack {
	__u32 first, nr;	/* in ot->stack_locs */
};

/*
 * Each table is an array whose entry 0 is the zero value, and a hash
 * table from content to index + 1.
 */
struct ot {
	struct pb *out;
	const struct output_opts *oo;
	const struct otlp_meta *m;
	struct otlp_counts *counts;
	struct frame_names names;
	struct trace_view view;
	int err;			/* sticky, like out->err */

	struct strtab strs;

	struct ot_attr *attrs;
	size_t nr_attrs, cap_attrs;
	struct htab attr_ht;

	struct ot_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct htab func_ht;

	struct ot_map *maps;
	size_t nr_maps, cap_maps;
	struct htab map_ht;

	struct ot_loc *locs;
	size_t nr_locs, cap_locs;
	struct htab loc_ht;

	struct ot_line *lines;
	size_t nr_lines, cap_lines;

	struct ot_stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct htab stack_ht;
	__u64 *stack_locs;		/* every stack's location indices */
	size_t nr_stack_locs, cap_stack_locs;

	__u64 *ids;			/* the sample being written, leaf first */
	size_t nr_ids, cap_ids;
};

/* What the eq functions compare an entry with. */
struct probe {
	const struct ot *ot;
	const void *key;
};

static __u32 fail(struct ot *ot, int err)
{
	if (!ot->err)
		ot->err = err;
	return 0;
}

/* Room for one more entry in *arr; false (and ot->err) if there is none. */
static bool grow(struct ot *ot, void *arr, size_t *cap, size_t nr, size_t elem)
{
	if (ot->err)
		return false;
	if (util__grow_array((void **)arr, cap, nr + 1, elem)) {
		fail(ot, -ENOMEM);
		return false;
	}
	return true;
}

/* The slot of key in h, or NULL (and ot->err). */
static struct hent *slot(struct ot *ot, struct htab *h, __u64 k1, __u64 k2, htab_eq_fn eq,
			 const void *key)
{
	struct probe probe = { ot, key };
	struct hent *e = htab__slot(h, k1, k2, eq, &probe);

	if (!e)
		fail(ot, -ENOMEM);
	return e;
}

static __u32 intern_string(struct ot *ot, const char *s)
{
	__u32 idx;

	if (ot->err)
		return 0;
	if (strtab__intern(&ot->strs, s, &idx))
		return fail(ot, -ENOMEM);
	return idx;
}

static bool attr_eq(const void *val, const void *ctx)
{
	const struct probe *p = ctx;
	const struct ot_attr *a = &p->ot->attrs[htab__val_id(val) - 1], *b = p->key;

	if (a->key != b->key || !a->str != !b->str)
		return false;
	return a->str ? !strcmp(a->str, b->str) : a->num == b->num;
}

/* Index of the attribute key = str (or, str NULL, key = num). */
static __u32 intern_attr(struct ot *ot, const char *key, const char *str, __s64 num)
{
	struct ot_attr a = { .key = intern_string(ot, key), .str = str, .num = str ? 0 : num };
	__u64 k2 = str ? htab__hash_bytes(str, strlen(str)) : (__u64)num;
	struct hent *e;

	if (!grow(ot, &ot->attrs, &ot->cap_attrs, ot->nr_attrs, sizeof(*ot->attrs)))
		return 0;
	e = slot(ot, &ot->attr_ht, a.key | (__u64)!!str << 32, k2, attr_eq, &a);
	if (!e)
		return 0;
	if (!e->val) {
		ot->attrs[ot->nr_attrs++] = a;
		htab__fill(&ot->attr_ht, e, a.key | (__u64)!!str << 32, k2,
			   htab__id_val(ot->nr_attrs));
	}
	return htab__val_id(e->val) - 1;
}

/* Functions are told apart by name, file and whether system_name is set. */
static __u32 intern_function(struct ot *ot, const char *name, const char *file, bool system)
{
	struct ot_func fn = { .name = intern_string(ot, name),
			      .file = file ? intern_string(ot, file) : 0, .system = system };
	__u64 k2 = fn.file | (__u64)system << 32;
	struct hent *e;

	if (!grow(ot, &ot->funcs, &ot->cap_funcs, ot->nr_funcs, sizeof(*ot->funcs)))
		return 0;
	e = slot(ot, &ot->func_ht, fn.name, k2, NULL, NULL);
	if (!e)
		return 0;
	if (!e->val) {
		ot->funcs[ot->nr_funcs++] = fn;
		htab__fill(&ot->func_ht, e, fn.name, k2, htab__id_val(ot->nr_funcs));
	}
	return htab__val_id(e->val) - 1;
}

static bool map_eq(const void *val, const void *ctx)
{
	const struct probe *p = ctx;
	const struct ot_map *a = &p->ot->maps[htab__val_id(val) - 1], *b = p->key;

	if (a->synthetic || b->synthetic)
		return a->synthetic == b->synthetic && a->file == b->file;
	return a->start == b->start && a->limit == b->limit && a->pgoff == b->pgoff &&
	       a->file == b->file && a->build_id == b->build_id;
}

/* Index of the mapping equal to key, added if new. */
static __u32 intern_mapping(struct ot *ot, const struct ot_map *key)
{
	__u64 k1 = key->synthetic ? key->file : htab__hash(key->start, key->limit);
	__u64 k2 = key->synthetic ? 0 : htab__hash(key->pgoff, key->file | (__u64)key->build_id << 32);
	struct hent *e;

	if (!grow(ot, &ot->maps, &ot->cap_maps, ot->nr_maps, sizeof(*ot->maps)))
		return 0;
	e = slot(ot, &ot->map_ht, k1, k2, map_eq, key);
	if (!e)
		return 0;
	if (!e->val) {
		ot->maps[ot->nr_maps++] = *key;
		htab__fill(&ot->map_ht, e, k1, k2, htab__id_val(ot->nr_maps));
	}
	return htab__val_id(e->val) - 1;
}

/* A mapping known by its file name alone, grown to cover pc. */
static __u32 synthetic_mapping(struct ot *ot, const char *file, __u64 pc)
{
	struct ot_map key = { .file = intern_string(ot, file), .start = pc, .limit = pc + 1,
			      .synthetic = true };
	__u32 idx = intern_mapping(ot, &key);
	struct ot_map *m;

	if (!idx)
		return 0;
	m = &ot->maps[idx];
	if (pc < m->start)
		m->start = pc;
	if (pc >= m->limit)
		m->limit = pc + 1;
	return idx;
}

static __u32 user_mapping(struct ot *ot, const struct frame *f, __u64 pc)
{
	const struct frame_mapping *fm = f->mapping;
	struct ot_map key = {};

	if (!fm)
		return f->module ? synthetic_mapping(ot, f->module, pc) : 0;
	key.start = fm->start;
	key.limit = fm->limit;
	key.pgoff = fm->pgoff;
	key.file = intern_string(ot, fm->file);
	if (fm->build_id) {
		key.build_id = intern_string(ot, fm->build_id);
		key.attr = intern_attr(ot, "process.executable.build_id.gnu", fm->build_id, 0);
	}
	return intern_mapping(ot, &key);
}

/* The functions inlined where native frame f is, as Lines of loc. */
static void add_inlined(struct ot *ot, const struct frame *f, struct ot_loc *loc)
{
	loc->first_inl = ot->nr_lines;
	for (__u8 i = 0; i < f->nr_inl; i++) {
		const struct frame *in = f->inl[i];
		__u32 fn = intern_function(ot, frame__name(in, &ot->names), in->file, true);

		if (!grow(ot, &ot->lines, &ot->cap_lines, ot->nr_lines, sizeof(*ot->lines)))
			return;
		ot->lines[ot->nr_lines++] = (struct ot_line){ .function = fn, .line = in->line };
	}
	loc->nr_inl = ot->nr_lines - loc->first_inl;
}

static bool loc_eq(const void *val, const void *ctx)
{
	const struct probe *p = ctx;
	const struct ot_loc *a = &p->ot->locs[htab__val_id(val) - 1], *b = p->key;

	return a->addr == b->addr && a->mapping == b->mapping && a->function == b->function &&
	       a->line == b->line && a->attr == b->attr;
}

/*
 * One location per (mapping, address); the function is part of the key so
 * that two processes' different JIT code at one address stays apart, and
 * the line so that an interpreter's lines (no address) do.  f: a native
 * frame whose inlined functions go with it.
 */
static __u32 intern_location(struct ot *ot, struct ot_loc key, const struct frame *f)
{
	__u64 k1 = htab__hash(key.addr, key.line), k2 = htab__hash(key.mapping, key.function);
	struct hent *e;

	if (!grow(ot, &ot->locs, &ot->cap_locs, ot->nr_locs, sizeof(*ot->locs)))
		return 0;
	e = slot(ot, &ot->loc_ht, k1, k2, loc_eq, &key);
	if (!e)
		return 0;
	if (!e->val) {
		if (f)
			add_inlined(ot, f, &key);
		if (ot->err)
			return 0;
		ot->locs[ot->nr_locs++] = key;
		htab__fill(&ot->loc_ht, e, k1, k2, htab__id_val(ot->nr_locs));
	}
	return htab__val_id(e->val) - 1;
}

/* profile.frame.type of a frame: the semantic conventions' names. */
static const char *frame_type(const struct frame *f)
{
	const char *name;

	switch (f->kind) {
	case FRAME_KERNEL:
		return "kernel";
	case FRAME_NATIVE:
	case FRAME_JIT:
		return "native";
	default:
		break;
	}
	if (f->kind != FRAME_INTERP && !(f->flags & FRAME_INTERP_MARK))
		return NULL;
	name = interp__name(f->interp);
	if (name && !strcmp(name, "python"))
		return "cpython";
	return name;
}

static __u32 type_attr(struct ot *ot, const struct frame *f)
{
	const char *type = frame_type(f);

	return type ? intern_attr(ot, "profile.frame.type", type, 0) : 0;
}

/* A frame's location: as pprof.c's frame_location() makes it. */
static __u32 frame_location(struct ot *ot, const struct frame *f)
{
	struct ot_loc key = {};
	const char *name = f->name ? f->name : "[unknown]";
	__u64 pc = frame__pc(f);

	/* [Missed ... Stack], [off-cpu]: a function of that name, no type. */
	if (frame__is_marker(f)) {
		key.function = intern_function(ot, name, NULL, true);
		return intern_location(ot, key, NULL);
	}
	key.attr = type_attr(ot, f);
	if (f->kind == FRAME_INTERP) {
		if (f->func) {
			key.function = intern_function(ot, f->func, f->module, false);
			key.line = f->line;
		} else {
			key.function = intern_function(ot, name, NULL, false);
		}
		return intern_location(ot, key, NULL);
	}
	if (f->flags & FRAME_INTERP_MARK) {
		key.function = intern_function(ot, name, NULL, true);
		return intern_location(ot, key, NULL);
	}
	if (f->kind == FRAME_KERNEL)
		key.mapping = synthetic_mapping(ot, KERNEL_MAPPING, pc);
	else
		key.mapping = user_mapping(ot, f, pc);
	key.addr = pc;
	if (!f->name)
		return intern_location(ot, key, NULL);
	key.function = intern_function(ot, frame__name(f, &ot->names), f->file, true);
	key.line = f->line;
	return intern_location(ot, key, f);
}

static bool stack_eq(const void *val, const void *ctx)
{
	const struct probe *p = ctx;
	const struct ot_stack *a = &p->ot->stacks[htab__val_id(val) - 1];

	return a->nr == p->ot->nr_ids &&
	       !memcmp(p->ot->stack_locs + a->first, p->ot->ids, a->nr * sizeof(*p->ot->ids));
}

/* Index of the stack of ot->ids. */
static __u32 intern_stack(struct ot *ot)
{
	size_t bytes = ot->nr_ids * sizeof(*ot->ids);
	__u64 k1 = htab__hash_bytes(ot->ids, bytes);
	struct hent *e;

	if (!grow(ot, &ot->stacks, &ot->cap_stacks, ot->nr_stacks, sizeof(*ot->stacks)))
		return 0;
	e = slot(ot, &ot->stack_ht, k1, ot->nr_ids, stack_eq, NULL);
	if (!e)
		return 0;
	if (e->val)
		return htab__val_id(e->val) - 1;
	if (util__grow_array((void **)&ot->stack_locs, &ot->cap_stack_locs,
			     ot->nr_stack_locs + ot->nr_ids, sizeof(*ot->stack_locs)))
		return fail(ot, -ENOMEM);
	memcpy(ot->stack_locs + ot->nr_stack_locs, ot->ids, bytes);
	ot->stacks[ot->nr_stacks++] = (struct ot_stack){ .first = ot->nr_stack_locs,
							 .nr = ot->nr_ids };
	ot->nr_stack_locs += ot->nr_ids;
	htab__fill(&ot->stack_ht, e, k1, ot->nr_ids, htab__id_val(ot->nr_stacks));
	return ot->nr_stacks - 1;
}

/*
 * The record's stack, leaf first as OTLP (and pprof) order it.  Frames are
 * interned root first, like pprof.c does.
 */
static __u32 record_stack(struct ot *ot, const struct record *r)
{
	struct trace_iter it;

	ot->nr_ids = 0;
	trace_iter__init(&it, r, &ot->view);
	for (__u32 i = 0; i < it.len; i++) {
		const struct frame *f = trace_iter__frame(&it, i);

		/* Lines of the location of the frame they are inlined in. */
		if (f->inlined)
			continue;
		if (!grow(ot, &ot->ids, &ot->cap_ids, ot->nr_ids, sizeof(*ot->ids)))
			return 0;
		ot->ids[ot->nr_ids++] = frame_location(ot, f);
	}
	for (size_t i = 0, j = ot->nr_ids; i + 1 < j; i++, j--) {
		__u64 tmp = ot->ids[i];

		ot->ids[i] = ot->ids[j - 1];
		ot->ids[j - 1] = tmp;
	}
	return ot->nr_ids ? intern_stack(ot) : 0;
}

/* ---- the profiles ---- */

/* Whether r's count is blocked time, for the off-CPU Profile. */
static bool is_off_cpu(const struct ot *ot, const struct record *r)
{
	return ot->oo->kind == PROFILE_OFF_CPU || r->what == COUNT_OFF_CPU;
}

static void write_sample(struct ot *ot, const struct record *r)
{
	__u64 attrs[2], value = r->count;
	size_t nr_attrs = 0, mark;
	__u32 stack = record_stack(ot, r);

	attrs[nr_attrs++] = intern_attr(ot, "thread.name", r->comm, 0);
	if (r->tid)
		attrs[nr_attrs++] = intern_attr(ot, "thread.id", NULL, r->tid);
	mark = pb__open(ot->out, PROFILE_SAMPLES);
	if (stack)
		pb__uint64(ot->out, SAMPLE_STACK, stack);
	pb__packed_u64(ot->out, SAMPLE_ATTRS, attrs, nr_attrs);
	pb__packed_u64(ot->out, SAMPLE_VALUES, &value, 1);
	pb__close(ot->out, mark);
	if (is_off_cpu(ot, r))
		ot->counts->off_cpu_ns += r->count;
	else
		ot->counts->samples += r->count;
}

static void write_value_type(struct ot *ot, __u32 field, const char *type, const char *unit)
{
	size_t mark = pb__open(ot->out, field);

	pb__uint64(ot->out, VT_TYPE, intern_string(ot, type));
	pb__uint64(ot->out, VT_UNIT, intern_string(ot, unit));
	pb__close(ot->out, mark);
}

/*
 * 16 random bytes: the spec's profile id, never all zero.  Early at boot
 * the pool may not be ready; the clock and a counter stand in then.
 */
static void profile_id(__u8 id[16])
{
	static __u64 seq;
	struct timespec ts;
	__u64 a, b;

	if (getrandom(id, 16, GRND_NONBLOCK) == 16) {
		id[15] |= 1;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	a = htab__hash(ts.tv_sec * 1000000000ULL + ts.tv_nsec, getpid());
	b = htab__hash(a, __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED)) | 1;
	memcpy(id, &a, 8);
	memcpy(id + 8, &b, 8);
}

/* One Profile of the records recs[idx[0..n)] that are (not) off-CPU. */
static void write_profile(struct ot *ot, const struct records *p, const size_t *idx, size_t n,
			  bool off_cpu)
{
	const struct otlp_meta *m = ot->m;
	size_t mark = pb__open(ot->out, SP_PROFILES);
	__u8 id[16];

	if (off_cpu) {
		write_value_type(ot, PROFILE_SAMPLE_TYPE, "off_cpu", "nanoseconds");
		write_value_type(ot, PROFILE_PERIOD_TYPE, "off_cpu", "nanoseconds");
		pb__uint64(ot->out, PROFILE_PERIOD, 1);
	} else {
		write_value_type(ot, PROFILE_SAMPLE_TYPE, "samples", "count");
		if (m->period_events) {
			/* Not a clock (-e page-faults, cycles, a tracepoint): its count. */
			write_value_type(ot, PROFILE_PERIOD_TYPE, m->event ? m->event : "events",
					 "count");
			pb__uint64(ot->out, PROFILE_PERIOD, m->period_events);
		} else {
			write_value_type(ot, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
			if (m->period_ns)
				pb__uint64(ot->out, PROFILE_PERIOD, m->period_ns);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (is_off_cpu(ot, &p->recs[idx[i]]) == off_cpu)
			write_sample(ot, &p->recs[idx[i]]);
	pb__fixed64(ot->out, PROFILE_TIME, m->time_nanos);
	pb__uint64(ot->out, PROFILE_DURATION, m->duration_nanos);
	profile_id(id);
	pb__bytes(ot->out, PROFILE_ID, id, sizeof(id));
	pb__close(ot->out, mark);
	ot->counts->profiles++;
}

static void write_kv(struct ot *ot, const char *key, const char *str, __s64 num)
{
	size_t kv = pb__open(ot->out, RESOURCE_ATTRIBUTES), any;

	pb__string(ot->out, KV_KEY, key);
	any = pb__open(ot->out, KV_VALUE);
	if (str)
		pb__string(ot->out, ANY_STRING, str);
	else
		pb__int64(ot->out, ANY_INT, num);
	pb__close(ot->out, any);
	pb__close(ot->out, kv);
}

/* Keys write_resource() sets per process: the run's own are left out. */
static bool is_process_key(const char *key)
{
	static const char *const keys[] = { "process.pid", "process.executable.name",
					    "process.executable.path", "container.id" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

static void write_resource(struct ot *ot, __u32 pid, const char *comm)
{
	const struct otlp_meta *m = ot->m;
	struct otlp_process proc = {};
	size_t mark = pb__open(ot->out, RP_RESOURCE);
	const char *name = comm;

	for (size_t i = 0; i < m->nr_resource; i++)
		if (m->resource[i].key && m->resource[i].value &&
		    !is_process_key(m->resource[i].key))
			write_kv(ot, m->resource[i].key, m->resource[i].value, 0);
	write_kv(ot, "process.pid", NULL, pid);
	if (m->process && m->process(m->process_ctx, pid, &proc))
		proc = (struct otlp_process){};
	if (proc.exe_path) {
		const char *base = strrchr(proc.exe_path, '/');

		name = base ? base + 1 : proc.exe_path;
		write_kv(ot, "process.executable.path", proc.exe_path, 0);
	}
	if (*name)
		write_kv(ot, "process.executable.name", name, 0);
	if (proc.container_id)
		write_kv(ot, "container.id", proc.container_id, 0);
	pb__close(ot->out, mark);
}

/* One ResourceProfiles: the records recs[idx[0..n)], all of one process. */
static void write_process(struct ot *ot, const struct records *p, const size_t *idx, size_t n)
{
	const struct record *first = &p->recs[idx[0]];
	size_t rp = pb__open(ot->out, REQ_RESOURCE_PROFILES), sp, scope;
	bool has[2] = {};

	for (size_t i = 0; i < n; i++)
		has[is_off_cpu(ot, &p->recs[idx[i]])] = true;
	write_resource(ot, first->pid, first->comm);
	sp = pb__open(ot->out, RP_SCOPE_PROFILES);
	scope = pb__open(ot->out, SP_SCOPE);
	pb__string(ot->out, SCOPE_NAME, "profile");
	pb__string(ot->out, SCOPE_VERSION, PROFILE_VERSION);
	pb__close(ot->out, scope);
	if (has[false])
		write_profile(ot, p, idx, n, false);
	if (has[true])
		write_profile(ot, p, idx, n, true);
	pb__close(ot->out, sp);
	pb__close(ot->out, rp);
	ot->counts->resources++;
}

/* ---- the dictionary ---- */

static void write_mappings(struct ot *ot)
{
	for (size_t i = 0; i < ot->nr_maps; i++) {
		const struct ot_map *m = &ot->maps[i];
		size_t mark = pb__open(ot->out, DICT_MAPPING);
		__u64 attr = m->attr;

		if (i) {
			pb__uint64(ot->out, MAP_START, m->start);
			pb__uint64(ot->out, MAP_LIMIT, m->limit);
			pb__uint64(ot->out, MAP_OFFSET, m->pgoff);
			pb__uint64(ot->out, MAP_FILENAME, m->file);
			pb__packed_u64(ot->out, MAP_ATTRS, &attr, attr != 0);
		}
		pb__close(ot->out, mark);
	}
}

static void write_line(struct ot *ot, __u32 function, __u32 line)
{
	size_t mark = pb__open(ot->out, LOC_LINES);

	pb__uint64(ot->out, LINE_FUNCTION, function);
	if (line)
		pb__uint64(ot->out, LINE_LINE, line);
	pb__close(ot->out, mark);
}

static void write_locations(struct ot *ot)
{
	for (size_t i = 0; i < ot->nr_locs; i++) {
		const struct ot_loc *l = &ot->locs[i];
		size_t mark = pb__open(ot->out, DICT_LOCATION);
		__u64 attr = l->attr;

		if (l->mapping)
			pb__uint64(ot->out, LOC_MAPPING, l->mapping);
		if (l->addr)
			pb__uint64(ot->out, LOC_ADDRESS, l->addr);
		for (__u32 j = 0; j < l->nr_inl; j++)
			write_line(ot, ot->lines[l->first_inl + j].function,
				   ot->lines[l->first_inl + j].line);
		if (l->function)
			write_line(ot, l->function, l->line);
		pb__packed_u64(ot->out, LOC_ATTRS, &attr, attr != 0);
		pb__close(ot->out, mark);
	}
}

static void write_functions(struct ot *ot)
{
	for (size_t i = 0; i < ot->nr_funcs; i++) {
		const struct ot_func *fn = &ot->funcs[i];
		size_t mark = pb__open(ot->out, DICT_FUNCTION);

		if (fn->name)
			pb__uint64(ot->out, FUNC_NAME, fn->name);
		if (fn->system && fn->name)
			pb__uint64(ot->out, FUNC_SYSTEM_NAME, fn->name);
		if (fn->file)
			pb__uint64(ot->out, FUNC_FILENAME, fn->file);
		pb__close(ot->out, mark);
	}
}

static void write_attrs(struct ot *ot)
{
	for (size_t i = 0; i < ot->nr_attrs; i++) {
		const struct ot_attr *a = &ot->attrs[i];
		size_t mark = pb__open(ot->out, DICT_ATTRIBUTE), any;

		if (i) {
			pb__uint64(ot->out, KVU_KEY, a->key);
			any = pb__open(ot->out, KVU_VALUE);
			if (a->str)
				pb__string(ot->out, ANY_STRING, a->str);
			else
				pb__int64(ot->out, ANY_INT, a->num);
			pb__close(ot->out, any);
		}
		pb__close(ot->out, mark);
	}
}

static void write_stacks(struct ot *ot)
{
	for (size_t i = 0; i < ot->nr_stacks; i++) {
		const struct ot_stack *s = &ot->stacks[i];
		size_t mark = pb__open(ot->out, DICT_STACK);

		pb__packed_u64(ot->out, STACK_LOCATIONS, ot->stack_locs + s->first, s->nr);
		pb__close(ot->out, mark);
	}
}

static void write_dictionary(struct ot *ot)
{
	size_t mark = pb__open(ot->out, REQ_DICTIONARY), link;

	write_mappings(ot);
	write_locations(ot);
	write_functions(ot);
	link = pb__open(ot->out, DICT_LINK);	/* only the zero Link */
	pb__close(ot->out, link);
	for (size_t i = 0; i < ot->strs.nr; i++)
		pb__string(ot->out, DICT_STRING, ot->strs.strs[i]);
	write_attrs(ot);
	write_stacks(ot);
	pb__close(ot->out, mark);
}

/* Every table's entry 0, the zero value. */
static void add_zero_entries(struct ot *ot)
{
	intern_string(ot, "");
	if (!grow(ot, &ot->attrs, &ot->cap_attrs, 0, sizeof(*ot->attrs)) ||
	    !grow(ot, &ot->funcs, &ot->cap_funcs, 0, sizeof(*ot->funcs)) ||
	    !grow(ot, &ot->maps, &ot->cap_maps, 0, sizeof(*ot->maps)) ||
	    !grow(ot, &ot->locs, &ot->cap_locs, 0, sizeof(*ot->locs)) ||
	    !grow(ot, &ot->stacks, &ot->cap_stacks, 0, sizeof(*ot->stacks)))
		return;
	ot->attrs[ot->nr_attrs++] = (struct ot_attr){};
	ot->funcs[ot->nr_funcs++] = (struct ot_func){};
	ot->maps[ot->nr_maps++] = (struct ot_map){};
	ot->locs[ot->nr_locs++] = (struct ot_loc){};
	ot->stacks[ot->nr_stacks++] = (struct ot_stack){};
}

static void ot_free(struct ot *ot)
{
	strtab__free(&ot->strs);
	free(ot->attrs);
	htab__free(&ot->attr_ht);
	free(ot->funcs);
	htab__free(&ot->func_ht);
	free(ot->maps);
	htab__free(&ot->map_ht);
	free(ot->locs);
	htab__free(&ot->loc_ht);
	free(ot->lines);
	free(ot->stacks);
	htab__free(&ot->stack_ht);
	free(ot->stack_locs);
	free(ot->ids);
	frame_names__free(&ot->names);
}

/* Records are grouped by process, in the order they come in. */
static int by_pid(const void *a, const void *b, void *recs)
{
	const struct record *r = recs;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (r[i].pid != r[j].pid)
		return r[i].pid < r[j].pid ? -1 : 1;
	return i < j ? -1 : i > j;
}

int otlp__encode(struct pb *out, const struct records *p, const struct output_opts *oo,
		 const struct otlp_meta *m, struct otlp_counts *counts)
{
	struct ot ot = { .out = out, .oo = oo, .m = m, .counts = counts, .view = oo->view };
	size_t *idx = malloc((p->nr + 1) * sizeof(*idx)), n = 0;
	int err;

	*counts = (struct otlp_counts){};
	if (!idx)
		return -ENOMEM;
	ot.view.delimited = false;
	frame_names__init(&ot.names, oo->short_names);
	add_zero_entries(&ot);
	for (size_t i = 0; i < p->nr; i++)
		if (p->recs[i].count)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), by_pid, p->recs);
	for (size_t i = 0, j; i < n && !ot.err; i = j) {
		for (j = i + 1; j < n && p->recs[idx[j]].pid == p->recs[idx[i]].pid; j++)
			;
		write_process(&ot, p, idx + i, j - i);
	}
	write_dictionary(&ot);
	err = ot.err ? ot.err : out->err;
	free(idx);
	ot_free(&ot);
	return err;
}

/* ---- the process lookup ---- */

/* Bytes of /proc/PID/cgroup read: a process in a deep hierarchy fits. */
#define CGROUP_MAX 16384
#define CONTAINER_ID_LEN 64

static bool is_hex_run(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (util__hex_digit(s[i]) < 0 || (s[i] >= 'A' && s[i] <= 'F'))
			return false;
	return true;
}

/*
 * The last 64-hex-digit id of one cgroup path (one line, len bytes): one
 * that starts a path component or follows a runtime's "NAME-" prefix, and
 * ends the component, or ".scope" does.
 */
static const char *line_container_id(const char *s, size_t len)
{
	const char *found = NULL;

	for (size_t i = 1; i + CONTAINER_ID_LEN <= len; i++) {
		const char *id = s + i, *end = id + CONTAINER_ID_LEN;
		size_t rest = len - i - CONTAINER_ID_LEN;

		if (s[i - 1] != '/' && s[i - 1] != '-')
			continue;
		if (rest >= 6 && !memcmp(end, ".scope", 6)) {
			end += 6;
			rest -= 6;
		}
		if (rest && *end != '/')
			continue;
		if (is_hex_run(id, CONTAINER_ID_LEN))
			found = id;
	}
	return found;
}

int otlp__container_id(const char *buf, size_t len, char id[CONTAINER_ID_LEN + 1])
{
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t line = nl ? (size_t)(nl - buf) : len;
		const char *found = line_container_id(buf, line);

		if (found) {
			memcpy(id, found, CONTAINER_ID_LEN);
			id[CONTAINER_ID_LEN] = '\0';
			return 0;
		}
		buf += line + !!nl;
		len -= line + !!nl;
	}
	return -ENOENT;
}

static int read_container_id(int dirfd, char id[CONTAINER_ID_LEN + 1])
{
	char *buf = malloc(CGROUP_MAX);
	size_t len = 0;
	ssize_t n = 1;
	int fd, err;

	if (!buf)
		return -ENOMEM;
	fd = openat(dirfd, "cgroup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	while (len < CGROUP_MAX && n > 0) {
		n = read(fd, buf + len, CGROUP_MAX - len);
		if (n > 0)
			len += n;
	}
	err = n < 0 ? -errno : otlp__container_id(buf, len, id);
	close(fd);
	free(buf);
	return err;
}

int otlp__proc_process(void *ctx, __u32 pid, struct otlp_process *out)
{
	struct otlp_proc_buf *buf = ctx;
	int dirfd, err = 0;
	ssize_t n;

	*out = (struct otlp_process){};
	if (!buf)
		return -EINVAL;
	dirfd = procfs__open_pid(pid);
	if (dirfd < 0)
		return dirfd;
	n = readlinkat(dirfd, "exe", buf->exe, sizeof(buf->exe) - 1);
	if (n > 0) {
		static const char deleted[] = " (deleted)";
		size_t dl = sizeof(deleted) - 1;

		buf->exe[n] = '\0';
		/* A binary replaced or removed since exec: its path is still the name. */
		if ((size_t)n > dl && !strcmp(buf->exe + n - dl, deleted))
			buf->exe[n - dl] = '\0';
		out->exe_path = buf->exe;
	} else {
		err = n < 0 ? -errno : -ENOENT;
	}
	if (!read_container_id(dirfd, buf->container_id))
		out->container_id = buf->container_id;
	close(dirfd);
	return out->exe_path || out->container_id ? 0 : err;
}
