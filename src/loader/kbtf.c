// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel's BTF, parsed by libbpf once per start.  The file is mapped
 * and handed to btf__new(), which keeps one copy: btf__parse() would read
 * it into a buffer and then copy that (twice the 5.5 MB at the peak).
 * Mapped, the kernel's own pages are shown (6.16 on): the mapping costs
 * no RSS; older kernels do not map it, and it is read into a buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

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

/* libbpf's parse of the size bytes at fd; NULL with errno set. */
static struct btf *parse_fd(int fd, size_t size)
{
	void *data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	bool mapped = data != MAP_FAILED;
	struct btf *btf;
	int err;

	if (!mapped)
		data = read_all(fd, size);
	if (!data)
		return NULL;
	btf = btf__new(data, size);
	err = libbpf_get_error(btf);
	if (mapped)
		munmap(data, size);
	else
		free(data);
	if (err) {
		errno = -err;
		return NULL;
	}
	return btf;
}

void kbtf__load_path(struct kbtf *k, const char *path)
{
	struct stat st;
	int fd;

	k->btf = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st))
		k->btf = parse_fd(fd, st.st_size);
	k->err = k->btf ? 0 : (errno ? -errno : -ENOENT);
	if (fd >= 0)
		close(fd);
}

void kbtf__load(struct kbtf *k)
{
	kbtf__load_path(k, KBTF_PATH);
	/* No sysfs file: libbpf also looks in /boot and /lib/modules. */
	if (k->err == -ENOENT) {
		k->btf = btf__load_vmlinux_btf();
		k->err = k->btf ? 0 : (errno ? -errno : -ENOENT);
	}
}

void kbtf__free(struct kbtf *k)
{
	btf__free(k->btf);
	k->btf = NULL;
	k->err = -ENOENT;
}

/* Byte offset of member `name` in struct `type`; -ENOENT when absent. */
static int member_offset(const struct btf *btf, const char *type, const char *name,
			 __u32 *off)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id;

	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		if (strcmp(btf__name_by_offset(btf, m->name_off), name))
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

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "nsproxy", &off->nsproxy);
	if (!err)
		err = member_offset(k->btf, "nsproxy", "mnt_ns", &off->mnt_ns);
	if (!err)
		err = member_offset(k->btf, "mnt_namespace", "ns", &ns);
	if (!err)
		err = member_offset(k->btf, "ns_common", "inum", &inum);
	off->ns_inum = ns + inum;
	return err;
}

int kbtf__fsbase_offset(const struct kbtf *k, __u32 *off)
{
	__u32 thread = 0, fsbase = 0;
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "thread", &thread);
	if (!err)
		err = member_offset(k->btf, "thread_struct", "fsbase", &fsbase);
	*off = thread + fsbase;
	return err;
}

int kbtf__follow_offsets(const struct kbtf *k, struct follow_offsets *off)
{
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "tgid", &off->tgid);
	if (!err)
		err = member_offset(k->btf, "task_struct", "signal", &off->signal);
	/* An atomic_t: a struct of one int, its counter. */
	if (!err)
		err = member_offset(k->btf, "signal_struct", "live", &off->live);
	return err;
}

int kbtf__start_offsets(const struct kbtf *k, struct start_offsets *off)
{
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "group_leader", &off->group_leader);
	if (!err)
		err = member_offset(k->btf, "task_struct", "start_time", &off->start_time);
	return err;
}

int kbtf__offcpu(const struct kbtf *k, struct offcpu_btf *out)
{
	int err;

	if (!k->btf)
		return k->err;
	err = member_offset(k->btf, "task_struct", "__state", &out->task_state);
	if (err == -ENOENT)
		err = member_offset(k->btf, "task_struct", "state", &out->task_state);
	out->sched_exit_tp = btf__find_by_name_kind(k->btf, "btf_trace_sched_exit_tp",
						    BTF_KIND_TYPEDEF) > 0;
	out->finish_task_switch = btf__find_by_name_kind(k->btf, "finish_task_switch",
							 BTF_KIND_FUNC) > 0;
	return err;
}

bool kbtf__has_func(const struct kbtf *k, const char *name)
{
	return !k->err && btf__find_by_name_kind(k->btf, name, BTF_KIND_FUNC) > 0;
}

int kbtf__tp_args(const struct kbtf *k, const char *tp)
{
	const struct btf_type *t;
	char name[128];
	int id;

	if (k->err)
		return k->err;
	if (snprintf(name, sizeof(name), "btf_trace_%s", tp) >= (int)sizeof(name))
		return -ENAMETOOLONG;
	id = btf__find_by_name_kind(k->btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(k->btf, btf__type_by_id(k->btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return -EINVAL;
	t = btf__type_by_id(k->btf, t->type);
	if (!t || !btf_is_func_proto(t))
		return -EINVAL;
	return btf_vlen(t);
}
