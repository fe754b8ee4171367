#!/usr/bin/env bash
# inspect over a corpus, one process per file, the tools side by side in one run:
# every 15th entry of `ls /usr/lib/x86_64-linux-gnu/*.so*` (names as users
# type them, symlinks included) plus the regular files of the CUDA library
# directory. For each of $RUNS repeats every file is run once by each tool, in
# an order that rotates per file (paired runs: a load spike hits all tools
# alike); the table shows the median over repeats of each tool's corpus total.
# Machine-load-independent columns: CPU time (perf task-clock over the whole
# corpus loop, the loop's own shell included for every tool alike) and
# instructions (valgrind callgrind on a sample of $SAMPLE files, child
# processes included: ldd is a shell script running ld.so), and CPU per process
# (perf stat task-clock of each command itself, $PP_RUNS runs per file, summed;
# median of $PP_REPEATS interleaved repeats): the measure without the loop's shell.
# Both builds in the same run: the source build ($CCLFORGE, default
# build/cclforge) and the release binary ($CCLFORGE_RELEASE, or the one pip
# installs here from $DIST_DIR's wheels: bench_release in bench/lib.sh).
# Paired CPU per process (first run, scan cache warm) for any set of builds,
# a change's before among them, is bench/builds.sh's.
#   bash bench/inspect_corpus.sh   (after scripts/build.sh and scripts/dist.sh). Results: docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
RUNS=${RUNS:-7}
SAMPLE=${SAMPLE:-12}
SYSLIB=${SYSLIB:-/usr/lib/x86_64-linux-gnu}
CUDA_LIB=${CUDA_LIB:-$(ls -d /usr/local/cuda*/lib 2>/dev/null | sort -V | tail -n 1)}
for tool in ldd libtree; do
    command -v "$tool" >/dev/null || { echo "missing $tool: bash scripts/deps.sh" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_release "$tmp" || exit 2
# A scan cache of the bench's own, warmed once (the state of any second run).
export CCLFORGE_HOME=$tmp/home
mapfile -t files < <(bench_corpus "$SYSLIB" "$CUDA_LIB")

bench_header "inspect over a corpus, one process per file"
echo "corpus: ${#files[@]} files (every 15th of $SYSLIB/*.so*, plus the regular files of $CUDA_LIB)"
echo "source build: $CCLFORGE (NEEDED: $(bench_needed "$CCLFORGE")); release: $CCLFORGE_RELEASE (NEEDED: $(bench_needed "$CCLFORGE_RELEASE"))"
echo

tools=(cclforge release nocache linkage ldd libtree)
declare -A label=([cclforge]="cclforge inspect --undefined (scan cache warm)"
    [release]="the same, release binary"
    [nocache]="cclforge inspect --undefined --no-cache"
    [linkage]="cclforge inspect --undefined --no-gpu --no-banner"
    [ldd]="ldd -r" [libtree]="libtree")
run_tool() {
    case $1 in
    cclforge) "$CCLFORGE" inspect --undefined "$2" ;;
    release) "$CCLFORGE_RELEASE" inspect --undefined "$2" ;;
    nocache) "$CCLFORGE" inspect --undefined --no-cache "$2" ;;
    linkage) "$CCLFORGE" inspect --undefined --no-gpu --no-banner "$2" ;;
    ldd) ldd -r "$2" ;;
    libtree) libtree "$2" ;;
    esac >/dev/null 2>&1
}
# warm: page cache for every tool alike, and the scan cache
for f in "${files[@]}"; do for t in "${tools[@]}"; do run_tool "$t" "$f"; done; done
sleep 3 # entries of files changed just now are not stored; nothing here changed, but be safe
for f in "${files[@]}"; do run_tool cclforge "$f"; run_tool release "$f"; done

declare -A totals
for ((r = 0; r < RUNS; r++)); do
    declare -A sum=()
    for t in "${tools[@]}"; do sum[$t]=0; done
    for i in "${!files[@]}"; do
        f=${files[$i]}
        for k in "${!tools[@]}"; do
            t=${tools[$(((k + i + r) % ${#tools[@]}))]}
            s=${EPOCHREALTIME/./}
            run_tool "$t" "$f"
            e=${EPOCHREALTIME/./}
            sum[$t]=$((sum[$t] + e - s))
        done
    done
    for t in "${tools[@]}"; do totals[$t]+="${sum[$t]} "; done
    unset sum
done
cpu_corpus() { # task-clock ms of the whole corpus loop for one tool
    command -v perf >/dev/null || return 0
    perf stat -x, -e task-clock bash -c 'for f in "${@:2}"; do '"$(declare -f run_tool)"'; CCLFORGE='"$CCLFORGE"' CCLFORGE_RELEASE='"$CCLFORGE_RELEASE"' run_tool "$1" "$f"; done' _ "$1" "${files[@]}" \
        2>&1 >/dev/null | awk -F, '/task-clock/ {printf "%.0f\n", $1}'
}
cpu_per_process() { # task-clock ms of each tool's own processes, $PP_RUNS per file, summed (no loop shell)
    command -v perf >/dev/null || return 0
    local f total=0 ms cmd
    for f in "${files[@]}"; do
        case $1 in
        cclforge) cmd=("$CCLFORGE" inspect --undefined "$f") ;;
        ldd) cmd=(ldd -r "$f") ;;
        libtree) cmd=(libtree "$f") ;;
        esac
        ms=$(perf stat -x, -r "${PP_RUNS:-3}" -e task-clock "${cmd[@]}" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}')
        total=$(awk -v a="$total" -v b="${ms:-0}" 'BEGIN { print a + b }')
    done
    printf '%.1f\n' "$total"
}
instr_sample() { # callgrind instructions over the first $SAMPLE files, children included
    command -v valgrind >/dev/null || return 0
    local total=0 f n
    for f in "${files[@]:0:$SAMPLE}"; do
        rm -f "$tmp"/cg.*
        case $1 in
        cclforge) valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$tmp/cg.%p" "$CCLFORGE" inspect --undefined "$f" ;;
        release) valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$tmp/cg.%p" "$CCLFORGE_RELEASE" inspect --undefined "$f" ;;
        ldd) valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$tmp/cg.%p" ldd -r "$f" ;;
        libtree) valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$tmp/cg.%p" libtree "$f" ;;
        esac >/dev/null 2>&1
        n=$(cat "$tmp"/cg.* 2>/dev/null | awk '/^summary:/ {s += $2} END {print s + 0}')
        total=$((total + n))
    done
    echo "$total"
}
echo "| tool | corpus wall, median of $RUNS paired repeats (ms) | CPU, task-clock of the corpus loop (ms) |"
echo "|---|---|---|"
declare -A med cpu pp ppm
for t in "${tools[@]}"; do
    med[$t]=$(us_to_ms "$(median "${totals[$t]}")" 0)
    cpu[$t]=$(cpu_corpus "$t")
    echo "| ${label[$t]} | ${med[$t]} | ${cpu[$t]:--} |"
done
echo
echo "ratios (wall): ldd -r / cclforge $(ratio "${med[ldd]}" "${med[cclforge]}")x; cclforge / libtree $(ratio "${med[cclforge]}" "${med[libtree]}")x;" \
    "release: ldd -r / release $(ratio "${med[ldd]}" "${med[release]}")x; release / libtree $(ratio "${med[release]}" "${med[libtree]}")x;" \
    "ldd -r / --no-cache $(ratio "${med[ldd]}" "${med[nocache]}")x; ldd -r / linkage $(ratio "${med[ldd]}" "${med[linkage]}")x"
[ -n "${cpu[ldd]}" ] && echo "ratios (CPU): ldd -r / cclforge $(ratio "${cpu[ldd]}" "${cpu[cclforge]}")x; cclforge / libtree $(ratio "${cpu[cclforge]}" "${cpu[libtree]}")x;" \
    "release: ldd -r / release $(ratio "${cpu[ldd]}" "${cpu[release]}")x; release / libtree $(ratio "${cpu[release]}" "${cpu[libtree]}")x"
if command -v perf >/dev/null; then
    # interleaved per repeat, so that a load change hits the three alike
    for t in cclforge ldd libtree; do pp[$t]=""; done
    for ((r = 0; r < ${PP_REPEATS:-3}; r++)); do
        for t in cclforge ldd libtree; do pp[$t]+="$(cpu_per_process "$t") "; done
    done
    for t in cclforge ldd libtree; do ppm[$t]=$(median "${pp[$t]}"); done
    echo "CPU per process (perf task-clock, ${PP_RUNS:-3} runs per file, summed over the corpus; median of ${PP_REPEATS:-3} repeats):" \
        "cclforge ${ppm[cclforge]} ms, ldd -r ${ppm[ldd]} ms, libtree ${ppm[libtree]} ms:" \
        "ldd -r / cclforge $(ratio "${ppm[ldd]}" "${ppm[cclforge]}")x; cclforge / libtree $(ratio "${ppm[cclforge]}" "${ppm[libtree]}")x"
fi
if command -v valgrind >/dev/null; then
    ic=$(instr_sample cclforge); ir=$(instr_sample release); il=$(instr_sample ldd); it=$(instr_sample libtree)
    echo "instructions over the first $SAMPLE files (callgrind, children included): cclforge $ic, release $ir, ldd -r $il, libtree $it:" \
        "ldd -r / cclforge $(ratio "$il" "$ic")x; cclforge / libtree $(ratio "$ic" "$it")x; ldd -r / release $(ratio "$il" "$ir")x; release / libtree $(ratio "$ir" "$it")x"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
