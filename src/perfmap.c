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

#include "util.h"
#include "perfmap.h"
#include "procfs.h"
#include "procmaps.h"
#include "text.h"

/* Far above any real map (the JVM's reach tens of MB). */
#define PERFMAP_MAX	(256u << 20)
/*
 * How much older than the process's start a map may look: the start time
 * is rounded down to a clock tick and file times lag up to a jiffy.
 */
#define MTIME_SLACK_NS	50000000ULL

struct pment {
	__u64 start, size;
	__u32 name;		/* offset in text */
	__u32 line;		/* later lines win */
};

struct perfmap {
	struct pment *ents;
	size_t nr;
	char *text;
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

/* Parse line [p, end) of text; false if it is not an entry. */
static bool parse_line(char *text, char *p, char *end, struct pment *e)
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
	*end = '\0';
	/* Our copy, safe to print: up to a NUL, which ends the name. */
	text__sanitize_str((char *)q);
	e->name = (__u32)(q - text);
	return true;
}

static int cmp_ent(const void *pa, const void *pb)
{
	const struct pment *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? 1 : a->line > b->line ? -1 : 0;
}

static int add_entry(struct perfmap *pm, size_t *cap, const struct pment *e)
{
	if (util__grow_array((void **)&pm->ents, cap, pm->nr + 1, sizeof(*pm->ents)))
		return -ENOMEM;
	pm->ents[pm->nr++] = *e;
	return 0;
}

struct perfmap *perfmap__parse(const char *buf, size_t len)
{
	struct perfmap *pm;
	size_t cap = 0, i, out = 0;
	__u32 line = 0;
	char *p, *end;

	if (len >= PERFMAP_MAX) {
		errno = EFBIG;
		return NULL;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm || !(pm->text = malloc(len + 1)))
		goto nomem;
	memcpy(pm->text, buf, len);
	pm->text[len] = '\0';
	for (p = pm->text, end = pm->text + len; p < end; line++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		struct pment e = { .line = line };

		if (parse_line(pm->text, p, eol, &e) &&
		    add_entry(pm, &cap, &e))
			goto nomem;
		p = eol + 1;
	}
	if (pm->nr)
		qsort(pm->ents, pm->nr, sizeof(*pm->ents), cmp_ent);
	/* The latest line of each start address sorts first: keep it. */
	for (i = 0; i < pm->nr; i++) {
		if (out && pm->ents[out - 1].start == pm->ents[i].start)
			continue;
		pm->ents[out++] = pm->ents[i];
	}
	pm->nr = out;
	return pm;

nomem:
	perfmap__free(pm);
	errno = ENOMEM;
	return NULL;
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
	if (st->st_uid != 0 && st->st_uid != who->euid &&
	    st->st_uid != who->fsuid)
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
	if (!perfmap__trusted(&st, who)) {
		err = -EPERM;
		goto cleanup;
	}
	make_stamp(&st, &now);
	if (!memcmp(&now, stamp, sizeof(now))) {
		err = -EALREADY;
		goto cleanup;
	}
	err = procmaps__read_fd(fd, PERFMAP_MAX, &buf, &len);
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
