#!/usr/bin/env python3
"""Crafted ELF files for t34-hostile.sh: small files that would cost a
profiler that trusts their sizes a lot of memory.

  mkelf.py shared OUT SYMS LEN   SYMS function symbols that all name one
                                 LEN-byte string, in the .symtab of an ELF
                                 image xz-compressed into OUT's .gnu_debugdata
  mkelf.py suffixes OUT SYMS LEN the same, but symbol i names the string from
                                 byte i on: no two share a name
  mkelf.py bigsection OUT SIZE   OUT's .gnu_debugdata claims SIZE bytes; the
                                 file is grown to hold them (sparse)
  mkelf.py sameaddr OUT SYMS LEN NAMES
                                 SYMS symbols at one address, naming NAMES
                                 equal LEN-byte strings in turn, in OUT's
                                 .gnu_debugdata: sorting them compares names
  mkelf.py bigshstrtab OUT SIZE  OUT's table of section names claims SIZE
                                 bytes (sparse)
  mkelf.py buildids TEMPLATE N DIR [SIZE]
                                 N copies of TEMPLATE (an ELF file with a GNU
                                 build-id) as DIR/bin.0 ..., each with a
                                 build-id of its own; with SIZE, each gets
                                 DIR/ID.debug (fakedebuginfod.py's "ok DIR"):
                                 a debug file of about SIZE bytes with that
                                 build-id and a .symtab of distinct names
"""
import hashlib
import lzma
import os
import struct
import sys

ET_DYN, EM_X86_64 = 3, 62
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOTE, SHT_NOBITS = 1, 2, 3, 7, 8
SHF_ALLOC, SHF_EXECINSTR = 2, 4
STT_FUNC, STB_GLOBAL = 2, 1


def elf(sections):
    """sections: (name, type, flags, addr, data, size, link, entsize[, offset]);
    data None places no bytes (SHT_NOBITS, or a section at offset past the end)."""
    names = [n for n, *_ in sections] + [".shstrtab"]
    shstr = b"\0" + b"".join(n.encode() + b"\0" for n in names)
    name_off = [shstr.index(b"\0" + n.encode() + b"\0") + 1 for n in names]
    sections = sections + [(".shstrtab", SHT_STRTAB, 0, 0, shstr, len(shstr), 0, 0)]
    body, offsets, off = b"", [], 64 + 56
    for s in sections:
        if s[4] is None:
            offsets.append(s[8] if len(s) > 8 else 0)
            continue
        pad = (-off) % 8
        body += b"\0" * pad + s[4]
        offsets.append(off + pad)
        off += pad + len(s[4])
    shoff = off + (-off) % 8
    body += b"\0" * (shoff - off)
    shdrs = b"\0" * 64
    for i, s in enumerate(sections):
        shdrs += struct.pack("<IIQQQQIIQQ", name_off[i], s[1], s[2], s[3],
                             offsets[i], s[5], s[6], 0, 8, s[7])
    nsec = len(sections) + 1
    ehdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    ehdr += struct.pack("<HHIQQQIHHHHHH", ET_DYN, EM_X86_64, 1, 0, 64, shoff, 0,
                        64, 56, 1, 64, nsec, nsec - 1)
    size = shoff + len(shdrs)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, size, size, 0x1000)
    return ehdr + phdr + body + shdrs


def symtab_image(nsyms, length, suffixes, names=1, one_addr=False):
    strtab = b"\0" + (b"A" * length + b"\0") * names
    sym = struct.Struct("<IBBHQQ")
    syms = bytearray(24 * (nsyms + 1))
    for i in range(nsyms):
        name = 1 + (i if suffixes else (i % names) * (length + 1))
        addr = 0x1000 if one_addr else 0x1000 + 16 * i
        sym.pack_into(syms, 24 * (i + 1), name, STB_GLOBAL << 4 | STT_FUNC, 0, 1,
                      addr, 16)
    syms = bytes(syms)
    text = (".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, None,
            16 * nsyms + 16, 0, 0)
    return elf([text,
                (".symtab", SHT_SYMTAB, 0, 0, syms, len(syms), 3, 24),
                (".strtab", SHT_STRTAB, 0, 0, strtab, len(strtab), 0, 0)])


def note_build_id(bid):
    # elf() aligns every section to 8: so are the note's parts.
    desc = bid + b"\0" * ((-len(bid)) % 8)
    return struct.pack("<III", 4, len(bid), 3) + b"GNU\0" + desc


def debug_file(bid, size):
    """A debug file of about size bytes: bid's note, size/64 symbols with
    40-byte names, all distinct."""
    nsyms = max(1, size // 64)
    strtab = bytearray(b"\0")
    syms = bytearray(24 * (nsyms + 1))
    sym = struct.Struct("<IBBHQQ")
    for i in range(nsyms):
        sym.pack_into(syms, 24 * (i + 1), len(strtab), STB_GLOBAL << 4 | STT_FUNC,
                      0, 1, 0x1000 + 16 * i, 16)
        strtab += b"fetched_by_nobody_%021d\0" % i
    text = (".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, None,
            16 * nsyms + 16, 0, 0)
    note = note_build_id(bid)
    return elf([text,
                (".symtab", SHT_SYMTAB, 0, 0, bytes(syms), len(syms), 3, 24),
                (".strtab", SHT_STRTAB, 0, 0, bytes(strtab), len(strtab), 0, 0),
                (".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, 0, note, len(note), 0, 0)])


def build_ids(template, n, out, size):
    data = open(template, "rb").read()
    off = data.find(b"GNU\0", data.find(b"\x03\x00\x00\x00GNU\0") - 8)
    namesz, descsz, ntype = struct.unpack_from("<III", data, off - 12)
    assert (namesz, ntype) == (4, 3), "TEMPLATE has no GNU build-id note"
    old = data[off + 4:off + 4 + descsz]
    assert data.count(old) == 1
    debug = debug_file(old, size) if size else None
    for i in range(n):
        bid = hashlib.sha1(old + os.fsencode(os.path.abspath(out)) + b"%d" % i).digest()[:descsz]
        path = os.path.join(out, "bin.%d" % i)
        open(path, "wb").write(data.replace(old, bid))
        os.chmod(path, 0o755)
        if debug:
            open(os.path.join(out, bid.hex() + ".debug"), "wb").write(debug.replace(old, bid))


def main():
    mode, out = sys.argv[1], sys.argv[2]
    if mode in ("shared", "suffixes", "sameaddr"):
        if mode == "sameaddr":
            inner = symtab_image(int(sys.argv[3]), int(sys.argv[4]), False,
                                 int(sys.argv[5]), True)
        else:
            inner = symtab_image(int(sys.argv[3]), int(sys.argv[4]), mode == "suffixes")
        xz = lzma.compress(inner, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=0)
        data = elf([(".gnu_debugdata", SHT_PROGBITS, 0, 0, xz, len(xz), 0, 0)])
        open(out, "wb").write(data)
    elif mode == "bigsection":
        size = int(sys.argv[3])
        # The section lies past the headers, at 64 KiB; the file is grown.
        sec = (".gnu_debugdata", SHT_PROGBITS, 0, 0, None, size, 0, 0, 65536)
        data = elf([sec])
        with open(out, "wb") as f:
            f.write(data)
            f.truncate(65536 + size)
    elif mode == "bigshstrtab":
        size = int(sys.argv[3])
        data = bytearray(elf([(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
                               0x1000, b"\xc3" * 16, 16, 0, 0)]))
        # Point the last section header (.shstrtab) at SIZE bytes at 64 KiB.
        shoff, shnum = struct.unpack_from("<Q", data, 40)[0], struct.unpack_from("<H", data, 60)[0]
        struct.pack_into("<QQ", data, shoff + 64 * (shnum - 1) + 24, 65536, size)
        with open(out, "wb") as f:
            f.write(data)
            f.truncate(65536 + size)
    elif mode == "buildids":
        build_ids(out, int(sys.argv[3]), sys.argv[4],
                  int(sys.argv[5]) if len(sys.argv) > 5 else 0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
