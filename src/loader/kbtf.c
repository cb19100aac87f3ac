// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loader/kbtf.h"

/* Byte offset of member `name` in struct `type`; -ENOENT when absent. */
static int member_offset(const struct btf *btf, const char *type, const char *name,
			 __u32 *off)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id;

	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		if (strcmp(btf__name_by_offset(btf, m->name_off), name))
			continue;
		if (btf_member_bitfield_size(t, i))
			return -EINVAL;
		*off = btf_member_bit_offset(t, i) / 8;
		return 0;
	}
	return -ENOENT;
}

int kbtf__mntns_offsets(struct mntns_offsets *off)
{
	struct btf *btf = btf__load_vmlinux_btf();
	__u32 ns = 0, inum = 0;
	int err;

	if (!btf)
		return -errno;
	err = member_offset(btf, "task_struct", "nsproxy", &off->nsproxy);
	if (!err)
		err = member_offset(btf, "nsproxy", "mnt_ns", &off->mnt_ns);
	if (!err)
		err = member_offset(btf, "mnt_namespace", "ns", &ns);
	if (!err)
		err = member_offset(btf, "ns_common", "inum", &inum);
	off->ns_inum = ns + inum;
	btf__free(btf);
	return err;
}

int kbtf__fsbase_offset(__u32 *off)
{
	struct btf *btf = btf__load_vmlinux_btf();
	__u32 thread = 0, fsbase = 0;
	int err;

	if (!btf)
		return -errno;
	err = member_offset(btf, "task_struct", "thread", &thread);
	if (!err)
		err = member_offset(btf, "thread_struct", "fsbase", &fsbase);
	*off = thread + fsbase;
	btf__free(btf);
	return err;
}

int kbtf__follow_offsets(struct follow_offsets *off)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int err;

	if (!btf)
		return -errno;
	err = member_offset(btf, "task_struct", "tgid", &off->tgid);
	if (!err)
		err = member_offset(btf, "task_struct", "signal", &off->signal);
	if (!err)
		err = member_offset(btf, "signal_struct", "live", &off->live);
	/* An atomic_t: a struct of one int, its counter. */
	btf__free(btf);
	return err;
}

int kbtf__start_offsets(struct start_offsets *off)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int err;

	if (!btf)
		return -errno;
	err = member_offset(btf, "task_struct", "group_leader", &off->group_leader);
	if (!err)
		err = member_offset(btf, "task_struct", "start_time", &off->start_time);
	btf__free(btf);
	return err;
}

int kbtf__offcpu(struct offcpu_btf *out)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int err;

	if (!btf)
		return -errno;
	err = member_offset(btf, "task_struct", "__state", &out->task_state);
	if (err == -ENOENT)
		err = member_offset(btf, "task_struct", "state", &out->task_state);
	out->sched_exit_tp = btf__find_by_name_kind(btf, "btf_trace_sched_exit_tp",
						    BTF_KIND_TYPEDEF) > 0;
	out->finish_task_switch = btf__find_by_name_kind(btf, "finish_task_switch",
							 BTF_KIND_FUNC) > 0;
	btf__free(btf);
	return err;
}
