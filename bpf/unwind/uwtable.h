/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The contract of the in-kernel .eh_frame unwinder (x86-64): the table
 * rows user space compiles from an object's .eh_frame (src/unwind/ehframe.c), the
 * per-process mapping list the walker looks PCs up in (src/unwind/unwind.c), and
 * the reasons a walk ends.  Fixed-width types only: compiled by clang for
 * BPF and by cc for the loader.
 *
 * A table is one BPF array of struct uw_row per object, sorted by addr,
 * addresses unique.  addr is relative to the table's base (an ELF virtual
 * address, chosen by the compiler of the table, so that a row fits 32
 * bits): a PC in a mapping is looked up at pc - uw_map.bias, where bias
 * folds the load address and the base together.  The row in force at an
 * address is the last one whose addr is <= it.
 */
#ifndef UWTABLE_H
#define UWTABLE_H

/*
 * How to find the caller's frame at an address.  The canonical frame
 * address (CFA) is the caller's rsp; the return address is always read
 * at CFA - 8 (the only rule GCC and clang emit for x86-64 code; others
 * compile to UW_OP_UNSUPPORTED).
 */
enum uw_op {
	UW_OP_GAP = 0,		/* no FDE covers the address */
	UW_OP_CFA_SP = 1,	/* CFA = rsp + cfa_off */
	UW_OP_CFA_BP = 2,	/* CFA = rbp + cfa_off */
	UW_OP_PLT = 3,		/* a PLT entry: CFA = rsp + 8, plus 8 when
				 * (pc & 15) >= cfa_off (GCC's expression) */
	UW_OP_SIGRETURN = 4,	/* a signal trampoline: the interrupted
				 * registers are in the ucontext at rsp */
	UW_OP_STOP = 5,		/* outermost frame: return address undefined */
	UW_OP_UNSUPPORTED = 6,	/* a rule the walker cannot follow */
	UW_OP_CLONE = 7,	/* the few bytes between a thread-creating
				 * syscall and its child's outermost-frame
				 * CFI (glibc's clone, clone3): a new thread
				 * there (rax 0 at the leaf) is at its root;
				 * its parent's caller is CFA = rsp + cfa_off */
	NR_UW_OPS,
};

/*
 * What the caller's rbp is.  UW_BP_SAME: rbp was not changed by this
 * frame.  UW_BP_UNKNOWN: it cannot be recovered (an expression, another
 * register), so the walk goes on without it.  Any other (negative) value
 * s: the caller's rbp was saved at CFA + 8 * s.
 */
#define UW_BP_SAME 0
#define UW_BP_UNKNOWN 127

/*
 * One row, 8 bytes.  rule packs the op (bits 0-3), the rbp rule as a
 * signed 8-bit slot (bits 4-11) and an unsigned 20-bit CFA offset (bits
 * 12-31); the largest offsets seen in Debian's libc and an interpreter are
 * about 65,600, which a 16-bit field cannot hold.
 */
struct uw_row {
	__u32 addr;
	__u32 rule;
};

#define UW_CFA_OFF_MAX ((1u << 20) - 1)

static inline __u32 uw_rule(unsigned int op, int bp_slot, unsigned int cfa_off)
{
	return (op & 0xf) | ((__u32)(bp_slot & 0xff) << 4) | (cfa_off << 12);
}

static inline unsigned int uw_rule_op(__u32 rule)
{
	return rule & 0xf;
}

static inline int uw_rule_bp(__u32 rule)
{
	return (int)(signed char)((rule >> 4) & 0xff);
}

static inline unsigned int uw_rule_cfa_off(__u32 rule)
{
	return rule >> 12;
}

/*
 * A table is loaded as an array of chunks of UW_CHUNK_ROWS rows (4 KiB):
 * the walker finds the chunk with a binary search of element lookups (the
 * first row of each), then the row inside the chunk by plain loads, which
 * cost no helper call.  The last chunk is padded with rows of addr
 * UW_ROW_PAD, above any address, so no search stops there.  Every search
 * takes a fixed number of steps at most, so that the verifier sees fixed
 * loops.
 */
#define UW_CHUNK_SHIFT 9
#define UW_CHUNK_ROWS (1u << UW_CHUNK_SHIFT)
#define UW_CHUNK_STEPS 12			/* log2(UW_MAX_CHUNKS) */
#define UW_MAX_CHUNKS (1u << UW_CHUNK_STEPS)
#define UW_ROW_PAD 0xffffffffu

struct uw_chunk {
	struct uw_row rows[UW_CHUNK_ROWS];
};

/* Largest table: 2M rows.  An interpreter has about 60k rows, libcrypto 72k. */
#define UW_MAX_ROWS (UW_MAX_CHUNKS * UW_CHUNK_ROWS)

/* How many objects' tables can be loaded at once (the outer map's size). */
#define UW_MAX_TABLES 4096

/* One executable mapping of a process. */
enum uw_map_flags {
	UWM_TABLE = 1 << 0,	/* table is valid: unwind from it */
	UWM_FP = 1 << 1,	/* walk by frame pointer (FP-built, JIT, no
				 * table yet) */
	UWM_VDSO = 1 << 2,
};

struct uw_map {
	__u64 start, end;	/* [start, end) in the process */
	__u64 bias;		/* row addr = pc - bias */
	__u32 table;		/* slot in the outer map of tables */
	__u32 n_chunks;		/* elements of that table */
	__u32 flags;		/* enum uw_map_flags */
	/*
	 * UWM_TABLE: the table's load, from 1, never the same for two loads
	 * (a slot is reused for another object's table): it names the rows
	 * in the walker's cache of rules (bpf/unwind/unwind.bpf.h).
	 */
	__u32 serial;
};

/*
 * The process's executable mappings, sorted by start, not overlapping.
 * A process with more mappings than fit has the rest walked by frame
 * pointer (UWP_MAPS_CUT), and the loader counts it.
 */
#define UW_MAX_MAPS 256
#define UW_MAX_PROCS 8192	/* processes synced at once */
#define UW_MAP_SEARCH_STEPS 8	/* log2(UW_MAX_MAPS) */

enum uw_proc_flags {
	/* More executable mappings than fit: a PC in none takes a frame-pointer step. */
	UWP_MAPS_CUT = 1 << 0,
};

struct uw_proc {
	__u32 n_maps;
	__u32 gen;		/* new for each update: a walk that sees it
				 * change read a list being replaced */
	__u32 flags;		/* enum uw_proc_flags */
	__u32 pad;
	struct uw_map maps[UW_MAX_MAPS];
};

/*
 * A loaded table by the file it was compiled from (uw_files), for the
 * walks of a process the loader has not listed yet: a list made in the
 * kernel from the process's own mappings (bpf/klist.bpf.c,
 * uw_klist_entry()).  The key is the file's inode as the kernel names it
 * (dev in the kernel's encoding, MAJOR << 20 | MINOR); size and change
 * time must match too: a file rewritten in place, or a new file on a
 * reused inode, matches no entry.  segs are the file's executable PT_LOAD
 * segments: the one a mapping's file offset falls in gives its bias, as
 * the loader's list does (src/unwind/unwind.c, fill_map()).
 */
#define UW_FILE_SEGS 4

struct uw_file_key {
	__u64 dev, ino;
};

struct uw_file_seg {
	__u64 offset, vaddr, filesz;
};

struct uw_file {
	struct uw_file_key key;	/* its own: a copy read whole is checked by it */
	__u64 size;
	__s64 ctime_sec;
	__u64 ctime_nsec;
	__u64 base;		/* ELF vaddr of row address 0 */
	__u32 table, n_chunks, serial, n_segs;
	struct uw_file_seg segs[UW_FILE_SEGS];
};

/*
 * A thread's list made in the kernel (bpf/klist.bpf.c): its executable
 * mappings with a table, at most UW_KLIST_MAPS, in order, made at its
 * exec and again each time ld.so has mapped objects, or copied from its
 * parent's list at a fork; used for UW_KLIST_YOUNG_NS from then, while
 * the loader's sync comes.  A table may have
 * gone since, and its slot hold another's: the sampler checks each
 * entry's serial against uw_slot_serials (bpf/shared_maps.bpf.h) when it
 * takes the list.
 */
#define UW_KLIST_MAPS 32
#define UW_KLIST_YOUNG_NS (250 * 1000000ULL)
/* ... replaces the loader's list only with this long of it left. */
#define UW_KLIST_MARGIN_NS (50 * 1000000ULL)

struct uw_klist_store {
	__u64 made_ns;		/* the exec or fork it was made at */
	__u32 n_maps;
	__u32 seen;		/* mappings looked at in the making (a copy's:
				 * its tables) */
	struct uw_map maps[UW_KLIST_MAPS];
};

/*
 * A user's asks for a sync in the walker's ring not yet read
 * (bpf/unwind/unwind.bpf.h, uw_askers): mark, the ring's producer
 * position after its newest ask; n, its asks since the reader last passed
 * mark.  BPF only.
 */
struct uw_asker {
	__u64 mark;
	__u64 n;
};

#define UW_ASKS_USER 8		/* a user's asks unread at once */

/* Why a walk ended.  Counted per reason; opt-in pseudo-frame. */
enum uw_end {
	UW_END_ROOT,		/* a STOP row: the outermost frame */
	UW_END_ROOT_FP,		/* a frame-pointer chain ended with rbp 0 */
	UW_END_DEPTH,		/* MAX_STACK_DEPTH frames */
	UW_END_NO_MAP,		/* a PC in no known executable mapping */
	UW_END_NO_TABLE,	/* a mapping whose table is not loaded */
	UW_END_GAP,		/* a PC no FDE covers, past the leaf */
	UW_END_UNSUPPORTED,	/* a CFI rule the walker cannot follow */
	UW_END_BAD_FRAME,	/* the CFA or return address failed a check */
	UW_END_READ,		/* user memory could not be read (not resident) */
	UW_END_FP_BAD,		/* a frame-pointer step went down or nowhere */
	UW_END_NO_REGS,		/* no user registers (kernel thread) */
	UW_END_BP_LOST,		/* a frame-pointer step where rbp was not saved */
	UW_END_CHANGED,		/* the mapping list changed during the walk */
	NR_UW_ENDS,
};

#endif /* UWTABLE_H */
