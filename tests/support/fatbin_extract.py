#!/usr/bin/env python3
"""Writes every CUDA fatbin container found outside the fatbin sections of an
ELF file to OUTDIR/<section>-<n>.fatbin, so cuobjdump (which reads only the
fatbin sections of a library, but any standalone .fatbin) can list their archs.
An implementation independent of cclforge's: its own ELF section reader and a
plain search for the container magic (0xBA55ED50, version 1, 16-byte header).
Prints one line per section: "SECTION N". Little-endian ELF64 only."""
import os
import struct
import sys

MAGIC = b"\x50\xed\x55\xba"
SKIP = {".nv_fatbin", "__nv_relfatbin"}


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    entsize, count, strndx = struct.unpack_from("<HHH", data, 0x3A)
    rows = [struct.unpack_from("<IIQQQQ", data, shoff + i * entsize) for i in range(count)]
    names = rows[strndx][4]
    for name, typ, flags, _addr, off, size in rows:
        end = data.index(b"\0", names + name)
        yield data[names + name:end].decode(), typ, flags, off, size


def main():
    path, outdir = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = f.read()
    os.makedirs(outdir, exist_ok=True)
    for name, typ, flags, off, size in sections(data):
        # allocated, read-only, not code, PROGBITS: where data lives
        if name in SKIP or typ != 1 or not flags & 2 or flags & 5:
            continue
        n, pos, end = 0, off, off + size
        while True:
            i = data.find(MAGIC, pos, end)
            if i < 0:
                break
            version, header = struct.unpack_from("<HH", data, i + 4)
            body, = struct.unpack_from("<Q", data, i + 8)
            if version == 1 and header == 16 and 64 <= body <= end - i - 16:
                with open(os.path.join(outdir, f"{name.lstrip('.')}-{n}.fatbin"), "wb") as out:
                    out.write(data[i:i + 16 + body])
                n += 1
                pos = i + 16 + body
            else:
                pos = i + 1
        if n:
            print(name, n)


main()
