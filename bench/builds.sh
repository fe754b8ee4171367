#!/usr/bin/env bash
# Several builds of cclforge side by side in one run, against ldd -r and
# libtree: what a change to the build or the code costs a user.
#
#   BUILDS="label=/path/to/cclforge label2=/path/to/other ..." bash bench/builds.sh
#
# (default: BUILDS="source=build/cclforge"). Measured, paired (every command
# once per repeat, in an order that rotates with the repeat, so a load change
# hits all alike), CPU time of the command's own process from wait4
# (bench/spawn_cpu.c: exec, loading, the work and exit; no shell):
#
#  1. inspect --undefined over the corpus (every 15th of the system's
#     shared objects, plus the CUDA toolkit's libraries), one process per file:
#     - first run: an empty cache directory before every run (nothing
#       kept; the run scans every object and stores its entries);
#     - scan cache warm: the per-file scan entries present, anything else a
#       build remembers removed before every run (the state after a first run
#       over the same libraries);
#     - warm: whatever each build keeps, kept (a repeat of the same file);
#     ldd -r and libtree run in the same repeats. Per file the median of
#     $REPEATS repeats; summed over the corpus. Ratios are against libtree and
#     ldd -r of the same run.
#  2. wheel verify of the torch wheel (scripts/torch-cache.sh) against
#     auditwheel show (scripts/wheel-cache.sh): wall, CPU and peak RSS from
#     GNU time, median of $WHEEL_RUNS paired runs.
#  3. doctor with a Python torch on PYTHONPATH, caches warm: median CPU of
#     $REPEATS paired runs.
# Sections whose input is missing say so and are skipped. Results: docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
BUILDS=${BUILDS:-source=build/cclforge}
REPEATS=${REPEATS:-11}
COLD_REPEATS=${COLD_REPEATS:-5}
WHEEL_RUNS=${WHEEL_RUNS:-3}
SECTIONS=${SECTIONS:-inspect wheel doctor}
SYSLIB=${SYSLIB:-/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)}
# the CUDA toolkit's libraries: CUDA_HOME, else nvcc's, else /usr/local/cuda
cuda_root=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")")}
CUDA_LIB=${CUDA_LIB:-$(for d in "$cuda_root/lib64" "$cuda_root/lib"; do [ -d "$d" ] && { readlink -f "$d"; break; }; done)}
for tool in ldd libtree cc; do
    command -v "$tool" >/dev/null || { echo "missing $tool: bash scripts/deps.sh" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -o "$tmp/spawn_cpu" bench/spawn_cpu.c || exit 2

labels=()
declare -A bin
for b in $BUILDS; do
    l=${b%%=*} p=${b#*=}
    [ -x "$p" ] || { echo "build '$l': $p is not an executable" >&2; exit 2; }
    labels+=("$l")
    bin[$l]=$(cd "$(dirname "$p")" && pwd)/$(basename "$p")
done

bench_header "builds side by side"
for l in "${labels[@]}"; do
    echo "- $l: ${bin[$l]} ($("${bin[$l]}" --version)); NEEDED: $(bench_needed "${bin[$l]}")"
done
echo "- ldd: $(ldd --version | head -1); libtree: $(libtree --version 2>&1 | head -1)"
echo

# spawn CMD...: "cpu_us" of one run of CMD (wait4's user + system)
spawn() { "$tmp/spawn_cpu" 1 -- "$@" | awk '{ print $2 }'; }
sum() { awk '{ s += $1 } END { printf "%.1f\n", s / 1000 }'; }

# The cache directory a build's run is given, after the state is set up:
empty_home() { rm -rf "$tmp/home"; echo "$tmp/home"; }
scan_only_home() {
    find "$tmp/home-$1" -mindepth 1 -maxdepth 1 ! -name scan-v2 -exec rm -rf {} +
    echo "$tmp/home-$1"
}
# per_file_medians RESULT HOME_FN: per file of the corpus, COLD_REPEATS runs of
# every build in rotating order, each in the directory HOME_FN LABEL sets up;
# the per-file median CPU of each build appended to RESULT[label]
per_file_medians() {
    local -n result=$1
    local f r k l home
    for f in "${files[@]}"; do
        declare -A per=()
        for ((r = 0; r < COLD_REPEATS; r++)); do
            for k in "${!labels[@]}"; do
                l=${labels[$(((k + r) % ${#labels[@]}))]}
                home=$("$2" "$l")
                per[$l]+="$(CCLFORGE_HOME=$home spawn "${bin[$l]}" inspect --undefined "$f") "
            done
        done
        for l in "${labels[@]}"; do result[$l]+="$(median "${per[$l]}") "; done
        unset per
    done
}

inspect_section() {
    mapfile -t files < <(bench_corpus "$SYSLIB" "$CUDA_LIB")
    echo "## inspect --undefined over the corpus: ${#files[@]} files, one process each"
    echo
    echo "(every 15th of $SYSLIB/*.so*${CUDA_LIB:+, and the regular files of $CUDA_LIB}; CPU ms summed over the corpus)"
    echo
    local ldd libtree
    ldd=$(command -v ldd) libtree=$(command -v libtree)
    # first run: an empty cache directory before each run
    declare -A first=()
    per_file_medians first empty_home
    # each build's own cache directory, filled by two runs over the corpus
    for l in "${labels[@]}"; do
        for f in "${files[@]}"; do CCLFORGE_HOME=$tmp/home-$l "${bin[$l]}" inspect --undefined "$f" >/dev/null 2>&1; done
    done
    sleep 3 # an entry for a file changed in the last two seconds is not stored
    for l in "${labels[@]}"; do
        for f in "${files[@]}"; do CCLFORGE_HOME=$tmp/home-$l "${bin[$l]}" inspect --undefined "$f" >/dev/null 2>&1; done
    done
    # scan cache warm: every cache directory entry but scan-v2 removed before each run
    declare -A scan=()
    per_file_medians scan scan_only_home
    # warm, with ldd -r and libtree: spawn_cpu's paired repeats per file
    for l in "${labels[@]}"; do
        for f in "${files[@]}"; do CCLFORGE_HOME=$tmp/home-$l "${bin[$l]}" inspect --undefined "$f" >/dev/null 2>&1; done
    done
    sleep 3
    : >"$tmp/warm.txt"
    for f in "${files[@]}"; do
        local cmds=()
        for l in "${labels[@]}"; do cmds+=(-- CCLFORGE_HOME="$tmp/home-$l" "${bin[$l]}" inspect --undefined "$f"); done
        "$tmp/spawn_cpu" "$REPEATS" "${cmds[@]}" -- "$ldd" -r "$f" -- "$libtree" "$f" >>"$tmp/warm.txt"
    done
    local l_ms t_ms
    l_ms=$(awk -v b="$ldd" '$9 == b { print $2 }' "$tmp/warm.txt" | sum)
    t_ms=$(awk -v b="$libtree" '$9 == b { print $2 }' "$tmp/warm.txt" | sum)
    echo "| build | first run | / libtree | ldd -r / it | scan cache warm | / libtree | ldd -r / it | warm | / libtree | ldd -r / it |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for l in "${labels[@]}"; do
        local f_ms s_ms w_ms
        f_ms=$(printf '%s\n' ${first[$l]} | sum)
        s_ms=$(printf '%s\n' ${scan[$l]} | sum)
        w_ms=$(awk -v h="CCLFORGE_HOME=$tmp/home-$l" '$9 == h { print $2 }' "$tmp/warm.txt" | sum)
        echo "| $l | $f_ms | $(div "$f_ms" "$t_ms" 2) | $(div "$l_ms" "$f_ms" 2) | $s_ms | $(div "$s_ms" "$t_ms" 2) |" \
            "$(div "$l_ms" "$s_ms" 2) | $w_ms | $(div "$w_ms" "$t_ms" 2) | $(div "$l_ms" "$w_ms" 2) |"
    done
    echo "| ldd -r | $l_ms | | | | | | | | |"
    echo "| libtree | $t_ms | | | | | | | | |"
    echo
}

wheel_section() {
    local torch aw
    torch=$(ls -1 "${CCLFORGE_TORCH_CACHE:-$HOME/.cache/cclforge/torch}"/wheels-*/torch-*.whl 2>/dev/null | head -1)
    aw=$(bash scripts/wheel-cache.sh 2>/dev/null | sed -n 's/^auditwheel=//p')
    if [ ! -f "$torch" ] || [ ! -x "$aw" ] || [ ! -x /usr/bin/time ]; then
        echo "## wheel verify: skipped (needs scripts/torch-cache.sh, scripts/wheel-cache.sh and GNU time)"
        echo
        return
    fi
    echo "## wheel verify of $(basename "$torch") ($(du -m "$torch" | cut -f1) MB) against auditwheel show"
    echo
    local tools=("${labels[@]}" auditwheel)
    declare -A wall=() cpu=() rss=()
    one() { /usr/bin/time -f "%e %U %S %M" -o /dev/fd/3 "$@" 3>&1 >/dev/null 2>/dev/null | tail -1 | awk '{ print $1, $2 + $3, $4 }'; }
    for ((r = 0; r < WHEEL_RUNS; r++)); do
        for k in "${!tools[@]}"; do
            t=${tools[$(((k + r) % ${#tools[@]}))]}
            if [ "$t" = auditwheel ]; then read -r w c m < <(one "$aw" show "$torch")
            else read -r w c m < <(one "${bin[$t]}" wheel verify "$torch"); fi
            wall[$t]+="$w " cpu[$t]+="$c " rss[$t]+="$m "
        done
    done
    local aw_w
    aw_w=$(median "${wall[auditwheel]}")
    echo "| tool | wall s (median, min-max) | CPU s | peak RSS MB | auditwheel / it (wall) |"
    echo "|---|---|---|---|---|"
    for t in "${tools[@]}"; do
        local w
        w=$(median "${wall[$t]}")
        echo "| $t | $w ($(spread "${wall[$t]}")) | $(median "${cpu[$t]}") | $(awk -v k="$(median "${rss[$t]}")" 'BEGIN { printf "%.0f", k / 1024 }') | $(div "$aw_w" "$w" 2) |"
    done
    echo
}

doctor_section() {
    local site
    site=$(ls -d "${CCLFORGE_TORCH_CACHE:-$HOME/.cache/cclforge/torch}"/site-* 2>/dev/null | head -n 1)
    if [ -z "$site" ] || [ ! -d "$site/torch" ]; then
        echo "## doctor: skipped (needs scripts/torch-cache.sh)"
        echo
        return
    fi
    echo "## doctor, warm, with torch on PYTHONPATH ($site)"
    echo
    local cmds=()
    for l in "${labels[@]}"; do
        PYTHONPATH=$site CCLFORGE_HOME=$tmp/dhome-$l "${bin[$l]}" doctor >/dev/null 2>&1
        cmds+=(-- PYTHONPATH="$site" CCLFORGE_HOME="$tmp/dhome-$l" "${bin[$l]}" doctor)
    done
    sleep 3
    "$tmp/spawn_cpu" "$REPEATS" "${cmds[@]}" >"$tmp/doctor.txt"
    echo "| build | CPU ms (median, quartiles) | wall ms (median) |"
    echo "|---|---|---|"
    for l in "${labels[@]}"; do
        awk -v h="CCLFORGE_HOME=$tmp/dhome-$l" -v l="$l" '$10 == h {
            printf "| %s | %.1f (%.1f-%.1f) | %.1f |\n", l, $2 / 1000, $3 / 1000, $4 / 1000, $6 / 1000 }' "$tmp/doctor.txt"
    done
    echo
}

for s in $SECTIONS; do "${s}_section"; done
