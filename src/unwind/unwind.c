// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sync thread of the in-kernel unwinder: see unwind.h.
 *
 * The main thread only queues requests (a pid to sync or to forget); the
 * thread owns everything else: the objects and their tables, the slots of
 * the outer map, the processes and what they hold.  The files it reads
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
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <bpf/bpf.h>

#include "unwind/unwind.h"
#include "unwind/ehframe.h"
#include "lib/util.h"
#include "lib/htab.h"
#include "symbols/procfs.h"
#include "symbols/procmaps.h"
#include "bpf/unwind/uwtable.h"
#include "bpf/profile.h"
#include "lib/log.h"
#include "lib/worker.h"

#define QUEUE_LEN 4096
#define MAX_SEGS 16		/* PT_LOAD segments kept per object */
#define TABLE_OVERHEAD 512	/* kernel bytes of a map beside its rows */
#define UW_NEW_MAX 256		/* tables loaded in one sync, at most */
#define SLOT_USED 1
#define SLOT_BROKEN 2		/* an insert failed: never used again */
#define GC_PERIOD_S 2
#define FUSE_SUPER_MAGIC 0x65735546		/* processes and objects checked this often */

enum obj_state {
	OBJ_NEW,		/* being built: nothing decided yet */
	OBJ_TABLE,		/* a table is loaded in slot */
	OBJ_FP,			/* walked by frame pointer: built with them */
	OBJ_NONE,		/* no usable .eh_frame: frame pointer too */
	OBJ_OVER,		/* no room under --unwind-mem */
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
	__u32 n_rows, n_chunks;
	__u64 base;		/* ELF vaddr of row address 0 */
	__u64 bytes;		/* kernel memory it takes */
	__u32 refs;		/* processes that use it now */
	bool loading;		/* loaded, not yet in uw_tables: not evictable */
	__u64 last_used;	/* u->clock at its last use */
	int n_segs;
	struct segment segs[MAX_SEGS];
};

/* An executable mapping found in a sync, and its object (NULL: none). */
struct vma_ent {
	__u64 start, end, pgoff;
	struct object *o;
	bool vdso;
};

/* What a synced process holds. */
struct proc {
	__u32 pid;
	__u32 n_objs;
	struct object **objs;
	bool in_map;		/* has an entry in uw_procs */
};

enum req_op { REQ_SYNC = 1, REQ_FORGET = 2 };

struct request {
	__u32 pid;
	__u32 op;
};

struct unwind {
	struct unwind_opts opts;
	int tables_fd, procs_fd, execs_fd;

	/* Shared with the main thread, under lock. */
	pthread_mutex_t lock;
	struct htab pending;	/* pid -> op, for requests in the queue */
	struct htab known;	/* pid -> 1, for processes synced */
	struct unwind_stats stats;
	struct worker *worker;	/* its queue of struct request, its thread */

	/* The thread's own. */
	struct htab objects;	/* (dev, ino) -> struct object */
	struct htab procs;	/* pid -> struct proc */
	struct object *vdso;
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

/* Unload o's table and forget o; no process may hold it. */
static void drop_object(struct unwind *u, struct object *o)
{
	if (o->state == OBJ_TABLE) {
		bpf_map_delete_elem(u->tables_fd, &o->slot);
		u->used_slots[o->slot] = 0;
		pthread_mutex_lock(&u->lock);
		u->stats.tables--;
		u->stats.rows -= o->n_rows;
		u->stats.bytes -= o->bytes;
		pthread_mutex_unlock(&u->lock);
	}
	if (htab__get(&u->objects, o->key, o->ino) == o)
		htab__del_key(&u->objects, o->key, o->ino);
	free(o);
}

/* The table no process uses that was used least recently, or NULL. */
static struct object *lru_victim(struct unwind *u)
{
	struct object *victim = NULL;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&u->objects, &pos));) {
		struct object *o = e->val;

		if (o->state == OBJ_TABLE && !o->refs && !o->loading &&
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
		drop_object(u, victim);
		stats_add(u, &u->stats.evicted, 1);
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
	drop_object(u, victim);
	stats_add(u, &u->stats.evicted, 1);
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
	o->bytes = len + TABLE_OVERHEAD;
	o->state = OBJ_TABLE;
	pthread_mutex_lock(&u->lock);
	u->stats.tables++;
	u->stats.rows += t->n_rows;
	u->stats.bytes += o->bytes;
	pthread_mutex_unlock(&u->lock);
	return 0;
}

/*
 * Put the tables loaded in this sync into uw_tables, at once if the
 * kernel batches updates of a map of maps, else one by one.  A table that
 * cannot go in is forgotten: its object is walked by frame pointer.
 */
static void insert_tables(struct unwind *u)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bopts);
	__u32 count = u->n_new;
	bool batched;

	if (!u->n_new)
		return;
	batched = !bpf_map_update_batch(u->tables_fd, u->new_slots, u->new_fds, &count, &bopts);
	for (__u32 i = 0; i < u->n_new; i++) {
		struct object *o = u->new_objs[i];

		if (!batched && bpf_map_update_elem(u->tables_fd, &u->new_slots[i],
						   &u->new_fds[i], BPF_ANY)) {
			pr_debug("unwind: cannot load a table: %s", strerror(errno));
			/* Never reused: what the slot holds now is unknown. */
			u->used_slots[o->slot] = SLOT_BROKEN;
			o->state = OBJ_NONE;
			stats_add(u, &u->stats.tables, -1);
			stats_add(u, &u->stats.rows, -(__s64)o->n_rows);
			stats_add(u, &u->stats.bytes, -(__s64)o->bytes);
		}
		close(u->new_fds[i]);	/* the outer map holds it now */
		o->loading = false;
	}
	u->n_new = 0;
}

/* Decide what o is from its compiled table, and load the table if it is to be used. */
static void settle_object(struct unwind *u, struct object *o, int err,
			  const struct uw_table *t, const char *name, size_t name_len)
{
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
	if (!make_room(u, ((__u64)t->n_rows + UW_CHUNK_ROWS) * sizeof(struct uw_row) +
			  TABLE_OVERHEAD) ||
	    load_table(u, o, t)) {
		o->state = OBJ_OVER;
		pthread_mutex_lock(&u->lock);
		if (!u->stats.over_budget++)
			snprintf(u->stats.first_over, sizeof(u->stats.first_over), "%.*s",
				 (int)name_len, name);
		pthread_mutex_unlock(&u->lock);
	}
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

/* Compile o's table from the file open at fd. */
static void build_object(struct unwind *u, struct object *o, int fd,
			 const char *name, size_t name_len)
{
	struct uw_table t = {};
	__u64 t0 = now_ns();
	int err;

	err = read_segments_fd(fd, o);
	if (!err)
		err = ehframe__build_fd(fd, &t);
	settle_object(u, o, err, &t, name, name_len);
	pr_debug("unwind: %.*s: %zu rows, %s, in %.1f ms", (int)name_len, name, t.n_rows,
		 o->state == OBJ_TABLE ? "loaded" : o->state == OBJ_FP ? "frame pointers" :
		 o->state == OBJ_NONE ? "no table" : "over budget", (now_ns() - t0) / 1e6);
	ehframe__free(&t);
	pthread_mutex_lock(&u->lock);
	u->stats.built++;
	u->stats.build_ns += now_ns() - t0;
	pthread_mutex_unlock(&u->lock);
}

/*
 * The object of a file mapping: cached by identity, else compiled now.
 * A file replaced under the same inode (another size or time) is built
 * again.  NULL when the file cannot be reached.
 */
static struct object *file_object(struct unwind *u, int proc_dirfd, const struct vma *v)
{
	struct procfs_mapping pm = {
		.start = v->start, .end = v->end,
		.dev = makedev(v->dev_major, v->dev_minor), .ino = v->inode,
		.path = v->path, .path_len = v->path_len, .deleted = v->deleted,
	};
	struct object *o;
	struct statfs sfs;
	__u64 mtime_ns, key;
	struct stat st;
	int fd;

	fd = procfs__open_mapped(proc_dirfd, &pm);
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
	/* Rewritten in place (another size or time): another object. */
	mtime_ns = st.st_mtim.tv_sec * 1000000000ull + st.st_mtim.tv_nsec;
	key = st.st_dev ^ htab__hash(st.st_size, mtime_ns);
	o = htab__get(&u->objects, key, st.st_ino);
	if (!o) {
		o = new_object(u, key, st.st_ino);
		if (o)
			build_object(u, o, fd, v->path, v->path_len);
	}
	close(fd);
	return o;
}

/*
 * The vdso is the same image in every process on this kernel: ours,
 * parsed once.
 */
static struct object *vdso_object(struct unwind *u)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct uw_table t = {};
	struct object *o;
	size_t size;
	int err;

	if (u->vdso || !eh)
		return u->vdso;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	/* Its section headers come last: they end the image. */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	err = size > (1u << 20) ? -EFBIG : read_segments_mem(eh, size, o);
	if (!err)
		err = ehframe__build_mem(eh, size, &t);
	settle_object(u, o, err, &t, "[vdso]", 6);
	ehframe__free(&t);
	u->vdso = o;
	return o;
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
	if (!o || o->state != OBJ_TABLE || !(s = exec_segment(o, v->pgoff)))
		return;
	/* vaddr = pc - start + pgoff - seg.offset + seg.vaddr; row = vaddr - base */
	m->bias = v->start - v->pgoff + s->offset - s->vaddr + o->base;
	m->table = o->slot;
	m->n_chunks = o->n_chunks;
	m->flags = UWM_TABLE | (v->vdso ? UWM_VDSO : 0);
}

struct sync_ctx {
	struct unwind *u;
	int proc_dirfd;
	__u32 n_ents;		/* in u->ents */
	struct object **objs;
	__u32 n_objs, cap_objs;
	__u64 maps_over;
};

static int hold(struct sync_ctx *c, struct object *o)
{
	for (__u32 i = 0; i < c->n_objs; i++)
		if (c->objs[i] == o)
			return 0;
	if (c->n_objs == c->cap_objs) {
		__u32 cap = c->cap_objs ? 2 * c->cap_objs : 16;
		struct object **n = realloc(c->objs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->objs = n;
		c->cap_objs = cap;
	}
	c->objs[c->n_objs++] = o;
	o->refs++;
	o->last_used = c->u->clock;
	return 0;
}

static int add_vma(const struct vma *v, void *arg)
{
	struct sync_ctx *c = arg;
	struct vma_ent *e;
	struct object *o = NULL;

	if (!(v->flags & VMA_EXEC))
		return 0;
	if (c->n_ents == UW_MAX_MAPS) {
		c->maps_over++;
		return 0;
	}
	if (v->kind == VMA_FILE)
		o = file_object(c->u, c->proc_dirfd, v);
	else if (v->kind == VMA_VDSO)
		o = vdso_object(c->u);
	if (o && hold(c, o))
		return -ENOMEM;
	e = &c->u->ents[c->n_ents++];
	*e = (struct vma_ent){ .start = v->start, .end = v->end, .pgoff = v->pgoff,
			       .o = o, .vdso = v->kind == VMA_VDSO };
	return 0;
}

static void release(struct unwind *u, struct object **objs, __u32 n)
{
	for (__u32 i = 0; i < n; i++)
		objs[i]->refs--;
	free(objs);
}

static void forget(struct unwind *u, __u32 pid)
{
	struct proc *p = htab__get(&u->procs, pid, 0);

	if (!p)
		return;
	if (p->in_map)
		bpf_map_delete_elem(u->procs_fd, &pid);
	release(u, p->objs, p->n_objs);
	htab__del_key(&u->procs, pid, 0);
	pthread_mutex_lock(&u->lock);
	u->stats.procs--;
	u->stats.bytes -= p->in_map ? sizeof(struct uw_proc) : 0;
	htab__del_key(&u->known, pid, 0);
	pthread_mutex_unlock(&u->lock);
	free(p);
}

static void unpublish(struct unwind *u, struct proc *p)
{
	if (!p->in_map)
		return;
	bpf_map_delete_elem(u->procs_fd, &p->pid);
	stats_add(u, &u->stats.bytes, -(__s64)sizeof(struct uw_proc));
	p->in_map = false;
}

static bool any_table(const struct uw_proc *up)
{
	for (__u32 i = 0; i < up->n_maps; i++)
		if (up->maps[i].flags & UWM_TABLE)
			return true;
	return false;
}

/* Write pid's mappings; none if no object of it has a table (FP is cheaper). */
static int publish(struct unwind *u, struct proc *p, struct uw_proc *up)
{
	bool want = any_table(up);

	if (want && !p->in_map && !make_room(u, sizeof(*up)))
		want = false;
	if (want && bpf_map_update_elem(u->procs_fd, &p->pid, up, BPF_ANY)) {
		int err = -errno;

		/* The kernel may still hold the old list: drop it with the objects. */
		unpublish(u, p);
		return err;
	}
	if (want) {
		if (!p->in_map)
			stats_add(u, &u->stats.bytes, sizeof(*up));
		p->in_map = true;
		return 0;
	}
	unpublish(u, p);
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

/* Execs of pid so far, as the exec program counts them. */
static __u64 exec_count(struct unwind *u, __u32 pid)
{
	__u64 n = 0;

	bpf_map_lookup_elem(u->execs_fd, &pid, &n);
	return n;
}

static int sync_pid(struct unwind *u, __u32 pid)
{
	struct sync_ctx c = { .u = u };
	struct uw_proc *up = u->scratch;
	__u64 t0 = now_ns(), execs = exec_count(u, pid);
	struct proc *p;
	int err;

	u->clock++;
	c.proc_dirfd = procfs__open_pid(pid);
	if (c.proc_dirfd < 0) {
		forget(u, pid);
		return c.proc_dirfd;
	}
	/* maps is sorted by address, as the walker's search needs. */
	err = procmaps__read_at(c.proc_dirfd, add_vma, &c);
	close(c.proc_dirfd);
	/* Whatever happens next, the tables loaded go in or are let go. */
	insert_tables(u);
	p = err >= 0 ? get_proc(u, pid) : NULL;
	if (!p) {
		release(u, c.objs, c.n_objs);
		forget(u, pid);
		return err < 0 ? err : -ENOMEM;
	}
	memset(up, 0, sizeof(*up));
	for (__u32 i = 0; i < c.n_ents; i++)
		fill_map(&up->maps[up->n_maps++], &u->ents[i]);
	up->gen = (__u32)u->clock;
	up->flags = c.maps_over ? UWP_MAPS_CUT : 0;
	err = publish(u, p, up);
	/* Hold the new objects before letting go of the old ones. */
	release(u, p->objs, p->n_objs);
	p->objs = c.objs;
	p->n_objs = c.n_objs;
	stats_add(u, &u->stats.maps_over, c.maps_over);
	/*
	 * An exec while the maps were read: the list may be the old image's,
	 * written after the exec program dropped the entry.  Read again.
	 */
	if (exec_count(u, pid) != execs) {
		unpublish(u, p);
		request(u, pid, REQ_SYNC);
	}
	pr_debug("unwind: synced %u: %u mappings, %u objects, %s, in %.1f ms", pid,
		 up->n_maps, c.n_objs, p->in_map ? "written" : "frame pointers only",
		 (now_ns() - t0) / 1e6);
	return err;
}

/* ---- the thread and its queue ---- */

/* Called locked: r is out of the queue. */
static void taken(struct unwind *u, const struct request *r)
{
	htab__del_key(&u->pending, r->pid, 0);
	/* Known from now on: an exec or mmap during the sync asks again. */
	if (r->op == REQ_SYNC)
		htab__put(&u->known, r->pid, 0, (void *)1);
}

/*
 * Let go of what no live process needs: processes whose entry the kernel
 * dropped (an exit, or an exec whose record was lost: synced again) or
 * that are gone, and objects no process holds that have no table (cheap
 * to find again; a file that was over budget gets another chance).
 */
static void collect_garbage(void *ctx)
{
	struct unwind *u = ctx;
	struct hent *e;

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
}

static void serve(void *ctx, unsigned int thread, void *req)
{
	const struct request *r = req;
	struct unwind *u = ctx;
	int err;

	(void)thread;
	pthread_mutex_lock(&u->lock);
	taken(u, r);
	pthread_mutex_unlock(&u->lock);
	if (r->op == REQ_FORGET) {
		forget(u, r->pid);
		return;
	}
	err = sync_pid(u, r->pid);
	pthread_mutex_lock(&u->lock);
	u->stats.syncs++;
	u->stats.sync_errors += err != 0;
	pthread_mutex_unlock(&u->lock);
}

/*
 * Queue op for pid unless the same op waits already.  The worker takes a
 * request off its queue before serve() clears it from pending: a request
 * in that window is either left out (the sync about to run reads the
 * state it would have read) or queued while its pending entry is then
 * cleared, so that a later one is queued again.  Either is harmless.
 */
static void request(struct unwind *u, __u32 pid, enum req_op op)
{
	uintptr_t cur;

	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	cur = (uintptr_t)htab__get(&u->pending, pid, 0);
	if (cur == (uintptr_t)op)
		goto out;		/* already asked for */
	if (worker__push(u->worker, &(struct request){ pid, op }))
		goto out;		/* full: counted by the worker */
	htab__put(&u->pending, pid, 0, (void *)(uintptr_t)op);
out:
	pthread_mutex_unlock(&u->lock);
}

void unwind__sync(struct unwind *u, __u32 pid)
{
	request(u, pid, REQ_SYNC);
}

void unwind__forget(struct unwind *u, __u32 pid)
{
	request(u, pid, REQ_FORGET);
}

bool unwind__knows(struct unwind *u, __u32 pid)
{
	bool known;

	if (!u)
		return false;
	pthread_mutex_lock(&u->lock);
	known = (uintptr_t)htab__get(&u->pending, pid, 0) == REQ_SYNC ||
		htab__get(&u->known, pid, 0);
	pthread_mutex_unlock(&u->lock);
	return known;
}

void unwind__stats(struct unwind *u, struct unwind_stats *st)
{
	pthread_mutex_lock(&u->lock);
	*st = u->stats;
	st->dropped = worker__dropped(u->worker);
	pthread_mutex_unlock(&u->lock);
}

/* Objects whose tables found no room: one warning naming the first. */
static void warn_budget(struct unwind *u)
{
	struct unwind_stats st;

	unwind__stats(u, &st);
	if (st.over_budget)
		pr_warn("'%s' and %llu more objects found no room under --unwind-mem %llu; their stacks are walked by frame pointer: raise --unwind-mem",
			st.first_over, (unsigned long long)st.over_budget - 1,
			(unsigned long long)u->opts.mem_max >> 20);
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
	pr_info("unwind: %s; walks %llu from tables, %llu by the kernel's frame-pointer walk; frames %llu by table, %llu by frame pointer",
		u ? unwind__mode_name(u->opts.mode) : "fp",
		(unsigned long long)c[CNT_UW_WALKS], (unsigned long long)c[CNT_UW_FP_WALKS],
		(unsigned long long)c[CNT_UW_TABLE_FRAMES], (unsigned long long)c[CNT_UW_FP_FRAMES]);
	for (unsigned int e = 0; e < NR_UW_ENDS && off < sizeof(ends); e++)
		off += snprintf(ends + off, sizeof(ends) - off, "%s%s %llu", e ? ", " : "",
				unwind__end_name(e), (unsigned long long)c[CNT_UW_END + e]);
	pr_info("unwind ends: %s", ends);
}

void unwind__report_tables(struct unwind *u)
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
	pr_info("unwind processes: %llu synced now (%llu syncs, %llu failed, %llu with no table), %llu mappings past %d, %llu requests dropped",
		(unsigned long long)st.procs, (unsigned long long)st.syncs,
		(unsigned long long)st.sync_errors, (unsigned long long)st.procs_fp,
		(unsigned long long)st.maps_over, UW_MAX_MAPS,
		(unsigned long long)st.dropped);
}

struct unwind *unwind__new(const struct unwind_opts *opts, const struct unwind_maps *maps)
{
	struct unwind *u = calloc(1, sizeof(*u));
	struct worker_opts wo = { .threads = 1, .req_size = sizeof(struct request),
				  .queue_max = QUEUE_LEN, .job = serve, .ctx = u,
				  .tick = collect_garbage, .tick_ms = GC_PERIOD_S * 1000 };

	if (!u)
		return NULL;
	u->opts = *opts;
	u->tables_fd = maps->tables_fd;
	u->procs_fd = maps->procs_fd;
	u->execs_fd = maps->execs_fd;
	u->scratch = malloc(sizeof(*u->scratch));
	pthread_mutex_init(&u->lock, NULL);
	if (!u->scratch) {
		unwind__free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->worker = worker__new(&wo);
	if (!u->worker) {
		int err = errno;

		unwind__free(u);
		errno = err;
		return NULL;
	}
	return u;
}

void unwind__free(struct unwind *u)
{
	struct hent *e;

	if (!u)
		return;
	/*
	 * A read of some file may block (a network file system that went
	 * away): the profile is written, exit without it.
	 */
	if (u->worker && worker__stop(u->worker, 2000)) {
		pr_warn("the unwinder's thread is stuck reading a file; exiting without it");
		return;
	}
	worker__free(u->worker);
	for (size_t pos = 0; (e = htab__next(&u->procs, &pos));) {
		struct proc *p = e->val;

		free(p->objs);
		free(p);
	}
	for (size_t pos = 0; (e = htab__next(&u->objects, &pos));)
		free(e->val);
	free(u->vdso);
	htab__free(&u->procs);
	htab__free(&u->objects);
	htab__free(&u->pending);
	htab__free(&u->known);
	free(u->scratch);
	pthread_mutex_destroy(&u->lock);
	free(u);
}
