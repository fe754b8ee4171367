#!/usr/bin/env bash
# How long `cclforge doctor` takes on a machine with a 1 GB libtorch_cuda.so, next
# to what people run today to learn the same facts (strings | grep for the NCCL
# banner, ldd for the libnccl.so.2 that gets loaded).
#
# The fixture is built here, never committed: a stub libtorch_cuda.so (cc) that
# embeds an NCCL banner and needs libnccl.so.2, into which the real GPU code
# sections of this machine's NCCL are copied (.nv_fatbin repeated until the file
# passes 1 GiB), so the fatbin walk sees real containers.
# Usage: bench/doctor_bench.sh [CCLFORGE] [RUNS]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/bench/lib.sh"
CCLFORGE=${1:-$HERE/build/cclforge}
RUNS=${2:-5}
NCCL=${NCCL:-/usr/local/cuda/lib64/libnccl.so.2}
[ -x "$CCLFORGE" ] || { echo "build cclforge first ($CCLFORGE)"; exit 2; }
[ -f "$NCCL" ] || { echo "needs a real NCCL at $NCCL (set NCCL=)"; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-doctor-bench-XXXXXX")
trap 'rm -rf "$W"' EXIT
LT=$W/libtorch
mkdir -p "$LT/lib" "$LT/share/cmake/Torch"
echo "2.5.1+cu124" >"$LT/build-version"
echo 'set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=1")' >"$LT/share/cmake/Torch/TorchConfig.cmake"
echo 'int c10_stub(void) { return 0; }' >"$W/c10.c"
cc -shared -fPIC -o "$LT/lib/libc10.so" "$W/c10.c"
cc -shared -fPIC -o "$LT/lib/libtorch_cpu.so" "$W/c10.c"
cp "$NCCL" "$LT/lib/libnccl.so.2"
# A 16 MB .rodata like libtorch's, with the banner of a statically linked NCCL in it.
cat >"$W/tc.c" <<'C'
const char commlib_banner[] = "NCCL version 2.21.5+cuda12.4";
const char rodata_filler[16 << 20] = { 1 };
int torch_cuda_stub(void) { return commlib_banner[0] + rodata_filler[7]; }
C
# Its closure is real: the CUDA libraries a libtorch_cuda.so needs, from this toolkit,
# so the loader emulation and the symbol check walk real symbol tables.
CUDA_LIB=$(dirname "$(readlink -f "$NCCL")")
real_libs=()
for l in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcufft.so.12 libcusparse.so.12 libcurand.so.10 \
    libcusolver.so.12 libcudnn.so.9 libnvrtc.so.13 libnvJitLink.so.13; do
    [ -f "$CUDA_LIB/$l" ] && real_libs+=("-l:$l")
done
cc -shared -fPIC -o "$W/stub.so" "$W/tc.c" -Wl,-soname,libtorch_cuda.so -Wl,--no-as-needed \
    -L"$LT/lib" -l:libnccl.so.2 -L"$CUDA_LIB" "${real_libs[@]}" -Wl,-rpath,'$ORIGIN':"$CUDA_LIB"
objcopy -O binary --only-section=.nv_fatbin "$NCCL" "$W/fatbin.one"
one=$(stat -c %s "$W/fatbin.one")
copies=$(( (1100 * 1024 * 1024) / one + 1 ))
for _ in $(seq "$copies"); do cat "$W/fatbin.one"; done >"$W/fatbin.big"
rm -f "$W/fatbin.one"
objcopy --add-section .nv_fatbin="$W/fatbin.big" --set-section-flags .nv_fatbin=alloc,readonly \
    --set-section-alignment .nv_fatbin=8 "$W/stub.so" "$LT/lib/libtorch_cuda.so"
rm -f "$W/fatbin.big" "$W/stub.so"
size=$(stat -c %s "$LT/lib/libtorch_cuda.so")
cat "$LT/lib/libtorch_cuda.so" >/dev/null # warm the page cache for every contender alike

now() { date +%s.%N; }
timeit() { # label, command...
    local label=$1
    shift
    local t
    for _ in $(seq "$RUNS"); do
        local t0 t1
        t0=$(now)
        "$@" >/dev/null 2>&1 || true
        t1=$(now)
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
    done | median | xargs printf "| %-58s | %6.3f s |\n" "$label"
}

echo "libtorch_cuda.so: $size bytes ($copies copies of NCCL's .nv_fatbin, 16 MB .rodata), closure: libnccl.so.2 + ${#real_libs[@]} CUDA libraries; median of $RUNS warm runs"
echo
echo "| what | time |"
echo "|---|---|"
timeit "cclforge doctor --libtorch (whole survey)" "$CCLFORGE" doctor --no-python --libtorch "$LT"
timeit "cclforge doctor --libtorch --json" "$CCLFORGE" doctor --no-python --json --libtorch "$LT"
timeit "strings libtorch_cuda.so | grep 'NCCL version' (banner only)" sh -c "strings '$LT/lib/libtorch_cuda.so' | grep -m1 'NCCL version'"
timeit "ldd libtorch_cuda.so (which libnccl.so.2; executes the loader)" ldd "$LT/lib/libtorch_cuda.so"
timeit "ldd -r libtorch_cuda.so (+ undefined symbols)" ldd -r "$LT/lib/libtorch_cuda.so"
REAL=${CCLFORGE_TEST_TORCH_DIR:-$(ls -d "$HOME"/.cache/cclforge/torch/site-*/torch 2>/dev/null | head -1)}
if [ -n "$REAL" ] && [ -f "$REAL/lib/libtorch_cuda.so" ]; then
    cat "$REAL"/lib/*.so* >/dev/null 2>&1 || true
    timeit "cclforge doctor --libtorch <real torch wheel, $(du -sh "$REAL/lib" | cut -f1) lib/>" \
        "$CCLFORGE" doctor --no-python --libtorch "$REAL"
    timeit "ldd -r <real wheel>/lib/libtorch_cuda.so" ldd -r "$REAL/lib/libtorch_cuda.so"
    timeit "strings <real wheel>/lib/libtorch_cuda.so | grep 'NCCL version'" \
        sh -c "strings '$REAL/lib/libtorch_cuda.so' | grep 'NCCL version'"
fi
echo
"$CCLFORGE" doctor --no-python --json --libtorch "$LT" | python3 -c '
import json, sys
d = json.load(sys.stdin); t = d["libtorch"][0]
print("survey_seconds:", round(d["host"]["survey_seconds"], 3))
print("embedded:", t["embedded"]["version"], "loaded:", t["loaded"]["version"], "archs:", " ".join(t["archs"] or []))
print("missing libs:", t["missing_libs"], "undefined symbols:", len(t["undefined_symbols"]))'
