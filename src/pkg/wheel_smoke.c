/* `wheel verify --smoke N`: N local ranks of a torch.distributed harness run
 * from the installed wheel, launched as `cclforge smoke` launches local ranks
 * (one process each, RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT),
 * rendezvous through torch's own TCPStore, supervised by cclforge/ranks.h: a
 * rank that fails or dies stops the others after a grace period, and a hung
 * one is killed at the deadline. Backends:
 *   nccl  the installed bridge's make_nccl_backend (needs N GPUs)
 *   gloo  torch's ProcessGroupGloo on CPU, after importing the installed
 *         bridge module: launching, rendezvous, the RANK_PASS lines and
 *         supervision run for real on hosts without GPUs. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/ranks.h"
#include "pkg/wheel_verify_internal.h"

/* argv: module, backend. Environment: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. */
static const char smoke_script[] =
    "import os, sys, time, datetime, importlib\n"
    "import torch, torch.distributed as dist\n"
    "m = importlib.import_module(sys.argv[1])\n"
    "backend = sys.argv[2]\n"
    "rank, size = int(os.environ['RANK']), int(os.environ['WORLD_SIZE'])\n"
    "local = int(os.environ['LOCAL_RANK'])\n"
    "store = dist.TCPStore(os.environ['MASTER_ADDR'], int(os.environ['MASTER_PORT']), size, rank == 0,\n"
    "                      timeout=datetime.timedelta(seconds=60))\n"
    "if backend == 'nccl':\n"
    "    torch.cuda.set_device(local)\n"
    "    pg = m.make_nccl_backend(store, rank, size, timeout_ms=60000)\n"
    "    dev = torch.device('cuda', local)\n"
    "    sync = torch.cuda.synchronize\n"
    "else:\n"
    "    pg = dist.ProcessGroupGloo(store, rank, size)\n"
    "    dev = torch.device('cpu')\n"
    "    sync = lambda: None\n"
    "failed = []\n"
    "def check(op, ok):\n"
    "    if not ok:\n"
    "        failed.append(op)\n"
    "t = torch.full((1024,), float(rank + 1), device=dev)\n"
    "pg.allreduce([t]).wait(); sync()\n"
    "value = float(t[0])\n"
    "check('all_reduce', bool((t == size * (size + 1) / 2).all()))\n"
    "t = torch.full((1024,), float(rank), device=dev)\n"
    "pg.broadcast([t]).wait(); sync()\n"
    "check('broadcast', bool((t == 0).all()))\n"
    "t = torch.full((16,), float(rank), device=dev)\n"
    "outs = [torch.empty(16, device=dev) for _ in range(size)]\n"
    "pg.allgather([outs], [t]).wait(); sync()\n"
    "check('all_gather', all(bool((o == i).all()) for i, o in enumerate(outs)))\n"
    "ins = [torch.full((16,), float(i + rank), device=dev) for i in range(size)]\n"
    "out = torch.empty(16, device=dev)\n"
    "pg.reduce_scatter([out], [ins]).wait(); sync()\n"
    "check('reduce_scatter', bool((out == sum(rank + r for r in range(size))).all()))\n"
    "# orderly shutdown: no rank leaves while another still holds its end of a\n"
    "# connection, and the store's server (rank 0) leaves last\n"
    "del pg\n"
    "store.add('cclforge_closed', 1)\n"
    "while store.add('cclforge_closed', 0) < size:\n"
    "    time.sleep(0.01)\n"
    "if rank == 0:\n"
    "    time.sleep(0.5)\n"
    "word = 'RANK_FAIL' if failed else 'RANK_PASS'\n"
    "extra = (' failed=' + ','.join(failed)) if failed else ''\n"
    "print('%s rank=%d local_rank=%d value=%.1f%s' % (word, rank, local, value, extra), flush=True)\n"
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
    struct strvec logs = STRVEC_INIT;
    const char *argv[] = { py, "-I", "-W", "ignore", "-c", smoke_script, module, backend, NULL };
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
        ranks[r] = (struct cf_rank_spec){ .argv = argv, .env_set = (const char *const *)cf_strvec_argv(&envs[r]),
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
            /* what it said last, besides its RANK line: the reason it died */
            for (size_t i = lines.n; !ok && i-- > 0;)
                if (*lines.v[i] && !cf_starts_with(lines.v[i], "RANK_")) {
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
                       "%d-rank %s all_reduce, broadcast, all_gather, reduce_scatter through the installed %s: %d "
                       "rank(s) failed%s%s (logs in %s)",
                       n, backend, module, failed, how.len ? ": " : "", how.len ? how.buf : "", work);
    cf_sb_release(&how);
    cf_strvec_clear(&logs);
    free(envs);
    free(outs);
    free(ranks);
}
