/* cf_smoke_run: decide the role (supervisor, rank under a launcher, supervised rank)
 * and run it; the report that comes back is what the CLI prints. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/clock.h"
#include "cclforge/envp.h"
#include "smoke/smoke_internal.h"

static const char *backend_name(enum cf_smoke_backend_kind k)
{
    static const char *const names[] = { [CF_BACKEND_NCCL] = "nccl", [CF_BACKEND_RCCL] = "rccl",
                                         [CF_BACKEND_MPI] = "mpi" };
    return names[k];
}

/* ---- a rank under an external launcher: events go straight to the caller ---- */

struct direct_sink {
    cf_smoke_event_fn fn;
    void *ctx;
    struct strbuf doing;
    struct cf_smoke_report *rep;
    struct smoke_watchdog *watchdog;
};

static void direct_begin(struct smoke_sink *s, const char *doing, int waits)
{
    (void)waits;
    struct direct_sink *d = s->ctx;
    cf_smoke_watchdog_progress(d->watchdog, doing);
    cf_sb_reset(&d->doing);
    cf_sb_adds(&d->doing, doing);
}

static void direct_progress(struct smoke_sink *s)
{
    struct direct_sink *d = s->ctx;
    cf_smoke_watchdog_progress(d->watchdog, NULL);
}

static void direct_event(struct smoke_sink *s, const struct cf_smoke_event *ev)
{
    struct direct_sink *d = s->ctx;
    if (ev->kind == CF_EV_RESULT) {
        char *what = cf_smoke_describe(&ev->row);
        char *after = cf_asprintf("between tests, after %s", what);
        cf_smoke_watchdog_progress(d->watchdog, after);
        free(after);
        free(what);
    } else {
        cf_smoke_watchdog_progress(d->watchdog, NULL);
    }
    cf_smoke_report_take(d->rep, ev);
    if (d->fn)
        d->fn(d->ctx, ev);
}

static int rendezvous_for(const struct cf_launch_info *le, const struct cf_smoke_opts *o,
                          struct smoke_rendezvous *rdv, cf_error *err)
{
    memset(rdv, 0, sizeof *rdv);
    rdv->listen_fd = -1;
    rdv->timeout_s = o->connect_timeout_s;
    if (cf_launch_secret_for(le, o->envp, &rdv->secret, err) < 0)
        return -1;
    const char *fd = cf_envp_get(o->envp, SMOKE_LISTEN_FD_ENV);
    if (fd && le->rank == 0)
        rdv->listen_fd = atoi(fd); /* the local supervisor opened it for rank 0 */
    if (le->master_addr[0] && le->master_port > 0) {
        rdv->transport = SMOKE_ID_TCP;
        memcpy(rdv->addr, le->master_addr, sizeof rdv->addr);
        rdv->port = le->master_port;
    } else if (!strcmp(le->launcher, "mpirun") || !strcmp(le->launcher, "pmi")) {
        rdv->transport = SMOKE_ID_MPI;
    } else {
        rdv->transport = SMOKE_ID_NONE;
    }
    return 0;
}

/* The supervised rank's channel to its supervisor: an authenticated connection. */
static int connect_supervisor(const struct cf_smoke_opts *o, const struct cf_launch_info *le,
                              const struct cf_launch_secret *secret, cf_error *err)
{
    const char *where = cf_envp_get(o->envp, SMOKE_SUPERVISOR_ENV);
    const char *colon = where ? strrchr(where, ':') : NULL;
    if (!colon || colon == where || colon - where >= 256)
        return cf_error_set(err, CF_ERR_USAGE, "%s must be HOST:PORT", SMOKE_SUPERVISOR_ENV);
    char host[256];
    memcpy(host, where, (size_t)(colon - where));
    host[colon - where] = 0;
    struct cf_launch_peer sup;
    if (cf_launch_connect(host, atoi(colon + 1), "the supervisor", secret, SMOKE_RECORDS_TAG, le->rank, le->world,
                          o->connect_timeout_s, &sup, err) < 0)
        return -1; /* the error names the rank and the supervisor */
    return sup.fd;
}

static int run_as_rank(const struct cf_smoke_opts *o, const struct cf_launch_info *le, int supervised,
                       cf_smoke_event_fn on_event, void *ctx, struct cf_smoke_report *rep, cf_error *err)
{
    struct smoke_rank_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.opts = o;
    setup.ctx.rank = le->rank;
    setup.ctx.nranks = le->world;
    setup.ctx.local_rank = le->local_rank;
    setup.hostname = le->hostname;
    if (rendezvous_for(le, o, &setup.rdv, err) < 0)
        return -1;
    rep->launcher = le->launcher;
    rep->backend = backend_name(o->backend);
    rep->nranks = le->world;

    struct smoke_sink sink;
    memset(&sink, 0, sizeof sink);
    struct direct_sink direct = { on_event, ctx, STRBUF_INIT, rep, NULL };
    int out_fd = 1;
    if (supervised) {
        rep->role = CF_ROLE_SUPERVISED_RANK;
        /* the supervisor may be killed: do not outlive it; a write to it once gone must
         * fail, not kill the rank */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGPIPE, SIG_IGN);
        out_fd = connect_supervisor(o, le, &setup.rdv.secret, err);
        if (out_fd < 0)
            return -1;
        cf_smoke_record_sink(&sink, &out_fd, le->rank, le->local_rank);
    } else {
        rep->role = CF_ROLE_RANK;
        sink.begin = direct_begin;
        sink.event = direct_event;
        sink.progress = direct_progress;
        sink.ctx = &direct;
        sink.rank = le->rank;
        sink.local_rank = le->local_rank;
        direct.watchdog = cf_smoke_watchdog_start(o->op_timeout_s, on_event, ctx, le->rank, le->local_rank);
    }
    cf_error rank_err = CF_ERROR_INIT;
    int rc = cf_smoke_rank_main(&setup, &sink, rep, &rank_err);
    cf_smoke_watchdog_stop(direct.watchdog);
    direct.watchdog = NULL;
    struct cf_smoke_event ev = { .kind = rc < 0 ? CF_EV_FAIL : CF_EV_INFO, .rank = le->rank,
                                 .local_rank = le->local_rank };
    if (supervised) {
        ev.text = rc < 0 ? cf_error_message(&rank_err) : NULL;
        struct strbuf line = STRBUF_INIT;
        cf_smoke_record_encode(&line, rc < 0 ? REC_FAIL : REC_DONE, &ev, 0);
        cf_write_all(out_fd, line.buf, line.len);
        cf_sb_release(&line);
        close(out_fd);
    } else if (rc < 0) {
        struct strbuf text = STRBUF_INIT;
        cf_sb_addf(&text, "%s (while %s)", cf_error_message(&rank_err),
                   direct.doing.len ? cf_sb_str(&direct.doing) : "starting");
        ev.text = cf_sb_str(&text);
        direct_event(&sink, &ev);
        cf_sb_release(&text);
    }
    if (rc < 0) {
        cf_smoke_report_add_failure(rep, le->rank, direct.doing.len ? cf_sb_str(&direct.doing) : "",
                                    cf_error_message(&rank_err));
        rep->aborted = 1;
    }
    cf_error_clear(&rank_err);
    cf_sb_release(&direct.doing);
    return 0;
}

static int check_opts(const struct cf_smoke_opts *o, cf_error *err)
{
    if (o->sweep.min_bytes > o->sweep.max_bytes)
        return cf_error_set(err, CF_ERR_USAGE, "-b %zu is larger than -e %zu", o->sweep.min_bytes,
                            o->sweep.max_bytes);
    if (!o->ops || !o->dtypes || !o->places || !o->redops)
        return cf_error_set(err, CF_ERR_USAGE,
                            "nothing to run: no collective, data type, reduction or placement chosen");
    if (o->iters < 1 || o->warmup_iters < 0 || o->check < 0)
        return cf_error_set(err, CF_ERR_USAGE, "iteration counts must be at least 1 (-w and -c: 0)");
    return 0;
}

int cf_smoke_role_for(const struct cf_smoke_opts *o, cf_error *err)
{
    struct cf_launch_info le;
    int found = cf_launch_detect(o->envp, &le, err);
    if (found < 0)
        return -1;
    const char *sup = cf_envp_get(o->envp, SMOKE_SUPERVISED_ENV);
    if (!found)
        return CF_ROLE_SUPERVISOR;
    return sup && !strcmp(sup, "1") ? CF_ROLE_SUPERVISED_RANK : CF_ROLE_RANK;
}

int cf_smoke_run(const struct cf_smoke_opts *o, cf_smoke_event_fn on_event, void *ctx,
                 struct cf_smoke_report *rep, cf_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (check_opts(o, err) < 0)
        return -1;
    struct cf_launch_info le;
    int found = cf_launch_detect(o->envp, &le, err);
    if (found < 0)
        return -1;
    const char *sup = cf_envp_get(o->envp, SMOKE_SUPERVISED_ENV);
    int supervised = sup && !strcmp(sup, "1");
    int rc;
    if (found) {
        if (!supervised && o->nranks > 0 && o->nranks != le.world)
            return cf_error_set(err, CF_ERR_USAGE,
                                "-n %d, but %s started %d ranks and this is rank %d of them: drop -n under a "
                                "launcher",
                                o->nranks, le.launcher, le.world, le.rank);
        rc = run_as_rank(o, &le, supervised, on_event, ctx, rep, err);
    } else if (supervised) {
        return cf_error_set(err, CF_ERR_USAGE,
                            "%s is set but no launcher's rank variables are: was this started by mpirun?",
                            SMOKE_SUPERVISED_ENV);
    } else {
        rep->backend = backend_name(o->backend);
        rc = cf_smoke_supervise(o, on_event, ctx, rep, err);
    }
    if (rc < 0)
        return -1;
    cf_smoke_verdict(rep, o);
    return 0;
}
