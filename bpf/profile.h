/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The contract between bpf/profile.bpf.c and user space.  Fixed-width types
 * only: this header is compiled by clang for BPF and by cc for the loader.
 */
#ifndef PROFILE_H
#define PROFILE_H

#define TASK_COMM_LEN 16

/*
 * Deepest stack the BPF side can store.  It is also the kernel's default
 * kernel.perf_event_max_stack; the spill buffer is sized by it.
 */
#define MAX_STACK_DEPTH 127

/*
 * Where a stack lives.  A count key refers to a user and a kernel stack by
 * (src, id): the kernel's STACK_TRACE map hands out small ids, and a stack
 * that could not go there (its bucket held a different stack, -EEXIST) is
 * spilled into a hash map keyed by a 64-bit hash of its frames.  Stacks that
 * bpf_get_stackid() did not produce at all (a future in-kernel .eh_frame
 * unwinder) are stored the same way as spilled ones.
 */
enum stack_src {
	STACK_NONE = 0,		/* no such stack (-EFAULT): print nothing */
	STACK_MAP = 1,		/* id is a STACK_TRACE map id */
	STACK_HASHED = 2,	/* id is a key of the spill map */
	STACK_MISSED = 3,	/* lost: err holds the negative errno */
};

struct stack_ref {
	__u32 src;		/* enum stack_src */
	__s32 err;		/* errno of the failure, 0 when stored */
	__u64 id;
};

/*
 * What the count map is keyed by.  tid and cpu are only filled in when a
 * breakdown asks for them; otherwise they are zero so that samples merge.
 */
struct count_key {
	__u32 pid;		/* tgid, as seen from the profiler's PID namespace */
	__u32 tid;
	__u32 cpu;
	__u32 flags;		/* reserved, zero */
	struct stack_ref user;
	struct stack_ref kern;
	char comm[TASK_COMM_LEN];
};

/* A stack stored by content, in the spill map. */
struct hashed_stack {
	__u64 nr;			/* frames used in ips[] */
	__u64 ips[MAX_STACK_DEPTH];
};

/*
 * Per-CPU event counters.  They add up:
 *   taken = filtered + hash_full + counted
 * where counted is the sum of all counts in the count map.
 */
enum counter {
	CNT_TAKEN,		/* every run of the program */
	CNT_FILTERED,		/* rejected by a filter, or the profiler itself */
	CNT_HASH_FULL,		/* the count map had no room: sample lost */
	CNT_USER_EEXIST,	/* bucket collision, then spilled */
	CNT_USER_ENOMEM,
	CNT_USER_EFAULT,	/* no user stack (kernel thread) */
	CNT_USER_OTHER,
	CNT_KERN_EEXIST,
	CNT_KERN_ENOMEM,
	CNT_KERN_EFAULT,	/* no kernel stack (sample in user mode) */
	CNT_KERN_OTHER,
	CNT_SPILLED,		/* stacks stored in the spill map */
	CNT_SPILL_FULL,		/* spill map full: stack printed as missed */
	CNT_SPILL_ERR,		/* bpf_get_stack failed after -EEXIST */
	CNT_NOTES,		/* first-sample notes sent to user space */
	CNT_NOTE_ERR,		/* ... that could not be sent */
	CNT_NEW_KEYS,		/* count map keys inserted */
	NR_COUNTERS,
};

#endif /* PROFILE_H */
