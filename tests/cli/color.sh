# --color=auto|always|never on every command (git's words), and what auto
# decides: colour on the user's own terminal (a real pty), none into a file or
# pipe, none with NO_COLOR set, TERM unset or dumb, and none in a rank a
# launcher started (each launcher's variables; a real `mpirun -n 1`, whose rank
# writes to a pty of Open MPI's, into a file); always colours anyway; a bad
# value is a usage error naming the option and the words. Progress lines are
# redrawn only on the user's own terminal (nccl build), with no escape sequence.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
T=$T_TMP
# the launcher variables of src/launch/launch_mark.c (and any the test's own
# environment carries) unset: this test decides where it is a rank
LAUNCH_VARS=$(grep -oE '^    \{ "[^"]+", "[A-Z0-9_]+"' "$SRC/src/launch/launch_mark.c" | grep -oE '[A-Z0-9_]+"$' | tr -d '"')
[ -n "$LAUNCH_VARS" ] || { echo "Bail out! no launcher variables read from launch_mark.c"; exit 1; }
for v in $LAUNCH_VARS CCLFORGE_RANK SLURM_PROCID WORLD_SIZE NO_COLOR CLICOLOR CLICOLOR_FORCE; do unset "$v"; done
export TERM=xterm-256color

pty() { run python3 "$SRC/tests/support/on_pty.py" "$@"; }
escapes() { printf '%s%s' "$OUT" "$ERR" | tr -cd '\033' | wc -c; }
coloured() { local n; n=$(escapes); [ "$n" -gt 0 ] && ok "$1 ($n escape sequences)" || bad "$1 (no escape sequence)"; }
plain() { local n; n=$(escapes); [ "$n" = 0 ] && ok "$1" || bad "$1 ($n escape sequences)"; }
D=(doctor --no-python --no-nvidia)

# ---- auto ----
pty "$CCLFORGE" "${D[@]}"
coloured "auto: doctor on a terminal is coloured"
[ "$(escapes)" -ge 4 ] || bad "doctor's headings and severities on a terminal (wanted several)"
pty "$CCLFORGE" inspect "$T/missing.so"
coloured "auto: an error on a terminal's stderr is coloured"
run "$CCLFORGE" "${D[@]}"
plain "auto: doctor into a pipe is not"
pty env NO_COLOR=1 "$CCLFORGE" "${D[@]}"
plain "auto: NO_COLOR=1 on a terminal"
pty env NO_COLOR=0 "$CCLFORGE" inspect "$T/missing.so"
plain "auto: NO_COLOR=0 (any non-empty value) on a terminal's stderr"
pty env NO_COLOR= "$CCLFORGE" "${D[@]}"
coloured "auto: an empty NO_COLOR is unset (no-color.org)"
pty env TERM=dumb "$CCLFORGE" "${D[@]}"
plain "auto: TERM=dumb"
pty env -u TERM "$CCLFORGE" "${D[@]}"
plain "auto: TERM unset (as git)"
pty env CLICOLOR_FORCE=1 NO_COLOR=1 "$CCLFORGE" "${D[@]}"
plain "CLICOLOR_FORCE is not read (as git): NO_COLOR still wins"

# each launcher's variables, as it sets them for a rank: no colour on its terminal
RANKS=(
    "Open MPI|OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0 PMIX_RANK=0"
    "Open MPI (size only)|OMPI_COMM_WORLD_SIZE=2"
    "PMIx|PMIX_RANK=1"
    "MPICH Hydra, Intel MPI|PMI_RANK=0 PMI_SIZE=2 PMI_FD=5"
    "PMI size only|PMI_SIZE=2"
    "MVAPICH2 mpirun_rsh|MV2_COMM_WORLD_RANK=0"
    "srun|SLURM_JOB_ID=2 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_LOCALID=0"
    "srun --pty|SLURM_JOB_ID=3 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_PTY_PORT=43735"
    "torchrun|TORCHELASTIC_RUN_ID=none RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 GROUP_RANK=0"
    "torchrun without its run id|GROUP_RANK=0 WORLD_SIZE=2"
    "torch.distributed.launch, DeepSpeed|LOCAL_RANK=0 RANK=0 WORLD_SIZE=2"
    "Horovod|HOROVOD_RANK=0"
    "Flux|FLUX_TASK_RANK=0"
    "HPE Cray PALS|PALS_RANKID=0"
    "Cray ALPS aprun|ALPS_APP_PE=0"
    "IBM jsrun|JSM_NAMESPACE_RANK=0"
    "cclforge's own ranks|CCLFORGE_RANK=0 CCLFORGE_WORLD_SIZE=2"
)
for r in "${RANKS[@]}"; do
    read -r -a vars <<<"${r#*|}"
    pty env "${vars[@]}" "$CCLFORGE" "${D[@]}"
    plain "auto: a rank of ${r%%|*} on a terminal (${vars[0]})"
done
pty env OMPI_COMM_WORLD_RANK=0 "$CCLFORGE" inspect "$T/missing.so"
plain "auto: a rank's error on its terminal's stderr"
# every launcher variable of the table is exercised above
for v in $LAUNCH_VARS; do
    printf '%s\n' "${RANKS[@]}" | grep -q "[| ]$v=" && ok "launcher variable $v is tested" || bad "launcher variable $v is not tested"
done

# the user's own shells and scripts that carry launcher-ish variables: coloured
USERS=(
    "salloc's shell|SLURM_JOB_ID=1 SLURM_NTASKS=1"
    "salloc's interactive step|SLURM_JOB_ID=1 SLURM_STEP_ID=4294967290 SLURM_PROCID=0 SLURM_PTY_PORT=41465"
    "sbatch's script|SLURM_JOB_ID=4 SLURM_PROCID=0 SLURM_LOCALID=0"
    "a shell with WORLD_SIZE and RANK exported|WORLD_SIZE=8 RANK=0"
    "an empty OMPI_COMM_WORLD_RANK|OMPI_COMM_WORLD_RANK="
)
for u in "${USERS[@]}"; do
    read -r -a vars <<<"${u#*|}"
    pty env "${vars[@]}" "$CCLFORGE" "${D[@]}"
    coloured "auto: ${u%%|*} is the user's terminal"
done

# ---- always, never, and where the option may stand ----
run "$CCLFORGE" "${D[@]}" --color=always
coloured "--color=always into a pipe"
run "$CCLFORGE" --color=always "${D[@]}"
coloured "--color=always before the command's name"
run "$CCLFORGE" "${D[@]}" --color
coloured "--color alone is always"
run env NO_COLOR=1 TERM=dumb OMPI_COMM_WORLD_RANK=0 "$CCLFORGE" "${D[@]}" --color=always
coloured "--color=always wins over NO_COLOR, TERM=dumb and a launcher"
run "$CCLFORGE" inspect --color=always "$T/missing.so"
coloured "--color=always colours stderr too"
pty "$CCLFORGE" "${D[@]}" --color=never
plain "--color=never on a terminal"
pty "$CCLFORGE" --no-color "${D[@]}"
plain "--no-color on a terminal"
pty "$CCLFORGE" "${D[@]}" --color=auto
coloured "--color=auto on a terminal"
run "$CCLFORGE" --color=never "${D[@]}" --color=always
coloured "the last --color wins"
run "$CCLFORGE" "${D[@]}" --color=never --json
python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$OUT" && ok "--color is not a command's argument (doctor --json still one document)" \
    || bad "--color reached doctor"
for cmd in "inspect --help" "nccl list --help" "bridge plan --help" "wheel verify --help" "smoke --help" \
    "doctor compare --help"; do
    read -r -a words <<<"$cmd"
    run "$CCLFORGE" --color=never "${words[@]}" --color=always
    expect_rc 0 "$cmd takes --color before and after its name"
done
run "$CCLFORGE" inspect --color=always -- --color=never
expect_rc 1 "after '--', --color is an argument: inspect is given a file of that name (exit 1: missing)"
expect_err "'?--color=never'?" "the file named --color=never is named"

# ---- a bad value ----
for bad_value in sometimes "" ALWAYS yes; do
    run "$CCLFORGE" "${D[@]}" --color="$bad_value"
    expect_rc 2 "--color='$bad_value' is a usage error"
    expect_err "^cclforge doctor: usage error: --color='$bad_value': expected auto, always or never" "it names the option, the value and the words"
    expect_err "Try 'cclforge doctor --help'" "and points at the command's help"
    [ -z "$OUT" ] && ok "nothing on stdout" || bad "nothing on stdout"
done
run "$CCLFORGE" --color=bad
expect_rc 2 "--color=bad with no command is a usage error"
expect_err "Try 'cclforge --help'\.$" "pointing at cclforge --help"
run "$CCLFORGE" --color
expect_rc 2 "--color alone is no command"
expect_err "^usage: cclforge " "the usage is printed"

# ---- documented: every launcher variable in the manual ----
for v in $LAUNCH_VARS; do
    grep -q "fB$v\\\\fR" "$SRC/docs/man/cclforge.1" && ok "cclforge.1 names $v" || bad "cclforge.1 does not name $v"
    grep -q "\`$v\`" "$SRC/docs/colour.md" && ok "docs/colour.md names $v" || bad "docs/colour.md does not name $v"
done

# ---- progress lines: redrawn in place only on the user's own terminal ----
# nccl build on the NCCL-shaped mini tree shows them; with this machine's CUDA
# when it has one, else with a stand-in nvcc that writes empty objects (the
# build then fails its verification, after the progress was shown)
if t_find_cuda && [ -n "$T_NVCC" ]; then
    TOOLKIT=$T_CUDA
else
    TOOLKIT=$T/cuda
    mkdir -p "$TOOLKIT/bin" "$TOOLKIT/include"
    printf '#define CUDA_VERSION 13000\n' >"$TOOLKIT/include/cuda.h"
    cat >"$TOOLKIT/bin/nvcc" <<'NVCC'
#!/bin/sh
case "$*" in *--version*) echo "Cuda compilation tools, release 13.0, V13.0.48"; exit 0 ;; esac
while [ $# -gt 0 ]; do [ "$1" = -o ] && : >"$2"; shift; done
NVCC
    chmod +x "$TOOLKIT/bin/nvcc"
    echo "# no CUDA toolkit here: a stand-in nvcc drives the progress lines"
fi
builds=0
nb() { builds=$((builds + 1)); pty env CUDA_HOME="$TOOLKIT" "$@" "$CCLFORGE" nccl build --root "$T/nccl$builds" \
    --source "$SRC/tests/fixtures/nccl-mini" --archs 9.0 -j2; }
# a redraw is a carriage return before a progress line; the pty turns each
# newline into CR LF, so "\r[" appears only when the line is redrawn
redraws() { printf '%s%s' "$OUT" "$ERR" | grep -o $'\r\\[' | wc -l; }
nb
[ "$(redraws)" -ge 1 ] && ok "progress on the user's terminal is one line redrawn ($(redraws) redraws)" || bad "progress on the user's terminal is redrawn"
printf '%s' "$OUT" | grep -q $'\033\\[K' && bad "the redraw uses no erase sequence (overwritten with spaces)" || ok "the redraw uses no erase sequence (overwritten with spaces)"
pty env CUDA_HOME="$TOOLKIT" "$CCLFORGE" --color=never nccl build --root "$T/nccl-never" --source "$SRC/tests/fixtures/nccl-mini" --archs 9.0 -j2
[ "$(redraws)" -ge 1 ] && ok "--color=never still redraws progress" || bad "--color=never still redraws progress"
plain "--color=never: not one escape sequence, progress included"
for e in "OMPI_COMM_WORLD_RANK=0" "SLURM_STEP_ID=0 SLURM_PROCID=0" "TORCHELASTIC_RUN_ID=x" "TERM=dumb"; do
    read -r -a vars <<<"$e"
    nb "${vars[@]}"
    [ "$(redraws)" = 0 ] && printf '%s' "$OUT" | grep -qE '^\[[0-9]+/[0-9]+\] 100%' &&
        ok "with $e on a terminal: plain progress lines, none redrawn" || bad "with $e on a terminal: plain progress lines, none redrawn"
done

# ---- a real mpirun: its rank writes into the user's file through a pty ----
if command -v mpirun >/dev/null; then
    MPI=(mpirun -n 1)
    [ "$(id -u)" = 0 ] && MPI=(mpirun --allow-run-as-root -n 1)
    "${MPI[@]}" sh -c 'test -t 1' </dev/null >"$T/tty.txt" 2>&1 && echo "# mpirun gives its rank a terminal" ||
        echo "# mpirun gives its rank no terminal here: the rank's variables are what turn colour off"
    "${MPI[@]}" "$CCLFORGE" "${D[@]}" </dev/null >"$T/out.txt" 2>"$T/err.txt"
    RC=$? OUT=$(cat "$T/out.txt") ERR=$(cat "$T/err.txt")
    [ -n "$OUT" ] && ok "mpirun -n 1 cclforge doctor > out.txt wrote its report" || bad "mpirun -n 1 cclforge doctor wrote nothing"
    plain "mpirun -n 1 cclforge doctor > out.txt: no escape sequence in the file"
    "${MPI[@]}" "$CCLFORGE" "${D[@]}" --color=always </dev/null >"$T/out.txt" 2>"$T/err.txt"
    RC=$? OUT=$(cat "$T/out.txt") ERR=$(cat "$T/err.txt")
    coloured "mpirun -n 1 cclforge doctor --color=always > out.txt: coloured as asked"
else
    t_skip_part "a real mpirun: Open MPI is not installed"
fi
t_end
