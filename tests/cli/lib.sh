# Shared helpers for CLI tests: run the real binary, assert on exit code and output.
# Each test script sources this, runs checks (ok/bad and the expect_* helpers),
# and ends with `t_end`, whose status is the script's.
set -u
: "${CCLFORGE:?CCLFORGE must point at the built binary}"
T_PASS=0
T_FAIL=0
T_SKIPPED_PARTS=""
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-cli-XXXXXX")
trap '[ -n "${CCLFORGE_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT

# run CMD...: sets RC, OUT (stdout), ERR (stderr)
run() {
    OUT=$("$@" 2>"$T_TMP/.stderr"); RC=$?
    ERR=$(cat "$T_TMP/.stderr")
}
ok()   { T_PASS=$((T_PASS + 1)); echo "ok - $1"; }
bad()  { T_FAIL=$((T_FAIL + 1)); echo "not ok - $1"; echo "  rc=$RC"; echo "  stdout: ${OUT:0:2000}"; echo "  stderr: ${ERR:0:2000}"; }
expect_rc()      { [ "$RC" -eq "$1" ] && ok "$2" || bad "$2 (wanted exit $1)"; }
expect_out()     { printf '%s' "$OUT" | grep -qE -- "$1" && ok "$2" || bad "$2 (stdout lacks /$1/)"; }
expect_no_out()  { printf '%s' "$OUT" | grep -qE -- "$1" && bad "$2 (stdout has /$1/)" || ok "$2"; }
expect_err()     { printf '%s' "$ERR" | grep -qE -- "$1" && ok "$2" || bad "$2 (stderr lacks /$1/)"; }
expect_no_err()  { printf '%s' "$ERR" | grep -qE -- "$1" && bad "$2 (stderr has /$1/)" || ok "$2"; }
# expect_json EXPR DESC: python expression over `d` (the parsed stdout) must be true
expect_json() {
    if printf '%s' "$OUT" | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($1) else 1)" 2>/dev/null
    then ok "$2"; else bad "$2 (json: $1)"; fi
}
# traced CMD...: `run` under strace, every execve of cclforge and its children
# in $T_TMP/trace, when strace works here (T_TRACE=1); else plain `run`
# (T_TRACE=0, and $T_TMP/trace stays empty).
traced() {
    if [ -z "${T_TRACE:-}" ]; then
        if strace -f -qq -e trace=execve -o /dev/null true 2>/dev/null; then T_TRACE=1; else T_TRACE=0; fi
    fi
    : > "$T_TMP/trace"
    # LeakSanitizer stops the world with ptrace, which a traced process cannot: off under strace.
    if [ "$T_TRACE" = 1 ]; then
        run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=execve -o "$T_TMP/trace" "$@"
    else
        run "$@"
    fi
}
# t_skip REASON: the whole script cannot run here (a prerequisite is missing).
# Exit 77 is CTest's SKIP_RETURN_CODE: the run shows "Skipped", not "Passed".
t_skip() {
    echo "SKIP: $1"
    exit 77
}
# t_find_cuda: this machine's CUDA toolkit, looked for as doctor looks
# (src/gpu/vendor.c): CUDA_HOME, CUDA_PATH, the nvcc on PATH, /usr/local/cuda,
# /usr/local/cuda-* (newest first), /opt/cuda; a toolkit holds include/cuda.h
# or bin/nvcc. Sets T_CUDA (its root), T_NVCC (its nvcc, "" when it has none)
# and T_CUDA_VERSION ("13.0", from cuda.h's CUDA_VERSION; "" without it);
# returns 1 when there is none.
t_find_cuda() {
    local c nvcc v
    nvcc=$(command -v nvcc 2>/dev/null)
    T_CUDA= T_NVCC= T_CUDA_VERSION=
    for c in "${CUDA_HOME:-}" "${CUDA_PATH:-}" "${nvcc:+${nvcc%/bin/nvcc}}" /usr/local/cuda \
        $(ls -d /usr/local/cuda-* 2>/dev/null | sort -rV) /opt/cuda; do
        [ -n "$c" ] && { [ -f "$c/include/cuda.h" ] || [ -x "$c/bin/nvcc" ]; } || continue
        T_CUDA=$c
        [ -x "$c/bin/nvcc" ] && T_NVCC=$c/bin/nvcc
        v=$(sed -n 's/^#define CUDA_VERSION  *\([0-9][0-9]*\).*/\1/p' "$c/include/cuda.h" 2>/dev/null | head -n 1)
        [ -n "$v" ] && T_CUDA_VERSION=$((v / 1000)).$((v % 1000 / 10))
        return 0
    done
    return 1
}
# t_find_nccl: this machine's libnccl.so.2 (in the toolkit's lib64/, lib/ or
# targets/<arch>-linux/lib/, then where ld.so.cache and the system library
# directories have it) and its version read from the nccl.h beside it
# (NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, NCCL_VERSION_CODE): an oracle that
# does not ask cclforge. Sets T_NCCL (the library, its directory canonical),
# T_NCCL_VERSION ("2.28.9"), T_NCCL_CODE (22809) and T_NCCL_H; returns 1 when
# no library with a readable nccl.h beside it is found.
t_find_nccl() {
    local lib dir h real maj min pat code cands=()
    T_NCCL= T_NCCL_VERSION= T_NCCL_CODE= T_NCCL_H=
    if t_find_cuda; then
        for dir in lib64 lib "targets/$(uname -m)-linux/lib"; do cands+=("$T_CUDA/$dir/libnccl.so.2"); done
    fi
    while read -r lib; do cands+=("$lib"); done < <(/sbin/ldconfig -p 2>/dev/null | sed -n 's/^[[:space:]]*libnccl\.so\.2 (.*) => //p')
    for dir in "/usr/lib/$(uname -m)-linux-gnu" /usr/lib64 /usr/lib /usr/local/lib; do cands+=("$dir/libnccl.so.2"); done
    for lib in "${cands[@]}"; do
        [ -f "$lib" ] || continue
        dir=$(cd "$(dirname "$lib")" && pwd -P) || continue
        for h in "${dir%/*}/include/nccl.h" "${dir%/*/*}/include/nccl.h" ${T_CUDA:+"$T_CUDA/include/nccl.h"}; do
            [ -f "$h" ] || continue
            maj=$(sed -n 's/^#define NCCL_MAJOR  *\([0-9][0-9]*\).*/\1/p' "$h")
            min=$(sed -n 's/^#define NCCL_MINOR  *\([0-9][0-9]*\).*/\1/p' "$h")
            pat=$(sed -n 's/^#define NCCL_PATCH  *\([0-9][0-9]*\).*/\1/p' "$h")
            code=$(sed -n 's/^#define NCCL_VERSION_CODE  *\([0-9][0-9]*\).*/\1/p' "$h")
            [ -n "$maj" ] && [ -n "$min" ] && [ -n "$pat" ] && [ -n "$code" ] || continue
            # a library named for its version (libnccl.so.2.28.9) must be the header's
            real=$(readlink -f "$lib")
            case ${real##*/} in libnccl.so.*.*.*) [ "${real##*/}" = "libnccl.so.$maj.$min.$pat" ] || continue ;; esac
            T_NCCL=$dir/libnccl.so.2 T_NCCL_VERSION=$maj.$min.$pat T_NCCL_CODE=$code T_NCCL_H=$h
            return 0
        done
    done
    return 1
}
# t_torch_inputs: PyPI's torch wheel and its pinned NCCL wheel from the cache
# scripts/torch-cache.sh keeps (fetched once) in $site, the CUDA toolkit in
# $cuda (CUDA_HOME exported); NCCL_HOME, LIBTORCH and the ROCm/DTK roots unset.
# Skips (77) when either cannot be had.
t_torch_inputs() {
    site=$(bash "${CCLFORGE_SOURCE_DIR:?}/scripts/torch-cache.sh" 2>"$T_TMP/torch-cache.log" | tail -n 1)
    if [ -z "$site" ] || [ ! -d "$site/torch/include" ] || [ ! -f "$site/nvidia/nccl/include/nccl.h" ]; then
        cat "$T_TMP/torch-cache.log"
        t_skip "scripts/torch-cache.sh could not provide torch 2.15.0 and nvidia-nccl-cu13 2.30.7 (PyPI is needed once)"
    fi
    t_find_cuda; cuda=$T_CUDA
    [ -f "$cuda/include/cuda_runtime_api.h" ] || t_skip "no CUDA toolkit headers (set CUDA_HOME): torch's CUDA-named headers need them"
    export CUDA_HOME=$cuda
    unset NCCL_HOME LIBTORCH ROCM_PATH DTK_HOME
}
# t_cuda_libs: LD_LIBRARY_PATH with the toolkit's libraries for torch's import
# (cudart, cuBLAS, ...) but never its libnccl: torch's RPATH finds the pinned
# wheel's, and so must everything else.
t_cuda_libs() {
    mkdir -p "$T_TMP/cuda-libs"
    for f in "$cuda"/lib64/*; do case ${f##*/} in libnccl*) ;; *) ln -sf "$f" "$T_TMP/cuda-libs/" ;; esac; done
    export LD_LIBRARY_PATH="$T_TMP/cuda-libs"
}
# t_open_mpi: Open MPI's mpirun and its libmpi.so.40 (which smoke --backend mpi
# dlopens under it) are on this machine.
t_open_mpi() {
    command -v mpirun >/dev/null && /sbin/ldconfig -p 2>/dev/null | grep -q 'libmpi\.so\.40 '
}
# t_inflate_engine: the wheel tests run once per inflate engine (ctest's
# cli.<name>.zlib and cli.<name>.isal set CCLFORGE_INFLATE). Skips (77) when
# the engine asked for cannot run in this build (ISA-L not built in),
# saying why; T_INFLATE is the engine every report
# must name ("" when the variable is unset: the build's own choice).
t_inflate_engine() {
    T_INFLATE=${CCLFORGE_INFLATE:-}
    [ -n "$T_INFLATE" ] || return 0
    local out rc
    out=$("$CCLFORGE" wheel verify --json "$T_TMP/probe-1.0-py3-none-any.whl" 2>/dev/null); rc=$?
    [ "$rc" -ne 2 ] || t_skip "$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["error"])')"
    echo "inflate engine: $T_INFLATE"
}
# expect_engine DESC: the JSON report (in $OUT) names the engine asked for.
expect_engine() {
    [ -z "${T_INFLATE:-}" ] || expect_json "d.get('inflate') == '$T_INFLATE'" "$1: inflated by $T_INFLATE"
}
# t_skip_part REASON: one part of the script cannot run here (an optional
# cross-check's tool, a real library this machine lacks); the rest goes on and
# t_end names every part that did not run. A script whose main prerequisite is
# missing uses t_skip instead.
t_skip_part() {
    echo "SKIP (part): $1"
    T_SKIPPED_PARTS="$T_SKIPPED_PARTS
  skipped part: $1"
}
# t_end: the counts and every part that did not run; returns 1 when a check
# failed, 77 (skipped) when nothing was asserted at all, else 0.
t_end() {
    echo "$T_PASS passed, $T_FAIL failed${T_SKIPPED_PARTS:+; parts that did not run:}$T_SKIPPED_PARTS"
    [ "$T_FAIL" -eq 0 ] || return 1
    if [ "$T_PASS" -eq 0 ]; then
        echo "SKIP: nothing was asserted${T_SKIPPED_PARTS:+ (every part that could assert was skipped)}"
        return 77
    fi
}
# expect_smoke_items N BACKEND LABEL: the JSON report (in $OUT) of a passing
# `wheel verify --smoke N --backend BACKEND` has one passed check per harness
# item (N ranks), DeviceMesh not applicable below 4 ranks, and nothing else
# not applicable or skipped among them.
T_SMOKE_ITEMS="backend all_reduce broadcast all_gather reduce_scatter send_recv barrier async subgroup device_mesh ddp fsdp2"
expect_smoke_items() {
    local n=$1 backend=$2 label=$3 item
    for item in $T_SMOKE_ITEMS; do
        if [ "$item" = device_mesh ] && [ "$n" -lt 4 ]; then
            expect_json '[(c["status"], c["detail"]) for c in d["checks"] if c["name"] == "smoke device_mesh"] == [("n/a", "not applicable: needs at least 4 ranks, this run has '"$n"'")]' \
                "$label: smoke device_mesh is not applicable with $n ranks, and says why"
        else
            expect_json '[c["status"] for c in d["checks"] if c["name"] == "smoke '"$item"'"] == ["ok"] and any(c["name"] == "smoke '"$item"'" and c["detail"].startswith("'"$n"' ranks, '"$backend"': ") for c in d["checks"])' \
                "$label: smoke $item passed on $n ranks ($backend)"
        fi
    done
    expect_json 'sorted(c["name"][6:] for c in d["checks"] if c["name"].startswith("smoke ")) == sorted("'"$T_SMOKE_ITEMS"'".split())' "$label: one check per item, no other"
}

# Hosts made of network namespaces on one switch, for the multi-host tests.
# t_netns_switch NS SUBNET NAME...: a bridge in namespace NS-sw; host i is
# namespace NS-h<i> with e0 = SUBNET.(i+1)/24 on a veth into the bridge
# (NS-a<i> / NS-b<i>, the switch end NS-b<i>, where tc shapes a host's link
# from the other side), lo up, and its own /etc/hosts (`ip netns exec` mounts
# /etc/netns/NS-h<i>/hosts over it) naming every host by NAME; with
# T_NETNS_SELF=127.0.1.1 a host's own name is that address, as Debian and
# Ubuntu write it. T_NETNS_NAMES and T_NETNS_PREFIX hold the names and NS
# for t_on_host and t_netns_mpirun.
# t_netns_remove NS: removes the hosts, their /etc/netns entries and the switch.
t_netns_switch() {
    local ns=$1 subnet=$2 h o
    shift 2
    T_NETNS_NAMES=("$@") T_NETNS_PREFIX=$ns
    ip netns add "$ns-sw"
    ip netns exec "$ns-sw" ip link add br0 type bridge
    ip netns exec "$ns-sw" ip link set br0 up
    for h in "${!T_NETNS_NAMES[@]}"; do
        ip netns add "$ns-h$h"
        ip link add "$ns-a$h" type veth peer name "$ns-b$h"
        ip link set "$ns-a$h" netns "$ns-h$h"
        ip link set "$ns-b$h" netns "$ns-sw"
        ip netns exec "$ns-h$h" ip link set "$ns-a$h" name e0
        ip netns exec "$ns-h$h" ip addr add "$subnet.$((h + 1))/24" dev e0
        ip netns exec "$ns-h$h" ip link set e0 up
        ip netns exec "$ns-h$h" ip link set lo up
        ip netns exec "$ns-sw" ip link set "$ns-b$h" master br0
        ip netns exec "$ns-sw" ip link set "$ns-b$h" up
        mkdir -p "/etc/netns/$ns-h$h"
        {
            echo "127.0.0.1 localhost"
            for o in "${!T_NETNS_NAMES[@]}"; do
                if [ "$o" = "$h" ] && [ -n "${T_NETNS_SELF:-}" ]; then echo "$T_NETNS_SELF ${T_NETNS_NAMES[$o]}"
                else echo "$subnet.$((o + 1)) ${T_NETNS_NAMES[$o]}"; fi
            done
        } >"/etc/netns/$ns-h$h/hosts"
    done
}
t_netns_remove() {
    local ns=$1 h
    for h in "${!T_NETNS_NAMES[@]}"; do
        ip netns del "$ns-h$h" 2>/dev/null
        rm -rf "/etc/netns/$ns-h$h"
    done
    ip netns del "$ns-sw" 2>/dev/null
}
# t_on_host NS H CMD...: CMD in host H's network and mount namespaces, under its hostname
t_on_host() {
    local ns=$1 h=$2
    shift 2
    ip netns exec "$ns-h$h" unshare --uts sh -c 'hostname "$0"; exec "$@"' "${T_NETNS_NAMES[$h]}" "$@"
}

# t_mkwheel NAME DIR [REQUIRES-DIST...]: a wheel NAME 1.0 of DIR's files, for
# this Python's tag on linux_x86_64, its RECORD with real digests, each
# REQUIRES-DIST in its METADATA; its path (under $T_TMP) on stdout.
t_mkwheel() {
    local tag
    tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
    python3 - "$2" "$T_TMP/$1-1.0-$tag-$tag-linux_x86_64.whl" "$tag" "$1" "${@:3}" <<'PY'
import base64, hashlib, os, sys, zipfile
root, out, tag, name = sys.argv[1:5]
files = {}
for d, _, names in os.walk(root):
    for n in names:
        p = os.path.join(d, n)
        files[os.path.relpath(p, root)] = open(p, "rb").read()
di = "%s-1.0.dist-info/" % name
files[di + "METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name + "".join("Requires-Dist: %s\n" % r for r in sys.argv[5:])).encode()
files[di + "WHEEL"] = ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: %s-%s-linux_x86_64\n" % (tag, tag)).encode()
rec = []
with zipfile.ZipFile(out, "w") as z:
    for n, data in sorted(files.items()):
        z.writestr(n, data)
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rec.append("%s,sha256=%s,%d" % (n, h, len(data)))
    rec.append(di + "RECORD,,")
    z.writestr(di + "RECORD", "\n".join(rec) + "\n")
PY
    printf '%s' "$T_TMP/$1-1.0-$tag-$tag-linux_x86_64.whl"
}
# t_netns_mpirun SUBNET [SLOW_HOST]: Open MPI across the hosts t_netns_switch
# made. mpirun starts its daemons on the other hosts through an rsh agent
# ($T_TMP/agent): here, into their namespaces, under their hostnames. Sets
# T_MPIRUN (run it on host 0) for one rank a host over SUBNET. The hosts share
# this machine's cores, which no cluster's do: a shaped host's ranks spin in
# MPI while they wait for its link and would take the CPU from the pair beside
# them, so SLOW_HOST's ranks run at nice 19, and idle ranks yield.
t_netns_mpirun() {
    local subnet=$1 slow=${2:-} h
    {
        echo '#!/bin/sh'
        echo 'while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done'
        echo 'host=$1; shift; nice=0'
        echo 'case "$host" in'
        for h in "${!T_NETNS_NAMES[@]}"; do echo "${T_NETNS_NAMES[$h]}) ns=$T_NETNS_PREFIX-h$h ;;"; done
        echo '*) echo "agent: no host $host" >&2; exit 1 ;;'
        echo 'esac'
        [ -z "$slow" ] || echo "[ \"\$host\" = $slow ] && nice=19"
        echo 'exec nice -n "$nice" ip netns exec "$ns" unshare --uts sh -c '"'"'hostname "$0"; exec sh -c "$*"'"'"' "$host" "$@"'
    } >"$T_TMP/agent"
    chmod +x "$T_TMP/agent"
    T_MPIRUN=(mpirun --allow-run-as-root --oversubscribe --host "$(IFS=,; echo "${T_NETNS_NAMES[*]}")"
        -n "${#T_NETNS_NAMES[@]}" --mca plm_rsh_agent "$T_TMP/agent" --mca btl self,tcp
        --mca btl_tcp_if_include "$subnet.0/24" --mca oob_tcp_if_include "$subnet.0/24" --mca mpi_yield_when_idle 1)
}
# t_netns_usable NAME: root, ip, and a network namespace can be made here
t_netns_usable() {
    [ "$(id -u)" = 0 ] && command -v ip >/dev/null && ip netns add "$1-probe" 2>/dev/null && ip netns del "$1-probe"
}
