# `cclforge wheel verify --smoke N`: one rank of the torch.distributed harness,
# run by the installed wheel's interpreter (python -I wheel_smoke.py ...) as
# src/pkg/wheel_smoke.c launches and supervises each local rank.
#
# argv: the bridge module, the backend (nccl: the module's make_nccl_backend;
# gloo: torch's ProcessGroupGloo on CPU, the module imported all the same),
# then the items to run (names of wheel_smoke.c's table, in order).
# Environment: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT.
# Prints one "SMOKE_ITEM <name> pass|fail|na <why>" line per item, then
# RANK_PASS or RANK_FAIL. Every value is checked exactly (integers in float
# tensors), the model steps against the same step in one process.
import os, sys, time, datetime, importlib
import torch, torch.distributed as dist
m = importlib.import_module(sys.argv[1])
backend, asked = sys.argv[2], sys.argv[3:]
rank, size = int(os.environ['RANK']), int(os.environ['WORLD_SIZE'])
local = int(os.environ['LOCAL_RANK'])
NAME = 'cclforge_smoke'
created = []
# the backend goes through torch's own registry, as a plugin's does: the
# creator is what init_process_group and new_group call
if backend == 'nccl':
    torch.cuda.set_device(local)
    dev = torch.device('cuda', local)
    sync = torch.cuda.synchronize
    def creator(store, group_rank, group_size, timeout):
        created.append(group_size)
        return m.make_nccl_backend(store, group_rank, group_size, timeout_ms=int(timeout.total_seconds() * 1000))
else:
    dev = torch.device('cpu')
    sync = lambda: None
    def creator(store, group_rank, group_size, timeout):
        created.append(group_size)
        return dist.ProcessGroupGloo(store, group_rank, group_size, timeout)
dist.Backend.register_backend(NAME, creator, devices=[dev.type])
dist.init_process_group(backend=NAME, init_method='env://', rank=rank, world_size=size,
                        timeout=datetime.timedelta(seconds=60))
def barrier(group=None):
    # on GPUs the rank's own device, never the current context's default
    dist.barrier(group=group, device_ids=[local] if dev.type == 'cuda' else None)
def say(name, status, detail=''):
    print('SMOKE_ITEM %s %s %s' % (name, status, ' '.join(str(detail).split())[:600]), flush=True)
def full(n, v, dtype=torch.float32):
    return torch.full((n,), float(v), device=dev, dtype=dtype)
def differs(what, got, want):
    got, want = got.detach().cpu(), want.detach().cpu()
    if got.shape != want.shape:
        return '%s: shape %s, expected %s' % (what, tuple(got.shape), tuple(want.shape))
    bad = (got != want).nonzero()
    if len(bad) == 0:
        return None
    i = tuple(bad[0].tolist())
    return '%s: %d element(s) differ, the first at %s: got %r, expected %r' % (what, len(bad), list(i), got[i].item(), want[i].item())
def first(*whys):
    return next((w for w in whys if w), None)
def ours(what, g):
    b = dist.get_backend(g)
    return None if b == NAME else '%s runs on backend %r, not the registered %r' % (what, b, NAME)
value = [0.0]
def t_backend():
    if not created or created[0] != size:
        return 'init_process_group did not create the default group through the registered creator (calls: %r)' % created
    return ours('the default group', None)
def t_all_reduce():
    t = full(1024, rank + 1)
    dist.all_reduce(t); sync()
    value[0] = float(t[0])
    return differs('sum', t, full(1024, size * (size + 1) // 2))
def t_broadcast():
    src = size - 1
    t = full(1024, rank + 7)
    dist.broadcast(t, src=src); sync()
    return differs('from rank %d' % src, t, full(1024, src + 7))
def t_all_gather():
    outs = [full(16, -1) for _ in range(size)]
    dist.all_gather(outs, full(16, rank * 3 + 1)); sync()
    return first(*(differs('slot %d' % i, o, full(16, i * 3 + 1)) for i, o in enumerate(outs)))
def t_reduce_scatter():
    out = full(16, -1)
    dist.reduce_scatter(out, [full(16, 100 * i + rank) for i in range(size)]); sync()
    return differs('its shard', out, full(16, 100 * rank * size + size * (size - 1) // 2))
def t_send_recv():
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    got = full(64, -1)
    w = dist.isend(full(64, rank * 10 + 5), nxt)
    dist.recv(got, prv)
    w.wait(); sync()
    return differs('from rank %d' % prv, got, full(64, prv * 10 + 5))
def t_barrier():
    store = dist.distributed_c10d._get_default_store()
    store.add('cclforge_barrier_%d' % rank, 1)  # answered by the store: a set is sent unanswered
    barrier(); sync()
    late = [r for r in range(size) if not store.check(['cclforge_barrier_%d' % r])]
    return 'left the barrier before rank(s) %s reached it' % late if late else None
def t_async():
    a, b, c = full(256, rank + 1), full(256, rank), full(32, rank + 2)
    outs = [full(32, -1) for _ in range(size)]
    works = [dist.all_reduce(a, async_op=True), dist.broadcast(b, src=0, async_op=True),
             dist.all_gather(outs, c, async_op=True)]
    for w in reversed(works):
        w.wait()
    sync()
    return first(differs('all_reduce', a, full(256, size * (size + 1) // 2)), differs('broadcast', b, full(256, 0)),
                 *(differs('all_gather slot %d' % i, o, full(32, i + 2)) for i, o in enumerate(outs)))
def t_subgroup():
    evens = list(range(0, size, 2))
    g = dist.new_group(evens)
    if rank in evens:
        t = full(128, rank + 1)
        dist.all_reduce(t, group=g); sync()
        why = ours('the subgroup', g) or differs('sum over ranks %s' % evens, t, full(128, sum(r + 1 for r in evens)))
    else:
        why = None if g == dist.GroupMember.NON_GROUP_MEMBER else 'not one of ranks %s, yet a member of their group' % evens
    barrier()
    return why
def t_device_mesh():
    from torch.distributed.device_mesh import init_device_mesh
    half = size // 2
    mesh = init_device_mesh(dev.type, (2, half), mesh_dim_names=('replicate', 'shard'))
    whys = []
    for dim, members in (('replicate', [rank % half + k * half for k in range(2)]),
                         ('shard', [rank // half * half + j for j in range(half)])):
        g = mesh.get_group(dim)
        got = sorted(dist.get_process_group_ranks(g))
        t = full(64, rank + 1)
        dist.all_reduce(t, group=g); sync()
        whys.append('the %s dimension holds ranks %s, expected %s' % (dim, got, members) if got != members else
                    ours('the %s dimension' % dim, g) or
                    differs('%s sum over ranks %s' % (dim, members), t, full(64, sum(r + 1 for r in members))))
    return first(*whys)
def model_of(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to(dev, torch.float64)
def batch(r):
    return torch.randn(4, 8, generator=torch.Generator().manual_seed(1000 + r), dtype=torch.float64).to(dev)
def reference():
    # the same step in one process: the mean of every rank's loss
    ref = model_of(0)
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    (sum(ref(batch(r)).square().sum() for r in range(size)) / size).backward()
    grads = [p.grad.clone() for p in ref.parameters()]
    opt.step()
    return grads, [p.detach().clone() for p in ref.parameters()]
def agree(what, tensors):
    flat = torch.cat([t.detach().reshape(-1) for t in tensors])
    outs = [torch.empty_like(flat) for _ in range(size)]
    dist.all_gather(outs, flat); sync()
    return first(*('%s differ between rank %d and rank %d' % (what, rank, r) for r, o in enumerate(outs)
                   if not torch.equal(o, flat)))
def near(what, got, want):
    return first(*('%s %d is %.3g from the one-process reference' % (what, i, (g - w).abs().max().item())
                   for i, (g, w) in enumerate(zip(got, want)) if not torch.allclose(g, w, rtol=1e-9, atol=1e-12)))
def step(model, params, grads_of):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(batch(rank)).square().sum().backward()
    grads = grads_of()
    why = agree('gradients', grads)
    opt.step()
    why = why or agree('parameters', params())
    want_g, want_p = reference()
    return why or near('gradient', grads, want_g) or near('parameter', params(), want_p)
def t_ddp():
    from torch.nn.parallel import DistributedDataParallel as DDP
    inner = model_of(rank)  # different on each rank: DDP must start from rank 0's
    ddp = DDP(inner, device_ids=[local] if dev.type == 'cuda' else None)
    return step(ddp, lambda: list(inner.parameters()), lambda: [p.grad for p in inner.parameters()])
def t_fsdp2():
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        return ('na', 'torch %s has no torch.distributed.fsdp.fully_shard' % torch.__version__)
    model = model_of(0)
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    return step(model, lambda: [p.full_tensor() for p in model.parameters()],
                lambda: [p.grad.full_tensor() for p in model.parameters()])
failed = []
for name in asked:
    fn = globals().get('t_' + name)
    try:
        why = fn() if fn else 'this harness has no item ' + name
    except Exception as e:
        why = 'raised %s: %s' % (type(e).__name__, (str(e).strip().splitlines() or [''])[0])
    if isinstance(why, tuple):
        say(name, 'na', why[1])
    elif why:
        say(name, 'fail', why)
        failed.append(name)
    else:
        say(name, 'pass')
# orderly shutdown: no rank leaves while another still needs its end of a
# connection, and the store's server (rank 0) leaves last
store = dist.distributed_c10d._get_default_store()
barrier()
dist.destroy_process_group()
store.add('cclforge_closed', 1)
while store.add('cclforge_closed', 0) < size:
    time.sleep(0.01)
if rank == 0:
    time.sleep(0.5)
word = 'RANK_FAIL' if failed else 'RANK_PASS'
extra = (' failed=' + ','.join(failed)) if failed else ''
print('%s rank=%d local_rank=%d value=%.1f%s' % (word, rank, local, value[0], extra), flush=True)
sys.exit(1 if failed else 0)
