#!/usr/bin/env bash
# Two cclforge builds side by side in one run, each as the source build and
# as the release binary: the incumbent (BASE, e.g. main's) against a change
# (NEW), in paired repeats whose order rotates:
#   1. `doctor` warm with the real torch wheel on PYTHONPATH (doctor_warm.sh's
#      setup): wall median and CPU (perf task-clock, children included).
#   2. `mpirun -n N cclforge doctor --gather --quick` on this host (Open MPI,
#      --oversubscribe): wall median, all processes' CPU (mpirun's included),
#      and rank 0's own CPU per joining rank: (rank 0's task-clock at -n N
#      minus at -n 2) / (N - 2), perf stat --no-inherit around rank 0 alone.
#   3. smoke --backend mpi all_reduce 1 KiB against a plain MPI_Allreduce loop
#      (smoke_raw_allreduce.c) under the same mpirun settings: raw time / smoke
#      time, best, lower quartile and median of REPEATS alternating runs, at 2
#      ranks and at 1 (a local copy: the harness's own cost per call, little
#      moved by load).
# Ratios: NEW / BASE for times (below 1: NEW is faster); raw / smoke for row 3
# (1.0: no overhead). Rows 2 and 3 also pair the runs repeat by repeat (each
# release against the source build of its commit; raw MPI against each): the
# median of the per-repeat ratios and in how many repeats one was faster
# (`paired` in bench/lib.sh). The machine may be shared: the load is printed
# before and after, and CPU time moves less with load than wall time. The
# header says each binary's ELF type (PIE or EXEC), the CPU vendor and the
# clock source.
#   BASE_SRC=/path/old/build/cclforge BASE_REL=/path/old/bin/cclforge \
#   NEW_SRC=build/cclforge NEW_REL=/path/new/bin/cclforge bash bench/side_by_side.sh
# Any binary left unset is left out. RUNS (default 11: doctor), GRUNS (3:
# gather), RANKS (256: gather; GATHER_RANKS, default "16 RANKS", the rank
# counts measured), REPEATS (5: smoke), ITERS (20000: smoke calls at 2 ranks;
# ten times that at 1), SMOKE_SPECS ("2:ITERS 1:ITERS*10": ranks:calls), ROWS
# ("1 2 3": the rows to run). Results: docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
RUNS=${RUNS:-11}
ROWS=${ROWS:-1 2 3}
row() { [[ " $ROWS " == *" $1 "* ]]; }
GRUNS=${GRUNS:-3}
RANKS=${RANKS:-256}
REPEATS=${REPEATS:-5}
ITERS=${ITERS:-20000}
declare -A bin=()
for k in BASE_SRC NEW_SRC BASE_REL NEW_REL; do
    v=${!k:-}
    [ -z "$v" ] && [ "$k" = NEW_SRC ] && v=$PWD/build/cclforge
    [ -n "$v" ] || continue
    [ -x "$v" ] || { echo "$k=$v is not an executable" >&2; exit 2; }
    bin[$k]=$(readlink -f "$v")
done
names=()
for k in BASE_SRC NEW_SRC BASE_REL NEW_REL; do [ -n "${bin[$k]:-}" ] && names+=("$k"); done
command -v perf >/dev/null || { echo "perf is needed (CPU time): apt-get install linux-perf" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A list holds one value per repeat, "n/a" for a repeat that failed, so that
# two binaries' lists stay aligned (paired); the statistics of bench/lib.sh
# read the numbers only.
# paired_lines KIND: the release against the source build of the same commit,
# repeat by repeat, for a measure kept in arrays named KIND
paired_lines() {
    local -n col=$1
    for c in NEW BASE; do
        [ -n "${col[${c}_REL]:-}" ] && [ -n "${col[${c}_SRC]:-}" ] || continue
        echo "  $c release / $c source: $(paired "${col[${c}_REL]}" "${col[${c}_SRC]}")"
    done
}
# pair KIND: "NEW/BASE" ratio lines for a measure kept in arrays named KIND
pairs() {
    local -n col=$1
    for t in SRC REL; do
        [ -n "${col[NEW_$t]:-}" ] && [ -n "${col[BASE_$t]:-}" ] || continue
        echo "  ${t/SRC/source}${t/REL/} NEW / BASE: $(div "$(median "${col[NEW_$t]}")" "$(median "${col[BASE_$t]}")") (medians)"
    done | sed 's/sourceREL/release/; s/SRC//'
}

bench_header "side by side: doctor warm with torch, doctor --gather under mpirun, smoke vs raw MPI"
elf_type() { case $(od -An -tu2 -j16 -N2 "$1" | tr -d ' ') in 2) echo "EXEC" ;; 3) echo "PIE" ;; *) echo "?" ;; esac; }
for k in "${names[@]}"; do echo "$k: ${bin[$k]} ($(stat -c %s "${bin[$k]}") bytes, $(elf_type "${bin[$k]}"))"; done
echo "cpu: $(grep -m1 vendor_id /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?')"

# ---- 1. doctor warm with torch ----
site=$(ls -d "${CCLFORGE_TORCH_CACHE:-$HOME/.cache/cclforge/torch}"/site-* 2>/dev/null | head -n 1)
if ! row 1; then
    :
elif [ -n "$site" ] && [ -d "$site/torch" ]; then
    echo
    echo "## 1. doctor, warm caches, torch $(PYTHONPATH=$site python3 -c 'import torch; print(torch.__version__)' 2>/dev/null) on PYTHONPATH ($site)"
    declare -A dwall=() dcpu=()
    for k in "${names[@]}"; do # each binary its own warm caches
        CCLFORGE_HOME=$tmp/home-$k PYTHONPATH=$site "${bin[$k]}" doctor >/dev/null 2>&1
    done
    sleep 3 # cache entries of files changed in the last two seconds are not stored
    for k in "${names[@]}"; do CCLFORGE_HOME=$tmp/home-$k PYTHONPATH=$site "${bin[$k]}" doctor >/dev/null 2>&1; done
    for ((r = 0; r < RUNS; r++)); do
        for i in "${!names[@]}"; do
            k=${names[$(((i + r) % ${#names[@]}))]}
            export CCLFORGE_HOME=$tmp/home-$k PYTHONPATH=$site
            s=$EPOCHREALTIME
            "${bin[$k]}" doctor >/dev/null 2>&1
            e=$EPOCHREALTIME
            dwall[$k]+="$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", (e - s) * 1000 }') "
            dcpu[$k]+="$(perf stat -x, -e task-clock "${bin[$k]}" doctor 2>&1 >/dev/null | awk -F, '/task-clock/ {printf "%.2f", $1}') "
        done
    done
    unset CCLFORGE_HOME PYTHONPATH
    printf '| %-9s | %-24s | %-14s | %-24s | %-14s |\n' binary "wall median (ms)" "wall spread" "CPU median (ms)" "CPU spread"
    echo "|---|---|---|---|---|"
    for k in "${names[@]}"; do
        printf '| %-9s | %-24s | %-14s | %-24s | %-14s |\n' "$k" "$(median "${dwall[$k]}")" "$(spread "${dwall[$k]}")" \
            "$(median "${dcpu[$k]}")" "$(spread "${dcpu[$k]}")"
    done
    echo "wall:"; pairs dwall
    echo "CPU:"; pairs dcpu
    echo "(load now: $(cut -d' ' -f1-3 /proc/loadavg))"
else
    echo "## 1. skipped: no cached torch (bash scripts/torch-cache.sh)"
fi

# ---- 2. mpirun -n N doctor --gather --quick ----
# At 16 and at RANKS (GATHER_RANKS chooses); a repeat whose gather did not
# hear every rank is not counted.
MPIRUN=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
# rank 0 under perf stat --no-inherit (its own task-clock into the file given
# first), every other rank as it is
RANK0_PERF='if [ "${OMPI_COMM_WORLD_RANK:-}" = 0 ]; then exec perf stat --no-inherit -x, -e task-clock -o "$0" "$@"; else exec "$@"; fi'
# gather K N: prints "WALL_MS ALL_CPU_MS RANK0_CPU_MS FAILED" from one run: time(1)
# around mpirun (all CPU: mpirun and every rank, perf's own few ms included;
# rank 0's: its own task-clock)
gather() {
    local s e
    s=$EPOCHREALTIME
    /usr/bin/time -f "%U %S" -o "$tmp/all" "${MPIRUN[@]}" -n "$2" bash -c "$RANK0_PERF" "$tmp/r0" \
        "${bin[$1]}" doctor --gather --quick --no-nvidia --json >"$tmp/g.json" 2>/dev/null
    e=$EPOCHREALTIME
    local ok
    ok=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(int(d["world"] == int(sys.argv[2]) and not d["missing"]))' "$tmp/g.json" "$2" 2>/dev/null || echo 0)
    echo "$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.0f", (e - s) * 1000 }') $(tail -n 1 "$tmp/all" | awk '{printf "%.0f", ($1 + $2) * 1000}')" \
        "$(awk -F, '/task-clock/ {printf "%.1f", $1}' "$tmp/r0") $((1 - ok))"
}
if row 2 && ! command -v mpirun >/dev/null; then
    echo "## 2. skipped: mpirun missing (apt-get install openmpi-bin)"
    ROWS=${ROWS//2/}
fi
for N in $(row 2 && echo "${GATHER_RANKS:-16 $RANKS}"); do
echo
echo "## 2. mpirun -n $N doctor --gather --quick ($(mpirun --version | head -n1); $GRUNS repeats; rank 0's own CPU per joining rank from -n 2 and -n $N)"
declare -A gwall=() gall=() g0=() g2=()
for ((r = 0; r < GRUNS; r++)); do
    for i in "${!names[@]}"; do
        k=${names[$(((i + r) % ${#names[@]}))]}
        read -r w a c0 bad < <(gather "$k" "$N")
        if [ "$bad" != 0 ]; then # not counted, but kept as n/a: the lists stay aligned by repeat
            gwall[$k]+="n/a " gall[$k]+="n/a " g0[$k]+="n/a " g2[$k]+="n/a "
            continue
        fi
        gwall[$k]+="$w "
        gall[$k]+="$a "
        g0[$k]+="$c0 "
        read -r _ _ c2 _ < <(gather "$k" 2)
        g2[$k]+="$c2 "
    done
done
printf '| %-9s | %-16s | %-14s | %-18s | %-16s | %-26s |\n' binary "wall median (ms)" "wall spread" "CPU, all (ms)" "rank 0 CPU (ms)" "rank 0 per joining rank (us)"
echo "|---|---|---|---|---|---|"
for k in "${names[@]}"; do
    if [ -z "$(nums "${gwall[$k]:-}")" ]; then
        printf '| %-9s | %s |\n' "$k" "n/a: no repeat heard all $N ranks"
        continue
    fi
    m0=$(median "${g0[$k]}")
    m2=$(median "${g2[$k]}")
    per=$(awk -v a="$m0" -v b="$m2" -v n="$N" 'BEGIN { printf "%.0f", (a - b) * 1000 / (n - 2) }')
    printf '| %-9s | %-16s | %-14s | %-18s | %-16s | %-26s |\n' "$k" "$(median "${gwall[$k]}")" "$(spread "${gwall[$k]}")" \
        "$(median "${gall[$k]}")" "$m0" "$per"
done
echo "wall:"; pairs gwall
echo "CPU, all processes:"; pairs gall
echo "rank 0 CPU:"; pairs g0
echo "wall, repeat by repeat:"; paired_lines gwall
echo "CPU, all processes, repeat by repeat:"; paired_lines gall
echo "(load now: $(cut -d' ' -f1-3 /proc/loadavg))"
unset gwall gall g0 g2
done

# ---- 3. smoke vs raw MPI_Allreduce, 1 KiB ----
# Two rank counts: 2 (a real exchange, ~1 us a call, which
# the load of a shared machine moves by far more than the harness costs) and
# 1 (MPI_Allreduce on one rank is a local copy, tens of ns: what is left is
# the harness's own cost per call, on one core, little disturbed by load).
if ! row 3; then
    :
elif command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
    echo
    mpicc -O2 -o "$tmp/raw" bench/smoke_raw_allreduce.c || exit 1
    export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo
    root=""
    [ "$(id -u)" = 0 ] && root="--allow-run-as-root"
    for spec in ${SMOKE_SPECS:-2:$ITERS 1:$((ITERS * 10))}; do
        n=${spec%%:*} iters=${spec#*:}
        echo "## 3. smoke --backend mpi all_reduce 1 KiB vs MPI_Allreduce ($(mpirun --version | head -n1), $n rank(s), $iters calls, $REPEATS alternating runs)"
        declare -A sm=()
        # every raw run; and one per repeat to pair with the repeat's smoke runs,
        # the one before them in even repeats, after in odd ones (one draw
        # each: the better of two would win more repeats by itself)
        raw_t="" raw_r=""
        raw() { mpirun $root --oversubscribe --bind-to none -n "$n" "$tmp/raw" 1024 "$iters" 200 || echo n/a; }
        for ((r = 0; r < REPEATS; r++)); do
            before=$(raw)
            for i in "${!names[@]}"; do
                k=${names[$(((i + r) % ${#names[@]}))]}
                sm[$k]+="$("${bin[$k]}" smoke --backend mpi -n "$n" --ops all_reduce -d float --place out -c 0 -b 1024 -e 1024 \
                    --iters "$iters" -w 200 --json 2>/dev/null |
                    python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"]; print("%.4f" % d["rows"][0]["time_us"])' 2>/dev/null || echo n/a) "
            done
            after=$(raw)
            raw_t+="$before $after "
            if ((r % 2)); then raw_r+="$after "; else raw_r+="$before "; fi
        done
        rb=$(best "$raw_t") rq=$(lower_quartile "$raw_t") rm=$(median "$raw_t")
        printf '| %-9s | %-10s | %-10s | %-12s | %-16s | %-16s | %-18s | %-24s |\n' binary "best (us)" "p25 (us)" "median (us)" \
            "raw/smoke, best" "raw/smoke, p25" "raw/smoke, median" "spread (us)"
        echo "|---|---|---|---|---|---|---|---|"
        printf '| %-9s | %-10s | %-10s | %-12s | %-16s | %-16s | %-18s | %-24s |\n' "raw MPI" "$rb" "$rq" "$rm" 1 1 1 "$(spread "$raw_t")"
        for k in "${names[@]}"; do
            b=$(best "${sm[$k]}") q=$(lower_quartile "${sm[$k]}") m=$(median "${sm[$k]}")
            printf '| %-9s | %-10s | %-10s | %-12s | %-16s | %-16s | %-18s | %-24s |\n' "$k" "$b" "$q" "$m" "$(div "$rb" "$b")" \
                "$(div "$rq" "$q")" "$(div "$rm" "$m")" "$(spread "${sm[$k]}")"
        done
        # at 2 ranks the runs fall into modes (on a VM: where the host ran the
        # two vCPUs then), and the best of a few runs says which mode it hit,
        # not which binary is faster: the lowest runs show the modes
        echo "lowest runs (us):"
        echo "  raw MPI: $(nums "$raw_t" | sort -g | head -n 8 | tr '\n' ' ')"
        for k in "${names[@]}"; do echo "  $k: $(nums "${sm[$k]}" | sort -g | head -n 8 | tr '\n' ' ')"; done
        echo "repeat by repeat:"
        paired_lines sm
        for k in "${names[@]}"; do echo "  raw / $k: $(paired "$raw_r" "${sm[$k]}")"; done
        unset sm
        echo "(load now: $(cut -d' ' -f1-3 /proc/loadavg))"
    done
else
    echo "## 3. skipped: mpicc/mpirun missing (apt-get install libopenmpi-dev openmpi-bin)"
fi
