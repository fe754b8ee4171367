# cclforge smoke --backend mpi: real ranks through mpirun; nccl-tests' sizes, counts,
# step rules, reductions, roots and footer; the data checked exactly; attribution
# (hosts, per-rank times, slowest vs median, --min-busbw); JSON; no process left behind.
. "$(dirname "$0")/lib.sh"
command -v pgrep >/dev/null || { echo "pgrep is missing (apt-get install procps): cannot check for leftover processes"; exit 1; }

if ! t_open_mpi; then
    t_skip "Open MPI's mpirun or libmpi.so.40 is missing (apt-get install openmpi-bin)"
fi
MARK="31.$$" # a unique --connect-timeout value: pgrep finds exactly this test's processes
leftovers() { sleep 0.2; pgrep -f -- "--connect-timeout $MARK" >/dev/null && bad "$1: processes left behind" || ok "$1: no processes left behind"; }
rows() { printf '%s\n' "$OUT" | awk '$1 ~ /^[0-9]+$/ && NF >= 15'; }
last_line() { printf '%s\n' "$OUT" | tail -n 1; }

# 2 ranks, four types, every collective, in- and out-of-place: 3 sizes x 4 types x 9 ops x 2 = 216 tests
run "$CCLFORGE" smoke --backend mpi -n 2 -d float,int32,half,bfloat16 -b 1K -e 16K -f 4 --iters 3 -w 1 \
    --connect-timeout "$MARK"
expect_rc 0 "2-rank mpi run passes"
[ "$(last_line)" = "216 passed, 0 failed" ] && ok "last line counts 216 tests" || bad "last line"
[ "$(printf '%s\n' "$OUT" | grep -c '^RANK_PASS rank=[01] local_rank=[01] op=[a-z_]* bytes=[0-9]*')" -eq 432 ] \
    && ok "one RANK_PASS per rank and test" || bad "RANK_PASS lines"
expect_no_out "RANK_FAIL" "no RANK_FAIL"
expect_out "mpi backend \(Open MPI v[0-9.]+\), 2 ranks, launcher mpirun" "table header names library and launcher"
expect_out "#  rank  1 pid +[0-9]+ on [^ ]+ device host memory" "the header names every rank's host and device"
expect_out " 16384 +8192 +half +sum +- +all_reduce +in " "table has the 16K half in-place all_reduce row"
expect_out " 4096 +1024 +bfloat16 +sum +- +reduce_scatter +out " "reduce_scatter's count column is per rank (nccl-tests)"
expect_out " 1024 +128 +float +none +0 +gather +in " "gather runs, with its root"
expect_out " 4096 +1024 +int32 +none +- +sendrecv +in .* N/A " "in-place sendrecv runs, unchecked as in nccl-tests"
# with 2 ranks every factor is 1 except the sharing collectives (1/2): check from the table
rows | awk '{ f = ($6 ~ /^(all_gather|reduce_scatter|alltoall|gather|scatter)$/) ? 0.5 : 1.0
    if ($9 > 0.05 && ($10 / $9 < f * 0.97 || $10 / $9 > f * 1.03)) bad = 1; n++ }
    END { exit (n == 216 && !bad) ? 0 : 1 }' && ok "busbw = algbw x nccl-tests factor in all 216 rows" \
    || bad "busbw factors in the table"
# the footer: nccl-tests' words, the mean busbw of every row
avg=$(printf '%s\n' "$OUT" | sed -n 's/^# Avg bus bandwidth *: //p')
rows | awk -v avg="$avg" '{ s += $10; n++ } END { m = s / n; exit (avg > 0 && (m - avg) * (m - avg) < 1e-4 * (1 + m * m)) ? 0 : 1 }' \
    && ok "footer: Avg bus bandwidth is the mean busbw ($avg)" || bad "average busbw footer '$avg'"
expect_out "^# Out of bounds values : 0 OK" "footer: out of bounds values"
expect_out "^verdict: ok: 216 tests passed, average busbw [0-9.e+-]+ GB/s; slowest host [^ ]+ \(rank [01]\): [0-9.]+x the median time" \
    "the verdict names the slowest rank and host against the median"
leftovers "2-rank run"

# nccl-tests' size rules, 3 ranks: each rank's share rounds down to 16 bytes, the size
# column is max(send, recv) and the count column the share
run "$CCLFORGE" smoke --backend mpi -n 3 --ops all_gather,reduce_scatter,alltoall -b 1000 -e 1000 --iters 2 \
    --place out --connect-timeout "$MARK"
expect_rc 0 "3-rank sharing collectives pass"
expect_out "^ +960 +80 +float +none +- +all_gather " "all_gather 1000 B on 3 ranks: 80 per rank, 960 B"
expect_out "^ +960 +80 +float +sum +- +reduce_scatter " "reduce_scatter likewise"
expect_out "^ +960 +80 +float +none +- +alltoall " "alltoall likewise"

# every reduction of every type, and every root, checked exactly
run "$CCLFORGE" smoke --backend mpi -n 3 --ops all_reduce,reduce,reduce_scatter -d all -o all -b 4K -e 4K \
    --iters 2 --connect-timeout "$MARK"
expect_rc 0 "sum, prod, max, min and avg of all 10 types, exactly"
[ "$(last_line)" = "300 passed, 0 failed" ] && ok "3 ops x 10 types x 5 reductions x 2 placements" || bad "-o all count: $(last_line)"
run "$CCLFORGE" smoke --backend mpi -n 3 --ops broadcast,reduce,gather,scatter -r all -b 1K -e 1K --iters 2 \
    --connect-timeout "$MARK"
expect_rc 0 "-r all: every root in turn"
for root in 0 1 2; do
    [ "$(rows | awk -v r=$root '$5 == r' | wc -l)" -eq 8 ] && ok "root $root: 4 rooted ops x 2 placements" || bad "rows with root $root"
done
leftovers "sizes, reductions, roots"

# -f and -i: a whole factor; -i alone steps by bytes; both: -f wins (nccl-tests' TimeTest)
run "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce --place out -b 1K -e 3K -i 1K --iters 2 --connect-timeout "$MARK"
[ "$(rows | awk '{print $1}' | tr '\n' ' ')" = "1024 2048 3072 " ] && ok "-i 1K steps 1K, 2K, 3K" || bad "-i sizes: $(rows | awk '{print $1}' | tr '\n' ' ')"
run "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce --place out -b 1K -e 3K -i 1K -f 2 --iters 2 --connect-timeout "$MARK"
[ "$(rows | awk '{print $1}' | tr '\n' ' ')" = "1024 2048 " ] && ok "-f 2 wins over -i" || bad "-f with -i sizes"
run "$CCLFORGE" smoke --backend mpi -n 2 -f 1.0001
expect_rc 2 "a fractional -f is refused (it would stop after the first size)"
expect_err "-f '1.0001': expected a whole number" "and named"

# a run that executes no test is a failure, with the reason
for args in "-b 0 -e 0" "-b 1 -e 1"; do
    run "$CCLFORGE" smoke --backend mpi -n 2 $args --ops all_reduce --iters 2 --connect-timeout "$MARK"
    expect_rc 1 "'$args': no test ran, exit 1"
    expect_err "no test ran: " "'$args': the reason is given"
    [ "$(last_line)" = "0 passed, 1 failed" ] && ok "'$args': verdict line" || bad "'$args' verdict line"
done
run "$CCLFORGE" smoke --backend mpi -n 2 --place in --ops sendrecv -b 1K -e 1K --iters 2 --connect-timeout "$MARK"
expect_rc 0 "--place in --ops sendrecv runs (in place, unchecked as in nccl-tests)"
run "$CCLFORGE" smoke --backend mpi -n 2 --pattern pairwise -b 1K -e 1K --iters 2 --connect-timeout "$MARK"
expect_rc 1 "pairwise on one host runs nothing: exit 1"
expect_err "no test ran: --pattern pairwise formed no group of 1 host" "and says why"

# the patterns on one host: inter makes one ring per local rank (here of one rank each, split
# from the world), intra one group (the world)
run "$CCLFORGE" smoke --backend mpi -n 3 --pattern inter --ops all_reduce,all_gather -b 1K -e 1K --json \
    --connect-timeout "$MARK"
expect_rc 0 "--pattern inter on one host"
expect_json "[g['label'] for g in d['groups']] == ['%s (local rank %d of each)' % (d['ranks'][0]['hostname'], k) for k in range(3)]" "three rings, one per local rank"
expect_json "all(g['nranks'] == 1 and not g['bad'] for g in d['groups']) and d['verdict'] == 'inter: every group passed'" "each of one rank, none bad"
run "$CCLFORGE" smoke --backend mpi -n 3 --pattern intra --ops all_reduce -b 1K -e 1K --iters 2 --json --connect-timeout "$MARK"
expect_rc 0 "--pattern intra on one host"
expect_json "len(d['groups']) == 1 and d['groups'][0]['nranks'] == 3 and d['rows'][0]['nranks'] == 3" "one group: the host's three ranks"
expect_json "d['rank_info']['0']['transport'] == 'none: the mpi backend does not use NCCL'" "the mpi backend says it has no NCCL transport"

# -a: the time of a test over the ranks; the JSON keeps every rank's own time
run "$CCLFORGE" smoke --backend mpi -n 3 --ops all_reduce -b 1K -e 4K --iters 3 -a 3 --json --connect-timeout "$MARK"
expect_rc 0 "-a 3"
expect_json "d['schema'] == 'cclforge.smoke/2'" "schema 2"
expect_json "all(abs(r['time_us'] - max(t['time_us'] for t in r['rank_time_us'])) < 1e-9 for r in d['rows'])" "-a 3: the slowest rank's time"
expect_json "all(sorted(t['rank'] for t in r['rank_time_us']) == [0, 1, 2] for r in d['rows'])" "every rank's time per test"
expect_json "all(r['slowest_rank'] in (0, 1, 2) and r['slowest_host'] and r['slowest_vs_median'] >= 1 for r in d['rows'])" "slowest rank and host vs the median"
expect_json "[h['rank'] for h in d['ranks']] == [0, 1, 2] and all(h['hostname'] and h['device'] == 'host memory' and h['pid'] > 0 for h in d['ranks'])" "hostname, device and pid of every rank"
run "$CCLFORGE" smoke --backend mpi -n 3 --ops all_reduce -b 1K -e 4K --iters 3 -a 2 --json --connect-timeout "$MARK"
expect_json "all(abs(r['time_us'] - min(t['time_us'] for t in r['rank_time_us'])) < 1e-9 for r in d['rows'])" "-a 2: the fastest rank's time"

# --min-busbw: one reason line a Slurm prolog can act on
run "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce -b 1K -e 4K --iters 2 --min-busbw 100000 --connect-timeout "$MARK"
expect_rc 1 "an average busbw under --min-busbw fails the run"
[ "$(printf '%s\n' "$ERR" | grep -c 'is below --min-busbw')" -eq 1 ] && ok "in one reason line" || bad "min-busbw reason lines"
expect_err "average busbw [0-9.e+-]+ GB/s is below --min-busbw 100000 GB/s; slowest host [^ ]+ \(rank [01]\)" "naming the slowest host"
expect_out "^verdict: FAIL: average busbw" "and the verdict says so"
run "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce -b 1K -e 4K --iters 2 --min-busbw 0.000001 --connect-timeout "$MARK"
expect_rc 0 "a busbw over --min-busbw passes"

# GPU-only flags are accepted and reported as not run
run "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce -b 1K -e 1K --iters 2 -z 1 -G 2 -R 1 --connect-timeout "$MARK"
expect_rc 0 "-z -G -R on the mpi backend"
expect_out 'graph="not run: the mpi backend has no device graphs \(-G needs a GPU backend\)"' "-G is reported as not run"
expect_out 'registration="not run: ' "-R too"
expect_out 'blocking="not run: ' "-z too"
run "$CCLFORGE" smoke --backend mpi -n 2 --ops all_reduce -b 1K -e 1K --iters 2 --expect-transport ib --connect-timeout "$MARK"
expect_rc 1 "--expect-transport with the mpi backend fails"
expect_err "the mpi backend does not use NCCL" "and says there is no NCCL transport"
leftovers "flags"

# 4 ranks as JSON
run "$CCLFORGE" smoke --backend mpi -n 4 -b 256 -e 64K -f 16 --iters 3 -w 1 --json --connect-timeout "$MARK"
expect_rc 0 "4-rank mpi run passes"
expect_json "d['schema'] == 'cclforge.smoke/2' and d['ok'] and d['nranks'] == 4 and d['launcher'] == 'mpirun'" "JSON header"
expect_json "len(d['rows']) == 3 * 18 and d['passed'] == 54 and d['failed'] == 0" "54 rows, all passed"
expect_json "all(r['ok'] and r['time_us'] > 0 for r in d['rows']) and all(r['wrong'] == 0 for r in d['rows'] if r['wrong'] is not None)" "every row verified and timed"
expect_json "all(abs(r['busbw_factor'] - {'all_reduce': 1.5, 'all_gather': 0.75, 'reduce_scatter': 0.75, 'alltoall': 0.75, 'gather': 0.75, 'scatter': 0.75}.get(r['op'], 1.0)) < 1e-12 for r in d['rows'])" "4-rank busbw factors"
expect_json "all(abs(r['busbw_gbps'] - r['algbw_gbps'] * r['busbw_factor']) <= 1e-9 * (1 + r['busbw_gbps']) for r in d['rows'])" "busbw = algbw x factor"
expect_json "len(d['rank_results']) == 4 * 54 and sorted({r['rank'] for r in d['rank_results']}) == [0, 1, 2, 3]" "every rank reported every test"
expect_json "d['rank_info']['3']['lib_version'].startswith('Open MPI')" "rank 3's library version"
expect_json "abs(d['avg_busbw_gbps'] - sum(r['busbw_gbps'] for r in d['rows']) / 54) < 1e-9 and d['out_of_bounds'] == 0" "footer fields"
expect_json "d['verdict'].startswith('ok: 54 tests passed')" "verdict field"
leftovers "4-rank run"

# under the user's own mpirun: every process is one rank, rank 0 prints the table
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_oob_tcp_if_include=lo
root=""; [ "$(id -u)" = 0 ] && root="--allow-run-as-root"
run mpirun $root --oversubscribe -n 2 "$CCLFORGE" smoke --backend mpi --ops all_reduce,sendrecv -b 1K -e 1K \
    --connect-timeout "$MARK"
expect_rc 0 "under an external mpirun"
expect_out "RANK_PASS rank=1 local_rank=1 op=sendrecv bytes=1024" "rank 1 reports its own results"
expect_out "launcher mpirun" "the launcher is detected"
[ "$(printf '%s\n' "$OUT" | grep -c '^[0-9]* passed, [0-9]* failed$')" -eq 1 ] && ok "only rank 0 prints the verdict" || bad "verdict count"
run mpirun $root --oversubscribe -n 2 "$CCLFORGE" smoke --backend mpi -n 3 --connect-timeout "$MARK"
expect_rc 2 "-n that contradicts the launcher is a usage error"
expect_err "drop -n under a launcher" "and says what to do"
leftovers "external mpirun"
# the library: a cclforge alone in a directory needs nothing beside it (libmpi is loaded at run time)
mkdir -p "$T_TMP/bin" && cp "$CCLFORGE" "$T_TMP/bin/cclforge"
run "$T_TMP/bin/cclforge" smoke --backend mpi -n 2 -b 1K -e 1K --ops all_reduce --iters 2 --connect-timeout "$MARK"
expect_rc 0 "a copied cclforge runs the mpi backend"
expect_out "^# library: .*libmpi\.so\.40[.0-9]* \(Open MPI ABI, chosen by the launcher's OMPI_COMM_WORLD_RANK\)" \
    "the report names the library, its ABI and the rule that chose it"
readelf -d "$CCLFORGE" | grep -q 'NEEDED.*libmpi' && bad "cclforge NEEDs libmpi" || ok "cclforge NEEDs no libmpi"
run env CCLFORGE_MPI_LIB=/nonexistent/libmpi.so.40 "$CCLFORGE" smoke --backend mpi -n 2 -b 1K -e 1K --connect-timeout "$MARK"
expect_rc 1 "a CCLFORGE_MPI_LIB that is not there fails the run"
expect_out "no MPI library could be loaded for --backend mpi \(chosen by CCLFORGE_MPI_LIB\); tried:" "naming the rule"
expect_out "/nonexistent/libmpi.so.40: .*No such file" "the file and the loader's words"
expect_out "install Open MPI .* or MPICH \(pip install mpich" "and the fix"
run "$CCLFORGE" smoke --backend mpi -n 2 --mpirun /nonexistent/mpirun
expect_rc 1 "a missing mpirun fails"
expect_err "/nonexistent/mpirun: not found" "and is named"
leftovers "library choice"
t_end
