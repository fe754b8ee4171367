#!/usr/bin/env bash
# `cclforge wheel verify` (the static checks: zip structure and CRCs, RECORD
# digests, metadata, RPATH, NEEDED through the loader emulation, glibc and
# manylinux policy) against what users run today, in the same run, on
# torch's CUDA wheel (539 MB, 1.1 GB uncompressed, 13,187 members):
#   auditwheel show WHEEL     (the manylinux policy check; extracts the wheel)
#   python3 -m zipfile -t     (CRC of every member; nothing else)
# Paired runs in turn (cclforge, auditwheel, zipfile, then again), wall time
# and peak RSS (GNU time) of each, medians; the load average before and
# after goes with the numbers. Usage: bash bench/wheel_verify.sh (after
# scripts/build.sh, scripts/torch-cache.sh and scripts/wheel-cache.sh).
# Results: docs/wheel.md.
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

bench_header "cclforge wheel verify benchmark"
echo "wheel: $(basename "$TORCH") ($(du -m "$TORCH" | cut -f1) MB); cclforge $("$CCLFORGE" --version | head -1);" \
    "auditwheel $("$AW" --version 2>&1 | head -1 | awk '{print $2}'); $(python3 --version)"
echo

# one run: prints "seconds max_rss_kb"
# (the last line: GNU time writes "Command exited with non-zero status 1" first
# when it did, and cclforge does on torch, which needs libraries from other wheels)
one() { /usr/bin/time -f "%e %M" -o /dev/fd/3 "$@" 3>&1 >/dev/null 2>/dev/null | tail -1; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

tools=(cclforge auditwheel zipfile)
declare -A t m
for tool in "${tools[@]}"; do t[$tool]=""; m[$tool]=""; done
run_tool() {
    case $1 in
    cclforge) one "$CCLFORGE" wheel verify "$TORCH" ;;
    auditwheel) one "$AW" show "$TORCH" ;;
    zipfile) one python3 -m zipfile -t "$TORCH" ;;
    esac
}
cat "$TORCH" >/dev/null # the wheel in the page cache for every tool alike
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 0; i < RUNS; i++)); do
    for tool in "${tools[@]}"; do
        read -r s kb < <(run_tool "$tool")
        t[$tool]+="$s "
        m[$tool]+="$kb "
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo "Median of $RUNS paired runs; load average $load_before before, $load_after after."
echo
echo "| tool | what it checks | wall s | max RSS MB | wall vs cclforge | RSS vs cclforge |"
echo "|---|---|---|---|---|---|"
cs=$(printf '%s\n' ${t[cclforge]} | median)
cm=$(printf '%s\n' ${m[cclforge]} | median)
for tool in "${tools[@]}"; do
    s=$(printf '%s\n' ${t[$tool]} | median)
    kb=$(printf '%s\n' ${m[$tool]} | median)
    case $tool in
    cclforge) what="zip structure + CRCs, RECORD digests, metadata, RPATH, NEEDED (loader emulation), glibc + policy" ;;
    auditwheel) what="external libraries + symbol versions vs the manylinux policies" ;;
    zipfile) what="CRC of every member" ;;
    esac
    echo "| $tool | $what | $s | $(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}') | $(ratio "$s" "$cs")x | $(ratio "$kb" "$cm")x |"
done
