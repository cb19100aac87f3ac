// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampling side of profile.  It runs on a perf-event timer on each CPU,
 * decides whether the interrupted task is wanted, and counts the sample by
 * (process, user stack, kernel stack, comm) in the count map.  Nothing is
 * sent to user space per sample.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "profile.h"

#define ENOMEM 12
#define EFAULT 14
#define EEXIST 17

#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

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
const volatile bool notify_new = false;
/* Interpreters are looked for: the exec program sends NOTE_EXEC. */
const volatile bool exec_notes = false;
/*
 * The profiler's own pid.  Its CPU samples are counted, as bcc's and
 * perf's are: its CPU is the host's too.  Its blocks are not timed: they
 * are the profiler waiting for work, which says nothing about the host.
 */
const volatile __u32 self_tgid = 0;
/* profile -- CMD: follow the command, whose pid (in profile's namespace) is cmd_pid. */
const volatile bool follow = false;
const volatile __u32 cmd_pid = 0;
const volatile __u32 stack_bytes = MAX_STACK_DEPTH * sizeof(__u64);

/*
 * Two sets of count, stack and spill maps.  The program counts into the set
 * that active_set selects; for -i, user space flips it, waits for programs
 * still running on the old set, drains and empties that set, while sampling
 * goes on in the other.  No sample is counted twice or lost at the boundary,
 * and stack ids stay valid for as long as the counts that refer to them.
 */
__u32 active_set = 0;

struct stack_map {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, DEFAULT_STACK_STORAGE);
};

/*
 * Every user stack is stored here by content.  Preallocated: zeroing its
 * 34 MiB is most of what the maps cost at the start (about 10 ms of CPU),
 * but the kernel's BPF allocator keeps one element of this size per CPU
 * until its first refill, so a CPU's first sample that stores two stacks
 * (its user and Python parts) lost one (bench/results/
 * issue31-performance.md, round 12).
 */
struct spill_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct hashed_stack);
	__uint(max_entries, DEFAULT_STACK_STORAGE);
};

/*
 * Preallocated, as the store is.  Allocated at insert time
 * (BPF_F_NO_PREALLOC), a sample cost about 9% more BPF time beside
 * manystacks, with or without -i, for a start saving within the noise
 * (bench/results/issue31-performance.md, round 13).
 */
struct count_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct count_key);
	__type(value, __u64);
	__uint(max_entries, DEFAULT_HASH_STORAGE);
};

/* uid -> its entries in the set's count and spill maps (bpf/profile.h). */
struct users_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct share_held);
	__uint(max_entries, SHARE_USERS);
};

struct stack_map stacks0 SEC(".maps"), stacks1 SEC(".maps");
struct spill_map spilled0 SEC(".maps"), spilled1 SEC(".maps");
struct count_map counts0 SEC(".maps"), counts1 SEC(".maps");
struct users_map users0 SEC(".maps"), users1 SEC(".maps");

/*
 * Each kind of the sets' maps in an array of two, where select_set()
 * finds the set's by its index.  Named directly, set 0's and set 1's maps
 * were two map pointers, and the verifier walked every path after the
 * choice twice, once with each.  A map found in an array of maps is one
 * pointer, whichever slot it came from.  An array's template (its inner
 * map) has the sets' map type, flags, key and value (the kernel compares
 * them), but one entry: a hash map's size is not part of its type, and the
 * template is created only to make the array.  The loader makes the stack
 * maps' template itself, of their value size (load_skel() in session.c).
 */
/* Declared after the maps they hold: libbpf fills a slot with a map it made before. */
#define SET_OF(name, inner_type, inner_flags, inner_key, inner_value, set0, set1)	\
struct {								\
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);			\
	__uint(max_entries, 2);						\
	__type(key, __u32);						\
	__array(values, struct {					\
		__uint(type, inner_type);				\
		__uint(map_flags, inner_flags);				\
		inner_key;						\
		inner_value;						\
		__uint(max_entries, 1);					\
	});								\
} name SEC(".maps") = { .values = { (void *)&set0, (void *)&set1 } }

SET_OF(set_stacks, BPF_MAP_TYPE_STACK_TRACE, 0, __uint(key_size, sizeof(__u32)),
       __uint(value_size, MAX_STACK_DEPTH * sizeof(__u64)), stacks0, stacks1);
SET_OF(set_spilled, BPF_MAP_TYPE_HASH, 0, __type(key, __u64),
       __type(value, struct hashed_stack), spilled0, spilled1);
SET_OF(set_counts, BPF_MAP_TYPE_HASH, 0, __type(key, struct count_key),
       __type(value, __u64), counts0, counts1);
SET_OF(set_users, BPF_MAP_TYPE_HASH, 0, __type(key, __u32),
       __type(value, struct share_held), users0, users1);

/*
 * Each set's entries in its count and spill maps, and the users holding
 * some (enum share_map): user space zeroes a set's, and empties its users
 * map, when it empties the set.  share_cap: each map's capacity.
 */
__u64 share_total[2][NR_SHARE_MAPS];
__u64 share_holders[2][NR_SHARE_MAPS];
/*
 * Each set's one record for the users that found its users map full
 * (SHARE_USERS): together they are judged as one user, never refused
 * outright for want of a record.
 */
struct share_held share_spare[2];
const volatile __u64 share_cap[NR_SHARE_MAPS] = {};

/*
 * uid -> its new keys and stacks refused over its share, for the whole
 * run: never emptied.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, SHARE_USERS);
} share_refused SEC(".maps");

/*
 * Per CPU: INFLIGHT_SET(the set a running program uses), or INFLIGHT_IDLE.
 * 64-bit, the width of BPF's atomic exchange on every kernel we load on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} inflight SEC(".maps");

#include "shared_maps.bpf.h"

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

/*
 * Side band to user space: the loader opens a perf ring buffer per CPU on
 * this map, for the kernel's mmap/comm/fork/exit records, and we add one
 * record the first time a process is sampled, so that its mappings can be
 * read while it still lives.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* pid -> the low 32 bits of the start time of the process noted under it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 16384);
} seen SEC(".maps");

/*
 * Per CPU: the process this CPU noted last, pid and start as one word, to
 * skip most `seen` lookups.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} last_noted SEC(".maps");

/*
 * Where the start time of the current process is: task_struct.group_leader
 * and task_struct.start_time, from the kernel's BTF (src/loader/kbtf.c).
 * 0: not known, every process starts at 0.
 */
const volatile __u32 off_group_leader = 0;
const volatile __u32 off_start_time = 0;

static __always_inline __u64 process_start(void)
{
	void *task = (void *)bpf_get_current_task(), *leader = NULL;
	__u64 start = 0;

	if (!off_start_time ||
	    bpf_probe_read_kernel(&leader, sizeof(leader), task + off_group_leader) || !leader ||
	    bpf_probe_read_kernel(&start, sizeof(start), leader + off_start_time))
		return 0;
	return start;
}

/*
 * A pid is noted again when another process has it now (a reused pid):
 * seen holds the start of the one noted.
 */
static __always_inline void note_process(void *ctx, __u32 pid, __u64 start, __u64 *cnt)
{
	struct process_note note = { .hdr = { .type = NOTE_PROCESS, .pid = pid },
				     .start = start };
	__u64 id = ((__u64)pid << 32) | (__u32)start, *last;
	__u32 zero = 0, start32 = start, *was;

	if (!notify_new)
		return;
	last = bpf_map_lookup_elem(&last_noted, &zero);
	if (!last || *last == id)
		return;
	*last = id;
	was = bpf_map_lookup_elem(&seen, &pid);
	if (was && *was == start32)
		return;
	bpf_map_update_elem(&seen, &pid, &start32, BPF_ANY);
	if (!bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &note, sizeof(note))) {
		cnt[CNT_NOTES]++;
		return;
	}
	/* The ring was full: note it again with its next new stack. */
	cnt[CNT_NOTE_ERR]++;
	bpf_map_delete_elem(&seen, &pid);
	*last = 0;
}

/*
 * A process noted before has exec'd (uw_exec): user space looks at the new
 * image for an interpreter now, after the exec dropped the old one's entry.
 * The comm record comes earlier in the exec, before the new image is
 * mapped: what user space found then would be dropped here.  The note is a
 * sample, so it wakes the side band's reader at once.  Sent for a process
 * noted before, or whose interpreter was found without a sample (a
 * libpython's mmap record): any other is looked at with its first sample.
 */
static __always_inline void note_exec(void *ctx, __u32 pid, bool had_interp)
{
	struct process_note note = { .hdr = { .type = NOTE_EXEC, .pid = pid } };
	struct counters *stat;
	__u32 zero = 0;

	if (!notify_new || !exec_notes)
		return;
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (!stat || (!had_interp && !bpf_map_lookup_elem(&seen, &pid)))
		return;
	note.start = process_start();
	if (!bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &note, sizeof(note)))
		stat->c[CNT_NOTES]++;
	else
		stat->c[CNT_NOTE_ERR]++;
}

static __always_inline bool in_set(void *map, __u32 id)
{
	return bpf_map_lookup_elem(map, &id) != NULL;
}

/*
 * profile -- CMD: the threads of followed processes that have begun their
 * exit, and those processes' group leaders (follow_exit()).  The last
 * thread's exit takes the process out of follow_set, so that a process
 * that gets its pid later is not profiled; the rest of every thread's exit
 * (unmapping the memory, closing the files) is still the command's time,
 * and is profiled through the thread's mark, gone with it.  The sampler
 * looks only at the current thread's: a thread near the end of its exit
 * may have outlived its leader's task.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u8);
} follow_exits SEC(".maps");

static __always_inline bool followed(void)
{
	return in_set(&follow_set, bpf_get_current_pid_tgid() >> 32) ||
	       bpf_task_storage_get(&follow_exits, bpf_get_current_task_btf(), NULL, 0);
}

/*
 * The mount namespace's inode number: task->nsproxy->mnt_ns->ns.inum.  The
 * loader finds the offsets in the kernel's BTF only when --mntnsmap asks
 * for them, so that no other run pays for parsing vmlinux BTF (11 MiB of
 * the loader's peak memory) just for this chain.
 */
const volatile __u32 off_nsproxy = 0;
const volatile __u32 off_mnt_ns = 0;
const volatile __u32 off_ns_inum = 0;

static __always_inline bool in_mntns_set(void)
{
	void *task = (void *)bpf_get_current_task();
	void *nsproxy = NULL, *mnt_ns = NULL;
	__u32 inum = 0;
	__u64 key;

	if (bpf_probe_read_kernel(&nsproxy, sizeof(nsproxy), task + off_nsproxy) || !nsproxy ||
	    bpf_probe_read_kernel(&mnt_ns, sizeof(mnt_ns), nsproxy + off_mnt_ns) || !mnt_ns ||
	    bpf_probe_read_kernel(&inum, sizeof(inum), mnt_ns + off_ns_inum))
		return false;
	key = inum;
	return bpf_map_lookup_elem(&mntnsmap, &key) != NULL;
}

static __always_inline bool wanted(__u32 *pid, __u32 *tid)
{
	if (!include_idle && (__u32)bpf_get_current_pid_tgid() == 0)
		return false;
	if (!current_ids(pid, tid))
		return false;
	if (filter_pids && !in_set(&pid_set, *pid))
		return false;
	if (filter_tids && !in_set(&tid_set, *tid))
		return false;
	if (follow && !followed())
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_set, 0) != 1)
		return false;
	if (filter_cgroupmap) {
		__u64 cgid = bpf_get_current_cgroup_id();

		if (!bpf_map_lookup_elem(&cgroupmap, &cgid))
			return false;
	}
	if (filter_mntns && !in_mntns_set())
		return false;
	return true;
}

/* A task whose blocks are timed: wanted, and not the profiler (self_tgid). */
static __always_inline bool wanted_blocks(__u32 *pid, __u32 *tid)
{
	return wanted(pid, tid) && *pid != self_tgid;
}

/*
 * The spill map's hash key (bpf/profile.h, spill_hash_frame): random for
 * each run, set by the loader and never printed.
 */
const volatile __u64 spill_key[SPILL_KEY_WORDS] = {};

/*
 * The stack hash and the frame comparison, one frame per bpf_loop() step.
 * A plain bounded loop is verified once per iteration and per call site:
 * 127 frames made it most of the 15,000 instructions the verifier walked
 * (13 ms of every start).
 */
struct hash_ctx {
	const struct hashed_stack *st;
	__u64 key[SPILL_KEY_WORDS];
	__u64 h;
};

static long hash_frame(__u64 i, void *data)
{
	struct hash_ctx *hc = data;

	if (i >= MAX_STACK_DEPTH || i >= hc->st->nr)
		return 1;
	hc->h = spill_hash_frame(hc->key, hc->h, hc->st->ips[i]);
	return 0;
}

/* The frames' hash, before spill_hash_final(). */
static __always_inline __u64 hash_frames(const struct hashed_stack *st)
{
	struct hash_ctx hc = { .st = st, .key = { spill_key[0], spill_key[1] } };

	hc.h = spill_hash_init(hc.key);
	bpf_loop(MAX_STACK_DEPTH, hash_frame, &hc, 0);
	return hc.h;
}

struct cmp_ctx {
	const struct hashed_stack *a, *b;
	bool differ;
};

static long cmp_frame(__u64 i, void *data)
{
	struct cmp_ctx *cc = data;

	if (i >= MAX_STACK_DEPTH || i >= cc->a->nr)
		return 1;
	if (cc->a->ips[i] != cc->b->ips[i]) {
		cc->differ = true;
		return 1;
	}
	return 0;
}

/* Is the stored stack the same as st?  (Equal hashes prove nothing.) */
static __always_inline bool same_stack(const struct hashed_stack *stored,
				       const struct hashed_stack *st)
{
	struct cmp_ctx cc = { .a = st, .b = stored };

	if (stored->nr != st->nr || stored->end != st->end)
		return false;
	bpf_loop(MAX_STACK_DEPTH, cmp_frame, &cc, 0);
	return !cc.differ;
}

/* One set's maps, as select_set() found them, and which set they are. */
struct map_set {
	void *counts;
	void *stacks;
	void *spilled;
	void *users;
	__u32 set;			/* which: 0 or 1 */
};

/*
 * The set's share counts, found from ms->set at each use.  ms->set is a
 * 32-bit value on the stack, whose bounds 6.1's verifier loses when it is
 * read back: the index is masked again where each address is made, in an
 * asm, as the compiler would drop a mask it can prove useless.  Kept in
 * struct map_set, the three pointers put the off-CPU kprobe's chain of
 * calls over its 512 bytes of stack on 6.1.
 */
static __always_inline __u32 set_index(const struct map_set *ms)
{
	__u64 i = ms->set;

	asm volatile("%0 &= 1" : "+r"(i));
	return i;
}

#define set_total(ms) share_total[set_index(ms)]
#define set_holders(ms) share_holders[set_index(ms)]
#define set_spare(ms) (&share_spare[set_index(ms)])

/*
 * May the current user add an entry to map m of the set (enum share_map)?
 * Its record, for share_add() once the entry is stored; NULL: over its
 * share.  Called on the new-entry path only.  Racing CPUs may overshoot a
 * share by an entry each: the rule is a bound, not an exact count.
 */
static __always_inline struct share_held *share_take(const struct map_set *ms, int m)
{
	__u32 uid = (__u32)bpf_get_current_uid_gid();
	struct share_held *u, none = {};
	__u64 cap = share_cap[m], fair;

	u = bpf_map_lookup_elem(ms->users, &uid);
	if (!u) {
		bpf_map_update_elem(ms->users, &uid, &none, BPF_NOEXIST);
		u = bpf_map_lookup_elem(ms->users, &uid);
		if (!u)
			u = set_spare(ms);
	}
	fair = cap / (READ_ONCE(set_holders(ms)[m]) + 1);
	if (READ_ONCE(u->n[m]) < fair ||
	    READ_ONCE(set_total(ms)[m]) + 1 + cap / SHARE_RESERVE <= cap)
		return u;
	return NULL;
}

/* The entry share_take() allowed is stored: count it against its user. */
static __always_inline void share_add(const struct map_set *ms, struct share_held *u, int m)
{
	if (!__sync_fetch_and_add(&u->n[m], 1))
		__sync_fetch_and_add(&set_holders(ms)[m], 1);
	__sync_fetch_and_add(&set_total(ms)[m], 1);
}

/*
 * A new key or stack over its user's share: count whose, for the warning,
 * when another user holds entries too.  A lone user's refusals took room
 * from no one: the full map's warning says enough.
 */
static __always_inline void share_refuse(const struct map_set *ms, int m)
{
	__u32 uid = (__u32)bpf_get_current_uid_gid();
	__u64 one = 1, *n;

	if (READ_ONCE(set_holders(ms)[m]) < 2)
		return;
	n = bpf_map_lookup_elem(&share_refused, &uid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&share_refused, &uid, &one, BPF_NOEXIST);
}

/*
 * A stack is stored under its hash only if no other stack is: on a hit the
 * frames are compared, and a different stack with the same hash is counted
 * and reported as missed (-EEXIST), like one that found the map full.
 */
static __always_inline void refer_stored(const struct hashed_stack *stored,
					 const struct hashed_stack *st,
					 struct stack_ref *ref, __u64 h, __u64 *cnt)
{
	if (!same_stack(stored, st)) {
		cnt[CNT_SPILL_COLLISION]++;
		ref->src = STACK_MISSED;
		ref->err = -EEXIST;
		return;
	}
	ref->src = STACK_HASHED;
	ref->id = h;
}

/*
 * Store st (in a per-CPU scratch value) by content and refer to it.
 * Returns true when it was stored just now, for the first time: then no
 * count key can refer to it yet.
 */
static __always_inline bool store_hashed(const struct map_set *ms,
					 const struct hashed_stack *st, __u64 hframes,
					 struct stack_ref *ref, __u64 flags, __u64 *cnt)
{
	__u64 h = spill_hash_final(hframes, st->nr, SPILL_FLAGS_END(flags, st->end));
	struct hashed_stack *stored;
	struct share_held *u;
	long err;

	/* A stack seen once is seen again: most are stored already. */
	stored = bpf_map_lookup_elem(ms->spilled, &h);
	if (stored) {
		refer_stored(stored, st, ref, h, cnt);
		return false;
	}
	/* Over the user's share: missed, as if the map were full. */
	u = share_take(ms, SHARE_STACKS);
	if (!u) {
		share_refuse(ms, SHARE_STACKS);
		cnt[CNT_SHARE_STACKS]++;
		goto full;
	}
	err = bpf_map_update_elem(ms->spilled, &h, st, BPF_NOEXIST);
	if (!err) {
		share_add(ms, u, SHARE_STACKS);
		cnt[CNT_SPILLED]++;
		ref->src = STACK_HASHED;
		ref->id = h;
		return true;
	}
	/* Another CPU stored a stack under h just now: compare with it. */
	stored = err == -EEXIST ? bpf_map_lookup_elem(ms->spilled, &h) : NULL;
	if (stored) {
		refer_stored(stored, st, ref, h, cnt);
		return false;
	}
	/* No room left anywhere: report it as bcc reports -ENOMEM. */
full:
	cnt[CNT_SPILL_FULL]++;
	ref->src = STACK_MISSED;
	ref->err = -ENOMEM;
	return false;
}

/* The same for a stack whose frames are not hashed yet. */
static __always_inline bool store_stack(const struct map_set *ms,
					const struct hashed_stack *st,
					struct stack_ref *ref, __u64 flags, __u64 *cnt)
{
	return store_hashed(ms, st, hash_frames(st), ref, flags, cnt);
}

/*
 * The kernel's frame-pointer walk (bpf_get_stack()) into the per-CPU
 * scratch stack; NULL with ref->err set when it failed.
 */
static __always_inline struct hashed_stack *fp_walk(void *ctx, struct stack_ref *ref,
						    __u64 flags)
{
	struct hashed_stack *st;
	__u32 zero = 0;
	long len;

	st = bpf_map_lookup_elem(&scratch, &zero);
	if (!st) {
		ref->err = -ENOMEM;
		return NULL;
	}
	len = bpf_get_stack(ctx, st->ips, stack_bytes, flags);
	if (len <= 0) {
		ref->err = len ? len : -EFAULT;
		return NULL;
	}
	st->nr = len / sizeof(__u64);
	st->end = 0;
	return st;
}

/* A kernel stack whose STACK_TRACE bucket was taken: store it by content. */
static __always_inline bool spill(void *ctx, const struct map_set *ms,
				  struct stack_ref *ref, __u64 flags, __u64 *cnt)
{
	struct hashed_stack *st = fp_walk(ctx, ref, flags);

	if (!st) {
		cnt[CNT_SPILL_ERR]++;
		return false;
	}
	return store_stack(ms, st, ref, flags, cnt);
}

/*
 * Fill in the reference to the kernel stack.  Returns true when the stack
 * was spilled just now, for the first time: then no count key can refer to
 * it yet.
 */
static __always_inline bool get_kernel_stack(void *ctx, const struct map_set *ms,
					     struct stack_ref *ref, __u64 skip, __u64 *cnt)
{
	const int part = PART_KERNEL;
	__u64 flags = skip & BPF_F_SKIP_FIELD_MASK;
	long id = bpf_get_stackid(ctx, ms->stacks, flags);

	ref->kind = FRAME_KERNEL;
	if (id >= 0) {
		ref->src = STACK_MAP;
		ref->id = id;
		return false;
	}
	ref->src = STACK_MISSED;
	ref->err = id;
	switch (id) {
	case -EFAULT:
		cnt[CNT_STACK_ERR(part, STACK_ERR_EFAULT)]++;
		ref->src = STACK_NONE;
		return false;
	case -EEXIST:
		cnt[CNT_STACK_ERR(part, STACK_ERR_EEXIST)]++;
		break;
	case -ENOMEM:
		cnt[CNT_STACK_ERR(part, STACK_ERR_ENOMEM)]++;
		break;
	default:
		cnt[CNT_STACK_ERR(part, STACK_ERR_OTHER)]++;
		return false;
	}
	return spill(ctx, ms, ref, flags, cnt);
}

/*
 * Count one sample; fresh says that one of its stacks was stored just now,
 * so the key cannot exist yet.  Returns true when the key is new, which is how a
 * process's first sample is recognised cheaply.  (A per-CPU hash avoids the
 * atomic, but measured no faster here and costs 30 ms of set-up and a
 * value per CPU in every drain.)
 */
static __always_inline bool count(const struct map_set *ms, struct count_key *key,
				  bool fresh, __u64 weight, int full_cnt, __u64 *cnt)
{
	void *counts = ms->counts;
	struct share_held *u;
	__u64 *val;
	long err;

	/* A stack stored just now is in no key yet: skip the lookup. */
	if (!fresh) {
		val = bpf_map_lookup_elem(counts, key);
		if (val) {
			__sync_fetch_and_add(val, weight);
			return false;
		}
	}
	/* Over the user's share: lost, as if the map were full. */
	u = share_take(ms, SHARE_KEYS);
	if (!u) {
		share_refuse(ms, SHARE_KEYS);
		cnt[CNT_SHARE_KEYS]++;
		goto full;
	}
	err = bpf_map_update_elem(counts, key, &weight, BPF_NOEXIST);
	if (!err) {
		share_add(ms, u, SHARE_KEYS);
		return true;
	}
	if (err == -EEXIST) {
		/* Another CPU inserted the same key first. */
		val = bpf_map_lookup_elem(counts, key);
		if (val) {
			__sync_fetch_and_add(val, weight);
			return false;
		}
	}
full:
	cnt[full_cnt]++;
	return false;
}

/*
 * The maps of set 0 or 1, from the arrays of maps; false when one is
 * missing (never, once loaded): then nothing is counted.  The share
 * counts are found from ms->set where they are used (set_index()).
 */
static __always_inline bool select_set(struct map_set *ms, __u32 set)
{
	ms->set = set & 1;
	/* Kept only once checked: every later use is of a map. */
	if (!(ms->counts = bpf_map_lookup_elem(&set_counts, &ms->set)) ||
	    !(ms->stacks = bpf_map_lookup_elem(&set_stacks, &ms->set)) ||
	    !(ms->spilled = bpf_map_lookup_elem(&set_spilled, &ms->set)) ||
	    !(ms->users = bpf_map_lookup_elem(&set_users, &ms->set)))
		return false;
	return true;
}

/*
 * Was the CPU in user mode when the timer fired?  Then there is no kernel
 * stack, and asking for one costs a callchain setup for nothing.  Read
 * from the UAPI register layout at a fixed offset (no CO-RE relocation):
 * in x86's struct pt_regs, cs is the 18th 8-byte word; CPL 3 is user.
 * (The Makefile builds for x86 only.)
 */
static __always_inline bool in_user_mode(void *ctx)
{
	return (((__u64 *)ctx)[17] & 3) == 3;
}

/*
 * How one run of a program counts (sample()): each kind of program fills
 * it in with constants, so that the verifier prunes what it does not use.
 */
struct sample_how {
	__u64 weight;		/* added to the key's count */
	__u32 what;		/* enum count_what */
	/*
	 * ctx is the interrupted pt_regs (perf_event and kprobe programs);
	 * else (a tracepoint's record) the user registers are the task's
	 * saved ones and the kernel stack is always asked for.
	 */
	bool regs_in_ctx;
	/*
	 * Kernel frames to leave out, leaf first: the program's own and its
	 * caller's in a raw tracepoint's or fentry's stack.
	 */
	__u8 kernel_skip;
	/*
	 * Walk interpreters' frames inline (bpf/interp/interp.bpf.h); else
	 * hand the sample over to do_sample_interp, which walks them.
	 */
	bool interp;
};

#include "unwind/unwind.bpf.h"
#include "interp/interp.bpf.h"

/*
 * A process the loader has not listed yet is walked by the unwinder all
 * the same, from a list of this CPU's: a copy of the one made in the
 * kernel for the thread at its exec and each time ld.so has mapped objects
 * (bpf/klist.bpf.c, on kernels that can: 6.7 and later), from its
 * mappings and the tables already loaded for their files (uw_files:
 * libc, ld.so, and the program itself when it ran before), or else an
 * empty one.  A new process's first samples come before the loader's
 * sync (0.2-3 ms after its exec, and again as ld.so maps its libraries),
 * and were walked by frame pointer alone: cut short in code built
 * without.  With no mappings and UWP_MAPS_CUT every step is a
 * frame-pointer step, checked as the unwinder checks it (a chain that
 * goes down or loops ends there, with its reason), where the kernel's
 * walk would follow garbage to the depth limit: a new thread's rbp is its
 * parent's.  The copy keeps the walker's list one map's value or the
 * other's, so that the verifier walks the walk twice, not three times.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct uw_proc);
	__uint(max_entries, 1);
} uw_klists SEC(".maps");

/*
 * Entry i of a list taken: a table gone since the list was made (its
 * slot empty, or another table's) leaves its mapping to frame pointers.
 * A bpf_loop() step: verified once, not once per entry.
 */
static long uw_klist_check(__u64 i, void *data)
{
	struct uw_proc *k = *(struct uw_proc **)data;
	struct uw_map *m;
	__u32 *serial;

	if (!k)
		return 1;
	m = &k->maps[i & (UW_MAX_MAPS - 1)];
	serial = bpf_map_lookup_elem(&uw_slot_serials, &m->table);
	if (!serial || *serial != m->serial)
		m->flags = UWM_FP;
	return 0;
}

static __always_inline struct uw_proc *uw_klist_take(__u64 *cnt)
{
	const struct uw_klist_store *st;
	struct uw_proc *k;
	__u32 zero = 0;

	k = bpf_map_lookup_elem(&uw_klists, &zero);
	if (!k)
		return NULL;
	/* A walk this one interrupted (a nested program) sees it change. */
	k->gen++;
	k->n_maps = 0;
	k->flags = UWP_MAPS_CUT;
	if (!uw_klist_on && !uw_exit_on)
		return k;
	st = bpf_task_storage_get(&uw_klist_store, bpf_get_current_task_btf(), NULL, 0);
	if (!st || !st->n_maps || bpf_ktime_get_ns() - st->made_ns > UW_KLIST_YOUNG_NS)
		return k;
	if (bpf_probe_read_kernel(k->maps, sizeof(st->maps), st->maps))
		return k;
	k->n_maps = st->n_maps < UW_KLIST_MAPS ? st->n_maps : UW_KLIST_MAPS;
	bpf_loop(k->n_maps, uw_klist_check, &k, 0);
	cnt[CNT_UW_KLIST_WALKS]++;
	return k;
}

/*
 * Fill in the reference to the user stack: walked once, from tables when
 * the loader has synced the process (bpf/unwind/unwind.bpf.h), else by
 * frame pointer alone (the unwinder's with no mappings, the kernel's
 * under --unwind=fp), and stored by content either way.  Returns true
 * when the stack was stored just now.
 */
static __always_inline bool get_user_stack(void *ctx, bool regs_in_ctx,
					   const struct map_set *ms, struct stack_ref *ref,
					   __u32 pid, __u64 *cnt, bool memo)
{
	struct uw_proc *proc = NULL;
	struct hashed_stack *st;
	__u64 hframes = 0;
	bool listed = false;

	ref->kind = FRAME_NATIVE;
	if (unwind_tables) {
		proc = bpf_map_lookup_elem(&uw_procs, &pid);
		listed = proc != NULL;
		if (!proc)
			proc = uw_klist_take(cnt);
	}
	if (proc) {
		st = uw_walk(ctx, regs_in_ctx, proc, listed, ref, cnt, memo, &hframes);
		if (st)
			uw_walked(pid, listed);
	} else {
		st = fp_walk(ctx, ref, BPF_F_USER_STACK);
		cnt[CNT_UW_FP_WALKS] += st != NULL;
		if (st)
			hframes = hash_frames(st);
	}
	if (st)
		return store_hashed(ms, st, hframes, ref, BPF_F_USER_STACK, cnt);
	if (ref->err == -EFAULT) {
		/* No user stack at all: a kernel thread. */
		cnt[CNT_STACK_ERR(PART_USER, STACK_ERR_EFAULT)]++;
		ref->src = STACK_NONE;
	} else {
		cnt[CNT_STACK_ERR(PART_USER, STACK_ERR_OTHER)]++;
		ref->src = STACK_MISSED;
	}
	return false;
}

/*
 * Count the sample's key; a process's first sample always makes a new
 * one, which is how it is noted.
 */
static __always_inline void count_sample(void *ctx, const struct map_set *ms,
					 struct count_key *key, __u64 start, bool fresh,
					 __u64 weight, int full_cnt, __u64 *cnt)
{
	if (count(ms, key, fresh, weight, full_cnt, cnt)) {
		cnt[CNT_NEW_KEYS]++;
		note_process(ctx, key->pid, start, cnt);
	}
}

/*
 * Inline, the interpreters' walkers were most of the sampling program's
 * verified instructions (33,368 on 6.18, 14,032 without them), and most
 * hosts run no interpreter when profile starts.  So do_sample has no walker: its
 * sample of a process in interp_procs, every other part read, goes on in
 * do_sample_interp, which walks the interpreter's frames and counts, by
 * tail call through this one slot.  The loader verifies and loads
 * do_sample_interp, and fills the slot, when it first sees an interpreter
 * (src/loader/session.c); until then (or if that load failed) the slot is
 * empty, the tail call falls through, and do_sample counts the sample
 * without interpreter frames (CNT_INTERP_NOT_READY).  The tracepoint and
 * off-CPU programs, opt-in, keep the walker inline.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
} interp_walker SEC(".maps");

/* Per CPU: the sample do_sample hands to do_sample_interp. */
struct interp_pending {
	struct count_key key;
	__u64 start;
	__u32 set;		/* the set do_sample entered (enter()) */
	bool fresh;		/* a stack of it was stored just now */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct interp_pending);
	__uint(max_entries, 1);
} interp_pending SEC(".maps");

/* Is pid a process whose interpreter frames are walked? */
static __always_inline bool interp_process(__u32 pid)
{
	return interp_any() && bpf_map_lookup_elem(&interp_procs, &pid) != NULL;
}

/*
 * Hand the sample over to do_sample_interp, which counts it and leaves
 * the set (-i): returns only when the slot is empty.
 */
static __always_inline void hand_over(void *ctx, const struct map_set *ms,
				      const struct count_key *key, __u64 start, bool fresh)
{
	struct interp_pending *p;
	__u32 zero = 0;

	p = bpf_map_lookup_elem(&interp_pending, &zero);
	if (!p)
		return;
	p->key = *key;
	p->start = start;
	p->set = ms->set;
	p->fresh = fresh;
	bpf_tail_call(ctx, &interp_walker, 0);
}

static __always_inline void sample(void *ctx, const struct map_set *ms, __u64 *cnt,
				   const struct sample_how *how)
{
	bool in_user = how->regs_in_ctx && in_user_mode(ctx);
	/* Off-CPU time has its own account (bpf/profile.h), apart from samples'. */
	bool off = how->what == COUNT_OFF_CPU;
	struct count_key key = {};
	bool fresh = false;
	__u32 pid, tid;
	__u64 start;

	if (!wanted(&pid, &tid)) {
		cnt[off ? CNT_OFF_FILTERED : CNT_FILTERED]++;
		return;
	}
	start = process_start();
	key.pid = pid;
	key.start = start;
	key.what = how->what;
	if (per_thread)
		key.tid = tid;
	if (per_cpu)
		key.cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	if (want_user) {
		/* Off-CPU walks are kept per thread (uw_memo), samples' not. */
		fresh = get_user_stack(ctx, how->regs_in_ctx, ms, &key.parts[PART_USER], pid, cnt,
				       off);
		/* Samples with their registers in ctx are perf events' (do_sample). */
		if (how->interp)
			fresh |= get_interp_stack(ctx, how->what == COUNT_ON_CPU &&
						  how->regs_in_ctx, ms, &key.parts[PART_INTERP],
						  pid, cnt);
		else
			key.parts[PART_INTERP].kind = FRAME_INTERP;
	}
	if (want_kernel && !in_user) {
		fresh |= get_kernel_stack(ctx, ms, &key.parts[PART_KERNEL], how->kernel_skip, cnt);
	} else if (want_kernel) {
		/*
		 * What bpf_get_stackid() would have said, without the call;
		 * counted apart, for this is no error.
		 */
		key.parts[PART_KERNEL].kind = FRAME_KERNEL;
		key.parts[PART_KERNEL].err = -EFAULT;
		cnt[CNT_USER_MODE]++;
	}
	/* Returns only if the walker is not loaded yet: counted without it. */
	if (!how->interp && want_user && interp_process(pid)) {
		hand_over(ctx, ms, &key, start, fresh);
		cnt[CNT_INTERP_NOT_READY]++;
	}
	count_sample(ctx, ms, &key, start, fresh, how->weight,
		     off ? CNT_OFF_HASH_FULL : CNT_HASH_FULL, cnt);
}

/* The off-CPU switch-in is a raw tracepoint's program (see do_sample()). */
const volatile bool off_in_raw_tp = false;

/*
 * The hand-over of -i, as a store-buffering pair.  This program:
 *
 *	xchg(busy, INFLIGHT_UNKNOWN)	fully ordered
 *	set = READ_ONCE(active_set)
 *	busy = INFLIGHT_SET(set)	... counts into set ...
 *	xchg(busy, INFLIGHT_IDLE)	fully ordered
 *
 * and user space (session__flip):
 *
 *	active_set = new; full barrier
 *	read every CPU's busy; wait while one is UNKNOWN or SET(old)
 *
 * With a full barrier between each side's store and its load, one of them
 * sees the other's store: either we read the new set, or user space sees
 * us busy and waits.  BPF's value-returning atomics (BPF_FETCH, of which
 * xchg is one) are fully ordered on every architecture, as the kernel's
 * atomic_xchg() is; a plain store or an atomic add whose result is unused
 * is not (arm64 JITs the add as a relaxed stadd), which is why neither is
 * used here.  The final exchange orders every update the program made to
 * the set before the IDLE that lets user space read it.  Programs on one
 * CPU do not nest (bpf_prog_active), so the flag has one writer per CPU.
 */
static __always_inline __u32 enter(__u64 *busy)
{
	__atomic_exchange_n(busy, INFLIGHT_UNKNOWN, __ATOMIC_SEQ_CST);
	return *(volatile __u32 *)&active_set & 1;
}

static __always_inline void leave(__u64 *busy)
{
	__atomic_exchange_n(busy, INFLIGHT_IDLE, __ATOMIC_SEQ_CST);
}

/* One run's sample, counted into the set active now (the -i protocol above). */
static __always_inline void sample_in_active_set(void *ctx, __u64 *busy, __u64 *cnt,
						 const struct sample_how *how)
{
	struct map_set ms;
	__u32 set;

	set = enter(busy);
	*busy = INFLIGHT_SET(set);
	if (select_set(&ms, set))
		sample(ctx, &ms, cnt, how);
	leave(busy);
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	const struct sample_how how = { .weight = 1, .what = COUNT_ON_CPU, .regs_in_ctx = true };
	struct counters *stat;
	__u32 zero = 0;
	__u64 *busy;

	stat = bpf_map_lookup_elem(&stats, &zero);
	busy = bpf_map_lookup_elem(&inflight, &zero);
	if (!stat || !busy)
		return 0;
	/*
	 * A raw tracepoint's program does not keep perf events' programs off
	 * its CPU as a kprobe's does (bpf_prog_active): this NMI may have
	 * come in the middle of the off-CPU switch-in, whose scratch maps
	 * and set are its own until it leaves.  Counted, not taken.
	 */
	if (off_in_raw_tp && READ_ONCE(*busy) != INFLIGHT_IDLE) {
		stat->c[CNT_OFF_NESTED]++;
		return 0;
	}
	stat->c[CNT_TAKEN]++;
	sample_in_active_set(ctx, busy, stat->c, &how);
	return 0;
}

/*
 * The end of do_sample's sample of an interpreter's process (sample(),
 * hand_over()): its interpreter frames, then its count, in the set
 * do_sample chose, which it leaves.  Loaded on first need only, into
 * interp_walker's slot.
 */
SEC("perf_event")
int do_sample_interp(struct bpf_perf_event_data *ctx)
{
	struct interp_pending *p;
	struct counters *stat;
	struct map_set ms;
	__u32 zero = 0;
	__u64 *busy;

	busy = bpf_map_lookup_elem(&inflight, &zero);
	if (!busy)
		return 0;
	p = bpf_map_lookup_elem(&interp_pending, &zero);
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (p && stat && select_set(&ms, p->set)) {
		p->fresh |= get_interp_stack(ctx, true, &ms, &p->key.parts[PART_INTERP],
					     p->key.pid, stat->c);
		/* do_sample's weight and count map: on-CPU samples. */
		count_sample(ctx, &ms, &p->key, p->start, p->fresh, 1, CNT_HASH_FULL, stat->c);
	}
	leave(busy);
	return 0;
}

/*
 * -e CATEGORY:NAME: the hits of a tracepoint, counted as samples are.  Its
 * one link covers every CPU, so -C is checked here (tp_cpu, -1: all), and
 * -c N counts every Nth hit on each CPU (the 1st, the N+1th, ...).  Loaded
 * only for a tracepoint.
 */
const volatile __s32 tp_cpu = -1;
const volatile __u64 tp_period = 1;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct tp_state);
	__uint(max_entries, 1);
} tp_states SEC(".maps");

SEC("tracepoint")
int do_tracepoint(void *ctx)
{
	const struct sample_how how = { .weight = 1, .what = COUNT_ON_CPU, .regs_in_ctx = false,
					.interp = true };
	struct counters *stat;
	struct tp_state *tp;
	__u32 zero = 0, pid, tid;
	__u64 *busy;

	if (tp_cpu >= 0 && bpf_get_smp_processor_id() != (__u32)tp_cpu)
		return 0;
	tp = bpf_map_lookup_elem(&tp_states, &zero);
	stat = bpf_map_lookup_elem(&stats, &zero);
	busy = bpf_map_lookup_elem(&inflight, &zero);
	if (!tp || !stat || !busy)
		return 0;
	/*
	 * -c N: every Nth hit of the tasks profiled, as perf counts a task's
	 * own events, not of everything on the CPU.  The first hit is taken:
	 * it makes the process known (its tables).
	 */
	tp->hits++;
	if (tp_period > 1) {
		if (!wanted(&pid, &tid)) {
			stat->c[CNT_TAKEN]++;
			stat->c[CNT_FILTERED]++;
			return 0;
		}
		if (tp->left) {
			tp->left--;
			return 0;
		}
		tp->left = tp_period - 1;
	}
	stat->c[CNT_TAKEN]++;
	sample_in_active_set(ctx, busy, stat->c, &how);
	return 0;
}

/*
 * Off-CPU time (--off-cpu, --wall), measured as bcc's offcputime does: the
 * time at a task's switch-out, the difference at its switch-in.  Its
 * stacks are taken at the switch-in, in the task's own context, so that a
 * block outside [off_min_ns, off_max_ns] costs no walk at all.  Both
 * programs load only when asked for (session.c).
 */
const volatile __u64 off_min_ns = 0;
const volatile __u64 off_max_ns = ~0ULL;
const volatile __u32 off_states = OFF_STATE_ALL;	/* enum off_state */
const volatile __s32 off_only_cpu = -1;		/* -C: blocks that began there */
/* task_struct.__state (.state before 5.14), from the kernel's BTF. */
const volatile __u32 off_task_state = 0;
/* off_start's capacity for the users' shares, SHARE_UNBOUNDED for none. */
const volatile __u64 off_share_cap = SHARE_UNBOUNDED;

/* The kernel's task states (include/linux/sched.h), stable since 2.6. */
#define TASK_INTERRUPTIBLE 0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD 0x80

/*
 * A thread's entry stays from its first recorded switch-out to its death
 * (its last switch-out, TASK_DEAD): each block sets ts and its switch-in
 * takes it back to 0, so that neither pays for an insert or a delete.
 */
struct off_block {
	__u64 ts;		/* ktime at the switch-out, ns; 0: not blocked */
	__u32 uid;		/* whose share the entry is held under */
	__u32 pad;
};

/* kernel tid -> its block, if any (OFF_START_SIZE entries). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct off_block);
	__uint(max_entries, 1);
} off_start SEC(".maps");

/*
 * The users' shares of off_start, as share_take() judges the count map's:
 * uid -> entries held, the entries and their holders in all, and one
 * record for the users that found off_users full.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, SHARE_USERS);
} off_users SEC(".maps");

__u64 off_total, off_holders, off_spare;

/* How the current task, prev, left the CPU (enum off_state); 0: it died. */
static __always_inline __u32 off_state(void *prev, bool preempt)
{
	__u32 state = 0;

	if (preempt)
		return OFF_STATE_R;
	bpf_probe_read_kernel(&state, sizeof(state), prev + off_task_state);
	if (state & TASK_DEAD)
		return 0;
	if (!state)
		return OFF_STATE_R;
	if (state & TASK_INTERRUPTIBLE)
		return OFF_STATE_S;
	if (state & TASK_UNINTERRUPTIBLE)
		return OFF_STATE_D;
	return OFF_STATE_OTHER;
}

/* The record of uid's share of off_start, for off_share_take(). */
static __always_inline __u64 *off_user(__u32 uid, bool add)
{
	__u64 zero = 0, *u;

	u = bpf_map_lookup_elem(&off_users, &uid);
	if (!u && add) {
		bpf_map_update_elem(&off_users, &uid, &zero, BPF_NOEXIST);
		u = bpf_map_lookup_elem(&off_users, &uid);
	}
	/* Never deleted: a uid not there now was not there at its insert. */
	return u ? u : &off_spare;
}

/* May uid start one more block in off_start?  Its record, or NULL. */
static __always_inline __u64 *off_share_take(__u32 uid)
{
	__u64 cap = off_share_cap, *u;

	if (cap == SHARE_UNBOUNDED)
		return &off_spare;
	u = off_user(uid, true);
	if (READ_ONCE(*u) < cap / (READ_ONCE(off_holders) + 1) ||
	    READ_ONCE(off_total) + 1 + cap / SHARE_RESERVE <= cap)
		return u;
	return NULL;
}

static __always_inline void off_share_add(__u64 *u)
{
	if (off_share_cap == SHARE_UNBOUNDED)
		return;
	if (!__sync_fetch_and_add(u, 1))
		__sync_fetch_and_add(&off_holders, 1);
	__sync_fetch_and_add(&off_total, 1);
}

static __always_inline void off_share_put(__u32 uid)
{
	__u64 *u;

	if (off_share_cap == SHARE_UNBOUNDED)
		return;
	u = off_user(uid, false);
	if (__sync_fetch_and_add(u, -1) == 1)
		__sync_fetch_and_add(&off_holders, -1);
	__sync_fetch_and_add(&off_total, -1);
}

/* A dying thread's last switch-out: its entry goes. */
static __always_inline void off_forget(__u32 tid)
{
	struct off_block *b = bpf_map_lookup_elem(&off_start, &tid);
	__u32 uid;

	if (!b)
		return;
	uid = b->uid;
	if (!bpf_map_delete_elem(&off_start, &tid))
		off_share_put(uid);
}

/*
 * The current task, prev, leaves the CPU: if wanted, time its block.  A
 * block still open (its switch-in was missed) starts again.
 * TP_PROTO(bool preempt, prev, next, ...).
 */
SEC("raw_tp/sched_switch")
int off_switch_out(__u64 *ctx)
{
	__u32 zero = 0, pid, tid, state, uid = (__u32)bpf_get_current_uid_gid();
	struct off_block *b, nb = { .uid = uid };
	struct counters *stat;
	__u64 *u;

	/* The idle tasks (tid 0, one per CPU) never block. */
	if (!(__u32)bpf_get_current_pid_tgid())
		return 0;
	if (off_only_cpu >= 0 && bpf_get_smp_processor_id() != (__u32)off_only_cpu)
		return 0;
	state = off_state((void *)ctx[1], ctx[0]);
	if (!state) {
		off_forget((__u32)bpf_get_current_pid_tgid());
		return 0;
	}
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (!stat || !wanted_blocks(&pid, &tid))
		return 0;
	if (!(state & off_states)) {
		stat->c[CNT_OFF_STATE]++;
		return 0;
	}
	tid = (__u32)bpf_get_current_pid_tgid();
	nb.ts = bpf_ktime_get_ns();
	b = bpf_map_lookup_elem(&off_start, &tid);
	if (b) {
		if (b->ts)
			stat->c[CNT_OFF_RESTARTED]++;
		b->ts = nb.ts;
		stat->c[CNT_OFF_RECORDED]++;
		return 0;
	}
	u = off_share_take(uid);
	if (!u || bpf_map_update_elem(&off_start, &tid, &nb, BPF_NOEXIST)) {
		stat->c[CNT_OFF_START_FULL]++;
		return 0;
	}
	off_share_add(u);
	stat->c[CNT_OFF_RECORDED]++;
	return 0;
}

/*
 * The current task is back on the CPU: count its block, by its stacks as
 * they are now, in its own context (the kernel stack from here, the user
 * stack from its saved registers).  Counted into the active set as a
 * sample is, under the same in-flight protocol (-i).
 */
static __always_inline void off_switch_in(void *ctx, bool regs_in_ctx, __u8 kernel_skip)
{
	struct sample_how how = { .what = COUNT_OFF_CPU, .regs_in_ctx = regs_in_ctx,
				  .kernel_skip = kernel_skip, .interp = true };
	__u32 zero = 0, pid, tid = (__u32)bpf_get_current_pid_tgid();
	struct counters *stat;
	struct off_block *b;
	__u64 *busy, ts;

	stat = bpf_map_lookup_elem(&stats, &zero);
	busy = bpf_map_lookup_elem(&inflight, &zero);
	if (!stat || !busy)
		return;
	b = bpf_map_lookup_elem(&off_start, &tid);
	if (!b || !b->ts) {
		/* Never recorded (idle, unwanted, the profiler's own): not a miss. */
		if (tid && wanted_blocks(&pid, &tid))
			stat->c[CNT_OFF_NO_START]++;
		return;
	}
	/* Only the task itself switches out or in: no other writer. */
	ts = b->ts;
	b->ts = 0;
	stat->c[CNT_OFF_BLOCKS]++;
	how.weight = bpf_ktime_get_ns() - ts;
	if (how.weight < off_min_ns) {
		stat->c[CNT_OFF_SHORT]++;
		return;
	}
	if (how.weight > off_max_ns) {
		stat->c[CNT_OFF_LONG]++;
		return;
	}
	sample_in_active_set(ctx, busy, stat->c, &how);
}

/*
 * The switch-in, at the start of finish_task_switch(): by a kprobe (its
 * context is the kernel's registers there), or by fentry (a trampoline;
 * its context is the arguments).  The loader loads one of these three,
 * and attaches the kprobe by the name the kernel gave the function
 * (finish_task_switch.isra.0).
 */
SEC("kprobe/finish_task_switch")
int off_switch_in_kprobe(struct pt_regs *ctx)
{
	off_switch_in(ctx, true, 0);
	return 0;
}

SEC("fentry/finish_task_switch")
int off_switch_in_fentry(__u64 *ctx)
{
	/* bpf_prog_..., bpf_trampoline_...: not the task's. */
	off_switch_in(ctx, false, 2);
	return 0;
}

/*
 * Or, where the kernel has it (6.16 on), the end of __schedule(), which
 * runs as the task switched in: the cheapest of the three, and the only
 * one in a kernel without kprobes that refuses fentry programs.
 */
SEC("raw_tp/sched_exit_tp")
int off_switch_in_tp(__u64 *ctx)
{
	/* TP_PROTO(bool is_switch): a __schedule() that kept prev switched nothing. */
	if (!(__u8)ctx[0])
		return 0;
	/* bpf_prog_..., bpf_trace_run1: not the task's. */
	off_switch_in(ctx, false, 2);
	return 0;
}

/*
 * Where a thread group's count of live threads is (task_struct.signal,
 * signal_struct.live), from the kernel's BTF; 0: not known.
 */
const volatile __u32 off_signal = 0;
const volatile __u32 off_live = 0;

/*
 * How many threads of the current one's group live on (-1: unreadable)?
 * At the exit tracepoint the exiting thread is counted out already.  A
 * leader that exits while they do is not its process's end: a thread
 * that execs makes the old leader exit (de_thread), and a main thread may
 * pthread_exit().
 */
static __always_inline int group_live(void)
{
	void *task = (void *)bpf_get_current_task(), *signal = NULL;
	int live = 0;

	if (bpf_probe_read_kernel(&signal, sizeof(signal), task + off_signal) || !signal ||
	    bpf_probe_read_kernel(&live, sizeof(live), signal + off_live))
		return -1;
	return live;
}

/*
 * A process that execs or exits loses its mapping list (and interpreter
 * entry) at once, so that no sample of the new image is walked with the
 * old one's tables; the loader learns of it from the side band and syncs
 * the new image, and checks the process's uw_execs value around each sync
 * and each look for an interpreter (a list or entry read before an exec
 * and written after it would otherwise stay).  The value changes first:
 * an entry written after the deletes below, but read back before the
 * change, would be missed.
 */
SEC("raw_tp/sched_process_exec")
int uw_exec(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	bool had_interp;
	__u32 pid, tid;

	if (!current_ids(&pid, &tid))
		return 0;
	bpf_map_update_elem(&uw_execs, &pid, &now, BPF_ANY);
	bpf_map_delete_elem(&uw_procs, &pid);
	bpf_map_delete_elem(&uw_asked, &pid);
	had_interp = interp_forget(pid);
	/* The new image and ld.so are mapped: its list may be in before its first sample. */
	if (unwind_tables && wanted(&pid, &tid))
		uw_ask(pid);
	note_exec(ctx, pid, had_interp);
	return 0;
}

/*
 * uw_exit_keep()'s copy of the loader's list, made here first so that a
 * copy that fails leaves the thread's list as it was.  Per CPU: the exit
 * program runs in the task's context, never nested on its CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct uw_klist_store);
	__uint(max_entries, 1);
} uw_exit_lists SEC(".maps");

/*
 * The last thread of pid exits: what its samples in the rest of its exit
 * are walked from, kept while it is there.  The exit unmaps the process's
 * memory next, and this program deletes the loader's list (uw_exit()):
 * those samples (most of a short process's last ones) were cut at the
 * leaf.  Its stack's slice (uw_exit_slices) and a list of its own: the
 * loader's copied, or its kernel list while young, made young again for
 * the exit.  Both in the thread's storage, freed with it.  The process's
 * memory goes with its last user: most often this thread, though another
 * thread still in its exit may be the one (its samples are cut, as
 * before).
 */
static __always_inline void uw_exit_keep(__u32 pid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct uw_klist_store *st, *tmp = NULL;
	const struct uw_proc *proc;
	struct uw_exit_slice *x;
	struct counters *stat;
	__u64 sp = 0, cs = 0, word;
	__u32 zero = 0;
	void *regs;

	proc = bpf_map_lookup_elem(&uw_procs, &pid);
	st = proc ? NULL : bpf_task_storage_get(&uw_klist_store, task, NULL, 0);
	if (!proc && (!st || bpf_ktime_get_ns() - st->made_ns > UW_KLIST_YOUNG_NS))
		return;
	regs = (void *)bpf_task_pt_regs(task);
	if (!regs || bpf_probe_read_kernel(&cs, sizeof(cs), regs + REG_CS * 8) || (cs & 3) != 3 ||
	    bpf_probe_read_kernel(&sp, sizeof(sp), regs + REG_SP * 8) ||
	    bpf_probe_read_user(&word, sizeof(word), (void *)sp))
		return;
	x = bpf_task_storage_get(&uw_exit_slices, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!x)
		return;
	x->sp = sp;
	x->len = uw_read_slice(x->words, sp);
	if (!x->len)
		return;
	/* Copied aside first: a failed copy leaves a young list as it was. */
	if (proc) {
		tmp = bpf_map_lookup_elem(&uw_exit_lists, &zero);
		if (!tmp || !uw_list_copy(proc, tmp))
			return;
		st = bpf_task_storage_get(&uw_klist_store, task, NULL,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st)
			return;
		for (__u32 i = 0; i < UW_KLIST_MAPS; i++)
			st->maps[i] = tmp->maps[i];
		st->n_maps = tmp->n_maps;
		st->seen = tmp->seen;
	}
	if (!st)
		return;
	st->made_ns = bpf_ktime_get_ns();
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (stat)
		stat->c[CNT_UW_EXIT_KEPT]++;
}

/*
 * Also forget that the process was noted: a new process that gets its pid
 * must be noted, and synced, in its turn.  The process ends with its last
 * thread (with off_live known; else with its leader, as before).
 */
SEC("raw_tp/sched_process_exit")
int uw_exit(void *ctx)
{
	__u32 gtid = (__u32)bpf_get_current_pid_tgid();
	__u32 pid, tid;

	/* Every thread: what interpreters' walkers keep of it goes too. */
	interp_thread_exit(gtid);
	/* An unreadable count ends the process: its entries must not outlive it. */
	if (!current_ids(&pid, &tid) || (off_live ? group_live() > 0 : pid != tid))
		return 0;
	if (uw_exit_on)
		uw_exit_keep(pid);
	bpf_map_delete_elem(&uw_procs, &pid);
	interp_forget(pid);
	bpf_map_delete_elem(&uw_execs, &pid);
	bpf_map_delete_elem(&uw_asked, &pid);
	bpf_map_delete_elem(&seen, &pid);
	return 0;
}

/*
 * profile -- CMD.  Where these task fields are, from the kernel's BTF when
 * a command is followed (src/loader/kbtf.c), so that no other run parses it.
 */
const volatile __u32 off_tgid = 0;		/* task_struct.tgid */

static __always_inline void follow_add(__u32 tgid)
{
	struct counters *stat;
	__u32 zero = 0;
	__u8 one = 1;
	long err;

	err = bpf_map_update_elem(&follow_set, &tgid, &one, BPF_ANY);
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (stat)
		__sync_fetch_and_add(&stat->c[err ? CNT_FOLLOW_FULL : CNT_FOLLOWED], 1);
}

/*
 * The command itself, once its exec has replaced profile's copy: from
 * here on every instruction of it is sampled, and none of the fork's
 * copy of profile before it.
 */
SEC("raw_tp/sched_process_exec")
int follow_exec(void *ctx)
{
	__u32 pid, tid, tgid = bpf_get_current_pid_tgid() >> 32;

	if (!current_ids(&pid, &tid) || pid != cmd_pid || in_set(&follow_set, tgid))
		return 0;
	follow_add(tgid);
	return 0;
}

/*
 * A followed process forked: follow the child if it is a new process (a
 * new thread shares its tgid, followed already).  Runs in the parent.
 */
SEC("raw_tp/sched_process_fork")
int follow_fork(__u64 *ctx)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32;
	void *child = (void *)ctx[1];	/* TP_PROTO(parent, child) */
	__s32 tgid = 0;

	if (!in_set(&follow_set, parent))
		return 0;
	if (bpf_probe_read_kernel(&tgid, sizeof(tgid), child + off_tgid) ||
	    tgid <= 0 || (__u32)tgid == parent)
		return 0;
	follow_add(tgid);
	return 0;
}

/*
 * The current thread's group leader, a pointer the verifier knows as a
 * task: loaded at off_group_leader (kernel BTF, parsed by the loader)
 * rather than through a field relocation, which would have libbpf parse
 * the kernel's BTF at every start (7 ms of CPU here).  Only at the exit
 * tracepoint: the thread is not released yet, so neither is its leader.
 */
static __always_inline struct task_struct *current_leader(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return *(struct task_struct **)((void *)task + off_group_leader);
}

static __always_inline bool follow_mark(struct task_struct *task)
{
	return bpf_task_storage_get(&follow_exits, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/*
 * A thread of a followed process begins its exit: marked, so that the
 * rest of its exit is profiled (follow_exits), and its leader too.  The
 * last one (signal_struct.live has dropped to 0 before this tracepoint)
 * forgets the process, so that a process that gets its pid later is not
 * profiled.  A thread that dropped the count earlier may come here after
 * that: its leader's mark says its process was followed.
 */
SEC("raw_tp/sched_process_exit")
int follow_exit(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *leader = current_leader();
	bool listed = in_set(&follow_set, tgid);
	struct counters *stat;
	__u32 zero = 0;

	if (!listed && !bpf_task_storage_get(&follow_exits, leader, NULL, 0))
		return 0;
	if (!follow_mark(bpf_get_current_task_btf()) || (listed && !follow_mark(leader))) {
		stat = bpf_map_lookup_elem(&stats, &zero);
		if (stat)
			__sync_fetch_and_add(&stat->c[CNT_FOLLOW_EXIT_LOST], 1);
	}
	/* An unreadable count keeps it: a command is never dropped early. */
	if (!listed || group_live() != 0)
		return 0;
	bpf_map_delete_elem(&follow_set, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
