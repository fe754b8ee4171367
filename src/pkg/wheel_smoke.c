/* `wheel verify --smoke N`: N local ranks of a torch.distributed harness run
 * from the installed wheel, launched as `cclforge smoke` launches local ranks
 * (one process each, RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT),
 * rendezvous through torch's own TCPStore, supervised: a rank that fails or
 * dies stops the others, and the run has a deadline. Backends:
 *   nccl  the installed bridge's make_nccl_backend (needs N GPUs)
 *   gloo  torch's ProcessGroupGloo on CPU, after importing the installed
 *         bridge module: launching, rendezvous, the RANK_PASS lines and
 *         supervision run for real on hosts without GPUs. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/fs.h"
#include "pkg/wheel_internal.h"

extern char **environ;

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

static pid_t spawn_rank(const char *py, const char *work, const char *module, const char *backend, int r, int n,
                        int port)
{
    struct strvec env = STRVEC_INIT;
    static const char *const drop[] = { "RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "MASTER_ADDR=", "MASTER_PORT=",
                                        "PYTHONPATH=" };
    for (char **e = environ; *e; e++) {
        int keep = 1;
        for (size_t k = 0; k < sizeof drop / sizeof drop[0]; k++)
            keep &= !cf_starts_with(*e, drop[k]);
        if (keep)
            cf_strvec_push(&env, *e);
    }
    cf_strvec_pushf(&env, "RANK=%d", r);
    cf_strvec_pushf(&env, "WORLD_SIZE=%d", n);
    cf_strvec_pushf(&env, "LOCAL_RANK=%d", r);
    cf_strvec_push(&env, "MASTER_ADDR=127.0.0.1");
    cf_strvec_pushf(&env, "MASTER_PORT=%d", port);
    char *log = cf_asprintf("%s/rank%d.log", work, r);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addchdir_np(&fa, work);
    const char *argv[] = { py, "-I", "-W", "ignore", "-c", smoke_script, module, backend, NULL };
    pid_t pid = -1;
    if (posix_spawn(&pid, py, &fa, NULL, (char *const *)argv, cf_strvec_argv(&env)) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    cf_strvec_clear(&env);
    free(log);
    return pid;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* How each rank ended, in words, for the check's detail. */
static void describe_rank(struct strbuf *sb, int r, int status, int killed)
{
    if (killed)
        cf_sb_addf(sb, "%srank %d stopped by the supervisor", sb->len ? "; " : "", r);
    else if (WIFSIGNALED(status))
        cf_sb_addf(sb, "%srank %d died of signal %d", sb->len ? "; " : "", r, WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status))
        cf_sb_addf(sb, "%srank %d exited %d", sb->len ? "; " : "", r, WEXITSTATUS(status));
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
    int port = free_port();
    pid_t *pids = cf_xcalloc((size_t)n, sizeof *pids);
    int *status = cf_xcalloc((size_t)n, sizeof *status), *done = cf_xcalloc((size_t)n, sizeof *done),
        *killed = cf_xcalloc((size_t)n, sizeof *killed);
    for (int r = 0; r < n; r++)
        pids[r] = spawn_rank(py, work, module, backend, r, n, port);
    double deadline = cf_now_seconds() + (opts->timeout_s > 0 ? opts->timeout_s : 300);
    double stop_at = 0;
    int left = n;
    for (int r = 0; r < n; r++)
        if (pids[r] <= 0) {
            done[r] = 1;
            status[r] = 127 << 8;
            left--;
        }
    while (left > 0) {
        int progressed = 0;
        for (int r = 0; r < n; r++) {
            if (done[r])
                continue;
            pid_t w = waitpid(pids[r], &status[r], WNOHANG);
            if (w == pids[r] || (w < 0 && errno == ECHILD)) {
                done[r] = 1;
                left--;
                progressed = 1;
                /* one rank down: the others cannot finish a collective, give them a moment */
                if (!(WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0) && !stop_at)
                    stop_at = cf_now_seconds() + 10;
            }
        }
        double now = cf_now_seconds();
        if (left > 0 && ((stop_at && now > stop_at) || now > deadline)) {
            for (int r = 0; r < n; r++)
                if (!done[r]) {
                    kill(pids[r], SIGKILL);
                    waitpid(pids[r], &status[r], 0);
                    done[r] = killed[r] = 1;
                    left--;
                }
        }
        if (!progressed && left > 0)
            sleep_ms(50);
    }
    int failed = 0;
    struct strbuf how = STRBUF_INIT;
    for (int r = 0; r < n; r++) {
        int ok = !killed[r] && WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0;
        failed += !ok;
        if (!ok)
            describe_rank(&how, r, status[r], killed[r]);
        char *log = cf_asprintf("%s/rank%d.log", work, r);
        struct strbuf text = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        if (cf_read_file(log, 1 << 20, &text, &err) == 0) {
            struct strvec lines = STRVEC_INIT;
            cf_strvec_split(&lines, cf_sb_str(&text), "\n", 0);
            for (size_t i = 0; i < lines.n; i++)
                if (cf_starts_with(lines.v[i], "RANK_PASS") || cf_starts_with(lines.v[i], "RANK_FAIL")) {
                    cf_strvec_push(&res->smoke_lines, lines.v[i]);
                }
            /* what it said last, besides its RANK line: the reason it died */
            for (size_t i = lines.n; !ok && i-- > 0;)
                if (*lines.v[i] && !cf_starts_with(lines.v[i], "RANK_")) {
                    cf_sb_addf(&how, " (its last words: %.300s)", lines.v[i]);
                    break;
                }
            cf_strvec_clear(&lines);
        }
        cf_error_clear(&err);
        cf_sb_release(&text);
        free(log);
    }
    cf_wheel_add_check(res, "smoke", failed ? 0 : 1,
                       "%d-rank %s all_reduce, broadcast, all_gather, reduce_scatter through the installed %s: %d "
                       "rank(s) failed%s%s (logs in %s)",
                       n, backend, module, failed, how.len ? ": " : "", how.len ? how.buf : "", work);
    cf_sb_release(&how);
    free(pids);
    free(status);
    free(done);
    free(killed);
}
