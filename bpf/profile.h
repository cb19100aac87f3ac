/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The contract between bpf/profile.bpf.c and user space, and nothing else:
 * the count key, how stacks are stored and what their frames are, the
 * counters, the in-flight flag and the default map sizes.  Fixed-width
 * types only: this header is compiled by clang for BPF and by cc for the
 * loader.
 */
#ifndef PROFILE_H
#define PROFILE_H

#include "unwind/uwtable.h"

#define TASK_COMM_LEN 16

/*
 * Deepest stack the BPF side can store.  It is also the kernel's default
 * kernel.perf_event_max_stack; the spill buffer is sized by it.
 */
#define MAX_STACK_DEPTH 127

/* Map sizes unless --stack-storage-size / --hash-storage-size say more. */
#define DEFAULT_STACK_STORAGE 16384	/* stacks in each of the stack maps */
#define DEFAULT_HASH_STORAGE 40960	/* keys in the count map */

/*
 * A trace is a sequence of typed frames.  The kind says who names a frame
 * (one resolver per kind in user space); the flags say how to read it.
 * Kinds only ever grow: a new stack source adds one here and a resolver,
 * and the writers see frames as before.
 */
enum frame_kind {
	FRAME_NONE = 0,		/* not a frame (a marker, see symbolize.h) */
	FRAME_KERNEL = 1,	/* kernel text: addr is a kernel address */
	FRAME_NATIVE = 2,	/* user machine code in a mapped file */
	FRAME_JIT = 3,		/* user machine code in anonymous memory */
	FRAME_INTERP = 4,	/* an interpreter's frame: addr is its code
				 * object, aux the instruction's word */
	NR_FRAME_KINDS,
};

enum frame_flags {
	/*
	 * addr is a return address: the call it belongs to is the
	 * instruction before it, so it is named at addr - 1.  Every frame of
	 * a stack from bpf_get_stack()/bpf_get_stackid() has it but the
	 * first, the interrupted instruction itself.
	 */
	FRAME_RETADDR = 1 << 0,
	FRAME_MISSED = 1 << 1,		/* stands for a stack that was lost */
	FRAME_TRUNCATED = 1 << 2,	/* the walk stopped here, out of depth */
	/*
	 * Not a frame: says why an unwinder's walk ended early (--unwind-debug);
	 * addr is the enum uw_end, kind FRAME_NONE.
	 */
	FRAME_UNWIND_END = 1 << 3,
	/*
	 * Not a frame: a mark an interpreter's walk left in its stack (kind
	 * FRAME_NONE); addr is the interpreter's own code for it, and the
	 * interpreter names it (src/interp/interp.h).
	 */
	FRAME_INTERP_MARK = 1 << 4,
	/*
	 * FRAME_INTERP: the outermost frame that one native call of the
	 * interpreter's evaluation loop ran.  The symbolizer puts the frames
	 * up to here in place of that native frame.
	 */
	FRAME_INTERP_ENTRY = 1 << 5,
	/* Every flag fits in FRAME_FLAG_BITS (the symbolizer's frame keys). */
	FRAME_FLAG_BITS = 6,
};

/* One frame of a trace as a stack source hands it to the symbolizer. */
struct trace_frame {
	__u64 addr;
	__u64 aux;		/* FRAME_INTERP: the interpreter's second word
				 * (CPython's: instruction and identity) */
	__u8 kind;		/* enum frame_kind */
	__u8 flags;		/* enum frame_flags */
	__u8 interp;		/* FRAME_INTERP, FRAME_INTERP_MARK: the
				 * interpreter's kind (MAX_INTERP_KINDS) */
	__u8 pad[5];
};

/*
 * Where a stack lives.  A count key refers to each part of its trace by
 * (src, id): the kernel's STACK_TRACE map hands out small ids, and a stack
 * that could not go there (its bucket held a different stack, -EEXIST) is
 * spilled into a hash map keyed by a 64-bit hash of its frames.  Stacks that
 * bpf_get_stackid() did not produce at all (an in-kernel .eh_frame unwinder)
 * are stored the same way as spilled ones.
 */
enum stack_src {
	STACK_NONE = 0,		/* no such stack (-EFAULT): print nothing */
	STACK_MAP = 1,		/* id is a STACK_TRACE map id */
	STACK_HASHED = 2,	/* id is a key of the spill map */
	STACK_MISSED = 3,	/* lost: err holds the negative errno */
};

struct stack_ref {
	__u8 src;		/* enum stack_src */
	__u8 kind;		/* enum frame_kind of every frame stored */
	__u16 pad;
	__s32 err;		/* errno of the failure, 0 when stored */
	__u64 id;
};

/*
 * The parts of a trace, leaf end first: a sample's trace is its kernel
 * frames (leaf first) followed by its user frames (leaf first).
 */
enum trace_part {
	PART_KERNEL,
	PART_USER,
	PART_INTERP,	/* an interpreter's frames: user space merges them
			 * into the user part, never printed on their own */
	NR_PARTS,
};

/*
 * What a count map value measures, by its key's what: the samples of the
 * event, or the time a task was blocked, in nanoseconds.  A profile of
 * both (wall-clock) keeps them apart, even for the same stacks.
 */
enum count_what {
	COUNT_ON_CPU = 0,	/* samples (events) */
	COUNT_OFF_CPU = 1,	/* blocked time, ns */
	NR_COUNT_WHATS,
};

/*
 * What the count map is keyed by.  tid and cpu are only filled in when a
 * breakdown asks for them; otherwise they are zero so that samples merge.
 */
struct count_key {
	__u32 pid;		/* tgid, as seen from the profiler's PID namespace */
	__u32 tid;
	__u32 cpu;
	/*
	 * The low 32 bits of the process's start time (its leader's
	 * task_struct.start_time, CLOCK_MONOTONIC ns), 0 when the kernel's
	 * BTF did not say where that is: tells apart the processes that had
	 * one pid in turn, so that each is named from its own mappings.
	 */
	__u32 start;
	__u32 what;		/* enum count_what */
	__u32 pad;
	struct stack_ref parts[NR_PARTS];
	char comm[TASK_COMM_LEN];
};

/*
 * A count's mark that a prefetch has read its key (bpf/bulk.bpf.c,
 * new_keys): set once, never reached by a count, masked by every reader.
 */
#define COUNT_SEEN (1ULL << 63)

/*
 * A stack stored by content, in the spill map.  end says how the walk
 * ended: 0 for a stack from bpf_get_stack() (the kernel's frame-pointer
 * walk, which does not say), else enum uw_end + 1 (bpf/unwind/uwtable.h).
 */
struct hashed_stack {
	__u32 nr;			/* frames used in ips[] */
	__u32 end;
	__u64 ips[MAX_STACK_DEPTH];
};

/*
 * Interpreters.  Each runtime whose frames are walked in the kernel has a
 * kind, 1 to MAX_INTERP_KINDS, given in its own contract header
 * (bpf/interp/<runtime>/) and dispatched on in bpf/interp/interp.bpf.h.
 * The loader writes what a runtime found of a process into interp_procs,
 * keyed by pid: the kind, and the runtime's own data.
 */
#define MAX_INTERP_KINDS 4
#define MAX_INTERP_PROCS 4096		/* processes known at once */
#define INTERP_PROC_WORDS 12

struct interp_proc {
	__u32 kind;
	__u32 pad;
	__u64 data[INTERP_PROC_WORDS];	/* the runtime's: its contract header */
};

/*
 * An interpreter's stack is stored by content like any other (struct
 * hashed_stack), in words of the runtime's own format; its end holds the
 * kind in the top byte, the runtime's own end reason below it.  Hashed
 * with INTERP_SPILL_FLAGS: apart from native stacks of the same words, and
 * per process (each process is told of its own stacks).
 */
#define INTERP_END_SHIFT 24
#define INTERP_END(kind, own) (((__u32)(kind) << INTERP_END_SHIFT) | (own))
#define INTERP_END_KIND(end) ((end) >> INTERP_END_SHIFT)
#define INTERP_END_OWN(end) ((end) & ((1u << INTERP_END_SHIFT) - 1))
#define INTERP_SPILL_FLAGS(kind, pid) (((__u64)(kind) << 56) | (pid))

/*
 * An interpreter's walk deeper than one stored stack holds stores its
 * outer frames first, as a stack of their own (same kind, same flags), and
 * the inner stack's end says so with INTERP_END_MORE: its last word is
 * then the outer stack's key in the same spill map.  INTERP_END_CUT: outer
 * frames were walked but could not be stored.  Both above the runtime's
 * own reasons.
 */
#define INTERP_END_MORE (1u << 23)
#define INTERP_END_CUT (1u << 22)

/*
 * The sampler's own records on the side band (the events map), told apart
 * by their type.  A perf record's raw data is 4 bytes off 8-byte
 * alignment: user space copies a note before reading it.
 */
enum note_type {
	NOTE_PROCESS = 1,	/* a process's first sample: read its maps */
	NOTE_INTERP_STACK = 2,	/* struct interp_stack_note */
	NOTE_EXEC = 3,		/* a process noted before has exec'd: look again */
};

struct note_hdr {
	__u16 type;		/* enum note_type */
	__u16 kind;		/* NOTE_INTERP_STACK: the interpreter's kind */
	__u32 pid;
};

/*
 * NOTE_PROCESS and NOTE_EXEC: the process's full start time (as in count_key.start), so
 * that user space applies the note to this process, not to another that
 * had or has its pid.
 */
struct process_note {
	struct note_hdr hdr;
	__u64 start;
};

/*
 * Sent the first time an interpreter's stack is stored, up to its last
 * word, so that the runtime reads what names its frames while the process
 * lives.
 */
struct interp_stack_note {
	struct note_hdr hdr;
	struct hashed_stack st;		/* as stored */
};

/*
 * The spill map's key: a hash of the stack's frames, keyed by a secret the
 * loader draws from getrandom() for each run (spill_key in
 * bpf/profile.bpf.c).  Any process can choose its stack's frames (a forged
 * frame-pointer chain), so an unkeyed hash lets it make two stacks with one
 * key; the BPF side compares the frames on every hit anyway, and a real
 * collision is counted (CNT_SPILL_COLLISION) and the stack reported as
 * missed, never shown under the other stack's frames.  The key only makes
 * such collisions as rare as chance would.
 *
 * Each step is murmur3's 64-bit finalizer, a bijection in which every input
 * bit flips every output bit with probability about 1/2: the frame is mixed
 * with key[0] on its own, then into the running hash, which starts from
 * key[1]; the frame count and the bpf_get_stack() flags are mixed in last,
 * so that a walk can hash each frame as it finds it.  Here rather than in
 * the BPF source so that a test (tests/workloads/collide.c) can compute it
 * for a key it chose.
 */
#define SPILL_KEY_WORDS 2

static inline __u64 spill_mix(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static inline __u64 spill_hash_init(const __u64 *key)
{
	return key[1];
}

static inline __u64 spill_hash_final(__u64 h, __u64 nr, __u64 flags)
{
	return spill_mix(h ^ (nr << 32) ^ flags);
}

/* flags for a stack walked from tables: its end reason is part of it. */
#define SPILL_FLAGS_END(flags, end) ((flags) ^ ((__u64)(end) << 40))

static inline __u64 spill_hash_frame(const __u64 *key, __u64 h, __u64 ip)
{
	return spill_mix(h ^ spill_mix(ip + key[0]));
}

/*
 * How reading one part's stack went, other than stored in the stack map.
 * Each part has a counter for each, in this order (see CNT_STACK_ERR).
 */
enum stack_err {
	STACK_ERR_EEXIST,	/* bucket collision, then spilled */
	STACK_ERR_ENOMEM,	/* stack map full, then spilled */
	STACK_ERR_EFAULT,	/* no such stack (a kernel thread's user part) */
	STACK_ERR_OTHER,
	NR_STACK_ERRS,
};

/* Each interpreter kind's counters (enum counter): generic ones first. */
#define NR_INTERP_COUNTERS 16
enum interp_counter {
	INTERP_CNT_NOTES,	/* new stacks sent to user space */
	INTERP_CNT_NOTE_ERR,	/* ... that could not be sent */
	INTERP_CNT_OWN,		/* the runtime's own, from here */
};

/*
 * Per-user shares of each map set's count map and spill map: any user can
 * fill them with distinct stacks (deep recursion along random paths), and
 * the BPF side cannot evict.  So a new entry is refused to a user that
 * holds its fair share already, capacity / (users holding entries + 1),
 * unless a reserve, capacity / SHARE_RESERVE, stays free after it: a lone
 * user gets all but the reserve (no lost stacks on a host one user keeps
 * busy), and a newcomer, under its fair share, always finds the reserve.
 * Refused,
 * a key is lost as if the count map were full, a stack is shown as missed
 * as if the spill map were (and counted apart too).  Root is a user like
 * the others: its own background (a build) would otherwise fill the maps
 * before a victim comes.  Only the new-entry path pays: a sample whose
 * stacks and key are stored already costs nothing more.  The kernel's
 * stack trace map needs no share: a kernel stack that finds it full is
 * spilled, under its user's share of the spill map.  Only a profile of
 * the host or of cgroups shares; one of chosen processes (-p, -L, -- CMD)
 * has the whole maps.
 */
#define SHARE_RESERVE 16

enum share_map {
	SHARE_KEYS,		/* the count map */
	SHARE_STACKS,		/* the spill map */
	NR_SHARE_MAPS,
};

/* A user's entries in one map set, by enum share_map (the users maps). */
struct share_held {
	__u64 n[NR_SHARE_MAPS];
};

/*
 * Users with a record of their own in one map set; the users that find no
 * room for theirs share one spare record, judged as one user.
 */
#define SHARE_USERS 4096

/* A capacity no count reaches: no share (a profile of chosen processes). */
#define SHARE_UNBOUNDED (1ULL << 62)

/*
 * Per-CPU event counters.  They add up:
 *   taken = filtered + hash_full + counted
 * where counted is the sum of all counts in the count map.
 */
enum counter {
	CNT_TAKEN,		/* every run of the program */
	CNT_FILTERED,		/* rejected by a filter (-p, -L, cgroup, idle) */
	CNT_HASH_FULL,		/* the count map had no room: sample lost */
	CNT_USER_EEXIST,	/* NR_STACK_ERRS counters per part */
	CNT_USER_ENOMEM,
	CNT_USER_EFAULT,
	CNT_USER_OTHER,
	CNT_KERN_EEXIST,
	CNT_KERN_ENOMEM,
	CNT_KERN_EFAULT,
	CNT_KERN_OTHER,
	CNT_SPILLED,		/* stacks stored in the spill map */
	CNT_SPILL_FULL,		/* spill map full: stack printed as missed */
	CNT_SPILL_ERR,		/* bpf_get_stack failed after -EEXIST */
	CNT_SPILL_COLLISION,	/* another stack had its hash: printed as missed */
	CNT_NOTES,		/* first-sample notes sent to user space */
	CNT_NOTE_ERR,		/* ... that could not be sent */
	CNT_NEW_KEYS,		/* count map keys inserted */
	CNT_USER_MODE,		/* taken in user mode: no kernel stack to read */
	CNT_UW_WALKS,		/* user stacks walked from the loader's lists
				 * and tables (bpf/unwind/uwtable.h) */
	CNT_UW_FP_WALKS,	/* user stacks walked without: the kernel's walk
				 * by frame pointer, or the unwinder's before a
				 * sync (from a kernel-made list, or by frame
				 * pointer) */
	CNT_UW_TABLE_FRAMES,	/* frames stepped by a table row */
	CNT_UW_FP_FRAMES,	/* frames stepped by frame pointer in a walk */
	CNT_UW_END,		/* NR_UW_ENDS counters: how walks ended */
	/* NR_INTERP_COUNTERS counters for each interpreter kind (CNT_INTERP()) */
	CNT_INTERP_AREA = CNT_UW_END + NR_UW_ENDS,
	CNT_FOLLOWED = CNT_INTERP_AREA + MAX_INTERP_KINDS * NR_INTERP_COUNTERS,
				/* processes followed (-- CMD) */
	CNT_FOLLOW_FULL,	/* ... that found no room in follow_set: not profiled */
	CNT_FOLLOW_EXIT_LOST,	/* followed threads' exits that could not be
				 * marked: their rest not profiled (follow_exits) */
	CNT_SHARE_KEYS,		/* of CNT_HASH_FULL: the key was over its user's share */
	CNT_SHARE_STACKS,	/* of CNT_SPILL_FULL: the stack was over its user's share */
	/*
	 * Off-CPU time (--off-cpu, --wall), apart from the samples above.
	 * Switch-ins with a start add up:
	 *   blocks = short + long + off_filtered + off_hash_full + counted
	 * where counted is the number of blocks whose time is in the count
	 * map.  The switch-outs not recorded are the state-filtered, the
	 * table-full and the CPU-filtered ones.
	 */
	CNT_OFF_RECORDED,	/* switch-outs recorded in off_start */
	CNT_OFF_START_FULL,	/* ... refused: off_start full, or its user's share */
	CNT_OFF_STATE,		/* switch-outs not in --state */
	CNT_OFF_BLOCKS,		/* switch-ins that found their start */
	CNT_OFF_SHORT,		/* ... shorter than --min-block-time */
	CNT_OFF_LONG,		/* ... longer than --max-block-time */
	CNT_OFF_FILTERED,	/* ... unwanted at switch-in (sample()'s filters) */
	CNT_OFF_HASH_FULL,	/* ... the count map had no room: time lost */
	CNT_OFF_NO_START,	/* switch-ins of wanted tasks without a start:
				 * blocked before the profile began, or not
				 * recorded (above) */
	CNT_OFF_RESTARTED,	/* of CNT_OFF_RECORDED: the start was there, its
				 * switch-in missed (a kprobe skipped while the
				 * CPU was in BPF), and the block lost */
	CNT_OFF_NESTED,		/* CPU samples not taken: they came during a
				 * switch-in (raw tracepoint) on their CPU */
	CNT_UW_MEMO_HITS,	/* of CNT_UW_WALKS: off-CPU walks taken from the
				 * thread's memo (bpf/unwind/unwind.bpf.h) */
	CNT_INTERP_NOT_READY,	/* of CNT_TAKEN: an interpreter's process's
				 * samples counted without its frames, the
				 * walker (do_sample_interp) not loaded yet */
	CNT_UW_ASKS_REFUSED,	/* the unwinder's asks for a sync refused: its
				 * user had its share of uw_asks unread
				 * (bpf/unwind/unwind.bpf.h) */
	CNT_UW_KLIST_BUILDS,	/* lists made in the kernel at a thread's exec
				 * or when ld.so mapped objects (bpf/klist.bpf.c) */
	CNT_UW_KLIST_BUSY,	/* ... not made: the iterator refused (the
				 * mappings locked, or no memory) */
	CNT_UW_KLIST_WALKS,	/* walks of a process not listed yet from such
				 * a list, or one copied at a fork or an exit */
	CNT_UW_KLIST_SUPERSEDED,	/* loader's lists dropped: the kernel's,
					 * made when ld.so mapped objects, had
					 * a mapping they lacked */
	CNT_UW_KLIST_FORKS,	/* lists copied from the loader's list of the
				 * parent at a fork (bpf/klist.bpf.c) */
	CNT_UW_EXIT_KEPT,	/* exiting processes' stack slices and lists
				 * kept (bpf/profile.bpf.c, uw_exit_keep()) */
	NR_COUNTERS,
};

/*
 * An interpreter kind's counters: the first INTERP_CNT_OWN are counted by
 * the generic part (bpf/interp/interp.bpf.h), the rest mean what the
 * runtime says.
 */
#define CNT_INTERP(kind) (CNT_INTERP_AREA + ((kind) - 1) * NR_INTERP_COUNTERS)

/* The counter for how reading a part's stack went. */
#define CNT_STACK_ERR(part, err) \
	(((part) == PART_USER ? CNT_USER_EEXIST : CNT_KERN_EEXIST) + (err))

_Static_assert(CNT_USER_OTHER - CNT_USER_EEXIST == STACK_ERR_OTHER &&
	       CNT_USER_ENOMEM - CNT_USER_EEXIST == STACK_ERR_ENOMEM &&
	       CNT_USER_EFAULT - CNT_USER_EEXIST == STACK_ERR_EFAULT,
	       "user stack counters follow enum stack_err");
_Static_assert(CNT_KERN_OTHER - CNT_KERN_EEXIST == STACK_ERR_OTHER &&
	       CNT_KERN_ENOMEM - CNT_KERN_EEXIST == STACK_ERR_ENOMEM &&
	       CNT_KERN_EFAULT - CNT_KERN_EEXIST == STACK_ERR_EFAULT,
	       "kernel stack counters follow enum stack_err");
_Static_assert(sizeof(struct stack_ref) == 16 && sizeof(struct trace_frame) == 24,
	       "no padding the BPF side and user space could read differently");

/*
 * Off-CPU time: the task states a block may begin in (--state), by how the
 * task left the CPU.  R: preempted, or yielded while runnable; S: asleep,
 * interruptibly; D: uninterruptibly (TASK_IDLE too); OTHER: stopped,
 * traced, parked and the like, counted when --state is not given.
 */
enum off_state {
	OFF_STATE_R = 1 << 0,
	OFF_STATE_S = 1 << 1,
	OFF_STATE_D = 1 << 2,
	OFF_STATE_OTHER = 1 << 3,
	OFF_STATE_ALL = (1 << 4) - 1,
};

/*
 * Blocks being timed, by the kernel's tid: room for this many threads
 * blocked at once, with a share for each user on a host-wide profile (as
 * the count map's, bpf/profile.h "Per-user shares").
 */
#define OFF_START_SIZE 65536

/*
 * profile -- CMD follows the command and every process it starts, keyed by
 * the kernel's own (initial PID namespace) tgid, which a fork's child task
 * carries whatever namespace profile runs in.  Room for this many at once:
 * a make -j build starts thousands, but an entry goes when its process
 * exits.
 */
#define FOLLOW_SET_SIZE 65536

/*
 * The per-CPU in-flight flag (a __u64): which map set a running program
 * counts into, so that a flip of the set (-i) can wait for programs on the
 * old one.  The protocol is described at do_sample() in profile.bpf.c.
 */
#define INFLIGHT_IDLE 0			/* no program runs on this CPU */
#define INFLIGHT_SET(set) (1 + (set))	/* running on set 0 or 1 */
#define INFLIGHT_UNKNOWN 3		/* running, the set not yet chosen */

_Static_assert(INFLIGHT_SET(1) < INFLIGHT_UNKNOWN, "in-flight values are distinct");

/*
 * -e CATEGORY:NAME: each CPU's hits of the tracepoint (after the -C
 * filter), and how many more to skip before the next one counted (-c N:
 * every Nth, from the first).  Written by do_tracepoint only, on its CPU.
 */
struct tp_state {
	__u64 hits;
	__u64 left;
};

#endif /* PROFILE_H */
