#!/usr/bin/env bash
# zlib against ISA-L's igzip, streaming inflate + CRC-32, on the largest
# members of torch's wheel (85 % of its uncompressed bytes are in the two
# largest: libtorch_cuda.so, libtorch_cpu.so): why `wheel verify` inflates
# with igzip where ISA-L is linked (docs/wheel.md).
# Needs libisal-dev (apt-get install libisal-dev); not part of the build.
#   bash bench/inflate_engines.sh [WHEEL] [MEMBERS]   (MEMBERS default 2)
#   REPEATS (default 5), OUT_KIB (the output buffer, default 64: verify's)
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH=${1:-$(ls -1 "${CCLFORGE_TORCH_CACHE:-$HOME/.cache/cclforge/torch}"/wheels-*/torch-*.whl 2>/dev/null | head -1)}
[ -f "$TORCH" ] || { echo "no torch wheel: bash scripts/torch-cache.sh (or give its path)" >&2; exit 2; }
[ -f /usr/include/isa-l/igzip_lib.h ] || { echo "no ISA-L headers: apt-get install libisal-dev" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/inflate_engines" bench/inflate_engines.c -lz -lisal
# each member's raw deflate data, cut out at its local header's data offset
python3 - "$TORCH" "$tmp" "${2:-2}" <<'PY'
import struct, sys, zipfile
wheel, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
z = zipfile.ZipFile(wheel)
with open(wheel, "rb") as f:
    for i in sorted(z.infolist(), key=lambda i: i.file_size)[-n:]:
        f.seek(i.header_offset)
        name_len, extra_len = struct.unpack("<HH", f.read(30)[26:30])
        f.seek(i.header_offset + 30 + name_len + extra_len)
        open(f"{out}/{i.filename.rsplit('/', 1)[-1]}.deflate", "wb").write(f.read(i.compress_size))
        print(f"{i.filename}: {i.compress_size} -> {i.file_size} bytes, archive CRC-32 {i.CRC:08x}")
PY
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for f in "$tmp"/*.deflate; do
    echo "== ${f##*/}"
    "$tmp/inflate_engines" "$f" "${REPEATS:-5}" "${OUT_KIB:-64}" | tee "$tmp/out" | awk '
        NR > 1 { t[$2] = t[$2] " " $3; if (!($2 in best) || $3 < best[$2]) best[$2] = $3; crcs[$5]++ }
        END { for (e in t) printf "%s cpu_s:%s (best %.3f)\n", e, t[e], best[e]
              printf "zlib / isal (best): %.2fx; crc agreement: %s\n", best["zlib"] / best["isal"], length(crcs) == 1 ? "yes" : "NO" }'
done
