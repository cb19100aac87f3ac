/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The maps the sampler (bpf/profile.bpf.c) shares with the program that
 * makes a list in the kernel for a process not listed yet
 * (bpf/klist.bpf.c): an object of its own, for its iterator's kfuncs
 * make libbpf parse the kernel's BTF, which the sampler's load need not
 * pay for.  The loader opens that object on these maps' fds
 * (src/loader/session.c, klist__load()), and sets the same PID namespace
 * in both; and the helpers both use on them.
 */
#ifndef SHARED_MAPS_BPF_H
#define SHARED_MAPS_BPF_H

/* The profiler's PID namespace, when it is not the initial one. */
const volatile bool use_pidns = false;
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

/*
 * UAPI's struct bpf_pidns_info, declared here rather than taken from
 * vmlinux.h, whose types carry preserve_access_index: any access to them is
 * a CO-RE relocation, and one relocation makes libbpf parse all of vmlinux
 * BTF at load time.
 */
struct pidns_ids {
	__u32 pid;
	__u32 tgid;
};

/*
 * The current task's pid and tid as seen from the profiler's PID
 * namespace (the keys of uw_procs); false for a task outside it, which
 * has no pid we could print.
 */
static __always_inline bool current_ids(__u32 *pid, __u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pidns_ids ns;

	*pid = id >> 32;
	*tid = (__u32)id;
	if (!use_pidns)
		return true;
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, (void *)&ns, sizeof(ns)))
		return false;
	*pid = ns.tgid;
	*tid = ns.pid;
	return true;
}

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

/*
 * A sample's walk reads the innermost UW_SLICE_WORDS words of the user
 * stack at once (bpf/unwind/unwind.bpf.h, struct uw_state).
 */
#define UW_SLICE_WORDS 128
#define UW_SLICE_BYTES (UW_SLICE_WORDS * 8)

/*
 * Read the slice of the user stack at sp into dst; its length, 0 if none.
 * Near the stack's top the words past the end of sp's page may not be
 * mapped: then the slice ends with the page.
 */
static __always_inline __u32 uw_read_slice(__u64 *dst, __u64 sp)
{
	__u32 len = 4096 - (sp & 4095);

	if (!bpf_probe_read_user(dst, UW_SLICE_BYTES, (void *)sp))
		return UW_SLICE_BYTES;
	if (len >= UW_SLICE_BYTES ||
	    bpf_probe_read_user(dst, len & (UW_SLICE_BYTES - 1), (void *)sp))
		return 0;
	return len;
}

/*
 * The slice of an exiting thread's user stack, kept at the start of its
 * exit while its memory is there (bpf/profile.bpf.c, uw_exit_keep()): the
 * exit unmaps it next, and the thread's samples in the rest of the exit
 * (a short process's last ones) were cut at the leaf, the stack
 * unreadable.  The walk of such a sample takes its slice from here when
 * sp is the same.  Storage of the task, gone with it.
 */
struct uw_exit_slice {
	__u64 sp;
	__u32 len;		/* bytes kept from sp */
	__u32 pad;
	__u64 words[UW_SLICE_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct uw_exit_slice);
} uw_exit_slices SEC(".maps");

/*
 * A list copied into a thread's (uw_list_copy()).  The counts live in the
 * thread's list, a map value (to->seen: the entries with a table seen so
 * far), not here: the verifier checks a loop's step until its states
 * converge, and unknown map contents converge at once.
 */
struct uw_list_copy {
	const struct uw_proc *from;
	struct uw_klist_store *to;
	__u32 skip;		/* tables left out after the first */
};

/* Entry i of the list: count it if it has a table.  A bpf_loop() step. */
static long uw_list_count_step(__u64 i, void *data)
{
	struct uw_list_copy *c = data;

	if (!c->from || !c->to)
		return 1;
	if (c->from->maps[i & (UW_MAX_MAPS - 1)].flags & UWM_TABLE)
		c->to->seen++;
	return 0;
}

/*
 * Entry i of the list copied: kept when it is walked from a table (one
 * left out is walked by frame pointer, as one walked so in the loader's
 * list is: the list is marked cut when taken), but for the skip tables
 * after the first.  A bpf_loop() step.
 */
static long uw_list_copy_step(__u64 i, void *data)
{
	struct uw_list_copy *c = data;
	const struct uw_map *m;
	__u32 n, t;

	if (!c->from || !c->to)
		return 1;
	n = c->to->n_maps;
	if (n >= UW_KLIST_MAPS)
		return 1;
	m = &c->from->maps[i & (UW_MAX_MAPS - 1)];
	if (!(m->flags & UWM_TABLE))
		return 0;
	t = c->to->seen++;
	if (t >= 1 && t <= c->skip)
		return 0;
	c->to->maps[n & (UW_KLIST_MAPS - 1)] = *m;
	c->to->n_maps = n + 1;
	return 0;
}

/*
 * The loader's list of a process (uw_procs), copied into a list made now
 * (a thread's task storage, or a scratch value to be copied there): its
 * mappings with a table, in order; of more than UW_KLIST_MAPS, the lowest
 * (the program, most often) and the highest (libc, ld.so and the vdso lie
 * at the top of the address space, extension modules and other libraries
 * below them).  False when none was copied, or the list was being
 * replaced meanwhile (its gen changed): then to is left empty.
 */
static __always_inline bool uw_list_copy(const struct uw_proc *from, struct uw_klist_store *to)
{
	struct uw_list_copy c = { .from = from, .to = to };
	__u32 gen = from->gen, n = from->n_maps;

	to->made_ns = bpf_ktime_get_ns();
	to->n_maps = 0;
	to->seen = 0;
	if (n > UW_MAX_MAPS)
		return false;
	bpf_loop(n, uw_list_count_step, &c, 0);
	c.skip = to->seen > UW_KLIST_MAPS ? to->seen - UW_KLIST_MAPS : 0;
	to->seen = 0;
	bpf_loop(n, uw_list_copy_step, &c, 0);
	if (to->n_maps && *(volatile __u32 *)&from->gen == gen)
		return true;
	to->n_maps = 0;
	return false;
}

#endif /* SHARED_MAPS_BPF_H */
