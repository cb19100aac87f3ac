// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampling side of profile.  It runs on a perf-event timer on each CPU,
 * decides whether the interrupted task is wanted, and counts the sample by
 * (process, user stack, kernel stack, comm) in the count map.  Nothing is
 * sent to user space per sample.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"

#define EFAULT 14
#define ENOMEM 12
#define EEXIST 17

/* Set by the loader between open and load; constant to the verifier. */
const volatile bool filter_pids = false;
const volatile bool filter_tids = false;
const volatile bool filter_cgroup = false;
const volatile bool filter_cgroupmap = false;
const volatile bool filter_mntns = false;
const volatile bool include_idle = false;
const volatile bool want_user = true;
const volatile bool want_kernel = true;
const volatile bool per_thread = false;
const volatile bool per_cpu = false;
const volatile bool use_pidns = false;
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u32 self_tgid = 0;
const volatile __u32 stack_bytes = MAX_STACK_DEPTH * sizeof(__u64);

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384);
} stacks SEC(".maps");

/*
 * Not preallocated: it costs memory only for the stacks that actually
 * collided, about 1 KiB each, instead of 17 MiB up front.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct hashed_stack);
	__uint(max_entries, 16384);
} spilled SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct count_key);
	__type(value, __u64);
	__uint(max_entries, 40960);
} counts SEC(".maps");

struct counters {
	__u64 c[NR_COUNTERS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct counters);
	__uint(max_entries, 1);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct hashed_stack);
	__uint(max_entries, 1);
} scratch SEC(".maps");

/* Filter sets; the loader sizes and fills the ones it enables. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
} pid_set SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
} tid_set SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
} cgroup_set SEC(".maps");

/* bcc-compatible pinned maps: the loader reuses the user's map fd. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(__u64));
	__uint(max_entries, 1);
} cgroupmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(__u64));
	__uint(max_entries, 1);
} mntnsmap SEC(".maps");

static __always_inline bool in_set(void *map, __u32 id)
{
	return bpf_map_lookup_elem(map, &id) != NULL;
}

/* Is the current task one we profile?  Fills in its pid and tid as seen from
 * the profiler's PID namespace. */
static __always_inline bool wanted(__u32 *pid, __u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct bpf_pidns_info ns;

	if ((__u32)id == 0 && !include_idle)
		return false;
	*pid = id >> 32;
	*tid = (__u32)id;
	if (use_pidns) {
		/* Tasks outside our namespace have no pid we could print. */
		if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
			return false;
		*pid = ns.tgid;
		*tid = ns.pid;
	}
	if (*pid == self_tgid)
		return false;
	if (filter_pids && !in_set(&pid_set, *pid))
		return false;
	if (filter_tids && !in_set(&tid_set, *tid))
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_set, 0) != 1)
		return false;
	if (filter_cgroupmap) {
		__u64 cgid = bpf_get_current_cgroup_id();

		if (!bpf_map_lookup_elem(&cgroupmap, &cgid))
			return false;
	}
	if (filter_mntns) {
		struct task_struct *task = (void *)bpf_get_current_task();
		__u64 mntns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);

		if (!bpf_map_lookup_elem(&mntnsmap, &mntns))
			return false;
	}
	return true;
}

static __always_inline __u64 hash_stack(const struct hashed_stack *st, __u64 seed)
{
	__u64 h = seed ^ 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < MAX_STACK_DEPTH; i++) {
		if (i >= st->nr)
			break;
		h ^= st->ips[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h;
}

/*
 * The stack's bucket in the STACK_TRACE map holds another stack (or the map
 * ran out of free entries): store this one by content instead, so that the
 * sample keeps a real stack.
 */
static __always_inline void spill(void *ctx, struct stack_ref *ref, __u64 flags,
				  __u64 *cnt)
{
	__u32 zero = 0;
	struct hashed_stack *st = bpf_map_lookup_elem(&scratch, &zero);
	long len, err;
	__u64 h;

	if (!st)
		return;
	len = bpf_get_stack(ctx, st->ips, stack_bytes, flags);
	if (len <= 0) {
		cnt[CNT_SPILL_ERR]++;
		ref->err = len ? len : -EFAULT;
		return;
	}
	st->nr = len / sizeof(__u64);
	h = hash_stack(st, flags);
	err = bpf_map_update_elem(&spilled, &h, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		/* No room left anywhere: report it as bcc reports -ENOMEM. */
		cnt[CNT_SPILL_FULL]++;
		ref->err = -ENOMEM;
		return;
	}
	if (!err)
		cnt[CNT_SPILLED]++;
	ref->src = STACK_HASHED;
	ref->id = h;
}

/* Index of the first of the four per-kind error counters. */
static __always_inline void get_stack(void *ctx, struct stack_ref *ref,
				      __u64 flags, int base, __u64 *cnt)
{
	long id = bpf_get_stackid(ctx, &stacks, flags);

	if (id >= 0) {
		ref->src = STACK_MAP;
		ref->id = id;
		return;
	}
	ref->src = STACK_MISSED;
	ref->err = id;
	switch (id) {
	case -EFAULT:
		cnt[base + 2]++;
		ref->src = STACK_NONE;
		return;
	case -EEXIST:
		cnt[base]++;
		break;
	case -ENOMEM:
		cnt[base + 1]++;
		break;
	default:
		cnt[base + 3]++;
		return;
	}
	spill(ctx, ref, flags, cnt);
}

static __always_inline void count(struct count_key *key, __u64 *cnt)
{
	__u64 one = 1, *val;
	long err;

	val = bpf_map_lookup_elem(&counts, key);
	if (val) {
		__sync_fetch_and_add(val, 1);
		return;
	}
	err = bpf_map_update_elem(&counts, key, &one, BPF_NOEXIST);
	if (!err)
		return;
	if (err == -EEXIST) {
		/* Another CPU inserted the same key first. */
		val = bpf_map_lookup_elem(&counts, key);
		if (val) {
			__sync_fetch_and_add(val, 1);
			return;
		}
	}
	cnt[CNT_HASH_FULL]++;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	struct count_key key = {};
	struct counters *stat;
	__u32 zero = 0;
	__u32 pid, tid;

	stat = bpf_map_lookup_elem(&stats, &zero);
	if (!stat)
		return 0;
	stat->c[CNT_TAKEN]++;
	if (!wanted(&pid, &tid)) {
		stat->c[CNT_FILTERED]++;
		return 0;
	}
	key.pid = pid;
	if (per_thread)
		key.tid = tid;
	if (per_cpu)
		key.cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	if (want_user)
		get_stack(ctx, &key.user, BPF_F_USER_STACK, CNT_USER_EEXIST, stat->c);
	if (want_kernel)
		get_stack(ctx, &key.kern, 0, CNT_KERN_EEXIST, stat->c);
	count(&key, stat->c);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
