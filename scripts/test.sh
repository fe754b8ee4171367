#!/usr/bin/env bash
# Builds cclforge and runs the whole test suite with CTest. Warnings are errors.
# With CI=true (or --sanitize) it also runs a short fuzzing pass when clang's
# libFuzzer is present, and the whole suite again under ASan+UBSan in build-asan/.
# The last line sums every ctest run: "tests: N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
[ "${CI:-}" = "true" ] && sanitize=1
[ "${1:-}" = "--sanitize" ] && sanitize=1
jobs=$(nproc)
logs=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-test-XXXXXX")
trap 'rm -rf "$logs"' EXIT
status=0

# run_ctest NAME BUILD_DIR [env...]: runs the suite, keeps its summary for the total.
run_ctest() {
  local name=$1 dir=$2; shift 2
  env "$@" ctest --test-dir "$dir" --output-on-failure -j"$jobs" 2>&1 | tee "$logs/$name.log" || status=1
}

BUILD_DIR=build bash scripts/build.sh -DCCLFORGE_WERROR=ON
run_ctest plain build

if [ "$sanitize" = 1 ]; then
  if [ -f fuzz/CMakeLists.txt ] && command -v clang >/dev/null; then
    echo "== short fuzzing pass =="
    BUILD_DIR=build-fuzz CC=clang bash scripts/build.sh -DCCLFORGE_FUZZ=ON -DCCLFORGE_TESTS=OFF
    bash fuzz/run.sh build-fuzz "${FUZZ_SECONDS:-20}" || status=1
  fi
  echo "== the same suite under AddressSanitizer + UndefinedBehaviorSanitizer =="
  BUILD_DIR=build-asan BUILD_TYPE=Debug bash scripts/build.sh -DCCLFORGE_WERROR=ON -DCCLFORGE_SANITIZE=ON
  run_ctest asan build-asan ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

# ctest prints "100% tests passed, 0 tests failed out of 30" per run, and
# lists skipped tests as "NN - name (Skipped)"; skipped ones are counted
# apart, never as passed.
awk '/tests passed, [0-9]+ tests? failed out of/ { total += $NF; failed += $(NF-5) }
     /\(Skipped\)$/ { skipped++ }
     END { printf "tests: %d passed, %d failed, %d skipped\n", total - failed - skipped, failed, skipped }' "$logs"/*.log
exit "$status"
