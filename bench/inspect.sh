#!/usr/bin/env bash
# cclforge inspect against the tools people use today, same run, same inputs:
#  1. closure + symbol check of large libraries: `cclforge inspect --undefined
#     --no-gpu` vs `ldd -r` vs Debian's `libtree` (median of $RUNS warm runs each);
#  2. NCCL banner and GPU archs on the 218 MB libnccl.so.2: the whole command,
#     `grep -c`, `strings -a | grep`, and bench/banner_bench.c (library call vs a
#     whole-file read + memmem, with page-cache residency after a cold run);
#  3. peak RSS on a 1 GB ELF made on the fly (libnccl.so.2 plus an 800 MB
#     non-allocated section), deleted afterwards.
# Usage: bash bench/inspect.sh  (after scripts/build.sh). Results: docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
RUNS=${RUNS:-5}
NCCL=${NCCL:-/usr/local/cuda-13.0/lib/libnccl.so.2}
CUDA_LIB=${CUDA_LIB:-/usr/local/cuda/lib64}
for tool in ldd libtree /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing $tool: bash scripts/deps.sh" >&2; exit 2; }
done

bench_header "cclforge inspect benchmark"
echo "cclforge: $("$CCLFORGE" --version); ldd: $(ldd --version | head -1); libtree: $(libtree --version 2>&1 | head -1)"
echo

# --- 1. closures -------------------------------------------------------------
libs=()
for f in "$NCCL" "$CUDA_LIB"/libcublasLt.so.13 "$CUDA_LIB"/libcublas.so.13 "$CUDA_LIB"/libcudnn.so.9 \
         "$CUDA_LIB"/libcudnn_engines_precompiled.so.9 "$CUDA_LIB"/libcudnn_adv.so.9 "$CUDA_LIB"/libcufft.so.12 \
         "$CUDA_LIB"/libcusparse.so.12 "$CUDA_LIB"/libcusolver.so.12; do
    [ -f "$f" ] && libs+=("$f")
done
[ "${#libs[@]}" -gt 0 ] || { echo "no large libraries found (NCCL=$NCCL, CUDA_LIB=$CUDA_LIB)" >&2; exit 2; }

echo "## 1. closure and symbol check"
echo
echo "Wall: median of $RUNS warm runs, ms. CPU: mean task-clock (perf stat) of $RUNS runs, ms."
echo "'cclforge' is \`inspect --undefined --no-gpu\` (it still reads every object's read-only data for NCCL banners);"
echo "'linkage' adds --no-banner: the same work as ldd -r (closure + symbols + versions) and the lint."
echo
echo "Wall (perf): mean elapsed time from perf stat over $RUNS runs, fork to exit, without the ~2 ms that the"
echo "date calls around each run add to 'wall' (median_ms of /bin/true here: $(median_ms 11 true) ms)."
echo
echo "| library | MB | objects | cclforge wall | linkage wall | ldd -r wall | libtree wall | ldd -r / cclforge | ldd -r / linkage | cclforge CPU | linkage CPU | ldd -r CPU | ldd -r / cclforge CPU | ldd -r / linkage CPU | cclforge wall (perf) | linkage wall (perf) | ldd -r wall (perf) | ldd -r / cclforge wall (perf) | ldd -r / linkage wall (perf) | same paths as ldd | same problems as ldd -r |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
sum_c=0 sum_k=0 sum_l=0 sum_t=0 sum_cc=0 sum_kc=0 sum_lc=0 sum_ce=0 sum_ke=0 sum_le=0
add() { awk -v a="$1" -v b="$2" 'BEGIN {print a + b}'; }
for f in "${libs[@]}"; do
    # warm the page cache for every tool alike
    "$CCLFORGE" inspect --undefined --no-gpu "$f" >/dev/null 2>&1; ldd -r "$f" >/dev/null 2>&1; libtree "$f" >/dev/null 2>&1
    c=$(median_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu "$f")
    k=$(median_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu --no-banner "$f")
    l=$(median_ms "$RUNS" ldd -r "$f")
    t=$(median_ms "$RUNS" libtree "$f")
    cc_=$(cpu_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu "$f")
    kc=$(cpu_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu --no-banner "$f")
    lc=$(cpu_ms "$RUNS" ldd -r "$f")
    ce=$(elapsed_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu "$f")
    ke=$(elapsed_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu --no-banner "$f")
    le=$(elapsed_ms "$RUNS" ldd -r "$f")
    json=$("$CCLFORGE" inspect --json --undefined --no-gpu "$f")
    objects=$(printf '%s' "$json" | python3 -c "import json,sys; print(len(json.load(sys.stdin)['targets'][0]['objects']))")
    # correctness next to speed: resolved paths and ldd -r's problem lines
    ours=$(printf '%s' "$json" | python3 -c "
import json,sys
t=json.load(sys.stdin)['targets'][0]
print('\n'.join(sorted(o['path'] for o in t['objects'][1:])))")
    theirs=$(ldd "$f" | awk '/=>/ {print $3; next} $1 ~ /^\// {print $1}' | sort)
    same_paths=no; [ "$ours" = "$theirs" ] && same_paths=yes
    ours_p=$(printf '%s' "$json" | python3 -c "
import json,sys
t=json.load(sys.stdin)['targets'][0]
print('\n'.join(sorted(p['message'] for p in (t['symbols'] or {}).get('problems', []))))")
    theirs_p=$(ldd -r "$f" 2>&1 | grep -E "undefined symbol|not found \(required" | sed "s|^$f: ||; s/^[[:space:]]*//" | sort)
    same_p=no; [ "$ours_p" = "$theirs_p" ] && same_p="yes ($(printf '%s' "$theirs_p" | grep -c .))"
    size=$(awk -v b="$(stat -L -c %s "$f")" 'BEGIN {printf "%.1f", b / 1e6}')
    echo "| $(basename "$f") | $size | $objects | $c | $k | $l | $t | $(ratio "$l" "$c")x | $(ratio "$l" "$k")x | ${cc_:--} | ${kc:--} | ${lc:--} | $(ratio "${lc:-0}" "${cc_:-0}")x | $(ratio "${lc:-0}" "${kc:-0}")x | ${ce:--} | ${ke:--} | ${le:--} | $(ratio "${le:-0}" "${ce:-0}")x | $(ratio "${le:-0}" "${ke:-0}")x | $same_paths | $same_p |"
    sum_c=$(add "$sum_c" "$c"); sum_k=$(add "$sum_k" "$k"); sum_l=$(add "$sum_l" "$l"); sum_t=$(add "$sum_t" "$t")
    sum_cc=$(add "$sum_cc" "${cc_:-0}"); sum_kc=$(add "$sum_kc" "${kc:-0}"); sum_lc=$(add "$sum_lc" "${lc:-0}")
    sum_ce=$(add "$sum_ce" "${ce:-0}"); sum_ke=$(add "$sum_ke" "${ke:-0}"); sum_le=$(add "$sum_le" "${le:-0}")
done
echo "| **sum** | | | $sum_c | $sum_k | $sum_l | $sum_t | **$(ratio "$sum_l" "$sum_c")x** | **$(ratio "$sum_l" "$sum_k")x** | $sum_cc | $sum_kc | $sum_lc | **$(ratio "$sum_lc" "$sum_cc")x** | **$(ratio "$sum_lc" "$sum_kc")x** | $sum_ce | $sum_ke | $sum_le | **$(ratio "$sum_le" "$sum_ce")x** | **$(ratio "$sum_le" "$sum_ke")x** | | |"
echo
# all libraries in one invocation (one process each tool)
c=$(median_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu "${libs[@]}")
k=$(median_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu --no-banner "${libs[@]}")
l=$(median_ms "$RUNS" ldd -r "${libs[@]}")
t=$(median_ms "$RUNS" libtree "${libs[@]}")
echo "all ${#libs[@]} in one invocation (wall ms): cclforge $c, linkage $k, ldd -r $l, libtree $t: ldd -r / cclforge $(ratio "$l" "$c")x, ldd -r / linkage $(ratio "$l" "$k")x"
ce=$(elapsed_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu "${libs[@]}")
ke=$(elapsed_ms "$RUNS" "$CCLFORGE" inspect --undefined --no-gpu --no-banner "${libs[@]}")
le=$(elapsed_ms "$RUNS" ldd -r "${libs[@]}")
echo "the same, wall (perf): cclforge $ce, linkage $ke, ldd -r $le: ldd -r / cclforge $(ratio "$le" "$ce")x, ldd -r / linkage $(ratio "$le" "$ke")x"
c=$(median_ms "$RUNS" "$CCLFORGE" inspect --undefined "${libs[@]}")
echo "the same with the GPU code scan (no --no-gpu): cclforge $c ms"
k=$(median_ms "$RUNS" "$CCLFORGE" inspect --no-gpu --no-banner "${libs[@]}")
echo "closure and lint only (--no-gpu --no-banner, no symbol check, libtree's job): cclforge $k ms, libtree $t ms: $(ratio "$t" "$k")x"
echo

# --- 2. banner and archs on libnccl.so.2 ----------------------------------------
if [ -f "$NCCL" ]; then
    real=$(readlink -f "$NCCL")
    echo "## 2. NCCL version and GPU archs of $(basename "$NCCL") ($(awk -v b="$(stat -c %s "$real")" 'BEGIN {printf "%.0f", b / 1e6}') MB), commands, median of $RUNS warm runs (ms)"
    echo
    cat "$real" >/dev/null
    c=$(median_ms "$RUNS" "$CCLFORGE" inspect "$NCCL")
    # GNU grep stops at the first match when its output is /dev/null (as if -q):
    # give it a real file, so it scans what a user's `grep -c` scans.
    out=$(mktemp)
    g=$(median_ms "$RUNS" bash -c 'grep -c "NCCL version" "$1" >"$2"' _ "$real" "$out")
    s=$(median_ms 3 bash -c 'strings -a "$1" | grep "NCCL version" >"$2"' _ "$real" "$out")
    scanned=$("$CCLFORGE" inspect --json "$NCCL" | python3 -c "
import json,sys
o=json.load(sys.stdin)['targets'][0]['objects'][0]
print(o['comm']['bytes_scanned'])")
    echo "| method | ms | vs cclforge |"
    echo "|---|---|---|"
    echo "| cclforge inspect (closure of 9 objects + banners + archs) | $c | 1x |"
    echo "| grep -c 'NCCL version' (banner only) | $g | $(ratio "$g" "$c")x |"
    echo "| strings -a \| grep 'NCCL version' (banner only) | $s | $(ratio "$s" "$c")x |"
    # cold page cache: what a fresh node sees the first time (posix_fadvise DONTNEED before each run)
    evict() { python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$real"; }
    cold_ms() {
        local i s e times=()
        for i in 1 2 3; do
            evict
            s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
            times+=($(((e - s) / 1000)))
        done
        printf '%s\n' "${times[@]}" | sort -n | awk 'NR == 2 {printf "%.1f\n", $1 / 1000}'
    }
    cc_cold=$(cold_ms "$CCLFORGE" inspect "$NCCL")
    g_cold=$(cold_ms bash -c 'grep -c "NCCL version" "$1" >"$2"' _ "$real" "$out")
    rm -f "$out"
    echo "| cold page cache: cclforge inspect | $cc_cold | 1x |"
    echo "| cold page cache: grep -c 'NCCL version' | $g_cold | $(ratio "$g_cold" "$cc_cold")x |"
    echo
    echo "cclforge read $scanned bytes of read-only data for the banner ($(awk -v a="$scanned" -v b="$(stat -c %s "$real")" 'BEGIN {printf "%.3f", 100 * a / b}')% of the file)."
    echo
    echo "### library call vs whole-file scan (bench/banner_bench.c)"
    echo
    bench_link bench/banner_bench.c "$BUILD_DIR/banner_bench" && "$BUILD_DIR/banner_bench" "$NCCL"
    echo
fi

# --- 3. memory on a 1 GB input -------------------------------------------------
if [ -f "$NCCL" ]; then
    echo "## 3. peak RSS on a 1 GB ELF"
    echo
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    truncate -s 800M "$tmp/pad"
    objcopy --add-section .bench_pad="$tmp/pad" "$NCCL" "$tmp/big.so"
    rm -f "$tmp/pad"
    fallocate -d "$tmp/big.so" 2>/dev/null || true # punch the zero pages out: no need to hold 800 MB on disk
    big_mb=$(awk -v b="$(stat -c %s "$tmp/big.so")" 'BEGIN {printf "%.0f", b / 1e6}')
    echo "| command on a $big_mb MB file | peak RSS MB |"
    echo "|---|---|"
    for args in "inspect" "inspect --undefined" "inspect --json --undefined --explain"; do
        # shellcheck disable=SC2086
        kb=$(max_rss_kb "$CCLFORGE" $args "$tmp/big.so")
        echo "| cclforge $args | $(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}') |"
    done
    kb=$(max_rss_kb ldd -r "$tmp/big.so")
    echo "| ldd -r (for comparison) | $(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}') |"
    kb=$(max_rss_kb bash -c 'grep -c "NCCL version" "$1" >"$2"' _ "$tmp/big.so" "$tmp/grep.out")
    echo "| grep -c 'NCCL version' (for comparison) | $(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}') |"
    rm -f "$tmp/big.so"
    # The same size, but the 800 MB section is allocated read-only data, so the
    # banner scan reads all of it; an NCCL banner sits at its very end.
    truncate -s 800M "$tmp/pad"
    printf 'NCCL version 2.99.1+cuda13.0\0' >>"$tmp/pad"
    objcopy --add-section .bench_ro="$tmp/pad" --set-section-flags .bench_ro=alloc,readonly,contents,data \
        "$NCCL" "$tmp/big_ro.so" 2>/dev/null
    rm -f "$tmp/pad"
    fallocate -d "$tmp/big_ro.so" 2>/dev/null || true
    kb=$(max_rss_kb "$CCLFORGE" inspect --no-gpu "$tmp/big_ro.so")
    found=no
    "$CCLFORGE" inspect --no-gpu "$tmp/big_ro.so" 2>/dev/null | grep -q "NCCL 2\.99\.1" && found=yes
    echo "| cclforge inspect --no-gpu, 800 MB of it read-only data scanned (banner at its end found: $found) | $(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}') |"
    lt=$CUDA_LIB/libcublasLt.so.13
    if [ -f "$lt" ]; then
        kb=$(max_rss_kb "$CCLFORGE" inspect --undefined "$lt")
        echo "| cclforge inspect --undefined libcublasLt.so.13 (542 MB; 168 MB read-only data) | $(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}') |"
    fi
    rm -rf "$tmp"
fi
