#!/usr/bin/env python3
"""Writes the crafted ELF that made the reader allocate ~3 GB for 262 KB:
16,384 Verneed entries in .gnu.version_r, each claiming 65,535 Vernaux
entries, all pointing at one shared two-entry chain. A regression seed."""
import struct
import sys

n = 16384
STR, SHSTR, VR = 0x40, 0x60, 0x80
dynstr = b"\0libx.so.1\0V_1\0"
shstr = b"\0.dynstr\0.gnu.version_r\0.shstrtab\0"
vr_size = n * 16 + 32
shoff = VR + vr_size
img = bytearray(shoff + 4 * 64)
img[0:16] = b"\x7fELF\x02\x01\x01" + bytes(9)
struct.pack_into("<HHIQQQIHHHHHH", img, 16, 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 4, 3)
img[STR:STR + len(dynstr)] = dynstr
img[SHSTR:SHSTR + len(shstr)] = shstr
chain = VR + n * 16
for i in range(n):
    at = VR + i * 16
    struct.pack_into("<HHIII", img, at, 1, 65535, 1, chain - at, 16 if i + 1 < n else 0)
struct.pack_into("<IHHII", img, chain, 0, 0, 2, 11, 16)
struct.pack_into("<IHHII", img, chain + 16, 0, 0, 3, 11, 0)
def shdr(i, name, typ, off, size, link, info):
    struct.pack_into("<IIQQQQIIQQ", img, shoff + 64 * i, name, typ, 0, 0, off, size, link, info, 1, 0)
shdr(1, 1, 3, STR, len(dynstr), 0, 0)
shdr(2, 9, 0x6ffffffe, VR, vr_size, 1, n)
shdr(3, 24, 3, SHSTR, len(shstr), 0, 0)
open(sys.argv[1], "wb").write(img)
