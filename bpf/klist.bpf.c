// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The list a new process's first samples are walked from, made in the
 * kernel (the sampler's uw_klist_take(), bpf/profile.bpf.c): the thread's
 * executable mappings whose files have a table loaded (uw_files), as the
 * loader's sync would list them, at its exec and again each time ld.so
 * has mapped objects, for UW_KLIST_YOUNG_NS; or, for a child forked by a
 * process the loader has listed, its parent's list.  Made in the thread's own
 * context, where its mappings may be locked: a sample's program may not
 * (the open-coded iterator over a task's mappings, 6.7 and later,
 * refuses a context with interrupts off).  An object of its own, loaded
 * on first need with the sampler's maps: the iterator's kfuncs make
 * libbpf parse the kernel's BTF.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"
#include "unwind/uwtable.h"
#include "shared_maps.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define UW_KLIST_VMAS 1024	/* mappings looked at, at most */
#define VM_EXEC 0x4
#define CTIME_NSEC_MASK ((1U << 30) - 1)	/* nanoseconds: below 10^9 */

/* profile -- CMD: the command's processes only (follow_set). */
const volatile bool follow_only = false;

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;

/* struct inode's change time before 6.11. */
struct inode___timespec {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));

/* The file's change time, as stat() gives it; false if this kernel's inode has none we know. */
static __always_inline bool uw_inode_ctime(struct inode *inode, __s64 *sec, __u64 *nsec)
{
	struct inode___timespec *old = (void *)inode;

	if (bpf_core_field_exists(inode->i_ctime_sec)) {
		*sec = BPF_CORE_READ(inode, i_ctime_sec);
		/* Multigrain timestamps keep a flag in the top bit (I_CTIME_QUERIED). */
		*nsec = BPF_CORE_READ(inode, i_ctime_nsec) & CTIME_NSEC_MASK;
		return true;
	}
	if (bpf_core_field_exists(old->__i_ctime)) {
		*sec = BPF_CORE_READ(old, __i_ctime.tv_sec);
		*nsec = BPF_CORE_READ(old, __i_ctime.tv_nsec);
		return true;
	}
	return false;
}

/*
 * Fill entry n of the current thread's list for an executable mapping of
 * the file whose inode is at inode_addr, if it has a table loaded: as
 * fill_map() does in user space.  A function of its own (global, of
 * scalars): verified once, not at each state of the loop that calls it.
 */
__noinline int uw_klist_entry(__u32 n, __u64 inode_addr, __u64 start, __u64 end, __u64 pgoff)
{
	struct inode *inode = (struct inode *)inode_addr;
	struct uw_klist_store *st;
	struct uw_file_key key;
	const struct uw_file *e;
	struct uw_file f;
	struct uw_map *m;
	__u64 nsec;
	__s64 sec;

	st = bpf_task_storage_get(&uw_klist_store, bpf_get_current_task_btf(), NULL, 0);
	if (!st || !inode)
		return 0;
	m = &st->maps[n & (UW_KLIST_MAPS - 1)];
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(inode, i_ino);
	/*
	 * Read whole, then checked: a value the loader deleted meanwhile may
	 * be another file's already (a hash map's memory is reused at once).
	 */
	e = bpf_map_lookup_elem(&uw_files, &key);
	if (!e || bpf_probe_read_kernel(&f, sizeof(f), e) ||
	    f.key.dev != key.dev || f.key.ino != key.ino)
		return 0;
	if (!uw_inode_ctime(inode, &sec, &nsec) || f.size != BPF_CORE_READ(inode, i_size) ||
	    f.ctime_sec != sec || f.ctime_nsec != nsec)
		return 0;
	for (int i = 0; i < UW_FILE_SEGS; i++) {
		const struct uw_file_seg *seg = &f.segs[i];

		if (i >= f.n_segs)
			break;
		if (pgoff < (seg->offset & ~4095ULL) || pgoff >= seg->offset + seg->filesz)
			continue;
		m->start = start;
		m->end = end;
		m->bias = start - pgoff + seg->offset - seg->vaddr + f.base;
		m->table = f.table;
		m->n_chunks = f.n_chunks;
		m->serial = f.serial;
		m->flags = UWM_TABLE;
		return 1;
	}
	return 0;
}

/*
 * Make the current thread's list in st: its executable mappings that
 * have a table, in order (the iterator goes up the address space).  The
 * counts live in the map value, not in registers: the verifier checks
 * the loop until its states converge, and unknown map contents converge
 * at once (as the walker's state does, uw_state).  When the mappings'
 * lock is taken (busy), st stays as it was: a list made before, of the
 * same image, still holds for the mappings it has.
 */
static __always_inline void uw_klist_make(struct task_struct *task, struct uw_klist_store *st,
					  __u64 *cnt)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	__u64 inode;
	__u32 n;

	/* A kernel thread's exec (a user-mode helper) comes with its mappings. */
	if (!BPF_CORE_READ(task, mm)) {
		st->n_maps = 0;
		return;
	}
	if (bpf_iter_task_vma_new(&it, task, 0)) {
		cnt[CNT_UW_KLIST_BUSY]++;
	} else {
		st->n_maps = 0;
		st->seen = 0;
		while ((vma = bpf_iter_task_vma_next(&it))) {
			n = st->n_maps;
			if (st->seen++ >= UW_KLIST_VMAS || n >= UW_KLIST_MAPS)
				break;
			/*
			 * Read, not loaded: each load through a kernel pointer
			 * costs the verifier a search of the kernel's BTF by name.
			 */
			if (!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC))
				continue;
			inode = (__u64)BPF_CORE_READ(vma, vm_file, f_inode);
			if (inode && uw_klist_entry(n, inode, BPF_CORE_READ(vma, vm_start),
						    BPF_CORE_READ(vma, vm_end),
						    BPF_CORE_READ(vma, vm_pgoff) << 12))
				st->n_maps = n + 1;
		}
		cnt[CNT_UW_KLIST_BUILDS]++;
	}
	bpf_iter_task_vma_destroy(&it);
}

/* Has the loader's list p a mapping at addr?  Its mappings are in order. */
static __always_inline bool uw_listed(const struct uw_proc *p, __u64 addr)
{
	__u32 n = p->n_maps, lo = 0, len = n;
	const struct uw_map *m;

	if (!n || n > UW_MAX_MAPS)
		return false;
	/* The last mapping that starts at or below addr. */
	for (int k = 0; k < UW_MAP_SEARCH_STEPS + 1; k++) {
		__u32 half = len >> 1;

		if (p->maps[(lo + half) & (UW_MAX_MAPS - 1)].start <= addr)
			lo += half;
		len -= half;
	}
	m = &p->maps[lo & (UW_MAX_MAPS - 1)];
	return m->start <= addr && addr < m->end;
}

struct uw_stale {
	const struct uw_klist_store *st;
	const struct uw_proc *proc;
	bool stale;
};

/* Entry i of the kernel's list: in the loader's list?  A bpf_loop() step. */
static long uw_stale_step(__u64 i, void *data)
{
	struct uw_stale *c = data;

	if (!c->st || !c->proc)
		return 1;
	if (uw_listed(c->proc, c->st->maps[i & (UW_KLIST_MAPS - 1)].start))
		return 0;
	c->stale = true;
	return 1;
}

/*
 * The list just made in st, when ld.so has mapped objects: if the
 * loader's list of the process lacks one of its mappings, that list goes,
 * so that the sampler walks from st's and asks the loader for a list anew
 * (as after an exec, whose program drops the loader's list too).  Not when
 * st's list may be cut short, nor near the end of its use: the loader's
 * list may hold what it lacks, and outlives it.  The loader's list may be
 * being replaced as it is read: then one is dropped that need not be, or
 * one kept that the walker's asks have brought anew by the next sample.
 * A delete, not a mark in the value: the sampler's program stays as it is
 * (a branch there cost the verifier a third more of its instructions).
 */
static __always_inline void uw_klist_supersede(const struct uw_klist_store *st, __u64 *cnt)
{
	struct uw_stale c = { .st = st };
	__u32 pid, tid;

	if (!current_ids(&pid, &tid) || !st->n_maps || st->n_maps >= UW_KLIST_MAPS ||
	    st->seen > UW_KLIST_VMAS ||
	    bpf_ktime_get_ns() - st->made_ns > UW_KLIST_YOUNG_NS - UW_KLIST_MARGIN_NS)
		return;
	c.proc = bpf_map_lookup_elem(&uw_procs, &pid);
	if (!c.proc)
		return;
	bpf_loop(st->n_maps, uw_stale_step, &c, 0);
	if (c.stale && !bpf_map_delete_elem(&uw_procs, &pid))
		cnt[CNT_UW_KLIST_SUPERSEDED]++;
}

/* The new image and ld.so are mapped: the thread's list, made anew. */
SEC("raw_tp/sched_process_exec")
int uw_klist_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct uw_klist_store *st;
	struct counters *stat;
	__u32 zero = 0, tgid = bpf_get_current_pid_tgid() >> 32;

	if (follow_only && !bpf_map_lookup_elem(&follow_set, &tgid))
		return 0;
	stat = bpf_map_lookup_elem(&stats, &zero);
	st = bpf_task_storage_get(&uw_klist_store, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!stat || !st)
		return 0;
	/* A list of the image before (a fork's copy) names none of this one's. */
	st->made_ns = bpf_ktime_get_ns();
	st->n_maps = 0;
	st->seen = 0;
	uw_klist_make(task, st, stat->c);
	return 0;
}

/*
 * ld.so says its list of objects changed (the debugger's hook,
 * _dl_debug_state(), the loader attaches this to): at the start once
 * every library is mapped, before they are relocated, and at each
 * dlopen() and dlclose().  A thread with a list young enough gets it
 * made again; an old one loses it.  A probe in the process's own
 * context, where the mappings may be locked: not the syscall tracepoint
 * of mmap(), whose enabling slows every syscall of the host (40 ns on
 * each of 115 here).
 */
SEC("uprobe")
int uw_klist_rtld(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct uw_klist_store *st;
	struct counters *stat;
	__u32 zero = 0;

	st = bpf_task_storage_get(&uw_klist_store, task, NULL, 0);
	if (!st)
		return 0;
	/* Past its use: the memory goes now, not at the thread's exit. */
	if (bpf_ktime_get_ns() - st->made_ns > UW_KLIST_YOUNG_NS) {
		bpf_task_storage_delete(&uw_klist_store, task);
		return 0;
	}
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (!stat)
		return 0;
	uw_klist_make(task, st, stat->c);
	uw_klist_supersede(st, stat->c);
	return 0;
}

/*
 * A new process forked (not a thread): its memory is its parent's copy,
 * and so are its mappings.  When the loader has listed the parent, the
 * child's first samples, before the loader's sync of the child, are
 * walked from that list, copied into the child's storage before it first
 * runs (the tracepoint comes before the child is woken).  A list being
 * replaced as it is copied (gen changed) is dropped: the child is walked
 * by frame pointer until its sync, as before.  The list is the child's
 * storage (about 1.3 KB, kept while it lives, as an exec's list is):
 * no table of fixed size that one user's forks could fill for another,
 * the memory bounded by the users' task limits.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(uw_klist_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, zero = 0, pid, tid;
	const struct uw_proc *proc;
	struct uw_klist_store *st;
	struct counters *stat;

	if (child->tgid == parent->tgid || !child->mm)
		return 0;
	if (follow_only && !bpf_map_lookup_elem(&follow_set, &ptgid))
		return 0;
	/* The tracepoint runs in the parent: its pid as uw_procs is keyed. */
	if (!current_ids(&pid, &tid))
		return 0;
	proc = bpf_map_lookup_elem(&uw_procs, &pid);
	if (!proc)
		return 0;
	st = bpf_task_storage_get(&uw_klist_store, child, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return 0;
	if (!uw_list_copy(proc, st)) {
		bpf_task_storage_delete(&uw_klist_store, child);
		return 0;
	}
	stat = bpf_map_lookup_elem(&stats, &zero);
	if (stat)
		stat->c[CNT_UW_KLIST_FORKS]++;
	return 0;
}
