#!/usr/bin/env bash
# Seeds for fuzz_bundle: a bundle from clang-offload-bundler (when present)
# and compressed-bundle (CCOB v2/v3) headers.
set -euo pipefail
out=$1
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'CCOB\x03\x00\x01\x00\x30\x00\x00\x00\x00\x00\x00\x00\x39\x30\x00\x00\x00\x00\x00\x00\xef\xbe\xad\xde\x00\x00\x00\x00' >"$out/ccob3"
head -c 16 /dev/urandom >>"$out/ccob3"
printf 'CCOB\x02\x00\x00\x00\x28\x00\x00\x00\x09\x03\x00\x00\xef\xbe\xad\xde\x00\x00\x00\x00' >"$out/ccob2"
head -c 16 /dev/urandom >>"$out/ccob2"
bundler=""
for b in clang-offload-bundler clang-offload-bundler-14 /usr/lib/llvm-14/bin/clang-offload-bundler; do
  command -v "$b" >/dev/null 2>&1 && { bundler=$b; break; }
done
[ -n "$bundler" ] || { echo "seeds: clang-offload-bundler not found, CCOB seeds only" >&2; exit 0; }
printf 'gfx90a' >"$tmp/a"; printf 'gfx942 code' >"$tmp/b"; printf 'gfx928' >"$tmp/c"
"$bundler" -type=o -bundle-align=64 \
  -targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-,hipv4-amdgcn-amd-amdhsa--gfx942,hipv4-amdgcn-amd-amdhsa--gfx928 \
  -inputs=/dev/null,"$tmp/a","$tmp/b","$tmp/c" -outputs="$out/amd.hipfb"
# Real compressed bundles (CCOB v2 zlib, v3 zstd) of the bundle above.
python3 - "$out/amd.hipfb" "$out" <<'PY'
import os, shutil, struct, subprocess, sys, zlib
src, out = sys.argv[1], sys.argv[2]
plain = open(src, 'rb').read()
z = zlib.compress(plain, 6)
open(os.path.join(out, 'amd.ccob2'), 'wb').write(
    b'CCOB' + struct.pack('<HHIIQ', 2, 0, 24 + len(z), len(plain), 0x1234) + z)
if shutil.which('zstd'):
    zs = subprocess.run(['zstd', '-q', '-c', src], check=True, stdout=subprocess.PIPE).stdout
    open(os.path.join(out, 'amd.ccob3'), 'wb').write(
        b'CCOB' + struct.pack('<HHQQQ', 3, 1, 32 + len(zs), len(plain), 0x1234) + zs)
PY
