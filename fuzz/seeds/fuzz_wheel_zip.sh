#!/usr/bin/env bash
# Seeds for fuzz_wheel_zip: small zips whose members are deflate data of
# every shape the inflate engines must read alike (stored, fixed and dynamic
# blocks, full flushes, many small blocks, an empty stream, a stored member,
# data descriptors), written by tests/fixtures/rawzip.py, and one by
# Python's zipfile.
set -euo pipefail
out=$1
mkdir -p "$out"
python3 - "$out" "$(cd "$(dirname "$0")/../../tests/fixtures" && pwd)" <<'PY'
import random, sys, zipfile, zlib
out, fixtures = sys.argv[1], sys.argv[2]
sys.path.insert(0, fixtures)
from rawzip import Raw

rng = random.Random(30)
text = b"".join(b"line %d, %x\n" % (i, rng.randrange(4096)) for i in range(3000))
abcd = bytes(rng.choice(b"abcd") for _ in range(20000))

def stream(data, level=6, strategy=zlib.Z_DEFAULT_STRATEGY, every=0, flush=zlib.Z_FULL_FLUSH):
    c = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy)
    if not every:
        return c.compress(data) + c.flush()
    return b"".join(c.compress(data[k:k + every]) + c.flush(flush) for k in range(0, len(data), every)) + c.flush()

shapes = {
    "dynamic": (stream(text), text), "stored_blocks": (stream(text, 0), text), "fixed": (stream(text, 6, zlib.Z_FIXED), text),
    "full_flush": (stream(text, 1, every=5000), text), "small_blocks": (stream(abcd, 9, every=300, flush=zlib.Z_BLOCK), abcd),
    "empty": (b"\x03\x00", b""),
}
for name, (comp, data) in shapes.items():
    r = Raw(out)
    for k, flags in ((0, 0), (1, 8)):  # with the sizes in the header, and in a data descriptor
        n = "m/%s%d" % (name, k)
        off = r.local(n, comp, len(data), zlib.crc32(data), 8, flags=flags)
        r.entry(n, off, len(comp), len(data), zlib.crc32(data), 8, flags=flags)
    r.add("m/stored", text[:500], method=0)
    r.write("%s.zip" % name)
with zipfile.ZipFile(out + "/zipfile.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("a.txt", text[:4000])
    z.writestr("b/", b"")
PY
