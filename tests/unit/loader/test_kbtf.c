// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kbtf's offsets, from a mapped file handed to libbpf: a file libbpf
 * writes, with every kind of record before the ones asked for; files
 * that are not BTF refused; and, where the kernel's BTF is readable, the
 * same answers as libbpf's own parse of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "unit.h"
#include "loader/kbtf.h"

static char path[] = "/tmp/test_kbtf.XXXXXX";

static void write_file(const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fwrite(data, 1, len, f) == len);
	if (f)
		fclose(f);
}

/* A small BTF with the structs mntns and fsbase read, after one of every kind. */
static struct btf *sample_btf(void)
{
	struct btf *b = btf__new_empty();
	int i32, ptr, proto, e, ns, mnt, th;

	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	ptr = btf__add_ptr(b, i32);
	btf__add_array(b, i32, i32, 4);
	proto = btf__add_func_proto(b, i32);
	btf__add_func_param(b, "x", i32);
	btf__add_func_param(b, "y", ptr);
	btf__add_func(b, "finish_task_switch", BTF_FUNC_GLOBAL, proto);
	e = btf__add_enum(b, "state", 4);
	btf__add_enum_value(b, "ON", 1);
	btf__add_enum_value(b, "OFF", 2);
	btf__add_typedef(b, "btf_trace_sched_exit_tp", ptr);
	/* A tracepoint's probe: (void *, task, bool), as 6.18's sched_process_exit. */
	proto = btf__add_func_proto(b, 0);
	btf__add_func_param(b, NULL, ptr);
	btf__add_func_param(b, NULL, ptr);
	btf__add_func_param(b, NULL, i32);
	btf__add_typedef(b, "btf_trace_sched_process_exit", btf__add_ptr(b, proto));
	btf__add_const(b, e);
	btf__add_volatile(b, i32);
	btf__add_fwd(b, "later", BTF_FWD_STRUCT);
	btf__add_float(b, "double", 8);
	btf__add_var(b, "v", BTF_VAR_GLOBAL_ALLOCATED, i32);
	/* A struct of the name asked for, but a union: not it. */
	btf__add_union(b, "nsproxy", 8);
	btf__add_field(b, "mnt_ns", i32, 0, 0);
	ns = btf__add_struct(b, "ns_common", 16);
	btf__add_field(b, "stashed", ptr, 0, 0);
	btf__add_field(b, "inum", i32, 64, 0);
	mnt = btf__add_struct(b, "mnt_namespace", 32);
	btf__add_field(b, "count", i32, 0, 0);
	btf__add_field(b, "ns", ns, 128, 0);
	mnt = btf__add_ptr(b, mnt);
	btf__add_struct(b, "nsproxy", 16);
	btf__add_field(b, "count", i32, 0, 0);
	btf__add_field(b, "mnt_ns", mnt, 64, 0);
	th = btf__add_struct(b, "thread_struct", 64);
	btf__add_field(b, "sp", i32, 0, 0);
	btf__add_field(b, "fsbase", i32, 320, 0);
	btf__add_struct(b, "task_struct", 4096);
	btf__add_field(b, "__state", i32, 192, 0);
	btf__add_field(b, "flags", i32, 224, 3);	/* a bitfield */
	btf__add_field(b, "nsproxy", ptr, 8 * 1000, 0);
	btf__add_field(b, "thread", th, 8 * 2048, 0);
	return b;
}

TEST(offsets)
{
	struct btf *b = sample_btf();
	struct mntns_offsets mo = {};
	struct offcpu_btf oc = {};
	struct start_offsets so;
	const void *raw;
	struct kbtf k;
	__u32 size, off = 0;

	raw = btf__raw_data(b, &size);
	CHECK(raw != NULL);
	write_file(raw, size);
	kbtf__load_path(&k, path);
	CHECK_INT(k.err, 0);
	CHECK_INT(kbtf__mntns_offsets(&k, &mo), 0);
	CHECK_INT(mo.nsproxy, 1000);
	CHECK_INT(mo.mnt_ns, 8);
	CHECK_INT(mo.ns_inum, 16 + 8);
	CHECK_INT(kbtf__fsbase_offset(&k, &off), 0);
	CHECK_INT(off, 2048 + 40);
	CHECK_INT(kbtf__offcpu(&k, &oc), 0);
	CHECK_INT(oc.task_state, 24);
	CHECK(oc.sched_exit_tp);
	CHECK(oc.finish_task_switch);
	CHECK_INT(kbtf__tp_args(&k, "sched_process_exit"), 3);
	/* Not a pointer to a prototype; no such tracepoint. */
	CHECK_INT(kbtf__tp_args(&k, "sched_exit_tp"), -EINVAL);
	CHECK_INT(kbtf__tp_args(&k, "sched_nothing"), -ENOENT);
	/* Absent: no group_leader in this task_struct. */
	CHECK_INT(kbtf__start_offsets(&k, &so), -ENOENT);
	kbtf__free(&k);
	/* Freed: every query says so. */
	CHECK(k.err != 0);
	CHECK(kbtf__fsbase_offset(&k, &off) < 0);
	btf__free(b);
}

TEST(not_btf)
{
	struct btf *b = sample_btf();
	const __u8 *raw;
	__u8 *bad;
	struct kbtf k;
	__u32 size, off;

	raw = btf__raw_data(b, &size);
	bad = malloc(size);
	memcpy(bad, raw, size);
	/* Cut short: the sections no longer fit. */
	write_file(raw, size - 7);
	kbtf__load_path(&k, path);
	CHECK(k.err < 0);
	CHECK_INT(kbtf__fsbase_offset(&k, &off), k.err);
	kbtf__free(&k);
	/* Another magic. */
	bad[0] ^= 0xff;
	write_file(bad, size);
	kbtf__load_path(&k, path);
	CHECK(k.err < 0);
	kbtf__free(&k);
	/* A kind libbpf does not know: refused, nothing is found. */
	memcpy(bad, raw, size);
	{
		const struct btf_header *h = (const void *)bad;
		struct btf_type *first = (void *)(bad + h->hdr_len + h->type_off);

		first->info = (first->info & ~0x1f000000u) | (31u << 24);
	}
	write_file(bad, size);
	kbtf__load_path(&k, path);
	CHECK(k.err < 0);
	CHECK(kbtf__fsbase_offset(&k, &off) < 0);
	kbtf__free(&k);
	kbtf__load_path(&k, "/nonexistent/btf");
	CHECK_INT(k.err, -ENOENT);
	kbtf__free(&k);
	free(bad);
	btf__free(b);
}

/* libbpf's answer, to compare with. */
static int lib_offset(const struct btf *b, const char *type, const char *name)
{
	int id = btf__find_by_name_kind(b, type, BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;

	if (id < 0)
		return -1;
	t = btf__type_by_id(b, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(b, m->name_off), name))
			return btf_member_bit_offset(t, i) / 8;
	return -1;
}

TEST(kernel)
{
	struct btf *b = btf__parse("/sys/kernel/btf/vmlinux", NULL);
	struct follow_offsets fo;
	struct start_offsets so;
	struct offcpu_btf oc;
	struct kbtf k;
	__u32 fsbase;

	if (!b) {
		printf("# no readable kernel BTF: compared with libbpf on the sample only\n");
		return;
	}
	kbtf__load(&k);
	CHECK_INT(k.err, 0);
	CHECK_INT(kbtf__start_offsets(&k, &so), 0);
	CHECK_INT(so.group_leader, lib_offset(b, "task_struct", "group_leader"));
	CHECK_INT(so.start_time, lib_offset(b, "task_struct", "start_time"));
	CHECK_INT(kbtf__follow_offsets(&k, &fo), 0);
	CHECK_INT(fo.tgid, lib_offset(b, "task_struct", "tgid"));
	CHECK_INT(fo.signal, lib_offset(b, "task_struct", "signal"));
	CHECK_INT(fo.live, lib_offset(b, "signal_struct", "live"));
	CHECK_INT(kbtf__fsbase_offset(&k, &fsbase), 0);
	CHECK_INT(fsbase, lib_offset(b, "task_struct", "thread") +
			  lib_offset(b, "thread_struct", "fsbase"));
	CHECK_INT(kbtf__offcpu(&k, &oc), 0);
	CHECK_INT(oc.task_state, lib_offset(b, "task_struct", "__state"));
	CHECK_INT(oc.finish_task_switch,
		  btf__find_by_name_kind(b, "finish_task_switch", BTF_KIND_FUNC) > 0);
	CHECK_INT(oc.sched_exit_tp,
		  btf__find_by_name_kind(b, "btf_trace_sched_exit_tp", BTF_KIND_TYPEDEF) > 0);
	kbtf__free(&k);
	btf__free(b);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	close(fd);
	RUN(offsets);
	RUN(not_btf);
	RUN(kernel);
	unlink(path);
	return unit_summary();
}
