// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * /proc/PID/maps parser.  The kernel writes each line as
 *
 *	start-end perms offset major:minor inode<padding>path
 *
 * with the numbers in hex except the decimal inode, and the path is the
 * rest of the line: it may hold spaces, and a newline in a name shows up
 * as "\012", so one line is always one mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "symbols/procmaps.h"

/* Bytes read from /proc per read(): big enough for most maps in one go. */
#define READ_CHUNK	(64 * 1024)
/* A maps file bigger than this is not something we want in memory. */
#define MAPS_MAX	(256u << 20)

static const char deleted_suffix[] = " (deleted)";
static const char memfd_prefix[] = "/memfd:";

/* A cursor over a bounded, not NUL-terminated buffer. */
struct cursor {
	const char *p, *end;
};

/* At least one digit, no sign, no "0x", no overflow of 64 bits. */
static int parse_hex(struct cursor *c, __u64 *val)
{
	__u64 v = 0;
	int d, n = 0;

	while (c->p < c->end && (d = util__hex_digit(*c->p)) >= 0) {
		if (v >> 60)
			return -EINVAL;
		v = v << 4 | (__u64)d;
		c->p++;
		n++;
	}
	if (!n)
		return -EINVAL;
	*val = v;
	return 0;
}

static int parse_dec(struct cursor *c, __u64 *val)
{
	__u64 v = 0;
	int n = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		__u64 d = (__u64)(*c->p - '0');

		if (v > (~0ULL - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
		c->p++;
		n++;
	}
	if (!n)
		return -EINVAL;
	*val = v;
	return 0;
}

static int expect(struct cursor *c, char ch)
{
	if (c->p >= c->end || *c->p != ch)
		return -EINVAL;
	c->p++;
	return 0;
}

static int parse_perms(struct cursor *c, __u32 *flags)
{
	const char *p = c->p;

	if (c->end - p < 4)
		return -EINVAL;
	*flags = 0;
	if (p[0] == 'r')
		*flags |= VMA_READ;
	else if (p[0] != '-')
		return -EINVAL;
	if (p[1] == 'w')
		*flags |= VMA_WRITE;
	else if (p[1] != '-')
		return -EINVAL;
	if (p[2] == 'x')
		*flags |= VMA_EXEC;
	else if (p[2] != '-')
		return -EINVAL;
	if (p[3] == 's')
		*flags |= VMA_SHARED;
	else if (p[3] != 'p')
		return -EINVAL;
	c->p += 4;
	return 0;
}

static int parse_dev(struct cursor *c, struct vma *out)
{
	__u64 major, minor;

	if (parse_hex(c, &major) || expect(c, ':') || parse_hex(c, &minor))
		return -EINVAL;
	/* Linux device numbers are 12-bit major, 20-bit minor. */
	if (major > 0xfff || minor > 0xfffff)
		return -EINVAL;
	out->dev_major = (__u32)major;
	out->dev_minor = (__u32)minor;
	return 0;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static enum vma_kind classify(const char *path, size_t len)
{
	if (!len)
		return VMA_ANON;
	if (len == 6 && !memcmp(path, "[vdso]", 6))
		return VMA_VDSO;
	if (path[0] == '[' && path[len - 1] == ']')
		return VMA_SPECIAL;
	if (has_prefix(path, len, memfd_prefix))
		return VMA_MEMFD;
	if (path[0] == '/')
		return VMA_FILE;
	return VMA_OTHER;
}

/*
 * The path is the rest of the line after the padding spaces.  A name that
 * itself starts with a space cannot be told from the padding; the kernel
 * format loses that, and such a path only matters for display.
 */
static void parse_path(struct cursor *c, struct vma *out)
{
	const char *p = c->p;

	while (p < c->end && *p == ' ')
		p++;
	procmaps__set_path(out, p, (size_t)(c->end - p));
	c->p = c->end;
}

void procmaps__set_path(struct vma *out, const char *path, size_t len)
{
	size_t n = sizeof(deleted_suffix) - 1;

	out->deleted = false;
	if (len > n && !memcmp(path + len - n, deleted_suffix, n)) {
		out->deleted = true;
		len -= n;
	}
	/* perf's name for anonymous memory. */
	if (len == 6 && !memcmp(path, "//anon", 6))
		len = 0;
	out->path = len ? path : NULL;
	out->path_len = len;
	out->kind = classify(path, len);
}

int procmaps__parse_line(const char *line, size_t len, struct vma *out)
{
	struct cursor c = { line, line + len };

	if (!line)
		return -EINVAL;
	if (len && line[len - 1] == '\n')
		c.end--;
	if (memchr(line, '\n', (size_t)(c.end - line)) ||
	    memchr(line, '\0', (size_t)(c.end - line)))
		return -EINVAL;

	if (parse_hex(&c, &out->start) || expect(&c, '-') ||
	    parse_hex(&c, &out->end) || expect(&c, ' ') ||
	    parse_perms(&c, &out->flags) || expect(&c, ' ') ||
	    parse_hex(&c, &out->pgoff) || expect(&c, ' ') ||
	    parse_dev(&c, out) || expect(&c, ' ') ||
	    parse_dec(&c, &out->inode))
		return -EINVAL;
	if (out->start >= out->end)
		return -EINVAL;
	/* The inode must end the line or be followed by padding. */
	if (c.p < c.end && *c.p != ' ')
		return -EINVAL;
	parse_path(&c, out);
	return 0;
}

int procmaps__parse(const char *buf, size_t len, procmaps_cb cb, void *ctx)
{
	const char *p = buf, *end = buf + len;
	int skipped = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct vma vma;
		int err;

		if (eol > p) {
			if (procmaps__parse_line(p, (size_t)(eol - p), &vma)) {
				skipped++;
			} else {
				err = cb(&vma, ctx);
				if (err)
					return err;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return skipped;
}

int procmaps__read_fd(int fd, size_t max, char **bufp, size_t *lenp)
{
	size_t len = 0, cap = READ_CHUNK;
	char *buf = malloc(cap + 1), *tmp;
	ssize_t n;
	int err;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (cap - len < READ_CHUNK / 2) {
			if (cap >= max) {
				err = -EFBIG;
				goto cleanup;
			}
			cap *= 2;
			tmp = realloc(buf, cap + 1);
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = tmp;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		err = -EFBIG;
		goto cleanup;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;

cleanup:
	free(buf);
	return err;
}

int procmaps__read_text_at(int dirfd, const char *name, size_t max,
			   char **buf, size_t *len)
{
	int fd, err;

	fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	err = procmaps__read_fd(fd, max, buf, len);
	close(fd);
	return err;
}

int procmaps__read_at(int proc_dirfd, procmaps_cb cb, void *ctx)
{
	size_t len;
	char *buf;
	int err;

	err = procmaps__read_text_at(proc_dirfd, "maps", MAPS_MAX, &buf, &len);
	if (err)
		return err;
	err = procmaps__parse(buf, len, cb, ctx);
	free(buf);
	return err;
}

int procmaps__read(__u32 pid, procmaps_cb cb, void *ctx)
{
	char path[32];
	int dirfd, err;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	err = procmaps__read_at(dirfd, cb, ctx);
	close(dirfd);
	return err;
}
