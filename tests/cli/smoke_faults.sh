# cclforge smoke failure handling: a wrong element, a killed, exiting, hung or slow rank
# (the CCLFORGE_SMOKE_FAULT switch), a stray connection to the supervisor, Ctrl-C; each
# a clear verdict, the right exit code, and no processes (or zombies) left behind; with
# ranks cclforge starts itself (nccl) and with mpirun (mpi).
. "$(dirname "$0")/lib.sh"
command -v pgrep >/dev/null || { echo "pgrep is missing (apt-get install procps): cannot check for leftover processes"; exit 1; }

MARK="32.$$"
leftovers() { sleep 0.3; pgrep -f -- "--connect-timeout $MARK" >/dev/null && bad "$1: processes left behind" || ok "$1: no processes left behind"; }
# the ranks of the last run (their RANK_INFO pid lines) still in the process table, zombies included
lingering() {
    local n=0
    for p in $(printf '%s\n' "$OUT" | sed -n 's/^RANK_INFO rank=[0-9]* local_rank=[0-9]* pid="\([0-9]*\)"/\1/p'); do
        [ -e "/proc/$p" ] && n=$((n + 1))
    done
    echo "$n"
}
last_line() { printf '%s\n' "$OUT" | tail -n 1; }

if t_open_mpi; then
    MPI=(smoke --backend mpi -n 4 -b 1K -e 4K --iters 2 -w 1 --timeout 2 --connect-timeout "$MARK")

    # 2 sizes x 2 placements of all_reduce are wrong; every other test passes
    CCLFORGE_SMOKE_FAULT=1:corrupt:all_reduce run "$CCLFORGE" "${MPI[@]}"
    expect_rc 1 "a wrong element fails the run"
    expect_out 'RANK_FAIL rank=2 local_rank=2 op=all_reduce bytes=1024 dtype=float redop=sum place=out time_us=[0-9.]+ reason="index 128: expected [0-9]+, got [0-9]+' \
        "the failure names rank, op, size, index, expected and got"
    expect_out " 1024 +256 +float +sum +- +all_reduce +out .* 4 +FAIL " "the table row shows 4 wrong elements (one per rank)"
    [ "$(last_line)" = "32 passed, 4 failed" ] && ok "only the all_reduce tests failed" || bad "verdict line: $(last_line)"
    expect_out "^verdict: FAIL: 4 of 36 tests had wrong results \(first: all_reduce float sum 1024 B out-of-place" "the verdict names the first"
    leftovers "corrupt"

    # a rank that only receives (broadcast from rank 0): its result is what comes out wrong
    CCLFORGE_SMOKE_FAULT=1:corrupt:broadcast run "$CCLFORGE" "${MPI[@]}" --ops broadcast
    expect_rc 1 "1:corrupt:broadcast injects a fault (it injected nothing)"
    expect_out 'RANK_FAIL rank=1 local_rank=1 op=broadcast bytes=1024 dtype=float redop=none place=out .*reason="index 128: expected' \
        "rank 1's received data is wrong"

    run env CCLFORGE_SMOKE_FAULT=1:abort:all_gather "$CCLFORGE" "${MPI[@]}"
    expect_rc 1 "a killed rank fails the run"
    expect_out 'RANK_FAIL rank=1 local_rank=1 reason="rank 1 died.*while (all_gather float 1024 B out-of-place|warm-up of all_gather)' \
        "the dead rank and what it was doing are named"
    expect_out 'RANK_FAIL rank=0 .*stopped after rank 1 failed' "the others are named as stopped"
    expect_err "rank 1 failed while" "stderr says it too"
    leftovers "abort"

    run env CCLFORGE_SMOKE_FAULT=2:exit:reduce_scatter "$CCLFORGE" "${MPI[@]}" --json
    expect_rc 1 "an exiting rank fails the run"
    expect_json "d['aborted'] and d['failures'][0]['rank'] == 2 and 'rank 2 died' in d['failures'][0]['reason']" "JSON: aborted, and rank 2 named"
    leftovers "exit"

    run env CCLFORGE_SMOKE_FAULT=3:hang:broadcast "$CCLFORGE" "${MPI[@]}"
    expect_rc 1 "a hung rank fails the run"
    expect_out 'RANK_FAIL rank=3 local_rank=3 reason="rank 3 hung: no progress for [0-9.]+ s' "the hung rank is named"
    expect_out 'rank 0 was waiting in (broadcast float root 0 1024 B out-of-place|warm-up of broadcast)' "and where the others wait"
    leftovers "hang under mpirun"
    [ "$(printf '%s\n' "$OUT" | grep -c '^RANK_INFO rank=[0-9]* local_rank=[0-9]* pid=')" -eq 4 ] && ok "all 4 ranks said their pid" || bad "rank pids"
    [ "$(lingering)" -eq 0 ] && ok "no rank is left behind, not even a zombie of PID 1, after mpirun was killed" \
        || bad "$(lingering) ranks linger"

    # every verdict is in, then a rank never leaves MPI_Finalize: waited for (a sanitizer's or a big
    # job's teardown takes seconds), then named and killed, never a hang; the results still count
    run env CCLFORGE_SMOKE_FAULT=1:hang:finalize "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce -b 1K -e 1K \
        --iters 2 --connect-timeout "$MARK"
    expect_rc 1 "a rank stuck after its verdict fails the run"
    expect_err "mpirun was still running 20 s after every rank's verdict and was killed: .*rank 1 \(pid [0-9]+\).* had not exited" \
        "the stuck rank is named, with its pid"
    [ "$(last_line)" = "2 passed, 1 failed" ] && ok "the tests passed; the finish failed" || bad "finalize verdict: $(last_line)"
    leftovers "hang in finalize"
    [ "$(lingering)" -eq 0 ] && ok "no rank is left behind after a stuck finish" || bad "$(lingering) ranks linger"
    CCLFORGE_SMOKE_FAULT=1:exit:finalize run "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce -b 1K -e 1K \
        --iters 2 --connect-timeout "$MARK"
    expect_rc 1 "a rank that exits 3 after its verdict fails the run"
    expect_err "mpirun exited with status 3" "and mpirun's status is given"
    CCLFORGE_SMOKE_FAULT=1:slow:finalize run "$CCLFORGE" smoke --backend mpi -n 2
    expect_rc 2 "slow at finalize is refused"
    expect_err "fault '1:slow:finalize': at finalize only abort, hang or exit" "and named"

    # --timeout is per operation: 8 iterations of 0.3 s outlast --timeout 1 and are still progress
    run env CCLFORGE_SMOKE_FAULT=1:slow:all_reduce "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce -b 1K -e 1K \
        --place out --iters 8 -w 1 --timeout 1 --connect-timeout "$MARK"
    expect_rc 0 "a slow test whose every operation is quicker than --timeout passes (it was declared hung)"
    expect_no_out "hung" "nobody is declared hung"
    leftovers "slow"

    # a stray on the supervisor's record port: ignored, no rank loses its place, no wait for it
    CCLFORGE_SMOKE_FAULT=0:slow:all_reduce "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce -b 1K -e 1K \
        --place out --iters 8 -w 1 --connect-timeout "$MARK" >"$T_TMP/stray.out" 2>"$T_TMP/stray.err" &
    SUP=$!
    port=""
    for _ in $(seq 50); do
        port=$(ss -ltnpH 2>/dev/null | awk -v p="pid=$SUP," 'index($0, p) && $4 ~ /^127\.0\.0\.1:/ { sub(/.*:/, "", $4); print $4; exit }')
        [ -n "$port" ] && break
        sleep 0.1
    done
    if [ -n "$port" ]; then
        exec 7<>"/dev/tcp/127.0.0.1/$port" # silent
        exec 8<>"/dev/tcp/127.0.0.1/$port"
        printf '@cclforge-smoke\tD\trank=0\tlocal=0\tt=1\n' >&8 # a forged record
        wait "$SUP"; RC=$?
        OUT=$(cat "$T_TMP/stray.out"); ERR=$(cat "$T_TMP/stray.err")
        expect_rc 0 "the run passes with strays connected to the record port"
        expect_err "ignored connections to the record port: 2 connections never completed a handshake \\(1 silent, 1 not a cclforge client\\), from 127\\.0\\.0\\.1 \\(2\\)" \
            "the strays are counted once, by kind and address, and ignored"
        printf '%s' "$ERR" | grep -q "@cclforge-smoke" && bad "a stray's bytes are repeated" || ok "no byte a stray sent is repeated"
        [ "$(last_line)" = "1 passed, 0 failed" ] && ok "both ranks reported (no place was taken)" || bad "stray verdict: $(last_line)"
        exec 7>&- 8>&-
    else
        bad "the supervisor's record port was not found (ss)"
        wait "$SUP"
    fi
    leftovers "strays"

    # Ctrl-C: the ranks are stopped, and the table and verdict are still printed
    CCLFORGE_SMOKE_FAULT=0:slow:all_reduce "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce,broadcast -b 1K -e 1K \
        --iters 20 -w 1 --connect-timeout "$MARK" >"$T_TMP/int.out" 2>"$T_TMP/int.err" &
    SUP=$!
    sleep 3
    kill -INT "$SUP"
    wait "$SUP"; RC=$?
    OUT=$(cat "$T_TMP/int.out"); ERR=$(cat "$T_TMP/int.err")
    expect_rc 1 "an interrupted run exits 1"
    expect_out "^# cclforge smoke: mpi backend" "the table is printed"
    expect_out "^verdict: FAIL: interrupted by signal 2: the ranks were stopped" "and the verdict says why"
    expect_out "^[0-9]+ passed, [0-9]+ failed$" "and the last line"
    leftovers "Ctrl-C"

    # under the user's own mpirun there is no supervisor: each rank's watchdog stops it
    export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo
    root=""; [ "$(id -u)" = 0 ] && root="--allow-run-as-root"
    run env CCLFORGE_SMOKE_FAULT=1:hang:broadcast mpirun $root --oversubscribe -n 2 "$CCLFORGE" smoke \
        --backend mpi -b 1K -e 1K --timeout 1 --connect-timeout "$MARK"
    [ "$RC" -ne 0 ] && ok "a hung rank under an external mpirun fails the job" || bad "external mpirun hang rc"
    expect_out 'RANK_FAIL rank=1 local_rank=1 reason="rank 1 hung: no progress for [0-9.]+ s .*while (between tests, after all_reduce|warm-up of broadcast)' \
        "its watchdog names it and what it did last"
    leftovers "hang under an external mpirun"
else
    t_skip_part "the mpirun part: mpirun or the MPI plugin is missing"
fi

# ranks cclforge starts itself: a hang and a kill before the comm library starts
run env CCLFORGE_SMOKE_FAULT=1:hang:init "$CCLFORGE" smoke -n 2 --timeout 1 --connect-timeout "$MARK"
expect_rc 1 "a hung rank fails the run"
expect_out 'RANK_FAIL rank=1 local_rank=1 reason="rank 1 hung: no progress' "the hung rank is named"
expect_out 'rank 0 was waiting in unique-id rendezvous over TCP at 127.0.0.1:[0-9]+' "rank 0 waits for it in the rendezvous"
leftovers "hang of a started rank"

run env CCLFORGE_SMOKE_FAULT=0:abort:init "$CCLFORGE" smoke -n 3 --timeout 5 --connect-timeout "$MARK" --json
expect_rc 1 "a killed rank fails the run"
expect_json "d['failures'][0]['rank'] == 0 and 'rank 0 was killed by signal 6 (Aborted)' in d['failures'][0]['reason']" "the signal is named"
expect_json "d['aborted'] and d['failed'] == 3" "JSON: aborted as with mpirun, every rank accounted for"
leftovers "abort of a started rank"

run env CCLFORGE_SMOKE_FAULT=1:explode:all_reduce "$CCLFORGE" smoke -n 2
expect_rc 2 "a malformed fault switch is refused"
expect_err "not abort, hang, exit, corrupt or slow" "and explained"
t_end
