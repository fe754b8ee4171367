#!/usr/bin/env bash
# cclforge smoke's MPI all_reduce against a plain MPI_Allreduce loop, same machine,
# same run, same mpirun settings, alternating, REPEATS runs each. Reports the best
# and the median time per call, and the throughput ratios raw_time / harness_time
# (goal >= 0.97), and the median of the pairs' ratios (two neighbouring runs,
# order swapped every other pair). On a shared, loaded box the best-of and the
# paired median are the steadier figures.
# Usage: bench/smoke_mpi_allreduce.sh [BUILD_DIR]   (env: RANKS=2 REPEATS=5
#        SPECS="1024:2000:200 65536:500:50 16777216:20:3", each BYTES:ITERS:WARMUP)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
CCLFORGE=$BUILD/cclforge
RANKS=${RANKS:-2}
REPEATS=${REPEATS:-5}
SPECS=${SPECS:-"1024:2000:200 65536:500:50 16777216:20:3"}
[ -x "$CCLFORGE" ] || { echo "build cclforge first ($CCLFORGE missing)"; exit 1; }
command -v mpicc >/dev/null || { echo "mpicc is missing (apt-get install libopenmpi-dev): the raw program needs it"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-bench-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mpicc -O2 -o "$TMP/raw" bench/smoke_raw_allreduce.c

# the loopback-only settings cclforge itself gives mpirun
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo
root=""; [ "$(id -u)" = 0 ] && root="--allow-run-as-root"

raw() { mpirun $root --oversubscribe --bind-to none -n "$RANKS" "$TMP/raw" "$1" "$2" "$3"; }
harness() {
    "$CCLFORGE" smoke --backend mpi -n "$RANKS" --ops all_reduce -d float --place out -c 0 \
        -b "$1" -e "$1" --iters "$2" -w "$3" --json |
        python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"]; print("%.3f" % d["rows"][0]["time_us"])'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
best() { sort -g | head -n 1; }

echo "# cclforge smoke (mpi) vs plain MPI_Allreduce: $RANKS ranks, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$(mpirun --version | head -n1), $REPEATS alternating runs each"
echo "| size (B) | iters | raw best (us) | smoke best (us) | ratio best | raw median (us) | smoke median (us) | ratio median | pairs: median ratio (quartiles) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for spec in $SPECS; do
    IFS=: read -r bytes iters warm <<<"$spec"
    : >"$TMP/r"; : >"$TMP/h"; : >"$TMP/p"
    for i in $(seq "$REPEATS"); do
        # a pair is two neighbouring runs, their order swapped every other pair
        if ((i % 2)); then
            r=$(raw "$bytes" "$iters" "$warm"); h=$(harness "$bytes" "$iters" "$warm")
        else
            h=$(harness "$bytes" "$iters" "$warm"); r=$(raw "$bytes" "$iters" "$warm")
        fi
        echo "$r" >>"$TMP/r"; echo "$h" >>"$TMP/h"
        awk -v a="$r" -v b="$h" 'BEGIN { printf "%.4f\n", a / b }' >>"$TMP/p"
    done
    rb=$(best <"$TMP/r"); hb=$(best <"$TMP/h"); rm=$(median <"$TMP/r"); hm=$(median <"$TMP/h")
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
    pq=$(sort -g "$TMP/p" | awk '{a[NR]=$1} END {q=int((NR+3)/4); printf "%.3f (%.3f-%.3f)", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2, a[q], a[NR+1-q]}')
    echo "| $bytes | $iters | $rb | $hb | $(ratio "$rb" "$hb") | $rm | $hm | $(ratio "$rm" "$hm") | $pq |"
done
