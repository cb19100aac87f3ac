/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The records the profile writers' tests share (pprof, OTLP): a burn
 * workload's stacks, kleaf under kroot in the kernel and func_b or func_a
 * under main in /bin/burn, and records of them, on-CPU samples or off-CPU
 * time.  The stacks are this header's globals, filled once by
 * burn_stacks_init() before any record is made of them.
 */
#ifndef TEST_RECORDS_H
#define TEST_RECORDS_H

#include "stacks.h"

static STACK(kst, 2);
static STACK(ust_b, 2);
static STACK(ust_a, 2);

/* The burn stacks; the user frames in mapping m (NULL: none known). */
static inline void burn_stacks_init(const struct frame_mapping *m)
{
	kst.frames[0] = (struct frame){ .name = "kleaf", .kind = FRAME_KERNEL, .addr = 0xffffffff81000010 };
	kst.frames[1] = (struct frame){ .name = "kroot", .kind = FRAME_KERNEL, .addr = 0xffffffff81000100 };
	ust_b.frames[0] = (struct frame){ .name = "func_b", .addr = 0x401040, .module = "/bin/burn",
					  .mapping = m };
	ust_b.frames[1] = (struct frame){ .name = "main", .addr = 0x402000, .module = "/bin/burn",
					  .mapping = m };
	ust_a.frames[0] = (struct frame){ .name = "func_a", .addr = 0x401000, .module = "/bin/burn",
					  .mapping = m };
	ust_a.frames[1] = ust_b.frames[1];
}

/* An on-CPU record: count samples of thread tid. */
static inline struct record rec(const char *comm, __u32 pid, __u32 tid, __u64 count,
				const void *user, __u8 us, const void *kern, __u8 ks)
{
	struct record r = test_record(comm, pid, count, user, us, kern, ks);

	r.tid = tid;
	return r;
}

/* An off-CPU record: ns blocked in user (and kern, if not NULL). */
static inline struct record off(const char *comm, __u32 pid, __u32 tid, __u64 ns,
				const void *user, const void *kern)
{
	struct record r = rec(comm, pid, tid, ns, user, PART_OK, kern,
			      kern ? PART_OK : PART_ABSENT);

	r.what = COUNT_OFF_CPU;
	return r;
}

/* o as --wall writes it: on- and off-CPU, a sample period_ns long. */
static inline struct output_opts wall_opts(struct output_opts o, __u64 period_ns)
{
	o.kind = PROFILE_WALL;
	o.period_ns = period_ns;
	o.view.mark_off_cpu = true;
	return o;
}

#endif /* TEST_RECORDS_H */
