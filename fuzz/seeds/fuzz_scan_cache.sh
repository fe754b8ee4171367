#!/usr/bin/env bash
# Real scan-cache entries, made by the built cclforge (next to the fuzz
# targets' build) inspecting a few libraries into a private cache directory.
set -euo pipefail
dir=$1
mkdir -p "$dir"
bin=${CCLFORGE_BIN:-}
[ -n "$bin" ] && [ -x "$bin" ] || exit 0
home=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-seed-cache.XXXXXX")
trap 'rm -rf "$home"' EXIT
CCLFORGE_HOME=$home "$bin" inspect /lib/x86_64-linux-gnu/libc.so.6 /usr/local/cuda-13.0/lib/libcupti.so.13 \
    /usr/local/cuda-13.0/lib/libnccl.so.2 >/dev/null 2>&1 || true
n=0
for f in $(find "$home/scan-v2" -type f ! -name '.*' 2>/dev/null); do
    cp "$f" "$dir/entry-$n"
    n=$((n + 1))
done
