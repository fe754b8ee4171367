# cclforge doctor --gather under a real torchrun: PyTorch's own launcher
# (python -m torch.distributed.run, from the torch wheel cached by
# scripts/torch-cache.sh) starts two ranks of cclforge itself (--no-python:
# torchrun runs the program directly instead of a Python script), each with the
# RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT torchrun sets; cclforge
# listens on MASTER_PORT+1 because torchrun's own TCPStore holds MASTER_PORT.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
site=$(bash "$SRC/scripts/torch-cache.sh" 2>"$T_TMP/torch-cache.log" | tail -n 1)
if [ -z "$site" ] || [ ! -f "$site/torch/distributed/run.py" ]; then
    cat "$T_TMP/torch-cache.log"
    t_skip "scripts/torch-cache.sh could not provide torch (PyPI needed once): torchrun did not run"
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
torchrun() { # torchrun ENV-ARGS... -- CCLFORGE-DOCTOR-ARGS...: two ranks on this host
    local envs=() port
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    port=$(free_port)
    env "${envs[@]}" PYTHONPATH="$site" OMP_NUM_THREADS=1 timeout 300 python3 -m torch.distributed.run \
        --nproc-per-node 2 --no-python --master-addr 127.0.0.1 --master-port "$port" --max-restarts 0 \
        "$CCLFORGE" doctor --gather --no-python --no-nvidia --timeout 60 "$@"
}

run torchrun -u NCCL_DEBUG -- --json
expect_rc 0 "torchrun --nproc-per-node 2 cclforge doctor --gather: exit 0"
expect_json 'd["launcher"]=="torchrun" and d["world"]==2 and [h["ranks"] for h in d["hosts"]]==[[0,1]]' "rank 0 heard both torchrun ranks, on one host"
expect_json '"MASTER_ADDR" in d["rank0"] and "port from MASTER_PORT+1" in d["rank0"]' "rank 0 found from torchrun's MASTER_ADDR, beside torchrun's own store"
expect_json 'd["hosts"][0]["surveyed"] and "nccl_config" in d["hosts"][0]["report"]' "local rank 0 surveyed the host"

run torchrun NCCL_SOCKET_IFNAME=cftr-none -- --json
expect_rc 1 "an error: torchrun fails because its ranks exit 1"
expect_json 'any(f["id"]=="nccl-ifname-none" for f in d["findings"])' "the finding is in rank 0's report"
printf '%s' "$ERR" | grep -q "rank *: *1" && printf '%s' "$ERR" | grep -q "exitcode *: *1" \
    && ok "torchrun reports rank 1 failing too (every rank exits as rank 0 says)" \
    || bad "torchrun's failure summary does not name rank 1 with exit code 1"
t_end
