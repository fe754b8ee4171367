#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR/fuzz for SECONDS each, with a seed
# corpus, and fails if any target finds a crash, leak or timeout.
#   bash fuzz/run.sh BUILD_DIR SECONDS
# Seeds per target, all optional and combinable:
#   fuzz/corpus/<target>/      small committed inputs
#   fuzz/seeds/<target>.sh DIR a script that writes generated seeds into DIR
#   generated ELF files        compiled here on the fly (every target gets them)
#   real files                 copies of this machine's libraries up to MAX_LEN
#                              (fuzz/seeds/real_files.sh; every target gets them)
#   fuzz/<target>.dict         a libFuzzer dictionary
# New inputs and crash artifacts go to $FUZZ_OUT (default: a temp dir, kept on failure).
# Limits: inputs up to $FUZZ_MAX_LEN bytes (default 4 MB, real library sizes);
# one allocation over $FUZZ_MALLOC_LIMIT_MB (default 64: sixteen times the
# largest input, so a count that sizes memory out of proportion to the file,
# the .gnu.version_r case, fails) or a process over $FUZZ_RSS_LIMIT_MB
# (default 2048) is a finding.
# $FUZZ_TARGETS (space-separated names) runs only those; $FUZZ_NICE runs
# each under nice -n that value; $FUZZ_JOBS targets run at once (default: the
# number of cores), each with its own SECONDS. With FUZZ_CLOCK=cpu, SECONDS are CPU seconds
# of the fuzzer process (read from /proc; the run is interrupted when it has
# used them), so a budget means the same on an idle and on a busy machine.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then
  echo "usage: bash fuzz/run.sh BUILD_DIR SECONDS" >&2
  exit 2
fi
build_dir=$1
seconds=$2
bin_dir=$build_dir/fuzz
targets=()
for f in "$bin_dir"/fuzz_*; do
  [ -x "$f" ] && [ -f "$f" ] && targets+=("$f")
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no targets in $bin_dir (configure with CC=clang -DCCLFORGE_FUZZ=ON)" >&2
  exit 1
fi

out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/cclforge-fuzz.XXXXXX")}
mkdir -p "$out"
elf_seeds=$out/elf-seeds
bash fuzz/seeds/elf_files.sh "$elf_seeds"
max_len=${FUZZ_MAX_LEN:-4194304}
MAX_SEED=$max_len bash fuzz/seeds/real_files.sh "$elf_seeds"
# Seed scripts that need the tool itself (real cache entries) find it here.
export CCLFORGE_BIN=${CCLFORGE_BIN:-$build_dir/cclforge}
nice_cmd=()
[ -n "${FUZZ_NICE:-}" ] && nice_cmd=(nice -n "$FUZZ_NICE")

# run_one BIN: fuzzes one target; what it says goes to $out/NAME/report (and
# report.err), its exit status is 1 when the target found a problem
run_one() {
  local bin=$1 name corpus artifacts seeds wall args log pid tick cpu_used stat status
  name=$(basename "$bin")
  corpus=$out/$name/corpus      # grows during the run; the repo is never written
  artifacts=$out/$name/artifacts
  seeds=$out/$name/seeds
  mkdir -p "$corpus" "$artifacts" "$seeds"
  exec >"$out/$name/report" 2>"$out/$name/report.err"
  [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$seeds/"
  [ -f "fuzz/seeds/$name.sh" ] && bash "fuzz/seeds/$name.sh" "$seeds"
  wall=$seconds
  [ "${FUZZ_CLOCK:-wall}" = cpu ] && wall=$((seconds * 20)) # the CPU watchdog below ends it
  args=(-max_total_time="$wall" -timeout=10 -rss_limit_mb="${FUZZ_RSS_LIMIT_MB:-2048}"
        -malloc_limit_mb="${FUZZ_MALLOC_LIMIT_MB:-64}" -max_len="$max_len"
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  [ -f "fuzz/$name.dict" ] && args+=(-dict="fuzz/$name.dict")
  echo "== $name: ${seconds}s ($([ "${FUZZ_CLOCK:-wall}" = cpu ] && echo CPU || echo wall)), seeds: $(ls "$seeds" | wc -l) own + $(ls "$elf_seeds" | wc -l) ELF"
  log=$out/$name/log
  "${nice_cmd[@]}" "$bin" "${args[@]}" "$corpus" "$seeds" "$elf_seeds" >"$log" 2>&1 &
  pid=$!
  # CPU seconds used so far: utime + stime (fields 14, 15), also of the zombie
  # it is once it ends (state Z, field 3), until the wait below
  tick=$(getconf CLK_TCK)
  cpu_used=0
  while stat=$(cat "/proc/$pid/stat" 2>/dev/null); do
    cpu_used=$(awk -v t="$tick" '{print int(($14 + $15) / t)}' <<<"$stat")
    [ "$(awk '{print $3}' <<<"$stat")" = Z ] && break
    if [ "${FUZZ_CLOCK:-wall}" = cpu ] && [ "$cpu_used" -ge "$seconds" ]; then kill -INT "$pid"; break; fi
    sleep 1
  done
  status=0
  wait "$pid" || status=$?
  # libFuzzer exits 72 when interrupted, as the CPU watchdog does once the budget is used
  if [ "$status" -eq 72 ] && [ "${FUZZ_CLOCK:-wall}" = cpu ] && grep -q "run interrupted" "$log"; then status=0; fi
  echo "   cpu: ${cpu_used}s"
  if [ "$status" -eq 0 ]; then
    grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$log" | sed "s/^/   /" || true
    grep -E "^#[0-9]+" "$log" | tail -n 1 | sed "s/^/   last: /" || true
    return 0
  fi
  echo "   FAILED: $name found a problem; log $log, artifacts in $artifacts" >&2
  grep -E "ERROR|SUMMARY|==[0-9]+==" "$log" | head -n 20 | sed "s/^/   /" >&2 || true
  return 1
}

# $FUZZ_JOBS targets at a time (default: one per core), each with its own
# seconds: the same fuzzing per target as one at a time, in 1/JOBS the wall time.
# Reports print in the targets' order as each is collected.
fuzz_jobs=${FUZZ_JOBS:-$(nproc)}
names=() pids=() failed=()
collect() { # I: waits for the I-th target, prints its report
  local rc=0
  wait "${pids[$1]}" || rc=$?
  cat "$out/${names[$1]}/report"
  cat "$out/${names[$1]}/report.err" >&2
  [ "$rc" -eq 0 ] || failed+=("${names[$1]}")
}
next=0
for bin in "${targets[@]}"; do
  name=$(basename "$bin")
  if [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $name "* ]]; then
    continue
  fi
  while [ $(( ${#pids[@]} - next )) -ge "$fuzz_jobs" ]; do
    collect "$next"; next=$((next + 1))
  done
  mkdir -p "$out/$name"
  run_one "$bin" &
  names+=("$name") pids+=($!)
done
while [ "$next" -lt "${#pids[@]}" ]; do
  collect "$next"; next=$((next + 1))
done
ran=${#pids[@]}

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]} (outputs kept in $out)" >&2
  exit 1
fi
[ -z "${FUZZ_OUT:-}" ] && rm -rf "$out"
echo "fuzz: $ran target(s) ran ${seconds}s each without findings"
