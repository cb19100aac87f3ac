// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sync thread of the in-kernel unwinder: see unwind.h.
 *
 * The main thread only queues requests (a pid to sync or to forget); the
 * thread sorts them into a lane per user, serves the users in turn
 * (syncs of running processes first), and owns everything else: the
 * objects and their tables, the slots of the outer map, the processes and
 * what they hold, the users' shares.  The files it reads
 * belong to other users: they are opened through procfs.h (regular files
 * only, the very inode the process maps) and parsed by ehframe.c, which
 * bounds every read.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "unwind/unwind.h"
#include "unwind/ehframe.h"
#include "lib/util.h"
#include "lib/htab.h"
#include "symbols/procfs.h"
#include "symbols/procmaps.h"
#include "bpf/unwind/uwtable.h"
#include "bpf/profile.h"
#include "lib/cputime.h"
#include "lib/log.h"
#include "lib/share.h"
#include "lib/text.h"
#include "lib/worker.h"

#define QUEUE_LEN 4096		/* syncs a flood may queue, shared by users */
#define INBOX_MAX 65536		/* requests not yet sorted into lanes, at most */
#define DRAIN_SYNCS 64		/* syncs sorted into lanes a turn */
#define MAX_SEGS 16		/* PT_LOAD segments kept per object */
#define TABLE_OVERHEAD 512	/* kernel bytes of a map beside its rows */
#define UW_NEW_MAX 256		/* tables loaded in one sync, at most */
#define SLOT_USED 1
#define SLOT_BROKEN 2		/* an insert failed: never used again */
#define GC_PERIOD_S 2
#define ASKS_POLL_MS 50		/* how soon the asks' thread sees a stop */
#define FUSE_SUPER_MAGIC 0x65735546		/* processes and objects checked this often */

enum obj_state {
	OBJ_NEW,		/* being built: nothing decided yet */
	OBJ_TABLE,		/* a table is loaded in slot */
	OBJ_FP,			/* walked by frame pointer: built with them */
	OBJ_NONE,		/* no usable .eh_frame: frame pointer too */
	OBJ_OVER,		/* a table is wanted, and no user that maps it
				 * had room for it: tried again for the next */
};

struct segment {
	__u64 offset, vaddr, filesz;
	__u32 flags;		/* PF_X, PF_W, PF_R */
};

/* One object (file or vdso image) and its table, shared by processes. */
struct object {
	__u64 key, ino;		/* device, size and time hashed; inode */
	enum obj_state state;
	__u32 slot;		/* OBJ_TABLE: in uw_tables */
	__u32 serial;		/* OBJ_TABLE: its load (struct uw_map) */
	__u32 n_rows, n_chunks;
	__u64 base;		/* ELF vaddr of row address 0 */
	__u64 bytes;		/* kernel memory its table takes (OBJ_OVER: would) */
	__u32 refs;		/* processes that hold it now */
	__u32 charged;		/* ... of those, charged for its table and unwinding from it */
	bool loading;		/* loaded, not yet in uw_tables: not evictable */
	__u64 last_used;	/* u->clock at its last use */
	int n_segs;
	struct segment segs[MAX_SEGS];
	/*
	 * A file's: its identity as the kernel's walker sees it (uw_files),
	 * written there while its table is loaded.  Not for the vdso.
	 */
	bool has_file;
	bool published;		/* in uw_files now */
	struct uw_file_key fkey;
	__u64 size;
	struct timespec ctime;
};

/*
 * An object a process holds.  charged: the process's user is charged for
 * the table (u->charges), and the process unwinds from it; else its
 * mappings of the object are walked by frame pointer.
 */
struct held {
	struct object *o;
	bool charged;
};

/* An executable mapping found in a sync, and its object (NULL: none). */
struct vma_ent {
	__u64 start, end, pgoff;
	struct object *o;
	bool table;		/* unwind from o's table */
	bool vdso;
};

/*
 * What a synced process holds.  slot: its user is charged a slot of
 * uw_procs and a mapping list's bytes for it, from its sync until it is
 * forgotten or found to need no list; in_map implies slot.
 */
struct proc {
	__u32 pid;
	__u32 uid;		/* its charged uid at its last sync (procfs_status.charged) */
	__u32 n_held;
	struct held *held;
	bool slot;
	bool in_map;		/* has an entry in uw_procs */
};

/* REQ_RUNNING: a sync of a process that runs, served before REQ_SYNC. */
enum req_op { REQ_SYNC = 1, REQ_FORGET = 2, REQ_RUNNING = 3 };

struct request {
	__u32 pid;
	__u32 op;
};

/* The requests of one user waiting to be served, oldest first. */
struct lane {
	__u32 uid;
	struct request *reqs;	/* reqs[head .. head + n) */
	size_t head, n, cap;
};

struct unwind {
	struct unwind_opts opts;
	int tables_fd, procs_fd, execs_fd;
	int files_fd;		/* uw_files; -1: none */
	int serials_fd;		/* uw_slot_serials; -1: none */
	bool klist_needed;	/* opts.need_klist called (main thread only) */
	/*
	 * Tests only: each request waits sync_delay_ms once taken
	 * (PROFILE_TEST_SYNC_DELAY_MS), one of a listed process
	 * resync_delay_ms more (PROFILE_TEST_RESYNC_DELAY_MS).
	 */
	unsigned long sync_delay_ms, resync_delay_ms;

	/* Shared with the main thread, under lock. */
	pthread_mutex_t lock;
	struct htab pending;	/* pid -> op, for requests in the queue */
	struct htab known;	/* pid -> 1, for processes synced */
	struct unwind_stats stats;
	__u32 serial;		/* of the last table loaded */
	/*
	 * Requests wait in the inbox until the thread moves them to its
	 * lanes; the worker's queue holds a token for each, to wake it.
	 */
	struct worker *worker;
	struct request *inbox;
	size_t n_inbox, cap_inbox;
	size_t queued;		/* in the inbox and the lanes */
	__u64 dropped;		/* requests refused: INBOX_MAX waiting */
	/*
	 * What each user (procfs_status.charged) holds, max-min fair between users (share.h):
	 * slots of uw_procs, slots of uw_tables, and bytes of --unwind-mem.
	 * Written by the thread, read by the report.
	 */
	struct share procs_share, tables_share, mem_share;
	struct share queue_share;	/* REQ_SYNC requests in the lanes */

	/*
	 * The thread's own state (below) is also the inserter's once its
	 * batch is in (settle_batch()): both hold state_lock, taken before
	 * lock when both are.
	 */
	pthread_mutex_t state_lock;
	struct worker *inserter;

	/* The walker's asks (uw_asks) and the thread that reads them. */
	struct ring_buffer *asks;
	pthread_t asks_thread;
	bool asks_started;
	int asks_stop;		/* __atomic: set to end the thread */

	/* The thread's own. */
	struct htab objects;	/* (dev, ino) -> struct object */
	struct htab procs;	/* pid -> struct proc */
	/* [0]: syncs of running processes, [1]: the others; a lane per user. */
	struct lane *lanes[2];
	size_t n_lanes[2], turn[2];
	/*
	 * (object, uid) -> how many of uid's processes unwind from the
	 * object's table: uid is charged a table slot and its bytes while
	 * any does.  Every user pays for each table it uses, whoever loaded
	 * it, so that no user's tables count against another, and a table
	 * in use is never taken back.
	 */
	struct htab charges;
	size_t evict_pos;	/* where the last search for a process to evict ended */
	struct object *vdso;
	const void *vdso_image;	/* ours: the same in every process */
	size_t vdso_size;
	__u32 syncing;		/* the pid being synced: never evicted */
	__u8 used_slots[UW_MAX_TABLES];
	/* Tables loaded in this sync, for insert_tables(). */
	__u32 n_new;
	__u32 new_slots[UW_NEW_MAX];
	int new_fds[UW_NEW_MAX];
	struct object *new_objs[UW_NEW_MAX];
	__u64 clock;		/* syncs so far, for LRU */
	struct uw_proc *scratch;	/* the value written to uw_procs */
	struct vma_ent ents[UW_MAX_MAPS];	/* a sync's mappings */
};

static void request(struct unwind *u, __u32 pid, enum req_op op);

const char *unwind__mode_name(enum unwind_mode mode)
{
	switch (mode) {
	case UNWIND_AUTO:
		return "auto";
	case UNWIND_FP:
		return "fp";
	case UNWIND_DWARF:
		return "dwarf";
	}
	return "?";
}

const char *unwind__end_name(unsigned int end)
{
	static const char *const names[NR_UW_ENDS] = {
		[UW_END_ROOT] = "root",
		[UW_END_ROOT_FP] = "fp root",
		[UW_END_DEPTH] = "depth",
		[UW_END_NO_MAP] = "no mapping",
		[UW_END_NO_TABLE] = "no table",
		[UW_END_GAP] = "no CFI",
		[UW_END_UNSUPPORTED] = "unsupported CFI",
		[UW_END_BAD_FRAME] = "bad frame",
		[UW_END_READ] = "unreadable stack",
		[UW_END_FP_BAD] = "bad frame pointer",
		[UW_END_NO_REGS] = "no registers",
		[UW_END_BP_LOST] = "rbp lost",
		[UW_END_CHANGED] = "list changed",
	};

	return end < NR_UW_ENDS && names[end] ? names[end] : "?";
}

bool unwind__ended_early(__u32 stored_end)
{
	return stored_end > 0 && stored_end - 1 != UW_END_ROOT &&
	       stored_end - 1 != UW_END_ROOT_FP && stored_end - 1 != UW_END_DEPTH;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- objects and tables ---- */

/* The PT_LOAD segments, for mapping offsets to virtual addresses. */
static int read_segments_mem(const void *image, size_t size, struct object *o)
{
	const Elf64_Ehdr *eh = image;

	if (size < sizeof(*eh) || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > size || eh->e_phnum > (size - eh->e_phoff) / sizeof(Elf64_Phdr))
		return -ENOEXEC;
	for (int i = 0; i < eh->e_phnum && o->n_segs < MAX_SEGS; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, (const char *)image + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD)
			o->segs[o->n_segs++] = (struct segment){ ph.p_offset, ph.p_vaddr,
								 ph.p_filesz, ph.p_flags };
	}
	return o->n_segs ? 0 : -ENOEXEC;
}

static int read_segments_fd(int fd, struct object *o)
{
	char buf[sizeof(Elf64_Ehdr) + MAX_SEGS * 4 * sizeof(Elf64_Phdr)];
	Elf64_Ehdr eh;
	ssize_t n;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	/* Read the header and as many program headers as the buffer holds. */
	if (eh.e_phoff > (1u << 20))
		return -ENOEXEC;
	memcpy(buf, &eh, sizeof(eh));
	n = pread(fd, buf + sizeof(eh), sizeof(buf) - sizeof(eh), eh.e_phoff);
	if (n < 0)
		return -errno;
	eh.e_phoff = sizeof(eh);
	if (eh.e_phnum > n / sizeof(Elf64_Phdr))
		eh.e_phnum = n / sizeof(Elf64_Phdr);
	memcpy(buf, &eh, sizeof(eh));
	return read_segments_mem(buf, sizeof(eh) + n, o);
}

static int find_slot(struct unwind *u, __u32 *slot)
{
	for (__u32 i = 0; i < UW_MAX_TABLES; i++) {
		if (!u->used_slots[i]) {
			u->used_slots[i] = SLOT_USED;
			*slot = i;
			return 0;
		}
	}
	return -ENOSPC;
}

static void stats_add(struct unwind *u, __u64 *field, __s64 delta)
{
	pthread_mutex_lock(&u->lock);
	*field += delta;
	pthread_mutex_unlock(&u->lock);
}

/*
 * o's table, by its file, for the walks of processes not listed yet
 * (uw_files, bpf/unwind/uwtable.h): its executable segments, as
 * fill_map() would pick them.  Best effort: a walk without it is walked
 * as before.
 */
static void publish_file(struct unwind *u, struct object *o)
{
	struct uw_file f = {
		.key = o->fkey, .size = o->size,
		.ctime_sec = o->ctime.tv_sec, .ctime_nsec = o->ctime.tv_nsec,
		.base = o->base, .table = o->slot, .n_chunks = o->n_chunks, .serial = o->serial,
	};

	if (u->files_fd < 0 || !o->has_file || o->state != OBJ_TABLE)
		return;
	for (int i = 0; i < o->n_segs && f.n_segs < UW_FILE_SEGS; i++) {
		const struct segment *sg = &o->segs[i];

		if (sg->flags & PF_X)
			f.segs[f.n_segs++] = (struct uw_file_seg){
				.offset = sg->offset, .vaddr = sg->vaddr, .filesz = sg->filesz };
	}
	if (f.n_segs && !bpf_map_update_elem(u->files_fd, &o->fkey, &f, BPF_ANY))
		o->published = true;
}

/* ... gone, unless the entry is another object's now (the file rewritten since). */
static void unpublish_file(struct unwind *u, struct object *o)
{
	struct uw_file f;

	if (!o->published)
		return;
	if (!bpf_map_lookup_elem(u->files_fd, &o->fkey, &f) && f.serial == o->serial)
		bpf_map_delete_elem(u->files_fd, &o->fkey);
	o->published = false;
}

/*
 * The serial of the table in slot (0: none), for the sampler's check of
 * kernel-made lists (bpf/shared_maps.bpf.h, uw_slot_serials).
 */
static void set_slot_serial(struct unwind *u, __u32 slot, __u32 serial)
{
	if (u->serials_fd >= 0)
		bpf_map_update_elem(u->serials_fd, &slot, &serial, BPF_ANY);
}

/* Unload o's table, if it has one; o stays, wanted (OBJ_OVER). */
static void unload_table(struct unwind *u, struct object *o)
{
	if (o->state != OBJ_TABLE)
		return;
	/*
	 * First: no new list may find the table through its file, nor any
	 * walk take it by its serial; the delete returns once every walk
	 * that did has ended.
	 */
	unpublish_file(u, o);
	set_slot_serial(u, o->slot, 0);
	bpf_map_delete_elem(u->tables_fd, &o->slot);
	u->used_slots[o->slot] = 0;
	pthread_mutex_lock(&u->lock);
	u->stats.tables--;
	u->stats.rows -= o->n_rows;
	u->stats.bytes -= o->bytes;
	pthread_mutex_unlock(&u->lock);
	o->state = OBJ_OVER;
}

/* Unload o's table and forget o; no process may hold it. */
static void drop_object(struct unwind *u, struct object *o)
{
	unload_table(u, o);
	if (htab__get(&u->objects, o->key, o->ino) == o)
		htab__del_key(&u->objects, o->key, o->ino);
	free(o);
}

/*
 * Make room by victim's table: no process unwinds from it.  Processes may
 * still hold it uncharged (their users had no room for it, so they walk
 * it by frame pointer): then only the table goes, for the next user with
 * room to load again.  Uncharged holders cannot keep a table loaded.
 */
static void evict_table(struct unwind *u, struct object *victim)
{
	if (victim->refs)
		unload_table(u, victim);
	else
		drop_object(u, victim);
	stats_add(u, &u->stats.evicted, 1);
}

/* The table no process unwinds from that was used least recently, or NULL. */
static struct object *lru_victim(struct unwind *u)
{
	struct object *victim = NULL;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&u->objects, &pos));) {
		struct object *o = e->val;

		if (o->state == OBJ_TABLE && !o->charged && !o->loading &&
		    (!victim || o->last_used < victim->last_used))
			victim = o;
	}
	return victim;
}

/* Unload the tables no process uses, least recently used first, until need fits. */
static bool make_room(struct unwind *u, __u64 need)
{
	for (;;) {
		struct object *victim;
		__u64 used;

		pthread_mutex_lock(&u->lock);
		used = u->stats.bytes;
		pthread_mutex_unlock(&u->lock);
		if (used + need <= u->opts.mem_max)
			return true;
		victim = lru_victim(u);
		if (!victim)
			return false;
		evict_table(u, victim);
	}
}

/* A free slot of uw_tables, evicting an unused table if there is none. */
static int alloc_slot(struct unwind *u, __u32 *slot)
{
	struct object *victim;

	if (!find_slot(u, slot))
		return 0;
	victim = lru_victim(u);
	if (!victim)
		return -ENOSPC;
	evict_table(u, victim);
	return find_slot(u, slot);
}

/*
 * Load t as one BPF array, written through mmap(), for a free slot of
 * uw_tables.  It goes into the outer map with the others of this sync in
 * insert_tables(): each update of a map of maps waits for an RCU grace
 * period (8-15 ms here), a batch waits once.
 */
static int load_table(struct unwind *u, struct object *o, const struct uw_table *t)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__u32 n_chunks = (t->n_rows + UW_CHUNK_ROWS - 1) / UW_CHUNK_ROWS, slot;
	size_t len = (size_t)n_chunks * sizeof(struct uw_chunk);
	void *mem;
	int fd;

	if (n_chunks > UW_MAX_CHUNKS || u->n_new == UW_NEW_MAX || alloc_slot(u, &slot))
		return -ENOSPC;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "uw_table", sizeof(__u32),
			    sizeof(struct uw_chunk), n_chunks, &mopts);
	if (fd < 0) {
		u->used_slots[slot] = 0;
		return -errno;
	}
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		int err = -errno;

		close(fd);
		u->used_slots[slot] = 0;
		return err;
	}
	/* Padding rows lie above every address: searches never stop on them. */
	memset(mem, 0xff, len);
	memcpy(mem, t->rows, t->n_rows * sizeof(struct uw_row));
	munmap(mem, len);
	u->new_slots[u->n_new] = slot;
	u->new_fds[u->n_new] = fd;
	u->new_objs[u->n_new++] = o;
	o->loading = true;
	o->slot = slot;
	o->n_rows = t->n_rows;
	o->n_chunks = n_chunks;
	o->base = t->base;
	o->state = OBJ_TABLE;
	pthread_mutex_lock(&u->lock);
	u->stats.tables++;
	u->stats.rows += t->n_rows;
	/* 0 is no load's: a walker's empty cache entry. */
	if (!++u->serial)
		++u->serial;
	o->serial = u->serial;
	u->stats.bytes += o->bytes;
	pthread_mutex_unlock(&u->lock);
	return 0;
}

/*
 * Tables a sync loaded, on their way into uw_tables.  Each update of a
 * map of maps returns only after an RCU grace period (8-15 ms here, more
 * on a busy host), although the table is in use at once: the sync thread
 * hands the batch to a thread of its own (u->inserter) and goes on with
 * the next process, which would otherwise wait for every new object's
 * grace period.  Until its batch is in, an object is `loading`: neither
 * evicted nor dropped.
 */
struct insert_batch {
	__u32 n;
	__u32 slots[UW_NEW_MAX];
	int fds[UW_NEW_MAX];
	struct object *objs[UW_NEW_MAX];
	bool failed[UW_NEW_MAX];
};

/*
 * The batch is in (or the tables that could not go in are known): settle
 * its objects, under the thread's state lock.  A table that could not go
 * in is forgotten, its object walked by frame pointer, and (resync) the
 * processes that hold it synced again: their lists name its slot.
 */
static void settle_batch(struct unwind *u, struct insert_batch *b, bool resync)
{
	struct hent *e;
	__u32 failed = 0;

	pthread_mutex_lock(&u->state_lock);
	for (__u32 i = 0; i < b->n; i++) {
		struct object *o = b->objs[i];

		if (b->failed[i]) {
			failed++;
			/* Never reused: what the slot holds now is unknown. */
			u->used_slots[o->slot] = SLOT_BROKEN;
			o->state = OBJ_NONE;
			stats_add(u, &u->stats.tables, -1);
			stats_add(u, &u->stats.rows, -(__s64)o->n_rows);
			stats_add(u, &u->stats.bytes, -(__s64)o->bytes);
		} else {
			set_slot_serial(u, o->slot, o->serial);
			publish_file(u, o);
		}
		close(b->fds[i]);	/* the outer map holds it now */
		o->loading = false;
	}
	for (size_t pos = 0; resync && failed && (e = htab__next(&u->procs, &pos));) {
		struct proc *p = e->val;

		for (__u32 i = 0; i < b->n; i++) {
			for (__u32 j = 0; b->failed[i] && j < p->n_held; j++) {
				if (p->held[j].o == b->objs[i])
					request(u, p->pid, REQ_SYNC);
			}
		}
	}
	pthread_mutex_unlock(&u->state_lock);
	stats_add(u, &u->stats.inserting, -(__s64)b->n);
}

/* Put b's tables in, at once if the kernel batches updates of a map of maps, else one by one. */
static void insert_batch(struct unwind *u, struct insert_batch *b)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bopts);
	__u32 count = b->n;
	bool batched;

	batched = !bpf_map_update_batch(u->tables_fd, b->slots, b->fds, &count, &bopts);
	for (__u32 i = 0; i < b->n && !batched; i++) {
		b->failed[i] = bpf_map_update_elem(u->tables_fd, &b->slots[i], &b->fds[i], BPF_ANY);
		if (b->failed[i])
			pr_debug("unwind: cannot load a table: %s", strerror(errno));
	}
	settle_batch(u, b, true);
}

/* The inserter's job: req holds a struct insert_batch *. */
static void serve_insert(void *ctx, unsigned int thread, void *req)
{
	struct insert_batch *b;

	(void)thread;
	memcpy(&b, req, sizeof(b));
	insert_batch(ctx, b);
	free(b);
}

/* A batch the inserter never served (the run ends): its tables never go in. */
static void discard_insert(void *ctx, void *req)
{
	struct insert_batch *b;

	memcpy(&b, req, sizeof(b));
	for (__u32 i = 0; i < b->n; i++)
		b->failed[i] = true;
	settle_batch(ctx, b, false);
	free(b);
}

/*
 * Put the tables loaded in this sync into uw_tables: through the
 * inserter, or here (out of memory) on the stack, and then the caller,
 * which holds the state lock, waits for the grace period.
 */
static void insert_tables(struct unwind *u)
{
	struct insert_batch *b, spare;

	if (!u->n_new)
		return;
	b = calloc(1, sizeof(*b));
	if (!b) {
		memset(&spare, 0, sizeof(spare));
		b = &spare;
	}
	b->n = u->n_new;
	memcpy(b->slots, u->new_slots, b->n * sizeof(b->slots[0]));
	memcpy(b->fds, u->new_fds, b->n * sizeof(b->fds[0]));
	memcpy(b->objs, u->new_objs, b->n * sizeof(b->objs[0]));
	u->n_new = 0;
	stats_add(u, &u->stats.inserting, b->n);
	if (b != &spare && !worker__push_always(u->inserter, &b))
		return;
	/* insert_batch() settles under the state lock. */
	pthread_mutex_unlock(&u->state_lock);
	insert_batch(u, b);
	pthread_mutex_lock(&u->state_lock);
	if (b != &spare)
		free(b);
}

/*
 * Decide what o is from its compiled table: walked by frame pointer, or
 * wanting a table of o->bytes (OBJ_OVER until a user has room for it).
 */
static void settle_object(struct unwind *u, struct object *o, int err,
			  const struct uw_table *t)
{
	__u64 n_chunks = ((__u64)t->n_rows + UW_CHUNK_ROWS - 1) / UW_CHUNK_ROWS;

	if (err || !t->n_rows) {
		o->state = OBJ_NONE;
		stats_add(u, &u->stats.no_table, 1);
		return;
	}
	if (u->opts.mode == UNWIND_AUTO && t->fp_built) {
		o->state = OBJ_FP;
		stats_add(u, &u->stats.fp_objects, 1);
		return;
	}
	/* Too big for any budget: never tried again. */
	o->state = n_chunks > UW_MAX_CHUNKS ? OBJ_NONE : OBJ_OVER;
	o->bytes = n_chunks * sizeof(struct uw_chunk) + TABLE_OVERHEAD;
}

/*
 * The first object that found no room, named in the warning: its path is
 * whatever name the process gave its file, made safe to print.
 */
static void note_over(struct unwind *u, const char *name, size_t name_len)
{
	pthread_mutex_lock(&u->lock);
	if (!u->stats.over_budget++) {
		snprintf(u->stats.first_over, sizeof(u->stats.first_over), "%.*s",
			 (int)name_len, name);
		text__sanitize_str(u->stats.first_over);
	}
	pthread_mutex_unlock(&u->lock);
}

static struct object *new_object(struct unwind *u, __u64 key, __u64 ino)
{
	struct object *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->key = key;
	o->ino = ino;
	if (htab__put(&u->objects, key, ino, o)) {
		free(o);
		return NULL;
	}
	return o;
}

/* Compile o's rows from the file open at fd, or from the vdso image (fd -1). */
static int compile(struct unwind *u, int fd, struct uw_table *t)
{
	if (fd >= 0)
		return ehframe__build_fd(fd, t);
	return ehframe__build_mem(u->vdso_image, u->vdso_size, t);
}

/* Read o's segments and compile its rows into t, and decide what o is. */
static void build_object(struct unwind *u, struct object *o, int fd, struct uw_table *t)
{
	__u64 t0 = now_ns();
	int err;

	err = fd >= 0 ? read_segments_fd(fd, o) :
			read_segments_mem(u->vdso_image, u->vdso_size, o);
	if (!err)
		err = compile(u, fd, t);
	settle_object(u, o, err, t);
	if (fd >= 0 && o->state == OBJ_FP)
		stats_add(u, &u->stats.fp_files, 1);
	pthread_mutex_lock(&u->lock);
	u->stats.built++;
	u->stats.build_ns += now_ns() - t0;
	pthread_mutex_unlock(&u->lock);
}

/*
 * Load the table of o (OBJ_OVER), from t if it was just compiled, else
 * compiled again from fd: only once a user was charged for it, so that
 * a user over its share costs no compile.
 */
static int load_object(struct unwind *u, struct object *o, int fd,
		       const struct uw_table *t)
{
	struct uw_table again = {};
	int err = 0;

	if (!t || !t->n_rows) {
		err = compile(u, fd, &again);
		t = &again;
	}
	if (!err && (!t->n_rows || !make_room(u, o->bytes)))
		err = -ENOSPC;
	if (!err)
		err = load_table(u, o, t);
	ehframe__free(&again);
	return err;
}

/* ---- users' shares ---- */

/*
 * The shares are the thread's, but the report reads them at the end of
 * the run while the thread may still serve: each call is under the lock.
 */
static enum share_verdict share_take(struct unwind *u, struct share *s, __u32 uid,
				     __u64 n, __u32 *evict)
{
	enum share_verdict v;

	pthread_mutex_lock(&u->lock);
	v = share__take(s, uid, n, evict);
	pthread_mutex_unlock(&u->lock);
	return v;
}

/*
 * uid gives back n units of s: taken back for another user when s is the
 * share that asked for it (by), else simply let go.
 */
static void give(struct unwind *u, struct share *s, __u32 uid, __u64 n,
		 const struct share *by)
{
	pthread_mutex_lock(&u->lock);
	if (s == by)
		share__evicted(s, uid, n);
	else
		share__give(s, uid, n);
	pthread_mutex_unlock(&u->lock);
}

static bool evict_one(struct unwind *u, __u32 uid, const struct share *by);

/* Charge uid n units of s, taking back processes of users over their share. */
static bool take(struct unwind *u, struct share *s, __u32 uid, __u64 n)
{
	__u32 evict;

	for (;;) {
		switch (share_take(u, s, uid, n, &evict)) {
		case SHARE_TAKEN:
			return true;
		case SHARE_EVICT:
			if (evict_one(u, evict, s))
				continue;
			pthread_mutex_lock(&u->lock);
			share__refuse(s, uid);
			pthread_mutex_unlock(&u->lock);
			return false;
		case SHARE_REFUSED:
			return false;
		}
	}
}

/* A slot of the map of slots and bytes of --unwind-mem, both or neither. */
static bool take_pair(struct unwind *u, struct share *slots, __u32 uid, __u64 bytes)
{
	if (!take(u, slots, uid, 1))
		return false;
	if (take(u, &u->mem_share, uid, bytes))
		return true;
	give(u, slots, uid, 1, NULL);
	return false;
}

static void give_pair(struct unwind *u, struct share *slots, __u32 uid, __u64 bytes,
		      const struct share *by)
{
	give(u, slots, uid, 1, by);
	give(u, &u->mem_share, uid, bytes, by);
}

/*
 * One more process of uid unwinds from o's table: its first one charges
 * uid a table slot and the table's bytes.  false: no room in uid's share.
 */
static bool charge(struct unwind *u, struct object *o, __u32 uid)
{
	uintptr_t n = (uintptr_t)htab__get(&u->charges, (uintptr_t)o, uid);

	if (!n && !take_pair(u, &u->tables_share, uid, o->bytes))
		return false;
	if (htab__put(&u->charges, (uintptr_t)o, uid, (void *)(n + 1))) {
		if (!n)
			give_pair(u, &u->tables_share, uid, o->bytes, NULL);
		return false;
	}
	return true;
}

static void uncharge(struct unwind *u, struct object *o, __u32 uid,
		     const struct share *by)
{
	uintptr_t n = (uintptr_t)htab__get(&u->charges, (uintptr_t)o, uid);

	if (!n)
		return;
	/* Out of memory to count one fewer: let go of the whole charge. */
	if (n > 1 && !htab__put(&u->charges, (uintptr_t)o, uid, (void *)(n - 1)))
		return;
	htab__del_key(&u->charges, (uintptr_t)o, uid);
	give_pair(u, &u->tables_share, uid, o->bytes, by);
}

/* ---- what a process holds ---- */

struct sync_ctx {
	struct unwind *u;
	int proc_dirfd;
	__u32 uid;		/* the process's user: charged for its tables */
	__u32 n_ents;		/* in u->ents */
	struct held *held;
	__u32 n_held, cap_held;
	__u64 maps_over;
};

/* o in the objects the process holds, made so if it is not; NULL: no memory. */
static struct held *hold(struct sync_ctx *c, struct object *o, bool *fresh)
{
	*fresh = false;
	for (__u32 i = 0; i < c->n_held; i++)
		if (c->held[i].o == o)
			return &c->held[i];
	if (c->n_held == c->cap_held) {
		__u32 cap = c->cap_held ? 2 * c->cap_held : 16;
		struct held *n = realloc(c->held, cap * sizeof(*n));

		if (!n)
			return NULL;
		c->held = n;
		c->cap_held = cap;
	}
	o->refs++;
	o->last_used = c->u->clock;
	*fresh = true;
	c->held[c->n_held] = (struct held){ .o = o };
	return &c->held[c->n_held++];
}

/*
 * The process maps o: hold it, with its table if its user has room for
 * it.  A table not loaded yet is loaded now, from t (just compiled) or
 * compiled again from fd.
 */
static struct held *use_object(struct sync_ctx *c, struct object *o, int fd,
			       const struct uw_table *t)
{
	struct unwind *u = c->u;
	struct held *h;
	bool fresh;

	h = hold(c, o, &fresh);
	if (!h || !fresh || (o->state != OBJ_TABLE && o->state != OBJ_OVER))
		return h;
	if (!charge(u, o, c->uid))
		return h;
	if (o->state == OBJ_OVER && load_object(u, o, fd, t)) {
		uncharge(u, o, c->uid, NULL);
		return h;
	}
	h->charged = true;
	o->charged++;
	return h;
}

static void release(struct unwind *u, struct held *held, __u32 n, __u32 uid,
		    const struct share *by)
{
	for (__u32 i = 0; i < n; i++) {
		held[i].o->refs--;
		if (held[i].charged) {
			held[i].o->charged--;
			uncharge(u, held[i].o, uid, by);
		}
	}
	free(held);
}

/* ---- objects of a sync ---- */

/*
 * The object of a file mapping: cached by identity, else compiled now.
 * A file replaced under the same inode (another size or time) is built
 * again.  NULL when the file cannot be reached or memory is short
 * (*err -ENOMEM).
 */
static struct held *file_object(struct sync_ctx *c, const struct vma *v, int *err)
{
	struct procfs_mapping pm = {
		.start = v->start, .end = v->end,
		.dev = makedev(v->dev_major, v->dev_minor), .ino = v->inode,
		.path = v->path, .path_len = v->path_len, .deleted = v->deleted,
	};
	struct unwind *u = c->u;
	struct uw_table t = {};
	struct held *h = NULL;
	struct object *o;
	struct statfs sfs;
	__u64 mtime_ns, ctime_ns, key;
	struct stat st;
	bool built = false;
	int fd;

	fd = procfs__open_mapped(c->proc_dirfd, &pm);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type == FUSE_SUPER_MAGIC) {
		/* A FUSE daemon may never answer a read: not worth a hang. */
		close(fd);
		return NULL;
	}
	/*
	 * Rewritten in place (another size or time): another object.  The
	 * change time too, which no user can set back, as one can the
	 * modification time of a file rewritten with the same size.
	 */
	mtime_ns = st.st_mtim.tv_sec * 1000000000ull + st.st_mtim.tv_nsec;
	ctime_ns = st.st_ctim.tv_sec * 1000000000ull + st.st_ctim.tv_nsec;
	key = st.st_dev ^ htab__hash(st.st_size, mtime_ns) ^ htab__hash(ctime_ns, st.st_ino);
	o = htab__get(&u->objects, key, st.st_ino);
	if (!o) {
		o = new_object(u, key, st.st_ino);
		if (o) {
			o->has_file = true;
			/* As the kernel keeps it: MAJOR << 20 | MINOR. */
			o->fkey.dev = (__u64)major(st.st_dev) << 20 | minor(st.st_dev);
			o->fkey.ino = st.st_ino;
			o->size = st.st_size;
			o->ctime = st.st_ctim;
			build_object(u, o, fd, &t);
			built = true;
		}
	}
	if (o) {
		h = use_object(c, o, fd, &t);
		*err = h ? 0 : -ENOMEM;
	}
	if (built) {
		if (o->state == OBJ_OVER || (o->state == OBJ_NONE && t.n_rows))
			note_over(u, v->path, v->path_len);
		pr_debug("unwind: %.*s: %zu rows, %s", (int)v->path_len, v->path, t.n_rows,
			 h && h->charged ? "loaded" : o->state == OBJ_FP ? "frame pointers" :
			 o->state == OBJ_NONE && !t.n_rows ? "no table" : "over budget");
	}
	ehframe__free(&t);
	close(fd);
	return h;
}

/*
 * The vdso is the same image in every process on this kernel: ours,
 * parsed once.
 */
static struct held *vdso_object(struct sync_ctx *c, int *err)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct unwind *u = c->u;
	struct uw_table t = {};
	struct held *h;

	if (!u->vdso && eh) {
		u->vdso = calloc(1, sizeof(*u->vdso));
		if (!u->vdso)
			return NULL;
		u->vdso_image = eh;
		/* Its section headers come last: they end the image. */
		u->vdso_size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
		if (u->vdso_size > (1u << 20))
			settle_object(u, u->vdso, -EFBIG, &t);
		else
			build_object(u, u->vdso, -1, &t);
	}
	if (!u->vdso)
		return NULL;
	h = use_object(c, u->vdso, -1, &t);
	*err = h ? 0 : -ENOMEM;
	ehframe__free(&t);
	return h;
}

/* ---- processes ---- */

/*
 * The segment an executable mapping at file offset pgoff shows: the
 * executable one that holds pgoff.  lld packs segments without a page gap
 * on disk, so the read-only segment before it can hold pgoff too.
 */
static const struct segment *exec_segment(const struct object *o, __u64 pgoff)
{
	const struct segment *any = NULL;

	for (int i = 0; i < o->n_segs; i++) {
		const struct segment *s = &o->segs[i];

		if (pgoff < (s->offset & ~4095ull) || pgoff >= s->offset + s->filesz)
			continue;
		if (s->flags & PF_X)
			return s;
		any = any ? any : s;
	}
	return any;
}

/* Fill m for a mapping of object o (NULL: walk it by frame pointer). */
static void fill_map(struct uw_map *m, const struct vma_ent *v)
{
	const struct object *o = v->o;
	const struct segment *s;

	*m = (struct uw_map){ .start = v->start, .end = v->end, .flags = UWM_FP };
	if (v->vdso)
		m->flags |= UWM_VDSO;
	if (!o || !v->table || o->state != OBJ_TABLE || !(s = exec_segment(o, v->pgoff)))
		return;
	/* vaddr = pc - start + pgoff - seg.offset + seg.vaddr; row = vaddr - base */
	m->bias = v->start - v->pgoff + s->offset - s->vaddr + o->base;
	m->table = o->slot;
	m->n_chunks = o->n_chunks;
	m->serial = o->serial;
	m->flags = UWM_TABLE | (v->vdso ? UWM_VDSO : 0);
}

static int add_vma(const struct vma *v, void *arg)
{
	struct sync_ctx *c = arg;
	struct vma_ent *e;
	struct held *h = NULL;
	int err = 0;

	if (!(v->flags & VMA_EXEC))
		return 0;
	if (c->n_ents == UW_MAX_MAPS) {
		c->maps_over++;
		return 0;
	}
	if (v->kind == VMA_FILE)
		h = file_object(c, v, &err);
	else if (v->kind == VMA_VDSO)
		h = vdso_object(c, &err);
	if (err)
		return err;
	e = &c->u->ents[c->n_ents++];
	*e = (struct vma_ent){ .start = v->start, .end = v->end, .pgoff = v->pgoff,
			       .o = h ? h->o : NULL, .table = h && h->charged,
			       .vdso = v->kind == VMA_VDSO };
	return 0;
}

static void unpublish(struct unwind *u, struct proc *p)
{
	if (!p->in_map)
		return;
	bpf_map_delete_elem(u->procs_fd, &p->pid);
	stats_add(u, &u->stats.bytes, -(__s64)sizeof(struct uw_proc));
	p->in_map = false;
}

/* Out of uw_procs, and its user charged no slot for it. */
static void unslot(struct unwind *u, struct proc *p, const struct share *by)
{
	unpublish(u, p);
	if (!p->slot)
		return;
	give_pair(u, &u->procs_share, p->uid, sizeof(struct uw_proc), by);
	p->slot = false;
}

/* Let go of p and all it holds; by: the share that took it back for another user. */
static void drop_proc(struct unwind *u, struct proc *p, const struct share *by)
{
	__u32 pid = p->pid;

	unslot(u, p, by);
	release(u, p->held, p->n_held, p->uid, by);
	htab__del_key(&u->procs, pid, 0);
	pthread_mutex_lock(&u->lock);
	u->stats.procs--;
	u->stats.procs_evicted += by != NULL;
	htab__del_key(&u->known, pid, 0);
	pthread_mutex_unlock(&u->lock);
	free(p);
}

static void forget(struct unwind *u, __u32 pid)
{
	struct proc *p = htab__get(&u->procs, pid, 0);

	if (p)
		drop_proc(u, p, NULL);
}

/*
 * Take back one process of uid, over its share, for another user: it is
 * walked by frame pointer from now on and not synced again (it was
 * sampled already).  Whether there was one.
 */
static bool evict_one(struct unwind *u, __u32 uid, const struct share *by)
{
	struct hent *e;

	/* Go on from where the last search ended: each process is looked at once a round. */
	for (size_t n = 0; n < 2; n++) {
		for (size_t pos = u->evict_pos; (e = htab__next(&u->procs, &pos));) {
			struct proc *p = e->val;

			if (p->uid != uid || p->pid == u->syncing || (!p->slot && !p->n_held))
				continue;
			u->evict_pos = pos;
			drop_proc(u, p, by);
			return true;
		}
		if (!u->evict_pos)
			break;
		u->evict_pos = 0;
	}
	return false;
}

static bool any_table(const struct uw_proc *up)
{
	for (__u32 i = 0; i < up->n_maps; i++)
		if (up->maps[i].flags & UWM_TABLE)
			return true;
	return false;
}

/*
 * Write pid's mappings; none if no object of it has a table (FP is
 * cheaper), and then its slot goes back to its user.
 */
static int publish(struct unwind *u, struct proc *p, struct uw_proc *up)
{
	bool want = any_table(up);

	if (want && !p->in_map && !make_room(u, sizeof(*up)))
		want = false;
	if (want && bpf_map_update_elem(u->procs_fd, &p->pid, up, BPF_ANY)) {
		int err = -errno;

		/* The kernel may still hold the old list: drop it with the objects. */
		unslot(u, p, NULL);
		return err;
	}
	if (want) {
		if (!p->in_map)
			stats_add(u, &u->stats.bytes, sizeof(*up));
		p->in_map = true;
		return 0;
	}
	unslot(u, p, NULL);
	stats_add(u, &u->stats.procs_fp, 1);
	return 0;
}

static struct proc *get_proc(struct unwind *u, __u32 pid)
{
	struct proc *p = htab__get(&u->procs, pid, 0);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (htab__put(&u->procs, pid, 0, p)) {
		free(p);
		return NULL;
	}
	pthread_mutex_lock(&u->lock);
	u->stats.procs++;
	htab__put(&u->known, pid, 0, (void *)1);
	pthread_mutex_unlock(&u->lock);
	return p;
}

__u64 unwind__exec_time(int execs_fd, __u32 pid)
{
	__u64 t = 0;

	bpf_map_lookup_elem(execs_fd, &pid, &t);
	return t;
}

/*
 * A slot of uw_procs for p, charged to its user uid: kept from one sync
 * to the next while the user stays the same.  false: no room in uid's
 * share.
 */
static bool claim_slot(struct unwind *u, struct proc *p, __u32 uid)
{
	if (p->slot && p->uid == uid)
		return true;
	unslot(u, p, NULL);
	p->uid = uid;
	if (!take_pair(u, &u->procs_share, uid, sizeof(struct uw_proc)))
		return false;
	p->slot = true;
	return true;
}

/* The list of a sync's mappings, with a new gen. */
static void fill_list(struct unwind *u, const struct sync_ctx *c, struct uw_proc *up)
{
	memset(up, 0, sizeof(*up));
	for (__u32 i = 0; i < c->n_ents; i++)
		fill_map(&up->maps[up->n_maps++], &u->ents[i]);
	up->gen = (__u32)++u->clock;
	up->flags = c->maps_over ? UWP_MAPS_CUT : 0;
}

static int sync_pid(struct unwind *u, __u32 pid)
{
	struct sync_ctx c = { .u = u };
	struct uw_proc *up = u->scratch;
	__u64 t0 = now_ns(), exec_ns = unwind__exec_time(u->execs_fd, pid);
	struct procfs_status ps;
	struct proc *p;
	int err;

	u->clock++;
	c.proc_dirfd = procfs__open_pid(pid);
	if (c.proc_dirfd < 0) {
		forget(u, pid);
		return c.proc_dirfd;
	}
	err = procfs__status(c.proc_dirfd, &ps);
	p = err ? NULL : get_proc(u, pid);
	if (!p) {
		close(c.proc_dirfd);
		forget(u, pid);
		return err ? err : -ENOMEM;
	}
	/* Charged to its user before anything is read: a user over its share costs little. */
	c.uid = ps.charged;
	if (p->uid != c.uid) {
		/* Another user now (setuid): what it held was charged to the old one. */
		release(u, p->held, p->n_held, p->uid, NULL);
		p->held = NULL;
		p->n_held = 0;
	}
	if (!claim_slot(u, p, c.uid)) {
		close(c.proc_dirfd);
		forget(u, pid);
		stats_add(u, &u->stats.procs_refused, 1);
		pr_debug("unwind: %u: no room in the share of uid %u", pid, c.uid);
		return 0;
	}
	/* maps is sorted by address, as the walker's search needs. */
	err = procmaps__read_at(c.proc_dirfd, add_vma, &c);
	close(c.proc_dirfd);
	if (err < 0) {
		/* The tables loaded go in or are let go. */
		insert_tables(u);
		release(u, c.held, c.n_held, c.uid, NULL);
		forget(u, pid);
		return err;
	}
	/*
	 * The list goes in before the new tables (struct insert_batch): the
	 * process's samples are walked from each table as soon as it is in
	 * (a walk that meets a slot still empty ends there, as without a
	 * list, and is not kept as a memo).
	 */
	fill_list(u, &c, up);
	err = publish(u, p, up);
	insert_tables(u);
	/* Hold the new objects before letting go of the old ones. */
	release(u, p->held, p->n_held, c.uid, NULL);
	p->held = c.held;
	p->n_held = c.n_held;
	stats_add(u, &u->stats.maps_over, c.maps_over);
	/*
	 * An exec while the maps were read: the list may be the old image's,
	 * written after the exec program dropped the entry.  Read again.
	 */
	if (unwind__exec_time(u->execs_fd, pid) != exec_ns) {
		unpublish(u, p);
		request(u, pid, REQ_SYNC);
	}
	pr_debug("unwind: synced %u: %u mappings, %u objects, %s, in %.1f ms", pid,
		 up->n_maps, c.n_held, p->in_map ? "written" : "frame pointers only",
		 (now_ns() - t0) / 1e6);
	return err;
}

/*
 * The asks' reader and the sync thread wake for a process's first
 * milliseconds, which a host the workload keeps busy would otherwise let
 * pass while they wait for a time slice: a little ahead of the workload
 * (setpriority() on a thread sets that thread's; a failure, without
 * CAP_SYS_NICE, only leaves it as it was).  Each sync takes 0.1-0.3 ms.
 */
#define UNWIND_NICE -5

static void nice_thread(void)
{
	setpriority(PRIO_PROCESS, (id_t)gettid(), UNWIND_NICE);
}

/*
 * Shared objects nearly every process maps, and we do too: compiled
 * ahead, from our own mappings, before the first sync, so that a new
 * process's first sync finds them loaded (libc alone is 24k rows, 2-8 ms
 * to compile).  Kept as any table no process holds: while --unwind-mem
 * allows.
 */
static const char *const common_objects[] = {
	"libc.so.", "ld-linux-x86-64.so.", "libm.so.",
};

static bool common_object(const struct vma *v)
{
	const char *base = memrchr(v->path, '/', v->path_len);
	size_t len;

	base = base ? base + 1 : v->path;
	len = v->path + v->path_len - base;
	for (size_t i = 0; i < sizeof(common_objects) / sizeof(common_objects[0]); i++) {
		size_t n = strlen(common_objects[i]);

		if (len > n && !memcmp(base, common_objects[i], n))
			return true;
	}
	return false;
}

static int preload_vma(const struct vma *v, void *arg)
{
	struct sync_ctx *c = arg;
	int err = 0;

	if ((v->flags & VMA_EXEC) && v->kind == VMA_FILE && common_object(v))
		file_object(c, v, &err);
	return err;
}

/* The sync thread's first work (worker thread_init): see common_objects. */
static void preload(void *ctx, unsigned int thread)
{
	struct unwind *u = ctx;
	struct sync_ctx c = { .u = u, .uid = getuid() };
	__u64 t0 = now_ns();

	(void)thread;
	nice_thread();
	pthread_mutex_lock(&u->state_lock);
	c.proc_dirfd = procfs__open_pid(getpid());
	if (c.proc_dirfd >= 0) {
		procmaps__read_at(c.proc_dirfd, preload_vma, &c);
		close(c.proc_dirfd);
	}
	insert_tables(u);
	release(u, c.held, c.n_held, c.uid, NULL);
	pthread_mutex_unlock(&u->state_lock);
	t0 = now_ns() - t0;
	pthread_mutex_lock(&u->lock);
	u->stats.ahead_ns = t0 ? t0 : 1;
	pthread_mutex_unlock(&u->lock);
	pr_debug("unwind: %u shared objects compiled ahead in %.1f ms", c.n_held, t0 / 1e6);
}

/* ---- the thread and its queue ---- */

/* Called locked: r is out of the queue. */
static void taken(struct unwind *u, const struct request *r)
{
	htab__del_key(&u->pending, r->pid, 0);
	/* Known from now on: an exec or mmap during the sync asks again. */
	if (r->op == REQ_SYNC || r->op == REQ_RUNNING)
		htab__put(&u->known, r->pid, 0, (void *)1);
}

/*
 * Let go of what no live process needs: processes whose entry the kernel
 * dropped (an exit; an exec whose record was lost, or a list the kernel's
 * made when ld.so mapped objects replaced: synced again) or
 * that are gone, and objects no process holds that have no table (cheap
 * to find again; a file that was over budget gets another chance).
 */
static void collect_garbage(void *ctx)
{
	struct unwind *u = ctx;
	struct hent *e;

	pthread_mutex_lock(&u->state_lock);
	for (size_t pos = 0; (e = htab__next(&u->procs, &pos));) {
		struct proc *p = e->val;
		bool gone = kill(p->pid, 0) && errno == ESRCH;

		if (gone)
			forget(u, p->pid);
		else if (p->in_map &&
			 bpf_map_lookup_elem(u->procs_fd, &p->pid, u->scratch) && errno == ENOENT)
			request(u, p->pid, REQ_SYNC);
	}
	for (size_t pos = 0; (e = htab__next(&u->objects, &pos));) {
		struct object *o = e->val;

		if (!o->refs && !o->loading && o->state != OBJ_TABLE)
			drop_object(u, o);
	}
	pthread_mutex_unlock(&u->state_lock);
}

static void serve_one(struct unwind *u, const struct request *r)
{
	int err;

	pthread_mutex_lock(&u->lock);
	taken(u, r);
	u->queued--;
	pthread_mutex_unlock(&u->lock);
	if (r->op == REQ_FORGET) {
		forget(u, r->pid);
		return;
	}
	u->syncing = r->pid;
	err = sync_pid(u, r->pid);
	u->syncing = 0;
	pthread_mutex_lock(&u->lock);
	u->stats.syncs++;
	u->stats.sync_errors += err != 0;
	pthread_mutex_unlock(&u->lock);
}

/* The user pid is charged to, for its place in the queue; -1 when it cannot be read (gone). */
static __u32 uid_of(__u32 pid)
{
	struct procfs_status ps;
	int dirfd = procfs__open_pid(pid);
	int err;

	if (dirfd < 0)
		return (__u32)-1;
	err = procfs__status(dirfd, &ps);
	close(dirfd);
	return err ? (__u32)-1 : ps.charged;
}

/* r at the end of its user's lane of kind k; -ENOMEM. */
static int lane_push(struct unwind *u, int k, __u32 uid, const struct request *r)
{
	struct lane *l = NULL;

	for (size_t i = 0; i < u->n_lanes[k] && !l; i++)
		if (u->lanes[k][i].uid == uid)
			l = &u->lanes[k][i];
	if (!l) {
		struct lane *n = realloc(u->lanes[k], (u->n_lanes[k] + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		u->lanes[k] = n;
		l = &n[u->n_lanes[k]++];
		*l = (struct lane){ .uid = uid };
	}
	if (l->head + l->n == l->cap) {
		/* Move what waits to the front before growing. */
		if (l->head) {
			memmove(l->reqs, l->reqs + l->head, l->n * sizeof(*l->reqs));
			l->head = 0;
		} else {
			size_t cap = l->cap ? 2 * l->cap : 16;
			struct request *n = realloc(l->reqs, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			l->reqs = n;
			l->cap = cap;
		}
	}
	l->reqs[l->head + l->n++] = *r;
	return 0;
}

/*
 * Move what request() put in the inbox to the lanes: a lane per user and
 * kind (running processes, then the rest).  A forget is served at once:
 * it costs nothing and frees room.
 */
/* Forget r: it will not be served. */
static void drop_request(struct unwind *u, const struct request *r)
{
	pthread_mutex_lock(&u->lock);
	if ((uintptr_t)htab__get(&u->pending, r->pid, 0) == r->op)
		htab__del_key(&u->pending, r->pid, 0);
	u->queued--;
	pthread_mutex_unlock(&u->lock);
}

/* The newest sync uid has waiting, taken back for another user. */
static bool evict_request(struct unwind *u, __u32 uid)
{
	for (size_t i = 0; i < u->n_lanes[1]; i++) {
		struct lane *l = &u->lanes[1][i];

		if (l->uid != uid || !l->n)
			continue;
		drop_request(u, &l->reqs[l->head + --l->n]);
		if (!l->n)
			l->head = 0;
		give(u, &u->queue_share, uid, 1, &u->queue_share);
		return true;
	}
	return false;
}

/*
 * A place in the lanes for a sync of a process of uid, max-min fair
 * between users: a flood of forks or mmaps by one user fills its share,
 * and the rest of its syncs are dropped (the processes are synced at
 * their first sample, if they run).  A sync of a running process needs
 * none: there is at most one a process and exec.
 */
static bool queue_take(struct unwind *u, __u32 uid)
{
	__u32 evict;

	for (;;) {
		switch (share_take(u, &u->queue_share, uid, 1, &evict)) {
		case SHARE_TAKEN:
			return true;
		case SHARE_EVICT:
			if (evict_request(u, evict))
				continue;
			pthread_mutex_lock(&u->lock);
			share__refuse(&u->queue_share, uid);
			pthread_mutex_unlock(&u->lock);
			return false;
		case SHARE_REFUSED:
			return false;
		}
	}
}

/*
 * The kept requests in[0 .. kept) back in the inbox, before those that
 * came while they were sorted.  false: in is the inbox now.
 */
static bool put_back(struct unwind *u, struct request *in, size_t kept, size_t cap)
{
	bool merged = true;

	pthread_mutex_lock(&u->lock);
	if (u->n_inbox && kept + u->n_inbox > cap) {
		struct request *n = realloc(in, (kept + u->n_inbox) * sizeof(*n));

		if (n) {
			in = n;
			cap = kept + u->n_inbox;
		} else {
			merged = false;
		}
	}
	if (merged) {
		if (u->n_inbox)
			memcpy(in + kept, u->inbox, u->n_inbox * sizeof(*in));
		free(u->inbox);
		u->inbox = in;
		u->n_inbox += kept;
		u->cap_inbox = cap;
	}
	pthread_mutex_unlock(&u->lock);
	if (merged)
		return false;
	/* Out of memory: the kept ones are dropped. */
	for (size_t i = 0; i < kept; i++)
		drop_request(u, &in[i]);
	pthread_mutex_lock(&u->lock);
	u->dropped += kept;
	pthread_mutex_unlock(&u->lock);
	return true;
}

/* r into its user's lane, or served now (a forget: it costs nothing, frees room). */
static void sort_request(struct unwind *u, const struct request *r)
{
	__u32 uid;

	if (r->op == REQ_FORGET) {
		serve_one(u, r);
		return;
	}
	uid = uid_of(r->pid);
	if (r->op == REQ_SYNC && !queue_take(u, uid)) {
		drop_request(u, r);
		return;
	}
	if (lane_push(u, r->op == REQ_RUNNING ? 0 : 1, uid, r)) {
		if (r->op == REQ_SYNC)
			give(u, &u->queue_share, uid, 1, NULL);
		serve_one(u, r);
	}
}

/*
 * Move what request() put in the inbox to the lanes: every sync of a
 * running process and every forget, and DRAIN_SYNCS other syncs, so that
 * a flood of forks waits in the inbox without delaying a running process
 * by more than that many reads of a status file.  What is left goes back
 * before what came meanwhile.
 */
static void drain_inbox(struct unwind *u)
{
	struct request *in;
	size_t n, cap, kept = 0, sorted = 0;

	pthread_mutex_lock(&u->lock);
	in = u->inbox;
	n = u->n_inbox;
	cap = u->cap_inbox;
	u->inbox = NULL;
	u->n_inbox = u->cap_inbox = 0;
	pthread_mutex_unlock(&u->lock);
	for (size_t i = 0; i < n; i++) {
		struct request r = in[i];

		if (r.op == REQ_SYNC && sorted == DRAIN_SYNCS) {
			in[kept++] = r;
			continue;
		}
		sorted += r.op == REQ_SYNC;
		sort_request(u, &r);
	}
	if (kept && !put_back(u, in, kept, cap))
		return;
	free(in);
}

/* The oldest request of the next user in turn, of the first kind that has one. */
static bool lane_pop(struct unwind *u, struct request *r)
{
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < u->n_lanes[k]; i++) {
			struct lane *l = &u->lanes[k][(u->turn[k] + i) % u->n_lanes[k]];

			if (!l->n)
				continue;
			*r = l->reqs[l->head++];
			if (!--l->n)
				l->head = 0;
			if (k == 1)
				give(u, &u->queue_share, l->uid, 1, NULL);
			u->turn[k] = (u->turn[k] + i + 1) % u->n_lanes[k];
			return true;
		}
	}
	return false;
}

/*
 * Called with the state lock, for a request of pid just taken: the tests'
 * delays (PROFILE_TEST_SYNC_DELAY_MS, PROFILE_TEST_RESYNC_DELAY_MS), slept
 * with the lock dropped, so that the inserter and the collector go on
 * meanwhile.  After the request is taken, so that no request is served
 * sooner than that after it was made.
 */
static void test_delay(struct unwind *u, __u32 pid)
{
	unsigned long ms = u->sync_delay_ms;

	/* Listed now: the kernel drops lists behind p->in_map's back. */
	if (u->resync_delay_ms && !bpf_map_lookup_elem(u->procs_fd, &pid, u->scratch))
		ms += u->resync_delay_ms;
	if (!ms)
		return;
	pthread_mutex_unlock(&u->state_lock);
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 }, NULL);
	pthread_mutex_lock(&u->state_lock);
}

/*
 * Each request pushed a token: serve one request of the lanes a token,
 * users in turn, so that one user's flood of forks, mmaps or first
 * samples keeps another user's processes waiting one sync at most.
 */
static void serve(void *ctx, unsigned int thread, void *req)
{
	struct unwind *u = ctx;
	struct request r;

	(void)thread;
	(void)req;
	pthread_mutex_lock(&u->state_lock);
	drain_inbox(u);
	if (lane_pop(u, &r)) {
		test_delay(u, r.pid);
		serve_one(u, &r);
	}
	pthread_mutex_unlock(&u->state_lock);
}

/*
 * Queue op for pid unless the same op waits already.  A request that
 * waits in the lanes when taken() clears it from pending is either left
 * out (the sync about to run reads the state it would have read) or
 * queued while its pending entry is then cleared, so that a later one is
 * queued again.  Either is harmless.  Only REQ_RUNNING may go past
 * INBOX_MAX: once a process, as the sampler notes each process once, and
 * once an exec.  The users' shares of the lanes are decided in the thread,
 * which can read whose process it is.
 */
static void request(struct unwind *u, __u32 pid, enum req_op op)
{
	uintptr_t cur;

	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	cur = (uintptr_t)htab__get(&u->pending, pid, 0);
	if (cur == (uintptr_t)op || (op == REQ_SYNC && cur == REQ_RUNNING))
		goto out;		/* already asked for */
	if (op != REQ_RUNNING && u->queued >= INBOX_MAX) {
		u->dropped++;
		goto out;
	}
	if (u->n_inbox == u->cap_inbox) {
		size_t cap = u->cap_inbox ? 2 * u->cap_inbox : 64;
		struct request *n = realloc(u->inbox, cap * sizeof(*n));

		if (!n) {
			u->dropped++;
			goto out;
		}
		u->inbox = n;
		u->cap_inbox = cap;
	}
	/* The token wakes the thread; it finds the request in the inbox. */
	if (worker__push_always(u->worker, &(struct request){ pid, op }))
		goto out;		/* out of memory: counted by the worker */
	u->inbox[u->n_inbox++] = (struct request){ pid, op };
	u->queued++;
	htab__put(&u->pending, pid, 0, (void *)(uintptr_t)op);
out:
	pthread_mutex_unlock(&u->lock);
}

void unwind__sync(struct unwind *u, __u32 pid)
{
	request(u, pid, REQ_SYNC);
}

void unwind__sync_running(struct unwind *u, __u32 pid)
{
	request(u, pid, REQ_RUNNING);
}

void unwind__forget(struct unwind *u, __u32 pid)
{
	request(u, pid, REQ_FORGET);
}

void unwind__new_process(struct unwind *u)
{
	if (!u || u->klist_needed || !u->opts.need_klist)
		return;
	u->klist_needed = true;
	(void)u->opts.need_klist(u->opts.klist_arg);
}

bool unwind__knows(struct unwind *u, __u32 pid)
{
	uintptr_t op;
	bool known;

	if (!u)
		return false;
	pthread_mutex_lock(&u->lock);
	op = (uintptr_t)htab__get(&u->pending, pid, 0);
	known = op == REQ_SYNC || op == REQ_RUNNING || htab__get(&u->known, pid, 0);
	pthread_mutex_unlock(&u->lock);
	return known;
}

void unwind__stats(struct unwind *u, struct unwind_stats *st)
{
	pthread_mutex_lock(&u->lock);
	*st = u->stats;
	st->dropped = worker__dropped(u->worker) + u->dropped;
	pthread_mutex_unlock(&u->lock);
}

/*
 * Objects whose tables found no room: one warning naming the first.  Then
 * the users who filled their share of a table, by name.
 */
static void warn_budget(struct unwind *u)
{
	static const char advice[] = "some of its processes are walked by frame pointer";
	struct unwind_stats st;

	unwind__stats(u, &st);
	if (st.over_budget)
		pr_warn("'%s' and %llu more objects found no room under --unwind-mem %llu; their stacks are walked by frame pointer: raise --unwind-mem",
			st.first_over, (unsigned long long)st.over_budget - 1,
			(unsigned long long)u->opts.mem_max >> 20);
	pthread_mutex_lock(&u->lock);
	share__report(&u->procs_share, advice, REPORT_WARN);
	share__report(&u->tables_share, advice, REPORT_WARN);
	share__report(&u->mem_share, advice, REPORT_WARN);
	share__report(&u->queue_share, advice, REPORT_WARN);
	pthread_mutex_unlock(&u->lock);
}

const char *unwind__advice(enum unwind_mode mode, __u64 fp_files, const __u64 *c)
{
	__u64 walks = c[CNT_UW_WALKS], roots, early, fp_ends;

	/*
	 * The ends count the walks from tables only, but the per-CPU counters
	 * are read while walks go on: more ends than walks say nothing, and
	 * must not wrap the difference.
	 */
	roots = c[CNT_UW_END + UW_END_ROOT] + c[CNT_UW_END + UW_END_ROOT_FP];
	if (roots >= walks)
		return NULL;
	early = walks - roots;
	fp_ends = c[CNT_UW_END + UW_END_FP_BAD] + c[CNT_UW_END + UW_END_BP_LOST];
	if (mode != UNWIND_AUTO || !fp_files || !fp_ends || fp_ends * 2 < early)
		return NULL;
	return "--unwind=dwarf walks code built with frame pointers from its tables too; -v says why walks ended, --unwind-debug marks each stack";
}

const char *unwind__hint(struct unwind *u, const __u64 *c)
{
	struct unwind_stats st;

	if (!u)
		return NULL;
	unwind__stats(u, &st);
	return unwind__advice(u->opts.mode, st.fp_files, c);
}

void unwind__report(struct unwind *u, const __u64 *c, enum report_pass pass)
{
	char ends[512];
	size_t off = 0;

	if (pass == REPORT_WARN) {
		if (u)
			warn_budget(u);
		return;
	}
	if (u)
		pr_info("unwind: %s; walks %llu from tables, %llu before the process was listed or its list brought up to date (%llu of those from a list made in the kernel, the rest by frame pointer alone); frames %llu by table, %llu by frame pointer",
			unwind__mode_name(u->opts.mode), (unsigned long long)c[CNT_UW_WALKS],
			(unsigned long long)c[CNT_UW_FP_WALKS],
			(unsigned long long)c[CNT_UW_KLIST_WALKS],
			(unsigned long long)c[CNT_UW_TABLE_FRAMES],
			(unsigned long long)c[CNT_UW_FP_FRAMES]);
	else
		pr_info("unwind: fp; walks %llu by frame pointer alone",
			(unsigned long long)c[CNT_UW_FP_WALKS]);
	for (unsigned int e = 0; e < NR_UW_ENDS && off < sizeof(ends); e++)
		off += snprintf(ends + off, sizeof(ends) - off, "%s%s %llu", e ? ", " : "",
				unwind__end_name(e), (unsigned long long)c[CNT_UW_END + e]);
	pr_info("unwind ends: %s", ends);
}

void unwind__report_tables(struct unwind *u, const __u64 *c)
{
	struct unwind_stats st;

	if (!u)
		return;
	unwind__stats(u, &st);
	pr_info("unwind tables: %llu loaded, %llu rows, %llu KiB of kernel memory with mapping lists; objects: %llu compiled in %.1f ms, %llu built with frame pointers, %llu without .eh_frame, %llu over --unwind-mem, %llu evicted",
		(unsigned long long)st.tables, (unsigned long long)st.rows,
		(unsigned long long)st.bytes >> 10, (unsigned long long)st.built,
		st.build_ns / 1e6, (unsigned long long)st.fp_objects,
		(unsigned long long)st.no_table, (unsigned long long)st.over_budget,
		(unsigned long long)st.evicted);
	pr_info("unwind processes: %llu synced now (%llu syncs, %llu failed, %llu with no table, %llu asked by the walker, %llu asks refused over a user's share), %llu mappings past %d, %llu requests dropped, %llu refused and %llu taken back by users' shares",
		(unsigned long long)st.procs, (unsigned long long)st.syncs,
		(unsigned long long)st.sync_errors, (unsigned long long)st.procs_fp,
		(unsigned long long)st.asks, (unsigned long long)c[CNT_UW_ASKS_REFUSED],
		(unsigned long long)st.maps_over, UW_MAX_MAPS,
		(unsigned long long)st.dropped, (unsigned long long)st.procs_refused,
		(unsigned long long)st.procs_evicted);
	pthread_mutex_lock(&u->lock);
	share__report(&u->procs_share, NULL, REPORT_STATS);
	share__report(&u->tables_share, NULL, REPORT_STATS);
	share__report(&u->mem_share, NULL, REPORT_STATS);
	share__report(&u->queue_share, NULL, REPORT_STATS);
	pthread_mutex_unlock(&u->lock);
}

/* One ask of the walker: a running process, served first. */
static int on_ask(void *ctx, void *data, size_t len)
{
	struct unwind *u = ctx;
	__u32 pid;

	if (len < sizeof(pid))
		return 0;
	memcpy(&pid, data, sizeof(pid));
	pthread_mutex_lock(&u->lock);
	u->stats.asks++;
	pthread_mutex_unlock(&u->lock);
	request(u, pid, REQ_RUNNING);
	return 0;
}

static void *read_asks(void *arg)
{
	struct unwind *u = arg;
	int err;

	nice_thread();
	cputime__thread_start("unwind tables");
	while (!__atomic_load_n(&u->asks_stop, __ATOMIC_ACQUIRE)) {
		err = ring_buffer__poll(u->asks, ASKS_POLL_MS);
		if (err < 0 && err != -EINTR) {
			pr_warn("cannot read the unwinder's asks: %s; new processes wait for the side band",
				strerror(-err));
			break;
		}
	}
	cputime__thread_end();
	return NULL;
}

/* The asks' thread, when the sampler has the ring: else the side band alone asks. */
static int start_asks(struct unwind *u, int fd)
{
	int err;

	if (fd < 0)
		return 0;
	u->asks = ring_buffer__new(fd, on_ask, u, NULL);
	if (!u->asks)
		return -errno;
	err = pthread_create(&u->asks_thread, NULL, read_asks, u);
	if (err)
		return -err;
	u->asks_started = true;
	return 0;
}

static void stop_asks(struct unwind *u)
{
	if (u->asks_started) {
		__atomic_store_n(&u->asks_stop, 1, __ATOMIC_RELEASE);
		pthread_join(u->asks_thread, NULL);
		u->asks_started = false;
	}
	ring_buffer__free(u->asks);
	u->asks = NULL;
}

struct unwind *unwind__new(const struct unwind_opts *opts, const struct unwind_maps *maps)
{
	struct unwind *u = calloc(1, sizeof(*u));
	const char *env;
	int err;
	struct worker_opts wo = { .threads = 1, .req_size = sizeof(struct request),
				  .queue_max = 1, .job = serve, .ctx = u,
				  .tick = collect_garbage, .tick_ms = GC_PERIOD_S * 1000,
				  .thread_init = preload, .name = "unwind tables" };
	struct worker_opts io = { .threads = 1, .req_size = sizeof(struct insert_batch *),
				  .queue_max = 1, .job = serve_insert, .ctx = u,
				  .discard = discard_insert, .name = "unwind inserts" };

	if (!u)
		return NULL;
	u->opts = *opts;
	u->tables_fd = maps->tables_fd;
	u->procs_fd = maps->procs_fd;
	u->execs_fd = maps->execs_fd;
	u->files_fd = maps->files_fd;
	u->serials_fd = maps->serials_fd;
	env = getenv("PROFILE_TEST_SYNC_DELAY_MS");
	if (env) {
		u->sync_delay_ms = strtoul(env, NULL, 10);
		pr_warn("PROFILE_TEST_SYNC_DELAY_MS is set: each request waits %lu ms (tests only)",
			u->sync_delay_ms);
	}
	env = getenv("PROFILE_TEST_RESYNC_DELAY_MS");
	if (env) {
		u->resync_delay_ms = strtoul(env, NULL, 10);
		pr_warn("PROFILE_TEST_RESYNC_DELAY_MS is set: each request of a listed process waits %lu ms (tests only)",
			u->resync_delay_ms);
	}
	u->scratch = malloc(sizeof(*u->scratch));
	pthread_mutex_init(&u->lock, NULL);
	pthread_mutex_init(&u->state_lock, NULL);
	share__init(&u->procs_share, "unwinder's process slots", "processes", UW_MAX_PROCS);
	share__init(&u->tables_share, "unwinder's table slots", "tables", UW_MAX_TABLES);
	share__init(&u->mem_share, "--unwind-mem", "bytes", opts->mem_max);
	share__init(&u->queue_share, "unwinder's request queue", "requests", QUEUE_LEN);
	if (!u->scratch) {
		unwind__free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->inserter = worker__new(&io);
	u->worker = u->inserter ? worker__new(&wo) : NULL;
	err = u->worker ? start_asks(u, maps->asks_fd) : -errno;
	if (err) {
		unwind__free(u);
		errno = -err;
		return NULL;
	}
	return u;
}

void unwind__free(struct unwind *u)
{
	struct hent *e;

	if (!u)
		return;
	/* First: it queues requests for the worker. */
	stop_asks(u);
	/*
	 * A read of some file may block (a network file system that went
	 * away): the profile is written, exit without it.
	 */
	if (u->worker && worker__stop(u->worker, 2000)) {
		pr_warn("the unwinder's thread is stuck reading a file; exiting without it");
		return;
	}
	/*
	 * After the sync thread, which hands it batches; an update takes
	 * milliseconds.  Freed first: a batch settled asks the stopped sync
	 * thread for syncs, which go with it.
	 */
	if (u->inserter && worker__stop(u->inserter, 2000))
		return;
	worker__free(u->inserter);
	worker__free(u->worker);
	for (size_t pos = 0; (e = htab__next(&u->procs, &pos));) {
		struct proc *p = e->val;

		free(p->held);
		free(p);
	}
	for (size_t pos = 0; (e = htab__next(&u->objects, &pos));)
		free(e->val);
	free(u->vdso);
	htab__free(&u->procs);
	htab__free(&u->objects);
	htab__free(&u->pending);
	htab__free(&u->known);
	htab__free(&u->charges);
	share__exit(&u->procs_share);
	share__exit(&u->tables_share);
	share__exit(&u->mem_share);
	share__exit(&u->queue_share);
	free(u->inbox);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < u->n_lanes[k]; i++)
			free(u->lanes[k][i].reqs);
		free(u->lanes[k]);
	}
	free(u->scratch);
	pthread_mutex_destroy(&u->lock);
	pthread_mutex_destroy(&u->state_lock);
	free(u);
}
