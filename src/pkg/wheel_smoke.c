/* `wheel verify --smoke N`: N local ranks of a torch.distributed harness run
 * from the installed wheel, launched as `cclforge smoke` launches local ranks
 * (one process each, RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT),
 * supervised by cclforge/ranks.h: a rank that fails or dies stops the others
 * after a grace period, and a hung one is killed at the deadline.
 *
 * The harness goes through torch's own front door, as a plugin does: it
 * registers a backend with torch.distributed.Backend.register_backend whose
 * creator makes the process group, and init_process_group, new_group and
 * DeviceMesh reach it through that registry. The creator:
 *   nccl  the installed bridge's make_nccl_backend (needs N GPUs)
 *   gloo  torch's ProcessGroupGloo on CPU, after importing the installed
 *         bridge module: the registry, every item, launching and
 *         supervision run for real on hosts without GPUs; the bridge's own
 *         collectives only on GPUs.
 * Each item of `items` is one check, "smoke <item>": passed on every rank,
 * failed (the rank and what differed), or not applicable, and only for the
 * reason the table gives. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/ranks.h"
#include "pkg/wheel_verify_internal.h"

/* argv: module, backend, then the items to run (names of `items` below, in
 * order). Environment: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
 * MASTER_PORT. One "SMOKE_ITEM <name> pass|fail|na <why>" line per item, then
 * RANK_PASS or RANK_FAIL. Every value is checked exactly (integers in float
 * tensors), the model steps against the same step in one process. */
static const char smoke_script[] =
    "import os, sys, time, datetime, importlib\n"
    "import torch, torch.distributed as dist\n"
    "m = importlib.import_module(sys.argv[1])\n"
    "backend, asked = sys.argv[2], sys.argv[3:]\n"
    "rank, size = int(os.environ['RANK']), int(os.environ['WORLD_SIZE'])\n"
    "local = int(os.environ['LOCAL_RANK'])\n"
    "NAME = 'cclforge_smoke'\n"
    "created = []\n"
    "# the backend goes through torch's own registry, as a plugin's does: the\n"
    "# creator is what init_process_group and new_group call\n"
    "if backend == 'nccl':\n"
    "    torch.cuda.set_device(local)\n"
    "    dev = torch.device('cuda', local)\n"
    "    sync = torch.cuda.synchronize\n"
    "    def creator(store, group_rank, group_size, timeout):\n"
    "        created.append(group_size)\n"
    "        return m.make_nccl_backend(store, group_rank, group_size, timeout_ms=int(timeout.total_seconds() * 1000))\n"
    "else:\n"
    "    dev = torch.device('cpu')\n"
    "    sync = lambda: None\n"
    "    def creator(store, group_rank, group_size, timeout):\n"
    "        created.append(group_size)\n"
    "        return dist.ProcessGroupGloo(store, group_rank, group_size, timeout)\n"
    "dist.Backend.register_backend(NAME, creator, devices=[dev.type])\n"
    "dist.init_process_group(backend=NAME, init_method='env://', rank=rank, world_size=size,\n"
    "                        timeout=datetime.timedelta(seconds=60))\n"
    "def barrier(group=None):\n"
    "    # on GPUs the rank's own device, never the current context's default\n"
    "    dist.barrier(group=group, device_ids=[local] if dev.type == 'cuda' else None)\n"
    "def say(name, status, detail=''):\n"
    "    print('SMOKE_ITEM %s %s %s' % (name, status, ' '.join(str(detail).split())[:600]), flush=True)\n"
    "def full(n, v, dtype=torch.float32):\n"
    "    return torch.full((n,), float(v), device=dev, dtype=dtype)\n"
    "def differs(what, got, want):\n"
    "    got, want = got.detach().cpu(), want.detach().cpu()\n"
    "    if got.shape != want.shape:\n"
    "        return '%s: shape %s, expected %s' % (what, tuple(got.shape), tuple(want.shape))\n"
    "    bad = (got != want).nonzero()\n"
    "    if len(bad) == 0:\n"
    "        return None\n"
    "    i = tuple(bad[0].tolist())\n"
    "    return '%s: %d element(s) differ, the first at %s: got %r, expected %r' % (what, len(bad), list(i), got[i].item(), want[i].item())\n"
    "def first(*whys):\n"
    "    return next((w for w in whys if w), None)\n"
    "def ours(what, g):\n"
    "    b = dist.get_backend(g)\n"
    "    return None if b == NAME else '%s runs on backend %r, not the registered %r' % (what, b, NAME)\n"
    "value = [0.0]\n"
    "def t_backend():\n"
    "    if not created or created[0] != size:\n"
    "        return 'init_process_group did not create the default group through the registered creator (calls: %r)' % created\n"
    "    return ours('the default group', None)\n"
    "def t_all_reduce():\n"
    "    t = full(1024, rank + 1)\n"
    "    dist.all_reduce(t); sync()\n"
    "    value[0] = float(t[0])\n"
    "    return differs('sum', t, full(1024, size * (size + 1) // 2))\n"
    "def t_broadcast():\n"
    "    src = size - 1\n"
    "    t = full(1024, rank + 7)\n"
    "    dist.broadcast(t, src=src); sync()\n"
    "    return differs('from rank %d' % src, t, full(1024, src + 7))\n"
    "def t_all_gather():\n"
    "    outs = [full(16, -1) for _ in range(size)]\n"
    "    dist.all_gather(outs, full(16, rank * 3 + 1)); sync()\n"
    "    return first(*(differs('slot %d' % i, o, full(16, i * 3 + 1)) for i, o in enumerate(outs)))\n"
    "def t_reduce_scatter():\n"
    "    out = full(16, -1)\n"
    "    dist.reduce_scatter(out, [full(16, 100 * i + rank) for i in range(size)]); sync()\n"
    "    return differs('its shard', out, full(16, 100 * rank * size + size * (size - 1) // 2))\n"
    "def t_send_recv():\n"
    "    nxt, prv = (rank + 1) % size, (rank - 1) % size\n"
    "    got = full(64, -1)\n"
    "    w = dist.isend(full(64, rank * 10 + 5), nxt)\n"
    "    dist.recv(got, prv)\n"
    "    w.wait(); sync()\n"
    "    return differs('from rank %d' % prv, got, full(64, prv * 10 + 5))\n"
    "def t_barrier():\n"
    "    store = dist.distributed_c10d._get_default_store()\n"
    "    store.add('cclforge_barrier_%d' % rank, 1)  # answered by the store: a set is sent unanswered\n"
    "    barrier(); sync()\n"
    "    late = [r for r in range(size) if not store.check(['cclforge_barrier_%d' % r])]\n"
    "    return 'left the barrier before rank(s) %s reached it' % late if late else None\n"
    "def t_async():\n"
    "    a, b, c = full(256, rank + 1), full(256, rank), full(32, rank + 2)\n"
    "    outs = [full(32, -1) for _ in range(size)]\n"
    "    works = [dist.all_reduce(a, async_op=True), dist.broadcast(b, src=0, async_op=True),\n"
    "             dist.all_gather(outs, c, async_op=True)]\n"
    "    for w in reversed(works):\n"
    "        w.wait()\n"
    "    sync()\n"
    "    return first(differs('all_reduce', a, full(256, size * (size + 1) // 2)), differs('broadcast', b, full(256, 0)),\n"
    "                 *(differs('all_gather slot %d' % i, o, full(32, i + 2)) for i, o in enumerate(outs)))\n"
    "def t_subgroup():\n"
    "    evens = list(range(0, size, 2))\n"
    "    g = dist.new_group(evens)\n"
    "    if rank in evens:\n"
    "        t = full(128, rank + 1)\n"
    "        dist.all_reduce(t, group=g); sync()\n"
    "        why = ours('the subgroup', g) or differs('sum over ranks %s' % evens, t, full(128, sum(r + 1 for r in evens)))\n"
    "    else:\n"
    "        why = None if g == dist.GroupMember.NON_GROUP_MEMBER else 'not one of ranks %s, yet a member of their group' % evens\n"
    "    barrier()\n"
    "    return why\n"
    "def t_device_mesh():\n"
    "    from torch.distributed.device_mesh import init_device_mesh\n"
    "    half = size // 2\n"
    "    mesh = init_device_mesh(dev.type, (2, half), mesh_dim_names=('replicate', 'shard'))\n"
    "    whys = []\n"
    "    for dim, members in (('replicate', [rank % half + k * half for k in range(2)]),\n"
    "                         ('shard', [rank // half * half + j for j in range(half)])):\n"
    "        g = mesh.get_group(dim)\n"
    "        got = sorted(dist.get_process_group_ranks(g))\n"
    "        t = full(64, rank + 1)\n"
    "        dist.all_reduce(t, group=g); sync()\n"
    "        whys.append('the %s dimension holds ranks %s, expected %s' % (dim, got, members) if got != members else\n"
    "                    ours('the %s dimension' % dim, g) or\n"
    "                    differs('%s sum over ranks %s' % (dim, members), t, full(64, sum(r + 1 for r in members))))\n"
    "    return first(*whys)\n"
    "def model_of(seed):\n"
    "    torch.manual_seed(seed)\n"
    "    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to(dev, torch.float64)\n"
    "def batch(r):\n"
    "    return torch.randn(4, 8, generator=torch.Generator().manual_seed(1000 + r), dtype=torch.float64).to(dev)\n"
    "def reference():\n"
    "    # the same step in one process: the mean of every rank's loss\n"
    "    ref = model_of(0)\n"
    "    opt = torch.optim.SGD(ref.parameters(), lr=0.1)\n"
    "    (sum(ref(batch(r)).square().sum() for r in range(size)) / size).backward()\n"
    "    grads = [p.grad.clone() for p in ref.parameters()]\n"
    "    opt.step()\n"
    "    return grads, [p.detach().clone() for p in ref.parameters()]\n"
    "def agree(what, tensors):\n"
    "    flat = torch.cat([t.detach().reshape(-1) for t in tensors])\n"
    "    outs = [torch.empty_like(flat) for _ in range(size)]\n"
    "    dist.all_gather(outs, flat); sync()\n"
    "    return first(*('%s differ between rank %d and rank %d' % (what, rank, r) for r, o in enumerate(outs)\n"
    "                   if not torch.equal(o, flat)))\n"
    "def near(what, got, want):\n"
    "    return first(*('%s %d is %.3g from the one-process reference' % (what, i, (g - w).abs().max().item())\n"
    "                   for i, (g, w) in enumerate(zip(got, want)) if not torch.allclose(g, w, rtol=1e-9, atol=1e-12)))\n"
    "def step(model, params, grads_of):\n"
    "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "    model(batch(rank)).square().sum().backward()\n"
    "    grads = grads_of()\n"
    "    why = agree('gradients', grads)\n"
    "    opt.step()\n"
    "    why = why or agree('parameters', params())\n"
    "    want_g, want_p = reference()\n"
    "    return why or near('gradient', grads, want_g) or near('parameter', params(), want_p)\n"
    "def t_ddp():\n"
    "    from torch.nn.parallel import DistributedDataParallel as DDP\n"
    "    inner = model_of(rank)  # different on each rank: DDP must start from rank 0's\n"
    "    ddp = DDP(inner, device_ids=[local] if dev.type == 'cuda' else None)\n"
    "    return step(ddp, lambda: list(inner.parameters()), lambda: [p.grad for p in inner.parameters()])\n"
    "def t_fsdp2():\n"
    "    try:\n"
    "        from torch.distributed.fsdp import fully_shard\n"
    "    except ImportError:\n"
    "        return ('na', 'torch %s has no torch.distributed.fsdp.fully_shard' % torch.__version__)\n"
    "    model = model_of(0)\n"
    "    for layer in model:\n"
    "        if isinstance(layer, torch.nn.Linear):\n"
    "            fully_shard(layer)\n"
    "    fully_shard(model)\n"
    "    return step(model, lambda: [p.full_tensor() for p in model.parameters()],\n"
    "                lambda: [p.grad.full_tensor() for p in model.parameters()])\n"
    "failed = []\n"
    "for name in asked:\n"
    "    fn = globals().get('t_' + name)\n"
    "    try:\n"
    "        why = fn() if fn else 'this harness has no item ' + name\n"
    "    except Exception as e:\n"
    "        why = 'raised %s: %s' % (type(e).__name__, (str(e).strip().splitlines() or [''])[0])\n"
    "    if isinstance(why, tuple):\n"
    "        say(name, 'na', why[1])\n"
    "    elif why:\n"
    "        say(name, 'fail', why)\n"
    "        failed.append(name)\n"
    "    else:\n"
    "        say(name, 'pass')\n"
    "# orderly shutdown: no rank leaves while another still needs its end of a\n"
    "# connection, and the store's server (rank 0) leaves last\n"
    "store = dist.distributed_c10d._get_default_store()\n"
    "barrier()\n"
    "dist.destroy_process_group()\n"
    "store.add('cclforge_closed', 1)\n"
    "while store.add('cclforge_closed', 0) < size:\n"
    "    time.sleep(0.01)\n"
    "if rank == 0:\n"
    "    time.sleep(0.5)\n"
    "word = 'RANK_FAIL' if failed else 'RANK_PASS'\n"
    "extra = (' failed=' + ','.join(failed)) if failed else ''\n"
    "print('%s rank=%d local_rank=%d value=%.1f%s' % (word, rank, local, value[0], extra), flush=True)\n"
    "sys.exit(1 if failed else 0)\n";

/* A free TCP port on the loopback (the kernel's choice), 0 when none. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* What the harness runs, in order; a check "smoke <name>" each. */
static const struct smoke_item {
    const char *name;
    int min_ranks;      /* fewer ranks: not applicable */
    int even;           /* an odd rank count: not applicable */
    int torch_may_lack; /* the harness may answer "not applicable" when the installed torch lacks the API */
    const char *what;   /* what passing shows */
} items[] = {
    { "backend", 1, 0, 0,
      "registered with torch.distributed.Backend.register_backend; init_process_group made the default group "
      "through its creator" },
    { "all_reduce", 1, 0, 0, "the sum over every rank, exact" },
    { "broadcast", 1, 0, 0, "the last rank's tensor on every rank, exact" },
    { "all_gather", 1, 0, 0, "every rank's tensor in its slot, exact" },
    { "reduce_scatter", 1, 0, 0, "each rank's shard of the sum, exact" },
    { "send_recv", 2, 0, 0, "around the ring: each rank's tensor reached the next rank, exact" },
    { "barrier", 1, 0, 0, "no rank left it before every rank had reached it" },
    { "async", 1, 0, 0, "all_reduce, broadcast and all_gather in flight at once, waited in reverse order, exact" },
    { "subgroup", 1, 0, 0,
      "new_group of the even ranks on the registered backend: an all_reduce only its members joined, exact" },
    { "device_mesh", 4, 1, 0,
      "a 2-D DeviceMesh (replicate x shard, the HSDP shape) on the registered backend: an all_reduce along each "
      "dimension, exact" },
    { "ddp", 1, 0, 0,
      "one DistributedDataParallel step from different initial weights: gradients and parameters equal on every "
      "rank and to the same step in one process" },
    { "fsdp2", 1, 0, 1,
      "one fully_shard (FSDP2) step: gradients and parameters equal on every rank and to the same step in one "
      "process" },
};
#define N_ITEMS (sizeof items / sizeof items[0])

/* Why an item cannot run with n ranks, NULL when it must. Caller frees. */
static char *not_applicable(const struct smoke_item *it, int n)
{
    if (n < it->min_ranks)
        return cf_asprintf("needs at least %d ranks, this run has %d", it->min_ranks, n);
    if (it->even && n % 2)
        return cf_asprintf("needs an even number of ranks (2 x N/2), this run has %d", n);
    return NULL;
}

/* One rank's answer for one item. */
struct answer {
    char status; /* 0 none, 'p' pass, 'f' fail, 'n' not applicable, 'd' said more than once */
    char *why;
};

/* Reads the SMOKE_ITEM lines of one rank's log into ans[N_ITEMS]. */
static void read_answers(const struct strvec *lines, struct answer *ans)
{
    for (size_t i = 0; i < lines->n; i++) {
        if (!cf_starts_with(lines->v[i], "SMOKE_ITEM "))
            continue;
        const char *name = lines->v[i] + strlen("SMOKE_ITEM ");
        const char *sp = strchr(name, ' ');
        if (!sp)
            continue;
        for (size_t k = 0; k < N_ITEMS; k++) {
            if (strlen(items[k].name) != (size_t)(sp - name) || strncmp(items[k].name, name, (size_t)(sp - name)))
                continue;
            const char *st = sp + 1, *why = strchr(st, ' ');
            why = why ? why + 1 : "";
            char c = cf_starts_with(st, "pass") ? 'p' : cf_starts_with(st, "fail") ? 'f' : cf_starts_with(st, "na ") ? 'n' : 'f';
            if (ans[k].status) {
                c = 'd';
                why = "reported more than once (something else in the rank printed the harness's lines)";
            }
            free(ans[k].why);
            ans[k].status = c;
            ans[k].why = cf_strdup(why);
        }
    }
}

/* The verdict of item k over the n ranks' answers ans[r * N_ITEMS + k]. */
static void judge_item(struct cf_wheel_verify_result *res, size_t k, int n, const struct answer *ans,
                       const char *backend)
{
    const struct smoke_item *it = &items[k];
    char *name = cf_asprintf("smoke %s", it->name);
    char *na = not_applicable(it, n);
    if (na) {
        cf_wheel_add_check(res, name, CF_WHEEL_NA, "not applicable: %s", na);
        free(na);
        free(name);
        return;
    }
    struct strbuf bad = STRBUF_INIT, missing = STRBUF_INIT;
    int n_pass = 0, n_na = 0, shown = 0;
    const char *na_why = NULL;
    for (int r = 0; r < n; r++) {
        const struct answer *a = &ans[(size_t)r * N_ITEMS + k];
        if (a->status == 'p') {
            n_pass++;
        } else if (a->status == 'n' && it->torch_may_lack) {
            n_na++;
            na_why = na_why ? na_why : a->why;
        } else if (!a->status) {
            cf_sb_addf(&missing, "%s%d", missing.len ? ", " : "", r);
        } else if (shown++ < 4) {
            cf_sb_addf(&bad, "%srank %d: %s%s", bad.len ? "; " : "", r,
                       a->status == 'n' ? "said not applicable, yet it applies to this run: " : "", a->why);
        }
    }
    if (shown > 4)
        cf_sb_addf(&bad, "; and %d more rank(s)", shown - 4);
    if (bad.len || missing.len)
        cf_wheel_add_check(res, name, 0, "%s%s%s%s%s", bad.buf ? bad.buf : "", bad.len && missing.len ? "; " : "",
                           missing.len ? "did not run on rank(s) " : "", missing.len ? missing.buf : "",
                           missing.len ? " (the rank ended or hung before it: see smoke)" : "");
    else if (n_na == n)
        cf_wheel_add_check(res, name, CF_WHEEL_NA, "not applicable: %s", na_why);
    else if (n_na)
        cf_wheel_add_check(res, name, 0, "ran on %d rank(s) and not on %d: %s", n_pass, n_na, na_why);
    else
        cf_wheel_add_check(res, name, 1, "%d ranks, %s: %s", n, backend, it->what);
    cf_sb_release(&bad);
    cf_sb_release(&missing);
    free(name);
}

void cf_wheel_run_smoke(const struct cf_wheel_verify_opts *opts, const char *py, const char *work, const char *module,
                        int gpus, struct cf_wheel_verify_result *res)
{
    int n = opts->smoke_ranks;
    const char *backend = opts->smoke_backend ? opts->smoke_backend : "nccl";
    if (!strcmp(backend, "nccl") && gpus < n) {
        cf_wheel_add_check(res, "smoke", 0,
                           "--smoke %d needs %d GPUs, this host has %d visible: the %d-rank run was NOT performed "
                           "(--backend gloo runs the same harness on CPU)",
                           n, n, gpus, n);
        return;
    }
    double timeout = opts->timeout_s > 0 ? opts->timeout_s : 600;
    int port = free_port();
    struct cf_rank_spec *ranks = cf_xcalloc((size_t)n, sizeof *ranks);
    struct cf_rank_outcome *outs = cf_xcalloc((size_t)n, sizeof *outs);
    struct strvec *envs = cf_xcalloc((size_t)n, sizeof *envs);
    struct answer *ans = cf_xcalloc((size_t)n * N_ITEMS, sizeof *ans);
    struct strvec logs = STRVEC_INIT, argv = STRVEC_INIT;
    cf_strvec_push(&argv, py);
    cf_strvec_push(&argv, "-I");
    cf_strvec_push(&argv, "-W");
    cf_strvec_push(&argv, "ignore");
    cf_strvec_push(&argv, "-c");
    cf_strvec_push(&argv, smoke_script);
    cf_strvec_push(&argv, module);
    cf_strvec_push(&argv, backend);
    for (size_t k = 0; k < N_ITEMS; k++) {
        char *na = not_applicable(&items[k], n);
        if (!na)
            cf_strvec_push(&argv, items[k].name);
        free(na);
    }
    for (int r = 0; r < n; r++) {
        cf_strvec_pushf(&envs[r], "RANK=%d", r);
        cf_strvec_pushf(&envs[r], "WORLD_SIZE=%d", n);
        cf_strvec_pushf(&envs[r], "LOCAL_RANK=%d", r);
        cf_strvec_push(&envs[r], "MASTER_ADDR=127.0.0.1");
        cf_strvec_pushf(&envs[r], "MASTER_PORT=%d", port);
        cf_strvec_push(&envs[r], "PYTHONPATH"); /* the source tree must not leak in */
        cf_strvec_pushf(&logs, "%s/rank%d.log", work, r);
    }
    for (int r = 0; r < n; r++)
        /* contained: what a rank starts (the wheel's code runs in it) ends with it */
        ranks[r] = (struct cf_rank_spec){ .argv = (const char *const *)cf_strvec_argv(&argv),
                                          .env_set = (const char *const *)cf_strvec_argv(&envs[r]),
                                          .cwd = work, .log = logs.v[r], .contain = 1 };
    /* one rank down: the others cannot finish a collective, give them 15 s */
    struct cf_ranks_opts ro = { .timeout_s = timeout, .grace_s = 15.0, .term_wait_s = 3.0 };
    cf_ranks_run(ranks, n, &ro, outs);
    int failed = 0;
    struct strbuf how = STRBUF_INIT;
    for (int r = 0; r < n; r++) {
        int ok = outs[r].end == CF_RANK_EXITED && outs[r].code == 0;
        struct strbuf text = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        int read = cf_read_file(logs.v[r], 1 << 20, &text, &err) == 0;
        /* exit 0 is not enough: the wheel's code runs in the rank and may end
         * it early (os._exit(0) at import); the harness's own line must be there */
        char *pass = cf_asprintf("RANK_PASS rank=%d ", r);
        int said_pass = 0;
        struct strvec lines = STRVEC_INIT;
        if (read)
            cf_strvec_split(&lines, cf_sb_str(&text), "\n", 0);
        for (size_t i = 0; i < lines.n; i++)
            said_pass |= cf_starts_with(lines.v[i], pass);
        free(pass);
        read_answers(&lines, &ans[(size_t)r * N_ITEMS]);
        failed += !ok || !said_pass;
        if (!ok) {
            char *end = cf_rank_describe(&outs[r], timeout);
            cf_sb_addf(&how, "%srank %d %s", how.len ? "; " : "", r, end);
            free(end);
        } else if (!said_pass) {
            cf_sb_addf(&how, "%srank %d exited 0 without the harness's RANK_PASS line (the wheel's code ended it "
                             "before the collectives ran)",
                       how.len ? "; " : "", r);
            ok = 0;
        }
        if (read) {
            for (size_t i = 0; i < lines.n; i++)
                if (cf_starts_with(lines.v[i], "RANK_PASS") || cf_starts_with(lines.v[i], "RANK_FAIL"))
                    cf_strvec_push(&res->smoke_lines, lines.v[i]);
            /* what it said last, besides the harness's lines: the reason it died */
            for (size_t i = lines.n; !ok && i-- > 0;)
                if (*lines.v[i] && !cf_starts_with(lines.v[i], "RANK_") && !cf_starts_with(lines.v[i], "SMOKE_ITEM ")) {
                    cf_sb_addf(&how, " (its last words: %.300s)", lines.v[i]);
                    break;
                }
        }
        cf_strvec_clear(&lines);
        cf_error_clear(&err);
        cf_sb_release(&text);
        cf_strvec_clear(&envs[r]);
    }
    cf_wheel_add_check(res, "smoke", failed ? 0 : 1,
                       "%d-rank %s run through torch.distributed's backend registry, the installed %s imported: %d "
                       "rank(s) failed%s%s (logs in %s)",
                       n, backend, module, failed, how.len ? ": " : "", how.len ? how.buf : "", work);
    for (size_t k = 0; k < N_ITEMS; k++)
        judge_item(res, k, n, ans, backend);
    for (size_t i = 0; i < (size_t)n * N_ITEMS; i++)
        free(ans[i].why);
    free(ans);
    cf_sb_release(&how);
    cf_strvec_clear(&logs);
    cf_strvec_clear(&argv);
    free(envs);
    free(outs);
    free(ranks);
}
