#!/usr/bin/env bash
# Seeds for fuzz_wheel_zip: small zips as Python's zipfile writes them
# (stored, deflate, ZIP64 records, data descriptors, a symlink, a comment).
set -euo pipefail
out=$1
mkdir -p "$out"
python3 - "$out" <<'PY'
import io, os, sys, zipfile
out = sys.argv[1]
def write(name, **kw):
    with zipfile.ZipFile(os.path.join(out, name), "w", **kw) as z:
        z.writestr("pkg/__init__.py", "x = 1\n" * 20)
        z.writestr("pkg-1.0.dist-info/RECORD", "pkg/__init__.py,sha256=abc,120\npkg-1.0.dist-info/RECORD,,\n")
        info = zipfile.ZipInfo("pkg/link")
        info.external_attr = 0o120777 << 16
        info.create_system = 3
        z.writestr(info, "../pkg")
write("stored.zip", compression=zipfile.ZIP_STORED)
write("deflate.zip", compression=zipfile.ZIP_DEFLATED)
with zipfile.ZipFile(os.path.join(out, "zip64.zip"), "w", zipfile.ZIP_DEFLATED, allowZip64=True) as z:
    with z.open("big.bin", "w", force_zip64=True) as f:
        f.write(b"\0" * 5000)
    z.comment = b"a comment"
# a data descriptor: written to a stream that cannot seek back
class NoSeek(io.RawIOBase):
    def __init__(self): self.buf = bytearray()
    def writable(self): return True
    def write(self, b): self.buf += b; return len(b)
s = NoSeek()
with zipfile.ZipFile(s, "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("stream.txt", "w") as f:
        f.write(b"streamed " * 100)
open(os.path.join(out, "descriptor.zip"), "wb").write(bytes(s.buf))
PY
