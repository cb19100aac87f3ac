// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space symbolizer: processes, their executable mappings, and a cache
 * of parsed files shared by all processes.
 *
 * Every process we profile is untrusted: it picks its file names, can map
 * FIFOs and devices, truncate or replace its files, exit at any time and
 * have its pid reused.  So files are reached through the process's own
 * /proc entries, opened O_PATH first and only reopened for reading once
 * fstat() says they are regular files (opening a device can have side
 * effects; opening a FIFO can block), and parsed with pread(), not mmap().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "elf_file.h"
#include "procmaps.h"
#include "usyms.h"

/* A vdso is two to four pages; anything much bigger is not one. */
#define VDSO_MAX		(1u << 20)
/* Minimum time between two re-reads of one process's maps on misses. */
#define REFRESH_NS		1000000000ULL
#define STRPOOL_CHUNK		(64 * 1024)

/* ---- a small open-addressing hash table keyed by two u64 ---- */

struct hent {
	__u64 k1, k2;
	void *val;		/* NULL: empty slot */
};

struct htab {
	struct hent *slots;
	size_t cap, nr;		/* cap is 0 or a power of two */
};

static __u64 hash_u64(__u64 a, __u64 b)
{
	__u64 h = a * 0x9e3779b97f4a7c15ULL ^ b;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ULL;
	h ^= h >> 32;
	return h;
}

/*
 * The slot holding (k1, k2) for which eq() agrees (eq may be NULL when the
 * key says it all), or the empty slot where it would go.
 */
static struct hent *htab_slot(const struct htab *h, __u64 k1, __u64 k2,
			      bool (*eq)(const void *val, const void *ctx),
			      const void *ctx)
{
	size_t mask = h->cap - 1, i = hash_u64(k1, k2) & mask;

	for (;; i = (i + 1) & mask) {
		struct hent *e = &h->slots[i];

		if (!e->val)
			return e;
		if (e->k1 == k1 && e->k2 == k2 && (!eq || eq(e->val, ctx)))
			return e;
	}
}

static int htab_grow(struct htab *h)
{
	struct htab bigger = { .cap = h->cap ? h->cap * 2 : 64 };
	size_t i, j, mask = bigger.cap - 1;

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	/* Entries are distinct: no need to compare, just find room. */
	for (i = 0; i < h->cap; i++) {
		struct hent *e = &h->slots[i];

		if (!e->val)
			continue;
		j = hash_u64(e->k1, e->k2) & mask;
		while (bigger.slots[j].val)
			j = (j + 1) & mask;
		bigger.slots[j] = *e;
	}
	bigger.nr = h->nr;
	free(h->slots);
	*h = bigger;
	return 0;
}

/* Make room for one more entry, so that a slot found next can be filled. */
static int htab_reserve(struct htab *h)
{
	if ((h->nr + 1) * 2 > h->cap)
		return htab_grow(h);
	return 0;
}

static void *htab_get(const struct htab *h, __u64 k1, __u64 k2)
{
	return h->cap ? htab_slot(h, k1, k2, NULL, NULL)->val : NULL;
}

static int htab_put(struct htab *h, __u64 k1, __u64 k2, void *val)
{
	struct hent *e;
	int err;

	err = htab_reserve(h);
	if (err)
		return err;
	e = htab_slot(h, k1, k2, NULL, NULL);
	if (!e->val)
		h->nr++;
	e->k1 = k1;
	e->k2 = k2;
	e->val = val;
	return 0;
}

/* ---- interned strings: module paths, shared and stable until free ---- */

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct strpool {
	struct htab set;	/* (hash, len) -> const char * */
	struct chunk *chunks;
};

struct strkey {
	const char *s;
	size_t len;
};

static bool str_eq(const void *val, const void *ctx)
{
	const struct strkey *k = ctx;

	return !memcmp(val, k->s, k->len);	/* lengths already equal */
}

static __u64 hash_bytes(const char *s, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

static char *strpool_alloc(struct strpool *p, size_t size)
{
	struct chunk *c = p->chunks;

	if (!c || c->cap - c->used < size) {
		size_t cap = size > STRPOOL_CHUNK ? size : STRPOOL_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = p->chunks;
		p->chunks = c;
	}
	c->used += size;
	return c->data + c->used - size;
}

static const char *strpool_intern(struct strpool *p, const char *s, size_t len)
{
	struct strkey key = { s, len };
	__u64 h = hash_bytes(s, len);
	struct hent *e;
	char *copy;

	if (htab_reserve(&p->set))
		return NULL;
	e = htab_slot(&p->set, h, len, str_eq, &key);
	if (e->val)
		return e->val;
	copy = strpool_alloc(p, len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	e->k1 = h;
	e->k2 = len;
	e->val = copy;
	p->set.nr++;
	return copy;
}

static void strpool_free(struct strpool *p)
{
	while (p->chunks) {
		struct chunk *next = p->chunks->next;

		free(p->chunks);
		p->chunks = next;
	}
	free(p->set.slots);
}

/* ---- the symbolizer ---- */

struct ufile {
	struct elf_file *elf;	/* NULL: no symbols from this file */
	void *image;		/* vdso only: its bytes, to share equal ones */
	size_t image_len;
};

struct umap {
	__u64 start, end, pgoff;
	const char *module;
	struct ufile *file;	/* NULL: nothing to read symbols from */
};

struct uproc {
	__u32 pid;
	int err;		/* < 0: unreadable, resolves return it */
	bool alive;		/* may still be re-read */
	unsigned int refreshes;
	__u64 starttime;	/* from /proc/PID/stat: tells pid reuse */
	__u64 read_ns;		/* when maps were last read */
	struct umap *maps;	/* sorted by start, not overlapping */
	size_t nr_maps;
};

struct usyms {
	struct htab procs;	/* (pid, 0) -> struct uproc */
	struct htab files;	/* (dev, inode) -> struct ufile */
	struct ufile **vdsos;	/* vdsos have no inode: kept apart */
	size_t nr_vdsos;
	struct strpool strs;
	struct uproc *last;	/* frames come in runs of one process */
	struct usyms_stats stats;
};

/* What the maps walk of one process collects. */
struct scan {
	struct usyms *u;
	int dirfd;		/* /proc/PID */
	struct umap *maps;
	size_t nr, cap;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static int cmp_u64(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

static int umap_cmp(const void *pa, const void *pb)
{
	const struct umap *a = pa, *b = pb;

	return cmp_u64(a->start, b->start);
}

/*
 * Open pfd, an O_PATH descriptor, for reading if it is a regular file, and
 * close it.  O_PATH did not call into a driver or wait on a FIFO, and
 * reopening it through /proc/self/fd gets exactly the file we checked.
 */
static int reopen_regular(int pfd, struct stat *st)
{
	char self[64];
	int fd, err;

	if (pfd < 0)
		return pfd;
	if (fstat(pfd, st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st->st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	err = fd < 0 ? -errno : fd;

cleanup:
	close(pfd);
	return err;
}

static int open_path_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_PATH | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * PATH inside the process's root directory.  Through "root/PATH" an
 * absolute symlink in the process's tree would resolve in ours: let the
 * kernel keep the walk inside (RESOLVE_IN_ROOT, Linux 5.6).
 */
static int open_in_root(int dirfd, const struct vma *vma)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char path[PATH_MAX];
	int rootfd, fd;

	if (vma->path_len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, vma->path, vma->path_len);
	path[vma->path_len] = '\0';
	rootfd = openat(dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	fd = fd < 0 ? -errno : fd;
	close(rootfd);
	return fd;
}

/*
 * By name, the file may since have been replaced (a library upgraded under
 * a running process): check the inode.  Only the inode: on overlayfs the
 * device differs from the one in maps.
 */
static int reopen_checked(int pfd, const struct vma *vma)
{
	struct stat st;
	int fd;

	fd = reopen_regular(pfd, &st);
	if (fd >= 0 && (__u64)st.st_ino != vma->inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* -EINVAL: not a regular file; other errors: could not get at it. */
static int open_mapped_file(int dirfd, const struct vma *vma)
{
	char name[64];
	struct stat st;
	int fd;

	/* Needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE); root has it. */
	snprintf(name, sizeof(name), "map_files/%llx-%llx",
		 (unsigned long long)vma->start, (unsigned long long)vma->end);
	fd = reopen_regular(open_path_at(dirfd, name), &st);
	if (fd >= 0 || fd == -EINVAL)
		return fd;
	if (!vma->deleted) {
		fd = reopen_checked(open_in_root(dirfd, vma), vma);
		if (fd >= 0 || fd == -EINVAL)
			return fd;
	}
	/* Works unprivileged for our own processes, even deleted. */
	return reopen_checked(open_path_at(dirfd, "exe"), vma);
}

static struct ufile *new_ufile(struct elf_file *elf)
{
	struct ufile *f = calloc(1, sizeof(*f));

	if (f)
		f->elf = elf;
	return f;
}

/*
 * The parsed file behind a file mapping, from the cache if any process
 * mapped it before.  NULL if it has no symbols for us, or on a failure
 * that a later process may not hit (not cached).
 */
static struct ufile *get_file(struct scan *sc, const struct vma *vma)
{
	struct usyms *u = sc->u;
	__u64 dev = makedev(vma->dev_major, vma->dev_minor);
	struct elf_file *elf = NULL;
	struct ufile *f;
	int fd;

	if (!vma->inode)
		return NULL;
	f = htab_get(&u->files, dev, vma->inode);
	if (f)
		return f;
	fd = open_mapped_file(sc->dirfd, vma);
	if (fd < 0 && fd != -EINVAL)
		return NULL;	/* could not reach it: maybe another time */
	if (fd >= 0) {
		elf = elf_file__open_fd(fd);
		close(fd);
	}
	/* Not regular, or not ELF: a property of the inode, remember it. */
	f = new_ufile(elf);
	if (!f || htab_put(&u->files, dev, vma->inode, f)) {
		elf_file__free(elf);
		free(f);
		return NULL;
	}
	u->stats.files++;
	if (elf)
		u->stats.files_parsed++;
	return f;
}

static int read_mem(int dirfd, __u64 start, void *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = openat(dirfd, "mem", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, (off_t)start);
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/*
 * The vdso has no file: copy it out of the process's memory and parse the
 * copy.  All processes of one kernel and ABI share the same image, so keep
 * one parsed copy per distinct image.
 */
static struct ufile *find_vdso(struct usyms *u, const void *image, size_t len)
{
	size_t i;

	for (i = 0; i < u->nr_vdsos; i++) {
		struct ufile *f = u->vdsos[i];

		if (f->image_len == len && !memcmp(f->image, image, len))
			return f;
	}
	return NULL;
}

static struct ufile *get_vdso(struct scan *sc, const struct vma *vma)
{
	struct usyms *u = sc->u;
	size_t len = vma->end - vma->start;
	struct ufile *f = NULL, **tmp;
	struct elf_file *elf;
	void *image;

	if (len > VDSO_MAX)
		return NULL;
	image = malloc(len);
	if (!image || read_mem(sc->dirfd, vma->start, image, len))
		goto cleanup;
	f = find_vdso(u, image, len);
	if (f)
		goto cleanup;
	tmp = realloc(u->vdsos, (u->nr_vdsos + 1) * sizeof(*tmp));
	if (!tmp)
		goto cleanup;
	u->vdsos = tmp;
	elf = elf_file__open_mem(image, len);
	f = new_ufile(elf);
	if (!f) {
		elf_file__free(elf);
		goto cleanup;
	}
	f->image = image;
	f->image_len = len;
	u->vdsos[u->nr_vdsos++] = f;
	u->stats.vdsos++;
	return f;

cleanup:
	free(image);
	return f;
}

static const char *module_name(struct usyms *u, const struct vma *vma)
{
	if (vma->kind == VMA_ANON)
		return strpool_intern(&u->strs, "[anon]", 6);
	return strpool_intern(&u->strs, vma->path, vma->path_len);
}

static int scan_vma(const struct vma *vma, void *ctx)
{
	struct scan *sc = ctx;
	struct umap *m;

	/* Only code can be in a stack; skip the rest. */
	if (!(vma->flags & VMA_EXEC))
		return 0;
	if (sc->nr == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 32;
		struct umap *tmp = realloc(sc->maps, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		sc->maps = tmp;
		sc->cap = cap;
	}
	m = &sc->maps[sc->nr];
	m->start = vma->start;
	m->end = vma->end;
	m->pgoff = vma->pgoff;
	m->module = module_name(sc->u, vma);
	if (!m->module)
		return -ENOMEM;
	m->file = NULL;
	if (vma->kind == VMA_FILE)
		m->file = get_file(sc, vma);
	else if (vma->kind == VMA_VDSO)
		m->file = get_vdso(sc, vma);
	sc->nr++;
	return 0;
}

/* Sort, and drop any mapping that overlaps the one before it. */
static size_t sort_maps(struct umap *maps, size_t n)
{
	size_t i, out = 0;

	qsort(maps, n, sizeof(*maps), umap_cmp);
	for (i = 0; i < n; i++) {
		if (out && maps[i].start < maps[out - 1].end)
			continue;
		maps[out++] = maps[i];
	}
	return out;
}

/* Field 22 of /proc/PID/stat, counted after the comm's closing ')'. */
static __u64 read_starttime(int dirfd)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ") " comes field 3; skip to field 22. */
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p && sscanf(p + 1, "%llu", &v) != 1)
		v = 0;
	return v;
}

static int open_proc_dir(__u32 pid)
{
	char path[32];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Read the executable mappings of the process open at dirfd. */
static int scan_process(struct usyms *u, int dirfd, struct umap **maps,
			size_t *nr)
{
	struct scan sc = { .u = u, .dirfd = dirfd };
	int err;

	u->stats.maps_reads++;
	err = procmaps__read_at(dirfd, scan_vma, &sc);
	if (err < 0) {
		free(sc.maps);
		return err;
	}
	*maps = sc.maps;
	*nr = sort_maps(sc.maps, sc.nr);
	return 0;
}

static int read_process(struct usyms *u, struct uproc *p)
{
	int dirfd, err;

	dirfd = open_proc_dir(p->pid);
	if (dirfd < 0)
		return dirfd;
	p->starttime = read_starttime(dirfd);
	err = scan_process(u, dirfd, &p->maps, &p->nr_maps);
	close(dirfd);
	if (err)
		return err;
	p->alive = true;
	p->read_ns = now_ns();
	return 0;
}

static int add_process(struct usyms *u, __u32 pid, struct uproc **out)
{
	struct uproc *p;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	err = htab_put(&u->procs, pid, 0, p);
	if (err) {
		free(p);
		return err;
	}
	u->stats.procs++;
	p->err = read_process(u, p);
	/* ESRCH: the task died between open and read. */
	if (p->err == -ESRCH)
		p->err = -ENOENT;
	if (p->err)
		u->stats.procs_gone++;
	*out = p;
	return 0;
}

static int get_process(struct usyms *u, __u32 pid, struct uproc **out)
{
	struct uproc *p;

	if (u->last && u->last->pid == pid) {
		*out = u->last;
		return 0;
	}
	p = htab_get(&u->procs, pid, 0);
	if (!p) {
		int err = add_process(u, pid, &p);

		if (err)
			return err;
	}
	u->last = p;
	*out = p;
	return 0;
}

int usyms__add_process(struct usyms *u, __u32 pid)
{
	struct uproc *p;
	int err;

	err = get_process(u, pid, &p);
	return err ? err : p->err;
}

static bool overlaps_any(const struct umap *maps, size_t n,
			 const struct umap *m)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (maps[i].start < m->end && m->start < maps[i].end)
			return true;
	}
	return false;
}

/*
 * Merge a fresh read of the maps into what we knew: new mappings win,
 * old ones that nothing replaced stay (their code may be in older samples).
 */
static int merge_maps(struct uproc *p, struct umap *fresh, size_t nr_fresh)
{
	struct umap *all;
	size_t i, n = nr_fresh;

	all = realloc(fresh, (nr_fresh + p->nr_maps + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < p->nr_maps; i++) {
		if (!overlaps_any(all, nr_fresh, &p->maps[i]))
			all[n++] = p->maps[i];
	}
	free(p->maps);
	p->maps = all;
	p->nr_maps = sort_maps(all, n);
	return 0;
}

static void refresh_process(struct usyms *u, struct uproc *p)
{
	struct umap *fresh = NULL;
	size_t nr_fresh = 0;
	int dirfd, err;

	p->refreshes++;
	p->read_ns = now_ns();
	dirfd = open_proc_dir(p->pid);
	if (dirfd < 0) {
		p->alive = false;
		return;
	}
	if (read_starttime(dirfd) != p->starttime) {
		p->alive = false;	/* the pid is another process now */
		goto cleanup;
	}
	err = scan_process(u, dirfd, &fresh, &nr_fresh);
	if (err) {
		p->alive = false;
		goto cleanup;
	}
	if (merge_maps(p, fresh, nr_fresh))
		free(fresh);

cleanup:
	close(dirfd);
}

static bool may_refresh(const struct uproc *p)
{
	return p->alive &&
	       (!p->refreshes || now_ns() - p->read_ns >= REFRESH_NS);
}

static const struct umap *find_map(const struct uproc *p, __u64 addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

static void symbolize(const struct umap *m, __u64 addr, struct usym *sym)
{
	const struct ufile *f = m->file;
	__u64 vaddr;

	sym->name = NULL;
	sym->offset = 0;
	sym->build_id = NULL;
	sym->module = m->module;
	sym->map_start = m->start;
	sym->map_end = m->end;
	sym->map_pgoff = m->pgoff;
	/* A vdso image is the mapping itself, whatever pgoff says. */
	sym->file_offset = addr - m->start + (f && f->image ? 0 : m->pgoff);
	if (!f || !f->elf)
		return;
	sym->build_id = elf_file__build_id(f->elf);
	if (elf_file__offset_to_vaddr(f->elf, sym->file_offset, &vaddr))
		return;
	sym->name = elf_file__find(f->elf, vaddr, &sym->offset);
}

int usyms__resolve(struct usyms *u, __u32 pid, __u64 addr, struct usym *sym)
{
	const struct umap *m;
	struct uproc *p;
	int err;

	err = get_process(u, pid, &p);
	if (err)
		return err;
	if (p->err)
		return p->err;
	m = find_map(p, addr);
	if (!m && may_refresh(p)) {
		refresh_process(u, p);
		m = find_map(p, addr);
	}
	if (!m)
		return -ENOENT;
	symbolize(m, addr, sym);
	return 0;
}

struct usyms *usyms__new(void)
{
	return calloc(1, sizeof(struct usyms));
}

static void free_ufile(struct ufile *f)
{
	elf_file__free(f->elf);
	free(f->image);
	free(f);
}

void usyms__free(struct usyms *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->procs.cap; i++) {
		struct uproc *p = u->procs.slots[i].val;

		if (p) {
			free(p->maps);
			free(p);
		}
	}
	for (i = 0; i < u->files.cap; i++) {
		if (u->files.slots[i].val)
			free_ufile(u->files.slots[i].val);
	}
	for (i = 0; i < u->nr_vdsos; i++)
		free_ufile(u->vdsos[i]);
	free(u->procs.slots);
	free(u->files.slots);
	free(u->vdsos);
	strpool_free(&u->strs);
	free(u);
}

void usyms__stats(const struct usyms *u, struct usyms_stats *st)
{
	*st = u->stats;
}
