#!/usr/bin/env bash
# The long fuzzing pass (a CPU-hour per target): builds the targets
# with clang into build-fuzz, then runs each until it has used SECONDS of CPU
# (default 3600; FUZZ_CLOCK=wall for wall seconds) at nice 19, one after another, with fuzz/run.sh's
# seeds and limits (4 MB inputs, 64 MB per allocation, 2 GB per process).
# Results are appended to LOG (default fuzz-long-<date>.log in the current
# directory): per target the executions, speed, coverage and peak memory,
# or the finding with its artifact; new corpus and artifacts stay in
# FUZZ_OUT (default /var/tmp/cclforge-fuzz-long).
#   bash fuzz/long_run.sh [SECONDS] [LOG]
# FUZZ_TARGETS="fuzz_elf fuzz_ldcache" limits the run to those targets.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
log=${2:-$PWD/fuzz-long-$(date +%Y%m%d-%H%M).log}
export FUZZ_OUT=${FUZZ_OUT:-/var/tmp/cclforge-fuzz-long}
export FUZZ_NICE=${FUZZ_NICE:-19}
export FUZZ_CLOCK=${FUZZ_CLOCK:-cpu}
{
  echo "# cclforge long fuzzing pass: ${seconds}s ($FUZZ_CLOCK) per target, nice $FUZZ_NICE${FUZZ_TARGETS:+, targets: $FUZZ_TARGETS}"
  echo "# started $(date -Is) at $(git rev-parse --short HEAD 2>/dev/null) on $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  nice -n "$FUZZ_NICE" env BUILD_DIR=build-fuzz CC=clang bash scripts/build.sh -DCCLFORGE_FUZZ=ON -DCCLFORGE_TESTS=OFF \
    >/dev/null || { echo "build failed"; exit 1; }
  bash fuzz/run.sh build-fuzz "$seconds"
  status=$?
  echo "# finished $(date -Is), load: $(cut -d' ' -f1-3 /proc/loadavg), status $status (outputs in $FUZZ_OUT)"
  exit $status
} 2>&1 | tee -a "$log"
