#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR/fuzz for SECONDS each, with a seed
# corpus, and fails if any target finds a crash, leak or timeout.
#   bash fuzz/run.sh BUILD_DIR SECONDS
# Seeds per target, all optional and combinable:
#   fuzz/corpus/<target>/      small committed inputs
#   fuzz/seeds/<target>.sh DIR a script that writes generated seeds into DIR
#   generated ELF files        compiled here on the fly (every target gets them)
#   fuzz/<target>.dict         a libFuzzer dictionary
# New inputs and crash artifacts go to $FUZZ_OUT (default: a temp dir, kept on failure).
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

failed=()
for bin in "${targets[@]}"; do
  name=$(basename "$bin")
  corpus=$out/$name/corpus      # grows during the run; the repo is never written
  artifacts=$out/$name/artifacts
  seeds=$out/$name/seeds
  mkdir -p "$corpus" "$artifacts" "$seeds"
  [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$seeds/"
  [ -f "fuzz/seeds/$name.sh" ] && bash "fuzz/seeds/$name.sh" "$seeds"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  [ -f "fuzz/$name.dict" ] && args+=(-dict="fuzz/$name.dict")
  echo "== $name: ${seconds}s, seeds: $(ls "$seeds" | wc -l) own + $(ls "$elf_seeds" | wc -l) ELF"
  log=$out/$name/log
  if "$bin" "${args[@]}" "$corpus" "$seeds" "$elf_seeds" >"$log" 2>&1; then
    grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)|cov: .* ft: " "$log" \
      | grep -E "stat::|DONE" | sed "s/^/   /" || true
    tail -n 20 "$log" | grep -E "^#[0-9]+.*DONE" | sed "s/^/   /" || true
  else
    echo "   FAILED: $name found a problem; log $log, artifacts in $artifacts" >&2
    grep -E "ERROR|SUMMARY|==[0-9]+==" "$log" | head -n 20 | sed "s/^/   /" >&2 || true
    failed+=("$name")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]} (outputs kept in $out)" >&2
  exit 1
fi
[ -z "${FUZZ_OUT:-}" ] && rm -rf "$out"
echo "fuzz: ${#targets[@]} target(s) ran ${seconds}s each without findings"
