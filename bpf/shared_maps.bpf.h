/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The maps the sampler (bpf/profile.bpf.c) shares with the program that
 * makes a list in the kernel for a process not listed yet
 * (bpf/klist.bpf.c): an object of its own, for its iterator's kfuncs
 * make libbpf parse the kernel's BTF, which the sampler's load need not
 * pay for.  The loader opens that object on these maps' fds
 * (src/loader/session.c, klist__load()).
 */
#ifndef SHARED_MAPS_BPF_H
#define SHARED_MAPS_BPF_H

/* The sampler's counters (bpf/profile.h), per CPU. */
struct counters {
	__u64 c[NR_COUNTERS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct counters);
	__uint(max_entries, 1);
} stats SEC(".maps");

/* A loaded table by its file (uwtable.h, struct uw_file): the unwinder writes it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct uw_file_key);
	__type(value, struct uw_file);
	__uint(max_entries, UW_MAX_TABLES);
} uw_files SEC(".maps");

/*
 * A thread's list made in the kernel (uwtable.h, struct uw_klist_store),
 * by bpf/klist.bpf.c at its exec and executable mmap()s: storage of the
 * task, gone with it, so that no user's processes take room from
 * another's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct uw_klist_store);
} uw_klist_store SEC(".maps");

#endif /* SHARED_MAPS_BPF_H */
