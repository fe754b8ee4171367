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
 * The harness is share/cclforge/python/wheel_smoke.py (its argv and what it
 * prints are said there). Each item of `items` is one check, "smoke <item>":
 * passed on every rank, failed (the rank and what differed), or not
 * applicable, and only for the reason the table gives. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/ranks.h"
#include "cclforge/share.h"
#include "pkg/wheel_verify_internal.h"

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
    cf_error share_err = CF_ERROR_INIT;
    char *harness = cf_share_need("python/wheel_smoke.py", &share_err);
    if (!harness) {
        cf_wheel_add_check(res, "smoke", 0, "%s: the %d-rank run was NOT performed", cf_error_message(&share_err), n);
        cf_error_clear(&share_err);
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
    cf_strvec_push(&argv, harness);
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
    free(harness);
    free(envs);
    free(outs);
    free(ranks);
}
