#!/usr/bin/env bash
# Everything of cclforge that needs a GPU machine, in one run of a few minutes, for a
# lent machine with no network (the device tool's H200): each step under its own
# time limit, every log kept.
#  0. the release wheel installed by pip, offline (the README's first command)
#  1. doctor on a real GPU: text, --json, and --gather --quick under mpirun -n 4
#     (where Open MPI is installed)
#  2. inspect of the NCCL and libtorch_cuda the machine's torch loads: banners and
#     SASS/PTX archs, compared with the machine's own cuobjdump
#  3. bench/gpu_smoke_check.sh: nccl-tests' all_reduce_perf side by side, every op,
#     type and reduction on the GPU, -z/-G/-R, transports, the sticky-error check
#  4. smoke's failure paths on a GPU: a corrupted result is caught and named; more
#     ranks than GPUs end with a reason, in bounded time
#  5. the bridge: a wheel built against the machine's torch by `bridge wheel`,
#     verified from its installed copy with a ProcessGroupNCCL smoke on the GPU
#
# Usage (on the GPU machine, from the repository root):
#   WHEEL=gpu-carry/cclforge-V-...x86_64.whl NCCL_TESTS_SRC=gpu-carry/nccl-tests-src \
#     bash bench/gpu_machine_check.sh
#   PY=python3           the interpreter that holds torch (default python3)
#   BEFORE_TARBALL=F     a release tarball of another cclforge, timed beside this one
#                        against nccl-tests (a change's before)
# Output: $OUT/gpu_machine_check.txt (the summary, also on stdout) and
# $OUT/gpu_machine_check.tar.gz (every log). Exit 0 all checks passed, 1 one failed,
# 77 no GPU here.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-out}
LOGS=$(mktemp -d /tmp/gpu-logs.XXXXXX)
SUMMARY=$OUT/gpu_machine_check.txt
mkdir -p "$OUT"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
fail=0
check() { if [ "$1" = 0 ]; then say "ok - $2"; else say "FAIL - $2"; fail=1; fi; }
finish() {
    tar -czf "$OUT/gpu_machine_check.tar.gz" -C "$LOGS" . 2>/dev/null
    say "# done: $([ $fail = 0 ] && echo 'all checks passed' || echo 'a check FAILED'); logs in gpu_machine_check.tar.gz"
    exit $fail
}
# run NAME LIMIT CMD...: output to $LOGS/NAME.txt, status returned (124: timed out)
run() {
    local name=$1 limit=$2 st t0=$(date +%s.%N); shift 2
    timeout -k 5 "$limit" "$@" >"$LOGS/$name.txt" 2>&1; st=$?
    echo "$name exit $st $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$LOGS/times.txt"
    return $st
}

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "${ngpu:-0}" -gt 0 ] || { say "SKIP: no GPU here (nvidia-smi lists none)"; exit 77; }
say "# $(date -u +%FT%TZ) $(uname -n) $(uname -m), $(nproc) CPUs, $ngpu GPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
nvidia-smi -L | tee -a "$SUMMARY"
nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader | sed 's/^/# /' | tee -a "$SUMMARY"
PY=${PY:-python3}
say "# python: $(command -v "$PY") $("$PY" -c 'import sys; print(sys.version.split()[0])')"
TORCH_DIR=$("$PY" -c 'import importlib.util as u; print(u.find_spec("torch").submodule_search_locations[0])' 2>/dev/null)
say "# torch: ${TORCH_DIR:-none}"

# ---- 0. the release wheel, installed as a user would (offline: --no-index) ----
[ -n "${WHEEL:-}" ] && [ -f "$WHEEL" ] || { say "FAIL - no release wheel (WHEEL=...)"; fail=1; finish; }
# --prefix, not a venv: a venv made from a venv's python would not see that venv's torch
PREFIX=/tmp/cf-prefix
run pip_install 120 "$PY" -m pip install --no-index --no-deps --prefix "$PREFIX" "$WHEEL"
check $? "pip install --prefix of $(basename "$WHEEL") (no network)"
CF=$PREFIX/bin/cclforge
"$CF" --version | sed 's/^/# /' | tee -a "$SUMMARY"
export PATH=$PREFIX/bin:$PATH

# ---- 1. doctor on a real GPU ----
run doctor 120 "$CF" doctor
st=$?; [ "$st" -le 1 ]
check $? "doctor ran (exit $st; 1 means problems were listed)"
grep -E '^(GPU|  *GPU|gpu)|sm_[0-9]+' "$LOGS/doctor.txt" | head -n 8 | sed 's/^/#   /' | tee -a "$SUMMARY"
run doctor_warm 120 "$CF" doctor
say "# doctor cold $(awk '$1 == "doctor" {print $4}' "$LOGS/times.txt") s, warm $(awk '$1 == "doctor_warm" {print $4}' "$LOGS/times.txt") s; the site-packages beside torch: $(find "$(dirname "$TORCH_DIR")" -name __init__.py 2>/dev/null | wc -l) package dirs, $(find "$(dirname "$TORCH_DIR")" -name '*.so' 2>/dev/null | wc -l) .so files"
run doctor_json 120 "$CF" doctor --json
"$PY" - "$LOGS/doctor_json.txt" <<'EOF' 2>&1 | tee -a "$SUMMARY"
import json, sys
d = json.load(open(sys.argv[1]))
print("# doctor --json: %s; gpus %s" % (d["schema"], json.dumps(d["gpus"])[:700]))
print("#   probes %s" % json.dumps(d["gpu_probes"])[:300])
for c in d["comm_libraries"]:
    print("#   %s %s (%s) archs %s" % (c["kind"], c["version"], c["path"], c["archs"]))
for t in d["libtorch"]:
    print("#   libtorch %s" % json.dumps(t)[:300])
for f in d["findings"]:
    print("#   finding %s %s: %s" % (f["severity"], f["id"], f["why"][:200]))
EOF
check "${PIPESTATUS[0]}" "doctor --json parses"
if command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    run gather 120 "${MPIRUN[@]}" -n 4 "$CF" doctor --gather --quick
    st=$?; [ "$st" -le 1 ]
    check $? "mpirun -n 4 doctor --gather --quick (exit $st): $(tail -n 2 "$LOGS/gather.txt" | tr '\n' ' ' | cut -c1-200)"
else
    say "# doctor --gather not run: no mpirun here (it needs a launcher)"
fi

# ---- 2. inspect against cuobjdump ----
NCCL_LIB=$(ls "$TORCH_DIR"/../nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -n1)
TORCH_CUDA=$TORCH_DIR/lib/libtorch_cuda.so
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for f in $NCCL_LIB $TORCH_CUDA; do
    [ -f "$f" ] || continue
    b=$(basename "$f")
    run "inspect_$b" 300 "$CF" inspect --json "$f"
    st=$?; [ "$st" -le 1 ]
    check $? "inspect $f (exit $st; 1 means problems were listed)"
    if [ ! -x "$CUOBJDUMP" ]; then say "# no cuobjdump here: archs not compared"; continue; fi
    { "$CUOBJDUMP" --list-elf "$f"; "$CUOBJDUMP" --list-ptx "$f"; } >"$LOGS/cuobjdump_$b.txt" 2>&1
    "$PY" - "$LOGS/inspect_$b.txt" "$LOGS/cuobjdump_$b.txt" <<'EOF' 2>&1 | tee -a "$SUMMARY"
import json, re, sys
t = json.load(open(sys.argv[1]))["targets"][0]
o = t["objects"][0]
g, comm = o.get("gpu") or {}, o.get("comm")
# cuobjdump prints family cubins without their 'f' (sm_100f -> sm_100): fold ours alike
ours_sass = sorted({s.rstrip("f") for s in g.get("sass", [])})
ours_ptx = sorted({p.replace("compute_", "sm_") for p in g.get("ptx", [])})
text = open(sys.argv[2]).read()
theirs_sass = sorted(set(re.findall(r"\.(sm_[0-9]+a?)f?\.cubin", text)))
theirs_ptx = sorted(set(re.findall(r"\.(sm_[0-9]+a?)f?\.ptx", text)))
same = ours_sass == theirs_sass and ours_ptx == theirs_ptx
print("# %s: problems %s; banner %s; cclforge SASS %s PTX %s; cuobjdump SASS %s PTX %s: %s" % (
    sys.argv[1].split("inspect_")[-1][:-4], [p["message"][:120] for p in t["problems"] if p["severity"] == "error"],
    json.dumps((comm or {}).get("banner"))[:200], ours_sass, ours_ptx, theirs_sass, theirs_ptx,
    "same" if same else "DIFFERENT"))
sys.exit(0 if same else 1)
EOF
    check "${PIPESTATUS[0]}" "inspect's archs of $b equal cuobjdump's"
done

# ---- 3. smoke against nccl-tests, every op and type, device flags ----
SMOKE_NCCL=${NCCL_HOME:-${NCCL_LIB:+$(dirname "$(dirname "$NCCL_LIB")")}}
BEFORE_BIN=""
if [ -n "${BEFORE_TARBALL:-}" ] && mkdir -p /tmp/cf-before && tar -xzf "$BEFORE_TARBALL" -C /tmp/cf-before; then
    BEFORE_BIN=$(ls /tmp/cf-before/*/bin/cclforge 2>/dev/null | head -n1)
    say "# timed beside it: $BEFORE_BIN ($BEFORE_TARBALL)"
fi
NCCL_HOME=$SMOKE_NCCL OUT=$LOGS/smoke CCLFORGE=$CF CCLFORGE_BEFORE=$BEFORE_BIN timeout -k 5 300 bash bench/gpu_smoke_check.sh \
    >"$LOGS/gpu_smoke_check.out" 2>&1
check $? "bench/gpu_smoke_check.sh"
sed 's/^/#   /' "$LOGS/smoke/gpu_smoke_check.txt" 2>/dev/null | grep -v '^#   # building' | tee -a "$SUMMARY"
LIB=${NCCL_LIB:-libnccl.so.2}

# ---- 4. failure paths on a GPU ----
CCLFORGE_SMOKE_FAULT=0:corrupt:all_reduce run fault_corrupt 120 "$CF" smoke -n 1 --lib "$LIB" --ops all_reduce -b 1M -e 1M
st=$?; [ "$st" = 1 ] && grep -q 'had wrong results' "$LOGS/fault_corrupt.txt"
check $? "a corrupted result on the GPU is caught (exit $st): $(grep -m1 "^verdict" "$LOGS/fault_corrupt.txt" | cut -c1-200)"
more=$((ngpu + 1))
s=$(date +%s)
run more_ranks 120 "$CF" smoke -n "$more" --lib "$LIB" --ops all_reduce -b 1K -e 1K -T 30 --connect-timeout 30
st=$?
say "#   -n $more on $ngpu GPU(s): exit $st after $(( $(date +%s) - s )) s: $(grep -m2 -E 'RANK_FAIL|verdict|error' "$LOGS/more_ranks.txt" | tr '\n' ' ' | cut -c1-300)"
[ "$st" = 1 ] || [ "$st" = 0 ]
check $? "more ranks than GPUs ends with a verdict, not a crash or hang (exit $st)"

# ---- 5. the bridge on the machine's torch, proven from its installed wheel ----
if [ -d "$TORCH_DIR" ]; then
    run bridge_wheel 300 "$CF" bridge wheel --python "$PY" -o /tmp/bridge-build --wheel-dir /tmp/bridge-dist
    check $? "bridge wheel against $TORCH_DIR ($(grep -m1 -o 'cclforge_nccl_bridge-[^ ]*\.whl' "$LOGS/bridge_wheel.txt"))"
    grep -E 'vendor|nccl.h|NCCL' "$LOGS/bridge_wheel.txt" | head -n 6 | sed 's/^/#   /' | tee -a "$SUMMARY"
    BW=$(ls /tmp/bridge-dist/*.whl 2>/dev/null | head -n1)
    if [ -n "$BW" ]; then
        # torch lives in a venv here: --system-site-packages must mean that venv's packages
        run bridge_verify 240 "$CF" wheel verify "$BW" --smoke 1 --python "$PY" --system-site-packages
        st=$?
        check $st "wheel verify --smoke 1 of the bridge: ProcessGroupNCCL on the GPU from the installed wheel"
        grep -E 'RANK_|smoke|abi|verdict' "$LOGS/bridge_verify.txt" | head -n 8 | sed 's/^/#   /' | tee -a "$SUMMARY"
    fi
fi
finish
