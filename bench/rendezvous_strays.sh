#!/usr/bin/env bash
# What silent connections on rank 0's port cost a 2-rank `doctor --gather`
# (1,000 of them should add under 1 s). Each repeat starts rank 0 by hand
# as a launcher would (CCLFORGE_RANK ... CCLFORGE_PORT), then a stranger
# (tests/fixtures/rdv_stranger.py) opens N connections that never speak, then,
# once all are open, rank 1; the time is rank 0's start to both ranks' exit, the
# strangers' own connecting included (given apart). The row of 0 strays is the
# normal path: the same two ranks with nobody else on the port.
#   bash bench/rendezvous_strays.sh            (after scripts/build.sh)
#   CCLFORGE=/other/build/cclforge bash bench/rendezvous_strays.sh   (before/after)
# RUNS (default 7) repeats per N, STRAYS (default "0 100 1000"), TIMEOUT (the
# gather's --timeout, default 20). A failed repeat ends that N's repeats. Results:
# docs/bench.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
bench_cclforge
RUNS=${RUNS:-7}
STRAYS=${STRAYS:-"0 100 1000"}
TIMEOUT=${TIMEOUT:-20}
# the interpreter itself, not a pyenv shim, and -S (no site: its .pth files cost
# ~0.7 s here): the strangers' start is part of what is timed
PY=$(python3 -c 'import sys; print(sys.executable)')
STRANGER=("$PY" -S tests/fixtures/rdv_stranger.py)
G=(doctor --gather --no-python --no-nvidia --timeout "$TIMEOUT")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
rank() { # rank R PORT
    env CCLFORGE_RANK=$1 CCLFORGE_WORLD_SIZE=2 CCLFORGE_LOCAL_RANK=$1 CCLFORGE_MASTER_ADDR=127.0.0.1 \
        CCLFORGE_PORT=$2 CCLFORGE_SECRET=$SECRET "$CCLFORGE" "${G[@]}" >/dev/null 2>&1
}
# one repeat: prints "WALL_MS CONNECT_MS RC"
one_gather() {
    local n=$1 port t0 t1 c0 c1 r0 r1 s=
    port=$(free_port)
    rm -f "$tmp/ready"
    t0=$(now_ms)
    rank 0 "$port" &
    local p0=$!
    c0=$(now_ms)
    if [ "$n" -gt 0 ]; then
        "${STRANGER[@]}" silent 127.0.0.1 "$port" "$n" --ready "$tmp/ready" --hold 120 &
        s=$!
        while [ ! -e "$tmp/ready" ] && kill -0 "$s" 2>/dev/null; do sleep 0.005; done
    fi
    c1=$(now_ms)
    rank 1 "$port"; r1=$?
    wait "$p0"; r0=$?
    t1=$(now_ms)
    [ -n "$s" ] && { kill "$s" 2>/dev/null; wait "$s" 2>/dev/null; }
    [ "$n" -gt 0 ] || c1=$c0
    echo "$((t1 - t0)) $((c1 - c0)) $((r0 | r1))"
}

bench_header "2-rank doctor --gather with silent connections on rank 0's port"
echo "cclforge: $CCLFORGE ($(git -C "$(dirname "$CCLFORGE")" rev-parse --short HEAD 2>/dev/null || echo '?')); runs: $RUNS; --timeout $TIMEOUT"
printf '%-10s %12s %12s %14s %12s  %s\n' "silent" "median ms" "added ms" "connecting ms" "added less" "failed repeats"
base=""
for n in $STRAYS; do
    : >"$tmp/walls"
    : >"$tmp/conns"
    fails=0
    for ((i = 0; i < RUNS; i++)); do
        read -r wall conn rc < <(one_gather "$n")
        echo "$wall" >>"$tmp/walls"
        echo "$conn" >>"$tmp/conns"
        if [ "$rc" != 0 ]; then
            fails=$((fails + 1))
            break # one failure is the answer; do not wait out the timeout again
        fi
    done
    m=$(median <"$tmp/walls")
    c=$(median <"$tmp/conns")
    [ -z "$base" ] && base=$m
    added=$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.0f", a - b }')
    less=$(awk -v a="$added" -v c="$c" 'BEGIN { printf "%.0f", a - c }')
    printf '%-10s %12s %12s %14s %12s  %s\n' "$n" "$m" "$added" "$c" "$less" \
        "$([ "$fails" = 0 ] && echo "0 of $RUNS" || echo "repeat $((i + 1)) failed (exit 1 after $m ms)")"
done
