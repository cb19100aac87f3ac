// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor for BPF ns/sample: what any stack-counting profiler must do per
 * sample -- skip idle, then two bpf_get_stackid() calls (user and kernel)
 * into one 16384-entry STACK_TRACE map, as profile's own program does, and
 * nothing else (no count map, no comm, no counters).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
	__uint(max_entries, 16384);
} floor_stacks SEC(".maps");

SEC("perf_event")
int floor_sample(void *ctx)
{
	if ((__u32)bpf_get_current_pid_tgid() == 0)
		return 0;
	bpf_get_stackid(ctx, &floor_stacks, BPF_F_USER_STACK);
	bpf_get_stackid(ctx, &floor_stacks, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
