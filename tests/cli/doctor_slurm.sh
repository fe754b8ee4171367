# `srun -n 2 cclforge doctor --gather` under a real single-node Slurm: Debian's
# slurmctld, slurmd, slurm-client and munge (installed by
# tests/fixtures/slurm_cluster.sh when missing), a munged with a key made for
# this run, slurmctld and slurmd on loopback with a private slurm.conf and
# state, spool, sockets and logs under a cfsl- directory, no cgroups
# (proctrack/linuxproc, task/none). srun starts the ranks with its own
# environment (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_NODELIST,
# SLURM_JOB_ID); every daemon is stopped by its pid in the trap. Exits 77 with
# the reason when Slurm cannot be installed or started here.
. "$(dirname "$0")/lib.sh"
. "${CCLFORGE_SOURCE_DIR:?}/tests/fixtures/slurm_cluster.sh"
[ "$(id -u)" = 0 ] || t_skip "not root: slurmd runs jobs as root here (SlurmdUser=root), so a real Slurm cannot be started"
slurm_install || t_skip "$SLURM_WHY"
S=$(mktemp -d /tmp/cfsl-slurm-XXXXXX)
trap 'slurm_stop; rm -rf "$S"; [ -n "${CCLFORGE_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT
t0=$(date +%s)
if ! slurm_start "$S"; then
    for f in "$S"/munge/munged.log "$S"/slurmctld.log "$S"/slurmd.log; do [ -f "$f" ] && { echo "# $f:"; tail -n 5 "$f" | sed 's/^/#   /'; }; done
    t_skip "a single-node Slurm did not start here: $SLURM_WHY"
fi
echo "# slurmctld + slurmd up in $(( $(date +%s) - t0 )) s ($(srun --version 2>/dev/null))"
node=$(hostname -s)
G=(doctor --gather --no-python --no-nvidia --timeout 60)

# srun -n 2: both ranks on the one node; rank 0's stdout is the report
run timeout 180 srun -n 2 -o "$S/out.%t" -e "$S/err.%t" "$CCLFORGE" "${G[@]}" --json
OUT=$(cat "$S/out.0" 2>/dev/null); ERR="$ERR $(cat "$S"/err.* 2>/dev/null)"
expect_rc 0 "srun -n 2 cclforge doctor --gather: exit 0"
expect_json 'd["launcher"]=="srun" and d["world"]==2' "srun's environment: two ranks"
expect_json '[(h["label"],h["ranks"]) for h in d["hosts"]]==[("'"$node"'",[0,1])]' "rank 0 heard both ranks, on this node"
expect_json 'd["rank0"].startswith("'"$node"':") and "SLURM_STEP_NODELIST" in d["rank0"] and "job id" in d["rank0"]' "rank 0 found from srun's node list, its port from the job id"
expect_json 'd["hosts"][0]["surveyed"] and d["hosts"][0]["report"]["host"]["hostname"]=="'"$node"'"' "its local rank 0 surveyed the node"
[ -s "$S/out.1" ] && bad "rank 1 printed (only rank 0 reports)" || ok "only rank 0 prints the report"

# an error on every rank: srun's status is 1, from each task
run timeout 180 srun -n 2 -o "$S/out.%t" -e "$S/err.%t" --kill-on-bad-exit=0 env NCCL_SOCKET_IFNAME=cfsl-none "$CCLFORGE" "${G[@]}"
OUT=$(cat "$S/out.0" 2>/dev/null)
expect_rc 1 "an error: srun exits 1"
expect_out "^cclforge doctor: .*NCCL_SOCKET_IFNAME" "rank 0's text starts with the one reason line"
t_end
