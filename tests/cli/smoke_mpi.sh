# cclforge smoke --backend mpi: real 2- and 4-rank runs through mpirun, checked
# results, the table and its busbw factors, JSON, and no processes left behind.
. "$(dirname "$0")/lib.sh"
command -v pgrep >/dev/null || { echo "pgrep is missing (apt-get install procps): cannot check for leftover processes"; exit 1; }

if ! command -v mpirun >/dev/null || [ ! -f "$(dirname "$CCLFORGE")/cclforge_smoke_mpi.so" ]; then
    t_skip "mpirun or the MPI plugin is missing (apt-get install openmpi-bin libopenmpi-dev)"
fi
MARK="31.$$" # a unique --connect-timeout value: pgrep finds exactly this test's processes
leftovers() { pgrep -f -- "--connect-timeout $MARK" >/dev/null && bad "$1: processes left behind" || ok "$1: no processes left behind"; }

# 2 ranks, four types, every collective, in- and out-of-place: 3 sizes x 4 types x 9 = 108 tests
run "$CCLFORGE" smoke --backend mpi -n 2 -d float,int32,half,bfloat16 -b 1K -e 16K -f 4 --iters 3 -w 1 \
    --connect-timeout "$MARK"
expect_rc 0 "2-rank mpi run passes"
[ "$(printf '%s\n' "$OUT" | tail -n 1)" = "108 passed, 0 failed" ] && ok "last line counts 108 tests" || bad "last line"
[ "$(printf '%s\n' "$OUT" | grep -c '^RANK_PASS rank=[01] local_rank=[01] op=[a-z_]* bytes=[0-9]*')" -eq 216 ] \
    && ok "one RANK_PASS per rank and test" || bad "RANK_PASS lines"
expect_no_out "RANK_FAIL" "no RANK_FAIL"
expect_out "mpi backend \(Open MPI v[0-9.]+\), 2 ranks, launcher mpirun" "table header names library and launcher"
expect_out " 16384 +8192 +half +all_reduce +in " "table has the 16K half in-place all_reduce row"
expect_out " 4096 +2048 +bfloat16 +reduce_scatter +out " "table has the bfloat16 reduce_scatter row"
# with 2 ranks every factor is 1 except all_gather / reduce_scatter (1/2): check from the table
printf '%s\n' "$OUT" | awk '$1 ~ /^[0-9]+$/ && NF == 10 {
    f = ($4 == "all_gather" || $4 == "reduce_scatter") ? 0.5 : 1.0
    if ($7 > 0.05 && ($8 / $7 < f * 0.97 || $8 / $7 > f * 1.03)) bad = 1; rows++ }
    END { exit (rows == 108 && !bad) ? 0 : 1 }' && ok "busbw = algbw x nccl-tests factor in all 108 rows" \
    || bad "busbw factors in the table"
leftovers "2-rank run"

# 4 ranks as JSON
run "$CCLFORGE" smoke --backend mpi -n 4 -b 256 -e 64K -f 16 --iters 3 -w 1 --json --connect-timeout "$MARK"
expect_rc 0 "4-rank mpi run passes"
expect_json "d['schema'] == 'cclforge.smoke/1' and d['ok'] and d['nranks'] == 4 and d['launcher'] == 'mpirun'" "JSON header"
expect_json "len(d['rows']) == 3 * 9 and d['passed'] == 27 and d['failed'] == 0" "27 rows, all passed"
expect_json "all(r['ok'] and r['wrong'] == 0 and r['time_us'] > 0 for r in d['rows'])" "every row verified and timed"
expect_json "all(abs(r['busbw_factor'] - {'all_reduce': 1.5, 'all_gather': 0.75, 'reduce_scatter': 0.75}.get(r['op'], 1.0)) < 1e-12 for r in d['rows'])" "4-rank busbw factors"
expect_json "all(abs(r['busbw_gbps'] - r['algbw_gbps'] * r['busbw_factor']) <= 1e-9 * (1 + r['busbw_gbps']) for r in d['rows'])" "busbw = algbw x factor"
expect_json "len(d['rank_results']) == 4 * 27 and sorted({r['rank'] for r in d['rank_results']}) == [0, 1, 2, 3]" "every rank reported every test"
expect_json "d['rank_info']['3']['lib_version'].startswith('Open MPI')" "rank 3's library version"
leftovers "4-rank run"

# under the user's own mpirun: every process is one rank, rank 0 prints the table
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo
root=""; [ "$(id -u)" = 0 ] && root="--allow-run-as-root"
run mpirun $root --oversubscribe -n 2 "$CCLFORGE" smoke --backend mpi --ops all_reduce,sendrecv -b 1K -e 1K \
    --connect-timeout "$MARK"
expect_rc 0 "under an external mpirun"
expect_out "RANK_PASS rank=1 local_rank=1 op=sendrecv bytes=1024" "rank 1 reports its own results"
expect_out "launcher mpirun" "the launcher is detected"
[ "$(printf '%s\n' "$OUT" | grep -c 'passed, ')" -eq 1 ] && ok "only rank 0 prints the verdict" || bad "verdict count"
run mpirun $root --oversubscribe -n 2 "$CCLFORGE" smoke --backend mpi -n 3 --connect-timeout "$MARK"
expect_rc 2 "-n that contradicts the launcher is a usage error"
expect_err "drop -n under a launcher" "and says what to do"
leftovers "external mpirun"
# the plugin search: a cclforge without the plugin beside it, then CCLFORGE_PLUGIN_DIR
mkdir -p "$T_TMP/bin" && cp "$CCLFORGE" "$T_TMP/bin/cclforge"
run env -u CCLFORGE_PLUGIN_DIR "$T_TMP/bin/cclforge" smoke --backend mpi -n 2 -b 1K -e 1K --connect-timeout "$MARK"
expect_rc 1 "no MPI plugin: the run fails"
expect_out "the MPI backend plugin cclforge_smoke_mpi.so could not be loaded" "and says which file"
expect_out "$T_TMP/bin/cclforge_smoke_mpi.so: not there" "and where it looked"
run env CCLFORGE_PLUGIN_DIR="$(dirname "$CCLFORGE")" "$T_TMP/bin/cclforge" smoke --backend mpi -n 2 -b 1K -e 1K \
    --connect-timeout "$MARK"
expect_rc 0 "CCLFORGE_PLUGIN_DIR finds it"
run "$CCLFORGE" smoke --backend mpi -n 2 --mpirun /nonexistent/mpirun
expect_rc 1 "a missing mpirun fails"
expect_err "/nonexistent/mpirun: not found" "and is named"
leftovers "plugin search"
t_end
