#!/usr/bin/env bash
# Builds cclforge and runs the whole test suite with CTest. Warnings are errors.
# With CI=true (or --sanitize) it also runs the suite under ASan+UBSan in
# build-asan/, and a short fuzzing pass when clang's libFuzzer is present.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
[ "${CI:-}" = "true" ] && sanitize=1
[ "${1:-}" = "--sanitize" ] && sanitize=1
jobs=$(nproc)

BUILD_DIR=build bash scripts/build.sh -DCCLFORGE_WERROR=ON
ctest --test-dir build --output-on-failure -j"$jobs"

if [ "$sanitize" = 1 ]; then
  echo "== the same suite under AddressSanitizer + UndefinedBehaviorSanitizer =="
  BUILD_DIR=build-asan BUILD_TYPE=Debug bash scripts/build.sh -DCCLFORGE_WERROR=ON -DCCLFORGE_SANITIZE=ON
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
  if [ -f fuzz/CMakeLists.txt ] && command -v clang >/dev/null; then
    echo "== short fuzzing pass =="
    BUILD_DIR=build-fuzz CC=clang bash scripts/build.sh -DCCLFORGE_FUZZ=ON -DCCLFORGE_TESTS=OFF
    bash fuzz/run.sh build-fuzz "${FUZZ_SECONDS:-20}"
  fi
fi
