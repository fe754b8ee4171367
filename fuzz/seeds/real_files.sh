#!/usr/bin/env bash
# Real-sized seeds for every target: copies of real libraries up to
# MAX_SEED bytes (default 4 MB, the targets' -max_len), so the fuzzer starts
# from inputs whose counts and sizes are those of real files and can grow a
# count into an out-of-proportion allocation (the .gnu.version_r case); plus
# the crafted version-requirements bomb itself. Nothing is committed: the
# files are taken from this machine (system libraries, CUDA when present).
set -euo pipefail
dir=$1
max=${MAX_SEED:-4194304}
mkdir -p "$dir"
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
         /usr/lib/x86_64-linux-gnu/libzstd.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 \
         /lib64/ld-linux-x86-64.so.2 /usr/local/cuda-13.0/lib/libcudart.so.13 \
         /usr/local/cuda-13.0/lib/libcupti.so.13 /usr/local/cuda-13.0/lib/libnvtx3interop.so.1; do
    [ -f "$f" ] || continue
    size=$(stat -L -c %s "$f")
    [ "$size" -le "$max" ] && cp -L "$f" "$dir/real-$(basename "$f")"
done
python3 "$(dirname "$0")/verneed_bomb.py" "$dir/verneed-bomb.so"
