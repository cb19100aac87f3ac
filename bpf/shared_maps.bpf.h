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
 * profile -- CMD: the processes followed, by the kernel's tgid (see
 * FOLLOW_SET_SIZE); filled by the sampler's follow_* programs, never by
 * the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
} follow_set SEC(".maps");

/*
 * Each slot of uw_tables: the serial of the table in it (struct uw_map),
 * 0 while none.  The loader writes it once the table is in, and clears it
 * before the table goes, whose delete returns only after every program
 * running then has ended (a map of maps waits for an RCU grace period):
 * a walk that found the serial in force walks that table, not a later
 * one in the same slot.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, UW_MAX_TABLES);
} uw_slot_serials SEC(".maps");

/*
 * pid -> the loader's list of its mappings (uwtable.h, struct uw_proc).
 * Not preallocated: a process costs its 10 KiB only once it is synced.
 * bpf/klist.bpf.c deletes a list older than ld.so's latest objects.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct uw_proc);
	__uint(max_entries, UW_MAX_PROCS);
} uw_procs SEC(".maps");

/*
 * A thread's list made in the kernel (uwtable.h, struct uw_klist_store),
 * by bpf/klist.bpf.c at its exec and when ld.so has mapped objects:
 * storage of the task, gone with it, so that no user's processes take
 * room from another's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct uw_klist_store);
} uw_klist_store SEC(".maps");

#endif /* SHARED_MAPS_BPF_H */
