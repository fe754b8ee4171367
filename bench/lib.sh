# Shared helpers for the bench/*.sh scripts: wall-clock medians and ratios.
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

# ratio A B: A/B with one decimal ("n/a" when B is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f\n", a / b; else print "n/a" }'; }

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
        $(pkg-config --libs libcjson libzip libcrypto zlib libzstd) -ldl -lm -lpthread -o "$2"
}

# bench_release TMPDIR: sets CCLFORGE_RELEASE (absolute) to the release binary:
# as given, or the one pip installs on this host from $DIST_DIR (default
# dist/), installed into a venv under TMPDIR: the binary a user installs
# (the manylinux_2_34 wheel's on glibc 2.34+, the manylinux2014 one before;
# CCLFORGE_RELEASE=path measures another). Says the fix and returns 1 when
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

# bench_needed BINARY: its NEEDED libraries, space-separated.
bench_needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' | sed 's/ $//'; }
