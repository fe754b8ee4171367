#!/usr/bin/env bash
# The test suite's time (docs/bench.md, "The test suite's time"): README's test
# command from a fresh clone on a fresh machine and again with the caches
# warm, then CI's three parts, and the ten slowest tests of each suite.
#
#   bash bench/suite_time.sh [--rev REV] [--work DIR] [--keep-home]
#                            [--only cold|warm|ci]...
#
# REV (default HEAD) is cloned from this repository into DIR (default a new
# temp directory) for every measure, so each build starts from nothing:
#   cold  `bash scripts/test.sh` with HOME a new empty directory: every
#         download, venv, release build and Debian root made once (the
#         machine's own packages and interpreters are kept: PYENV_ROOT,
#         CARGO_HOME and RUSTUP_HOME point at the real ones)
#   warm  the same command from another fresh clone, with that HOME's caches
#   ci    `CI=true bash .ci/run` from a third clone, that HOME again: plain,
#         fuzz and asan, each part's wall time as scripts/test.sh prints it
# Run it on a quiet machine: every figure is wall time. Prints one summary
# line per measure and the ten slowest tests of every ctest run; the logs stay
# in DIR. --keep-home keeps the new HOME (its caches take several GB).
# Before and after: run it once with --rev of the commit before and once at
# HEAD, on the same machine.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rev=HEAD work= keep_home=0 only=()
while [ $# -gt 0 ]; do
    case $1 in
    --rev) rev=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --keep-home) keep_home=1; shift ;;
    --only) only+=("$2"); shift 2 ;;
    *) echo "usage: bash bench/suite_time.sh [--rev REV] [--work DIR] [--keep-home] [--only cold|warm|ci]..." >&2; exit 2 ;;
    esac
done
[ ${#only[@]} -gt 0 ] || only=(cold warm ci)
work=${work:-$(mktemp -d "${TMPDIR:-/tmp}/cclforge-suite-XXXXXX")}
mkdir -p "$work"
home=$work/home
mkdir -p "$home"
[ "$keep_home" = 1 ] || trap 'rm -rf "$home"' EXIT
commit=$(git -C "$repo" rev-parse "$rev")
# the machine's interpreters and toolchains stay where they are
keep_env=(PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
          RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}")

# measure NAME CMD...: CMD in a fresh clone of REV with HOME=$home; the log
# in $work/NAME.log, the wall time and the suite's summary line printed
measure() {
    local name=$1 dir=$work/$1 t0 rc=0
    shift
    rm -rf "$dir"
    git clone -q --no-checkout "$repo" "$dir"
    git -C "$dir" checkout -q "$commit"
    t0=$(date +%s)
    (cd "$dir" && env HOME="$home" "${keep_env[@]}" "$@") >"$work/$name.log" 2>&1 || rc=$?
    local secs=$(( $(date +%s) - t0 ))
    printf '%-5s %4d:%02d  exit %d  %s  %s\n' "$name" $((secs / 60)) $((secs % 60)) "$rc" \
        "$(grep -E '^tests: ' "$work/$name.log" | tail -n 1)" \
        "$(sed -n 's/^time: \([a-z]*\) \([0-9]*\) s$/\1 \2s/p' "$work/$name.log" | paste -sd, -)"
}

# slowest LOG: the ten slowest tests of each ctest run in LOG
slowest() {
    awk '/Test +#[0-9]+: / { for (i = 1; i <= NF; i++) if ($i == "sec") { print run + 0, $(i - 1), $4 } }
         /tests passed, [0-9]+ tests? failed out of/ { run++ }' "$1" |
        sort -k1,1n -k2,2nr | awk '{ if (NR == 1 || $1 != last) { n = 0; last = $1; print "  " ($1 ? "asan" : "plain") ":" } if (n++ < 10) printf "  %8.1f s  %s\n", $2, $3 }'
}

echo "# suite time of $commit on $(nproc) cores, $(date -u +%FT%TZ); logs in $work"
for m in "${only[@]}"; do
    case $m in
    cold) rm -rf "${home:?}"/* "$home"/.[!.]* 2>/dev/null || true
          measure cold bash scripts/test.sh ;;
    warm) measure warm bash scripts/test.sh ;;
    ci) measure ci env CI=true bash .ci/run ;;
    *) echo "unknown measure $m (cold, warm or ci)" >&2; exit 2 ;;
    esac
done
for m in "${only[@]}"; do
    echo "# the ten slowest tests, $m"
    slowest "$work/$m.log"
done
