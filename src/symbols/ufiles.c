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
#include "symbols/debuginfod.h"
#include "symbols/elf_file.h"
#include "lib/htab.h"
#include "symbols/procfs.h"
#include "symbols/procmaps.h"
#include "symbols/ufiles.h"
#include "lib/util.h"

/* A vdso is two to four pages; anything much bigger is not one. */
#define VDSO_MAX		(1u << 20)

struct ufiles {
	struct htab files;	/* (dev, inode) -> struct ufile */
	struct htab vdsos;	/* (hash of the bytes, length) -> struct ufile */
	char *debug_dir;
	struct debuginfod *debuginfod;	/* NULL: no servers */
	const volatile sig_atomic_t *stop;
	struct caps *caps;
	struct ufiles_stats stats;
};

static struct ufile *new_ufile(struct elf_file *elf)
{
	struct ufile *f = calloc(1, sizeof(*f));

	if (f)
		f->elf = elf;
	return f;
}

static void free_ufile(struct ufile *f)
{
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
 * A stripped file: look for its debug file in the process's root too, one
 * that reader (the process's owner) could read, then on the debuginfod
 * servers.  The caps it hit.
 */
static unsigned int load_debuginfo(struct ufiles *u, struct elf_file *elf,
				   int dirfd, const struct vma *vma,
				   __s64 reader)
{
	struct debuginfo_opts o = {
		.debug_dir = u->debug_dir, .stop = u->stop, .reader = reader,
	};
	int rootfd = -1;

	if (elf_file__sym_source(elf) == ELF_SYMS_MINIDEBUG)
		u->stats.minidebug++;
	if (!wants_names(elf))
		return 0;
	if (dirfd >= 0)
		rootfd = openat(dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!debuginfo__load(elf, vma->path, vma->path_len, rootfd, &o))
		u->stats.debug_files++;
	else
		ask_debuginfod(u, elf, vma, reader);
	if (rootfd >= 0)
		close(rootfd);
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

/*
 * The parsed file behind a file mapping, from the cache if any process
 * mapped it before.  NULL if it has no symbols for us, or on a failure
 * that a later process may not hit (not cached).  dirfd may be -1.
 */
static struct ufile *get_file(struct ufiles *u, int dirfd,
			      const struct vma *vma, __s64 reader)
{
	__u64 dev = makedev(vma->dev_major, vma->dev_minor);
	struct procfs_mapping pm = {
		.start = vma->start, .end = vma->end,
		.dev = dev, .ino = vma->inode,
		.path = vma->path, .path_len = vma->path_len,
		.deleted = vma->deleted,
	};
	struct elf_file *elf = NULL;
	unsigned int capped = 0;
	struct ufile *f;
	int fd;

	if (!vma->inode)
		return NULL;
	f = htab__get(&u->files, dev, vma->inode);
	if (f) {
		ask_again(u, f, vma, reader);
		return f;
	}
	fd = procfs__open_mapped(dirfd, &pm);
	if (fd < 0 && fd != -EINVAL)
		return NULL;	/* could not reach it: maybe another time */
	if (fd >= 0) {
		elf = elf_file__open_fd(fd);
		if (!elf && errno == EFBIG)
			capped |= CAP_BIT(CAP_SECTION);
		close(fd);
	}
	if (elf)
		capped |= load_debuginfo(u, elf, dirfd, vma, reader) |
			  elf_file__capped(elf);
	if (capped)
		caps__hit(u->caps, capped, vma->path, vma->path_len);
	/* Not regular, or not ELF: a property of the inode, remember it. */
	f = new_ufile(elf);
	if (!f || htab__put(&u->files, dev, vma->inode, f)) {
		elf_file__free(elf);
		free(f);
		return NULL;
	}
	f->asker = reader;
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

struct ufiles *ufiles__new(const char *debug_dir, struct debuginfod *debuginfod,
			  const volatile sig_atomic_t *stop, struct caps *caps)
{
	struct ufiles *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->debuginfod = debuginfod;
	u->stop = stop;
	u->caps = caps;
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
	htab__free(&u->files);
	htab__free(&u->vdsos);
	free(u->debug_dir);
	free(u);
}

void ufiles__keep(struct ufile *f)
{
	f->keep = true;
}

/* Free the entries of h not marked since the last sweep; unmark the others. */
static size_t sweep(struct htab *h)
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

size_t ufiles__sweep(struct ufiles *u)
{
	size_t n = sweep(&u->files);

	u->stats.files_pruned += n;
	u->stats.vdsos_pruned += sweep(&u->vdsos);
	return n;
}

void ufiles__stats(const struct ufiles *u, struct ufiles_stats *st)
{
	*st = u->stats;
}
