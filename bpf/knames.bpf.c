// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel addresses named by the running kernel.  User space fills addrs[]
 * and nr, runs this program with BPF_PROG_TEST_RUN, and reads names[]:
 * each is what printk's %pB gives, "name+0xoff/0xsize", with " [module]"
 * only for loadable modules (BPF programs and trampolines come without one,
 * unlike in /proc/kallsyms: src/symbols/knames.c tells them apart by name), or
 * "0x..." when no symbol covers the address.  It costs a lookup per
 * address instead of reading all 120,000 lines of /proc/kallsyms (30 ms of
 * kernel formatting) on every start.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "knames_abi.h"

__u32 nr;
__u64 addrs[KNAMES_BATCH];
char names[KNAMES_BATCH][KNAMES_LEN];

static long name_one(__u64 i, void *data)
{
	if (i >= KNAMES_BATCH || i >= nr)
		return 1;
	bpf_snprintf(names[i], KNAMES_LEN, "%pB", &addrs[i], sizeof(addrs[i]));
	return 0;
}

SEC("syscall")
int name_addrs(void *ctx)
{
	bpf_loop(KNAMES_BATCH, name_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
