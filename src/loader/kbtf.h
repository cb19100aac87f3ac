/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Field offsets from the running kernel's BTF, for the parts of the BPF
 * program that read kernel structures at offsets set in its rodata (the
 * default program's load does not parse the kernel's BTF again).
 *
 * kbtf__load() has libbpf parse /sys/kernel/btf/vmlinux once per start
 * (5.5 MB on 6.18), from a mapping of the file so that libbpf's copy is
 * the only one; every query reads that parse, and kbtf__free() drops it
 * before the skeleton's load.
 */
#ifndef KBTF_H
#define KBTF_H

#include <stdbool.h>
#include <linux/types.h>

struct btf;

/* The parsed BTF, or why there is none: every query then returns err. */
struct kbtf {
	struct btf *btf;
	int err;		/* 0, or the parse's -errno */
};

/* Parse the running kernel's BTF into k (k->err says whether it did). */
void kbtf__load(struct kbtf *k);
/* ... or the raw BTF file at path (tests). */
void kbtf__load_path(struct kbtf *k, const char *path);
void kbtf__free(struct kbtf *k);

struct mntns_offsets {
	__u32 nsproxy;		/* task_struct.nsproxy */
	__u32 mnt_ns;		/* nsproxy.mnt_ns */
	__u32 ns_inum;		/* mnt_namespace.ns + ns_common.inum */
};

/* 0, or a negative errno (no BTF, or a kernel without these fields). */
int kbtf__mntns_offsets(const struct kbtf *k, struct mntns_offsets *off);

/*
 * Where a task's user fs base (x86-64's thread pointer) is kept:
 * task_struct.thread.fsbase.  0 or -errno.
 */
int kbtf__fsbase_offset(const struct kbtf *k, __u32 *off);

/* What following a command's processes reads of a task (profile -- CMD). */
struct follow_offsets {
	__u32 tgid;		/* task_struct.tgid */
	__u32 signal;		/* task_struct.signal */
	__u32 live;		/* signal_struct.live (an atomic_t: its int counter) */
};

/* 0, or a negative errno (no BTF, or a kernel without these fields). */
int kbtf__follow_offsets(const struct kbtf *k, struct follow_offsets *off);

/*
 * Where a process's start time is (the sampler's count_key.start):
 * task_struct.group_leader and task_struct.start_time.
 */
struct start_offsets {
	__u32 group_leader;
	__u32 start_time;
};

/* 0, or a negative errno (no BTF, or a kernel without these fields). */
int kbtf__start_offsets(const struct kbtf *k, struct start_offsets *off);

/* What off-CPU time needs of the kernel (--off-cpu, --wall). */
struct offcpu_btf {
	__u32 task_state;	/* task_struct.__state (.state before 5.14) */
	bool sched_exit_tp;	/* the sched_exit_tp tracepoint (6.16 on) */
	bool finish_task_switch;	/* finish_task_switch() has BTF: fentry */
};

/* 0, or a negative errno (no BTF, or no task state). */
int kbtf__offcpu(const struct kbtf *k, struct offcpu_btf *out);

/*
 * The arguments of tracepoint tp's probes (btf_trace_<tp>'s prototype,
 * the probe's data pointer first), or -errno: no BTF, no such tracepoint.
 */
int kbtf__tp_args(const struct kbtf *k, const char *tp);

/* Does the kernel have the function name (a kfunc, say)?  False without BTF. */
bool kbtf__has_func(const struct kbtf *k, const char *name);

#endif /* KBTF_H */
