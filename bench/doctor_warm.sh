#!/usr/bin/env bash
# `cclforge doctor` on a warm machine with a Python torch installed. The torch
# is the real wheel from scripts/torch-cache.sh on PYTHONPATH, found through
# the python3 on PATH. Paired repeats: in each
# repeat every variant runs once, in an order that rotates per repeat; the
# table shows medians of wall time (fork to exit, bash's $EPOCHREALTIME
# around it) and the
# mean CPU time (perf task-clock, children included: the Python probe is a
# child process when it runs).
#   bash bench/doctor_warm.sh   (after scripts/build.sh). Results: docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
RUNS=${RUNS:-11}
site=$(ls -d "${CCLFORGE_TORCH_CACHE:-$HOME/.cache/cclforge/torch}"/site-* 2>/dev/null | head -n 1)
[ -n "$site" ] && [ -d "$site/torch" ] || { echo "no cached torch: bash scripts/torch-cache.sh" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CCLFORGE_HOME=$tmp/home PYTHONPATH=$site
bench_header "doctor with a Python torch installed, warm"
echo "torch: $site ($(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)); python3: $(command -v python3)"
variants=(warm nocache nopython)
declare -A label=([warm]="cclforge doctor (warm caches)" [nocache]="cclforge doctor --no-cache"
    [nopython]="cclforge doctor --no-python")
run_variant() {
    case $1 in
    warm) "$CCLFORGE" doctor ;;
    nocache) "$CCLFORGE" doctor --no-cache ;;
    nopython) "$CCLFORGE" doctor --no-python ;;
    esac >/dev/null 2>&1
}
"$CCLFORGE" doctor >"$tmp/first" 2>&1
grep -A1 "^libtorch" "$tmp/first" | tail -n 1 | sed 's/^ */doctor sees: /'
sleep 3 # entries of files changed in the last two seconds are not stored
for v in "${variants[@]}"; do run_variant "$v"; done
declare -A times
for ((r = 0; r < RUNS; r++)); do
    for k in "${!variants[@]}"; do
        v=${variants[$(((k + r) % ${#variants[@]}))]}
        s=${EPOCHREALTIME/./}
        run_variant "$v"
        e=${EPOCHREALTIME/./}
        times[$v]+="$((e - s)) "
    done
done
echo "| variant | wall, median of $RUNS paired repeats (ms) | CPU, mean of $RUNS (ms) |"
echo "|---|---|---|"
for v in "${variants[@]}"; do
    cpu=$(case $v in
        warm) cpu_ms "$RUNS" "$CCLFORGE" doctor ;;
        nocache) cpu_ms "$RUNS" "$CCLFORGE" doctor --no-cache ;;
        nopython) cpu_ms "$RUNS" "$CCLFORGE" doctor --no-python ;;
        esac)
    echo "| ${label[$v]} | $(us_to_ms "$(median "${times[$v]}")") | ${cpu:--} |"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
