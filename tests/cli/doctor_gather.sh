# cclforge doctor --gather: real Open MPI ranks under mpirun,
# and three hosts made of network namespaces joined by veth pairs (cfgt-*), each
# with its own host name (unshare --uts) and srun's environment (a real Slurm is
# not started here: see doctor_slurm.sh). A host that does not answer is named.
. "$(dirname "$0")/lib.sh"
G=("$CCLFORGE" doctor --gather --no-python --no-nvidia)

run env -u OMPI_COMM_WORLD_RANK -u SLURM_PROCID -u RANK -u PMI_RANK -u CCLFORGE_RANK "${G[@]}"
expect_rc 2 "--gather without a launcher says so"
expect_err "needs a launcher" "and names what is missing"
run "${G[@]}" -n 2
expect_rc 2 "-n is not an option: the ranks come from a launcher"

# ---- real mpirun ----
if command -v mpirun >/dev/null; then
    MPI=(mpirun --oversubscribe)
    [ "$(id -u)" = 0 ] && MPI=(mpirun --allow-run-as-root --oversubscribe)
    run timeout 120 "${MPI[@]}" -n 3 "${G[@]}" --timeout 30 --json
    expect_rc 0 "mpirun -n 3 doctor --gather: exit 0"
    expect_json 'd["schema"]=="cclforge.doctor-gather/1" and d["launcher"]=="mpirun" and d["world"]==3 and [sorted(h["ranks"]) for h in d["hosts"]]==[[0,1,2]]' "one host, rank 0 heard all three MPI ranks"
    expect_json 'd["hosts"][0]["surveyed"] and "nccl_config" in d["hosts"][0]["report"]' "the host's survey is in the report"
    expect_json 'not any(f["id"]=="nccl-env-rank-differs" for f in d["findings"])' "ranks started alike: no per-rank difference"
    run timeout 120 "${MPI[@]}" -n 2 env -u NCCL_DEBUG "${G[@]}" --timeout 30
    if [ -z "$OUT" ] || printf '%s' "$OUT" | grep -q "^cclforge doctor: "; then ok "text is silent when all is well, else starts with one reason line"; else bad "text neither silent nor a reason line"; fi
    run timeout 120 "${MPI[@]}" -n 2 env NCCL_DEBUG=TRACE "${G[@]}" --timeout 30
    expect_out "^cclforge doctor: .*NCCL_DEBUG" "a problem gives one reason line first"
    # more ranks than the acceptor's bound of pending handshakes (256)
    run timeout 300 "${MPI[@]}" -n 300 "${G[@]}" --quick --timeout 240 --json
    expect_rc 0 "mpirun -n 300: exit 0"
    expect_json 'd["world"]==300 and not d["missing"] and sorted(r for h in d["hosts"] for r in h["ranks"])==list(range(300))' "every one of 300 ranks heard"
    # MPMD: a variable given to ranks 0 and 2 only, with different values (no -x)
    run timeout 120 "${MPI[@]}" -n 1 env NCCL_SOCKET_NTHREADS=4 "${G[@]}" --timeout 30 --json \
        : -n 1 "${G[@]}" --timeout 30 --json : -n 1 env NCCL_SOCKET_NTHREADS=2 "${G[@]}" --timeout 30 --json
    expect_rc 0 "a per-rank difference is a warning: exit 0"
    expect_json 'any(f["id"]=="nccl-env-rank-differs" and f["subject"]=="NCCL_SOCKET_NTHREADS on "+d["hosts"][0]["label"] and "rank 0 NCCL_SOCKET_NTHREADS=4; rank 1 unset; rank 2 NCCL_SOCKET_NTHREADS=2" in f["why"] for f in d["findings"])' "a variable that reached only some MPI ranks is named, with each rank's value"
    expect_json 'd["reason"] and d["summary"]["warnings"] >= 1' "a warning gives a reason line"
else
    echo "# mpirun not installed: the Open MPI cases did not run"
fi

# ---- three hosts: network namespaces + veth, srun's environment ----
if ! t_netns_usable cfgt; then
    t_skip_part "not root or no network namespaces: the multi-host cases did not run"
    t_end; exit $?
fi
cleanup() {
    for n in 0 1 2; do ip netns del cfgt-h$n 2>/dev/null; rm -rf /etc/netns/cfgt-h$n; done
}
trap 'cleanup; [ -n "${CCLFORGE_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT
cleanup
for n in 0 1 2; do ip netns add cfgt-h$n; ip -n cfgt-h$n link set lo up; done
# a star: h0 has one link to each of h1 and h2
for n in 1 2; do
    ip link add cfgt-a$n netns cfgt-h0 type veth peer name cfgt-b$n netns cfgt-h$n
    ip -n cfgt-h0 addr add 10.15.$n.1/24 dev cfgt-a$n; ip -n cfgt-h0 link set cfgt-a$n up
    ip -n cfgt-h$n addr add 10.15.$n.2/24 dev cfgt-b$n; ip -n cfgt-h$n link set cfgt-b$n up
done
# `ip netns exec` bind-mounts /etc/netns/NAME/hosts over /etc/hosts
for n in 0 1 2; do
    mkdir -p /etc/netns/cfgt-h$n
    { echo "127.0.0.1 localhost"; echo "10.15.${n/0/1}.1 cfgt-h0"; echo "10.15.1.2 cfgt-h1"; echo "10.15.2.2 cfgt-h2"; } >/etc/netns/cfgt-h$n/hosts
done
# host N runs rank N as srun would start it
onhost() { # onhost N ENV... -- ARGS
    local n=$1; shift
    ip netns exec cfgt-h$n unshare --uts sh -c 'hostname "$0"; exec "$@"' cfgt-h$n \
        env SLURM_PROCID=$n SLURM_NTASKS=3 SLURM_LOCALID=0 SLURM_STEP_NODELIST='cfgt-h[0-2]' \
        SLURM_JOB_ID=1515 SLURM_STEP_ID=0 "$@"
}
onhost 1 NCCL_SOCKET_IFNAME=cfgt-b "${G[@]}" --timeout 20 >"$T_TMP/r1.out" 2>&1 &
p1=$!
onhost 2 "${G[@]}" --timeout 20 >"$T_TMP/r2.out" 2>&1 &
p2=$!
run onhost 0 "${G[@]}" --timeout 20 --json
wait $p1; rc1=$?
wait $p2; rc2=$?
expect_json 'sorted(h["label"] for h in d["hosts"])==["cfgt-h0","cfgt-h1","cfgt-h2"] and all(h["surveyed"] for h in d["hosts"])' "three hosts, each surveyed by its own rank"
expect_json 'd["rank0"].startswith("cfgt-h0:") and "SLURM_STEP_NODELIST" in d["rank0"]' "rank 0 found from srun's node list"
expect_json 'any(x["label"]=="NCCL_SOCKET_IFNAME" and x["summary"]=="cfgt-h0, cfgt-h2 (unset), cfgt-h1 cfgt-b" for x in d["differences"])' "the odd host is named: a variable set on one host only"
expect_json 'any(s["label"]=="NCCL" for s in d["shared"])' "what every host shares is listed"
[ "$rc1" = "$RC" ] && [ "$rc2" = "$RC" ] && ok "every rank exits as rank 0 does ($RC)" || bad "ranks exit differently: rank0 $RC, rank1 $rc1, rank2 $rc2"

# host 2 never starts: it is named after the timeout, and the others do not hang
onhost 1 "${G[@]}" --timeout 4 >"$T_TMP/r1.out" 2>&1 &
p1=$!
run onhost 0 "${G[@]}" --timeout 4
wait $p1
expect_rc 1 "a host that does not answer is an error"
expect_out "host-no-answer" "its finding is shown"
expect_out "host cfgt-h2 \(in SLURM_STEP_NODELIST" "the silent host is named from srun's node list"
expect_out "^cclforge doctor: " "the first line is the one reason line"

# a plugin's bridge module (no cclforge marker) whose toolkit library only
# cfgt-h1 provides: the finding comes from each host lacking it, named
if command -v gcc >/dev/null; then
    ps=$T_TMP/plugin-site
    mkdir -p "$ps/torch/lib" "$ps/plug" "$T_TMP/tk"
    : >"$ps/torch/__init__.py"; : >"$ps/plug/__init__.py"
    printf 'int plain(void) { return 1; }\n' >"$T_TMP/plain.c"
    gcc -shared -fPIC -Wl,-soname,libtorch_cpu.so -o "$ps/torch/lib/libtorch_cpu.so" "$T_TMP/plain.c"
    gcc -shared -fPIC -Wl,-soname,libcfgt_rccl.so.1 -o "$T_TMP/tk/libcfgt_rccl.so.1" "$T_TMP/plain.c"
    printf 'static const char f[] = "make_nccl_backend";\nextern int plain(void);\n__attribute__((visibility("default"))) const char *PyInit__br(void) { return plain() ? f : 0; }\n' >"$T_TMP/br.c"
    gcc -shared -fPIC -fvisibility=hidden -o "$ps/plug/_br.cpython-311-x86_64-linux-gnu.so" "$T_TMP/br.c" -Wl,--no-as-needed -L"$T_TMP/tk" -l:libcfgt_rccl.so.1
    onhost 1 LD_LIBRARY_PATH="$T_TMP/tk" "${G[@]}" --libtorch "$ps/torch" --timeout 20 >"$T_TMP/r1.out" 2>&1 &
    p1=$!
    onhost 2 "${G[@]}" --libtorch "$ps/torch" --timeout 20 >"$T_TMP/r2.out" 2>&1 &
    p2=$!
    run onhost 0 "${G[@]}" --libtorch "$ps/torch" --timeout 20 --json
    wait $p1; wait $p2
    expect_json 'sorted(f["subject"] for f in d["findings"] if f["id"]=="bridge-plugin-lib-missing")==["cfgt-h0: plug._br","cfgt-h2: plug._br"]' "a plugin bridge's library missing on two hosts: each host named, the one that has it not"
    expect_json 'all("needs libcfgt_rccl.so.1" in f["why"] for f in d["findings"] if f["id"]=="bridge-plugin-lib-missing")' "and the library named"
    # the text report prints that finding once, with the two hosts as a hostlist
    onhost 1 LD_LIBRARY_PATH="$T_TMP/tk" "${G[@]}" --libtorch "$ps/torch" --timeout 20 >"$T_TMP/r1.out" 2>&1 &
    p1=$!
    onhost 2 "${G[@]}" --libtorch "$ps/torch" --timeout 20 >"$T_TMP/r2.out" 2>&1 &
    p2=$!
    run onhost 0 "${G[@]}" --libtorch "$ps/torch" --timeout 20
    wait $p1; wait $p2
    expect_out "^  [a-z]+ +plug\._br  \[bridge-plugin-lib-missing\]$" "text: the finding once, no host in its subject"
    expect_out "^          on 2 hosts: cfgt-h\[0,2\]$" "text: its hosts as a Slurm hostlist"
    [ "$(printf '%s\n' "$OUT" | grep -c 'bridge-plugin-lib-missing')" = 1 ] && ok "text: printed once, not once per host" || bad "text: bridge-plugin-lib-missing printed $(printf '%s\n' "$OUT" | grep -c 'bridge-plugin-lib-missing') times"
    expect_out "^  3 hosts: cfgt-h\[0-2\]$" "text: the hosts heard from, as a hostlist"
else
    t_skip_part "no gcc to link a plugin bridge for the multi-host case"
fi
t_end
