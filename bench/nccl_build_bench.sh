#!/usr/bin/env bash
# The time `cclforge nccl build` saves: NCCL built for the rig's arch(s) versus
# NCCL's default NVCC_GENCODE list (what `make src.build` does when nobody sets
# it), on the same source and machine, plus the cache-hit time.
#
# usage: bench/nccl_build_bench.sh SRC_DIR [ARCHS]
#   SRC_DIR      an NCCL checkout (e.g. `git clone --branch v2.28.9-1 ...`)
#   ARCHS        what cclforge builds (default "9.0")
# environment:
#   MODE=full    both complete builds (long: the default list is 6+ archs)
#   MODE=unit    (default) one complete cclforge build, then the same device
#                translation units compiled with the one-arch and the default
#                gencode lists: the per-unit cost ratio, measured
#   ONLY_FUNCS   passed to both builds (default "SendRecv": small device part)
#   JOBS         parallel jobs (default 2)
#   UNITS        device sources for MODE=unit (default: onerank.cu and the
#                first kernel NCCL's generate.py writes for ONLY_FUNCS)
#   Never point SRC_DIR into cclforge's own work directory of the same build:
#   a source with a different identity is a cache miss and rebuilds there.
#   CCLFORGE     the binary (default ./build/cclforge)
#   WORK         scratch directory (default a fresh mktemp -d)
#   REUSE_ROOT   an install root where this very build was already made by
#                cclforge: its manifest's build_seconds is reported instead of
#                building again (a long upstream build is then done only once)
set -euo pipefail
SRC=${1:?usage: nccl_build_bench.sh SRC_DIR [ARCHS]}
SRC=$(cd "$SRC" && pwd)
ARCHS=${2:-9.0}
MODE=${MODE:-unit}
ONLY_FUNCS=${ONLY_FUNCS-SendRecv}
JOBS=${JOBS:-2}
CCLFORGE=${CCLFORGE:-$(pwd)/build/cclforge}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/nccl-bench-XXXXXX")}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo "# nccl build benchmark: $(basename "$SRC"), archs $ARCHS, ONLY_FUNCS='$ONLY_FUNCS', -j$JOBS, $(nproc) cores, $(date -u +%FT%TZ)"
echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# NCCL's own default list, as its makefiles/common.mk computes it for this CUDA.
DEFAULT_GENCODE=$(make -C "$SRC/src" -n lib BUILDDIR="$WORK/probe" CUDA_HOME="$CUDA_HOME" 2>/dev/null |
                  sed -n 's/^NVCC_GENCODE is //p' | head -1)
echo "# NCCL default NVCC_GENCODE: $DEFAULT_GENCODE"

ROOT=${REUSE_ROOT:-$WORK/root}
HIT_ARGS=(--source "$SRC")
if [ -n "${REUSE_ROOT:-}" ]; then
    M=$(ls -d "$ROOT"/nccl/builds/*/manifest.json | head -1)
    # the cache hit must repeat that build's own inputs (source and tag)
    HIT_ARGS=(--source "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['source']['location'])" "$M")"
              --tag "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['tag'])" "$M")")
    echo "cclforge build ($ARCHS): $(python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['build_seconds'],1))" "$M") s (from $M)"
else
    t0=$(now)
    "$CCLFORGE" nccl build --source "$SRC" --archs "$ARCHS" --only-funcs "$ONLY_FUNCS" -j"$JOBS" \
        --root "$ROOT" --cuda-home "$CUDA_HOME" >"$WORK/cclforge.out" 2>"$WORK/cclforge.err"
    t1=$(now)
    echo "cclforge build ($ARCHS): $(secs "$t0" "$t1") s"
fi

t0=$(now)
"$CCLFORGE" nccl build "${HIT_ARGS[@]}" --archs "$ARCHS" --only-funcs "$ONLY_FUNCS" -j"$JOBS" \
    --root "$ROOT" --cuda-home "$CUDA_HOME" >"$WORK/hit.out"
t1=$(now)
HIT=$(secs "$t0" "$t1")
grep -q '^cached' "$WORK/hit.out" || { echo "expected a cache hit: $(cat "$WORK/hit.out")"; exit 1; }
echo "cache hit: ${HIT} s"

if [ "$MODE" = full ]; then
    t0=$(now)
    make -C "$SRC" src.build BUILDDIR="$WORK/default" CUDA_HOME="$CUDA_HOME" -j"$JOBS" \
        ${ONLY_FUNCS:+ONLY_FUNCS="$ONLY_FUNCS"} >"$WORK/default.log" 2>&1
    t1=$(now)
    echo "make src.build with NCCL's default list: $(secs "$t0" "$t1") s"
    exit 0
fi

# MODE=unit: same units, same flags as src/device/Makefile, two gencode lists.
# Headers come from the installed build; kernels from NCCL's own generator.
NAME=$(ls "$ROOT/nccl/builds" | head -1)
INC="$ROOT/nccl/builds/$NAME/include"
ONE_GENCODE=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['flags']['NVCC_GENCODE'])" \
              "$ROOT/nccl/builds/$NAME/manifest.json")
if [ -z "${UNITS:-}" ]; then
    (cd "$SRC/src/device" && python3 ./generate.py "$WORK/gensrc" "$ONLY_FUNCS") >/dev/null
    UNITS="onerank.cu $(ls "$WORK"/gensrc/*.cu | grep -v device_table | head -1)"
fi
FLAGS=(-ccbin g++ -std=c++17 --expt-extended-lambda -Xptxas -maxrregcount=96 -Xfatbin -compress-all -O3
       -DNCCL_OS_LINUX -I. -I.. -I"$INC" -I../include -I../include/plugin
       --compiler-options "-fPIC -fvisibility=hidden")
unit_time() { # gencode-string unit
    local t0 t1
    t0=$(now)
    # shellcheck disable=SC2086 # the gencode string is a list of flags
    (cd "$SRC/src/device" && "$NVCC" "${FLAGS[@]}" $1 -dc "$2" -o "$WORK/unit.o") >>"$WORK/unit.log" 2>&1
    t1=$(now)
    secs "$t0" "$t1"
}
for u in $UNITS; do
    one=$(unit_time "$ONE_GENCODE" "$u")
    all=$(unit_time "$DEFAULT_GENCODE" "$u")
    echo "unit $(basename "$u"): one-arch ${one} s, default list ${all} s, ratio $(awk -v a="$one" -v b="$all" 'BEGIN { printf "%.1f", b / a }')"
done
echo "# work dir: $WORK"
