#!/usr/bin/env bash
# Seeds for fuzz_fatbin: fatbins from nvcc (when present) with SASS, PTX,
# LTO-IR, arch/family-specific and compressed entries, and a hand-made one.
set -euo pipefail
out=$1
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One container, one sm_61 cubin entry with an 8-byte payload.
printf '\x50\xed\x55\xba\x01\x00\x10\x00\x48\x00\x00\x00\x00\x00\x00\x00' >"$out/handmade.fatbin"
printf '\x02\x00\x01\x01\x40\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00' >>"$out/handmade.fatbin"
head -c 12 /dev/zero >>"$out/handmade.fatbin"
printf '\x3d\x00\x00\x00' >>"$out/handmade.fatbin"
head -c 40 /dev/zero >>"$out/handmade.fatbin"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
command -v "$nvcc" >/dev/null 2>&1 || { echo "seeds: nvcc not found, hand-made fatbin only" >&2; exit 0; }
echo '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }' >"$tmp/k.cu"
"$nvcc" -fatbin -o "$out/variants.fatbin" "$tmp/k.cu" \
  -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_120f,code='[sm_120f,compute_120f]' \
  -gencode arch=compute_80,code=lto_80 -gencode arch=compute_75,code=sm_75
"$nvcc" -fatbin -Xfatbin -compress-all -o "$out/compressed.fatbin" "$tmp/k.cu" \
  -gencode arch=compute_100,code='[sm_100,compute_100]'
