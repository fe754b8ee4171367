#!/usr/bin/env bash
# The checks of `cclforge smoke` that need GPUs, in one run of a few minutes:
#  1. busbw (and time) of cclforge's all_reduce against nccl-tests' all_reduce_perf,
#     same sizes (-b 8 -e 256M -f 2), same GPUs, same NCCL, side by side with ratios;
#  2. every collective, type and reduction on the GPU path, checked (-d all -o all),
#     and -z 1, -G 2, -R 1;
#  3. the transport proof: the connections NCCL logged, --expect-transport p2p with
#     2+ GPUs, and the fallback it must catch (NCCL_P2P_DISABLE=1: SHM, so p2p fails);
#  4. the sticky-error check after every test (a run that passes shows it stayed quiet).
# Everything it prints also goes to $OUT/gpu_smoke_check.txt (OUT defaults to /tmp).
#
# Usage: bash bench/gpu_smoke_check.sh
#   CCLFORGE=build/cclforge     the cclforge to test (built here when missing and cmake is there)
#   NCCL_TESTS_SRC=DIR          an nccl-tests source tree (2.19.x); no network is needed
#   NCCL_HOME=DIR               NCCL's include/ and lib/ (default: found from ldconfig, CUDA, pip)
#   CUDA_HOME=/usr/local/cuda   nvcc for nccl-tests
#   GPUS=N                      ranks / GPUs to use (default: all that nvidia-smi lists)
#   CCLFORGE_BEFORE=BIN[:BIN]   other cclforge binaries timed in the same repeats (a change's before)
#   REPEATS=2 ITERS=100          repeats (order rotated, best kept) and timed iterations
# Exit status: 0 all checks passed, 1 one failed, 77 no GPU here.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp}
mkdir -p "$OUT"
LOG=$OUT/gpu_smoke_check.txt
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
fail=0
check() { if [ "$1" = 0 ]; then say "ok - $2"; else say "FAIL - $2"; fail=1; fi; }

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "${ngpu:-0}" -gt 0 ] || { say "SKIP: no GPU here (nvidia-smi lists none)"; exit 77; }
GPUS=${GPUS:-$ngpu}
say "# $(date -u +%FT%TZ) $(uname -n): $ngpu GPU(s), using $GPUS; load $(cut -d' ' -f1-3 /proc/loadavg)"
nvidia-smi -L | tee -a "$LOG"

CCLFORGE=${CCLFORGE:-build/cclforge}
if ! "$CCLFORGE" --help >/dev/null 2>&1; then
    say "# building cclforge ($CCLFORGE does not run here)"
    BUILD_DIR=build-gpu bash scripts/build.sh >>"$LOG" 2>&1 && CCLFORGE=build-gpu/cclforge
fi
"$CCLFORGE" --help >/dev/null 2>&1 || { say "FAIL - no cclforge that runs here"; exit 1; }

# NCCL: the library cclforge and nccl-tests will both use
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")}
find_nccl() {
    [ -n "${NCCL_HOME:-}" ] && { echo "$NCCL_HOME"; return; }
    local lib
    lib=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 / {print $NF; exit}')
    for cand in "${lib%/lib/*}" "$(dirname "$(dirname "${lib:-/x/x}")")" "$CUDA_HOME" \
        $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null); do
        [ -n "$cand" ] && [ -e "$cand/lib/libnccl.so.2" ] && { echo "$cand"; return; }
    done
}
NCCL_HOME=$(find_nccl)
[ -n "$NCCL_HOME" ] || { say "FAIL - no libnccl.so.2 found (give NCCL_HOME)"; exit 1; }
LIB=$NCCL_HOME/lib/libnccl.so.2
say "# NCCL: $LIB ($("$CCLFORGE" inspect --no-gpu "$LIB" 2>/dev/null | grep -o -m1 'NCCL [0-9][0-9.]*[^ ]*'))"
export LD_LIBRARY_PATH=$NCCL_HOME/lib:$CUDA_HOME/lib64:$CUDA_HOME/lib:${LD_LIBRARY_PATH:-}

SIZES=(-b 8 -e 256M -f 2)
# ---- 1. against nccl-tests ----
PERF=""
if [ -n "${NCCL_TESTS_SRC:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ] && [ -e "$NCCL_HOME/include/nccl.h" ]; then
    say "# building nccl-tests from $NCCL_TESTS_SRC"
    rm -rf "$OUT/nccl-tests" && cp -r "$NCCL_TESTS_SRC" "$OUT/nccl-tests"
    # nccl-tests links -lnccl after -L$CUDA_LIB: pip's NCCL has only libnccl.so.2,
    # and the toolkit's libnccl.so would be another NCCL. One directory of links,
    # given as CUDA_LIB, pins this NCCL and the toolkit's cudart.
    TESTS_NCCL=$OUT/nccl-home
    rm -rf "$TESTS_NCCL" && mkdir -p "$TESTS_NCCL/lib" &&
        ln -s "$(realpath "$NCCL_HOME/include")" "$TESTS_NCCL/include" &&
        ln -s "$(realpath "$LIB")" "$TESTS_NCCL/lib/libnccl.so" &&
        for f in "$CUDA_HOME"/lib64/libcudart.so "$CUDA_HOME"/lib64/libcudart_static.a; do
            [ -e "$f" ] && ln -s "$(realpath "$f")" "$TESTS_NCCL/lib/$(basename "$f")"
        done
    # only all_reduce_perf, only for the GPUs here: nccl-tests' default builds every
    # binary for every arch (minutes); a lent machine's time is short
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '. ')
    make -C "$OUT/nccl-tests" -j"$(nproc)" MPI=0 CUDA_HOME="$CUDA_HOME" NCCL_HOME="$TESTS_NCCL" CUDA_LIB="$TESTS_NCCL/lib" \
        ${cap:+NVCC_GENCODE="-gencode=arch=compute_$cap,code=sm_$cap"} BIN_FILES_LIST=all_reduce src.build >>"$LOG" 2>&1 &&
        PERF=$OUT/nccl-tests/build/all_reduce_perf
fi
if [ -n "$PERF" ] && [ -x "$PERF" ]; then
    # nccl-tests: one process driving GPUS GPUs (-g); cclforge: GPUS processes, one GPU
    # each; the same warmup and iterations; REPEATS repeats, order rotated, best time kept
    ITERS=${ITERS:-100}
    tools=(theirs ours); IFS=: read -r -a befores <<<"${CCLFORGE_BEFORE:-}"
    for i in "${!befores[@]}"; do tools+=("before$((i + 1))"); done
    for repeat in $(seq 1 "${REPEATS:-2}"); do
        for k in $(seq 0 $((${#tools[@]} - 1))); do
            tool=${tools[$(( (k + repeat) % ${#tools[@]} ))]}
            case $tool in
            theirs) "$PERF" "${SIZES[@]}" -g "$GPUS" -w 10 -n "$ITERS" -c 1 >"$OUT/nccl-tests.$repeat.txt" 2>&1
                    check $? "all_reduce_perf ran (repeat $repeat)" ;;
            ours|before*)
                bin=$CCLFORGE; [ "$tool" != ours ] && bin=${befores[$(( ${tool#before} - 1 ))]}
                "$bin" smoke -n "$GPUS" --lib "$LIB" --ops all_reduce --place out "${SIZES[@]}" -w 10 --iters "$ITERS" \
                    --json >"$OUT/$tool.$repeat.json" 2>"$OUT/$tool.err"
                check $? "cclforge smoke all_reduce ran ($tool, repeat $repeat)" ;;
            esac
        done
    done
    python3 - "$OUT" "${tools[@]}" <<'EOF' | tee -a "$LOG"
import glob, json, sys
out, tools = sys.argv[1], sys.argv[2:]
best = {t: {} for t in tools}  # size -> (time us, algbw, busbw) of the fastest repeat
def keep(t, size, row):
    if size not in best[t] or row[0] < best[t][size][0]:
        best[t][size] = row
for path in glob.glob(out + "/nccl-tests.*.txt"):
    for line in open(path):
        f = line.split()
        if len(f) >= 13 and f[0].isdigit():
            keep("theirs", int(f[0]), (float(f[5]), float(f[6]), float(f[7])))  # out-of-place
for t in tools[1:]:
    for path in glob.glob("%s/%s.*.json" % (out, t)):
        for r in json.load(open(path))["rows"]:
            keep(t, r["bytes"], (r["time_us"], r["algbw_gbps"], r["busbw_gbps"]))
# one rank: busbw is 0 by definition, so time carries the comparison
names = {t: {"theirs": "nccl-tests", "ours": "cclforge"}.get(t, "cclforge " + t) for t in tools}
head = ["size (B)"] + ["%s time (us)" % names[t] for t in tools] + ["%s / nccl-tests time" % names[t] for t in tools[1:]]
head += ["%s busbw" % names[t] for t in tools]
print("| " + " | ".join(head) + " |")
print("|" + "---:|" * len(head))
for size in sorted(set.intersection(*[set(best[t]) for t in tools])):
    cells = [str(size)] + ["%.2f" % best[t][size][0] for t in tools]
    cells += ["%.3f" % (best[t][size][0] / best["theirs"][size][0]) for t in tools[1:]]
    cells += ["%.2f" % best[t][size][2] for t in tools]
    print("| " + " | ".join(cells) + " |")
EOF
else
    say "# nccl-tests not built (give NCCL_TESTS_SRC, and nvcc and nccl.h must be here): comparison skipped"
fi

# ---- 2. every collective, type and reduction on the device, and the device-only flags ----
"$CCLFORGE" smoke -n "$GPUS" --lib "$LIB" -d all -o all -b 1K -e 1M -f 32 --iters 5 >"$OUT/all.txt" 2>&1
check $? "every op, type and reduction on the GPU ($(tail -n1 "$OUT/all.txt"))"
for flags in "-z 1" "-G 2" "-R 1"; do
    "$CCLFORGE" smoke -n "$GPUS" --lib "$LIB" --ops all_reduce,all_gather,alltoall -b 1K -e 4M -f 64 $flags \
        >"$OUT/flags.txt" 2>&1
    check $? "$flags ($(grep -o -m1 '\(graph\|registration\|blocking\)="[^"]*"' "$OUT/flags.txt"); $(tail -n1 "$OUT/flags.txt"))"
done

# ---- 3. the transport proof ----
"$CCLFORGE" smoke -n "$GPUS" --lib "$LIB" --ops all_reduce -b 1M -e 1M --json >"$OUT/transport.json" 2>&1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("# network:", d["network"]); [print("# transport: %d -> %d via %s (%d channels)" % (c["rank"], c["peer"], c["via"], c["channels"])) for c in d["transports"]]' \
    "$OUT/transport.json" | tee -a "$LOG"
if [ "$GPUS" -ge 2 ]; then
    "$CCLFORGE" smoke -n "$GPUS" --lib "$LIB" --ops all_reduce -b 1M -e 1M --expect-transport p2p >"$OUT/p2p.txt" 2>&1
    check $? "--expect-transport p2p between the GPUs of this host"
    NCCL_P2P_DISABLE=1 "$CCLFORGE" smoke -n "$GPUS" --lib "$LIB" --ops all_reduce -b 1M -e 1M --expect-transport p2p \
        >"$OUT/nop2p.txt" 2>&1
    [ $? = 1 ] && grep -q "used another transport" "$OUT/nop2p.txt"
    check $? "with NCCL_P2P_DISABLE=1 the fallback is caught: $(grep -o -m1 'expect-transport p2p: .*' "$OUT/nop2p.txt")"
else
    say "# one GPU: NCCL makes no connection to prove"
fi
grep -q "the device is left in a bad state" "$OUT"/*.txt 2>/dev/null && check 1 "no sticky device error" || check 0 "no sticky device error"
say "# done: $([ $fail = 0 ] && echo 'all checks passed' || echo 'a check FAILED'); files in $OUT"
exit $fail
