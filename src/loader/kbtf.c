// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loader/kbtf.h"

void kbtf__load(struct kbtf *k)
{
	k->btf = btf__load_vmlinux_btf();
	k->err = k->btf ? 0 : (errno ? -errno : -ENOENT);
}

void kbtf__free(struct kbtf *k)
{
	btf__free(k->btf);
	k->btf = NULL;
	k->err = -ENOENT;
}

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

int kbtf__mntns_offsets(const struct kbtf *k, struct mntns_offsets *off)
{
	__u32 ns = 0, inum = 0;
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "nsproxy", &off->nsproxy);
	if (!err)
		err = member_offset(k->btf, "nsproxy", "mnt_ns", &off->mnt_ns);
	if (!err)
		err = member_offset(k->btf, "mnt_namespace", "ns", &ns);
	if (!err)
		err = member_offset(k->btf, "ns_common", "inum", &inum);
	off->ns_inum = ns + inum;
	return err;
}

int kbtf__fsbase_offset(const struct kbtf *k, __u32 *off)
{
	__u32 thread = 0, fsbase = 0;
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "thread", &thread);
	if (!err)
		err = member_offset(k->btf, "thread_struct", "fsbase", &fsbase);
	*off = thread + fsbase;
	return err;
}

int kbtf__follow_offsets(const struct kbtf *k, struct follow_offsets *off)
{
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "tgid", &off->tgid);
	if (!err)
		err = member_offset(k->btf, "task_struct", "signal", &off->signal);
	/* An atomic_t: a struct of one int, its counter. */
	if (!err)
		err = member_offset(k->btf, "signal_struct", "live", &off->live);
	return err;
}

int kbtf__start_offsets(const struct kbtf *k, struct start_offsets *off)
{
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "group_leader", &off->group_leader);
	if (!err)
		err = member_offset(k->btf, "task_struct", "start_time", &off->start_time);
	return err;
}

int kbtf__offcpu(const struct kbtf *k, struct offcpu_btf *out)
{
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "__state", &out->task_state);
	if (err == -ENOENT)
		err = member_offset(k->btf, "task_struct", "state", &out->task_state);
	out->sched_exit_tp = btf__find_by_name_kind(k->btf, "btf_trace_sched_exit_tp",
						    BTF_KIND_TYPEDEF) > 0;
	out->finish_task_switch = btf__find_by_name_kind(k->btf, "finish_task_switch",
							 BTF_KIND_FUNC) > 0;
	return err;
}
