#!/usr/bin/env bash
# Builds bench/banner_bench.c against the built library and runs it on FILE
# (default: the CUDA 13 libnccl.so.2). With BIG=1 it also makes a 1 GB copy of
# FILE (an 800 MB non-allocated section appended with objcopy) to show that
# cclforge's memory does not grow with the file. Results: docs/gpucode.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD_DIR=${BUILD_DIR:-build}
FILE=${1:-/usr/local/cuda-13.0/lib/libnccl.so.2}
bench_link bench/banner_bench.c "$BUILD_DIR/banner_bench"
"$BUILD_DIR/banner_bench" "$FILE"
if [ "${BIG:-0}" = 1 ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  truncate -s 800M "$tmp/pad"
  objcopy --add-section .bench_pad="$tmp/pad" "$FILE" "$tmp/big.so"
  rm -f "$tmp/pad"
  echo
  "$BUILD_DIR/banner_bench" "$tmp/big.so"
fi
