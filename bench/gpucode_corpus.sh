#!/usr/bin/env bash
# Compares cclforge's SASS and PTX arch sets with cuobjdump's for every shared
# object in DIR (default: the CUDA 13 library directory), with timings: the
# fatbin sections against cuobjdump on the library, and the containers found
# elsewhere (read-only data) against cuobjdump on those containers written out
# by tests/support/fatbin_extract.py (cuobjdump itself does not see them).
# cuobjdump prints family-specific cubins without their 'f' (sm_120f -> sm_120),
# so SASS names are folded the same way before comparing.
#   CUOBJDUMP=/path/to/cuobjdump bash bench/gpucode_corpus.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD_DIR=${BUILD_DIR:-build}
DIR=${1:-/usr/local/cuda-13.0/lib}
C=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
[ -x "$C" ] || { echo "cuobjdump not found: set CUOBJDUMP (e.g. from the nvidia-cuda-cuobjdump wheel)" >&2; exit 2; }
bench_link bench/gpucode_list.c "$BUILD_DIR/gpucode_list"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
same=0 diff=0 t_ours=0 t_theirs=0
for f in "$DIR"/*.so*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  s=$(date +%s.%N); line=$("$BUILD_DIR/gpucode_list" "$f"); e=$(date +%s.%N)
  ours=$(sed 's/^[^:]*://; s/ |.*//' <<<"$line")
  ours_else=$(sed 's/^.*| elsewhere://; s/ |.*//' <<<"$line")
  t_ours=$(awk "BEGIN{print $t_ours + $e - $s}")
  s=$(date +%s.%N)
  c_sass=$("$C" --list-elf "$f" 2>/dev/null | grep -o '\.sm_[0-9a-z]*\.' | tr -d . | sort -u | tr '\n' ' ' || true)
  c_ptx=$("$C" --list-ptx "$f" 2>/dev/null | grep -o '\.sm_[0-9a-z]*\.' | tr -d . | sort -u | tr '\n' ' ' || true)
  e=$(date +%s.%N); t_theirs=$(awk "BEGIN{print $t_theirs + $e - $s}")
  o_sass=$(tr ' ' '\n' <<<"$ours" | grep '^sm_' | sed 's/f$//' | sort -u | tr '\n' ' ' || true)
  o_ptx=$(tr ' ' '\n' <<<"$ours" | grep '^compute_' | sed 's/^compute_/sm_/' | sort -u | tr '\n' ' ' || true)
  rm -rf "$tmp/fb"; python3 tests/support/fatbin_extract.py "$f" "$tmp/fb" >/dev/null
  e_theirs=$(for x in "$tmp"/fb/*.fatbin; do [ -f "$x" ] && { "$C" --list-elf "$x"; "$C" --list-ptx "$x"; }; done 2>/dev/null |
    grep -oE '\.sm_[0-9]+[af]?\.(cubin|ptx)' | sed -E 's/^\.//; s/f\././; s/^sm_([0-9a]+)\.ptx$/compute_\1/; s/\.cubin$//' | sort -u | tr '\n' ' ' || true)
  e_ours=$(tr ' ' '\n' <<<"$ours_else" | grep -E '^(sm|compute)_' | sed 's/f$//' | sort -u | tr '\n' ' ' || true)
  if [ "$o_sass" = "$c_sass" ] && [ "$o_ptx" = "$c_ptx" ] && [ "$e_ours" = "$e_theirs" ]; then
    same=$((same + 1)); echo "same  $(basename "$f"):$ours${e_ours:+ | elsewhere: $e_ours}"
  else
    diff=$((diff + 1)); echo "DIFF  $(basename "$f"): cclforge [$o_sass| $o_ptx| elsewhere $e_ours] cuobjdump [$c_sass| $c_ptx| elsewhere $e_theirs]"
  fi
done
echo "$same same, $diff different; cclforge ${t_ours}s, cuobjdump ${t_theirs}s (process start included)"
[ "$diff" -eq 0 ]
