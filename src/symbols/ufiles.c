// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The per-run cache of parsed files.  Every file is untrusted: it is
 * reached through the process's own /proc entries (procfs.h), read only if
 * it is a regular file, and parsed with pread(), never mmap().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbols/caps.h"
#include "symbols/debuginfo.h"
#include "symbols/dwlines.h"
#include "symbols/debuginfod.h"
#include "symbols/elf_file.h"
#include "lib/htab.h"
#include "symbols/procfs.h"
#include "symbols/procmaps.h"
#include "symbols/ufiles.h"
#include "lib/util.h"

/* A vdso is two to four pages; anything much bigger is not one. */
#define VDSO_MAX		(1u << 20)

/*
 * What a process sees of the files: its mount namespace and its root
 * directory.  Processes of one view resolve every path alike.
 */
struct view {
	__u64 mntns;		/* inode of /proc/PID/ns/mnt */
	__u64 root_dev, root_ino;
};

/*
 * A file as one view names it: with a debug file found in that view
 * (struct scoped), else as every process does (the shared entry).
 */
struct view_file {
	__u64 dev, ino;		/* the mapped file */
	struct view view;
	struct ufile *f;	/* files' or scoped's entry: never freed here */
};

/*
 * A file named through a debug file that not every process may see: one
 * parse per (file, debug file), shared by every view that finds that
 * same debug file.  f is first: a struct scoped is freed as its ufile.
 */
struct scoped {
	struct ufile f;
	__u64 dev, ino;		/* the mapped file */
	__u64 dbg_dev, dbg_ino;	/* its debug file */
};

struct ufiles {
	struct htab files;	/* (dev, inode) -> struct ufile: for every process */
	struct htab views;	/* hash -> struct view_file */
	struct htab scoped;	/* hash -> struct scoped */
	struct htab vdsos;	/* (hash of the bytes, length) -> struct ufile */
	struct view own;	/* the profiler's own view */
	char *debug_dir;
	struct debuginfod *debuginfod;	/* NULL: no servers */
	const volatile sig_atomic_t *stop;
	struct caps *caps;
	size_t dw_fds;		/* ufiles holding a DWARF descriptor */
	struct dwlines_budget dw_budget;	/* every file's open DWARF */
	struct ufiles_stats stats;
};

static struct ufile *new_ufile(struct elf_file *elf)
{
	struct ufile *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->elf = elf;
	f->asker = UFILE_NOT_ASKED;
	f->dw_fd = -1;
	return f;
}

static void free_ufile(struct ufile *f)
{
	if (f->dw)
		dwlines__free(f->dw);
	else if (f->dw_fd >= 0)
		close(f->dw_fd);
	elf_file__free(f->elf);
	free(f->image);
	free(f);
}

/* Whether a debug file (dbg) would name more of elf than it names now. */
static bool wants_names(const struct elf_file *elf)
{
	enum elf_sym_source src = elf_file__sym_source(elf);

	return src == ELF_SYMS_DYNSYM || src == ELF_SYMS_NONE;
}

/*
 * A file no local debug file names: ask the debuginfod servers, in the
 * background (ufiles__take_fetched() names it once its file came).
 */
static void ask_debuginfod(struct ufiles *u, const struct elf_file *elf,
			   const struct vma *vma, __s64 reader)
{
	char path[4096];
	size_t n = vma->path_len < sizeof(path) - 1 ? vma->path_len : sizeof(path) - 1;

	if (!u->debuginfod || !elf_file__build_id(elf))
		return;
	memcpy(path, vma->path, n);
	path[n] = '\0';
	debuginfod__ask(u->debuginfod, elf_file__build_id(elf), path, reader);
}

/*
 * Keep a descriptor of fd in *dw_fd for its DWARF lines, if it has some,
 * none is kept yet, and the cap on descriptors allows.
 */
static void keep_dwarf(struct ufiles *u, int fd, int *dw_fd)
{
	if (*dw_fd >= 0 || u->dw_fds >= UFILES_MAX_DWARF_FILES || !dwlines__probe(fd))
		return;
	*dw_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (*dw_fd >= 0)
		u->dw_fds++;
}

/*
 * A stripped file: look for its debug file where only root writes, the
 * profiler's DEBUG_DIR, so that it names the file for every process.  No
 * user placed anything there: root reads it as root, whoever's process
 * came first.  The caps it hit.
 */
static unsigned int load_shared_debuginfo(struct ufiles *u,
					  struct elf_file *elf,
					  const struct vma *vma, int *dw_fd)
{
	struct debuginfo_opts o = {
		.debug_dir = u->debug_dir, .stop = u->stop, .reader = 0,
	};
	struct debuginfo_file dbg;

	if (elf_file__sym_source(elf) == ELF_SYMS_MINIDEBUG)
		u->stats.minidebug++;
	if (!wants_names(elf))
		return 0;
	if (debuginfo__find(elf, vma->path, vma->path_len, -1,
			    DEBUGINFO_DEBUG_DIR, &o, &dbg))
		return o.capped;
	if (!elf_file__merge_symbols(elf, dbg.elf, ELF_SYMS_DEBUGFILE))
		u->stats.debug_files++;
	elf_file__free(dbg.elf);
	keep_dwarf(u, dbg.fd, dw_fd);
	close(dbg.fd);
	return o.capped;
}

/*
 * A process of reader maps f too, which a process of another user mapped
 * first: offer reader the debuginfod lookup asked for that user
 * (debuginfod__ask()), so that no user can spend or delay the debug files
 * of another's files by mapping them first.
 */
static void ask_again(struct ufiles *u, struct ufile *f, const struct vma *vma,
		      __s64 reader)
{
	if (!f->elf || f->asker == reader || !wants_names(f->elf))
		return;
	f->asker = reader;
	ask_debuginfod(u, f->elf, vma, reader);
}

static struct procfs_mapping mapping_of(const struct vma *vma)
{
	return (struct procfs_mapping){
		.start = vma->start, .end = vma->end,
		.dev = makedev(vma->dev_major, vma->dev_minor), .ino = vma->inode,
		.path = vma->path, .path_len = vma->path_len,
		.deleted = vma->deleted,
	};
}

/*
 * The parsed file behind a file mapping as every process sees it, from
 * the cache if any process mapped it before.  NULL if it has no symbols
 * for us, or on a failure that a later process may not hit (not cached).
 * dirfd may be -1.
 */
static struct ufile *get_shared(struct ufiles *u, int dirfd,
				const struct vma *vma)
{
	struct procfs_mapping pm = mapping_of(vma);
	__u64 dev = pm.dev;
	struct elf_file *elf = NULL;
	unsigned int capped = 0;
	struct ufile *f;
	int fd, dw_fd = -1;

	if (!vma->inode)
		return NULL;
	f = htab__get(&u->files, dev, vma->inode);
	if (f)
		return f;
	fd = procfs__open_mapped(dirfd, &pm);
	if (fd < 0 && fd != -EINVAL)
		return NULL;	/* could not reach it: maybe another time */
	if (fd >= 0) {
		elf = elf_file__open_fd(fd);
		if (!elf && errno == EFBIG)
			capped |= CAP_BIT(CAP_SECTION);
		if (elf)
			keep_dwarf(u, fd, &dw_fd);
		close(fd);
	}
	if (elf)
		capped |= load_shared_debuginfo(u, elf, vma, &dw_fd) |
			  elf_file__capped(elf);
	if (capped)
		caps__hit(u->caps, capped, vma->path, vma->path_len);
	/* Not regular, or not ELF: a property of the inode, remember it. */
	f = new_ufile(elf);
	if (!f || htab__put(&u->files, dev, vma->inode, f)) {
		elf_file__free(elf);
		free(f);
		if (dw_fd >= 0) {
			close(dw_fd);
			u->dw_fds--;
		}
		return NULL;
	}
	f->dw_fd = dw_fd;
	u->stats.files++;
	if (elf)
		u->stats.files_parsed++;
	return f;
}

/*
 * The view of the process whose /proc directory is dirfd, rootfd its root.
 * rootfd is opened before ns/mnt is read: a process may leave a mount
 * namespace (unshare) but not enter one it has no privilege over, so the
 * files reached through rootfd are those of the view returned, or of one
 * the process left, never another user's.
 */
static int view_of(int dirfd, int rootfd, struct view *v)
{
	struct stat root, ns;

	if (fstat(rootfd, &root) || fstatat(dirfd, "ns/mnt", &ns, 0))
		return -errno;
	v->mntns = ns.st_ino;
	v->root_dev = root.st_dev;
	v->root_ino = root.st_ino;
	return 0;
}

static bool same_view(const struct view *a, const struct view *b)
{
	return a->mntns == b->mntns && a->root_dev == b->root_dev &&
	       a->root_ino == b->root_ino;
}

static bool view_file_eq(const void *val, const void *ctx)
{
	const struct view_file *a = val, *b = ctx;

	return a->dev == b->dev && a->ino == b->ino &&
	       same_view(&a->view, &b->view);
}

static bool scoped_eq(const void *val, const void *ctx)
{
	const struct scoped *a = val, *b = ctx;

	return a->dev == b->dev && a->ino == b->ino &&
	       a->dbg_dev == b->dbg_dev && a->dbg_ino == b->dbg_ino;
}

static bool same_build_id(const struct elf_file *a, const struct elf_file *b)
{
	const char *x = elf_file__build_id(a), *y = elf_file__build_id(b);

	return x == y || (x && y && !strcmp(x, y));
}

/*
 * The mapped file parsed anew, for a debug file to name; NULL if it is not
 * the file shared was parsed from any more.
 */
static struct elf_file *parse_again(int dirfd, const struct vma *vma,
				    const struct elf_file *shared)
{
	struct procfs_mapping pm = mapping_of(vma);
	struct elf_file *elf;
	int fd;

	fd = procfs__open_mapped(dirfd, &pm);
	if (fd < 0)
		return NULL;
	elf = elf_file__open_fd(fd);
	close(fd);
	if (elf && !same_build_id(elf, shared)) {
		elf_file__free(elf);
		return NULL;
	}
	return elf;
}

/*
 * The file named with dbg, a debug file one view found: parsed once per
 * (file, debug file), whatever the views that find it.  shared when that
 * fails.
 */
static struct ufile *get_scoped(struct ufiles *u, struct ufile *shared,
				int dirfd, const struct vma *vma,
				const struct debuginfo_file *dbg)
{
	struct scoped key = {
		.dev = makedev(vma->dev_major, vma->dev_minor), .ino = vma->inode,
		.dbg_dev = dbg->dev, .dbg_ino = dbg->ino,
	};
	struct elf_file *elf;
	struct scoped *sc;
	struct hent *e;
	__u64 h;

	h = htab__hash(htab__hash(key.dev, key.ino),
		       htab__hash(key.dbg_dev, key.dbg_ino));
	e = htab__slot(&u->scoped, h, 0, scoped_eq, &key);
	if (!e)
		return shared;
	if (e->val)
		return &((struct scoped *)e->val)->f;
	elf = parse_again(dirfd, vma, shared->elf);
	if (!elf || elf_file__merge_symbols(elf, dbg->elf, ELF_SYMS_DEBUGFILE))
		goto fail;
	sc = malloc(sizeof(*sc));
	if (!sc)
		goto fail;
	*sc = key;
	sc->f.elf = elf;
	sc->f.asker = UFILE_NOT_ASKED;
	sc->f.dw_fd = -1;
	keep_dwarf(u, dbg->fd, &sc->f.dw_fd);
	htab__fill(&u->scoped, e, h, 0, sc);
	u->stats.debug_files++;
	return &sc->f;

fail:
	elf_file__free(elf);
	return shared;
}

/*
 * shared as the process's view names it: through a debug file found in
 * its root (beside the file only, in the profiler's own view, whose
 * DEBUG_DIR was searched for shared), else as shared, and then the
 * debuginfod servers are asked.
 */
static struct ufile *find_in_view(struct ufiles *u, struct ufile *shared,
				  int dirfd, int rootfd, const struct vma *vma,
				  __s64 reader, bool own)
{
	struct debuginfo_opts o = {
		.debug_dir = u->debug_dir, .stop = u->stop, .reader = reader,
	};
	unsigned int where = DEBUGINFO_BESIDE;
	struct debuginfo_file dbg;
	struct ufile *f = shared;

	if (!own)
		where |= DEBUGINFO_DEBUG_DIR;
	if (debuginfo__find(shared->elf, vma->path, vma->path_len, rootfd,
			    where, &o, &dbg)) {
		shared->asker = reader;
		ask_debuginfod(u, shared->elf, vma, reader);
	} else {
		f = get_scoped(u, shared, dirfd, vma, &dbg);
		elf_file__free(dbg.elf);
		close(dbg.fd);
	}
	if (o.capped)
		caps__hit(u->caps, o.capped, vma->path, vma->path_len);
	return f;
}

/*
 * A stripped file that root's DEBUG_DIR does not name, in the view of the
 * process (dirfd): looked up once per (file, view).  shared when the view
 * cannot be told.
 */
static struct ufile *get_in_view(struct ufiles *u, struct ufile *shared,
				 int dirfd, const struct vma *vma, __s64 reader)
{
	struct view_file key = {
		.dev = makedev(vma->dev_major, vma->dev_minor), .ino = vma->inode,
	};
	struct ufile *f = shared;
	struct view_file *vf;
	struct hent *e;
	int rootfd;
	__u64 h;

	rootfd = openat(dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return shared;
	if (view_of(dirfd, rootfd, &key.view))
		goto out;
	h = htab__hash(htab__hash(key.dev, key.ino),
		       htab__hash(key.view.mntns,
				  htab__hash(key.view.root_dev, key.view.root_ino)));
	e = htab__slot(&u->views, h, 0, view_file_eq, &key);
	if (!e)
		goto out;
	if (e->val) {
		f = ((struct view_file *)e->val)->f;
		goto out;
	}
	vf = malloc(sizeof(*vf));
	if (!vf)
		goto out;
	f = find_in_view(u, shared, dirfd, rootfd, vma, reader,
			 same_view(&key.view, &u->own));
	*vf = key;
	vf->f = f;
	htab__fill(&u->views, e, h, 0, vf);
out:
	close(rootfd);
	return f;
}

/*
 * The parsed file behind a file mapping of the process (dirfd, -1 if it
 * is gone): the shared entry, unless root's DEBUG_DIR left it without
 * names and a debug file in the process's view names it.
 */
static struct ufile *get_file(struct ufiles *u, int dirfd,
			      const struct vma *vma, __s64 reader)
{
	struct ufile *f = get_shared(u, dirfd, vma), *view;

	if (!f || !f->elf || !wants_names(f->elf))
		return f;
	/* Nothing to find its debug file by, in any view or server. */
	if (!elf_file__build_id(f->elf) && !elf_file__debuglink(f->elf, NULL))
		return f;
	if (dirfd < 0) {
		ask_again(u, f, vma, reader);
		return f;
	}
	view = get_in_view(u, f, dirfd, vma, reader);
	/* Named by nothing in its view: the servers, for this user too. */
	if (view == f)
		ask_again(u, f, vma, reader);
	return view;
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

struct vdso_key {
	const void *image;
	size_t len;
};

static bool same_image(const void *val, const void *ctx)
{
	const struct ufile *f = val;
	const struct vdso_key *k = ctx;

	return f->image_len == k->len && !memcmp(f->image, k->image, k->len);
}

/*
 * The vdso has no file: copy it out of the process's memory and parse the
 * copy.  All processes of one kernel and ABI share the same image, so keep
 * one parsed copy per distinct image, found by a hash of its bytes (a
 * process may write to its own copy: each it makes is one more image).
 */
static struct ufile *get_vdso(struct ufiles *u, int dirfd,
			      const struct vma *vma)
{
	struct vdso_key key = { .len = vma->end - vma->start };
	struct ufile *f = NULL;
	struct elf_file *elf;
	struct hent *e;
	void *image;
	__u64 h;

	if (dirfd < 0 || key.len > VDSO_MAX)
		return NULL;
	image = malloc(key.len);
	if (!image || read_mem(dirfd, vma->start, image, key.len))
		goto cleanup;
	key.image = image;
	h = htab__hash_bytes(image, key.len);
	e = htab__slot(&u->vdsos, h, key.len, same_image, &key);
	if (!e)
		goto cleanup;
	if (e->val) {
		f = e->val;
		goto cleanup;
	}
	elf = elf_file__open_mem(image, key.len);
	f = new_ufile(elf);
	if (!f) {
		elf_file__free(elf);
		goto cleanup;
	}
	f->image = image;
	f->image_len = key.len;
	htab__fill(&u->vdsos, e, h, key.len, f);
	u->stats.vdsos++;
	return f;

cleanup:
	free(image);
	return f;
}

struct ufile *ufiles__get(struct ufiles *u, int proc_dirfd,
			  const struct vma *vma, __s64 reader)
{
	if (vma->kind == VMA_FILE)
		return get_file(u, proc_dirfd, vma, reader);
	if (vma->kind == VMA_VDSO)
		return get_vdso(u, proc_dirfd, vma);
	return NULL;
}

/* The profiler's own view; all zeros (no process's) if it cannot be told. */
static void own_view(struct view *v)
{
	int dirfd, rootfd;

	dirfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || rootfd < 0 || view_of(dirfd, rootfd, v))
		memset(v, 0, sizeof(*v));
	if (dirfd >= 0)
		close(dirfd);
	if (rootfd >= 0)
		close(rootfd);
}

struct ufiles *ufiles__new(const char *debug_dir, struct debuginfod *debuginfod,
			  const volatile sig_atomic_t *stop, struct caps *caps)
{
	struct ufiles *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	own_view(&u->own);
	u->debuginfod = debuginfod;
	u->stop = stop;
	u->caps = caps;
	dwlines_budget__init(&u->dw_budget, DWLINES_BUDGET_BYTES);
	if (debug_dir) {
		u->debug_dir = strdup(debug_dir);
		if (!u->debug_dir) {
			free(u);
			return NULL;
		}
	}
	return u;
}

void ufiles__free(struct ufiles *u)
{
	struct hent *e;

	if (!u)
		return;
	for (size_t pos = 0; (e = htab__next(&u->files, &pos));)
		free_ufile(e->val);
	for (size_t pos = 0; (e = htab__next(&u->vdsos, &pos));)
		free_ufile(e->val);
	for (size_t pos = 0; (e = htab__next(&u->scoped, &pos));)
		free_ufile(e->val);
	for (size_t pos = 0; (e = htab__next(&u->views, &pos));)
		free(e->val);
	htab__free(&u->files);
	htab__free(&u->scoped);
	htab__free(&u->views);
	htab__free(&u->vdsos);
	free(u->debug_dir);
	free(u);
}

void ufiles__keep(struct ufile *f)
{
	f->keep = true;
}

/* Free the entries of h not marked since the last sweep; unmark the others. */
static size_t sweep(struct ufiles *u, struct htab *h)
{
	struct ufile *f;
	struct hent *e;
	size_t n = 0;

	for (size_t pos = 0; (e = htab__next(h, &pos));) {
		f = e->val;
		if (f->keep) {
			f->keep = false;
			continue;
		}
		htab__del(h, e);
		if (f->dw_fd >= 0)
			u->dw_fds--;
		free_ufile(f);
		n++;
	}
	htab__compact(h);
	return n;
}

/* Name with dbg every file of build-id id that wants names. */
static size_t merge_fetched(struct ufiles *u, const char *id,
			    const struct elf_file *dbg)
{
	const char *have;
	struct ufile *f;
	struct hent *e;
	size_t n = 0;

	for (size_t pos = 0; (e = htab__next(&u->files, &pos));) {
		f = e->val;
		if (!f->elf || !wants_names(f->elf))
			continue;
		have = elf_file__build_id(f->elf);
		if (have && !strcmp(have, id) &&
		    !elf_file__merge_symbols(f->elf, dbg, ELF_SYMS_DEBUGFILE))
			n++;
	}
	return n;
}

/* For debuginfod__next_wanted(): a sampled file of build-id id wants names. */
static bool sampled_wants(void *ctx, const char *id)
{
	struct ufiles *u = ctx;
	const char *have;
	struct ufile *f;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&u->files, &pos));) {
		f = e->val;
		if (!f->sampled || !f->elf || !wants_names(f->elf))
			continue;
		have = elf_file__build_id(f->elf);
		if (have && !strcmp(have, id))
			return true;
	}
	return false;
}

size_t ufiles__take_fetched(struct ufiles *u)
{
	struct elf_file *dbg;
	char id[160];
	size_t n = 0, merged;

	while ((dbg = debuginfod__next_wanted(u->debuginfod, sampled_wants, u,
					      id, sizeof(id)))) {
		merged = merge_fetched(u, id, dbg);
		u->stats.debuginfod_files += merged;
		n += merged;
		elf_file__free(dbg);
	}
	return n;
}

/*
 * Forget the views of files no process we know maps, before the sweeps
 * clear the marks: a view must not outlive the entry it points to.
 */
static void sweep_views(struct ufiles *u)
{
	struct view_file *vf;
	struct hent *e;

	for (size_t pos = 0; (e = htab__next(&u->views, &pos));) {
		vf = e->val;
		if (vf->f->keep)
			continue;
		htab__del(&u->views, e);
		free(vf);
	}
	htab__compact(&u->views);
}

size_t ufiles__sweep(struct ufiles *u)
{
	size_t n;

	sweep_views(u);
	n = sweep(u, &u->files);
	sweep(u, &u->scoped);

	u->stats.files_pruned += n;
	u->stats.vdsos_pruned += sweep(u, &u->vdsos);
	return n;
}

struct dwlines *ufiles__dwlines(struct ufiles *u, struct ufile *f)
{
	if (f->dw || f->dw_fd < 0)
		return f->dw;
	/* The descriptor goes with it, and stays counted until swept. */
	f->dw = dwlines__open(f->dw_fd, &u->dw_budget);
	if (!f->dw) {
		f->dw_fd = -1;	/* closed by dwlines__open() */
		u->dw_fds--;
	}
	return f->dw;
}

void ufiles__stats(const struct ufiles *u, struct ufiles_stats *st)
{
	*st = u->stats;
	st->dwarf_opened = u->dw_budget.opened;
	st->dwarf_closed = u->dw_budget.closed;
	st->dwarf_refused = u->dw_budget.refused;
}
