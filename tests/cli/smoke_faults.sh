# cclforge smoke failure handling: a wrong element, a killed rank, an exiting rank and
# a hung rank (the CCLFORGE_SMOKE_FAULT switch), each a clear error, exit 1, and no
# processes left behind; with forked ranks (nccl) and with mpirun (mpi).
. "$(dirname "$0")/lib.sh"
command -v pgrep >/dev/null || { echo "pgrep is missing (apt-get install procps): cannot check for leftover processes"; exit 1; }

MARK="32.$$"
leftovers() { sleep 0.2; pgrep -f -- "--connect-timeout $MARK" >/dev/null && bad "$1: processes left behind" || ok "$1: no processes left behind"; }
timed() { T0=$(date +%s.%N); run "$@"; T1=$(date +%s.%N); SECS=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }'); }
quick() { awk -v s="$SECS" -v l="$1" 'BEGIN { exit !(s < l) }' && ok "$2 within $1 s (took $SECS s)" || bad "$2 took $SECS s"; }

if command -v mpirun >/dev/null && [ -f "$(dirname "$CCLFORGE")/cclforge_smoke_mpi.so" ]; then
    MPI=(smoke --backend mpi -n 4 -b 1K -e 4K --iters 2 -w 1 --timeout 2 --connect-timeout "$MARK")

    CCLFORGE_SMOKE_FAULT=1:corrupt:all_reduce run "$CCLFORGE" "${MPI[@]}"
    expect_rc 1 "a wrong element fails the run"
    expect_out 'RANK_FAIL rank=2 local_rank=2 op=all_reduce bytes=1024 dtype=float place=out reason="index 128: expected [0-9]+, got [0-9]+' \
        "the failure names rank, op, size, index, expected and got"
    expect_out " 1024 +256 +float +all_reduce +out .* 4 +FAIL" "the table row shows 4 wrong elements (one per rank)"
    [ "$(printf '%s\n' "$OUT" | tail -n 1)" = "17 passed, 1 failed" ] && ok "only that test failed" || bad "verdict line"
    leftovers "corrupt"

    timed env CCLFORGE_SMOKE_FAULT=1:abort:all_gather "$CCLFORGE" "${MPI[@]}"
    expect_rc 1 "a killed rank fails the run"
    expect_out 'RANK_FAIL rank=1 local_rank=1 reason="rank 1 died.*while all_gather float 1024 B out-of-place' \
        "the dead rank and what it was doing are named"
    expect_out 'RANK_FAIL rank=0 .*stopped after rank 1 failed' "the others are named as stopped"
    expect_err "rank 1 failed while all_gather" "stderr says it too"
    quick 10 "the killed rank is handled"
    leftovers "abort"

    timed env CCLFORGE_SMOKE_FAULT=2:exit:reduce_scatter "$CCLFORGE" "${MPI[@]}"
    expect_rc 1 "an exiting rank fails the run"
    expect_out 'RANK_FAIL rank=2 local_rank=2 reason="rank 2 died.*reduce_scatter' "the exiting rank is named"
    leftovers "exit"

    timed env CCLFORGE_SMOKE_FAULT=3:hang:broadcast "$CCLFORGE" "${MPI[@]}"
    expect_rc 1 "a hung rank fails the run"
    expect_out 'RANK_FAIL rank=3 local_rank=3 reason="rank 3 hung: no progress for [0-9.]+ s' "the hung rank is named"
    expect_out 'rank 0 was waiting in broadcast float 1024 B out-of-place' "and where the others wait"
    quick 15 "the hang is detected and cleaned up"
    leftovers "hang under mpirun"

    # under the user's own mpirun there is no supervisor: each rank's watchdog stops it
    export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo
    root=""; [ "$(id -u)" = 0 ] && root="--allow-run-as-root"
    timed env CCLFORGE_SMOKE_FAULT=1:hang:broadcast mpirun $root --oversubscribe -n 2 "$CCLFORGE" smoke \
        --backend mpi -b 1K -e 1K --timeout 1 --connect-timeout "$MARK"
    [ "$RC" -ne 0 ] && ok "a hung rank under an external mpirun fails the job" || bad "external mpirun hang rc"
    expect_out 'RANK_FAIL rank=1 local_rank=1 reason="rank 1 hung: no progress for [0-9.]+ s .*while between tests, after all_reduce' \
        "its watchdog names it and what it did last"
    quick 15 "the external hang ends"
    leftovers "hang under an external mpirun"
else
    t_skip_part "the mpirun part: mpirun or the MPI plugin is missing"
fi

# forked ranks: a hang and a kill before the comm library starts
timed env CCLFORGE_SMOKE_FAULT=1:hang:init "$CCLFORGE" smoke -n 2 --timeout 1 --connect-timeout "$MARK"
expect_rc 1 "a hung forked rank fails the run"
expect_out 'RANK_FAIL rank=1 local_rank=1 reason="rank 1 hung: no progress' "the hung forked rank is named"
expect_out 'rank 0 was waiting in unique-id rendezvous over TCP at 127.0.0.1:[0-9]+' "rank 0 waits for it in the rendezvous"
quick 10 "the hung forked rank is stopped"
leftovers "hang of a forked rank"

timed env CCLFORGE_SMOKE_FAULT=0:abort:init "$CCLFORGE" smoke -n 3 --timeout 5 --connect-timeout "$MARK"
expect_rc 1 "a killed forked rank fails the run"
expect_out 'RANK_FAIL rank=0 local_rank=0 reason="rank 0 was killed by signal 6 \(Aborted\)' "the signal is named"
quick 10 "the others stop at once"
leftovers "abort of a forked rank"

run env CCLFORGE_SMOKE_FAULT=1:explode:all_reduce "$CCLFORGE" smoke -n 2
expect_rc 2 "a malformed fault switch is refused"
expect_err "not abort, hang, exit or corrupt" "and explained"
t_end
