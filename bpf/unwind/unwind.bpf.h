/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The in-kernel .eh_frame unwinder, included by profile.bpf.c (x86-64).
 *
 * User space compiles each object's .eh_frame into a sorted table of rows
 * (bpf/unwind/uwtable.h), loads it as one array in uw_tables, and writes each
 * sampled process's executable mappings into uw_procs.  Here a sample's
 * user stack is walked one frame per bpf_loop() step: find the mapping of
 * the PC, the row in force there, compute the canonical frame address
 * (CFA, the caller's rsp), and read the return address and, when the frame
 * saved it, the caller's rbp.  Code with no table (JIT, anonymous memory,
 * objects built with frame pointers) takes a frame-pointer step instead.
 * Every walk ends with a reason, counted, and kept with the stack.
 *
 * The walk's state lives in a per-CPU map value, not on the callback's
 * stack: since 6.7 the verifier checks a bpf_loop() callback until its
 * states converge, and unknown map contents converge at once.
 */

/*
 * The template of the per-object tables; user space creates the real ones,
 * of any size (BPF_F_INNER_MAP), and writes their rows through mmap().
 */
struct uw_table_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct uw_chunk));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, UW_MAX_TABLES);
	__type(key, __u32);
	__array(values, struct uw_table_map);
} uw_tables SEC(".maps");

/*
 * pid -> the time of its last exec (bpf_ktime_get_ns(): never the same
 * twice, even after the entry was evicted or dropped and written again),
 * read by the loader before and after it reads a process's maps: a
 * change means what it wrote may be the old image's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, UW_MAX_PROCS);
} uw_execs SEC(".maps");

/*
 * Syncs asked for by the walker itself, read by the sync thread
 * (src/unwind/unwind.c) straight from this ring: a process's first
 * samples must not wait for the main thread, which reads the side band
 * (first-sample notes, execs, mmaps) between other work, at times for a
 * hundred milliseconds and more.  A record is the pid, as a __u32
 * (16 bytes with the ring's header).
 */
#define UW_ASKS_RING 16384

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, UW_ASKS_RING);
} uw_asks SEC(".maps");

/*
 * What each process image asked.  A walk without a list (the first
 * samples, or a process whose list has no table) or one that met a PC in
 * none of the list's mappings (a library mapped since, as ld.so maps
 * them right after the exec) asks, at most UW_ASKS times: UW_ASK_GAP_NS
 * apart the first UW_ASKS_FAST times (ld.so maps a library every few
 * hundred microseconds), then twice as far apart each time: a few syncs
 * in the first milliseconds of a process, then none (its mmaps still
 * reach the loader through the side band).  The exec and exit
 * programs drop the entry.
 */
struct uw_asked {
	__u64 last_ns;
	__u64 n;
};

#define UW_ASKS 10
#define UW_ASKS_FAST 4
#define UW_ASK_GAP_NS 1000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct uw_asked);
	__uint(max_entries, UW_MAX_PROCS);
} uw_asked SEC(".maps");

/*
 * Each user's asks in uw_asks not yet read (the uid of the task that
 * asked, as the other shares count): a user may have UW_ASKS_USER there
 * at once, so that one user's storm of new processes cannot fill the ring
 * and take the prompt sync from another's (the ring holds
 * UW_ASKS_RING / 16 records, a share for 128 users at once).  User space
 * gives nothing back: mark is the ring's producer position after the
 * user's newest ask, and once the reader's position has passed it, all of
 * them are read.  Racing CPUs of one user may overshoot by an ask each,
 * a bound as share_take()'s.  A refused ask leaves uw_asked as it was:
 * the process asks again at its next sample.  The record, struct
 * uw_asker, is in uwtable.h: user space sees the spare's in the skeleton.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct uw_asker);
	__uint(max_entries, SHARE_USERS);
} uw_askers SEC(".maps");

/* The users that found uw_askers full, judged together as one. */
struct uw_asker uw_asker_spare;

/* May the current user put one more ask in the ring?  Its record, or NULL (counted). */
static __always_inline struct uw_asker *uw_ask_take(void)
{
	__u32 uid = (__u32)bpf_get_current_uid_gid(), zero = 0;
	struct uw_asker *u, none = {};
	struct counters *stat;

	u = bpf_map_lookup_elem(&uw_askers, &uid);
	if (!u) {
		bpf_map_update_elem(&uw_askers, &uid, &none, BPF_NOEXIST);
		u = bpf_map_lookup_elem(&uw_askers, &uid);
		if (!u)
			u = &uw_asker_spare;
	}
	if (bpf_ringbuf_query(&uw_asks, BPF_RB_CONS_POS) >= READ_ONCE(u->mark))
		u->n = 0;	/* all read */
	else if (READ_ONCE(u->n) >= UW_ASKS_USER) {
		stat = bpf_map_lookup_elem(&stats, &zero);
		if (stat)
			__sync_fetch_and_add(&stat->c[CNT_UW_ASKS_REFUSED], 1);
		return NULL;
	}
	return u;
}

/* A function of its own: verified once, not at each walk it follows. */
__noinline int uw_ask(__u32 pid)
{
	struct uw_asked *a, fresh = { .n = 1 };
	__u64 now = bpf_ktime_get_ns();
	struct uw_asker *u;

	a = bpf_map_lookup_elem(&uw_asked, &pid);
	if (a && (a->n >= UW_ASKS || now - a->last_ns <
		  (UW_ASK_GAP_NS << (a->n < UW_ASKS_FAST ? 0 : (a->n - UW_ASKS_FAST) & 15))))
		return 0;
	u = uw_ask_take();
	if (!u)
		return 0;
	if (a) {
		a->last_ns = now;
		a->n++;
	} else {
		fresh.last_ns = now;
		if (bpf_map_update_elem(&uw_asked, &pid, &fresh, BPF_NOEXIST))
			return 0;	/* another CPU asks */
	}
	if (bpf_ringbuf_output(&uw_asks, &pid, sizeof(pid), 0))
		return 0;
	__sync_fetch_and_add(&u->n, 1);
	u->mark = bpf_ringbuf_query(&uw_asks, BPF_RB_PROD_POS);
	return 0;
}

/* x86's struct pt_regs as 8-byte words (UAPI layout, no CO-RE needed). */
#define REG_BP 4
#define REG_AX 10
#define REG_IP 16
#define REG_CS 17
#define REG_SP 19
#define NR_REGS 21

/*
 * One read of user memory by a walk, as the memo keeps it (struct uw_memo):
 * len 8 or 16 bytes at addr, their value.
 */
struct uw_read {
	__u64 addr;
	__u64 len;
	__u64 val[2];
};

#define UW_MEMO_READS 32

/*
 * A read of user memory costs about 80 ns here whatever its size up to a
 * few hundred bytes, and a frame-pointer step is one: most of a walk.
 * So a sample's walk first reads the innermost UW_SLICE_WORDS words of
 * the stack in one go (250 ns) and takes each frame's words from there
 * while they lie inside it.  The task is stopped in the sample, so the
 * copy is what the reads would have found (UW_SLICE_WORDS and
 * uw_read_slice() are in bpf/shared_maps.bpf.h).
 */

/*
 * A table step's row search costs about 230 ns here (a dozen map lookups
 * down the chunks), and most of a program's return addresses are the same
 * few from one sample to the next.  So each CPU keeps the rules it found
 * last, by the table's load (struct uw_map's serial, never reused) and
 * the row address: a rule is a function of those two alone.
 */
struct uw_rule_memo {
	__u64 tag;		/* serial << 32 | row address; 0: empty */
	__u64 rule;
};

#define UW_RULE_SHIFT 9
#define UW_RULES (1u << UW_RULE_SHIFT)

struct uw_state {
	__u64 pc, sp, bp;
	__u64 ax;		/* the leaf's rax: 0 in a thread just cloned */
	__u32 bp_lost;		/* a frame saved rbp where no rule could follow */
	__u32 adjust;		/* 1: pc is a return address, look up pc - 1 */
	__u32 last_map;		/* the mapping of the previous frame */
	__u32 end;		/* enum uw_end: UW_END_DEPTH until a step ends it */
	__u32 unmapped;		/* a PC in none of the list's mappings */
	__u32 pad;
	__u64 table_frames, fp_frames;
	__u64 regs[NR_REGS];	/* the task's user registers (off the BPF stack) */
	struct hashed_stack st;
	__u64 hframes;		/* st's frames hashed as found (spill_hash_frame()) */
	/* A sample's walk: the stack from its sp, read at once (uw_slice_fill()). */
	__u64 slice_base;
	__u32 slice_len;
	__u32 pad2;
	__u64 slice[UW_SLICE_WORDS];
	struct uw_rule_memo rules[UW_RULES];	/* kept from walk to walk */
	/* A memo walk's reads (uw_memo_note()), and whether it may be kept. */
	__u32 n_reads;
	__u32 memo_bad;
	struct uw_read reads[UW_MEMO_READS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct uw_state);
	__uint(max_entries, 1);
} uw_scratch SEC(".maps");

/* Set by the loader: walk from tables (false: frame pointers only). */
const volatile bool unwind_tables = false;
/* Set by the loader on kernels that can make the lists (bpf/klist.bpf.c). */
const volatile bool uw_klist_on = false;
/*
 * Set by the loader on kernels whose exit tracepoint comes before the
 * exit unmaps the memory: a process's last thread keeps what its samples
 * in the rest of its exit are walked from (bpf/profile.bpf.c, uw_exit_keep()).
 */
const volatile bool uw_exit_on = false;
const volatile __u32 max_depth = MAX_STACK_DEPTH;

#define UW_MAX_FRAME (1ULL << 20)	/* no frame is bigger than 1 MiB */
#define UW_USER_TOP (1ULL << 56)	/* x86-64 user addresses lie below, 5-level too */


/* The interrupted registers in a signal frame: struct ucontext at rsp,
 * uc_mcontext at +40; in it rbp is word 10, rsp word 15 and rip word 16. */
#define SIGFRAME_REGS (40 + 10 * 8)
#define SIGFRAME_BP 0
#define SIGFRAME_SP 5
#define SIGFRAME_IP 6

struct uw_walk {
	struct uw_state *s;
	struct uw_proc *proc;
};

static __always_inline int uw_end(struct uw_state *s, enum uw_end why)
{
	s->end = why;
	return 1;
}

/*
 * A user read, logged for the memo (struct uw_memo).  Only 8- and 16-byte
 * reads are logged; any other read, or one too many, or one that failed,
 * leaves the walk out of the memo.
 */
static __always_inline long uw_read_logged(struct uw_state *s, void *dst, __u32 len, __u64 addr)
{
	long err = bpf_probe_read_user(dst, len, (void *)addr);
	struct uw_read *r;
	__u32 n;

	n = s->n_reads;
	if (err || (len != 8 && len != 16) || n >= UW_MEMO_READS) {
		s->memo_bad = 1;
		return err;
	}
	r = &s->reads[n];
	r->addr = addr;
	r->len = len;
	r->val[0] = ((__u64 *)dst)[0];
	r->val[1] = len == 16 ? ((__u64 *)dst)[1] : 0;
	s->n_reads = n + 1;
	return 0;
}

/*
 * A sample's read: from the slice when the words lie in it (8 or 16
 * bytes, aligned), else from the task's memory.
 */
static __always_inline long uw_read_sliced(struct uw_state *s, void *dst, __u32 len, __u64 addr)
{
	__u64 off = addr - s->slice_base, i;

	/* Below the slice, off wraps round and is too big. */
	if ((len == 8 || len == 16) && !(off & 7) && off < s->slice_len &&
	    s->slice_len - off >= len) {
		i = off >> 3;
		((__u64 *)dst)[0] = s->slice[i & (UW_SLICE_WORDS - 1)];
		if (len == 16)
			((__u64 *)dst)[1] = s->slice[(i + 1) & (UW_SLICE_WORDS - 1)];
		return 0;
	}
	return bpf_probe_read_user(dst, len, (void *)addr);
}

/*
 * The slice of the stack at sp; its length, 0 for none.  A thread in the
 * rest of its exit has no memory left to read: its slice is the one kept
 * at the start of its exit from the same sp (uw_exit_slices, kept by
 * uw_exit_keep() in bpf/profile.bpf.c).
 */
static __always_inline __u32 uw_slice_fill(struct uw_state *s)
{
	const struct uw_exit_slice *x;
	__u32 len;

	s->slice_base = s->sp;
	len = uw_read_slice(s->slice, s->sp);
	if (len || !uw_exit_on)
		return len;
	x = bpf_task_storage_get(&uw_exit_slices, bpf_get_current_task_btf(), NULL, 0);
	if (!x || x->sp != s->sp || bpf_probe_read_kernel(s->slice, UW_SLICE_BYTES, x->words))
		return 0;
	return x->len < UW_SLICE_BYTES ? x->len : UW_SLICE_BYTES;
}

/*
 * A walk's read of user memory; memo is a constant: the off-CPU memo's
 * walk logs each read (its words are read again to check the memo), a
 * sample's takes them from the slice.
 */
#define uw_read_user(s, dst, len, addr, memo)					\
	((memo) ? uw_read_logged(s, dst, len, (__u64)(addr)) :			\
		  uw_read_sliced(s, dst, len, (__u64)(addr)))

/*
 * All ones when a <= b, else 0, without a branch: the searches below take
 * no branch per step, so the verifier walks each once instead of every
 * combination of their outcomes.
 */
static __always_inline __u32 uw_le_mask(__u64 a, __u64 b)
{
	__u64 d = b - a;

	/* Hidden from clang, which would turn the arithmetic into a branch. */
	asm volatile("" : "+r"(d));
	return -(__u32)((d >> 63) ^ 1);
}

/*
 * The same for operands anywhere in 64 bits.  uw_le_mask() needs them
 * less than 2^63 apart (true of 32-bit row addresses), which a mapping's
 * start is not: the vsyscall page lies at 0xffffffffff600000, and was
 * taken for "below" every PC, so the search missed the highest mapping
 * (ld.so, most often).  a <= b is "no borrow out of b - a", and the
 * borrow is bit 63 of (~b & a) | (~(b ^ a) & (b - a)).
 */
static __always_inline __u32 uw_le_mask64(__u64 a, __u64 b)
{
	__u64 d = b - a;

	asm volatile("" : "+r"(d));
	d = (~b & a) | (~(b ^ a) & d);
	return -(__u32)((d >> 63) ^ 1);
}

/* The mapping that holds pc: the previous frame's first, then a search. */
static __always_inline const struct uw_map *uw_find_map(const struct uw_proc *p,
							struct uw_state *s, __u64 pc)
{
	__u32 n = p->n_maps, lo = 0, len, i;
	const struct uw_map *m;

	if (n == 0 || n > UW_MAX_MAPS)
		return NULL;
	i = s->last_map & (UW_MAX_MAPS - 1);
	m = &p->maps[i];
	if (i < n && m->start <= pc && pc < m->end)
		return m;
	len = n;
	for (int k = 0; k < UW_MAP_SEARCH_STEPS; k++) {
		__u32 half = len >> 1;

		lo += half & uw_le_mask64(p->maps[(lo + half) & (UW_MAX_MAPS - 1)].start, pc);
		len -= half;
	}
	lo &= UW_MAX_MAPS - 1;
	m = &p->maps[lo];
	if (lo >= n || pc < m->start || pc >= m->end)
		return NULL;
	s->last_map = lo;
	return m;
}

/*
 * The row in force at addr: the last one whose addr is <= it.  First the
 * last chunk that starts at or below addr, then the row inside it.
 */
static __always_inline const struct uw_row *uw_find_row(void *table, __u32 n_chunks,
							__u32 addr)
{
	const struct uw_chunk *chunk;
	__u32 lo = 0, len = n_chunks;

	for (int k = 0; k < UW_CHUNK_STEPS; k++) {
		__u32 half = len >> 1, mid = lo + half;

		/* Small tables need fewer lookups: a table of 40 chunks, six. */
		if (!half)
			break;

		chunk = bpf_map_lookup_elem(table, &mid);
		if (!chunk)
			return NULL;	/* n_chunks is not the table's: no row */
		lo += half & uw_le_mask(chunk->rows[0].addr, addr);
		len -= half;
	}
	chunk = bpf_map_lookup_elem(table, &lo);
	if (!chunk || chunk->rows[0].addr > addr)
		return NULL;
	lo = 0;
	len = UW_CHUNK_ROWS;
	for (int k = 0; k < UW_CHUNK_SHIFT; k++) {
		__u32 half = len >> 1;

		lo += half & uw_le_mask(chunk->rows[(lo + half) & (UW_CHUNK_ROWS - 1)].addr, addr);
		len -= half;
	}
	return &chunk->rows[lo & (UW_CHUNK_ROWS - 1)];
}

/* Step to the caller through the frame-pointer chain at bp. */
static __always_inline int uw_fp_step(struct uw_state *s, bool memo)
{
	__u64 fr[2];

	if (!s)
		return 1;
	if (s->bp_lost)
		return uw_end(s, UW_END_BP_LOST);
	if (!s->bp)
		return uw_end(s, UW_END_ROOT_FP);
	if (s->bp < s->sp || s->bp - s->sp > UW_MAX_FRAME || (s->bp & 7))
		return uw_end(s, UW_END_FP_BAD);
	if (uw_read_user(s, fr, sizeof(fr), s->bp, memo))
		return uw_end(s, UW_END_READ);
	if (!fr[1])
		return uw_end(s, UW_END_ROOT_FP);
	if (fr[1] < 0x1000 || fr[1] >= UW_USER_TOP)
		return uw_end(s, UW_END_FP_BAD);
	s->sp = s->bp + 16;
	s->bp = fr[0];
	s->pc = fr[1];
	s->adjust = 1;
	s->fp_frames++;
	return 0;
}

/* The interrupted registers, saved by the kernel in the signal frame. */
static __always_inline int uw_sigreturn(struct uw_state *s, bool memo)
{
	__u64 r[SIGFRAME_IP + 1];

	if (!s)
		return 1;
	if (uw_read_user(s, r, sizeof(r), s->sp + SIGFRAME_REGS, memo))
		return uw_end(s, UW_END_READ);
	if (r[SIGFRAME_IP] < 0x1000 || r[SIGFRAME_IP] >= UW_USER_TOP)
		return uw_end(s, UW_END_BAD_FRAME);
	s->bp = r[SIGFRAME_BP];
	s->bp_lost = 0;
	s->sp = r[SIGFRAME_SP];
	s->pc = r[SIGFRAME_IP];
	s->adjust = 0;		/* an interrupted instruction, not a return */
	s->table_frames++;
	return 0;
}

/* Step to the caller by the row's rule. */
static __always_inline int uw_cfa_step(struct uw_state *s, __u32 rule, bool memo)
{
	unsigned int op = uw_rule_op(rule), off = uw_rule_cfa_off(rule);
	int slot = uw_rule_bp(rule);
	__u64 cfa, ra, bp;

	if (!s)
		return 1;
	bp = s->bp;

	if (op == UW_OP_CFA_SP)
		cfa = s->sp + off;
	else if (op == UW_OP_CFA_BP && s->bp)
		cfa = s->bp + off;
	else if (op == UW_OP_PLT)
		cfa = s->sp + 8 + ((s->pc & 15) >= off ? 8 : 0);
	else
		return uw_end(s, UW_END_BAD_FRAME);
	if (cfa <= s->sp || cfa - s->sp > UW_MAX_FRAME)
		return uw_end(s, UW_END_BAD_FRAME);
	if (slot == -2) {
		/* rbp pushed first, as most prologues do: one read for both. */
		__u64 fr[2];

		if (uw_read_user(s, fr, sizeof(fr), cfa - 16, memo))
			return uw_end(s, UW_END_READ);
		bp = fr[0];
		ra = fr[1];
		s->bp_lost = 0;
	} else if (uw_read_user(s, &ra, sizeof(ra), cfa - 8, memo)) {
		return uw_end(s, UW_END_READ);
	} else if (slot == UW_BP_UNKNOWN) {
		bp = 0;
		s->bp_lost = 1;
	} else if (slot != UW_BP_SAME &&
		   uw_read_user(s, &bp, sizeof(bp), cfa + 8 * (__s64)slot, memo)) {
		return uw_end(s, UW_END_READ);
	}
	if (!ra)
		return uw_end(s, UW_END_ROOT);
	if (ra < 0x1000 || ra >= UW_USER_TOP)
		return uw_end(s, UW_END_BAD_FRAME);
	s->sp = cfa;
	s->bp = bp;
	s->pc = ra;
	s->adjust = 1;
	s->table_frames++;
	return 0;
}

/* The cache entry for a row address of the table of one load. */
static __always_inline struct uw_rule_memo *uw_rule_slot(struct uw_state *s, __u64 tag)
{
	return &s->rules[((tag * 0x9e3779b97f4a7c15ULL) >> (64 - UW_RULE_SHIFT)) & (UW_RULES - 1)];
}

/* Step from a mapping that has a table. */
static __always_inline int uw_table_step(struct uw_state *s, const struct uw_map *m, int leaf,
					 bool memo)
{
	__u32 table = m->table, n_chunks = m->n_chunks;
	const struct uw_row *row;
	struct uw_rule_memo *c;
	__u64 addr, tag;
	__u32 rule;
	void *rows;

	if (!s)
		return 1;
	addr = s->pc - m->bias - s->adjust;
	tag = ((__u64)m->serial << 32) | (__u32)addr;
	c = uw_rule_slot(s, tag);
	if (!(addr >> 32) && m->serial && c->tag == tag) {
		rule = c->rule;
		goto step;
	}
	rows = bpf_map_lookup_elem(&uw_tables, &table);
	/* A table not loaded yet: the same walk later may go further. */
	if (memo && !rows)
		s->memo_bad = 1;
	if (!rows)
		return leaf ? uw_fp_step(s, memo) : uw_end(s, UW_END_NO_TABLE);
	if (addr >> 32)
		return leaf ? uw_fp_step(s, memo) : uw_end(s, UW_END_GAP);
	row = uw_find_row(rows, n_chunks, addr);
	if (memo && !row)
		s->memo_bad = 1;
	rule = row ? row->rule : UW_OP_GAP;
	if (row && m->serial) {
		c->tag = tag;
		c->rule = rule;
	}
step:
	switch (uw_rule_op(rule)) {
	case UW_OP_CFA_SP:
	case UW_OP_CFA_BP:
	case UW_OP_PLT:
		return uw_cfa_step(s, rule, memo);
	case UW_OP_SIGRETURN:
		return uw_sigreturn(s, memo);
	case UW_OP_STOP:
		return uw_end(s, UW_END_ROOT);
	case UW_OP_CLONE:
		/* The child's registers are the parent's but for rsp and rax. */
		if (s->st.nr == 1 && !s->ax)
			return uw_end(s, UW_END_ROOT);
		return uw_cfa_step(s, (rule & ~0xfu) | UW_OP_CFA_SP, memo);
	case UW_OP_UNSUPPORTED:
		return leaf ? uw_fp_step(s, memo) : uw_end(s, UW_END_UNSUPPORTED);
	default:
		return leaf ? uw_fp_step(s, memo) : uw_end(s, UW_END_GAP);
	}
}

/*
 * CPython's perf trampoline (python -X perf, PYTHONPERFSUPPORT), copied
 * into anonymous memory once per Python function: "sub $8,%rsp; call
 * *%rcx; add $8,%rsp; ret", no frame pointer.  A return address into one
 * follows the call; the first 8 bytes from the sub, little-endian.
 */
#define UW_PY_TRAMPOLINE 0x8348d1ff08ec8348ULL
#define UW_PY_TRAMPOLINE_RET 6	/* the return address's offset in it */
#define UW_PY_TRAMPOLINE_RULE uw_rule(UW_OP_CFA_SP, UW_BP_SAME, 16)

/*
 * Is the return address into a CPython perf trampoline, and rbp no frame
 * pointer?  Then its frame is 16 bytes, rbp untouched.  Its code is read
 * only then: other JIT code, walked by frame pointer, pays nothing.
 */
static __always_inline bool uw_py_trampoline(struct uw_state *s, bool memo)
{
	__u64 code;

	if (!s)
		return false;
	return s->adjust && (s->bp_lost || s->bp < s->sp || s->bp - s->sp > UW_MAX_FRAME ||
			     (s->bp & 7)) &&
	       !uw_read_user(s, &code, sizeof(code), s->pc - UW_PY_TRAMPOLINE_RET, memo) &&
	       code == UW_PY_TRAMPOLINE;
}

/* One frame: record the PC, then step to the caller.  Non-zero ends the walk. */
static __always_inline int uw_frame(struct uw_state *s, struct uw_proc *proc, bool memo)
{
	const struct uw_map *m;
	bool exact;
	__u32 n;

	if (!s || !proc)
		return 1;
	n = s->st.nr;
	if (n >= MAX_STACK_DEPTH || n >= max_depth)
		return uw_end(s, UW_END_DEPTH);
	s->st.ips[n] = s->pc;
	s->st.nr = n + 1;
	s->hframes = spill_hash_frame((const __u64 *)spill_key, s->hframes, s->pc);
	/* The interrupted instruction (the leaf, or past a signal frame). */
	exact = s->adjust == 0;
	m = uw_find_map(proc, s, s->pc);
	if (!m) {
		/* Not in the list the loader wrote: new code, or JIT. */
		s->unmapped = 1;
		return uw_py_trampoline(s, memo) ? uw_cfa_step(s, UW_PY_TRAMPOLINE_RULE, memo) :
		       exact || (proc->flags & UWP_MAPS_CUT) ? uw_fp_step(s, memo) :
		       uw_end(s, UW_END_NO_MAP);
	}
	if (m->flags & UWM_FP)
		return uw_py_trampoline(s, memo) ? uw_cfa_step(s, UW_PY_TRAMPOLINE_RULE, memo) :
		       uw_fp_step(s, memo);
	if (!(m->flags & UWM_TABLE))
		return exact ? uw_fp_step(s, memo) : uw_end(s, UW_END_NO_TABLE);
	return uw_table_step(s, m, exact, memo);
}

static long uw_step(__u64 i, void *data)
{
	struct uw_walk *w = data;

	/* bpf_loop() takes 0 or 1; the steps return any non-zero to end. */
	return uw_frame(w->s, w->proc, false) ? 1 : 0;
}

/* The same step, its reads logged for the memo. */
static long uw_step_memo(__u64 i, void *data)
{
	struct uw_walk *w = data;

	return uw_frame(w->s, w->proc, true) ? 1 : 0;
}

/*
 * The user registers at the sample: the interrupted ones when the CPU was
 * in user mode (regs_in_ctx: ctx is the interrupted pt_regs), else those
 * the task entered the kernel with.  False for a task with no user side
 * (a kernel thread).
 */
static __always_inline bool uw_regs(void *ctx, bool regs_in_ctx, struct uw_state *s)
{
	volatile __u64 *r = (volatile __u64 *)ctx;
	__u64 *regs = s->regs;
	void *task_regs;

	/*
	 * Context fields are loaded one by one at fixed offsets: the
	 * verifier rewrites each load, and refuses a moved context pointer.
	 */
	if (regs_in_ctx && in_user_mode(ctx)) {
		s->pc = r[REG_IP];
		s->sp = r[REG_SP];
		s->bp = r[REG_BP];
		s->ax = r[REG_AX];
		return true;
	}
	task_regs = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!task_regs || bpf_probe_read_kernel(regs, sizeof(s->regs), task_regs))
		return false;
	if ((regs[REG_CS] & 3) != 3)
		return false;
	s->pc = regs[REG_IP];
	s->sp = regs[REG_SP];
	s->bp = regs[REG_BP];
	s->ax = regs[REG_AX];
	return true;
}

/*
 * The memo of an off-CPU switch-in's user walk, kept with the task (task
 * local storage: its own, freed with it, written and read only in its
 * own switch-ins).  A thread that blocks where it blocked last time is
 * walked from the same registers through the same stack again.  A walk
 * is a function of the registers, of the process's mapping list and the
 * tables it names (gen: new for each list the loader writes, which holds
 * the tables of the list it published), and of the words it reads; when
 * all of them are the same, so is the stack, and the memo's is used
 * without a table lookup, after reading the same words again.  Only walks
 * that found every table and row they looked up and whose every read was
 * logged and succeeded are kept.  Loaded for the switch-in's raw
 * tracepoint only, which runs where allocating is safe.
 */
struct uw_memo {
	__u64 pc, sp, bp, ax;	/* the registers the walk began from */
	__u32 gen;		/* uw_proc.gen of the list it used */
	__u32 n_reads;
	__u32 end;
	__u32 pad;
	__u64 table_frames, fp_frames;
	struct uw_read reads[UW_MEMO_READS];
	struct hashed_stack st;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct uw_memo);
} uw_memos SEC(".maps");

/* Set by the loader when uw_memos is created (off-CPU, raw tracepoint). */
const volatile bool uw_memo_on = false;

struct uw_memo_check {
	const struct uw_memo *m;
	bool differ;
};

/* Read one of the memo's words again: the same? */
static long uw_memo_read(__u64 i, void *data)
{
	struct uw_memo_check *mc = data;
	const struct uw_read *r;
	__u64 v[2] = {};

	if (i >= UW_MEMO_READS || i >= mc->m->n_reads)
		return 1;
	r = &mc->m->reads[i];
	if ((r->len == 16 ? bpf_probe_read_user(v, 16, (void *)r->addr) :
			    bpf_probe_read_user(v, 8, (void *)r->addr)) ||
	    v[0] != r->val[0] || v[1] != r->val[1]) {
		mc->differ = true;
		return 1;
	}
	return 0;
}

/* The current task's memo, if its walk would be the same now; else NULL. */
static __always_inline struct uw_memo *uw_memo_find(const struct uw_state *s,
						    const struct uw_proc *proc)
{
	struct uw_memo_check mc = {};
	struct uw_memo *m;

	m = bpf_task_storage_get(&uw_memos, bpf_get_current_task_btf(), NULL, 0);
	if (!m || m->gen != proc->gen || m->pc != s->pc || m->sp != s->sp ||
	    m->bp != s->bp || m->ax != s->ax)
		return NULL;
	mc.m = m;
	bpf_loop(UW_MEMO_READS, uw_memo_read, &mc, 0);
	/* A list replaced while the words were read: walk it. */
	if (mc.differ || *(volatile __u32 *)&proc->gen != m->gen)
		return NULL;
	return m;
}

/* Keep the walk just done (s, from regs, with list gen) as the task's memo. */
static __always_inline void uw_memo_keep(const struct uw_state *s, const __u64 *regs, __u32 gen)
{
	struct uw_memo *m;

	if (s->memo_bad || s->end == UW_END_CHANGED)
		return;
	m = bpf_task_storage_get(&uw_memos, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!m)
		return;
	m->pc = regs[0];
	m->sp = regs[1];
	m->bp = regs[2];
	m->ax = regs[3];
	m->gen = gen;
	m->n_reads = s->n_reads;
	m->end = s->end;
	m->table_frames = s->table_frames;
	m->fp_frames = s->fp_frames;
	bpf_probe_read_kernel(m->reads, sizeof(m->reads), s->reads);
	bpf_probe_read_kernel(&m->st, sizeof(m->st), &s->st);
}

/*
 * Walk the user stack of the current task from the tables of proc, into
 * the per-CPU scratch stack; NULL with ref->err set when there is none.
 * A walk of a process the loader has not listed yet (!synced: from a list
 * made in the kernel, or by frame pointer alone) counts in
 * CNT_UW_FP_WALKS and not in the ends, which describe the walks from the
 * loader's lists only (CNT_UW_WALKS; unwind__advice() compares the two).
 */
static __always_inline struct hashed_stack *uw_walk(void *ctx, bool regs_in_ctx,
						    struct uw_proc *proc, bool synced,
						    struct stack_ref *ref, __u64 *cnt, bool memo,
						    __u64 *hframes)
{
	struct uw_walk w = { .proc = proc };
	struct uw_memo *m;
	struct uw_state *s;
	__u32 zero = 0, gen;
	__u64 regs[4];

	s = bpf_map_lookup_elem(&uw_scratch, &zero);
	if (!s) {
		ref->err = -ENOMEM;
		return NULL;
	}
	s->st.nr = 0;
	s->hframes = spill_hash_init((const __u64 *)spill_key);
	s->bp_lost = 0;
	s->adjust = 0;
	s->last_map = 0;
	s->end = UW_END_DEPTH;
	s->unmapped = 0;
	s->table_frames = 0;
	s->fp_frames = 0;
	if (!uw_regs(ctx, regs_in_ctx, s)) {
		if (synced)
			cnt[CNT_UW_END + UW_END_NO_REGS]++;
		ref->err = -EFAULT;
		return NULL;
	}
	w.s = s;
	gen = proc->gen;
	memo = memo && uw_memo_on && synced;
	if (memo) {
		m = uw_memo_find(s, proc);
		if (m) {
			if (m->end < NR_UW_ENDS)
				cnt[CNT_UW_END + m->end]++;
			cnt[CNT_UW_WALKS]++;
			cnt[CNT_UW_MEMO_HITS]++;
			cnt[CNT_UW_TABLE_FRAMES] += m->table_frames;
			cnt[CNT_UW_FP_FRAMES] += m->fp_frames;
			*hframes = hash_frames(&m->st);
			return &m->st;
		}
		regs[0] = s->pc;
		regs[1] = s->sp;
		regs[2] = s->bp;
		regs[3] = s->ax;
		s->n_reads = 0;
		s->memo_bad = 0;
		bpf_loop(MAX_STACK_DEPTH + 1, uw_step_memo, &w, 0);
	} else {
		s->slice_len = uw_slice_fill(s);
		bpf_loop(MAX_STACK_DEPTH + 1, uw_step, &w, 0);
	}
	/*
	 * A list freed and reused for another process's during the walk
	 * (values of a hash map without preallocation are reused at once):
	 * the frames may be garbage, keep only the leaf.
	 */
	if (*(volatile __u32 *)&proc->gen != gen) {
		s->st.nr = s->st.nr ? 1 : 0;
		s->end = UW_END_CHANGED;
		s->hframes = hash_frames(&s->st);
	}
	*hframes = s->hframes;
	if (synced && s->end < NR_UW_ENDS)
		cnt[CNT_UW_END + s->end]++;
	cnt[synced ? CNT_UW_WALKS : CNT_UW_FP_WALKS]++;
	cnt[CNT_UW_TABLE_FRAMES] += s->table_frames;
	cnt[CNT_UW_FP_FRAMES] += s->fp_frames;
	s->st.end = s->end + 1;
	if (memo)
		uw_memo_keep(s, regs, gen);
	return &s->st;
}

/*
 * After uw_walk() of pid: ask for its list when it has none (the walk
 * was by frame pointer alone), or when the walk met a PC in none of its
 * mappings.
 */
static __always_inline void uw_walked(__u32 pid, bool synced)
{
	struct uw_state *s;
	__u32 zero = 0;

	if (!synced) {
		uw_ask(pid);
		return;
	}
	s = bpf_map_lookup_elem(&uw_scratch, &zero);
	if (s && s->unmapped)
		uw_ask(pid);
}
