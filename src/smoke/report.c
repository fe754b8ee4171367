/* The report a smoke run comes back with: rows, hosts, failures, problems, NCCL's
 * connections, --pattern groups and the verdict, and the one place where an event
 * turns into report content (for the supervisor and a rank under a launcher alike). */
#include <stdlib.h>
#include <string.h>

#include "smoke/smoke_internal.h"

char *cf_smoke_describe(const struct cf_smoke_row *row)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addf(&sb, "%s %s", cf_smoke_op_info(row->op)->name, cf_smoke_dtype_info(row->dtype)->name);
    if (row->redop < CF_RED_COUNT)
        cf_sb_addf(&sb, " %s", cf_smoke_redop_info(row->redop)->name);
    if (row->root >= 0)
        cf_sb_addf(&sb, " root %d", row->root);
    cf_sb_addf(&sb, " %zu B %s", row->bytes, row->in_place ? "in-place" : "out-of-place");
    return cf_sb_detach(&sb);
}

static void *dup_array(const void *src, size_t n, size_t size)
{
    if (!src || !n)
        return NULL;
    void *p = cf_xmalloc(n * size);
    memcpy(p, src, n * size);
    return p;
}

static void smoke_report_add_row(struct cf_smoke_report *rep, const struct cf_smoke_row *row)
{
    rep->rows = cf_xrealloc(rep->rows, (rep->nrows + 1) * sizeof *rep->rows);
    struct cf_smoke_row *r = &rep->rows[rep->nrows++];
    *r = *row;
    size_t n = row->nranks > 0 ? (size_t)row->nranks : 0;
    r->rank_time_us = dup_array(row->rank_time_us, n, sizeof *r->rank_time_us);
    r->rank_of = dup_array(row->rank_of, n, sizeof *r->rank_of);
}

static void add_failure_to(struct cf_smoke_failure **list, size_t *n, int rank, const char *doing,
                           const char *reason)
{
    *list = cf_xrealloc(*list, (*n + 1) * sizeof **list);
    struct cf_smoke_failure *f = &(*list)[(*n)++];
    f->rank = rank;
    f->doing = cf_strdup(doing ? doing : "");
    f->reason = cf_strdup(reason ? reason : "");
}

void cf_smoke_report_add_failure(struct cf_smoke_report *rep, int rank, const char *doing, const char *reason)
{
    add_failure_to(&rep->failures, &rep->nfailures, rank, doing, reason);
}

void cf_smoke_report_add_problem(struct cf_smoke_report *rep, int rank, const char *reason)
{
    for (size_t i = 0; i < rep->nproblems; i++)
        if (rep->problems[i].rank == rank && !strcmp(rep->problems[i].reason, reason ? reason : ""))
            return;
    add_failure_to(&rep->problems, &rep->nproblems, rank, "", reason);
}

static void smoke_report_add_conn(struct cf_smoke_report *rep, const struct cf_smoke_transport_conn *c)
{
    /* both ends of a network connection log it ([send] and [receive]): one entry */
    for (size_t i = 0; i < rep->nconns; i++) {
        struct cf_smoke_transport_conn *o = &rep->conns[i];
        if (o->rank == c->rank && o->peer == c->peer && !strcmp(o->via, c->via)) {
            if (c->channels > o->channels)
                o->channels = c->channels;
            return;
        }
    }
    rep->conns = cf_xrealloc(rep->conns, (rep->nconns + 1) * sizeof *rep->conns);
    rep->conns[rep->nconns++] = *c;
}

static void smoke_report_add_group(struct cf_smoke_report *rep, const struct cf_smoke_group *g)
{
    rep->groups = cf_xrealloc(rep->groups, (rep->ngroups + 1) * sizeof *rep->groups);
    rep->groups[rep->ngroups++] = *g;
}

static void replace(char **dst, const char *value)
{
    free(*dst);
    *dst = cf_strdup(value);
}

void cf_smoke_report_set_host(struct cf_smoke_report *rep, int rank, const char *key, const char *value)
{
    if (rank < 0 || rank >= rep->nranks || !key || !value)
        return;
    if (!rep->hosts)
        rep->hosts = cf_xcalloc((size_t)rep->nranks, sizeof *rep->hosts);
    struct cf_smoke_host *h = &rep->hosts[rank];
    if (!strcmp(key, "hostname"))
        replace(&h->hostname, value);
    else if (!strcmp(key, "device"))
        replace(&h->device, value);
    else if (!strcmp(key, "pid"))
        h->pid = atoi(value);
    else if (!strcmp(key, "links"))
        replace(&h->links, value);
}

void cf_smoke_report_take(struct cf_smoke_report *rep, const struct cf_smoke_event *ev)
{
    switch (ev->kind) {
    case CF_EV_RESULT:
        if (ev->leader)
            smoke_report_add_row(rep, &ev->row);
        break;
    case CF_EV_INFO:
        if (!ev->key || !ev->value)
            break;
        cf_smoke_report_set_host(rep, ev->rank, ev->key, ev->value);
        /* the library facts are rank 0's (every rank reports its own; doctor compares them) */
        if (!strcmp(ev->key, "lib_version") && (ev->rank == 0 || !rep->lib_version))
            replace(&rep->lib_version, ev->value);
        if (!strcmp(ev->key, "lib_path") && (ev->rank == 0 || !rep->lib_path))
            replace(&rep->lib_path, ev->value);
        if (!strcmp(ev->key, "mpi_abi") && (ev->rank == 0 || !rep->mpi_abi))
            replace(&rep->mpi_abi, ev->value);
        if (!strcmp(ev->key, "mpi_chosen_by") && (ev->rank == 0 || !rep->mpi_chosen_by))
            replace(&rep->mpi_chosen_by, ev->value);
        if (!strcmp(ev->key, "net_plugin") && !rep->net_plugin)
            replace(&rep->net_plugin, ev->value);
        if (!strcmp(ev->key, "skipped") && ev->rank == 0)
            replace(&rep->skipped, ev->value);
        if (!strcmp(ev->key, SMOKE_INCONCLUSIVE_KEY) && ev->rank == 0)
            replace(&rep->inconclusive, ev->value);
        if (!strcmp(ev->key, SMOKE_BAD_HOST_KEY) && ev->rank == 0 && !cf_strvec_contains(&rep->bad_hosts, ev->value))
            cf_strvec_push(&rep->bad_hosts, ev->value);
        break;
    case CF_EV_PROBLEM:
        cf_smoke_report_add_problem(rep, ev->rank, ev->text);
        break;
    case CF_EV_TRANSPORT:
        smoke_report_add_conn(rep, &ev->conn);
        break;
    case CF_EV_GROUP:
        smoke_report_add_group(rep, &ev->group);
        break;
    case CF_EV_VERDICT:
        if (ev->text)
            replace(&rep->verdict, ev->text);
        break;
    default:
        break;
    }
}

void cf_smoke_report_finish(struct cf_smoke_report *rep)
{
    rep->passed = rep->failed = 0;
    rep->out_of_bounds = 0;
    double bw = 0;
    for (size_t i = 0; i < rep->nrows; i++) {
        const struct cf_smoke_row *r = &rep->rows[i];
        if (r->ok)
            rep->passed++;
        else
            rep->failed++;
        if (r->wrong > 0)
            rep->out_of_bounds += r->wrong;
        bw += r->busbw;
    }
    rep->avg_busbw = rep->nrows ? bw / (double)rep->nrows : 0;
    rep->failed += (long)rep->nfailures + (long)rep->nproblems;
}

static void release_failures(struct cf_smoke_failure *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].doing);
        free(f[i].reason);
    }
    free(f);
}

void cf_smoke_report_release(struct cf_smoke_report *r)
{
    release_failures(r->failures, r->nfailures);
    release_failures(r->problems, r->nproblems);
    for (size_t i = 0; i < r->nrows; i++) {
        free(r->rows[i].rank_time_us);
        free(r->rows[i].rank_of);
    }
    free(r->rows);
    for (int i = 0; r->hosts && i < r->nranks; i++) {
        free(r->hosts[i].hostname);
        free(r->hosts[i].device);
        free(r->hosts[i].links);
    }
    free(r->hosts);
    free(r->conns);
    free(r->groups);
    free(r->net_plugin);
    free(r->verdict);
    free(r->inconclusive);
    cf_strvec_clear(&r->bad_hosts);
    free(r->skipped);
    free(r->lib_version);
    free(r->lib_path);
    free(r->mpi_abi);
    free(r->mpi_chosen_by);
    /* where MPI_Finalize runs: the rank's verdict is out */
    cf_smoke_fault_fire(r->finalize_fault);
    if (r->finalize_later)
        r->finalize_later();
    memset(r, 0, sizeof *r);
}
