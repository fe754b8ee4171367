#!/usr/bin/env bash
# Builds cclforge and runs the whole test suite with CTest. Warnings are errors.
# With CI=true (or --sanitize) it also runs a short fuzzing pass when clang's
# libFuzzer is present, and the whole suite again under ASan+UBSan in build-asan/.
# Each part's wall time is printed as "time: PART SECONDS s" (bench/suite_time.sh
# reads them). The last line sums every ctest run: "tests: N passed, N failed,
# N skipped".
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

# part_done NAME: the wall time since the previous part ended
part_start=$(date +%s)
part_done() {
  local now; now=$(date +%s)
  echo "time: $1 $((now - part_start)) s"
  part_start=$now
}

# build DIR [VAR=VALUE... -DCMAKE_ARG...]: scripts/build.sh into DIR; a failed
# build fails the run, and its part's tests do not run
build() {
  local dir=$1 envs=() args=(); shift
  for a in "$@"; do case $a in -*) args+=("$a") ;; *) envs+=("$a") ;; esac; done
  if ! env BUILD_DIR="$dir" "${envs[@]}" bash scripts/build.sh "${args[@]}"; then
    echo "test.sh: the build in $dir failed; its tests did not run" >&2
    status=1
    return 1
  fi
}

build build -DCCLFORGE_WERROR=ON && run_ctest plain build
part_done plain

if [ "$sanitize" = 1 ]; then
  if [ -f fuzz/CMakeLists.txt ] && command -v clang >/dev/null; then
    echo "== short fuzzing pass =="
    build build-fuzz CC=clang -DCCLFORGE_FUZZ=ON -DCCLFORGE_TESTS=OFF &&
      { bash fuzz/run.sh build-fuzz "${FUZZ_SECONDS:-20}" || status=1; }
    part_done fuzz
  fi
  echo "== the same suite under AddressSanitizer + UndefinedBehaviorSanitizer =="
  # a fresh build-asan schedules by the plain suite's measured times (longest first)
  cost=Testing/Temporary/CTestCostData.txt
  if [ -f "build/$cost" ] && [ ! -f "build-asan/$cost" ]; then
    mkdir -p "build-asan/${cost%/*}" && cp "build/$cost" "build-asan/$cost"
  fi
  build build-asan BUILD_TYPE=Debug -DCCLFORGE_WERROR=ON -DCCLFORGE_SANITIZE=ON &&
    run_ctest asan build-asan ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  part_done asan
fi

# ctest prints "100% tests passed, 0 tests failed out of 30" per run, and
# lists skipped tests as "NN - name (Skipped)"; skipped ones are counted
# apart, never as passed.
awk '/tests passed, [0-9]+ tests? failed out of/ { total += $NF; failed += $(NF-5) }
     /\(Skipped\)$/ { skipped++ }
     END { printf "tests: %d passed, %d failed, %d skipped\n", total - failed - skipped, failed, skipped }' \
  $(compgen -G "$logs/*.log" || true) /dev/null
exit "$status"
