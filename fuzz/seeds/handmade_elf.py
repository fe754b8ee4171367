#!/usr/bin/env python3
"""Writes hand-made ELF64 and ELF32 images in both byte orders into DIR: a
.dynstr, .dynsym, .gnu.version, .gnu.version_r (one weak requirement) and
.dynamic with NEEDED, SONAME, RUNPATH and FLAGS_1. No toolchain produces
big-endian objects here, so these seeds are how the fuzzer starts from them."""
import struct
import sys
import os


def build(bits, big):
    e = '>' if big else '<'
    w = 8 if bits == 64 else 4          # address/offset width
    dynstr = b"\0libbe.so.1\0libneed.so.2\0/opt/be/lib\0foo\0bar\0V_BE\0"
    off = {k: dynstr.index(v) for k, v in
           [("soname", b"libbe"), ("need", b"libneed"), ("run", b"/opt"), ("foo", b"foo"),
            ("bar", b"bar"), ("vbe", b"V_BE")]}
    names = [b"", b".dynstr", b".dynsym", b".gnu.version", b".gnu.version_r", b".dynamic", b".shstrtab"]
    shstr = b"\0" + b"\0".join(names[1:]) + b"\0"
    name_off = [0] + [shstr.index(n + b"\0") for n in names[1:]]

    def sym(name, info, shndx):
        if bits == 64:
            return struct.pack(e + "IBBHQQ", name, info, 0, shndx, 0, 0)
        return struct.pack(e + "IIIBBH", name, 0, 0, info, 0, shndx)
    dynsym = sym(0, 0, 0) + sym(off["foo"], 0x12, 0xfff1) + sym(off["bar"], 0x12, 0)
    versym = struct.pack(e + "HHH", 0, 1, 2)
    verneed = struct.pack(e + "HHIII", 1, 1, off["need"], 16, 0) + \
        struct.pack(e + "IHHII", 0x0f0f0f, 2, 2, off["vbe"], 0)
    dtag = "q" if bits == 64 else "i"
    dval = "Q" if bits == 64 else "I"
    dynamic = b"".join(struct.pack(e + dtag + dval, t, v) for t, v in
                       [(1, off["need"]), (14, off["soname"]), (29, off["run"]),
                        (0x6ffffffb, 0x800), (0, 0)])
    blobs = [dynstr, dynsym, versym, verneed, dynamic, shstr]
    ehsize = 64 if bits == 64 else 52
    pos, offsets = ehsize, []
    for b in blobs:
        pos = (pos + 7) & ~7
        offsets.append(pos)
        pos += len(b)
    shoff = (pos + 7) & ~7
    # (type, link, info, entsize) per section after the null one
    meta = [(3, 0, 0, 0), (11, 1, 1, 24 if bits == 64 else 16), (0x6fffffff, 2, 0, 2),
            (0x6ffffffe, 1, 1, 0), (6, 1, 0, 2 * w), (3, 0, 0, 0)]
    shentsize = 64 if bits == 64 else 40

    def shdr(name, typ, o, size, link, info, ent):
        if bits == 64:
            return struct.pack(e + "IIQQQQIIQQ", name, typ, 0, 0, o, size, link, info, 8, ent)
        return struct.pack(e + "IIIIIIIIII", name, typ, 0, 0, o, size, link, info, 4, ent)
    table = shdr(0, 0, 0, 0, 0, 0, 0)
    for i, (m, o, b) in enumerate(zip(meta, offsets, blobs)):
        table += shdr(name_off[i + 1], m[0], o, len(b), m[1], m[2], m[3])
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 2 if big else 1, 1]) + b"\0" * 9
    machine = (21 if bits == 64 else 20) if big else (62 if bits == 64 else 3)
    if bits == 64:
        ehdr = ident + struct.pack(e + "HHIQQQIHHHHHH", 3, machine, 1, 0, 0, shoff, 0,
                                   ehsize, 0, 0, shentsize, 7, 6)
    else:
        ehdr = ident + struct.pack(e + "HHIIIIIHHHHHH", 3, machine, 1, 0, 0, shoff, 0,
                                   ehsize, 0, 0, shentsize, 7, 6)
    image = bytearray(shoff + len(table))
    image[:len(ehdr)] = ehdr
    for o, b in zip(offsets, blobs):
        image[o:o + len(b)] = b
    image[shoff:] = table
    return bytes(image)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for bits in (32, 64):
        for big in (False, True):
            name = "handmade-elf%d-%s.so" % (bits, "msb" if big else "lsb")
            with open(os.path.join(out, name), "wb") as f:
                f.write(build(bits, big))


if __name__ == "__main__":
    main()
