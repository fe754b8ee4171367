#!/usr/bin/env bash
# Seeds for fuzz_gpucode_elf: small shared libraries with a .nv_fatbin from
# nvcc (when present), a .hip_fatbin bundle, and an NCCL banner.
set -euo pipefail
out=$1
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}
printf 'const char b[] = "NCCL version 2.21.5+cuda12.4";\nconst char *f(void) { return b; }\n' >"$tmp/banner.c"
"$cc" -shared -fPIC -O2 -s -o "$out/libbanner.so" "$tmp/banner.c"
bash "$(dirname "$0")/fuzz_bundle.sh" "$tmp/bundles"
if [ -f "$tmp/bundles/amd.hipfb" ]; then
  printf '__asm__(".section .hip_fatbin,\\"a\\"\\n.p2align 6\\n.incbin \\"%s\\"\\n.previous");\nint g(void) { return 1; }\n' \
    "$tmp/bundles/amd.hipfb" >"$tmp/hip.c"
  "$cc" -shared -fPIC -s -o "$out/libhip.so" "$tmp/hip.c"
fi
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if command -v "$nvcc" >/dev/null 2>&1; then
  echo '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }' >"$tmp/k.cu"
  "$nvcc" -c -Xcompiler -fPIC -o "$out/kernel.o" "$tmp/k.cu" \
    -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code='[sm_90,compute_90]'
fi
