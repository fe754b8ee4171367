# Shared helpers for the bench/*.sh scripts: timing, the statistics (median,
# quartiles, spread, paired ratios) and finding the binaries to compare.
# Timings are wall time of the whole command as a user sees it (process start
# included), output discarded.

# median_ms N CMD...: runs CMD N times, prints the median wall time in ms.
median_ms() {
    local n=$1 i s e
    shift
    local times=()
    for ((i = 0; i < n; i++)); do
        s=$(date +%s%N)
        "$@" >/dev/null 2>&1
        e=$(date +%s%N)
        times+=($(((e - s) / 1000)))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1}
        END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.1f\n", m / 1000}'
}

# The statistics every script reports. Each takes its values as one
# space-separated LIST argument or, with no argument, one a line on stdin;
# words that are not numbers ("n/a" for a repeat that failed, kept so that two
# tools' lists stay aligned repeat by repeat) are skipped. An empty list
# prints "n/a".
nums() { if [ $# -gt 0 ]; then tr ' ' '\n' <<<"$1"; else cat; fi | grep -E '^-?[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$'; }
# shortest decimal form, 4 decimals at most (awk's %g turns 1234567 into 1.23e+06)
_stat_prog='function fmt(x,  s) { s = sprintf("%.4f", x); sub(/[.]?0+$/, "", s); return s }
    {a[NR] = $1} END {if (!NR) {print "n/a"; exit} m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; q = int((NR + 3) / 4)'
# median [LIST]
median() { nums "$@" | sort -g | awk "$_stat_prog; print fmt(m)}"; }
# quartiles [LIST]: "LOWER-UPPER" (the middle half of the values)
quartiles() { nums "$@" | sort -g | awk "$_stat_prog; print fmt(a[q]) \"-\" fmt(a[NR + 1 - q])}"; }
# lower_quartile [LIST]: steadier than the best of many runs (one lucky run)
# and than the median (the repeats a neighbour's job hit)
lower_quartile() { nums "$@" | sort -g | awk "$_stat_prog; print fmt(a[q])}"; }
# spread [LIST]: "MIN-MAX"
spread() { nums "$@" | sort -g | awk "$_stat_prog; print fmt(a[1]) \"-\" fmt(a[NR])}"; }
# best [LIST]: the smallest value
best() { nums "$@" | sort -g | awk "$_stat_prog; print fmt(a[1])}"; }
# us_to_ms X [DECIMALS]: microseconds as milliseconds (1 decimal by default)
us_to_ms() { awk -v x="$1" -v d="${2:-1}" 'BEGIN { if (x == "n/a" || x == "") print "n/a"; else printf "%.*f\n", d, x / 1000 }'; }

# ratio A B: A/B with one decimal ("n/a" when B is 0 or either is not a number).
ratio() { div "$1" "$2" 1; }
# div A B [DECIMALS]: A/B with 3 decimals by default ("n/a" as ratio).
div() { awk -v a="$1" -v b="$2" -v d="${3:-3}" 'BEGIN { if (a ~ /^-?[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.*f\n", d, a / b; else print "n/a" }'; }
# paired A B: two LISTs measured in the same repeats (minutes apart at most,
# under the same load): the median of the per-repeat ratios A/B and in how
# many repeats A was lower. With no difference between the two, A is lower
# in about half of them, which tells a real gap from the luck of a best-of.
paired() {
    paste -d' ' <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) |
        awk '$1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ && $2 > 0 { printf "%.6f %d\n", $1 / $2, $1 < $2 }' | sort -g |
        awk '{r[NR] = $1; w += $2} END {if (!NR) {print "n/a"; exit}
             printf "median of the per-repeat ratios %.3f, lower in %d of %d repeats\n", (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2, w, NR}'
}

# max_rss_kb CMD...: peak resident set of CMD in KB (GNU time).
max_rss_kb() { /usr/bin/time -f %M -o /dev/fd/3 "$@" 3>&1 >/dev/null 2>/dev/null; }

# bench_header TITLE: date, machine and load, for the record.
bench_header() {
    echo "# $1"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load $(cut -d' ' -f1-3 /proc/loadavg)"
}

# cpu_ms N CMD...: mean CPU time (task-clock, ms, children included) over N runs,
# from perf stat; empty when perf is unavailable. On a shared machine CPU time
# is steadier than wall time.
cpu_ms() {
    local n=$1
    shift
    command -v perf >/dev/null || return 0
    perf stat -x, -r "$n" -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {printf "%.1f\n", $1}'
}

# elapsed_ms N CMD...: mean wall time (ms) from perf stat, which times the child
# from fork to exit; median_ms also counts the `date` processes around the
# command (~2 ms on this VM: `median_ms 21 true`), which hides the difference
# between two fast tools. Empty when perf is unavailable.
elapsed_ms() {
    local n=$1
    shift
    command -v perf >/dev/null || return 0
    perf stat -r "$n" -e task-clock "$@" 2>&1 >/dev/null | awk '/seconds time elapsed/ {printf "%.1f\n", $1 * 1000}'
}

# bench_cclforge: sets BUILD_DIR (default build) and CCLFORGE (default
# $BUILD_DIR/cclforge, absolute), or exits 2 naming the fix.
bench_cclforge() {
    BUILD_DIR=${BUILD_DIR:-build}
    CCLFORGE=${CCLFORGE:-$PWD/$BUILD_DIR/cclforge}
    [ -x "$CCLFORGE" ] || { echo "build first: bash scripts/build.sh (no $CCLFORGE)" >&2; exit 2; }
}

# bench_link SOURCE OUTPUT: a bench program of bench/ against the built
# libcclforge.a and the libraries it needs.
bench_link() {
    [ -f "$BUILD_DIR/libcclforge.a" ] || { echo "build first: bash scripts/build.sh (no $BUILD_DIR/libcclforge.a)" >&2; exit 2; }
    cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude "$1" "$BUILD_DIR/libcclforge.a" \
        $(pkg-config --libs libcjson libzip libcrypto zlib libzstd) $(pkg-config --libs libisal 2>/dev/null) -ldl -lm -lpthread -o "$2"
}

# bench_release TMPDIR: sets CCLFORGE_RELEASE (absolute) to the release binary:
# as given, or the one pip installs on this host from $DIST_DIR (default
# dist/), installed into a venv under TMPDIR: the binary a user installs
# (the manylinux2014 wheel's; CCLFORGE_RELEASE=path measures another). Says the fix and returns 1 when
# there is none.
bench_release() {
    if [ -n "${CCLFORGE_RELEASE:-}" ]; then
        [ -x "$CCLFORGE_RELEASE" ] || { echo "CCLFORGE_RELEASE=$CCLFORGE_RELEASE is not an executable" >&2; return 1; }
        CCLFORGE_RELEASE=$(cd "$(dirname "$CCLFORGE_RELEASE")" && pwd)/$(basename "$CCLFORGE_RELEASE")
        return 0
    fi
    local dist=${DIST_DIR:-dist}
    ls "$dist"/cclforge-*_"$(uname -m)".whl >/dev/null 2>&1 || {
        echo "no release wheel: bash scripts/dist.sh --arch $(uname -m) --no-sdist --out DIR, then DIST_DIR=DIR (or CCLFORGE_RELEASE=path)" >&2
        return 1
    }
    python3 -m venv "$1/release" && "$1/release/bin/pip" install -q --no-index --find-links "$dist" cclforge || {
        echo "pip cannot install cclforge from $dist's wheels here" >&2
        return 1
    }
    CCLFORGE_RELEASE=$1/release/bin/cclforge
}

# bench_corpus SYSLIB CUDA_LIB: the inspect corpus, a path a line: every
# 15th of SYSLIB/*.so* (names as users type them, symlinks included), then
# the regular files of CUDA_LIB (none when it is empty or absent).
bench_corpus() {
    ls -d "$1"/*.so* | sort | awk 'NR % 15 == 1'
    [ -z "$2" ] || for f in "$2"/*.so*; do [ -f "$f" ] && [ ! -L "$f" ] && echo "$f"; done
}

# bench_needed BINARY: its NEEDED libraries, space-separated.
bench_needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' | sed 's/ $//'; }
