#!/usr/bin/env bash
# cclforge smoke's MPI all_reduce against a plain MPI_Allreduce loop, same machine,
# same run, same mpirun settings, REPEATS repeats in a rotating order. Reports the best
# and the median time per call, and the throughput ratios raw_time / harness_time
# (goal >= 0.97), and the median of the per-repeat ratios (the runs of one repeat,
# minutes apart at most). On a shared, loaded box the best-of and the
# paired median are the steadier figures. A third program runs in every repeat
# too: the same loop built with -DRAW_DLOPEN, reaching libmpi through dlopen and
# dlsym as smoke must (it chooses the MPI ABI at run time); its paired ratios
# split the gap into what any such program pays (raw / dlopen) and what smoke's
# own harness adds (dlopen / smoke).
# A timed loop of 2,000 1 KiB calls lasts 2 ms, where one preemption on a 2-core
# box moves the result by several per cent: the defaults time 20 ms or more.
# Usage: bench/smoke_mpi_allreduce.sh [BUILD_DIR]   (env: RANKS=2 REPEATS=5
#        SPECS="1024:20000:200 65536:2000:50 16777216:20:3", each BYTES:ITERS:WARMUP)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${1:-build}
CCLFORGE=$BUILD/cclforge
RANKS=${RANKS:-2}
REPEATS=${REPEATS:-5}
SPECS=${SPECS:-"1024:20000:200 65536:2000:50 16777216:20:3"}
[ -x "$CCLFORGE" ] || { echo "build cclforge first ($CCLFORGE missing)"; exit 1; }
command -v mpicc >/dev/null || { echo "mpicc is missing (apt-get install libopenmpi-dev): the raw program needs it"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-bench-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mpicc -O2 -o "$TMP/raw" bench/smoke_raw_allreduce.c
mpicc -O2 -DRAW_DLOPEN -o "$TMP/dl" bench/smoke_raw_allreduce.c -ldl

# the loopback-only settings cclforge itself gives mpirun
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo
root=""; [ "$(id -u)" = 0 ] && root="--allow-run-as-root"

raw() { mpirun $root --oversubscribe --bind-to none -n "$RANKS" "$TMP/raw" "$1" "$2" "$3"; }
dl() { mpirun $root --oversubscribe --bind-to none -n "$RANKS" "$TMP/dl" "$1" "$2" "$3"; }
harness() {
    "$CCLFORGE" smoke --backend mpi -n "$RANKS" --ops all_reduce -d float --place out -c 0 \
        -b "$1" -e "$1" --iters "$2" -w "$3" --json |
        python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"]; print("%.3f" % d["rows"][0]["time_us"])'
}

echo "# cclforge smoke (mpi) vs plain MPI_Allreduce: $RANKS ranks, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$(mpirun --version | head -n1), $REPEATS repeats, order rotating"
echo "| size (B) | iters | raw best (us) | smoke best (us) | ratio best | raw median (us) | smoke median (us) | ratio median | pairs: median ratio (quartiles) | dlopen median (us) | pairs: raw / dlopen | pairs: dlopen / smoke |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
# pairs FILE: median (quartiles) of a file of per-repeat ratios
pairs() { echo "$(median <"$1") ($(quartiles <"$1"))"; }
for spec in $SPECS; do
    IFS=: read -r bytes iters warm <<<"$spec"
    : >"$TMP/r"; : >"$TMP/h"; : >"$TMP/d"; : >"$TMP/p"; : >"$TMP/pd"; : >"$TMP/dh"
    for i in $(seq "$REPEATS"); do
        # Each repeat moves the start of every process's stack by a random amount
        # (an environment variable of 0-4095 bytes, the same for the repeat's three
        # programs): the environment's size alone moves the raw loop by about 2 %
        # (4K aliasing, alignment), a bias a fixed layout would give one program
        # and not another; randomised, it averages out over the repeats.
        export CCLFORGE_BENCH_PAD
        CCLFORGE_BENCH_PAD=$(head -c $((RANDOM % 4096)) /dev/zero | tr '\0' x)
        # the three programs in an order that rotates each repeat
        case $((i % 3)) in
        1) r=$(raw "$bytes" "$iters" "$warm"); d=$(dl "$bytes" "$iters" "$warm"); h=$(harness "$bytes" "$iters" "$warm") ;;
        2) h=$(harness "$bytes" "$iters" "$warm"); r=$(raw "$bytes" "$iters" "$warm"); d=$(dl "$bytes" "$iters" "$warm") ;;
        *) d=$(dl "$bytes" "$iters" "$warm"); h=$(harness "$bytes" "$iters" "$warm"); r=$(raw "$bytes" "$iters" "$warm") ;;
        esac
        echo "$r" >>"$TMP/r"; echo "$h" >>"$TMP/h"; echo "$d" >>"$TMP/d"
        awk -v a="$r" -v b="$h" 'BEGIN { printf "%.4f\n", a / b }' >>"$TMP/p"
        awk -v a="$r" -v b="$d" 'BEGIN { printf "%.4f\n", a / b }' >>"$TMP/pd"
        awk -v a="$d" -v b="$h" 'BEGIN { printf "%.4f\n", a / b }' >>"$TMP/dh"
    done
    rb=$(best <"$TMP/r"); hb=$(best <"$TMP/h"); rm=$(median <"$TMP/r"); hm=$(median <"$TMP/h"); dm=$(median <"$TMP/d")
    echo "| $bytes | $iters | $rb | $hb | $(div "$rb" "$hb") | $rm | $hm | $(div "$rm" "$hm") | $(pairs "$TMP/p") | $dm | $(pairs "$TMP/pd") | $(pairs "$TMP/dh") |"
done
