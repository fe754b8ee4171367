#!/usr/bin/env bash
# cclforge smoke's MPI all_reduce against a plain MPI_Allreduce loop, same machine,
# same run, same mpirun settings, alternating, REPEATS runs each. Reports the best
# and the median time per call, and the throughput ratios raw_time / harness_time
# (goal >= 0.95). On a shared, loaded box the best-of is the steadier figure.
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
echo "| size (B) | iters | raw best (us) | smoke best (us) | ratio best | raw median (us) | smoke median (us) | ratio median |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for spec in $SPECS; do
    IFS=: read -r bytes iters warm <<<"$spec"
    : >"$TMP/r"; : >"$TMP/h"
    for _ in $(seq "$REPEATS"); do
        raw "$bytes" "$iters" "$warm" >>"$TMP/r"
        harness "$bytes" "$iters" "$warm" >>"$TMP/h"
    done
    rb=$(best <"$TMP/r"); hb=$(best <"$TMP/h"); rm=$(median <"$TMP/r"); hm=$(median <"$TMP/h")
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
    echo "| $bytes | $iters | $rb | $hb | $(ratio "$rb" "$hb") | $rm | $hm | $(ratio "$rm" "$hm") |"
done
