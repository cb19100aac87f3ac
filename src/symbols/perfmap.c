// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perf map files: parsed into one copy of the text, with names terminated
 * in place, and one sorted array of entries; no allocation per line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/caps.h"
#include "lib/util.h"
#include "symbols/perfmap.h"
#include "symbols/procfs.h"
#include "symbols/procmaps.h"
#include "lib/text.h"

/*
 * How much older than the process's start a map may look: the start time
 * is rounded down to a clock tick and file times lag up to a jiffy.
 */
#define MTIME_SLACK_NS	50000000ULL

struct pment {
	__u64 start, size;
	__u32 name;		/* offset in the input, then in text */
	__u32 name_len;
	__u32 line;		/* later lines win */
};

struct perfmap {
	struct pment *ents;
	size_t nr;
	char *text;		/* the kept names, each NUL-terminated */
	bool capped;		/* entries were left out: CAP_PERFMAP */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Optional "0x", 1 to 16 hex digits. */
static bool parse_hex(const char **pp, const char *end, __u64 *val)
{
	const char *p = *pp;
	__u64 v = 0;
	int d, n = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    util__hex_digit(p[2]) >= 0)
		p += 2;
	while (p < end && (d = util__hex_digit(*p)) >= 0) {
		if (++n > 16)
			return false;
		v = v << 4 | (__u64)d;
		p++;
	}
	*pp = p;
	*val = v;
	return n > 0;
}

/* Parse line [p, end) of buf; false if it is not an entry. */
static bool parse_line(const char *buf, const char *p, const char *end,
		       struct pment *e)
{
	const char *q = p;

	while (q < end && is_blank(*q))
		q++;
	if (!parse_hex(&q, end, &e->start) || q == end || !is_blank(*q))
		return false;
	while (q < end && is_blank(*q))
		q++;
	if (!parse_hex(&q, end, &e->size) || q == end || !is_blank(*q))
		return false;
	while (q < end && is_blank(*q))
		q++;
	while (end > q && (is_blank(end[-1]) || end[-1] == '\r'))
		end--;
	if (q == end || !e->size || e->start + e->size < e->start)
		return false;
	/* A NUL ends the name, as it would in C. */
	e->name = (__u32)(q - buf);
	e->name_len = (__u32)strnlen(q, (size_t)(end - q));
	return e->name_len > 0;
}

static int cmp_ent(const void *pa, const void *pb)
{
	const struct pment *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? 1 : a->line > b->line ? -1 : 0;
}

/* Sort, and keep the latest line of each start address. */
static void drop_duplicates(struct perfmap *pm)
{
	size_t i, out = 0;

	if (pm->nr)
		qsort(pm->ents, pm->nr, sizeof(*pm->ents), cmp_ent);
	for (i = 0; i < pm->nr; i++) {
		if (out && pm->ents[out - 1].start == pm->ents[i].start)
			continue;
		pm->ents[out++] = pm->ents[i];
	}
	pm->nr = out;
}

/* Copy the names the entries kept out of buf, and drop the rest. */
static int keep_names(struct perfmap *pm, const char *buf)
{
	size_t total = 1, pos = 0;
	struct pment *shrunk;

	for (size_t i = 0; i < pm->nr; i++)
		total += pm->ents[i].name_len + 1;
	pm->text = malloc(total);
	if (!pm->text)
		return -ENOMEM;
	for (size_t i = 0; i < pm->nr; i++) {
		struct pment *e = &pm->ents[i];

		memcpy(pm->text + pos, buf + e->name, e->name_len);
		/* Our copy, made safe to print. */
		text__sanitize(pm->text + pos, e->name_len);
		pm->text[pos + e->name_len] = '\0';
		e->name = (__u32)pos;
		pos += e->name_len + 1;
	}
	shrunk = pm->nr ? realloc(pm->ents, pm->nr * sizeof(*pm->ents)) : NULL;
	if (shrunk)
		pm->ents = shrunk;
	return 0;
}

/* Entries a table starts with: room for a small map, grown as needed. */
#define FIRST_ENTRIES	4096

/*
 * One entry more.  A full table first drops the lines that later ones
 * replaced, and grows only if that left it over half full: a map of one
 * line repeated a million times stays a few thousand entries.  False past
 * CAP_PERFMAP_ENTRIES: the rest of the file is left out.
 */
static bool room_for_one(struct perfmap *pm, size_t *cap)
{
	size_t want;

	if (pm->nr < *cap)
		return true;
	drop_duplicates(pm);
	if (pm->nr <= *cap / 2)
		return true;
	want = *cap * 2 < CAP_PERFMAP_ENTRIES ? *cap * 2 : CAP_PERFMAP_ENTRIES;
	if (want <= *cap) {
		pm->capped = true;
		return false;
	}
	/* Exact growth, not util__grow_array(): the cap is a bound on memory. */
	{
		struct pment *bigger = realloc(pm->ents, want * sizeof(*pm->ents));

		if (!bigger)
			return false;
		pm->ents = bigger;
		*cap = want;
	}
	return true;
}

struct perfmap *perfmap__parse(const char *buf, size_t len)
{
	struct perfmap *pm;
	size_t cap;
	__u32 line = 0;
	const char *p, *end;

	if (len > CAP_PERFMAP_BYTES) {
		errno = EFBIG;
		return NULL;
	}
	cap = FIRST_ENTRIES;
	pm = calloc(1, sizeof(*pm));
	if (!pm || !(pm->ents = malloc(cap * sizeof(*pm->ents))))
		goto nomem;
	for (p = buf, end = buf + len; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct pment e = { .line = line };

		if (parse_line(buf, p, eol, &e)) {
			if (!room_for_one(pm, &cap)) {
				if (!pm->capped)
					goto nomem;
				break;
			}
			pm->ents[pm->nr++] = e;
		}
		p = eol + 1;
	}
	drop_duplicates(pm);
	if (keep_names(pm, buf))
		goto nomem;
	return pm;

nomem:
	perfmap__free(pm);
	errno = ENOMEM;
	return NULL;
}

bool perfmap__capped(const struct perfmap *pm)
{
	return pm->capped;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->ents);
	free(pm->text);
	free(pm);
}

size_t perfmap__nr(const struct perfmap *pm)
{
	return pm->nr;
}

const char *perfmap__find(const struct perfmap *pm, __u64 addr,
			  __u64 *offset)
{
	size_t lo = 0, hi = pm->nr;
	const struct pment *e;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->ents[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &pm->ents[lo - 1];
	if (addr - e->start >= e->size)
		return NULL;
	if (offset)
		*offset = addr - e->start;
	return pm->text + e->name;
}

bool perfmap__trusted(const struct stat *st, const struct perfmap_owner *who)
{
	__u64 mtime = (__u64)st->st_mtim.tv_sec * 1000000000ULL +
		      (__u64)st->st_mtim.tv_nsec;

	if (!S_ISREG(st->st_mode) || (st->st_mode & S_IWOTH))
		return false;
	/* Root's file only for a root process: never one it could not read. */
	if (st->st_uid != who->euid && st->st_uid != who->fsuid)
		return false;
	if (st->st_mtim.tv_sec < 0 ||
	    mtime + MTIME_SLACK_NS < who->not_before_ns)
		return false;
	if (who->not_after_ns && mtime > who->not_after_ns + MTIME_SLACK_NS)
		return false;
	return true;
}

static void make_stamp(const struct stat *st, struct perfmap_stamp *s)
{
	memset(s, 0, sizeof(*s));
	s->dev = (__u64)st->st_dev;
	s->ino = (__u64)st->st_ino;
	s->size = (__u64)st->st_size;
	s->mtime_sec = st->st_mtim.tv_sec;
	s->mtime_nsec = st->st_mtim.tv_nsec;
}

/*
 * Whether fd is the root of a mount: a file bind-mounted over the map's
 * path by someone who may mount (in a user namespace of their own) could
 * be any file of the host.
 */
static bool is_mount_root(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, 0, &stx))
		return true;	/* cannot tell: refuse */
	return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

int perfmap__read_at(int dirfd, const char *path, size_t path_len,
		     const struct perfmap_owner *who,
		     struct perfmap_stamp *stamp, struct perfmap **out)
{
	struct perfmap_stamp now;
	struct stat st;
	size_t len;
	char *buf;
	int fd, err;

	fd = procfs__open_in_root(dirfd, path, path_len, O_NOFOLLOW);
	fd = procfs__reopen_regular(fd, &st);
	if (fd < 0)
		return fd == -EINVAL ? -EPERM : fd;
	if (!perfmap__trusted(&st, who) || is_mount_root(fd)) {
		err = -EPERM;
		goto cleanup;
	}
	make_stamp(&st, &now);
	if (!memcmp(&now, stamp, sizeof(now))) {
		err = -EALREADY;
		goto cleanup;
	}
	err = procmaps__read_fd(fd, CAP_PERFMAP_BYTES, &buf, &len);
	if (err)
		goto cleanup;
	/* A runtime may be writing the last line: leave it for next time. */
	while (len && buf[len - 1] != '\n')
		len--;
	*out = perfmap__parse(buf, len);
	err = *out ? 0 : -errno;
	free(buf);
	if (!err)
		*stamp = now;

cleanup:
	close(fd);
	return err;
}
