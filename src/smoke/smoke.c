/* cf_smoke_run: decide the role (supervisor, rank under a launcher, supervised rank)
 * and run it; the report that comes back is what the CLI prints. */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <signal.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/envp.h"
#include "smoke/smoke_internal.h"

void cf_smoke_report_add_row(struct cf_smoke_report *rep, const struct cf_smoke_row *row)
{
    rep->rows = cf_xrealloc(rep->rows, (rep->nrows + 1) * sizeof *rep->rows);
    rep->rows[rep->nrows++] = *row;
}

void cf_smoke_report_add_failure(struct cf_smoke_report *rep, int rank, const char *doing, const char *reason)
{
    rep->failures = cf_xrealloc(rep->failures, (rep->nfailures + 1) * sizeof *rep->failures);
    struct cf_smoke_failure *f = &rep->failures[rep->nfailures++];
    f->rank = rank;
    f->doing = cf_strdup(doing ? doing : "");
    f->reason = cf_strdup(reason ? reason : "");
}

void cf_smoke_report_release(struct cf_smoke_report *r)
{
    for (size_t i = 0; i < r->nfailures; i++) {
        free(r->failures[i].doing);
        free(r->failures[i].reason);
    }
    free(r->failures);
    free(r->rows);
    free(r->lib_version);
    free(r->lib_path);
    memset(r, 0, sizeof *r);
}

static void count_verdicts(struct cf_smoke_report *rep)
{
    rep->passed = rep->failed = 0;
    for (size_t i = 0; i < rep->nrows; i++) {
        if (rep->rows[i].ok)
            rep->passed++;
        else
            rep->failed++;
    }
    rep->failed += (long)rep->nfailures;
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

static void direct_event(struct smoke_sink *s, const struct cf_smoke_event *ev)
{
    struct direct_sink *d = s->ctx;
    if (ev->kind == CF_EV_RESULT) {
        char *what = cf_smoke_describe(ev->row.op, ev->row.dtype, ev->row.bytes, ev->row.in_place);
        char *after = cf_asprintf("between tests, after %s", what);
        cf_smoke_watchdog_progress(d->watchdog, after);
        free(after);
        free(what);
    } else {
        cf_smoke_watchdog_progress(d->watchdog, NULL);
    }
    if (ev->kind == CF_EV_INFO && ev->key && ev->value && !d->rep->lib_path &&
        (!strcmp(ev->key, "lib_path") || !strcmp(ev->key, "plugin_path")))
        d->rep->lib_path = cf_strdup(ev->value);
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

static int run_as_rank(const struct cf_smoke_opts *o, const struct cf_launch_info *le, int supervised,
                       cf_smoke_event_fn on_event, void *ctx, struct cf_smoke_report *rep, cf_error *err)
{
    struct smoke_rank_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.opts = o;
    setup.ctx.rank = le->rank;
    setup.ctx.nranks = le->world;
    setup.ctx.local_rank = le->local_rank;
    if (rendezvous_for(le, o, &setup.rdv, err) < 0)
        return -1;
    rep->launcher = le->launcher;
    rep->backend = o->backend == CF_BACKEND_MPI ? "mpi" : o->backend == CF_BACKEND_RCCL ? "rccl" : "nccl";

    struct smoke_sink sink;
    struct direct_sink direct = { on_event, ctx, STRBUF_INIT, rep, NULL };
    int out_fd = 1;
    if (supervised) {
        rep->role = CF_ROLE_SUPERVISED_RANK;
        /* the supervisor (through mpirun) may be killed: do not outlive it */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* a write to a supervisor that has gone must fail, not kill the rank */
        signal(SIGPIPE, SIG_IGN);
        const char *where = cf_envp_get(o->envp, SMOKE_SUPERVISOR_ENV);
        const char *colon = where ? strrchr(where, ':') : NULL;
        if (!colon || colon == where || colon - where >= 256)
            return cf_error_set(err, CF_ERR_USAGE, "%s must be HOST:PORT", SMOKE_SUPERVISOR_ENV);
        char host[256];
        memcpy(host, where, (size_t)(colon - where));
        host[colon - where] = 0;
        struct cf_launch_peer sup;
        if (cf_launch_connect(host, atoi(colon + 1), &setup.rdv.secret, SMOKE_RECORDS_TAG, le->rank, le->world,
                              o->connect_timeout_s, &sup, err) < 0)
            return cf_error_prefix(err, "rank %d reaching its supervisor", le->rank);
        out_fd = sup.fd;
        cf_smoke_record_sink(&sink, &out_fd, le->rank, le->local_rank);
    } else {
        rep->role = CF_ROLE_RANK;
        sink.begin = direct_begin;
        sink.event = direct_event;
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
        cf_smoke_record_encode(&line, rc < 0 ? REC_FAIL : REC_DONE, &ev, NULL, 0);
        cf_smoke_write_all(out_fd, line.buf, line.len);
        cf_sb_release(&line);
        close(out_fd);
    } else if (rc < 0) {
        struct strbuf text = STRBUF_INIT;
        cf_sb_addf(&text, "%s (while %s)", cf_error_message(&rank_err), direct.doing.len ? cf_sb_str(&direct.doing) : "starting");
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
    count_verdicts(rep);
    return 0;
}

int cf_smoke_run(const struct cf_smoke_opts *o, cf_smoke_event_fn on_event, void *ctx,
                 struct cf_smoke_report *rep, cf_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (o->sweep.min_bytes > o->sweep.max_bytes)
        return cf_error_set(err, CF_ERR_USAGE, "-b %zu is larger than -e %zu", o->sweep.min_bytes,
                            o->sweep.max_bytes);
    if (!o->sweep.step_bytes && o->sweep.step_factor <= 1 && o->sweep.min_bytes != o->sweep.max_bytes)
        return cf_error_set(err, CF_ERR_USAGE, "-f must be greater than 1 (or give -i STEP_BYTES)");
    if (!o->ops || !o->dtypes || !o->places)
        return cf_error_set(err, CF_ERR_USAGE, "nothing to run: no collective, data type or placement chosen");
    if (o->iters < 0 || o->warmup_iters < 0)
        return cf_error_set(err, CF_ERR_USAGE, "iteration counts cannot be negative");

    struct cf_launch_info le;
    int found = cf_launch_detect(o->envp, &le, err);
    if (found < 0)
        return -1;
    const char *sup = cf_envp_get(o->envp, SMOKE_SUPERVISED_ENV);
    int supervised = sup && !strcmp(sup, "1");
    if (found) {
        if (!supervised && o->nranks > 0 && o->nranks != le.world)
            return cf_error_set(err, CF_ERR_USAGE,
                                "-n %d, but %s started %d ranks and this is rank %d of them: drop -n under a "
                                "launcher",
                                o->nranks, le.launcher, le.world, le.rank);
        return run_as_rank(o, &le, supervised, on_event, ctx, rep, err);
    }
    if (supervised)
        return cf_error_set(err, CF_ERR_USAGE, "%s is set but no launcher's rank variables are: was this started "
                            "by mpirun?", SMOKE_SUPERVISED_ENV);

    rep->backend = o->backend == CF_BACKEND_MPI ? "mpi" : o->backend == CF_BACKEND_RCCL ? "rccl" : "nccl";
    int rc = o->backend == CF_BACKEND_MPI ? cf_smoke_supervise_mpirun(o, on_event, ctx, rep, err)
                                          : cf_smoke_supervise_fork(o, on_event, ctx, rep, err);
    if (rc < 0)
        return -1;
    count_verdicts(rep);
    return 0;
}
