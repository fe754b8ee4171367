#!/usr/bin/env bash
# Start-up alone, side by side in one run: `cclforge --version` of the source
# build and of the release binary (the wheel's, as a user installs it)
# against `libtree --version` and /bin/true (the cost of any process here).
# bench/spawn_cpu.c starts each command once per repeat, the order rotating,
# and reports the child's own CPU time (user + system from wait4) and wall
# time, median and quartiles; the ratios are of the medians. Also the
# load-independent counts of one run each: page faults (perf), system calls
# (strace -c), instructions (callgrind) and NEEDED libraries.
#   bash bench/startup.sh                        (after scripts/build.sh)
#   CCLFORGE_RELEASE=.../bin/cclforge bash bench/startup.sh
#     the release binary; by default the one pip installs here from dist/'s
#     wheels or DIST_DIR's (bash scripts/dist.sh --arch x86_64 --no-sdist --out DIR).
#   CCLFORGE_BEFORE=path: another build (e.g. main's) in the same repeats;
#   CCLFORGE_RELEASE_BEFORE=path: another release binary (e.g. main's) too.
# Results: docs/bench.md ("The release binary against the source build", "Cost of hardening").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
REPEATS=${REPEATS:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_release "$tmp" || exit 2
cc -O2 -std=c11 -D_GNU_SOURCE -o "$tmp/spawn_cpu" bench/spawn_cpu.c || exit 2
command -v libtree >/dev/null || { echo "missing libtree: bash scripts/deps.sh" >&2; exit 2; }

bench_header "start-up: --version"
echo "source:  $CCLFORGE (NEEDED: $(bench_needed "$CCLFORGE"))"
echo "release: $CCLFORGE_RELEASE (NEEDED: $(bench_needed "$CCLFORGE_RELEASE"))"
libtree=$(command -v libtree)
declare -A name=([source]="$CCLFORGE" [release]="$CCLFORGE_RELEASE" [libtree]="$libtree" [true]=/bin/true)
rows=(source release libtree true)
before=()
for b in before release_before; do
    var=CCLFORGE_${b^^}
    [ -n "${!var:-}" ] || continue
    name[$b]=$(cd "$(dirname "${!var}")" && pwd)/$(basename "${!var}")
    echo "$b: ${name[$b]} (NEEDED: $(bench_needed "${name[$b]}"))"
    rows=("$b" "${rows[@]}")
    before+=(-- "${name[$b]}" --version)
done
"$tmp/spawn_cpu" "$REPEATS" "${before[@]}" -- "$CCLFORGE" --version -- "$CCLFORGE_RELEASE" --version -- "$libtree" --version -- /bin/true \
    >"$tmp/spawn.txt" || exit 1
declare -A cpu
echo
echo "| command | CPU median (µs) | CPU quartiles | wall median (µs) | page faults | syscalls | instructions (callgrind) |"
echo "|---|---|---|---|---|---|---|"
for t in "${rows[@]}"; do
    line=$(awk -v b="${name[$t]}" '$9 == b' "$tmp/spawn.txt")
    cpu[$t]=$(awk '{print $2}' <<<"$line")
    q=$(awk '{print $3 "–" $4}' <<<"$line")
    w=$(awk '{print $6}' <<<"$line")
    arg=--version
    [ "$t" = true ] && arg=
    pf=$(perf stat -x, -r 20 -e page-faults ${name[$t]} $arg 2>&1 >/dev/null | awk -F, '/page-faults/ {print $1}')
    sc=$(strace -c -f ${name[$t]} $arg 2>&1 >/dev/null | awk '/total$/ {print $4}')
    ins=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null ${name[$t]} $arg 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    echo "| ${t} \`$arg\` | ${cpu[$t]} | $q | $w | ${pf:--} | ${sc:--} | ${ins:--} |"
done
echo
over() { awk -v a="$1" -v b="$2" -v t="${cpu[true]}" 'BEGIN { printf "%.2f (above /bin/true: %.0f / %.0f µs)", a / b, a - t, b - t }'; }
echo "ratios of CPU medians, cclforge / libtree: source $(over "${cpu[source]}" "${cpu[libtree]}"); release $(over "${cpu[release]}" "${cpu[libtree]}")"
[ -n "${cpu[before]:-}" ] && echo "before / libtree: $(over "${cpu[before]}" "${cpu[libtree]}"); source / before: $(awk -v a="${cpu[source]}" -v b="${cpu[before]}" 'BEGIN { printf "%.3f", a / b }')"
[ -n "${cpu[release_before]:-}" ] && echo "release before / libtree: $(over "${cpu[release_before]}" "${cpu[libtree]}"); release / release before: $(awk -v a="${cpu[release]}" -v b="${cpu[release_before]}" 'BEGIN { printf "%.3f", a / b }')"
echo "($REPEATS repeats; load after: $(cut -d' ' -f1-3 /proc/loadavg))"
