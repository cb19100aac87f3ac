// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof output.  Records become Samples as they are read; the strings,
 * Functions, Mappings and Locations they refer to are interned into tables
 * on the way and written after the samples (protobuf does not care about
 * field order, and pprof resolves ids only once everything is read).  The
 * whole message is built in memory and deflated in one pass.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/util.h"
#include "output/pprof.h"
#include "lib/htab.h"
#include "lib/pb.h"
#include "output/strtab.h"
#include "output/output.h"
#include "trace/trace.h"

/* Field numbers from profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4 };

#define KERNEL_MAPPING "[kernel.kallsyms]"

struct pp_mapping {
	__u64 start, limit, pgoff;
	__u32 file, build_id;	/* string table indices */
	/*
	 * Known only by file name (kernel, or a frame without its mapping):
	 * its range is grown to cover the addresses seen, and it is keyed by
	 * the name alone.
	 */
	bool synthetic;
	bool kernel;
	bool main;		/* named like the comm of the first process using it */
	bool named;		/* has locations with a function */
	/* ... with a source file, a line, inlined functions (several lines) */
	bool files, lines, inlines;
};

/* One Line of a Location: a function and its source line (0: unknown). */
struct pp_line {
	__u32 function, line;
};

struct pp_location {
	__u64 addr;
	__u32 mapping, function;	/* ids; 0: none */
	__u32 line;			/* the function's source line */
	/*
	 * Functions inlined at addr, innermost first, in pp->lines: Lines
	 * before the function's own, as profile.proto orders them.
	 */
	__u32 first_inl, nr_inl;
};

struct pp_function {
	__u32 name, file;		/* string table indices; file 0: none */
	/*
	 * system_name is written as name when set.  An interpreter's names
	 * ("<module>") go without: pprof takes a name equal to its system
	 * name for one it may simplify, and a name with "<...>" for a C++
	 * template, whose arguments it removes.
	 */
	bool system;
};

struct pp {
	struct pb out;			/* the Profile message */
	struct frame_names names;	/* --names: what a function is called */
	struct trace_view view;		/* the parts written; never a delimiter */
	const char *comm;		/* of the record being written */
	__u64 period;
	const struct output_opts *oo;	/* the profile's kind: the values */
	int err;			/* sticky, like out.err */

	struct strtab strs;
	/* Each array has a table of ids (index + 1) into it, by content. */

	struct pp_function *funcs;	/* function id - 1 -> its strings */
	size_t nr_funcs, cap_funcs;
	struct htab func_ht;

	struct pp_mapping *maps;
	size_t nr_maps, cap_maps;
	struct htab map_ht;

	struct pp_location *locs;
	size_t nr_locs, cap_locs;
	struct htab loc_ht;

	struct pp_line *lines;		/* the locations' inlined functions */
	size_t nr_lines, cap_lines;

	__u64 *ids;			/* one sample's location ids */
	size_t nr_ids, cap_ids;
};

/* What map_eq() compares an entry of the table with. */
struct probe {
	const struct pp *pp;
	const void *key;
};

static __u32 fail(struct pp *pp, int err)
{
	if (!pp->err)
		pp->err = err;
	return 0;
}

/* Index of s in the string table; s must outlive pprof__write(). */
static __u32 intern_string(struct pp *pp, const char *s)
{
	__u32 idx;

	if (pp->err)
		return 0;
	if (strtab__intern(&pp->strs, s, &idx))
		return fail(pp, -ENOMEM);
	return idx;
}

/*
 * Functions are told apart by name and source file: native ones have the
 * file DWARF names (none without), an interpreter's are named by their
 * file too.  system: see struct pp_function.
 */
static __u32 intern_function_as(struct pp *pp, const char *name, const char *file,
				bool system)
{
	__u32 idx = intern_string(pp, name), fidx = file ? intern_string(pp, file) : 0;
	struct hent *e;

	if (pp->err)
		return 0;
	if (util__grow_array((void **)&pp->funcs, &pp->cap_funcs, pp->nr_funcs + 1, sizeof(*pp->funcs)))
		return fail(pp, -ENOMEM);
	e = htab__slot(&pp->func_ht, idx, fidx, NULL, NULL);
	if (!e)
		return fail(pp, -ENOMEM);
	if (e->val)
		return htab__val_id(e->val);
	pp->funcs[pp->nr_funcs++] = (struct pp_function){ .name = idx, .file = fidx,
							  .system = system };
	htab__fill(&pp->func_ht, e, idx, fidx, htab__id_val(pp->nr_funcs));
	return pp->nr_funcs;
}

static __u32 intern_function(struct pp *pp, const char *name, const char *file)
{
	return intern_function_as(pp, name, file, true);
}

static bool map_eq(const void *val, const void *ctx)
{
	const struct probe *p = ctx;
	const struct pp_mapping *a = &p->pp->maps[htab__val_id(val) - 1], *b = p->key;

	if (a->synthetic || b->synthetic)
		return a->synthetic == b->synthetic && a->file == b->file;
	return a->start == b->start && a->limit == b->limit &&
	       a->pgoff == b->pgoff && a->file == b->file &&
	       a->build_id == b->build_id;
}

/* The htab keys of a mapping: of what map_eq() compares, and no more. */
static void map_keys(const struct pp_mapping *m, __u64 *k1, __u64 *k2)
{
	if (m->synthetic) {
		*k1 = m->file;
		*k2 = 0;
		return;
	}
	*k1 = htab__hash(m->start, m->limit);
	*k2 = htab__hash(m->pgoff, m->file | (__u64)m->build_id << 32);
}

/*
 * Does file look like the executable of a process named comm?  The comm is
 * the file's name cut to 15 characters, unless the program renamed itself;
 * "node" runs /usr/bin/nodejs, so a prefix will do.
 */
static bool is_comm_file(const char *file, const char *comm)
{
	const char *base = strrchr(file, '/');

	base = base ? base + 1 : file;
	return *comm && !strncmp(base, comm, strlen(comm));
}

/* Id of the mapping equal to key, added if new; *added says which. */
static __u32 intern_mapping(struct pp *pp, const struct pp_mapping *key, bool *added)
{
	struct probe probe = { pp, key };
	struct hent *e;
	__u64 k1, k2;

	*added = false;
	if (pp->err)
		return 0;
	if (util__grow_array((void **)&pp->maps, &pp->cap_maps, pp->nr_maps + 1, sizeof(*pp->maps)))
		return fail(pp, -ENOMEM);
	map_keys(key, &k1, &k2);
	e = htab__slot(&pp->map_ht, k1, k2, map_eq, &probe);
	if (!e)
		return fail(pp, -ENOMEM);
	if (e->val)
		return htab__val_id(e->val);
	pp->maps[pp->nr_maps] = *key;
	pp->maps[pp->nr_maps++].main = !key->kernel &&
				       is_comm_file(strtab__at(&pp->strs, key->file), pp->comm);
	htab__fill(&pp->map_ht, e, k1, k2, htab__id_val(pp->nr_maps));
	*added = true;
	return pp->nr_maps;
}

static __u32 synthetic_mapping(struct pp *pp, const char *file, __u64 pc, bool kernel)
{
	struct pp_mapping key = {
		.file = intern_string(pp, file),
		.start = pc,
		.limit = pc + 1,
		.synthetic = true,
		.kernel = kernel,
	};
	struct pp_mapping *m;
	bool added;
	__u32 id;

	id = intern_mapping(pp, &key, &added);
	if (!id || added)
		return id;
	m = &pp->maps[id - 1];
	if (pc < m->start)
		m->start = pc;
	if (pc >= m->limit)
		m->limit = pc + 1;
	return id;
}

/* The mapping the symbolizer found f in, else one named by f's module. */
static __u32 user_mapping(struct pp *pp, const struct frame *f, __u64 pc)
{
	const struct frame_mapping *fm = f->mapping;
	struct pp_mapping key = {};
	bool added;

	if (!fm)
		return f->module ? synthetic_mapping(pp, f->module, pc, false) : 0;
	key.start = fm->start;
	key.limit = fm->limit;
	key.pgoff = fm->pgoff;
	key.file = intern_string(pp, fm->file);
	key.build_id = fm->build_id ? intern_string(pp, fm->build_id) : 0;
	return intern_mapping(pp, &key, &added);
}

/* The functions inlined where native frame f is, as Lines of loc. */
static int add_inlined(struct pp *pp, const struct frame *f, struct pp_location *loc)
{
	loc->first_inl = pp->nr_lines;
	for (__u8 i = 0; i < f->nr_inl; i++) {
		const struct frame *in = f->inl[i];
		__u32 fn = intern_function(pp, frame__name(in, &pp->names), in->file);

		if (pp->err)
			return pp->err;
		if (util__grow_array((void **)&pp->lines, &pp->cap_lines, pp->nr_lines + 1,
				     sizeof(*pp->lines)))
			return fail(pp, -ENOMEM), -ENOMEM;
		pp->lines[pp->nr_lines++] = (struct pp_line){ .function = fn, .line = in->line };
	}
	loc->nr_inl = pp->nr_lines - loc->first_inl;
	return 0;
}

/*
 * One location per (mapping, address); the function is part of the key only
 * so that two processes' different JIT code at one address stays apart.
 */
static __u32 intern_location(struct pp *pp, __u32 mapping, __u64 addr, __u32 function,
			     __u32 line, const struct frame *f)
{
	struct pp_location key = { .addr = addr, .mapping = mapping, .function = function,
				   .line = line };
	__u64 k2 = (__u64)mapping << 32 | function;	/* with addr, the whole key */

	/* An interpreter's frame has no address: it is its line. */
	addr ^= (__u64)line << 32;
	struct hent *e;

	if (pp->err)
		return 0;
	if (util__grow_array((void **)&pp->locs, &pp->cap_locs, pp->nr_locs + 1, sizeof(*pp->locs)))
		return fail(pp, -ENOMEM);
	e = htab__slot(&pp->loc_ht, addr, k2, NULL, NULL);
	if (!e)
		return fail(pp, -ENOMEM);
	if (e->val)
		return htab__val_id(e->val);
	if (f && add_inlined(pp, f, &key))
		return 0;
	pp->locs[pp->nr_locs++] = key;
	htab__fill(&pp->loc_ht, e, addr, k2, htab__id_val(pp->nr_locs));
	if (mapping && function) {
		struct pp_mapping *m = &pp->maps[mapping - 1];

		m->named = true;
		m->files |= f && f->file;
		m->lines |= line != 0;
		m->inlines |= key.nr_inl != 0;
	}
	return pp->nr_locs;
}

/* A frame's location, named at the address the symbolizer named it by. */
static __u32 frame_location(struct pp *pp, const struct frame *f)
{
	__u64 pc = frame__pc(f);
	__u32 mapping, function;

	/* [Missed ... Stack], [off-cpu]: a function of that name. */
	if (frame__is_marker(f))
		return intern_location(pp, 0, 0, intern_function(pp, f->name, NULL), 0, NULL);
	/* An interpreter's function, file and line; no mapping, no address. */
	if (f->kind == FRAME_INTERP && f->func)
		return intern_location(pp, 0, 0, intern_function_as(pp, f->func, f->module, false),
				       f->line, NULL);
	if (f->kind == FRAME_INTERP)
		return intern_location(pp, 0, 0, intern_function_as(pp, f->name ? f->name :
								     "[unknown]", NULL, false),
				       0, NULL);
	if (f->flags & FRAME_INTERP_MARK)
		return intern_location(pp, 0, 0, intern_function(pp, f->name ? f->name : "[unknown]",
								  NULL), 0, NULL);
	if (f->kind == FRAME_KERNEL)
		mapping = synthetic_mapping(pp, KERNEL_MAPPING, pc, true);
	else
		mapping = user_mapping(pp, f, pc);
	function = f->name ? intern_function(pp, frame__name(f, &pp->names), f->file) : 0;
	return intern_location(pp, mapping, pc, function, function ? f->line : 0,
			       function ? f : NULL);
}

static void add_id(struct pp *pp, __u32 id)
{
	if (pp->err)
		return;
	if (util__grow_array((void **)&pp->ids, &pp->cap_ids, pp->nr_ids + 1, sizeof(*pp->ids))) {
		fail(pp, -ENOMEM);
		return;
	}
	pp->ids[pp->nr_ids++] = id;
}

static void reverse_ids(struct pp *pp)
{
	for (size_t i = 0, j = pp->nr_ids; i + 1 < j; i++, j--) {
		__u64 tmp = pp->ids[i];

		pp->ids[i] = pp->ids[j - 1];
		pp->ids[j - 1] = tmp;
	}
}

static void write_label(struct pp *pp, const char *key, const char *str, __u64 num)
{
	size_t mark = pb__open(&pp->out, SAMPLE_LABEL);

	pb__int64(&pp->out, LABEL_KEY, intern_string(pp, key));
	if (str)
		pb__int64(&pp->out, LABEL_STR, intern_string(pp, str));
	else
		pb__int64(&pp->out, LABEL_NUM, num);
	pb__close(&pp->out, mark);
}

/*
 * Locations go leaf first, the kernel stack (if any) on top of the user
 * one.  They are interned root first, though, so that the first mapping
 * seen tends to be the main executable (where _start and main live) when
 * mapping_order() finds none named like the comm.
 */
/*
 * A sample's values, one per sample type (write_header()): a CPU
 * profile's samples and their period's worth; an off-CPU profile's
 * nanoseconds; --wall's nanoseconds of wall-clock, on-CPU and off-CPU
 * time.  Returns how many.
 */
static size_t sample_values(const struct pp *pp, const struct record *r, __u64 *values)
{
	__u64 ns = output__weight(pp->oo, r);

	switch (pp->oo->kind) {
	case PROFILE_OFF_CPU:
		values[0] = ns;
		return 1;
	case PROFILE_WALL:
		values[0] = ns;
		values[1] = r->what == COUNT_OFF_CPU ? 0 : ns;
		values[2] = r->what == COUNT_OFF_CPU ? ns : 0;
		return 3;
	default:
		values[0] = r->count;
		values[1] = r->count * pp->period;
		return 2;
	}
}

static void write_sample(struct pp *pp, const struct record *r)
{
	__u64 values[3];
	size_t nr_values = sample_values(pp, r, values);
	size_t mark;

	struct trace_iter it;

	pp->nr_ids = 0;
	pp->comm = r->comm;
	trace_iter__init(&it, r, &pp->view);
	for (__u32 i = 0; i < it.len; i++) {
		const struct frame *f = trace_iter__frame(&it, i);

		/* Lines of the location of the frame they are inlined in. */
		if (!f->inlined)
			add_id(pp, frame_location(pp, f));
	}
	reverse_ids(pp);
	mark = pb__open(&pp->out, PROFILE_SAMPLE);
	pb__packed_u64(&pp->out, SAMPLE_LOCATION_ID, pp->ids, pp->nr_ids);
	pb__packed_u64(&pp->out, SAMPLE_VALUE, values, nr_values);
	write_label(pp, "pid", NULL, r->pid);
	write_label(pp, "comm", r->comm, 0);
	if (r->tid)
		write_label(pp, "tid", NULL, r->tid);
	pb__close(&pp->out, mark);
}

static void write_value_type(struct pp *pp, __u32 field, const char *type, const char *unit)
{
	size_t mark = pb__open(&pp->out, field);

	pb__int64(&pp->out, VALUE_TYPE_TYPE, intern_string(pp, type));
	pb__int64(&pp->out, VALUE_TYPE_UNIT, intern_string(pp, unit));
	pb__close(&pp->out, mark);
}

/*
 * Off-CPU time is its own sample type, off_cpu; --wall's are wall (the
 * default shown), cpu and off_cpu, all in nanoseconds, so that one file
 * answers where the time went, on the CPU and off it.
 */
static void write_time_types(struct pp *pp)
{
	const char *ns = "nanoseconds";

	if (pp->oo->kind == PROFILE_OFF_CPU) {
		write_value_type(pp, PROFILE_SAMPLE_TYPE, "off_cpu", ns);
		write_value_type(pp, PROFILE_PERIOD_TYPE, "off_cpu", ns);
		return;
	}
	write_value_type(pp, PROFILE_SAMPLE_TYPE, "wall", ns);
	write_value_type(pp, PROFILE_SAMPLE_TYPE, "cpu", ns);
	write_value_type(pp, PROFILE_SAMPLE_TYPE, "off_cpu", ns);
	write_value_type(pp, PROFILE_PERIOD_TYPE, "wall", ns);
	pb__int64(&pp->out, PROFILE_DEFAULT_SAMPLE_TYPE, intern_string(pp, "wall"));
}

static void write_header(struct pp *pp, const struct pprof_meta *m)
{
	const char *type = m->period_type ? m->period_type : "cpu";
	const char *unit = m->period_unit ? m->period_unit : "nanoseconds";

	if (output__timed(pp->oo)) {
		write_time_types(pp);
	} else {
		write_value_type(pp, PROFILE_SAMPLE_TYPE, "samples", "count");
		write_value_type(pp, PROFILE_SAMPLE_TYPE, type, unit);
		write_value_type(pp, PROFILE_PERIOD_TYPE, type, unit);
	}
	pb__int64(&pp->out, PROFILE_PERIOD, m->period);
	pb__int64(&pp->out, PROFILE_TIME_NANOS, m->time_nanos);
	pb__int64(&pp->out, PROFILE_DURATION_NANOS, m->duration_nanos);
}

/*
 * pprof takes the first mapping for the main binary and names the profile
 * after it: put executables named like a comm first, then the other user
 * mappings, the kernel last, each group in the order of first use.
 */
static int mapping_rank(const struct pp_mapping *m)
{
	return m->kernel ? 2 : m->main ? 0 : 1;
}

/* Final mapping ids, by old id; ids[0] stays 0, "no mapping". */
static __u32 *mapping_order(struct pp *pp)
{
	__u32 *ids = calloc(pp->nr_maps + 1, sizeof(*ids)), next = 1;

	if (!ids) {
		fail(pp, -ENOMEM);
		return NULL;
	}
	for (int rank = 0; rank <= 2; rank++)
		for (size_t i = 0; i < pp->nr_maps; i++)
			if (mapping_rank(&pp->maps[i]) == rank)
				ids[i + 1] = next++;
	return ids;
}

/*
 * has_functions (or has_filenames, has_line_numbers) tells pprof not to
 * symbolize the mapping again: claimed when we named any of its
 * locations, since pprof's own try would replace our names with what it
 * finds in the file as it is now (the .dynsym of a stripped library, with
 * no debug file) for every location in it.  One we could not name stays
 * unnamed.  A mapping none of whose locations we named is left to pprof.
 */
static void write_mapping(struct pp *pp, const struct pp_mapping *m, __u32 id)
{
	size_t mark = pb__open(&pp->out, PROFILE_MAPPING);

	pb__uint64(&pp->out, MAPPING_ID, id);
	pb__uint64(&pp->out, MAPPING_MEMORY_START, m->start);
	pb__uint64(&pp->out, MAPPING_MEMORY_LIMIT, m->limit);
	pb__uint64(&pp->out, MAPPING_FILE_OFFSET, m->pgoff);
	pb__int64(&pp->out, MAPPING_FILENAME, m->file);
	if (m->build_id)
		pb__int64(&pp->out, MAPPING_BUILD_ID, m->build_id);
	if (m->named)
		pb__bool(&pp->out, MAPPING_HAS_FUNCTIONS, true);
	if (m->files)
		pb__bool(&pp->out, MAPPING_HAS_FILENAMES, true);
	if (m->lines)
		pb__bool(&pp->out, MAPPING_HAS_LINE_NUMBERS, true);
	if (m->inlines)
		pb__bool(&pp->out, MAPPING_HAS_INLINE_FRAMES, true);
	pb__close(&pp->out, mark);
}

/* In mapping_order()'s order, so that ids ascend. */
static void write_mappings(struct pp *pp, const __u32 *ids)
{
	for (int rank = 0; rank <= 2; rank++)
		for (size_t i = 0; i < pp->nr_maps; i++)
			if (mapping_rank(&pp->maps[i]) == rank)
				write_mapping(pp, &pp->maps[i], ids[i + 1]);
}

static void write_locations(struct pp *pp, const __u32 *map_ids)
{
	for (size_t i = 0; i < pp->nr_locs; i++) {
		const struct pp_location *l = &pp->locs[i];
		size_t mark = pb__open(&pp->out, PROFILE_LOCATION), line;

		pb__uint64(&pp->out, LOCATION_ID, i + 1);
		if (l->mapping)
			pb__uint64(&pp->out, LOCATION_MAPPING_ID, map_ids[l->mapping]);
		pb__uint64(&pp->out, LOCATION_ADDRESS, l->addr);
		for (__u32 j = 0; j < l->nr_inl; j++) {
			const struct pp_line *in = &pp->lines[l->first_inl + j];

			line = pb__open(&pp->out, LOCATION_LINE);
			pb__uint64(&pp->out, LINE_FUNCTION_ID, in->function);
			if (in->line)
				pb__int64(&pp->out, LINE_LINE, in->line);
			pb__close(&pp->out, line);
		}
		if (l->function) {
			line = pb__open(&pp->out, LOCATION_LINE);
			pb__uint64(&pp->out, LINE_FUNCTION_ID, l->function);
			if (l->line)
				pb__int64(&pp->out, LINE_LINE, l->line);
			pb__close(&pp->out, line);
		}
		pb__close(&pp->out, mark);
	}
}

static void write_functions(struct pp *pp)
{
	for (size_t i = 0; i < pp->nr_funcs; i++) {
		size_t mark = pb__open(&pp->out, PROFILE_FUNCTION);

		pb__uint64(&pp->out, FUNCTION_ID, i + 1);
		pb__int64(&pp->out, FUNCTION_NAME, pp->funcs[i].name);
		if (pp->funcs[i].system)
			pb__int64(&pp->out, FUNCTION_SYSTEM_NAME, pp->funcs[i].name);
		if (pp->funcs[i].file)
			pb__int64(&pp->out, FUNCTION_FILENAME, pp->funcs[i].file);
		pb__close(&pp->out, mark);
	}
}

static void write_strings(struct pp *pp)
{
	for (size_t i = 0; i < pp->strs.nr; i++)
		pb__string(&pp->out, PROFILE_STRING_TABLE, pp->strs.strs[i]);
}

static int write_error(void)
{
	return errno ? -errno : -EIO;
}

/* One gzip member (deflate with windowBits 15 + 16) of data, to out. */
static int gzip_write(FILE *out, const __u8 *data, size_t len)
{
	unsigned char chunk[16384];
	z_stream zs = {};
	int ret, err = 0;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (unsigned char *)data;
	do {
		/* avail_in is 32 bits wide: feed a huge buffer in slices. */
		if (!zs.avail_in && len) {
			zs.avail_in = len > UINT_MAX ? UINT_MAX : len;
			len -= zs.avail_in;
		}
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		ret = deflate(&zs, len ? Z_NO_FLUSH : Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - zs.avail_out, out) !=
		    sizeof(chunk) - zs.avail_out) {
			err = write_error();
			break;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&zs);
	if (!err && fflush(out))
		err = write_error();
	return err;
}

static void pp_free(struct pp *pp)
{
	pb__free(&pp->out);
	strtab__free(&pp->strs);
	free(pp->funcs);
	htab__free(&pp->func_ht);
	free(pp->maps);
	htab__free(&pp->map_ht);
	free(pp->locs);
	htab__free(&pp->loc_ht);
	free(pp->lines);
	free(pp->ids);
	frame_names__free(&pp->names);
}

int pprof__write(FILE *out, const struct records *p, const struct output_opts *oo,
		 const struct pprof_meta *m)
{
	struct pprof_meta none = {};
	struct pp pp = { .view = oo->view, .oo = oo };
	__u32 *map_ids;
	int err;

	if (!m)
		m = &none;
	pp.view.delimited = false;
	pp.period = m->period;
	frame_names__init(&pp.names, oo->short_names);
	intern_string(&pp, "");		/* index 0, as profile.proto requires */
	write_header(&pp, m);
	for (size_t i = 0; i < p->nr; i++)
		if (output__weight(oo, &p->recs[i]))
			write_sample(&pp, &p->recs[i]);
	map_ids = mapping_order(&pp);
	if (map_ids) {
		write_mappings(&pp, map_ids);
		write_locations(&pp, map_ids);
		free(map_ids);
	}
	write_functions(&pp);
	write_strings(&pp);
	err = pp.err ? pp.err : pp.out.err;
	if (!err)
		err = gzip_write(out, pp.out.buf, pp.out.len);
	pp_free(&pp);
	return err;
}
