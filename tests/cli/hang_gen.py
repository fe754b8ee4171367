"""One rank of a gloo job that leaves a Flight Recorder dump (pickle and JSON)
for tests/cli/hang.sh. python3 hang_gen.py SCENARIO RANK WORLD OUTDIR PORT

  mixed:   the default group's 3 all_reduces, a subgroup [0, 1] before the
           divergence, then on a second group of every rank rank 2 issues a
           broadcast where the others issue an all_reduce, then on the default
           group rank 1 skips the last all_reduce.
  wrapped: 12 all_reduces, rank 3 skips the 13th (run with a small
           TORCH_FR_BUFFER_SIZE, so the ring wraps).
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

scenario, rank, world, out, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = port
dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=20))
t = torch.ones(4)
pending = []
if scenario == "mixed":
    for _ in range(3):
        dist.all_reduce(t)
    sub = dist.new_group([0, 1])
    every = dist.new_group(list(range(world)))
    if rank in (0, 1):
        dist.all_reduce(t, group=sub)
    dist.all_reduce(t, group=every)
    if rank == 2:
        pending.append(dist.broadcast(t.clone(), 2, group=every, async_op=True))
    else:
        pending.append(dist.all_reduce(t.clone(), group=every, async_op=True))
    dist.barrier()
    if rank != 1:
        pending.append(dist.all_reduce(t, async_op=True))
elif scenario == "wrapped":
    for _ in range(12):
        dist.all_reduce(t)
    if rank != 3:
        pending.append(dist.all_reduce(t, async_op=True))
time.sleep(1)
with open(f"{out}/pkl/rank{rank}.pkl", "wb") as f:
    f.write(torch._C._distributed_c10d._dump_fr_trace())
j = torch._C._distributed_c10d._dump_fr_trace_json()
with open(f"{out}/json/rank{rank}.json", "wb") as f:
    f.write(j if isinstance(j, bytes) else j.encode())
sys.stdout.flush()
os._exit(0)
