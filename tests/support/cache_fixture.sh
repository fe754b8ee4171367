#!/usr/bin/env bash
# A ctest fixture (tests/CMakeLists.txt, FIXTURES_SETUP): makes one of the
# caches several tests share, once, before any of them starts.
#   bash tests/support/cache_fixture.sh torch|pybuild|mpich|wheel
# Exit 0 when the cache is ready, 77 (skipped) when it cannot be made here
# (no network, no PyPI): the tests that need it then skip by themselves.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
case ${1:-} in
torch) steps=("torch-cache.sh") ;;
pybuild) steps=("pybuild-cache.sh") ;;
mpich) steps=("mpich-cache.sh mpich" "mpich-cache.sh impi-rt") ;;
wheel) steps=("wheel-cache.sh") ;;
*) echo "usage: cache_fixture.sh torch|pybuild|mpich|wheel" >&2; exit 2 ;;
esac
log=$(mktemp "${TMPDIR:-/tmp}/cclforge-fixture-XXXXXX")
trap 'rm -f "$log"' EXIT
rc=0
for step in "${steps[@]}"; do
    read -r script arg <<<"$step"
    t0=$(date +%s)
    if out=$(bash "$src/scripts/$script" ${arg:+"$arg"} 2>"$log"); then
        echo "ok: scripts/$script${arg:+ $arg} ready in $(( $(date +%s) - t0 ))s: $(printf '%s\n' "$out" | tail -n 1)"
    else
        cat "$log"
        echo "SKIP: scripts/$script${arg:+ $arg} could not make its cache here; the tests that need it skip by themselves"
        rc=77
    fi
done
exit "$rc"
