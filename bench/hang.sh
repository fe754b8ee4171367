#!/usr/bin/env bash
# cclforge hang at scale, and against torch's fr_trace:
#   1,024 ranks x 1,000 entries (synthetic pickles in the NCCL layout,
#   tests/support/fr_synth.py: the last rank never enters the last
#   all_reduce): wall and CPU time, peak memory (GNU time's maximum RSS);
#   64 ranks x 1,000 entries: cclforge hang against
#   `python -m torch.distributed.flight_recorder.fr_trace` on the same files
#   (the cached torch, scripts/torch-cache.sh), wall time and peak memory, and
#   the ratio.
#   RUNS=3 bash bench/hang.sh   (after scripts/build.sh). Results: docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
RUNS=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "no /usr/bin/time (apt-get install time)" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_header "cclforge hang: 1,024 ranks, and against fr_trace"

python3 tests/support/fr_synth.py bench "$tmp/r1024" 1024 1000
python3 tests/support/fr_synth.py bench "$tmp/r64" 64 1000
echo "dumps: 1,024 ranks $(du -sh "$tmp/r1024/pkl" | cut -f1), 64 ranks $(du -sh "$tmp/r64/pkl" | cut -f1)"

# peak RSS (KB) and wall seconds of one run: "KB S"
peak() { /usr/bin/time -f '%M %e' "$@" 2>&1 >/dev/null | tail -1; }

walls=() rss=()
for ((i = 0; i < RUNS; i++)); do
    read -r kb s < <(peak "$CCLFORGE" hang "$tmp/r1024/pkl")
    walls+=("$s") rss+=("$kb")
done
cpu=$(cpu_ms "$RUNS" "$CCLFORGE" hang "$tmp/r1024/pkl")
echo "| cclforge hang, 1,024 x 1,000 | wall $(median "${walls[*]}") s (spread $(spread "${walls[*]}")) | CPU ${cpu:-n/a} ms | peak $(( $(median "${rss[*]}" | cut -d. -f1) / 1024 )) MB |"

site=$(bash scripts/torch-cache.sh 2>/dev/null | tail -n 1)
if [ -z "$site" ] || [ ! -f "$site/torch/distributed/flight_recorder/fr_trace.py" ]; then
    echo "no cached torch: fr_trace not run"
    exit 0
fi
# fr_trace reads files named <prefix><rank>
mkdir -p "$tmp/fr64"
for f in "$tmp"/r64/pkl/rank*.pkl; do b=$(basename "$f" .pkl); cp "$f" "$tmp/fr64/$b"; done
cw=() ck=() fw=() fk=()
for ((i = 0; i < RUNS; i++)); do
    read -r kb s < <(peak "$CCLFORGE" hang "$tmp/r64/pkl")
    cw+=("$s") ck+=("$kb")
    read -r kb s < <(peak env PYTHONPATH="$site" python3 -m torch.distributed.flight_recorder.fr_trace "$tmp/fr64")
    fw+=("$s") fk+=("$kb")
done
c=$(median "${cw[*]}") f=$(median "${fw[*]}")
echo "| cclforge hang, 64 x 1,000 | wall $c s | peak $(( $(median "${ck[*]}" | cut -d. -f1) / 1024 )) MB |"
echo "| fr_trace, 64 x 1,000 | wall $f s | peak $(( $(median "${fk[*]}" | cut -d. -f1) / 1024 )) MB |"
awk -v c="$c" -v f="$f" 'BEGIN { if (c > 0) printf "ratio: fr_trace / cclforge = %.1fx\n", f / c }'
