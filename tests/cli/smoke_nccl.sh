# cclforge smoke --backend nccl against the machine's real libnccl.so.2 (no GPU here):
# dlopen, ncclGetVersion, the unique id carried to every rank over TCP, then a fast
# init failure in NCCL's own words. Also wrong libraries and bad flags.
. "$(dirname "$0")/lib.sh"
command -v pgrep >/dev/null || { echo "pgrep is missing (apt-get install procps): cannot check for leftover processes"; exit 1; }

MARK="33.$$"
leftovers() { sleep 0.2; pgrep -f -- "--connect-timeout $MARK" >/dev/null && bad "$1: processes left behind" || ok "$1: no processes left behind"; }
NCCL=
t_find_nccl && NCCL=$T_NCCL

run "$CCLFORGE" smoke --help
expect_rc 0 "--help exits 0"
expect_out "--backend nccl\|rccl\|mpi" "--help lists the backends"
expect_out "CCLFORGE_SMOKE_FAULT" "--help documents the fault switch"

if [ -n "$NCCL" ]; then
    # the version its nccl.h says, independent of ncclGetVersion
    banner=$T_NCCL_VERSION CODE=$T_NCCL_CODE
    run "$CCLFORGE" smoke -n 4 --lib "$NCCL" --connect-timeout "$MARK"
    if printf '%s' "$OUT" | grep -q "^RANK_INFO rank=0 local_rank=0 device_count=\"[1-9]"; then
        expect_rc 0 "a GPU machine: the 4-rank nccl run passes"
    else
        echo "# no GPU here: checking up to ncclCommInitRank"
        expect_rc 1 "without a GPU the run fails"
        for r in 0 1 2 3; do
            expect_out "^RANK_INFO rank=$r local_rank=$r nccl_version=\"$CODE\"" "rank $r: ncclGetVersion = $CODE (banner $banner)"
        done
        expect_out "lib_version=\"NCCL $banner \($CODE\)\"" "the version string"
        expect_out "lib_path=\"$NCCL\"" "the library path"
        ids=$(printf '%s\n' "$OUT" | sed -n 's/^RANK_INFO rank=\([0-9]\) .*unique_id_fnv1a="\([0-9a-f]*\)"/\1 \2/p' | sort)
        [ "$(printf '%s\n' "$ids" | wc -l)" -eq 4 ] && [ "$(printf '%s\n' "$ids" | awk '{print $2}' | sort -u | wc -l)" -eq 1 ] \
            && ok "all 4 ranks hold the same unique id ($(printf '%s\n' "$ids" | head -n1 | awk '{print $2}'))" \
            || bad "unique id hashes differ: $ids"
        [ "$(printf '%s\n' "$OUT" | grep -c '^RANK_FAIL rank=[0-3] local_rank=[0-3] reason=".*ncclCommInitRank failed: ')" -eq 4 ] \
            && ok "every rank reports ncclCommInitRank's failure" || bad "RANK_FAIL per rank"
        expect_out 'ncclCommInitRank failed: [a-z ]+.*\(ncclResult [0-9]+\); last error: ' "in NCCL's words (ncclGetErrorString + ncclGetLastError)"
        expect_out 'cudaGetDeviceCount failed: .*\(error [0-9]+\)' "and the CUDA runtime's"
        expect_err "rank 0 failed while ncclCommInitRank \(4 ranks\)" "stderr names the step"
        [ "$(printf '%s\n' "$OUT" | tail -n 1)" = "0 passed, 4 failed" ] && ok "verdict line" || bad "verdict line"
    fi
    leftovers "nccl run"

    # NCCL's own words, from the NCCL_DEBUG_FILE of each rank (INFO for INIT,NET)
    for r in 0 1 2 3; do
        expect_out "^RANK_INFO rank=$r local_rank=$r nccl_warn=\"Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'\"" \
            "rank $r: NCCL's WARN line from its own debug file"
    done
    mkdir -p "$T_TMP/tmp"
    run env TMPDIR="$T_TMP/tmp" CCLFORGE_SMOKE_FAULT=1:abort:all_reduce "$CCLFORGE" smoke -n 2 --lib "$NCCL" --connect-timeout "$MARK"
    [ -z "$(ls -A "$T_TMP/tmp")" ] && ok "the ranks' NCCL logs are removed, even of a killed rank" || bad "left in TMPDIR: $(ls -A "$T_TMP/tmp")"

    run "$CCLFORGE" smoke -n 2 --lib "$NCCL" --json --connect-timeout "$MARK"
    expect_json "d['schema'] == 'cclforge.smoke/2' and d['backend'] == 'nccl' and d['launcher'] == 'local'" "JSON names backend and launcher"
    expect_json "d['ok'] or (len(d['failures']) == 2 and 'ncclCommInitRank' in d['failures'][0]['reason'])" "JSON failures carry NCCL's words"
    expect_json "d['ok'] or d['aborted']" "JSON: aborted, as with mpirun"
    expect_json "d['rank_info']['0']['unique_id_fnv1a'] == d['rank_info']['1']['unique_id_fnv1a']" "JSON: same unique id on both ranks"

    # without --lib: what the loader picks (ld.so.cache here), and the runtime found next to it
    if ldconfig -p | grep -q "libnccl.so.2 .*=> $NCCL\$"; then
        run "$CCLFORGE" smoke -n 2 --connect-timeout "$MARK"
        expect_out "^RANK_INFO rank=1 local_rank=1 lib_path=\"$NCCL\"" "without --lib the loader's libnccl.so.2 is used"
        expect_out "^RANK_INFO rank=0 local_rank=0 runtime_path=\"$(dirname "$NCCL")/libcudart.so" "the CUDA runtime beside it is used"
    fi
    run "$CCLFORGE" smoke -n 2 --lib "$NCCL" --runtime /nonexistent/libcudart.so.13 --connect-timeout "$MARK"
    expect_rc 1 "a missing --runtime fails"
    expect_out "no cuda runtime could be loaded \(give --runtime PATH\); tried:.*/nonexistent/libcudart.so.13" "and says what was tried"

    # torchrun's variables: two processes, the id over MASTER_ADDR:MASTER_PORT+1
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1] - 1)')
    for r in 0 1; do
        RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT \
            "$CCLFORGE" smoke --lib "$NCCL" --connect-timeout "$MARK" >"$T_TMP/tr$r.out" 2>&1 &
    done
    wait
    OUT=$(cat "$T_TMP/tr0.out" "$T_TMP/tr1.out")
    expect_out "launcher torchrun" "torchrun is detected"
    h0=$(sed -n 's/.*rank=0 .*unique_id_fnv1a="\(.*\)"/\1/p' "$T_TMP/tr0.out")
    h1=$(sed -n 's/.*rank=1 .*unique_id_fnv1a="\(.*\)"/\1/p' "$T_TMP/tr1.out")
    [ -n "$h0" ] && [ "$h0" = "$h1" ] && ok "under torchrun's variables both ranks hold the same id" || bad "torchrun ids: '$h0' '$h1'"
    expect_out 'rank=0 local_rank=0 rendezvous_listen="\[::\]:[0-9]+ \(all addresses\)"' "rank 0 listens on every address of its port"
    expect_out 'rank=0 local_rank=0 rendezvous_advertised="127.0.0.1 \(here 127.0.0.1\)"' "and says what it advertised"
    expect_out 'rank=1 local_rank=1 rendezvous_reached="127.0.0.1"' "rank 1 says where it reached rank 0"

    # --json under a launcher with NCCL printing on stdout: stdout still holds only the document
    for r in 0 1; do
        RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT NCCL_DEBUG=INFO NCCL_DEBUG_FILE=/dev/stdout \
            "$CCLFORGE" smoke --lib "$NCCL" --json --connect-timeout "$MARK" >"$T_TMP/js$r.out" 2>"$T_TMP/js$r.err" &
    done
    wait
    OUT=$(cat "$T_TMP/js0.out")
    expect_json "d['schema'] == 'cclforge.smoke/2' and d['role'] == 'rank' and d['rank'] == 0" "rank 0's stdout is one JSON document"
    grep -q "NCCL INFO" "$T_TMP/js0.err" && ok "NCCL's own lines went to stderr" || bad "NCCL lines: $(head -c 300 "$T_TMP/js0.err")"

    # one rank started for another world size: named at once on both sides (it was "Protocol error")
    RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT \
        "$CCLFORGE" smoke --lib "$NCCL" --connect-timeout "$MARK" >"$T_TMP/ws0.out" 2>&1 &
    RANK=1 WORLD_SIZE=3 LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT \
        "$CCLFORGE" smoke --lib "$NCCL" --connect-timeout "$MARK" >"$T_TMP/ws1.out" 2>&1 &
    wait
    OUT=$(cat "$T_TMP/ws0.out")
    expect_out 'world size mismatch: rank 0 runs 2 ranks, but rank 1 \(127.0.0.1\) was started for 3' "rank 0 names the world-size mismatch"
    OUT=$(cat "$T_TMP/ws1.out")
    expect_out 'refused by rank 0: world size mismatch' "rank 1 is told why"
    expect_no_out 'Protocol error' "not as a protocol error"

    # under mpirun the id goes by MPI_Bcast (through the libmpi smoke loads)
    if t_open_mpi; then
        root=""; [ "$(id -u)" = 0 ] && root="--allow-run-as-root"
        run env OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo \
            mpirun $root --oversubscribe -n 2 "$CCLFORGE" smoke --lib "$NCCL" --connect-timeout "$MARK"
        h=$(printf '%s\n' "$OUT" | sed -n 's/.*unique_id_fnv1a="\(.*\)"/\1/p' | sort -u)
        [ "$(printf '%s\n' "$OUT" | grep -c unique_id_fnv1a)" -eq 2 ] && [ "$(printf '%s\n' "$h" | wc -l)" -eq 1 ] \
            && ok "under mpirun the id travels by MPI_Bcast" || bad "mpirun ids: $h"
    fi
    leftovers "launchers"
else
    t_skip_part "the real-NCCL part: no libnccl.so.2 with its nccl.h on this machine"
fi

# wrong libraries
run "$CCLFORGE" smoke -n 2 --lib /nonexistent/libnccl.so.2 --connect-timeout "$MARK"
expect_rc 1 "a missing --lib fails"
expect_out "cannot load the comm library /nonexistent/libnccl.so.2: .*No such file" "and says which and why"
ZLIB=$(ldconfig -p | awk '/libz\.so\.1 / {print $NF; exit}')
run "$CCLFORGE" smoke -n 2 --lib "$ZLIB" --connect-timeout "$MARK"
expect_rc 1 "a library without the NCCL API fails"
expect_out "does not provide the NCCL C API \(missing ncclGetVersion" "and says so"
run "$CCLFORGE" smoke --backend rccl --lib /nonexistent/librccl.so.1
expect_rc 1 "rccl with a missing library fails"
expect_err "librccl.so.1" "and names it"
leftovers "wrong libraries"

# bad flags: usage errors, exit 2, nothing started
for args in "--backend cuda" "-b 1X" "-b 2M -e 1M" "--ops hypercube" "-d fp8" "-n 0" "-n two" "-c x" \
            "--place sideways" "--timeout 0" "extra" "--frobnicate" "-f 0.5" "-f 1.5" "-o mulsum" "-r x" "-a 4" \
            "-z 2" "-G -1" "-R 2" "--pattern ring" "--expect-transport nvlink" "--min-busbw x" "-i 0" "-e"; do
    run "$CCLFORGE" smoke $args
    expect_rc 2 "'$args' is a usage error"
done
expect_err "-e needs a value" "a missing value is named"
run "$CCLFORGE" smoke --ops hypercube
expect_err "'hypercube' is not a collective" "an unknown collective is named"
run "$CCLFORGE" smoke --pattern ring
expect_err "--pattern 'ring': expected all, intra, inter, pairwise, bisect" "an unknown pattern lists the words"
t_end
