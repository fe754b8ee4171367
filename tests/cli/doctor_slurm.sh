# `srun -n 2 cclforge doctor --gather` under a real single-node Slurm (Debian's
# slurm-wlm and munge, slurmctld/slurmd on loopback, state under a cf15- directory).
# Not run by this suite yet: starting munged, slurmctld and slurmd from a test was
# not built in this change, so the skip says so; doctor_gather.sh emulates srun's
# environment (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_NODELIST,
# SLURM_JOB_ID) across three network-namespace hosts instead.
. "$(dirname "$0")/lib.sh"
t_skip "a real slurmctld/slurmd is not started by the tests yet (srun's environment is emulated in doctor_gather.sh); see docs/doctor.md"
