// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A reader of raw BTF just big enough for kbtf.h's lookups: types are
 * found by a walk in id order (the first of a name and kind, as libbpf's
 * btf__find_by_name_kind() finds it), each record's length from its kind.
 * Every length and name is checked against the sections: the file is the
 * kernel's, but a kind this reader does not know ends the walk rather
 * than misreading what follows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "loader/kbtf.h"

#define KBTF_PATH "/sys/kernel/btf/vmlinux"

/* The file, whole, into one buffer: where the kernel does not map it. */
static void *read_all(int fd, size_t size)
{
	char *buf = malloc(size ? size : 1);
	size_t done = 0;

	if (!buf)
		return NULL;
	while (done < size) {
		ssize_t n = pread(fd, buf + done, size - done, done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			errno = n ? errno : EIO;
			return NULL;
		}
		done += n;
	}
	return buf;
}

/* The header, and where the sections are; 0 or -errno. */
static int check(struct kbtf *k)
{
	const struct btf_header *h = k->data;
	__u64 end;

	if (k->size < sizeof(*h) || h->magic != BTF_MAGIC || h->version != BTF_VERSION ||
	    h->hdr_len < sizeof(*h) || h->hdr_len > k->size || h->hdr_len % 4)
		return -EPROTO;
	end = k->size - h->hdr_len;
	if ((__u64)h->type_off + h->type_len > end || (__u64)h->str_off + h->str_len > end ||
	    h->type_off % 4 || !h->str_len)
		return -EPROTO;
	k->types = (const __u8 *)k->data + h->hdr_len + h->type_off;
	k->types_len = h->type_len;
	k->strs = (const char *)k->data + h->hdr_len + h->str_off;
	k->strs_len = h->str_len;
	if (k->strs[k->strs_len - 1])
		return -EPROTO;
	return 0;
}

void kbtf__load_path(struct kbtf *k, const char *path)
{
	struct stat st;
	int fd;

	memset(k, 0, sizeof(*k));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		k->err = -errno;
		goto out;
	}
	k->size = st.st_size;
	k->data = mmap(NULL, k->size, PROT_READ, MAP_PRIVATE, fd, 0);
	k->mapped = k->data != MAP_FAILED;
	if (!k->mapped)
		k->data = read_all(fd, k->size);
	if (!k->data)
		k->err = -errno;
	else
		k->err = check(k);
out:
	if (fd >= 0)
		close(fd);
	if (k->err)
		kbtf__free(k);
}

void kbtf__load(struct kbtf *k)
{
	kbtf__load_path(k, KBTF_PATH);
}

void kbtf__free(struct kbtf *k)
{
	int err = k->err ? k->err : -ENOENT;

	if (k->data && k->mapped)
		munmap(k->data, k->size);
	else
		free(k->data);
	memset(k, 0, sizeof(*k));
	k->err = err;
}

/* The bytes that follow a type's struct btf_type, by kind; -1: unknown. */
static long trailer(const struct btf_type *t)
{
	__u16 vlen = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * sizeof(struct btf_enum64);
	default:
		return -1;
	}
}

static const char *name_at(const struct kbtf *k, __u32 off)
{
	return off < k->strs_len ? k->strs + off : "";
}

/* The first type of this name and kind, whole within the section; NULL if none. */
static const struct btf_type *find(const struct kbtf *k, const char *name, __u16 kind)
{
	const __u8 *p = k->types, *end = k->types + k->types_len;

	while ((size_t)(end - p) >= sizeof(struct btf_type)) {
		const struct btf_type *t = (const void *)p;
		long more = trailer(t);

		if (more < 0 || (size_t)more > (size_t)(end - p) - sizeof(*t))
			return NULL;
		if (btf_kind(t) == kind && !strcmp(name_at(k, t->name_off), name))
			return t;
		p += sizeof(*t) + more;
	}
	return NULL;
}

/* Byte offset of member `name` in struct `type`; -ENOENT when absent. */
static int member_offset(const struct kbtf *k, const char *type, const char *name,
			 __u32 *off)
{
	const struct btf_type *t = find(k, type, BTF_KIND_STRUCT);
	const struct btf_member *m;

	if (!t)
		return -ENOENT;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		if (strcmp(name_at(k, m->name_off), name))
			continue;
		if (btf_member_bitfield_size(t, i))
			return -EINVAL;
		*off = btf_member_bit_offset(t, i) / 8;
		return 0;
	}
	return -ENOENT;
}

int kbtf__mntns_offsets(const struct kbtf *k, struct mntns_offsets *off)
{
	__u32 ns = 0, inum = 0;
	int err;

	if (!k->data)
		return k->err;
	err = member_offset(k, "task_struct", "nsproxy", &off->nsproxy);
	if (!err)
		err = member_offset(k, "nsproxy", "mnt_ns", &off->mnt_ns);
	if (!err)
		err = member_offset(k, "mnt_namespace", "ns", &ns);
	if (!err)
		err = member_offset(k, "ns_common", "inum", &inum);
	off->ns_inum = ns + inum;
	return err;
}

int kbtf__fsbase_offset(const struct kbtf *k, __u32 *off)
{
	__u32 thread = 0, fsbase = 0;
	int err;

	if (!k->data)
		return k->err;
	err = member_offset(k, "task_struct", "thread", &thread);
	if (!err)
		err = member_offset(k, "thread_struct", "fsbase", &fsbase);
	*off = thread + fsbase;
	return err;
}

int kbtf__follow_offsets(const struct kbtf *k, struct follow_offsets *off)
{
	int err;

	if (!k->data)
		return k->err;
	err = member_offset(k, "task_struct", "tgid", &off->tgid);
	if (!err)
		err = member_offset(k, "task_struct", "signal", &off->signal);
	/* An atomic_t: a struct of one int, its counter. */
	if (!err)
		err = member_offset(k, "signal_struct", "live", &off->live);
	return err;
}

int kbtf__start_offsets(const struct kbtf *k, struct start_offsets *off)
{
	int err;

	if (!k->data)
		return k->err;
	err = member_offset(k, "task_struct", "group_leader", &off->group_leader);
	if (!err)
		err = member_offset(k, "task_struct", "start_time", &off->start_time);
	return err;
}

int kbtf__offcpu(const struct kbtf *k, struct offcpu_btf *out)
{
	int err;

	if (!k->data)
		return k->err;
	err = member_offset(k, "task_struct", "__state", &out->task_state);
	if (err == -ENOENT)
		err = member_offset(k, "task_struct", "state", &out->task_state);
	out->sched_exit_tp = find(k, "btf_trace_sched_exit_tp", BTF_KIND_TYPEDEF);
	out->finish_task_switch = find(k, "finish_task_switch", BTF_KIND_FUNC);
	return err;
}
