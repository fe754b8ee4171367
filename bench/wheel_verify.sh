#!/usr/bin/env bash
# `cclforge wheel verify` (the static checks: zip structure and CRCs, RECORD
# digests, metadata, RPATH, NEEDED through the loader emulation, glibc and
# manylinux policy) against what users run today, in the same run, on
# torch's CUDA wheel (torch 2.15.0 cp311: 539 MB, 1.1 GB uncompressed, 13,187
# members):
#   auditwheel show WHEEL     (the manylinux policy check; extracts the wheel)
#   python3 -m zipfile -t     (CRC of every member; nothing else)
# Both builds of cclforge in the same run: the release binary (the one users
# install: $CCLFORGE_RELEASE, or the one pip installs here from $DIST_DIR's wheels, bench_release
# in bench/lib.sh) and the source build ($CCLFORGE, default build/cclforge),
# each with its default workers (one per online CPU) and the source build with
# one (CCLFORGE_WHEEL_JOBS=1: what the workers buy), each of those three also
# with CCLFORGE_INFLATE=zlib (what ISA-L's igzip, the default engine where it
# runs, buys over zlib); CCLFORGE_BEFORE (another build, e.g. main's) joins
# when set. Paired runs in turn, the order rotated
# each repeat (a load spike hits every tool alike); wall time, CPU time
# (user + system) and peak RSS from GNU time; medians, and the spread (min-max
# of wall) beside them; the load average before and after goes with the
# numbers. Usage: bash bench/wheel_verify.sh (after scripts/build.sh,
# scripts/dist.sh, scripts/torch-cache.sh and scripts/wheel-cache.sh).
# Results: docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
RUNS=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "missing GNU time: bash scripts/deps.sh" >&2; exit 2; }
TORCH=${TORCH:-$(ls -1 "${CCLFORGE_TORCH_CACHE:-$HOME/.cache/cclforge/torch}"/wheels-*/torch-*.whl 2>/dev/null | head -1)}
[ -f "$TORCH" ] || { echo "no torch wheel: bash scripts/torch-cache.sh (or TORCH=path)" >&2; exit 2; }
AW=$(bash scripts/wheel-cache.sh 2>/dev/null | sed -n 's/^auditwheel=//p')
[ -x "$AW" ] || { echo "no auditwheel: bash scripts/wheel-cache.sh" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_release "$tmp" || exit 2

bench_header "cclforge wheel verify benchmark"
echo "wheel: $(basename "$TORCH") ($(du -m "$TORCH" | cut -f1) MB); cclforge $("$CCLFORGE" --version | head -1);" \
    "auditwheel $("$AW" --version 2>&1 | head -1 | awk '{print $2}'); $(python3 --version)"
echo "source build: $CCLFORGE (NEEDED: $(bench_needed "$CCLFORGE")); release: $CCLFORGE_RELEASE (NEEDED: $(bench_needed "$CCLFORGE_RELEASE"))"
engine() { "$1" wheel verify --json "$TORCH" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin).get("inflate"))'; }
echo "inflate engine by default (auto): release $(engine "$CCLFORGE_RELEASE"), source build $(engine "$CCLFORGE")"
echo

# one run: prints "wall_s cpu_s max_rss_kb"
# (the last line: GNU time writes "Command exited with non-zero status 1" first
# when it did, and cclforge does on torch, which needs libraries from other wheels)
one() { /usr/bin/time -f "%e %U %S %M" -o /dev/fd/3 "$@" 3>&1 >/dev/null 2>/dev/null | tail -1 | awk '{print $1, $2 + $3, $4}'; }

tools=(release release_zlib source source_zlib source1 source1_zlib)
[ -n "${CCLFORGE_BEFORE:-}" ] && tools+=(before)
tools+=(auditwheel zipfile)
declare -A label=([release]="cclforge wheel verify, release binary" [source]="cclforge wheel verify, source build"
    [source1]="the same, CCLFORGE_WHEEL_JOBS=1" [before]="cclforge wheel verify, CCLFORGE_BEFORE"
    [release_zlib]="the release, CCLFORGE_INFLATE=zlib" [source_zlib]="the source build, CCLFORGE_INFLATE=zlib"
    [source1_zlib]="the same, one worker, CCLFORGE_INFLATE=zlib"
    [auditwheel]="auditwheel show" [zipfile]="python3 -m zipfile -t")
declare -A what=([release]="zip structure + CRCs, RECORD digests, metadata, RPATH, NEEDED (loader emulation), glibc + policy"
    [source]="the same" [source1]="the same" [before]="the same"
    [release_zlib]="the same" [source_zlib]="the same" [source1_zlib]="the same"
    [auditwheel]="external libraries + symbol versions vs the manylinux policies" [zipfile]="CRC of every member")
declare -A t c m
for tool in "${tools[@]}"; do t[$tool]=""; c[$tool]=""; m[$tool]=""; done
run_tool() {
    case $1 in
    release) one "$CCLFORGE_RELEASE" wheel verify "$TORCH" ;;
    source) one "$CCLFORGE" wheel verify "$TORCH" ;;
    source1) CCLFORGE_WHEEL_JOBS=1 one "$CCLFORGE" wheel verify "$TORCH" ;;
    release_zlib) CCLFORGE_INFLATE=zlib one "$CCLFORGE_RELEASE" wheel verify "$TORCH" ;;
    source_zlib) CCLFORGE_INFLATE=zlib one "$CCLFORGE" wheel verify "$TORCH" ;;
    source1_zlib) CCLFORGE_INFLATE=zlib CCLFORGE_WHEEL_JOBS=1 one "$CCLFORGE" wheel verify "$TORCH" ;;
    before) one "$CCLFORGE_BEFORE" wheel verify "$TORCH" ;;
    auditwheel) one "$AW" show "$TORCH" ;;
    zipfile) one python3 -m zipfile -t "$TORCH" ;;
    esac
}
cat "$TORCH" >/dev/null # the wheel in the page cache for every tool alike
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
n=${#tools[@]}
for ((i = 0; i < RUNS; i++)); do
    for ((k = 0; k < n; k++)); do
        tool=${tools[$(((k + i) % n))]}
        read -r s cpu kb < <(run_tool "$tool")
        t[$tool]+="$s "
        c[$tool]+="$cpu "
        m[$tool]+="$kb "
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo "Median of $RUNS paired runs (order rotated each repeat); load average $load_before before, $load_after after."
echo "workers: one per online CPU ($(nproc)) unless CCLFORGE_WHEEL_JOBS says otherwise."
echo
echo "| tool | what it checks | wall s (min-max) | CPU s | max RSS MB | auditwheel's wall / this | auditwheel's CPU / this |"
echo "|---|---|---|---|---|---|---|"
aws=$(printf '%s\n' ${t[auditwheel]} | median)
awc=$(printf '%s\n' ${c[auditwheel]} | median)
for tool in "${tools[@]}"; do
    s=$(printf '%s\n' ${t[$tool]} | median)
    cpu=$(printf '%s\n' ${c[$tool]} | median)
    kb=$(printf '%s\n' ${m[$tool]} | median)
    echo "| ${label[$tool]} | ${what[$tool]} | $s ($(printf '%s\n' ${t[$tool]} | spread)) | $cpu |" \
        "$(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}') | $(ratio "$aws" "$s")x | $(ratio "$awc" "$cpu")x |"
done
echo
for tool in release source; do
    s=$(printf '%s\n' ${t[$tool]} | median)
    echo "${label[$tool]}: $(ratio "$aws" "$s")x faster than auditwheel show (wall), $(ratio "$awc" "$(printf '%s\n' ${c[$tool]} | median)")x less CPU"
done
s1=$(printf '%s\n' ${t[source1]} | median)
echo "workers: $(ratio "$s1" "$(printf '%s\n' ${t[source]} | median)")x faster than one (source build, wall)"
for pair in release:release_zlib source:source_zlib source1:source1_zlib; do
    a=${pair%%:*} z=${pair#*:}
    echo "default engine against zlib, ${label[$a]}: $(ratio "$(printf '%s\n' ${c[$z]} | median)" "$(printf '%s\n' ${c[$a]} | median)")x less CPU," \
        "$(ratio "$(printf '%s\n' ${t[$z]} | median)" "$(printf '%s\n' ${t[$a]} | median)")x less wall"
done
