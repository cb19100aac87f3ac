// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/uio.h>
#include <bpf/bpf.h>
#include <gelf.h>

#include "interp/python/python.h"
#include "bpf/profile.h"
#include "interp/python/pycode.h"
#include "interp/python/pyversions.h"
#include "symbols/elf_file.h"
#include "symbols/procfs.h"
#include "symbols/procmaps.h"
#include "lib/htab.h"
#include "lib/share.h"
#include "symbols/caps.h"
#include "lib/log.h"
#include "lib/share.h"
#include "lib/text.h"
#include "lib/util.h"
#include "lib/worker.h"
#include "trace/trace.h"
#include "unwind/unwind.h"

/*
 * Notes waiting for the thread, at most, shared max-min fair between users:
 * more are dropped and counted.
 */
#define QUEUE_MAX 4096
/* First-sampled processes waiting to be looked at before the queue, at most. */
#define URGENT_MAX 256
/* Symbols looked at in one table, at most: a hostile file has millions. */
#define SYMS_MAX (4u << 20)
/* Objects of a process looked at for CPython: the executable and libpython. */
#define CANDIDATES_MAX 4
/* Looks at a process that exec'd while it was read, at most, in a row. */
#define DETECT_TRIES 3
/*
 * Processes whose executable waits for its libpython, at most, and for
 * how long after the last one came: see python__waiting().
 */
#define WAITING_MAX 1024
#define WAITING_NS 1000000000ull

/* What a file holds of CPython: addresses as ELF virtual addresses. */
struct pyobj {
	bool python;			/* has _PyRuntime */
	bool needs_libpython;		/* DT_NEEDED: its CPython is in a libpython */
	__u64 runtime, version, code_type, str_type, bytes_type;
	__u64 vaddr0;			/* the vaddr file offset 0 is loaded at */
	unsigned int name_minor;	/* 3.X from the file's name, or 0 */
	__u64 size, mtime;		/* of the file scanned */
};

/*
 * A code object named: it owns its strings and line index, all counted in
 * bytes against its user's share of py->names, and freed with it.
 */
struct pycode_ent {
	struct pycode code;
	__u64 addr, ident;		/* its key in owner->codes: address and
					 * identity (pyframe.h, py_code_ident()) */
	struct pyproc *owner;
	struct pyuser *user;		/* owner's: charged for bytes */
	char *label;			/* "func (short file)" */
	size_t bytes;
	struct pycode_ent *older, *newer;	/* in user's list */
	/*
	 * Its names' copies in py->report_names, made for report number
	 * copied_in (py->reports + 1; 0: none yet), NULL if refused then.
	 */
	__u64 copied_in;
	const char *func_copy, *file_copy, *label_copy;
};

/*
 * What one user's processes hold of py->names: their code objects, oldest
 * first (the first taken back for another user), and the names the
 * current report gave their frames.
 */
struct pyuser {
	__u32 uid;
	struct pycode_ent *oldest, *newest;
	__u64 report_bytes;		/* in py->report_names */
	/* Its notes waiting for the reader, oldest first (py->note_share). */
	struct request *notes, *notes_last;
	struct pyuser *next_turn;	/* in py's ring of users with notes */
	bool has_turn;
};

struct pyproc {
	__u32 pid;
	struct pyuser *user;		/* its owner's budget (its charged uid) */
	__u32 uid;			/* its owner (procfs_status.charged), in py->proc_share */
	__u64 seq;			/* of the request it was found for */
	__u64 exec_ns;			/* its last exec's time then (uw_execs), 0: none */
	bool held;			/* in interp_procs: counted in py->proc_share */
	bool dead;			/* exited: no more reads */
	__u64 dead_at;			/* py->reports when it exited */
	struct py_proc bpf;		/* its interp_procs entry's data */
	struct py_layout layout;
	struct pytypes types;
	struct htab codes;		/* (address, identity) -> struct pycode_ent */
	struct pyproc *next_gone;	/* on py->gone, replaced by another */
};

enum req_op {
	REQ_DETECT,		/* first sampled: look, unless known already */
	REQ_EXEC,		/* a new image: look again */
	REQ_FORK,		/* a process found forked words[0]: its copy */
	REQ_FORGET,
	REQ_NOTE,
};

/* Queued by its address: notes are of any length. */
struct request {
	struct request *next;		/* REQ_NOTE: its user's next note */
	enum req_op op;
	__u32 pid;			/* REQ_FORK: the parent */
	__u64 seq;			/* python->seq when it was made */
	__u32 nr;			/* REQ_NOTE, REQ_FORK: words */
	__u64 words[];
};

/* A process first sampled or exec'd, to be looked at before the queue. */
struct urgent {
	__u32 pid;
	bool exec;
	__u64 seq;			/* of its request in the queue */
};

struct python {
	struct python_maps maps;
	bool lines;			/* --py-lines */
	/*
	 * Its queue of struct request *, its thread.  A note is queued as
	 * NULL: serve the next user's turn (py->turn_first).
	 */
	struct worker *worker;
	__u64 seq;			/* requests made: by the tracker's thread only */
	pthread_mutex_t lock;		/* everything below */
	bool stop;			/* python__free() is under way */
	struct htab procs;		/* pid -> struct pyproc */
	struct pyproc *gone;		/* dead, waiting for python__reap() */
	struct htab objects;		/* file key -> struct pyobj */
	/* pid -> 1: waiting for its libpython, until wait_until (ns). */
	struct htab waiting;
	/* pid -> 1: counted in stats.procs, whatever it execs, until it exits. */
	struct htab counted;
	/* child pid -> its fork's note (REQ_FORK), while the note waits. */
	struct htab forks;
	__u64 wait_until;
	__u64 looks;			/* REQ_DETECT and REQ_EXEC queued or under way */
	/*
	 * Bytes of names: code entries and this report's frame names, shared
	 * max-min fair between users (procfs_status.charged), PYTHON_MEM_MAX in all.
	 */
	struct share names;
	/*
	 * The names this report's frames point to: copies, so that a code
	 * entry can go at any time; freed by python__reap().
	 */
	struct strpool report_names;
	struct htab users;		/* charged uid -> struct pyuser */
	__u64 reports;
	__u32 in_map;			/* entries written to interp_procs */
	struct share proc_share;	/* interp_procs, between users */
	struct urgent urgent[URGENT_MAX];	/* a ring of them */
	unsigned int urgent_head, urgent_nr;
	/*
	 * Notes wait in their user's list (their process's) and are read one
	 * user at a time, in turn: one user's thousands of new stacks must
	 * not keep another's waiting until its process has exited and can
	 * no longer be read.  The worker's queue holds a turn (NULL) for
	 * each note at most: a note that took another's place takes its turn.
	 */
	struct share note_share;
	struct pyuser *turn_first, *turn_last;
	__u64 turns;			/* turns in the worker's queue */
	bool fsbase_warned;		/* fsbase_ready() said the offset is missing */
	/*
	 * Tests (t99): the first look that finds CPython waits this long
	 * before it publishes, as a slow read would; the worker's only.
	 */
	unsigned int look_delay_ms;
	/* Tests (t81): each fork's inheritance waits this long, as a reader starved of CPU. */
	unsigned int inherit_delay_ms;
	struct python_stats stats;
};

/* Tests: hold the reader ms milliseconds (0: not at all). */
static void test_delay(unsigned int ms)
{
	struct timespec d = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	if (ms)
		nanosleep(&d, NULL);
}

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

/* ---- reading a process ---- */

static int read_mem(void *ctx, __u64 addr, void *buf, size_t len)
{
	pid_t pid = (pid_t)(uintptr_t)ctx;
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static struct pymem proc_mem(__u32 pid)
{
	return (struct pymem){ .read = read_mem, .ctx = (void *)(uintptr_t)pid };
}

/* ---- finding CPython in a file ---- */

static void match_symbol(struct pyobj *o, const char *name, __u64 value)
{
	if (!strcmp(name, "_PyRuntime"))
		o->runtime = value;
	else if (!strcmp(name, "Py_Version"))
		o->version = value;
	else if (!strcmp(name, "PyCode_Type"))
		o->code_type = value;
	else if (!strcmp(name, "PyUnicode_Type"))
		o->str_type = value;
	else if (!strcmp(name, "PyBytes_Type"))
		o->bytes_type = value;
}

/* Is section link a string table within CAP_SECTION_BYTES?  libelf reads it whole. */
static bool strtab_ok(Elf *elf, size_t link)
{
	Elf_Scn *scn = elf_getscn(elf, link);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_type == SHT_STRTAB &&
	       sh.sh_size <= CAP_SECTION_BYTES;
}

/*
 * The first .dynsym and the first .symtab, each within CAP_SECTION_BYTES:
 * a hostile file may hold any number of symbol tables, each as big as the
 * file, and libelf reads each one it is asked for into memory.
 */
static void scan_symbols(Elf *elf, struct pyobj *o)
{
	bool seen_dynsym = false, seen_symtab = false;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || sh.sh_size > CAP_SECTION_BYTES ||
		    !strtab_ok(elf, sh.sh_link))
			continue;
		if (sh.sh_type == SHT_DYNSYM && !seen_dynsym)
			seen_dynsym = true;
		else if (sh.sh_type == SHT_SYMTAB && !seen_symtab)
			seen_symtab = true;
		else
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		if (n > SYMS_MAX)
			n = SYMS_MAX;
		for (size_t i = 0; i < n; i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value ||
			    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && (name[0] == '_' || name[0] == 'P'))
				match_symbol(o, name, sym.st_value);
		}
	}
}

/* Does ld.so load a libpython for the file (DT_NEEDED)?  Its first .dynamic only. */
static bool needs_libpython(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		if (!sh.sh_entsize || sh.sh_size > CAP_SECTION_BYTES || !strtab_ok(elf, sh.sh_link) ||
		    !(d = elf_getdata(scn, NULL)))
			return false;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				return false;
			if (dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (name && !strncmp(name, "libpython", 9))
				return true;
		}
		return false;
	}
	return false;
}

/* The vaddr at which file offset 0 is loaded: the first PT_LOAD holds it. */
static int offset0_vaddr(Elf *elf, __u64 *vaddr)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset != 0)
			return -EINVAL;
		*vaddr = ph.p_vaddr & ~4095ull;
		return 0;
	}
	return -ENOENT;
}

/* "python3.11", "libpython3.9.so.1.0", "python3.12d": 11, 9, 12; else 0. */
static unsigned int minor_from_name(const char *path, size_t len)
{
	const char *base = memrchr(path, '/', len), *p, *end = path + len;
	unsigned int minor = 0;

	base = base ? base + 1 : path;
	p = memmem(base, end - base, "python3.", 8);
	if (!p)
		return 0;
	for (p += 8; p < end && *p >= '0' && *p <= '9' && minor < 100; p++)
		minor = minor * 10 + (*p - '0');
	return minor;
}

static void scan_file(int fd, const char *path, size_t len, struct pyobj *o)
{
	Elf *elf = elf_file__begin(fd, NULL, 0);

	memset(o, 0, sizeof(*o));
	if (!elf)
		return;
	scan_symbols(elf, o);
	o->python = o->runtime && !offset0_vaddr(elf, &o->vaddr0);
	o->needs_libpython = !o->python && needs_libpython(elf);
	o->name_minor = minor_from_name(path, len);
	elf_end(elf);
}

/* ---- finding CPython in a process ---- */

struct candidate {
	struct vma v;
	bool exe;			/* else a libpython */
	char path[PATH_MAX];		/* v.path points here */
};

struct scan {
	struct stat exe;
	bool have_exe;
	struct candidate c[CANDIDATES_MAX];
	int n;
};

static bool is_libpython(const struct vma *v)
{
	const char *base = memrchr(v->path, '/', v->path_len);

	base = base ? base + 1 : v->path;
	return v->path + v->path_len - base > 9 && !memcmp(base, "libpython", 9);
}

/* The first mapping (file offset 0) of the executable and of libpython. */
static int add_candidate(const struct vma *v, void *arg)
{
	struct scan *s = arg;
	bool exe;

	if (v->kind != VMA_FILE || v->pgoff || s->n == CANDIDATES_MAX)
		return 0;
	exe = s->have_exe && v->inode == s->exe.st_ino &&
	      makedev(v->dev_major, v->dev_minor) == s->exe.st_dev;
	if ((exe || is_libpython(v)) && v->path_len < PATH_MAX) {
		struct candidate *c = &s->c[s->n++];

		/* v->path points into a line that is gone when we return. */
		c->v = *v;
		c->exe = exe;
		memcpy(c->path, v->path, v->path_len);
		c->v.path = c->path;
	}
	return 0;
}

static const struct pyobj *get_object(struct python *py, int proc_dirfd,
				      const struct vma *v)
{
	struct procfs_mapping m = {
		.start = v->start, .end = v->end, .path = v->path, .path_len = v->path_len,
		.dev = makedev(v->dev_major, v->dev_minor), .ino = v->inode,
		.deleted = v->deleted,
	};
	struct statfs sfs;
	struct pyobj *o;
	struct stat st;
	__u64 mtime;
	int fd;

	fd = procfs__open_mapped(proc_dirfd, &m);
	if (fd < 0)
		return NULL;
	/* A FUSE daemon may never answer a read: not worth a hang. */
	if (fstat(fd, &st) || fstatfs(fd, &sfs) || sfs.f_type == FUSE_SUPER_MAGIC) {
		close(fd);
		return NULL;
	}
	/* Rewritten in place (another size or time): look again. */
	mtime = st.st_mtim.tv_sec * 1000000000ull + st.st_mtim.tv_nsec;
	o = htab__get(&py->objects, st.st_dev, st.st_ino);
	if (o && (o->size != (__u64)st.st_size || o->mtime != mtime)) {
		scan_file(fd, v->path, v->path_len, o);
		o->size = st.st_size;
		o->mtime = mtime;
	} else if (!o && (o = calloc(1, sizeof(*o)))) {
		scan_file(fd, v->path, v->path_len, o);
		o->size = st.st_size;
		o->mtime = mtime;
		if (htab__put(&py->objects, st.st_dev, st.st_ino, o)) {
			free(o);
			o = NULL;
		}
	}
	close(fd);
	return o;
}

/* The layout for what the process says it is; -ENOENT if we have none. */
static int find_layout(const struct pyobj *o, __u64 bias, struct pymem *mem,
		       struct py_layout *l, unsigned int *major, unsigned int *minor)
{
	__u8 dbg[PY_DEBUG_OFFSETS_MAX];
	__u32 hex = 0;

	*major = 3;
	*minor = o->name_minor;
	if (o->version && !mem->read(mem->ctx, bias + o->version, &hex, sizeof(hex))) {
		*major = hex >> 24;
		*minor = (hex >> 16) & 0xff;
	}
	/* 3.13+ describes itself: believe it over a table. */
	if (!mem->read(mem->ctx, bias + o->runtime, dbg, sizeof(dbg)) &&
	    !pyversions__from_debug_offsets(dbg, sizeof(dbg), l))
		return 0;
	return pyversions__lookup(*major, *minor, l);
}

static __u16 field_end(__u16 off, __u16 size)
{
	return off == PY_NO_OFF ? 0 : off + size;
}

/* Bytes of a frame the walker reads: up to the end of its last field. */
static __u16 frame_read(const struct py_offsets *o)
{
	__u16 end = field_end(o->fr_code, 8), e;

	if ((e = field_end(o->fr_previous, 8)) > end)
		end = e;
	if ((e = field_end(o->fr_instr, o->instr_kind == PY_INSTR_PTR ? 8 : 4)) > end)
		end = e;
	if ((e = field_end(o->fr_entry, 1)) > end)
		end = e;
	if ((e = field_end(o->fr_owner, 1)) > end)
		end = e;
	return end;
}

static void free_code(struct pycode_ent *c)
{
	pycode__free(&c->code);
	free(c->label);
	free(c);
}

/* Called locked: c joins its user's list, as the newest. */
static void user_add(struct pyuser *u, struct pycode_ent *c)
{
	c->user = u;
	c->older = u->newest;
	c->newer = NULL;
	if (u->newest)
		u->newest->newer = c;
	else
		u->oldest = c;
	u->newest = c;
}

/* Called locked: c leaves its user's list, and gives back what it held. */
static void user_drop(struct python *py, struct pycode_ent *c, bool evicted)
{
	struct pyuser *u = c->user;

	if (c->older)
		c->older->newer = c->newer;
	else
		u->oldest = c->newer;
	if (c->newer)
		c->newer->older = c->older;
	else
		u->newest = c->older;
	if (evicted)
		share__evicted(&py->names, u->uid, c->bytes);
	else
		share__give(&py->names, u->uid, c->bytes);
}

/*
 * Called locked: forget the code entry c and free it.  No frame points
 * into it: the report's frames have copies of its names.
 */
static void drop_code(struct python *py, struct pycode_ent *c, bool evicted)
{
	htab__del_key(&c->owner->codes, c->addr, c->ident);
	user_drop(py, c, evicted);
	free_code(c);
}

/* Called locked, or at the end: give back what p's code objects held. */
static void free_proc(struct python *py, struct pyproc *p)
{
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&p->codes, &pos));) {
		struct pycode_ent *c = e->val;

		user_drop(py, c, false);
		free_code(c);
	}
	htab__free(&p->codes);
	free(p);
}

/* Called locked: stop walking pid; its names stay until python__reap(). */
static void unpublish(struct python *py, struct pyproc *p)
{
	if (p->dead)
		return;
	p->dead = true;
	p->dead_at = py->reports;
	if (p->held)
		share__give(&py->proc_share, p->uid, 1);
	p->held = false;
	/* python__free() gave up on us: the maps may be gone. */
	if (py->stop)
		return;
	/* The exec or exit program may have deleted it first: count it gone. */
	bpf_map_delete_elem(py->maps.procs_fd, &p->pid);
	if (py->in_map)
		py->in_map--;
	*py->maps.nr_procs = py->in_map;
}

/* Called locked: pid's entry, if it has one, goes to py->gone. */
static void retire(struct python *py, __u32 pid)
{
	struct pyproc *p = htab__get(&py->procs, pid, 0);

	if (!p)
		return;
	unpublish(py, p);
	htab__del_key(&py->procs, pid, 0);
	p->next_gone = py->gone;
	py->gone = p;
}

/* The loader set the offset before load (pyinterp.c), or could not. */
static bool fsbase_ready(struct python *py)
{
	if (*py->maps.fsbase_off)
		return true;
	if (!py->fsbase_warned)
		pr_warn("cannot find the thread pointer (task_struct.thread.fsbase) in the kernel's BTF; Python frames are not walked");
	py->fsbase_warned = true;
	return false;
}

static void note_unsupported(struct python *py, const char *path, size_t len,
			     unsigned int major, unsigned int minor)
{
	if (py->stats.unsupported++)
		return;
	/* Neither Py_Version nor a name like python3.X said which. */
	if (!minor)
		snprintf(py->stats.unsupported_first, sizeof(py->stats.unsupported_first),
			 "%.*s (CPython of no known version)", (int)(len > 60 ? 60 : len), path);
	else
		snprintf(py->stats.unsupported_first, sizeof(py->stats.unsupported_first),
			 "%.*s (CPython %u.%u)", (int)(len > 60 ? 60 : len), path, major, minor);
	text__sanitize_str(py->stats.unsupported_first);
}

/* Write what the walker needs to know of pid; called locked. */
/* Called locked: the budget of user uid, made on first use. */
static struct pyuser *get_user(struct python *py, __u32 uid)
{
	struct pyuser *u = htab__get(&py->users, uid, 0);

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (u)
		u->uid = uid;
	if (u && htab__put(&py->users, uid, 0, u)) {
		free(u);
		u = NULL;
	}
	return u;
}

/*
 * Called locked: take one of uid's processes out of interp_procs for
 * another user.  One with no code object named goes first: likely one
 * that never ran Python while sampled.  It stays in py->procs, dead, so
 * that seeing it again does not publish it again; its exit forgets it.
 */
static int evict_one(struct python *py, __u32 uid)
{
	struct pyproc *out = NULL;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&py->procs, &pos));) {
		struct pyproc *p = e->val;

		if (p->held && p->uid == uid && (!out || p->codes.nr < out->codes.nr))
			out = p;
		if (out && !out->codes.nr)
			break;
	}
	if (!out)
		return -ENOENT;
	share__evicted(&py->proc_share, uid, 1);
	out->held = false;
	unpublish(py, out);
	return 0;
}

/* Called locked: may uid have one more process in interp_procs? */
static int take_share(struct python *py, __u32 uid)
{
	__u32 evict;

	for (;;) {
		switch (share__take(&py->proc_share, uid, 1, &evict)) {
		case SHARE_TAKEN:
			return 0;
		case SHARE_EVICT:
			if (!evict_one(py, evict))
				continue;
			share__refuse(&py->proc_share, uid);
			return -ENOSPC;
		case SHARE_REFUSED:
		default:
			return -ENOSPC;
		}
	}
}

/* The name a code object is shown by: co_qualname, co_name before 3.11. */
static __u16 name_off(const struct py_layout *l)
{
	return l->co_qualname != PY_NO_OFF ? l->co_qualname : l->co_name;
}

/*
 * Where the walker reads a code object's identity (pyframe.h, struct
 * py_code_id): one window over the four fields, and its name str's
 * header; none if they do not fit.
 */
static struct py_code_id code_id(const struct py_layout *l)
{
	__u16 offs[4] = { name_off(l), l->co_filename, l->co_lines, l->co_firstlineno };
	__u16 start = 0xffff, end = 0;
	struct py_code_id id = {};

	for (int i = 0; i < 4; i++) {
		if (offs[i] == PY_NO_OFF)
			return id;
		if (offs[i] < start)
			start = offs[i];
		if (field_end(offs[i], i < 3 ? 8 : 4) > end)
			end = field_end(offs[i], i < 3 ? 8 : 4);
	}
	if (end - start > PY_CODE_WINDOW)
		return id;
	id = (struct py_code_id){ .start = start, .len = end - start,
				  .name = offs[0] - start, .file = offs[1] - start,
				  .lines = offs[2] - start, .line = offs[3] - start };
	if (field_end(l->str_length, 8) <= PY_STR_WINDOW &&
	    field_end(l->str_state, 1) <= PY_STR_WINDOW &&
	    field_end(l->str_ascii_data, PY_NAME_CHARS) <= PY_STR_WINDOW) {
		id.str_length = l->str_length;
		id.str_state = l->str_state;
		id.str_data = l->str_ascii_data;
	}
	return id;
}

/* What the walker needs of a process whose CPython o is loaded at bias. */
static struct py_proc proc_data(const struct stat *pidns, const struct pyobj *o, __u64 bias,
				const struct py_layout *l)
{
	return (struct py_proc){ .runtime = bias + o->runtime, .off = l->bpf,
				 .pidns_dev = pidns->st_dev, .pidns_ino = pidns->st_ino,
				 .version = l->version, .frame_read = frame_read(&l->bpf),
				 .id = code_id(l) };
}

static struct pytypes proc_types(const struct pyobj *o, __u64 bias)
{
	return (struct pytypes){ .code = o->code_type ? bias + o->code_type : 0,
				 .str = o->str_type ? bias + o->str_type : 0,
				 .bytes = o->bytes_type ? bias + o->bytes_type : 0 };
}

/* Called locked: pid runs CPython, as pp, l and types say. */
static int publish(struct python *py, __u32 pid, __u32 uid, __u64 seq, __u64 exec_ns,
		   const struct py_proc *pp, const struct py_layout *l, const struct pytypes *types)
{
	struct interp_proc ip = { .kind = PY_KIND };
	struct pyproc *p;
	int err;

	memcpy(ip.data, pp, sizeof(*pp));
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->user = get_user(py, uid);
	if (!p->user) {
		free(p);
		return -ENOMEM;
	}
	p->pid = pid;
	p->uid = uid;
	p->seq = seq;
	p->exec_ns = exec_ns;
	p->bpf = *pp;
	p->layout = *l;
	p->types = *types;
	if (htab__put(&py->procs, pid, 0, p)) {
		free(p);
		return -ENOMEM;
	}
	/* python__free() gave up on us: the maps may be gone. */
	if (py->stop) {
		p->dead = true;
		return -ECANCELED;
	}
	/* Refused: known, so that seeing it again costs nothing; not walked. */
	err = take_share(py, uid);
	if (err) {
		p->dead = true;
		return err;
	}
	if (bpf_map_update_elem(py->maps.procs_fd, &pid, &ip, BPF_ANY)) {
		err = -errno;
		p->dead = true;
		share__give(&py->proc_share, uid, 1);
		return err;
	}
	p->held = true;
	py->in_map++;
	*py->maps.nr_procs = py->in_map;
	return 0;
}

/*
 * Called locked, after publish() returned err: -ESTALE if pid exec'd since
 * exec_ns (its entry may have gone in after the exec dropped the old
 * image's: it goes), -ESRCH if the process of pidfd has exited (its
 * exit's forget may have come before it was known: it goes), else 0, and
 * a process published is counted.
 */
static int published(struct python *py, __u32 pid, __u64 exec_ns, int pidfd, int err)
{
	if (unwind__exec_time(py->maps.execs_fd, pid) != exec_ns) {
		retire(py, pid);
		return -ESTALE;
	}
	if (procfs__ended(pidfd)) {
		retire(py, pid);
		return -ESRCH;
	}
	/* Once a process, however many images and looks. */
	if (!err && !htab__get(&py->counted, pid, 0) && !htab__put(&py->counted, pid, 0, (void *)1))
		py->stats.procs++;
	return 0;
}

/* pid's executable waits for the libpython that ld.so maps next. */
static void wait_for_libpython(struct python *py, __u32 pid)
{
	pthread_mutex_lock(&py->lock);
	if (htab__get(&py->waiting, pid, 0) ||
	    (py->waiting.nr < WAITING_MAX && !htab__put(&py->waiting, pid, 0, (void *)1))) {
		py->wait_until = now_ns() + WAITING_NS;
		py->stats.waits++;
	}
	pthread_mutex_unlock(&py->lock);
}

/*
 * One look at pid's mappings: 0 when done (CPython found or not there),
 * -ESTALE when the process exec'd while it was read (what was found is
 * dropped: it may be the old image's), -EAGAIN when its executable waits
 * for a libpython not mapped yet.
 */
static int look(struct python *py, __u32 pid, __u64 seq)
{
	__u64 t0 = now_ns(), exec_ns = unwind__exec_time(py->maps.execs_fd, pid);
	bool wait_lib = false, have_lib = false;
	struct procfs_status status;
	int dirfd, pidfd, ret = 0;
	struct stat pidns;
	struct scan *s;

	/* The process itself, to tell at the end whether it is gone. */
	pidfd = procfs__pidfd(pid);
	if (pidfd < 0)
		return 0;
	s = calloc(1, sizeof(*s));
	dirfd = procfs__open_pid(pid);
	if (dirfd < 0 || !s)
		goto out;
	/* Whose it is: each user's processes share one budget of names. */
	if (procfs__status(dirfd, &status) || fstatat(dirfd, "ns/pid", &pidns, 0))
		goto out;
	s->have_exe = !fstatat(dirfd, "exe", &s->exe, 0);
	if (procmaps__read_at(dirfd, add_candidate, s) < 0)
		s->n = 0;
	for (int i = 0; i < s->n; i++) {
		const struct vma *v = &s->c[i].v;
		struct pymem mem = proc_mem(pid);
		unsigned int major, minor;
		const struct pyobj *o;
		struct pytypes types;
		struct py_layout l;
		struct py_proc pp;
		__u64 bias;
		int err;

		have_lib |= !s->c[i].exe;
		o = get_object(py, dirfd, v);
		wait_lib |= o && s->c[i].exe && o->needs_libpython;
		if (!o || !o->python)
			continue;
		/* The kernel's walker, loaded on first need while we read. */
		if (py->maps.need_walker)
			py->maps.need_walker(py->maps.walker_arg);
		bias = v->start - o->vaddr0;
		/* Reads of the process and the kernel's BTF: never under the lock. */
		err = find_layout(o, bias, &mem, &l, &major, &minor);
		/* Before 3.11 a thread is known by its fs base: the BTF says where. */
		if (!err && l.bpf.ts_native_id == PY_NO_OFF && !fsbase_ready(py))
			break;
		if (!err && py->look_delay_ms) {
			test_delay(py->look_delay_ms);
			py->look_delay_ms = 0;
		}
		pthread_mutex_lock(&py->lock);
		htab__del_key(&py->waiting, pid, 0);
		if (err) {
			note_unsupported(py, v->path, v->path_len, major, minor);
			pthread_mutex_unlock(&py->lock);
			goto out;
		}
		pp = proc_data(&pidns, o, bias, &l);
		types = proc_types(o, bias);
		err = publish(py, pid, status.charged, seq, exec_ns, &pp, &l, &types);
		ret = published(py, pid, exec_ns, pidfd, err);
		py->stats.exec_raced += ret == -ESTALE;
		if (!ret && !err)
			pr_debug("python: %u runs CPython %u.%u, found in %.1f ms", pid,
				 l.version >> 8, l.version & 0xff, (now_ns() - t0) / 1e6);
		pthread_mutex_unlock(&py->lock);
		goto out;
	}
	if (wait_lib && !have_lib) {
		/* About to run CPython: its walker loads while ld.so works. */
		if (py->maps.need_walker)
			py->maps.need_walker(py->maps.walker_arg);
		ret = -EAGAIN;
	}
out:
	if (dirfd >= 0)
		close(dirfd);
	close(pidfd);
	free(s);
	return ret;
}

/*
 * Called locked: pid's entry, refused, goes at once: a child that never
 * runs costs nothing until its first sample (a user's sleeping children
 * by the thousand).
 */
static void forget_refused(struct python *py, __u32 pid)
{
	struct pyproc *p = htab__get(&py->procs, pid, 0);

	if (!p || p->held)
		return;
	htab__del_key(&py->procs, pid, 0);
	free_proc(py, p);
}

/*
 * ppid, found running CPython, forked pid: pid's memory is a copy of
 * ppid's, and so is what a look would find there but its pid namespace.
 * Published from a read of its status, so that its first samples are
 * walked: a look of its own reads its mappings and memory, after every
 * look queued before it (a prefork server starts its workers together).
 * Not when pid exec'd since or is no longer a child of ppid (the pidfd
 * holds the process, and only a process's, not a thread's), when ppid's
 * entry was found after the fork or for an image ppid has since left
 * (the child copied another), or when pid was looked at already: its own
 * look follows, or came first.  The fork is read late, after the child's
 * exit may have been (a zombie's status and namespace still read): a
 * child gone once published goes again (published()).
 */
static void inherit(struct python *py, __u32 ppid, __u32 pid, __u64 seq)
{
	__u64 exec_ns = unwind__exec_time(py->maps.execs_fd, pid);
	__u64 parent_exec = unwind__exec_time(py->maps.execs_fd, ppid);
	struct procfs_status status;
	struct pyproc *parent;
	int dirfd, pidfd, err;
	struct py_proc pp;
	struct stat pidns;
	bool child;

	if (exec_ns)
		return;
	pidfd = procfs__pidfd(pid);
	if (pidfd < 0)
		return;
	dirfd = procfs__open_pid(pid);
	child = dirfd >= 0 && !procfs__status(dirfd, &status) && status.ppid == ppid &&
		!fstatat(dirfd, "ns/pid", &pidns, 0);
	if (dirfd >= 0)
		close(dirfd);
	pthread_mutex_lock(&py->lock);
	parent = child ? htab__get(&py->procs, ppid, 0) : NULL;
	if (parent && parent->held && parent->seq < seq && parent->exec_ns == parent_exec &&
	    !htab__get(&py->procs, pid, 0)) {
		pp = parent->bpf;
		pp.pidns_dev = pidns.st_dev;
		pp.pidns_ino = pidns.st_ino;
		err = publish(py, pid, status.charged, seq, 0, &pp, &parent->layout,
			      &parent->types);
		if (err)
			forget_refused(py, pid);
		else if (!published(py, pid, exec_ns, pidfd, err))
			py->stats.inherited++;
	}
	pthread_mutex_unlock(&py->lock);
	close(pidfd);
}

/*
 * pid, first sampled, is a child whose fork's note still waits: the
 * reader serves first samples before notes.  Copied now, as the note
 * would be; the note then finds it known.
 */
static void inherit_waiting(struct python *py, __u32 pid)
{
	const struct request *r;
	bool waits = false;
	__u32 ppid = 0;
	__u64 seq = 0;

	pthread_mutex_lock(&py->lock);
	r = htab__get(&py->procs, pid, 0) ? NULL : htab__get(&py->forks, pid, 0);
	if (r) {
		waits = true;
		ppid = r->pid;
		seq = r->seq;
	}
	pthread_mutex_unlock(&py->lock);
	if (waits)
		inherit(py, ppid, pid, seq);
}

/*
 * Look for CPython in pid; exec: even if it was found before, unless it
 * was found for this request (seq) or a later one.
 */
static void detect(struct python *py, __u32 pid, bool exec, __u64 seq)
{
	struct pyproc *p;
	int err = -ESTALE;

	if (!exec)
		inherit_waiting(py, pid);
	pthread_mutex_lock(&py->lock);
	p = htab__get(&py->procs, pid, 0);
	if (p && (!exec || p->seq >= seq)) {
		pthread_mutex_unlock(&py->lock);
		return;
	}
	retire(py, pid);
	pthread_mutex_unlock(&py->lock);
	for (int i = 0; i < DETECT_TRIES && err == -ESTALE; i++)
		err = look(py, pid, seq);
	if (err == -EAGAIN)
		wait_for_libpython(py, pid);
}

/* ---- naming code objects ---- */

/* The file as py-spy shows it: from the package root, else its base name. */
static const char *short_file(const char *path)
{
	static const char *const roots[] = { "site-packages/", "dist-packages/" };
	const char *p, *best = NULL;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		for (p = strstr(path, roots[i]); p; p = strstr(p + 1, roots[i]))
			if (!best || p + strlen(roots[i]) > best)
				best = p + strlen(roots[i]);
	}
	if (best && *best)
		return best;
	/* The standard library: /usr/lib/python3.11/json/__init__.py. */
	p = strstr(path, "/lib/python3.");
	if (p && (p = strchr(p + 13, '/')) && p[1] && !strstr(p + 1, "/lib/python3."))
		return p + 1;
	p = strrchr(path, '/');
	return p && p[1] ? p + 1 : path;
}

/* The fingerprint of the name str at name, as the walker takes it. */
static __u64 name_print(const struct py_code_id *id, const struct pymem *mem, __u64 name)
{
	__u8 w[PY_STR_WINDOW];
	__u64 len, h[2], t[2] = { 0, 0 };

	if (!id->str_data || mem->read(mem->ctx, name, w, id->str_data + PY_NAME_CHARS))
		return 0;
	if ((w[id->str_state] & PY_STR_COMPACT_ASCII) != PY_STR_COMPACT_ASCII)
		return 0;
	memcpy(&len, w + id->str_length, sizeof(len));
	memcpy(h, w + id->str_data, sizeof(h));
	if (len > PY_NAME_MAX)
		return 0;
	if (len > PY_NAME_CHARS &&
	    mem->read(mem->ctx, name + id->str_data + len - PY_NAME_CHARS, t, sizeof(t)))
		return 0;
	return py_name_print(len, h[0], h[1], t[0], t[1]);
}

/*
 * The identity of the code object at addr now, as the walker computes it
 * (pyframe.h, py_code_ident()); 0 when the layout has none.  A code object
 * freed and another made where it was has another identity: each sample's
 * frame carries the one it saw, and is named by the object that had it.
 */
static int code_identity(const struct pyproc *p, __u64 addr, __u64 *ident)
{
	struct py_code_id id = code_id(&p->layout);
	struct pymem mem = proc_mem(p->pid);
	__u8 w[PY_CODE_WINDOW];
	__u64 name, file, lines;
	__u32 line;
	int err;

	*ident = 0;
	if (!id.len)
		return 0;
	err = mem.read(mem.ctx, addr + id.start, w, id.len);
	if (err)
		return err;
	memcpy(&name, w + id.name, sizeof(name));
	memcpy(&file, w + id.file, sizeof(file));
	memcpy(&lines, w + id.lines, sizeof(lines));
	memcpy(&line, w + id.line, sizeof(line));
	*ident = py_code_ident(name, file, lines, line, name_print(&id, &mem, name));
	return 0;
}

/* The code object at addr read from the process, unlocked; NULL if it is not one. */
static struct pycode_ent *read_code(const struct pyproc *p, __u64 addr, __u64 ident)
{
	struct pymem mem = proc_mem(p->pid);
	struct pycode_ent *c = calloc(1, sizeof(*c));
	char label[PYCODE_NAME_MAX + 64];

	if (!c)
		return NULL;
	c->addr = addr;
	c->ident = ident;
	if (pycode__read(&p->layout, &p->types, &mem, addr, &c->code)) {
		free(c);
		return NULL;
	}
	snprintf(label, sizeof(label), "%s (%s)", c->code.qualname, short_file(c->code.file));
	c->label = strdup(label);
	if (!c->label) {
		free_code(c);
		return NULL;
	}
	/* With its slots in the process's table. */
	c->bytes = sizeof(*c) + 2 * sizeof(struct hent) + pycode__bytes(&c->code) +
		   strlen(c->label) + 1;
	return c;
}

/* Bytes taken back from a user at a time, at least: not one entry per request. */
#define EVICT_MIN (256u << 10)

/* Called locked: free uid's oldest code entries, at least n bytes' worth if it has them. */
static __u64 evict(struct python *py, __u32 uid, __u64 n)
{
	struct pyuser *u = htab__get(&py->users, uid, 0);
	__u64 freed = 0;

	if (n < EVICT_MIN)
		n = EVICT_MIN;
	while (u && u->oldest && freed < n) {
		freed += u->oldest->bytes;
		drop_code(py, u->oldest, true);
	}
	return freed;
}

/*
 * Called locked: may u hold n more bytes of names?  Takes back another
 * user's code entries when the share says so.
 */
static bool charge(struct python *py, struct pyuser *u, __u64 n)
{
	__u32 heavy;

	for (;;) {
		switch (share__take(&py->names, u->uid, n, &heavy)) {
		case SHARE_TAKEN:
			return true;
		case SHARE_REFUSED:
			return false;
		case SHARE_EVICT:
			/* What it holds is this report's names: nothing to free. */
			if (!evict(py, heavy, n)) {
				share__refuse(&py->names, u->uid);
				return false;
			}
			break;
		}
	}
}

/*
 * Called locked: is u refused even the smallest code entry?  Then reading
 * one is not worth it (and counts as refused).
 */
static bool over_share(struct python *py, struct pyuser *u)
{
	__u64 n = sizeof(struct pycode_ent);
	__u32 heavy;

	switch (share__take(&py->names, u->uid, n, &heavy)) {
	case SHARE_TAKEN:
		share__give(&py->names, u->uid, n);
		return false;
	case SHARE_EVICT:
		return false;
	default:
		return true;
	}
}

/*
 * Called locked: keep c for its code object of p, in place of what p had
 * under its key (read by a racing request, or without an identity: a code
 * object freed since, whose address was reused).
 */
static int keep_code(struct python *py, struct pyproc *p, struct pycode_ent *c)
{
	struct pycode_ent *old = htab__get(&p->codes, c->addr, c->ident);

	if (old)
		drop_code(py, old, false);
	if (!charge(py, p->user, c->bytes)) {
		py->stats.over_budget++;
		return -ENOSPC;
	}
	if (htab__put(&p->codes, c->addr, c->ident, c)) {
		share__give(&py->names, p->user->uid, c->bytes);
		return -ENOMEM;
	}
	c->owner = p;
	user_add(p->user, c);
	py->stats.codes++;
	return 0;
}

/*
 * The reader thread only: make sure the code object of a frame's two
 * words (its address and identity) is known.  Known under its identity: it
 * is the same object.  Else it is read if it still has the identity the
 * walker saw; if it does not, it changed again since the sample, and that
 * frame stays unnamed rather than take another object's name.  A layout
 * without identities (0) is checked again on every new stack.  Memory is
 * read with the lock dropped: a read of another process can block (its
 * page in a file on a FUSE mount that does not answer), and the report
 * must still get the lock and print.
 */
static void learn_code(struct python *py, struct pyproc *p, __u64 w0, __u64 w1)
{
	__u64 addr = w0 & PY_CODE_MASK, want = py_words_ident(w0, w1), ident;
	struct pycode_ent *c;
	bool over, changed;

	pthread_mutex_lock(&py->lock);
	c = htab__get(&p->codes, addr, want);
	pthread_mutex_unlock(&py->lock);
	if ((c && want) || code_identity(p, addr, &ident))
		return;
	if (ident != want) {
		pthread_mutex_lock(&py->lock);
		py->stats.code_changed++;
		pthread_mutex_unlock(&py->lock);
		return;
	}
	pthread_mutex_lock(&py->lock);
	over = over_share(py, p->user);
	if (over)
		py->stats.over_budget++;
	pthread_mutex_unlock(&py->lock);
	if (over)
		return;
	c = read_code(p, addr, ident);
	/* Made anew while we read it: what we read may be either's. */
	changed = c && want && (code_identity(p, addr, &ident) || ident != want);
	if (changed) {
		free_code(c);
		c = NULL;
	}
	pthread_mutex_lock(&py->lock);
	if (changed)
		py->stats.code_changed++;
	else if (!c)
		py->stats.code_errors++;
	else if (keep_code(py, p, c))
		free_code(c);
	pthread_mutex_unlock(&py->lock);
}

/*
 * Read the new code objects of a stack the sampler stored.  p stays in
 * py->procs while we read unlocked: only this thread retires processes,
 * and python__reap() frees only retired ones.
 */
static void read_note(struct python *py, const struct request *r)
{
	struct pyproc *p;

	pthread_mutex_lock(&py->lock);
	p = htab__get(&py->procs, r->pid, 0);
	pthread_mutex_unlock(&py->lock);
	for (__u32 i = 0; p && i + 1 < r->nr; i += 2)
		learn_code(py, p, r->words[i], r->words[i + 1]);
}

/*
 * Called locked: s as this report's copy, charged to u; NULL when u's
 * share has no room.  Names the same as another frame's share a copy.
 */
static const char *report_name(struct python *py, struct pyuser *u, const char *s)
{
	size_t len = strlen(s);
	const char *r = strpool__find(&py->report_names, s, len);
	__u64 n = len + 1 + 2 * sizeof(struct hent);

	if (r)
		return r;
	if (!charge(py, u, n))
		return NULL;
	r = strpool__intern(&py->report_names, s, len);
	if (!r) {
		share__give(&py->names, u->uid, n);
		return NULL;
	}
	u->report_bytes += n;
	return r;
}

/*
 * Called locked: c's names copied for this report, once for all its
 * frames; whether they are (its user's share may have had no room).
 */
static bool copy_names(struct python *py, struct pycode_ent *c)
{
	if (c->copied_in == py->reports + 1)
		return c->label_copy != NULL;
	c->copied_in = py->reports + 1;
	c->func_copy = report_name(py, c->user, c->code.qualname);
	c->file_copy = c->func_copy ? report_name(py, c->user, c->code.file) : NULL;
	c->label_copy = c->file_copy ? report_name(py, c->user, c->label) : NULL;
	return c->label_copy != NULL;
}

/*
 * Name a frame from what the reader thread learned; nothing is read here.
 * A stack is sent to the reader the first time it is stored, and the
 * report waits for the reader (python__settle()) before it names frames.
 */
void python__resolve(struct python *py, __u32 pid, struct frame *f)
{
	__u64 addr = f->addr & PY_CODE_MASK, ident = py_words_ident(f->addr, f->aux);
	struct pycode_ent *c;
	struct pyproc *p;
	char label[PYCODE_NAME_MAX + 80];

	pthread_mutex_lock(&py->lock);
	p = htab__get(&py->procs, pid, 0);
	c = p ? htab__get(&p->codes, addr, ident) : NULL;
	/*
	 * Exited: the newest process that had the pid.  Not when one lives
	 * with it now: a code object it has not named is not an older one's.
	 */
	for (struct pyproc *g = p ? NULL : py->gone; !c && g; g = g->next_gone) {
		c = g->pid == pid ? htab__get(&g->codes, addr, ident) : NULL;
		p = g;
	}
	if (c && copy_names(py, c)) {
		f->line = pycode__line(&p->layout, &c->code, f->aux & PY_INSTR_MASK);
		f->func = c->func_copy;
		f->module = c->file_copy;
		f->name = c->label_copy;
		if (py->lines) {
			snprintf(label, sizeof(label), "%s (%s:%u)", c->code.qualname,
				 short_file(c->code.file), f->line);
			f->name = report_name(py, c->user, label);
			/* All or nothing: a frame named at all is named in full. */
			if (!f->name)
				f->func = f->module = NULL;
		}
	}
	pthread_mutex_unlock(&py->lock);
}

/* ---- the thread and its queue ---- */

/*
 * Called locked: u's oldest note leaves its list (u has one), and
 * py->forks; the caller gives its unit back.
 */
static struct request *note_pop(struct python *py, struct pyuser *u)
{
	struct request *r = u->notes;

	u->notes = r->next;
	if (!u->notes)
		u->notes_last = NULL;
	if (r->op == REQ_FORK && htab__get(&py->forks, r->words[0], 0) == r)
		htab__del_key(&py->forks, r->words[0], 0);
	return r;
}

/* Called locked: u waits for a turn, the last. */
static void turn_join(struct python *py, struct pyuser *u)
{
	u->has_turn = true;
	u->next_turn = NULL;
	if (py->turn_last)
		py->turn_last->next_turn = u;
	else
		py->turn_first = u;
	py->turn_last = u;
}

/* Called locked: the oldest note of the user whose turn it is, or NULL. */
static struct request *note_next(struct python *py)
{
	struct pyuser *u;

	/* A user whose notes were all taken back keeps its place: skip it. */
	while ((u = py->turn_first)) {
		py->turn_first = u->next_turn;
		if (!py->turn_first)
			py->turn_last = NULL;
		u->has_turn = false;
		if (u->notes) {
			struct request *r = note_pop(py, u);

			share__give(&py->note_share, u->uid, 1);
			if (u->notes)
				turn_join(py, u);
			return r;
		}
	}
	return NULL;
}

/*
 * Called locked: r waits in its user's list, if the user's share of
 * QUEUE_MAX has room (taking back the oldest notes of a user past its own
 * share); false when it is dropped (counted).
 */
static bool note_queue(struct python *py, struct request *r)
{
	const struct pyproc *p = htab__get(&py->procs, r->pid, 0);
	struct pyuser *u = p ? p->user : NULL;
	__u32 heavy;

	/*
	 * The walker sends notes of processes in interp_procs only, which
	 * are known: one that is not any more has exited or is going.
	 */
	for (;;) {
		enum share_verdict v = u ? share__take(&py->note_share, u->uid, 1, &heavy)
					 : SHARE_REFUSED;
		struct pyuser *h;

		if (v == SHARE_REFUSED) {
			py->stats.dropped++;
			return false;
		}
		if (v == SHARE_TAKEN)
			break;
		h = htab__get(&py->users, heavy, 0);
		if (!h || !h->notes) {
			share__refuse(&py->note_share, u->uid);
			py->stats.dropped++;
			return false;
		}
		free(note_pop(py, h));
		share__evicted(&py->note_share, heavy, 1);
		py->stats.dropped++;
	}
	r->next = NULL;
	if (u->notes_last)
		u->notes_last->next = r;
	else
		u->notes = r;
	u->notes_last = r;
	if (!u->has_turn)
		turn_join(py, u);
	/* The child's first sample may come first: its look copies too. */
	if (r->op == REQ_FORK) {
		/* Out of memory: left to the note alone. */
		htab__del_key(&py->forks, r->words[0], 0);
		(void)htab__put(&py->forks, r->words[0], 0, r);
	}
	return true;
}

/* The reader's turn for notes: read the next one, of the next user. */
static void serve_note(struct python *py)
{
	struct request *r;

	pthread_mutex_lock(&py->lock);
	r = note_next(py);
	pthread_mutex_unlock(&py->lock);
	if (r && r->op == REQ_FORK) {
		test_delay(py->inherit_delay_ms);
		inherit(py, r->pid, (__u32)r->words[0], r->seq);
	} else if (r) {
		read_note(py, r);
	}
	free(r);
}

/* pid exited: forget it, unless it was found after (a new process, looked at first). */
static void forget(struct python *py, __u32 pid, __u64 seq)
{
	struct pyproc *p;

	pthread_mutex_lock(&py->lock);
	p = htab__get(&py->procs, pid, 0);
	if (p && p->seq < seq)
		retire(py, pid);
	pthread_mutex_unlock(&py->lock);
}

/* The processes first sampled or exec'd since the last request. */
static void detect_urgent(struct python *py)
{
	for (;;) {
		struct urgent u;

		pthread_mutex_lock(&py->lock);
		if (py->stop || !py->urgent_nr) {
			pthread_mutex_unlock(&py->lock);
			return;
		}
		u = py->urgent[py->urgent_head];
		py->urgent_head = (py->urgent_head + 1) % URGENT_MAX;
		py->urgent_nr--;
		pthread_mutex_unlock(&py->lock);
		detect(py, u.pid, u.exec, u.seq);
	}
}

static void serve(void *ctx, unsigned int thread, void *req)
{
	struct request *r = *(struct request **)req;
	struct python *py = ctx;

	(void)thread;
	detect_urgent(py);
	if (!r) {
		pthread_mutex_lock(&py->lock);
		py->turns--;
		pthread_mutex_unlock(&py->lock);
		serve_note(py);
		return;
	}
	switch (r->op) {
	case REQ_DETECT:
	case REQ_EXEC:
		detect(py, r->pid, r->op == REQ_EXEC, r->seq);
		pthread_mutex_lock(&py->lock);
		py->looks--;
		pthread_mutex_unlock(&py->lock);
		break;
	case REQ_FORGET:
		forget(py, r->pid, r->seq);
		break;
	case REQ_NOTE:
	case REQ_FORK:
		break;
	}
	free(r);
}

static bool is_look(const struct request *r)
{
	return r->op == REQ_DETECT || r->op == REQ_EXEC;
}

static void discard(void *ctx, void *req)
{
	struct request *r = *(struct request **)req;
	struct python *py = ctx;

	if (r && is_look(r)) {
		pthread_mutex_lock(&py->lock);
		py->looks--;
		pthread_mutex_unlock(&py->lock);
	}
	free(r);
}

/* words: nr 8-byte words, at any alignment; seq: the next py->seq. */
static void request(struct python *py, enum req_op op, __u32 pid, __u64 seq,
		    const void *words, __u32 nr)
{
	struct request *r;
	bool queued, turn;

	if (!py)
		return;
	r = malloc(sizeof(*r) + nr * sizeof(r->words[0]));
	if (!r) {
		pthread_mutex_lock(&py->lock);
		py->stats.dropped++;
		pthread_mutex_unlock(&py->lock);
		return;
	}
	*r = (struct request){ .op = op, .pid = pid, .seq = seq, .nr = nr };
	if (nr)
		memcpy(r->words, words, nr * sizeof(r->words[0]));
	/*
	 * Only notes are dropped when the reader falls behind on them: the
	 * others are as many as processes come and go, and a lost one would
	 * leave a process unwalked, or walked after its pid went to another.
	 * Notes are counted apart: one user's thousands of processes to look
	 * at must not cost another user's stacks their names.  A note waits
	 * in its user's list; the queue gets a turn (NULL) for it, and a turn
	 * left over when the note was taken back finds nothing to do.  A
	 * fork is a note of its parent.
	 */
	if (op == REQ_NOTE || op == REQ_FORK) {
		pthread_mutex_lock(&py->lock);
		queued = note_queue(py, r);
		turn = queued && py->turns < py->note_share.total;
		py->turns += turn;
		pthread_mutex_unlock(&py->lock);
		if (!queued)
			free(r);
		r = NULL;
		if (!turn || !worker__push_always(py->worker, &r))
			return;
		/* Stopping: the note stays in its list, freed with its user. */
		pthread_mutex_lock(&py->lock);
		py->turns--;
		pthread_mutex_unlock(&py->lock);
		return;
	}
	/*
	 * Counted until served: while a look waits or runs, the side band
	 * is read soon (python__waiting()), so that a libpython it finds
	 * missing is looked for as soon as its mapping's record is in.
	 */
	pthread_mutex_lock(&py->lock);
	py->looks += is_look(r);
	pthread_mutex_unlock(&py->lock);
	if (!worker__push_always(py->worker, &r))
		return;
	/* Stopping. */
	pthread_mutex_lock(&py->lock);
	py->looks -= is_look(r);
	pthread_mutex_unlock(&py->lock);
	free(r);
}

/*
 * pid was first sampled (REQ_DETECT) or exec'd (REQ_EXEC): look at it
 * before the queue, which another user can fill with thousands of
 * processes that map a libpython and never run.  Its request in the
 * queue, of the same seq, then finds it done; it wakes the reader, and
 * does the work itself when the ring is full.  A request to forget the
 * pid's last process may wait in the queue: it spares what was found
 * after it.
 */
static void request_urgent(struct python *py, enum req_op op, __u32 pid)
{
	__u64 seq;

	if (!py)
		return;
	seq = ++py->seq;
	pthread_mutex_lock(&py->lock);
	if (py->urgent_nr < URGENT_MAX) {
		py->urgent[(py->urgent_head + py->urgent_nr) % URGENT_MAX] =
			(struct urgent){ .pid = pid, .exec = op == REQ_EXEC, .seq = seq };
		py->urgent_nr++;
	}
	pthread_mutex_unlock(&py->lock);
	request(py, op, pid, seq, NULL, 0);
}

void python__detect(struct python *py, __u32 pid)
{
	request_urgent(py, REQ_DETECT, pid);
}

void python__mapped(struct python *py, __u32 pid)
{
	bool waiting;

	if (!py)
		return;
	/* The libpython a look found it waiting for: before the queue. */
	pthread_mutex_lock(&py->lock);
	waiting = htab__get(&py->waiting, pid, 0) != NULL;
	pthread_mutex_unlock(&py->lock);
	if (waiting)
		request_urgent(py, REQ_DETECT, pid);
	else
		request(py, REQ_DETECT, pid, ++py->seq, NULL, 0);
}

/*
 * The mmap record of a libpython wakes no reader: it may be read a second
 * later, and until then its process's Python frames are not walked.  So
 * while any look is queued or under way, and while a process waits for
 * its libpython (for at most WAITING_NS after the last look that found
 * one waiting), the side band is read often: every INTERP_WAIT_POLL_MS,
 * however many wait.
 */
bool python__waiting(struct python *py)
{
	bool waiting;

	if (!py)
		return false;
	pthread_mutex_lock(&py->lock);
	waiting = py->waiting.nr && now_ns() < py->wait_until;
	/* Gone by now, or never mapped one: the mmap records say the rest. */
	if (!waiting && py->waiting.nr)
		htab__free(&py->waiting);
	waiting |= py->looks > 0;
	pthread_mutex_unlock(&py->lock);
	return waiting;
}

void python__need_walker(struct python *py)
{
	if (py && py->maps.need_walker)
		py->maps.need_walker(py->maps.walker_arg);
}

void python__exec(struct python *py, __u32 pid)
{
	request_urgent(py, REQ_EXEC, pid);
}

/*
 * Every fork on the host comes here: only those of a process found are
 * read, each as a note of the parent, in its user's turn (one user's
 * thousands of forks wait in its own list, bounded by its share of the
 * notes); a child dropped is looked at on its first sample, as any new
 * process.
 */
void python__fork(struct python *py, __u32 ppid, __u32 pid)
{
	const struct pyproc *parent;
	__u64 child = pid;
	bool found;

	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	parent = htab__get(&py->procs, ppid, 0);
	found = parent && parent->held;
	pthread_mutex_unlock(&py->lock);
	if (found)
		request(py, REQ_FORK, ppid, ++py->seq, &child, 1);
}

void python__forget(struct python *py, __u32 pid)
{
	bool known;

	if (!py)
		return;
	/* Every exit on the host comes here: queue only those we know. */
	pthread_mutex_lock(&py->lock);
	known = htab__get(&py->procs, pid, 0) != NULL;
	htab__del_key(&py->waiting, pid, 0);
	htab__del_key(&py->counted, pid, 0);
	pthread_mutex_unlock(&py->lock);
	if (known)
		request(py, REQ_FORGET, pid, ++py->seq, NULL, 0);
}

void python__note(struct python *py, const void *data, size_t len)
{
	const size_t head = offsetof(struct interp_stack_note, st.ips);
	struct interp_stack_note n;
	__u32 nr;

	/*
	 * The sampler sends a note up to its last frame; a perf record's raw
	 * data is 4 bytes off 8-byte alignment: copy before reading.
	 */
	if (!py || len < head)
		return;
	memcpy(&n, data, head);
	if (n.hdr.type != NOTE_INTERP_STACK || n.hdr.kind != PY_KIND)
		return;
	/* The outer frames' key ends the words: their own note names them. */
	nr = n.st.nr - ((n.st.end & INTERP_END_MORE) && n.st.nr);
	if (nr > PY_STACK_WORDS)
		nr = PY_STACK_WORDS;
	if (nr > (len - head) / sizeof(n.st.ips[0]))
		nr = (len - head) / sizeof(n.st.ips[0]);
	pthread_mutex_lock(&py->lock);
	py->stats.notes++;
	pthread_mutex_unlock(&py->lock);
	request(py, REQ_NOTE, n.hdr.pid, ++py->seq, (const char *)data + head, nr);
}

void python__settle(struct python *py, unsigned int timeout_ms)
{
	if (py)
		worker__settle(py->worker, timeout_ms);
}

void python__reap(struct python *py)
{
	struct pyproc **pp;
	struct hent *e;

	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	py->reports++;
	/* The report's frames are gone: their names too. */
	strpool__free(&py->report_names);
	for (size_t pos = 0; (e = htab__next(&py->users, &pos));) {
		struct pyuser *u = e->val;

		share__give(&py->names, u->uid, u->report_bytes);
		u->report_bytes = 0;
	}
	/* Gone before the report that just ended: its samples are printed. */
	for (pp = &py->gone; *pp;) {
		struct pyproc *p = *pp;

		if (p->dead_at + 1 < py->reports) {
			*pp = p->next_gone;
			free_proc(py, p);
		} else {
			pp = &p->next_gone;
		}
	}
	pthread_mutex_unlock(&py->lock);
}

void python__report(struct python *py, enum report_pass pass)
{
	pthread_mutex_lock(&py->lock);
	share__report(&py->names, "its code objects past it are left unnamed",
		      pass);
	share__report(&py->note_share,
		      "its new stacks past it are left unnamed, its children looked at on their first sample",
		      pass);
	pthread_mutex_unlock(&py->lock);
}

void python__stats(struct python *py, struct python_stats *st)
{
	pthread_mutex_lock(&py->lock);
	*st = py->stats;
	/* Ours are those no memory was left for; the worker's, those it refused. */
	st->dropped += worker__dropped(py->worker);
	pthread_mutex_unlock(&py->lock);
}

void python__report_share(struct python *py, enum report_pass pass)
{
	pthread_mutex_lock(&py->lock);
	share__report(&py->proc_share, "their processes show native frames only", pass);
	pthread_mutex_unlock(&py->lock);
}

struct python *python__new(const struct python_maps *maps, bool lines)
{
	struct python *py = calloc(1, sizeof(*py));
	struct worker_opts wo = { .threads = 1, .req_size = sizeof(struct request *),
				  .queue_max = QUEUE_MAX, .job = serve, .ctx = py,
				  .discard = discard, .name = "Python reader" };

	if (!py)
		return NULL;
	py->maps = *maps;
	py->lines = lines;
	if (getenv("PROFILE_TEST_PY_LOOK_DELAY_MS"))
		py->look_delay_ms = strtoul(getenv("PROFILE_TEST_PY_LOOK_DELAY_MS"), NULL, 10);
	if (getenv("PROFILE_TEST_PY_INHERIT_DELAY_MS"))
		py->inherit_delay_ms = strtoul(getenv("PROFILE_TEST_PY_INHERIT_DELAY_MS"), NULL, 10);
	share__init(&py->names, "Python names", "bytes", PYTHON_MEM_MAX);
	pthread_mutex_init(&py->lock, NULL);
	share__init(&py->proc_share, "Python process table", "processes", MAX_INTERP_PROCS);
	share__init(&py->note_share, "Python reader's queue", "notes", QUEUE_MAX);
	py->worker = worker__new(&wo);
	if (!py->worker) {
		int err = errno;

		python__free(py);
		errno = err;
		return NULL;
	}
	return py;
}

void python__free(struct python *py)
{
	struct hent *e;

	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	py->stop = true;
	pthread_mutex_unlock(&py->lock);
	/* A read of a file or a process may block: do not wait long. */
	if (py->worker && worker__stop(py->worker, 2000)) {
		pr_warn("the Python reader is stuck reading a file; exiting without it");
		return;
	}
	worker__free(py->worker);
	for (size_t pos = 0; (e = htab__next(&py->procs, &pos));)
		free_proc(py, e->val);
	while (py->gone) {
		struct pyproc *p = py->gone;

		py->gone = p->next_gone;
		free_proc(py, p);
	}
	for (size_t pos = 0; (e = htab__next(&py->objects, &pos));)
		free(e->val);
	for (size_t pos = 0; (e = htab__next(&py->users, &pos));) {
		struct pyuser *u = e->val;

		while (u->notes)
			free(note_pop(py, u));
		free(u);
	}
	htab__free(&py->users);
	htab__free(&py->procs);
	htab__free(&py->objects);
	htab__free(&py->waiting);
	htab__free(&py->counted);
	htab__free(&py->forks);
	strpool__free(&py->report_names);
	share__exit(&py->names);
	share__exit(&py->proc_share);
	share__exit(&py->note_share);
	pthread_mutex_destroy(&py->lock);
	free(py);
}
