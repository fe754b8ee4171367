"""Synthetic Flight Recorder dumps in torch's NCCL layout (version 2.10 keys,
as torch/csrc/distributed/c10d/FlightRecorder.hpp names them), for what gloo
does not record: started/completed, durations, p2p, coalesced; and the large
job of bench/hang.sh. python3 fr_synth.py KIND OUTDIR [RANKS ENTRIES]

  nccl:   4 ranks. default group: 6 all_reduces completed with durations,
          a coalesced pair (#7), an all_gather (#8); rank 2 issues #9 in
          BFloat16 (dtypes); at #10 ranks 0,1,3 completed and rank 2 is
          started (state); p2p send/recv between ranks 0 and 1 (completed),
          and a send from rank 2 that rank 3 never receives.
          Each dump as JSON and as a pickle (protocols 2..5 by rank).
  sizes:  4 ranks, an all_gather whose rank 1 output is not 4 x its input.
  bench:  RANKS ranks x ENTRIES all_reduces, pg_config complete; the last
          rank never enters the last one. Pickles (protocol 4).
"""
import json
import os
import pickle
import sys

NS = 1796600000000000000


def entry(rid, seq, op, *, pg=("0", "default_pg"), pg_id=0, state="completed", sizes=((4,),), out=None,
          dtype="Float", p2p=False, p2p_seq=0, dur=0.25, t=None, frames=True):
    out = sizes if out is None else out
    e = {
        "record_id": rid, "pg_id": pg_id, "process_group": pg, "collective_seq_id": 0 if p2p else seq,
        "p2p_seq_id": p2p_seq, "op_id": rid + 1, "profiling_name": "nccl:" + op, "time_created_ns": t or NS + rid * 1000,
        "duration_ms": dur if state == "completed" else None, "input_sizes": [list(s) for s in sizes],
        "input_dtypes": [dtype] * len(sizes), "output_sizes": [list(s) for s in out],
        "output_dtypes": [dtype] * len(out), "state": state, "time_discovered_started_ns": NS + rid * 1000 + 10,
        "time_discovered_completed_ns": NS + rid * 1000 + 20 if state == "completed" else None,
        "retired": state == "completed", "timeout_ms": 600000, "is_p2p": p2p, "thread_id": "1", "thread_name": "pt_main",
    }
    if frames:
        e["frames"] = [{"name": op, "filename": "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py",
                        "line": 4174}, {"name": "step", "filename": "/job/train.py", "line": 80 + seq}]
    return e


def dump(entries, ranks, groups):
    return {"version": "2.10", "comm_lib_version": "2.28.9", "entries": entries,
            "pg_config": {g: {"name": g, "desc": d, "ranks": str(r)} for g, (d, r) in groups.items()},
            "pg_status": {"0": {"last_enqueued_collective": max([e["collective_seq_id"] for e in entries] + [0]),
                                "last_started_collective": -1, "last_completed_collective": -1}},
            "nccl_comm_state": {}}


def write(out, rank, d, protocol=None, as_json=True):
    os.makedirs(out + "/json", exist_ok=True)
    os.makedirs(out + "/pkl", exist_ok=True)
    if as_json:
        with open(f"{out}/json/rank{rank}.json", "w") as f:
            json.dump(d, f)
    with open(f"{out}/pkl/rank{rank}.pkl", "wb") as f:
        f.write(pickle.dumps(d, protocol=protocol or 2))


def nccl(out):
    groups = {"0": ("default_pg", [0, 1, 2, 3])}
    for r in range(4):
        es, rid = [], 0
        for s in range(1, 7):
            es.append(entry(rid, s, "all_reduce", dur=0.5 + s)); rid += 1
        es.append(entry(rid, 7, "all_reduce")); rid += 1
        es.append(entry(rid, 7, "all_reduce", sizes=((8,),))); rid += 1
        es.append(entry(rid, 7, "coalesced", sizes=(), out=())); rid += 1
        es.append(entry(rid, 8, "all_gather", sizes=((4,),), out=((16,),))); rid += 1
        es.append(entry(rid, 9, "all_reduce", dtype="BFloat16" if r == 2 else "Float")); rid += 1
        es.append(entry(rid, 10, "all_reduce", state="started" if r == 2 else "completed")); rid += 1
        if r in (0, 1):
            op = "send 0->1" if r == 0 else "recv 1<-0"
            es.append(entry(rid, 0, op, p2p=True, p2p_seq=1)); rid += 1
        if r == 2:  # a send rank 3 never receives
            es.append(entry(rid, 0, "send 2->3", p2p=True, p2p_seq=1, state="started")); rid += 1
        write(out, r, dump(es, [0, 1, 2, 3], groups), protocol=2 + r)


def sizes(out):
    groups = {"0": ("default_pg", [0, 1, 2, 3])}
    for r in range(4):
        es = [entry(0, 1, "all_reduce"), entry(1, 2, "all_gather", sizes=((4,),), out=((12,) if r == 1 else (16,),))]
        write(out, r, dump(es, [0, 1, 2, 3], groups))


def bench(out, ranks, n):
    groups = {"0": ("default_pg", list(range(ranks)))}
    for r in range(ranks):
        last = n - 1 if r == ranks - 1 else n
        es = [entry(i, i + 1, "all_reduce", sizes=((1024, 1024),)) for i in range(last)]
        write(out, r, dump(es, list(range(ranks)), groups), protocol=4, as_json=False)


kind, outdir = sys.argv[1], sys.argv[2]
if kind == "nccl":
    nccl(outdir)
elif kind == "sizes":
    sizes(outdir)
elif kind == "bench":
    bench(outdir, int(sys.argv[3]), int(sys.argv[4]))
else:
    sys.exit("unknown kind " + kind)
