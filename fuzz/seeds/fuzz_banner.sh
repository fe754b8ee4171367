#!/usr/bin/env bash
# Seeds for fuzz_banner: the banner forms NCCL and RCCL builds print.
set -euo pipefail
out=$1
mkdir -p "$out"
printf 'x\0NCCL version 2.28.9+cuda13.0\0NCCL version 2.28.9 compiled with CUDA 13.0\0' >"$out/nccl"
printf 'RCCL version 2.18.3+hip6.0\0RCCL version : 2.30.4-HEAD\0Mismatched NCCL version detected\0' >"$out/rccl"
