#!/usr/bin/env bash
# Seeds for fuzz_libtorch_abi: ProcessGroupNCCL-shaped libraries compiled here
# (tests/fixtures/libtorch_abi/pg_like.cpp) at -O2, -O2 -fno-plt and -O0.
set -euo pipefail
out=$1
mkdir -p "$out"
src=$(dirname "$0")/../../tests/fixtures/libtorch_abi/pg_like.cpp
command -v g++ >/dev/null || exit 0
g++ -shared -fPIC -O2 -o "$out/pg_o2.so" "$src"
g++ -shared -fPIC -O2 -fno-plt -o "$out/pg_noplt.so" "$src"
g++ -shared -fPIC -O0 -DNCCL_CODE=21803 -o "$out/pg_o0.so" "$src"
