/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The function symbols of one ELF file (executable, shared library, vdso),
 * kept as a compact sorted table, and what is needed to map a runtime
 * address to it: the PT_LOAD segments and the GNU build-id.
 *
 * A stripped file's .gnu_debugdata (MiniDebugInfo, xz-compressed, needs
 * liblzma) is read at open time; separate debug files are found by
 * debuginfo.h and merged with elf_file__merge_symbols().
 *
 * Everything is copied out of the file at open time, so no file descriptor
 * or mapping is held afterwards, and the file may be crafted: every size and
 * offset is checked, a broken file gives an error, never a crash.
 */
#ifndef PROFILE_ELF_H
#define PROFILE_ELF_H

#include <elf.h>
#include <gelf.h>
#include <stddef.h>
#include <linux/types.h>

struct elf_file;

/* Where the symbols came from. */
enum elf_sym_source {
	ELF_SYMS_NONE,		/* no symbol table with functions */
	ELF_SYMS_SYMTAB,	/* .symtab: all functions, statics included */
	ELF_SYMS_DYNSYM,	/* .dynsym only: exported functions (stripped) */
	ELF_SYMS_MINIDEBUG,	/* .dynsym and the .symtab in .gnu_debugdata */
	ELF_SYMS_DEBUGFILE,	/* .dynsym and a separate debug file's .symtab */
};

struct elf_sym_info {
	__u64 addr;		/* ELF virtual address (st_value) */
	__u64 size;		/* as covered by lookups: see elf_file__find() */
	const char *name;
};

/*
 * Constructors: NULL with errno set on failure (ENOEXEC: not a usable ELF
 * file; ET_EXEC and ET_DYN only; EFBIG: more than 65,535 sections, which
 * libelf would allocate for before any cap could apply).
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
 * __getpid), then global over weak over local, then the shortest.  The
 * ELF entry point, when no symbol holds it in a file that has some (ld.so),
 * is _start (its first 64 bytes, up to the next symbol).
 */
const char *elf_file__find(const struct elf_file *ef, __u64 vaddr,
			   __u64 *offset);

/* GNU build-id as lowercase hex, or NULL if the file has none. */
const char *elf_file__build_id(const struct elf_file *ef);

/*
 * The .gnu_debuglink file name (a plain name, no '/'), and the CRC-32 the
 * debug file must have in *crc; NULL if the file has no such link.
 */
const char *elf_file__debuglink(const struct elf_file *ef, __u32 *crc);

/*
 * Add the symbols of from (a debug file of ef: same addresses) to ef's
 * table, and record source as where ef's symbols came from.  Where both
 * have a symbol at one address, from's name wins.  Returns 0, -ENOENT if
 * from has no symbols, other negative errno on failure (ef unchanged).
 */
int elf_file__merge_symbols(struct elf_file *ef, const struct elf_file *from,
			    enum elf_sym_source source);

/*
 * The caps (caps.h) the file, its MiniDebugInfo or a debug file merged
 * into it hit, as CAP_BIT()s: 0 when it was read whole.  Sections over
 * CAP_SECTION_BYTES are not read (their symbols or notes are missing),
 * names past CAP_NAMES_BYTES are left out, and a merge past
 * CAP_OBJECT_BYTES is not made.
 */
unsigned int elf_file__capped(const struct elf_file *ef);

/* The memory the parsed file keeps, in bytes. */
size_t elf_file__bytes(const struct elf_file *ef);

/* ET_EXEC or ET_DYN. */
int elf_file__type(const struct elf_file *ef);
enum elf_sym_source elf_file__sym_source(const struct elf_file *ef);

/* The table, sorted by address, for listing and tests. */
size_t elf_file__nr_syms(const struct elf_file *ef);
int elf_file__sym(const struct elf_file *ef, size_t idx,
		  struct elf_sym_info *out);

/*
 * For other readers of ELF files (ehframe.c), the checks this one makes
 * before libelf sees a file.
 *
 * elf_file__begin(): libelf's handle on fd (read with pread, ELF_C_READ)
 * or on image (fd ignored), once the header passed the pre-checks of the
 * constructors above; NULL with errno set (EFBIG: extended section
 * numbering; ENOEXEC: libelf refused it).  Release it with elf_end().
 *
 * elf_file__section_by_name(): the first section called name, SHT_NOBITS
 * included, in *scn and its header in *sh.  0, -ENOENT if there is none,
 * -EFBIG if the table of section names is over CAP_SECTION_BYTES.
 */
Elf *elf_file__begin(int fd, void *image, size_t size);
int elf_file__section_by_name(Elf *elf, const char *name, Elf_Scn **scn,
			      GElf_Shdr *sh);

#endif /* PROFILE_ELF_H */
