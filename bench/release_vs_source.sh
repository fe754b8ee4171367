#!/usr/bin/env bash
# The binary a user installs (the release wheel, pip-installed into a venv)
# against the source build, side by side in one run: `inspect --undefined`
# over inspect_corpus.sh's corpus (one process per file) and `doctor` warm
# with the real torch wheel on the Python path (doctor_warm.sh's setup).
# Paired repeats: each repeat runs both binaries, in an order that alternates;
# the table shows medians over repeats and the ratio release / source
# (below 1 the release is faster).
#   bash scripts/dist.sh --arch x86_64 && bash scripts/build.sh && bash bench/release_vs_source.sh
# Results: docs/bench.md ("The release binary against the source build").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
RUNS=${RUNS:-7}
SYSLIB=${SYSLIB:-/usr/lib/x86_64-linux-gnu}
CUDA_LIB=${CUDA_LIB:-/usr/local/cuda-13.0/lib}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_release "$tmp" || exit 2
declare -A bin=([release]="$CCLFORGE_RELEASE" [source]="$CCLFORGE")
ls -d "$SYSLIB"/*.so* | sort | awk 'NR % 15 == 1' >"$tmp/corpus"
for f in "$CUDA_LIB"/*.so*; do [ -f "$f" ] && [ ! -L "$f" ] && echo "$f"; done >>"$tmp/corpus"
mapfile -t files <"$tmp/corpus"
site=$(ls -d "${CCLFORGE_TORCH_CACHE:-$HOME/.cache/cclforge/torch}"/site-* 2>/dev/null | head -n 1)

bench_header "the release binary (pip-installed wheel) against the source build"
echo "release: ${bin[release]} ($(stat -c %s "${bin[release]}") bytes, NEEDED: $(readelf -d "${bin[release]}" | sed -n 's/.*\[\(.*\)\]/\1/p' | tr '\n' ' '))"
echo "source:  $CCLFORGE ($(stat -c %s "$CCLFORGE") bytes, NEEDED: $(readelf -d "$CCLFORGE" | sed -n 's/.*\[\(.*\)\]/\1/p' | tr '\n' ' '))"
echo "corpus: ${#files[@]} files; torch for doctor: ${site:-none (doctor runs without it)}"
corpus_ms() { # BIN: wall ms of the whole corpus, one process per file
    local s=$EPOCHREALTIME f
    for f in "${files[@]}"; do "$1" inspect --undefined "$f" >/dev/null 2>&1; done
    awk -v s="$s" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", (e - s) * 1000 }'
}
doctor_ms() { # BIN: wall ms of 5 warm doctors
    local s=$EPOCHREALTIME i
    for i in 1 2 3 4 5; do "$1" doctor >/dev/null 2>&1; done
    awk -v s="$s" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.2f\n", (e - s) * 1000 / 5 }'
}
for t in release source; do # each its own warm caches
    export CCLFORGE_HOME=$tmp/home-$t
    corpus_ms "${bin[$t]}" >/dev/null
    PYTHONPATH=$site doctor_ms "${bin[$t]}" >/dev/null
done
sleep 3 # cache entries of files changed in the last two seconds are not stored
declare -A corpus doctor
for ((r = 0; r < RUNS; r++)); do
    order=(release source)
    [ $((r % 2)) -eq 1 ] && order=(source release)
    for t in "${order[@]}"; do
        export CCLFORGE_HOME=$tmp/home-$t
        corpus[$t]+="$(corpus_ms "${bin[$t]}") "
        doctor[$t]+="$(PYTHONPATH=$site doctor_ms "${bin[$t]}") "
    done
done
printf '\n%-44s %12s %12s %8s\n' measure "release ms" "source ms" ratio
for m in corpus doctor; do
    declare -n col=$m
    rel=$(median "${col[release]}")
    srcm=$(median "${col[source]}")
    name="inspect --undefined, ${#files[@]} files, one process each"
    [ $m = doctor ] && name="doctor, warm, with torch (one run)"
    printf '%-44s %12s %12s %8s\n' "$name" "$rel" "$srcm" "$(div "$rel" "$srcm" 2)"
done
echo "(median of $RUNS paired repeats; ratio = release / source: below 1 the release is faster)"
