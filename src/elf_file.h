/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The function symbols of one ELF file (executable, shared library, vdso),
 * kept as a compact sorted table, and what is needed to map a runtime
 * address to it: the PT_LOAD segments and the GNU build-id.
 *
 * Everything is copied out of the file at open time, so no file descriptor
 * or mapping is held afterwards, and the file may be crafted: every size and
 * offset is checked, a broken file gives an error, never a crash.
 */
#ifndef PROFILE_ELF_H
#define PROFILE_ELF_H

#include <elf.h>
#include <stddef.h>
#include <linux/types.h>

struct elf_file;

/* Where the symbols came from. */
enum elf_sym_source {
	ELF_SYMS_NONE,		/* no symbol table with functions */
	ELF_SYMS_SYMTAB,	/* .symtab: all functions, statics included */
	ELF_SYMS_DYNSYM,	/* .dynsym only: exported functions (stripped) */
};

struct elf_sym_info {
	__u64 addr;		/* ELF virtual address (st_value) */
	__u64 size;		/* as covered by lookups: see elf_file__find() */
	const char *name;
};

/*
 * Constructors: NULL with errno set on failure (ENOEXEC: not a usable ELF
 * file; ET_EXEC and ET_DYN only).
 *
 * elf_file__open() opens path with O_NONBLOCK and refuses anything but a
 * regular file, so that a FIFO or a device path cannot block or act.
 * elf_file__open_fd() reads through fd with pread and does not close it
 * (it is not mmap()ed, so a file truncated under us cannot SIGBUS).
 * elf_file__open_mem() parses an image in memory, e.g. a copy of the vdso;
 * the image is only used during the call.
 */
struct elf_file *elf_file__open(const char *path);
struct elf_file *elf_file__open_fd(int fd);
struct elf_file *elf_file__open_mem(void *image, size_t size);
void elf_file__free(struct elf_file *ef);

/*
 * Translate an offset in the file to an ELF virtual address through the
 * PT_LOAD segment that holds it, so that for a runtime address inside a
 * mapping, vaddr = translate(addr - map_start + map_pgoff).  This works
 * the same for ET_EXEC, PIE and shared libraries.  Returns 0, or -ENOENT
 * if no PT_LOAD segment holds the offset.
 */
int elf_file__offset_to_vaddr(const struct elf_file *ef, __u64 offset,
			      __u64 *vaddr);

/*
 * The function that holds vaddr: its name, and vaddr's offset from its
 * start in *offset.  NULL if none does.  A symbol of size 0 covers up to
 * the next symbol or the end of its section.  When symbols overlap, the
 * one that starts last wins.  When several names share one address, the
 * table keeps one: the one with the fewest leading underscores (getpid over
 * __getpid), then global over weak over local, then the shortest.
 */
const char *elf_file__find(const struct elf_file *ef, __u64 vaddr,
			   __u64 *offset);

/* GNU build-id as lowercase hex, or NULL if the file has none. */
const char *elf_file__build_id(const struct elf_file *ef);

/* ET_EXEC or ET_DYN. */
int elf_file__type(const struct elf_file *ef);
enum elf_sym_source elf_file__sym_source(const struct elf_file *ef);

/* The table, sorted by address, for listing and tests. */
size_t elf_file__nr_syms(const struct elf_file *ef);
int elf_file__sym(const struct elf_file *ef, size_t idx,
		  struct elf_sym_info *out);

#endif /* PROFILE_ELF_H */
