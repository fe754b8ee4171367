#!/usr/bin/env bash
# The HTML reports at scale: what `cclforge report` costs to write, how large
# the file is, and how long Debian's headless Chromium takes to load and lay it
# out (navigation to the load event, measured in the page by
# tests/support/html_page.py), for
#   smoke   a saved pairwise run of 1,024 hosts (523,776 pairs; synthetic,
#           tests/support/smoke_doc.py: one slow host, one failing)
#   doctor  1,024 hosts' saved `doctor --json` (this host's own report under
#           1,024 names, two of them with another NCCL version; each given 8
#           NVIDIA GPUs, sm_90 but sm_100 on one host, so that every host's
#           NCCL is judged against the others' archs), side by side
# and what writing a report adds to a run: `smoke --report` against the same
# run without it would need hosts; the report is made from the run's JSON, so
# its cost is `cclforge report` on the run's saved document, less a process's
# start (`cclforge --version`), shown against the run's own time when RUN_JSON
# names a saved run with its wall time in RUN_S.
#   bash bench/reports.sh   (after scripts/build.sh). Results: docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
RUNS=${RUNS:-5}
command -v chromium >/dev/null || { echo "no chromium: bash scripts/deps.sh" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_header "HTML reports at 1,024 hosts"

python3 tests/support/smoke_doc.py 1024 --names rack --slow 100 --failed 700 --links 100 >"$tmp/smoke.json"
"$CCLFORGE" doctor --json >"$tmp/host.json" 2>/dev/null
python3 - "$tmp/host.json" "$tmp/hosts" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
os.makedirs(sys.argv[2])
libs = d.get("comm_libraries") or [{"kind": "nccl", "path": "/usr/lib/libnccl.so.2", "how": "loaded"}]
d["comm_libraries"] = libs
base = (libs[0].get("version") or "2.28.9", libs[0].get("version_code") or 22809)
for i in range(1024):
    d["host"]["hostname"] = "node%04d" % i
    odd = i in (3, 900)
    for lib in d.get("comm_libraries", []):
        lib["version"], lib["version_code"] = ("2.27.5", 22705) if odd else (base[0], base[1])
        lib["archs"] = ["sm_80", "sm_90"]
    d["gpus"] = [{"vendor": "nvidia", "arch": "sm_100" if i == 7 else "sm_90"} for _ in range(8)]
    json.dump(d, open(os.path.join(sys.argv[2], "node%04d.json" % i), "w"))
PY

# load_ms FILE: median over RUNS of Chromium's load time for FILE
load_ms() {
    local i times=()
    for ((i = 0; i < RUNS; i++)); do
        python3 tests/support/html_page.py render "$1" "$tmp/page" >/dev/null 2>&1
        times+=("$(python3 tests/support/html_page.py print "$tmp/page.dom" 'root["attrs"]["data-load-ms"]' 2>/dev/null)")
    done
    median "${times[*]}"
}

start_ms=$(median_ms "$RUNS" "$CCLFORGE" --version)
printf '%-34s %12s %12s %10s %14s\n' report "write (ms)" "less start" "size (MB)" "Chromium (ms)"
row() {
    local label=$1 out=$2
    shift 2
    local w
    w=$(median_ms "$RUNS" "$CCLFORGE" report -o "$out" "$@")
    printf '%-34s %12s %12s %10s %14s\n' "$label" "$w" "$(awk -v a="$w" -v b="$start_ms" 'BEGIN{printf "%.0f", a-b}')" \
        "$(awk -v s="$(stat -c %s "$out")" 'BEGIN{printf "%.2f", s/1048576}')" "$(load_ms "$out")"
}
row "smoke pairwise, 1,024 hosts" "$tmp/smoke.html" "$tmp/smoke.json"
row "doctor hosts, 1,024 documents" "$tmp/hosts.html" "$tmp"/hosts/*.json
row "doctor topology, this host" "$tmp/topo.html" "$tmp/host.json"
echo "process start (cclforge --version): $start_ms ms"
if [ -n "${RUN_JSON:-}" ] && [ -n "${RUN_S:-}" ]; then
    w=$(median_ms "$RUNS" "$CCLFORGE" report -o "$tmp/run.html" "$RUN_JSON")
    echo "a run's report: $w ms less $start_ms ms of start, against the run's ${RUN_S} s: $(awk -v a="$w" -v b="$start_ms" -v r="$RUN_S" 'BEGIN{printf "%.2f %%", 100*(a-b)/(1000*r)}')"
fi
