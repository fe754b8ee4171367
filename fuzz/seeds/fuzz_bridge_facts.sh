#!/usr/bin/env bash
# Seeds for fuzz_bridge_facts: small shared libraries with a cclforge_abi_info
# of the guard's layout (504 bytes, the magic, a toolkit list), one with the
# wrong size and one with another magic; compiled on the fly.
set -euo pipefail
dir=$1
mkdir -p "$dir"
work=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-seeds.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc=${SEED_CC:-cc}
facts() { # NAME MAGIC EXTRA_BYTES
    cat >"$work/$1.c" <<C
#include <stdint.h>
struct f { char magic[16]; int64_t s[4]; int32_t code, r; char nl[16], tg[64], cl[64], v[16], tv[32], tl[256]; char extra[$3 + 1]; };
__attribute__((visibility("default"))) const struct f cclforge_abi_info = {
    "$2", { 280, 280, 1184, 1184 }, 23007, 0, "2.30.7", "libtorch_hip.so", "librccl.so.1", "dtk", "24.04.1",
    "librccl.so.1 libamdhip64.so.6" };
C
    "$cc" -Os -s -shared -fPIC -o "$dir/$1.so" "$work/$1.c"
}
# extra 0 gives 505 bytes padded to 512: the reader wants exactly 504, so the
# right one is made without the extra field
cat >"$work/ok.c" <<'C'
#include <stdint.h>
struct f { char magic[16]; int64_t s[4]; int32_t code, r; char nl[16], tg[64], cl[64], v[16], tv[32], tl[256]; };
__attribute__((visibility("default"))) const struct f cclforge_abi_info = {
    "cclforge-abi/1", { 280, 280, 1184, 1184 }, 23007, 0, "2.30.7", "libtorch_hip.so", "librccl.so.1", "dtk",
    "24.04.1", "librccl.so.1 libamdhip64.so.6" };
C
"$cc" -Os -s -shared -fPIC -o "$dir/facts_ok.so" "$work/ok.c"
facts facts_size cclforge-abi/1 7
sed 's/cclforge-abi\/1/cclforge-abi\/9/' "$work/ok.c" >"$work/magic.c"
"$cc" -Os -s -shared -fPIC -o "$dir/facts_magic.so" "$work/magic.c"
