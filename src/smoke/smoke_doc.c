/* The smoke document's one home (cclforge/smoke_doc.h): the typed model, filled
 * by a live run or by the strict reader, and the writer of cclforge.smoke/2. */
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/json.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"
#include "cclforge/sorted_names.h"

static const char *const role_names[] = { "supervisor", "rank", "supervised_rank" };

const char *cf_smoke_doc_op_name(enum cf_smoke_op op)
{
    return (unsigned)op < CF_OP_COUNT ? cf_smoke_op_info(op)->name : "?";
}

const char *cf_smoke_doc_dtype_name(enum cf_smoke_dtype dt)
{
    return (unsigned)dt < CF_DT_COUNT ? cf_smoke_dtype_info(dt)->name : "?";
}

const char *cf_smoke_doc_redop_name(enum cf_smoke_redop r)
{
    return (unsigned)r < CF_RED_COUNT ? cf_smoke_redop_info(r)->name : "none";
}

void cf_smoke_doc_init(struct cf_smoke_doc *d)
{
    memset(d, 0, sizeof *d);
    d->ok = -1;
    d->conclusive = 1;
    d->rank = -1;
}

/* ---- a live run ---- */

static struct cf_smoke_rank_infos *infos_of(struct cf_smoke_doc *d, int rank)
{
    for (size_t i = 0; i < d->ninfo; i++)
        if (d->info[i].rank == rank)
            return &d->info[i];
    d->info = cf_xrealloc(d->info, (d->ninfo + 1) * sizeof *d->info);
    d->info[d->ninfo] = (struct cf_smoke_rank_infos){ .rank = rank };
    return &d->info[d->ninfo++];
}

static struct cf_smoke_info_item *add_item(struct cf_smoke_rank_infos *r, const char *key)
{
    r->item = cf_xrealloc(r->item, (r->n + 1) * sizeof *r->item);
    struct cf_smoke_info_item *it = &r->item[r->n++];
    memset(it, 0, sizeof *it);
    it->key = cf_strdup(key);
    it->list = (struct strvec)STRVEC_INIT;
    return it;
}

static void release_item(struct cf_smoke_info_item *it)
{
    free(it->key);
    free(it->value);
    cf_strvec_clear(&it->list);
}

/* A fact of a rank: set again, it moves to the end; NCCL's warnings gather in a list. */
static void note_info(struct cf_smoke_doc *d, const struct cf_smoke_event *ev)
{
    struct cf_smoke_rank_infos *r = infos_of(d, ev->rank);
    const char *value = ev->value ? ev->value : "";
    size_t i = 0;
    while (i < r->n && strcmp(r->item[i].key, ev->key))
        i++;
    if (!strcmp(ev->key, "nccl_warn")) {
        struct cf_smoke_info_item *it = i < r->n ? &r->item[i] : add_item(r, ev->key);
        it->is_list = 1;
        cf_strvec_push(&it->list, value);
        return;
    }
    if (i < r->n) {
        release_item(&r->item[i]);
        memmove(&r->item[i], &r->item[i + 1], (r->n - i - 1) * sizeof *r->item);
        r->n--;
    }
    add_item(r, ev->key)->value = cf_strdup(value);
}

void cf_smoke_doc_note(struct cf_smoke_doc *d, const struct cf_smoke_event *ev)
{
    switch (ev->kind) {
    case CF_EV_INFO:
        if (ev->key)
            note_info(d, ev);
        break;
    case CF_EV_RESULT:
        {
            d->results = cf_xrealloc(d->results, (d->nresults + 1) * sizeof *d->results);
            const struct cf_smoke_row *row = &ev->row;
            d->results[d->nresults++] = (struct cf_smoke_rank_result){
                .rank = ev->rank, .local_rank = ev->local_rank, .op = row->op, .dtype = row->dtype,
                .redop = row->redop, .root = row->root, .bytes = row->bytes, .in_place = row->in_place,
                .group = row->group, .pass = ev->own_wrong == 0, .wrong = ev->own_wrong,
                .time_us = ev->own_time_us, .reason = cf_strdup(ev->text),
            };
        }
        break;
    case CF_EV_FAIL:
    case CF_EV_PROBLEM:
        d->rank_failures = cf_xrealloc(d->rank_failures, (d->nrank_failures + 1) * sizeof *d->rank_failures);
        d->rank_failures[d->nrank_failures++] = (struct cf_smoke_rank_failure){
            ev->rank, ev->local_rank, cf_strdup(ev->text ? ev->text : ""), ev->kind == CF_EV_FAIL
        };
        break;
    default: break;
    }
}

static struct cf_smoke_failure *copy_failures(const struct cf_smoke_failure *f, size_t n)
{
    struct cf_smoke_failure *c = cf_xcalloc(n + 1, sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = (struct cf_smoke_failure){ f[i].rank, cf_strdup(f[i].doing), cf_strdup(f[i].reason) };
    return c;
}

static void copy_report(struct cf_smoke_doc *d, const struct cf_smoke_report *rep)
{
    d->role = rep->role;
    d->backend = cf_strdup(rep->backend);
    d->launcher = cf_strdup(rep->launcher);
    d->nranks = rep->nranks;
    d->rank = rep->rank;
    d->lib_version = cf_strdup(rep->lib_version);
    d->lib_path = cf_strdup(rep->lib_path);
    d->mpi_abi = cf_strdup(rep->mpi_abi);
    d->mpi_chosen_by = cf_strdup(rep->mpi_chosen_by);
    d->verdict = cf_strdup(rep->verdict);
    d->conclusive = !rep->inconclusive;
    d->inconclusive_why = cf_strdup(rep->inconclusive);
    d->bad_hosts_known = 1;
    for (size_t i = 0; i < rep->bad_hosts.n; i++)
        cf_strvec_push(&d->bad_hosts, rep->bad_hosts.v[i]);
    d->passed = rep->passed;
    d->failed = rep->failed;
    d->aborted = rep->aborted;
    d->interrupted = rep->interrupted;
    d->out_of_bounds = rep->out_of_bounds;
    d->avg_busbw = rep->avg_busbw;
    d->skipped = cf_strdup(rep->skipped);
    if (rep->hosts && rep->nranks > 0) {
        d->nlisted = (size_t)rep->nranks;
        d->ranks = cf_xcalloc(d->nlisted + 1, sizeof *d->ranks);
        for (size_t r = 0; r < d->nlisted; r++) {
            const struct cf_smoke_host *h = &rep->hosts[r];
            struct cf_smoke_doc_rank *o = &d->ranks[r];
            o->hostname = cf_strdup(h->hostname);
            o->device = cf_strdup(h->device);
            o->pid = h->pid;
            if (h->links) {
                o->has_links = 1;
                o->links = cf_xcalloc(CF_RANK_LINKS_MAX, sizeof *o->links);
                o->nlinks = cf_rank_links_parse(h->links, o->links, CF_RANK_LINKS_MAX);
            }
        }
    }
    d->nrows = rep->nrows;
    d->rows = cf_xcalloc(d->nrows + 1, sizeof *d->rows);
    d->slowest_vs_median = cf_xcalloc(d->nrows + 1, sizeof *d->slowest_vs_median);
    for (size_t i = 0; i < d->nrows; i++) {
        const struct cf_smoke_row *r = &rep->rows[i];
        struct cf_smoke_row *o = &d->rows[i];
        *o = *r;
        d->slowest_vs_median[i] = r->median_us > 0 ? r->slowest_us / r->median_us : 0;
        o->rank_time_us = NULL;
        o->rank_of = NULL;
        if (r->rank_time_us && r->nranks > 0) {
            o->rank_time_us = cf_xcalloc((size_t)r->nranks, sizeof *o->rank_time_us);
            o->rank_of = cf_xcalloc((size_t)r->nranks, sizeof *o->rank_of);
            for (int k = 0; k < r->nranks; k++) {
                o->rank_time_us[k] = r->rank_time_us[k];
                o->rank_of[k] = r->rank_of ? r->rank_of[k] : k;
            }
        }
    }
    d->ngroups = rep->ngroups;
    d->groups = cf_xcalloc(d->ngroups + 1, sizeof *d->groups);
    if (d->ngroups)
        memcpy(d->groups, rep->groups, d->ngroups * sizeof *d->groups);
    d->network = cf_strdup(rep->net_plugin);
    d->nconns = rep->nconns;
    d->conns = cf_xcalloc(d->nconns + 1, sizeof *d->conns);
    if (d->nconns)
        memcpy(d->conns, rep->conns, d->nconns * sizeof *d->conns);
    d->failures = copy_failures(rep->failures, rep->nfailures);
    d->nfailures = rep->nfailures;
    d->problems = copy_failures(rep->problems, rep->nproblems);
    d->nproblems = rep->nproblems;
}

int cf_smoke_doc_of_run(struct cf_smoke_doc *d, const struct cf_smoke_report *rep, int ok,
                        struct cf_pair_matrix *m, cf_error *err)
{
    copy_report(d, rep);
    d->ok = ok != 0;
    free(d->exclude);
    if (cf_pair_matrix_build(d, m, err) < 0) {
        d->exclude = cf_strdup("");
        return -1;
    }
    d->exclude = cf_strdup(m->exclude);
    return 0;
}

int cf_smoke_doc_open(const cJSON *json, struct cf_smoke_doc *d, struct cf_pair_matrix *m, cf_error *err)
{
    if (cf_smoke_doc_read(json, d, err) < 0)
        return -1;
    if (cf_pair_matrix_build(d, m, err) < 0) {
        cf_smoke_doc_release(d);
        return -1;
    }
    return 0;
}

/* ---- the writer ---- */

/* a string, or nothing when there is none */
static void put_str_or_omit(cJSON *o, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, key, v);
}

/* a spread, or null when unknown (one sample) */
static void put_spread(cJSON *o, double spread)
{
    if (spread < 0)
        cJSON_AddNullToObject(o, "busbw_spread");
    else
        cJSON_AddNumberToObject(o, "busbw_spread", spread);
}

static cJSON *row_json(const struct cf_smoke_doc *d, size_t i)
{
    const struct cf_smoke_row *r = &d->rows[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", cf_smoke_doc_op_name(r->op));
    cJSON_AddStringToObject(o, "dtype", cf_smoke_doc_dtype_name(r->dtype));
    cJSON_AddStringToObject(o, "redop", cf_smoke_doc_redop_name(r->redop));
    cJSON_AddNumberToObject(o, "root", r->root);
    cJSON_AddBoolToObject(o, "in_place", r->in_place);
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    cJSON_AddNumberToObject(o, "count", (double)r->count);
    cJSON_AddNumberToObject(o, "time_us", r->time_us);
    cJSON_AddNumberToObject(o, "algbw_gbps", r->algbw);
    cJSON_AddNumberToObject(o, "busbw_gbps", r->busbw);
    cJSON_AddNumberToObject(o, "busbw_factor",
                            (unsigned)r->op < CF_OP_COUNT ? cf_smoke_busbw_factor(cf_smoke_op_info(r->op), r->nranks)
                                                          : 0);
    cJSON_AddNumberToObject(o, "iters", r->iters);
    put_spread(o, r->busbw_spread);
    if (r->wrong >= 0)
        cJSON_AddNumberToObject(o, "wrong", (double)r->wrong);
    else
        cJSON_AddNullToObject(o, "wrong");
    cJSON_AddBoolToObject(o, "ok", r->ok);
    cJSON_AddNumberToObject(o, "group", r->group);
    cJSON_AddNumberToObject(o, "nranks", r->nranks);
    cJSON_AddNumberToObject(o, "slowest_rank", r->slowest_rank);
    cf_json_put_str(o, "slowest_host", r->slowest_rank >= 0 && (size_t)r->slowest_rank < d->nlisted
                                           ? d->ranks[r->slowest_rank].hostname
                                           : NULL);
    cJSON_AddNumberToObject(o, "slowest_time_us", r->slowest_us);
    cJSON_AddNumberToObject(o, "median_time_us", r->median_us);
    cJSON_AddNumberToObject(o, "slowest_vs_median", d->slowest_vs_median[i]);
    cJSON *times = cJSON_AddArrayToObject(o, "rank_time_us");
    for (int k = 0; r->rank_time_us && k < r->nranks; k++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "rank", r->rank_of[k]);
        cJSON_AddNumberToObject(t, "time_us", r->rank_time_us[k]);
        cJSON_AddItemToArray(times, t);
    }
    return o;
}

static cJSON *group_json(const struct cf_smoke_group *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", g->id);
    cJSON_AddNumberToObject(o, "round", g->round);
    cJSON_AddStringToObject(o, "label", g->label);
    cJSON_AddNumberToObject(o, "nranks", g->nranks);
    cJSON_AddNumberToObject(o, "nhosts", g->nhosts);
    cJSON_AddNumberToObject(o, "tests", (double)g->tests);
    cJSON_AddNumberToObject(o, "avg_busbw_gbps", g->avg_busbw);
    cJSON_AddNumberToObject(o, "busbw_median_gbps", g->busbw_median);
    put_spread(o, g->busbw_spread);
    cJSON_AddBoolToObject(o, "failed", g->failed);
    cJSON_AddBoolToObject(o, "bad", g->bad);
    cJSON_AddBoolToObject(o, "conclusive", g->conclusive);
    cJSON_AddStringToObject(o, "why", g->why);
    return o;
}

static cJSON *failures_json(const struct cf_smoke_failure *f, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", f[i].rank);
        put_str_or_omit(o, "doing", f[i].doing);
        put_str_or_omit(o, "reason", f[i].reason);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *rank_info_json(const struct cf_smoke_doc *d)
{
    cJSON *info = cJSON_CreateObject();
    for (size_t i = 0; i < d->ninfo; i++) {
        char name[32];
        snprintf(name, sizeof name, "%d", d->info[i].rank);
        cJSON *r = cJSON_AddObjectToObject(info, name);
        for (size_t k = 0; k < d->info[i].n; k++) {
            const struct cf_smoke_info_item *it = &d->info[i].item[k];
            if (it->is_list)
                cJSON_AddItemToObject(r, it->key, cf_json_strvec(&it->list));
            else
                cJSON_AddStringToObject(r, it->key, it->value ? it->value : "");
        }
    }
    return info;
}

static cJSON *rank_results_json(const struct cf_smoke_doc *d)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < d->nresults; i++) {
        const struct cf_smoke_rank_result *r = &d->results[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", r->rank);
        cJSON_AddNumberToObject(o, "local_rank", r->local_rank);
        cJSON_AddStringToObject(o, "op", cf_smoke_doc_op_name(r->op));
        cJSON_AddStringToObject(o, "dtype", cf_smoke_doc_dtype_name(r->dtype));
        cJSON_AddStringToObject(o, "redop", cf_smoke_doc_redop_name(r->redop));
        cJSON_AddNumberToObject(o, "root", r->root);
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        cJSON_AddBoolToObject(o, "in_place", r->in_place);
        cJSON_AddNumberToObject(o, "group", r->group);
        cJSON_AddBoolToObject(o, "pass", r->pass);
        cJSON_AddNumberToObject(o, "wrong", (double)r->wrong);
        cJSON_AddNumberToObject(o, "time_us", r->time_us);
        put_str_or_omit(o, "reason", r->reason);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *rank_failures_json(const struct cf_smoke_doc *d)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < d->nrank_failures; i++) {
        const struct cf_smoke_rank_failure *f = &d->rank_failures[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", f->rank);
        cJSON_AddNumberToObject(o, "local_rank", f->local_rank);
        cJSON_AddStringToObject(o, "reason", f->reason ? f->reason : "");
        cJSON_AddBoolToObject(o, "stops_the_run", f->stops_the_run);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *ranks_json(const struct cf_smoke_doc *d)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t r = 0; r < d->nlisted; r++) {
        const struct cf_smoke_doc_rank *h = &d->ranks[r];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", (double)r);
        cf_json_put_str(o, "hostname", h->hostname);
        cf_json_put_str(o, "device", h->device);
        cJSON_AddNumberToObject(o, "pid", h->pid);
        if (h->has_links)
            cJSON_AddItemToObject(o, "links", cf_rank_links_to_json(h->links, h->nlinks));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* the per-test arrays a slim document leaves out, in the document's order */
enum { HEAVY_ROWS, HEAVY_GROUPS, HEAVY_TRANSPORTS, HEAVY_RANK_INFO, HEAVY_RANK_RESULTS, HEAVY_RANK_FAILURES };
static const char *const heavy_names[] = { "rows", "groups", "transports", "rank_info", "rank_results",
                                           "rank_failures" };

static void put_heavy(cJSON *doc, cJSON *left, int slim, int which, cJSON *value)
{
    if (slim) {
        cJSON_Delete(value);
        cJSON_AddItemToArray(left, cJSON_CreateString(heavy_names[which]));
    } else {
        cJSON_AddItemToObject(doc, heavy_names[which], value);
    }
}

static cJSON *doc_json(const struct cf_smoke_doc *d, int slim)
{
    cJSON *doc = cJSON_CreateObject(), *left = slim ? cJSON_CreateArray() : NULL;
    cJSON_AddStringToObject(doc, "schema", CF_SMOKE_DOC_SCHEMA);
    cJSON_AddStringToObject(doc, "role", role_names[d->role]);
    cJSON_AddStringToObject(doc, "backend", d->backend ? d->backend : "");
    cJSON_AddStringToObject(doc, "launcher", d->launcher ? d->launcher : "");
    cJSON_AddNumberToObject(doc, "nranks", d->nranks);
    if (d->role == CF_ROLE_RANK)
        cJSON_AddNumberToObject(doc, "rank", d->rank);
    cf_json_put_str(doc, "lib_version", d->lib_version);
    cf_json_put_str(doc, "lib_path", d->lib_path);
    cf_json_put_str(doc, "mpi_abi", d->mpi_abi);
    cf_json_put_str(doc, "mpi_chosen_by", d->mpi_chosen_by);
    if (d->ok < 0)
        cJSON_AddNullToObject(doc, "ok");
    else
        cJSON_AddBoolToObject(doc, "ok", d->ok);
    cf_json_put_str(doc, "verdict", d->verdict);
    cJSON_AddBoolToObject(doc, "conclusive", d->conclusive);
    if (!d->conclusive)
        cf_json_put_str(doc, "inconclusive_why", d->inconclusive_why);
    if (d->bad_hosts_known)
        cf_json_put_strvec(doc, "bad_hosts", &d->bad_hosts);
    cJSON_AddNumberToObject(doc, "passed", (double)d->passed);
    cJSON_AddNumberToObject(doc, "failed", (double)d->failed);
    cJSON_AddBoolToObject(doc, "aborted", d->aborted);
    cJSON_AddBoolToObject(doc, "interrupted", d->interrupted);
    cJSON_AddNumberToObject(doc, "out_of_bounds", (double)d->out_of_bounds);
    cJSON_AddNumberToObject(doc, "avg_busbw_gbps", d->avg_busbw);
    cf_json_put_str(doc, "skipped", d->skipped);
    cJSON_AddItemToObject(doc, "ranks", ranks_json(d));
    cJSON *rows = cJSON_CreateArray();
    for (size_t i = 0; i < d->nrows; i++)
        cJSON_AddItemToArray(rows, row_json(d, i));
    put_heavy(doc, left, slim, HEAVY_ROWS, rows);
    cJSON *groups = cJSON_CreateArray();
    for (size_t i = 0; i < d->ngroups; i++)
        cJSON_AddItemToArray(groups, group_json(&d->groups[i]));
    put_heavy(doc, left, slim, HEAVY_GROUPS, groups);
    cf_json_put_str(doc, "network", d->network);
    cJSON *conns = cJSON_CreateArray();
    for (size_t i = 0; i < d->nconns; i++) {
        const struct cf_smoke_transport_conn *c = &d->conns[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", c->rank);
        cJSON_AddNumberToObject(o, "peer", c->peer);
        cJSON_AddStringToObject(o, "kind", c->kind);
        cJSON_AddStringToObject(o, "via", c->via);
        cJSON_AddNumberToObject(o, "channels", c->channels);
        cJSON_AddItemToArray(conns, o);
    }
    put_heavy(doc, left, slim, HEAVY_TRANSPORTS, conns);
    cJSON_AddItemToObject(doc, "failures", failures_json(d->failures, d->nfailures));
    cJSON_AddItemToObject(doc, "problems", failures_json(d->problems, d->nproblems));
    put_heavy(doc, left, slim, HEAVY_RANK_INFO, rank_info_json(d));
    put_heavy(doc, left, slim, HEAVY_RANK_RESULTS, rank_results_json(d));
    put_heavy(doc, left, slim, HEAVY_RANK_FAILURES, rank_failures_json(d));
    if (d->exclude)
        cJSON_AddStringToObject(doc, "exclude", d->exclude);
    if (slim)
        cJSON_AddItemToObject(doc, "left_out_of_report", left);
    return doc;
}

char *cf_smoke_doc_json(const struct cf_smoke_doc *d, unsigned flags)
{
    int slim = (flags & CF_SMOKE_DOC_SLIM) != 0;
    cJSON *doc = doc_json(d, slim);
    char *s = slim ? cJSON_PrintUnformatted(doc) : cJSON_Print(doc);
    cJSON_Delete(doc);
    return s ? s : cf_strdup("null");
}

/* ---- the reader ---- */

/* what the reader keeps beside the document: where a refusal goes, and the ranks
 * that exist (its messages name the field: "rows[3].bytes") */
struct reader {
    cf_error *err;
    int world;                  /* ranks that exist: "nranks", else the ranks listed */
};

static int refuse(struct reader *rd, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cf_error_set(rd->err, CF_ERR_FORMAT, "smoke document: %s (write it as cclforge smoke --json does)", what);
}

/* The fields of one object of the document, as data: each key's type, where it
 * goes in the model's struct, and its range. A field the object lacks (or holds
 * null) leaves the struct's value as it was: unknown, never made up. */
enum field_type {
    F_STR,      /* char *, copied */
    F_FIXED,    /* char[cap]: one that does not fit is refused, never cut */
    F_BOOL,     /* int */
    F_BOOL_LONG,/* long (a group's "failed") */
    F_NUM,      /* double, finite, in [min, max] */
    F_INT,      /* int, a whole number in [min, max] */
    F_LONG,     /* long, likewise */
    F_SIZE,     /* size_t, likewise */
    F_RANK,     /* int: a rank of the world, or -1 (not one rank's) */
};

struct field {
    const char *key;
    enum field_type type;
    size_t offset;
    double min, max;            /* F_FIXED: max is the buffer's size */
};

/* the ranges: a busbw no link reaches, a time in µs of 30,000 years, more tests than a run makes */
#define RANGE_BUSBW 0, CF_SMOKE_BUSBW_MAX
#define RANGE_TIME 0, 1e18
#define RANGE_COUNT 0, 1e15
#define RANGE_SIZE 0, (double)CF_SMOKE_BYTES_MAX
#define RANGE_RANKS 0, CF_SMOKE_RANKS_MAX

/* A rank of the world (from -1, "not one rank's", when none_ok; required unless so). */
static int read_rank(struct reader *rd, const cJSON *o, const char *path, const char *key, int none_ok, int *out)
{
    double v = *out;
    char p[160];
    snprintf(p, sizeof p, "%s%s%s", path, path[0] ? "." : "", key);
    int rc = cf_json_get_num(o, key, &v);
    if (rc < 0 || (rc == 0 && !none_ok))
        return refuse(rd, "\"%s\" is not a number", p);
    if (v != floor(v) || !(v >= (none_ok ? -1 : 0)) || !(v < rd->world || (none_ok && v == -1)))
        return refuse(rd, "\"%s\" is %g: no such rank (the run had %d)", p, v, rd->world);
    *out = (int)v;
    return 0;
}

static int read_field(struct reader *rd, const cJSON *o, const char *path, const struct field *f, char *base)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f->key);
    void *at = base + f->offset;
    char p[160];
    snprintf(p, sizeof p, "%s%s%s", path, path[0] ? "." : "", f->key);
    if (f->type == F_RANK)
        return read_rank(rd, o, path, f->key, 1, at);
    if (!v || cJSON_IsNull(v))
        return 0;
    switch (f->type) {
    case F_STR:
    case F_FIXED:
        if (!cJSON_IsString(v))
            return refuse(rd, "\"%s\" is not a string", p);
        if (f->type == F_STR) {
            *(char **)at = cf_strdup(v->valuestring);
        } else if (strlen(v->valuestring) >= (size_t)f->max) {
            return refuse(rd, "\"%s\" is longer than %.0f bytes", p, f->max - 1);
        } else {
            snprintf(at, (size_t)f->max, "%s", v->valuestring);
        }
        return 0;
    case F_BOOL:
    case F_BOOL_LONG:
        if (!cJSON_IsBool(v))
            return refuse(rd, "\"%s\" is not true or false", p);
        if (f->type == F_BOOL)
            *(int *)at = cJSON_IsTrue(v);
        else
            *(long *)at = cJSON_IsTrue(v);
        return 0;
    default: break;
    }
    if (!cJSON_IsNumber(v))
        return refuse(rd, "\"%s\" is not a number", p);
    double x = v->valuedouble;
    if (!isfinite(x) || x < f->min || x > f->max)
        return refuse(rd, "\"%s\" is %g, out of range (%g to %g)", p, x, f->min, f->max);
    if (f->type != F_NUM && x != floor(x))
        return refuse(rd, "\"%s\" is %g, not a whole number", p, x);
    switch (f->type) {
    case F_NUM: *(double *)at = x; break;
    case F_INT: *(int *)at = (int)x; break;
    case F_LONG: *(long *)at = (long)x; break;
    default: *(size_t *)at = (size_t)x; break;
    }
    return 0;
}

/* Every field of the table from the object o at path (which must be an object). */
static int read_fields(struct reader *rd, const cJSON *o, const char *path, const struct field *f, size_t n,
                       void *base)
{
    if (!cJSON_IsObject(o))
        return refuse(rd, "\"%s\" is not an object", path);
    for (size_t i = 0; i < n; i++)
        if (read_field(rd, o, path, &f[i], base) < 0)
            return -1;
    return 0;
}
#define READ_FIELDS(rd, o, path, table, base) read_fields(rd, o, path, table, sizeof table / sizeof *table, base)

static const cJSON *array_at(struct reader *rd, const cJSON *o, const char *key, int *bad)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    *bad = 0;
    if (!a || cJSON_IsNull(a))
        return NULL;
    if (!cJSON_IsArray(a)) {
        *bad = refuse(rd, "\"%s\" is not an array", key);
        return NULL;
    }
    return a;
}

static int read_ranks(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
    static const struct field fields[] = {
        { "hostname", F_STR, offsetof(struct cf_smoke_doc_rank, hostname), 0, 0 },
        { "device", F_STR, offsetof(struct cf_smoke_doc_rank, device), 0, 0 },
        { "pid", F_INT, offsetof(struct cf_smoke_doc_rank, pid), 0, INT_MAX },
    };
    static const struct field rank_field[] = { { "rank", F_INT, 0, RANGE_RANKS } };
    int bad;
    const cJSON *ranks = array_at(rd, json, "ranks", &bad), *r;
    if (bad)
        return -1;
    size_t n = (size_t)cJSON_GetArraySize(ranks);
    if (n > CF_SMOKE_RANKS_MAX)
        return refuse(rd, "\"ranks\" lists %zu ranks, more than %d", n, CF_SMOKE_RANKS_MAX);
    d->ranks = cf_xcalloc(n + 1, sizeof *d->ranks);
    cJSON_ArrayForEach(r, ranks) {
        char p[64];
        snprintf(p, sizeof p, "ranks[%zu]", d->nlisted);
        struct cf_smoke_doc_rank *o = &d->ranks[d->nlisted++];
        int rank = (int)d->nlisted - 1;
        if (READ_FIELDS(rd, r, p, fields, o) < 0 || READ_FIELDS(rd, r, p, rank_field, &rank) < 0)
            return -1;
        if ((size_t)rank != d->nlisted - 1)
            return refuse(rd, "\"%s.rank\" is %d: the ranks are listed in order", p, rank);
        const cJSON *links = cJSON_GetObjectItemCaseSensitive(r, "links");
        if (links && !cJSON_IsNull(links)) {
            int nl = cJSON_GetArraySize(links);
            o->has_links = 1;
            o->links = cf_xcalloc(CF_RANK_LINKS_MAX, sizeof *o->links);
            if (!cJSON_IsArray(links) || nl > CF_RANK_LINKS_MAX ||
                (o->nlinks = cf_rank_links_from_json(links, o->links, CF_RANK_LINKS_MAX)) != (size_t)nl)
                return refuse(rd, "\"%s.links\" is not a list of up to %d links (name, kind, line_gbit, "
                                  "capacity_gbps, limit, net or peer)",
                              p, CF_RANK_LINKS_MAX);
        }
    }
    return 0;
}

/* ids of the groups, sorted, for the rows' look-ups */
struct group_id {
    int id;
    size_t ix;
};

static int group_id_cmp(const void *a, const void *b)
{
    int x = ((const struct group_id *)a)->id, y = ((const struct group_id *)b)->id;
    return (x > y) - (x < y);
}

static int read_groups(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d, struct group_id **ids)
{
#define G(key, type, field, ...) { key, type, offsetof(struct cf_smoke_group, field), __VA_ARGS__ }
    static const struct field fields[] = {
        G("id", F_INT, id, 0, INT_MAX), G("round", F_INT, round, 0, INT_MAX),
        G("label", F_FIXED, label, 0, sizeof((struct cf_smoke_group *)0)->label),
        G("nranks", F_INT, nranks, RANGE_RANKS), G("nhosts", F_INT, nhosts, RANGE_RANKS), G("tests", F_LONG, tests, RANGE_COUNT),
        G("avg_busbw_gbps", F_NUM, avg_busbw, RANGE_BUSBW), G("busbw_median_gbps", F_NUM, busbw_median, RANGE_BUSBW),
        G("busbw_spread", F_NUM, busbw_spread, 0, 1e6), G("failed", F_BOOL_LONG, failed, 0, 0),
        G("bad", F_BOOL, bad, 0, 0), G("conclusive", F_BOOL, conclusive, 0, 0),
        G("why", F_FIXED, why, 0, sizeof((struct cf_smoke_group *)0)->why),
    };
#undef G
    int bad;
    const cJSON *groups = array_at(rd, json, "groups", &bad), *g;
    if (bad)
        return -1;
    size_t n = (size_t)cJSON_GetArraySize(groups);
    d->groups = cf_xcalloc(n + 1, sizeof *d->groups);
    *ids = cf_xcalloc(n + 1, sizeof **ids);
    cJSON_ArrayForEach(g, groups) {
        char p[64];
        size_t i = d->ngroups;
        snprintf(p, sizeof p, "groups[%zu]", i);
        struct cf_smoke_group *o = &d->groups[d->ngroups++];
        o->busbw_median = NAN;
        o->busbw_spread = -1;
        if (READ_FIELDS(rd, g, p, fields, o) < 0)
            return -1;
        if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(g, "id")))
            return refuse(rd, "\"%s.id\" is not a number: every group has one", p);
        (*ids)[i] = (struct group_id){ o->id, i };
    }
    qsort(*ids, d->ngroups, sizeof **ids, group_id_cmp);
    for (size_t i = 1; i < d->ngroups; i++)
        if ((*ids)[i].id == (*ids)[i - 1].id)
            return refuse(rd, "\"groups[%zu].id\" is %d, the id of groups[%zu] too", (*ids)[i].ix, (*ids)[i].id,
                          (*ids)[i - 1].ix);
    return 0;
}

/* a row's or a result's group: 0 (the world) or one of "groups" */
static int check_group(struct reader *rd, const struct group_id *ids, size_t n, const char *path, int group)
{
    struct group_id probe = { group, 0 };
    if (group == 0 || bsearch(&probe, ids, n, sizeof *ids, group_id_cmp))
        return 0;
    return refuse(rd, "\"%s.group\" is %d: no such group in \"groups\"", path, group);
}

/* A test's op, dtype and redop by name ("?" unknown, "none" no reduction). */
struct test_names {
    enum cf_smoke_op *op;
    enum cf_smoke_dtype *dtype;
    enum cf_smoke_redop *redop;
};

static int read_test_names(struct reader *rd, const cJSON *o, const char *path, struct test_names t)
{
    const char *op = cf_json_str(o, "op"), *dt = cf_json_str(o, "dtype"), *red = cf_json_str(o, "redop");
    static const char *const keys[] = { "op", "dtype", "redop" };
    *t.op = CF_OP_COUNT;
    *t.dtype = CF_DT_COUNT;
    *t.redop = CF_RED_COUNT;
    int bad = -1;
    if (op && strcmp(op, "?") && cf_smoke_op_parse(op, t.op))
        bad = 0;
    else if (dt && strcmp(dt, "?") && cf_smoke_dtype_parse(dt, t.dtype))
        bad = 1;
    else if (red && strcmp(red, "none") && cf_smoke_redop_parse(red, t.redop))
        bad = 2;
    for (int k = 0; k < 3 && bad < 0; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
        if (v && !cJSON_IsNull(v) && !cJSON_IsString(v))
            return refuse(rd, "\"%s.%s\" is not a string", path, keys[k]);
    }
    if (bad >= 0)
        return refuse(rd, "\"%s.%s\" is '%s', not one cclforge smoke runs", path, keys[bad],
                      cf_json_str(o, keys[bad]));
    return 0;
}

static int read_row_times(struct reader *rd, const cJSON *r, const char *p, struct cf_smoke_row *o)
{
    static const struct field time_field[] = { { "time_us", F_NUM, 0, RANGE_TIME } };
    char tp[96];
    snprintf(tp, sizeof tp, "%s.rank_time_us", p);
    const cJSON *times = cJSON_GetObjectItemCaseSensitive(r, "rank_time_us"), *t;
    if (times && !cJSON_IsNull(times) && !cJSON_IsArray(times))
        return refuse(rd, "\"%s\" is not an array", tp);
    int n = cJSON_GetArraySize(times);
    if (o->nranks < 0)
        o->nranks = n;
    if (n && n != o->nranks)
        return refuse(rd, "\"%s\" has %d entries, the row's nranks %d", tp, n, o->nranks);
    if (!n)
        return 0;
    o->rank_time_us = cf_xcalloc((size_t)n, sizeof *o->rank_time_us);
    o->rank_of = cf_xcalloc((size_t)n, sizeof *o->rank_of);
    int k = 0;
    cJSON_ArrayForEach(t, times) {
        char ep[112];
        snprintf(ep, sizeof ep, "%s[%d]", tp, k);
        o->rank_time_us[k] = NAN;
        if (READ_FIELDS(rd, t, ep, time_field, &o->rank_time_us[k]) < 0 ||
            read_rank(rd, t, ep, "rank", 0, &o->rank_of[k]) < 0)
            return -1;
        k++;
    }
    return 0;
}

static int read_rows(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d, const struct group_id *ids)
{
#define R(key, type, field, ...) { key, type, offsetof(struct cf_smoke_row, field), __VA_ARGS__ }
    static const struct field fields[] = {
        R("root", F_INT, root, -1, CF_SMOKE_RANKS_MAX), R("in_place", F_BOOL, in_place, 0, 0),
        R("bytes", F_SIZE, bytes, RANGE_SIZE), R("count", F_SIZE, count, RANGE_SIZE), R("time_us", F_NUM, time_us, RANGE_TIME),
        R("algbw_gbps", F_NUM, algbw, RANGE_BUSBW), R("busbw_gbps", F_NUM, busbw, RANGE_BUSBW),
        R("iters", F_INT, iters, -1, INT_MAX), R("busbw_spread", F_NUM, busbw_spread, 0, 1e6),
        R("wrong", F_LONG, wrong, 0, 1e18), R("ok", F_BOOL, ok, 0, 0),
        R("group", F_INT, group, 0, INT_MAX), R("nranks", F_INT, nranks, RANGE_RANKS),
        R("slowest_rank", F_RANK, slowest_rank, 0, 0), R("slowest_time_us", F_NUM, slowest_us, RANGE_TIME),
        R("median_time_us", F_NUM, median_us, RANGE_TIME),
    };
#undef R
    static const struct field vs_median[] = { { "slowest_vs_median", F_NUM, 0, RANGE_TIME } };
    int bad;
    const cJSON *rows = array_at(rd, json, "rows", &bad), *r;
    if (bad)
        return -1;
    d->rows = cf_xcalloc((size_t)cJSON_GetArraySize(rows) + 1, sizeof *d->rows);
    d->slowest_vs_median = cf_xcalloc((size_t)cJSON_GetArraySize(rows) + 1, sizeof *d->slowest_vs_median);
    cJSON_ArrayForEach(r, rows) {
        char p[64];
        double *ratio = &d->slowest_vs_median[d->nrows];
        snprintf(p, sizeof p, "rows[%zu]", d->nrows);
        struct cf_smoke_row *o = &d->rows[d->nrows++];
        *o = (struct cf_smoke_row){ .root = -1, .ok = 1, .wrong = -1, .nranks = -1, .slowest_rank = -1,
                                    .busbw_spread = -1, .iters = -1 /* unknown */ };
        *ratio = NAN;
        if (READ_FIELDS(rd, r, p, fields, o) < 0 || READ_FIELDS(rd, r, p, vs_median, ratio) < 0 ||
            read_test_names(rd, r, p, (struct test_names){ &o->op, &o->dtype, &o->redop }) < 0 ||
            check_group(rd, ids, d->ngroups, p, o->group) < 0 || read_row_times(rd, r, p, o) < 0)
            return -1;
        if (o->nranks < 0)
            o->nranks = 0;
        if (isnan(*ratio))
            *ratio = o->median_us > 0 ? o->slowest_us / o->median_us : 0;
    }
    return 0;
}

static int read_conns(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
#define C(key, type, field, ...) { key, type, offsetof(struct cf_smoke_transport_conn, field), __VA_ARGS__ }
    static const struct field fields[] = {
        C("rank", F_RANK, rank, 0, 0), C("peer", F_RANK, peer, 0, 0),
        C("kind", F_FIXED, kind, 0, sizeof((struct cf_smoke_transport_conn *)0)->kind),
        C("via", F_FIXED, via, 0, sizeof((struct cf_smoke_transport_conn *)0)->via),
        C("channels", F_INT, channels, 0, INT_MAX),
    };
#undef C
    int bad;
    const cJSON *conns = array_at(rd, json, "transports", &bad), *c;
    if (bad)
        return -1;
    d->conns = cf_xcalloc((size_t)cJSON_GetArraySize(conns) + 1, sizeof *d->conns);
    cJSON_ArrayForEach(c, conns) {
        char p[64];
        snprintf(p, sizeof p, "transports[%zu]", d->nconns);
        struct cf_smoke_transport_conn *o = &d->conns[d->nconns++];
        o->rank = o->peer = -1;
        if (READ_FIELDS(rd, c, p, fields, o) < 0)
            return -1;
    }
    return 0;
}

static int read_failures(struct reader *rd, const cJSON *json, const char *key, struct cf_smoke_failure **out,
                         size_t *n)
{
    static const struct field fields[] = {
        { "rank", F_RANK, offsetof(struct cf_smoke_failure, rank), 0, 0 },
        { "doing", F_STR, offsetof(struct cf_smoke_failure, doing), 0, 0 },
        { "reason", F_STR, offsetof(struct cf_smoke_failure, reason), 0, 0 },
    };
    int bad;
    const cJSON *list = array_at(rd, json, key, &bad), *f;
    if (bad)
        return -1;
    *out = cf_xcalloc((size_t)cJSON_GetArraySize(list) + 1, sizeof **out);
    cJSON_ArrayForEach(f, list) {
        char p[64];
        snprintf(p, sizeof p, "%s[%zu]", key, *n);
        struct cf_smoke_failure *o = &(*out)[(*n)++];
        o->rank = -1;
        if (READ_FIELDS(rd, f, p, fields, o) < 0)
            return -1;
    }
    return 0;
}

static int read_rank_info(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(json, "rank_info"), *r, *v;
    if (!info || cJSON_IsNull(info))
        return 0;
    if (!cJSON_IsObject(info))
        return refuse(rd, "\"rank_info\" is not an object");
    d->info = cf_xcalloc((size_t)cJSON_GetArraySize(info) + 1, sizeof *d->info);
    cJSON_ArrayForEach(r, info) {
        char p[96], *end;
        snprintf(p, sizeof p, "rank_info.%.60s", r->string);
        long rank = strtol(r->string, &end, 10);
        if (!r->string[0] || *end || rank < -1 || rank >= rd->world)
            return refuse(rd, "\"%s\": no such rank (the run had %d)", p, rd->world);
        if (!cJSON_IsObject(r))
            return refuse(rd, "\"%s\" is not an object", p);
        struct cf_smoke_rank_infos *o = &d->info[d->ninfo++];
        o->rank = (int)rank;
        o->item = cf_xcalloc((size_t)cJSON_GetArraySize(r) + 1, sizeof *o->item);
        cJSON_ArrayForEach(v, r) {
            struct cf_smoke_info_item *it = &o->item[o->n++];
            it->key = cf_strdup(v->string);
            it->list = (struct strvec)STRVEC_INIT;
            if (cJSON_IsString(v)) {
                it->value = cf_strdup(v->valuestring);
                continue;
            }
            it->is_list = 1;
            if (cf_json_get_strvec(r, v->string, &it->list) < 1)
                return refuse(rd, "\"%s.%.60s\" is neither a string nor a list of strings", p, v->string);
        }
    }
    return 0;
}

static int read_results(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d, const struct group_id *ids)
{
#define R(key, type, field, ...) { key, type, offsetof(struct cf_smoke_rank_result, field), __VA_ARGS__ }
    static const struct field fields[] = {
        R("rank", F_RANK, rank, 0, 0), R("local_rank", F_INT, local_rank, -1, CF_SMOKE_RANKS_MAX),
        R("root", F_INT, root, -1, CF_SMOKE_RANKS_MAX), R("bytes", F_SIZE, bytes, RANGE_SIZE),
        R("in_place", F_BOOL, in_place, 0, 0), R("group", F_INT, group, 0, INT_MAX),
        R("pass", F_BOOL, pass, 0, 0), R("wrong", F_LONG, wrong, 0, 1e18),
        R("time_us", F_NUM, time_us, RANGE_TIME), R("reason", F_STR, reason, 0, 0),
    };
#undef R
    int bad;
    const cJSON *list = array_at(rd, json, "rank_results", &bad), *r;
    if (bad)
        return -1;
    d->results = cf_xcalloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *d->results);
    cJSON_ArrayForEach(r, list) {
        char p[64];
        snprintf(p, sizeof p, "rank_results[%zu]", d->nresults);
        struct cf_smoke_rank_result *o = &d->results[d->nresults++];
        o->rank = o->local_rank = o->root = -1;
        if (READ_FIELDS(rd, r, p, fields, o) < 0 ||
            read_test_names(rd, r, p, (struct test_names){ &o->op, &o->dtype, &o->redop }) < 0 ||
            check_group(rd, ids, d->ngroups, p, o->group) < 0)
            return -1;
    }
    return 0;
}

static int read_rank_failures(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
#define F(key, type, field, ...) { key, type, offsetof(struct cf_smoke_rank_failure, field), __VA_ARGS__ }
    static const struct field fields[] = {
        F("rank", F_RANK, rank, 0, 0), F("local_rank", F_INT, local_rank, -1, CF_SMOKE_RANKS_MAX),
        F("reason", F_STR, reason, 0, 0), F("stops_the_run", F_BOOL, stops_the_run, 0, 0),
    };
#undef F
    int bad;
    const cJSON *list = array_at(rd, json, "rank_failures", &bad), *f;
    if (bad)
        return -1;
    d->rank_failures = cf_xcalloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *d->rank_failures);
    cJSON_ArrayForEach(f, list) {
        char p[64];
        snprintf(p, sizeof p, "rank_failures[%zu]", d->nrank_failures);
        struct cf_smoke_rank_failure *o = &d->rank_failures[d->nrank_failures++];
        o->rank = o->local_rank = -1;
        if (READ_FIELDS(rd, f, p, fields, o) < 0)
            return -1;
    }
    return 0;
}

static int read_bad_hosts(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(json, "bad_hosts"), *v;
    d->bad_hosts_known = list != NULL && !cJSON_IsNull(list);
    if (!d->bad_hosts_known)
        return 0;
    if (!cJSON_IsArray(list))
        return refuse(rd, "\"bad_hosts\" is not an array of host names");
    const char **names = cf_xcalloc(d->nlisted + 1, sizeof *names);
    for (size_t r = 0; r < d->nlisted; r++)
        names[r] = d->ranks[r].hostname;
    struct cf_sorted_names hosts;
    cf_sorted_names_build(&hosts, names, d->nlisted, NULL);
    free(names);
    int i = 0, rc = 0;
    cJSON_ArrayForEach(v, list) {
        if (!cJSON_IsString(v)) {
            rc = refuse(rd, "\"bad_hosts[%d]\" holds something other than a host name", i);
            break;
        }
        if (!v->valuestring[0] || cf_sorted_names_find(&hosts, v->valuestring, strlen(v->valuestring)) < 0) {
            rc = refuse(rd, "\"bad_hosts[%d]\" names a host that no rank ran on", i);
            break;
        }
        cf_strvec_push(&d->bad_hosts, v->valuestring);
        i++;
    }
    cf_sorted_names_release(&hosts);
    return rc;
}

static int read_head(struct reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
#define H(key, type, field, ...) { key, type, offsetof(struct cf_smoke_doc, field), __VA_ARGS__ }
    static const struct field fields[] = {
        H("backend", F_STR, backend, 0, 0), H("launcher", F_STR, launcher, 0, 0),
        H("nranks", F_INT, nranks, RANGE_RANKS), H("rank", F_INT, rank, -1, CF_SMOKE_RANKS_MAX),
        H("lib_version", F_STR, lib_version, 0, 0), H("lib_path", F_STR, lib_path, 0, 0),
        H("mpi_abi", F_STR, mpi_abi, 0, 0), H("mpi_chosen_by", F_STR, mpi_chosen_by, 0, 0),
        H("ok", F_BOOL, ok, 0, 0), H("verdict", F_STR, verdict, 0, 0),
        H("conclusive", F_BOOL, conclusive, 0, 0), H("inconclusive_why", F_STR, inconclusive_why, 0, 0),
        H("passed", F_LONG, passed, RANGE_COUNT), H("failed", F_LONG, failed, RANGE_COUNT),
        H("aborted", F_BOOL, aborted, 0, 0), H("interrupted", F_BOOL, interrupted, 0, 0),
        H("out_of_bounds", F_LONG, out_of_bounds, 0, 1e18), H("avg_busbw_gbps", F_NUM, avg_busbw, RANGE_BUSBW),
        H("skipped", F_STR, skipped, 0, 0), H("network", F_STR, network, 0, 0),
        H("exclude", F_STR, exclude, 0, 0),
    };
#undef H
    const char *role = NULL;
    if (cf_json_get_str(json, "role", &role) < 0)
        return refuse(rd, "\"role\" is not a string");
    d->role = CF_ROLE_SUPERVISOR;
    if (role) {
        size_t i = 0;
        while (i < sizeof role_names / sizeof *role_names && strcmp(role, role_names[i]))
            i++;
        if (i == sizeof role_names / sizeof *role_names)
            return refuse(rd, "\"role\" is '%s', not supervisor, rank or supervised_rank", role);
        d->role = (enum cf_smoke_role)i;
    }
    d->nranks = -1; /* unknown: the ranks listed */
    return READ_FIELDS(rd, json, "", fields, d);
}

int cf_smoke_doc_read(const cJSON *json, struct cf_smoke_doc *d, cf_error *err)
{
    cf_smoke_doc_init(d);
    const char *schema = NULL;
    if (!cJSON_IsObject(json) || cf_json_get_str(json, "schema", &schema) < 1 || strcmp(schema, CF_SMOKE_DOC_SCHEMA))
        return cf_error_set(err, CF_ERR_FORMAT, "not a cclforge smoke document (schema %s): %s", CF_SMOKE_DOC_SCHEMA,
                            schema ? "another schema" : "no \"schema\"");
    struct reader rd = { err, 0 };
    struct group_id *ids = NULL;
    int rc = -1;
    if (read_head(&rd, json, d) < 0 || read_ranks(&rd, json, d) < 0)
        goto out;
    if (d->nranks < 0)
        d->nranks = (int)d->nlisted;
    else if (d->nlisted && d->nlisted != (size_t)d->nranks) {
        refuse(&rd, "\"ranks\" lists %zu ranks, \"nranks\" says %d", d->nlisted, d->nranks);
        goto out;
    }
    rd.world = d->nranks;
    if (d->role == CF_ROLE_RANK && d->rank >= d->nranks) {
        refuse(&rd, "\"rank\" is %d: no such rank (the run had %d)", d->rank, d->nranks);
        goto out;
    }
    if (read_bad_hosts(&rd, json, d) < 0 || read_groups(&rd, json, d, &ids) < 0 || read_rows(&rd, json, d, ids) < 0 ||
        read_conns(&rd, json, d) < 0 || read_failures(&rd, json, "failures", &d->failures, &d->nfailures) < 0 ||
        read_failures(&rd, json, "problems", &d->problems, &d->nproblems) < 0 || read_rank_info(&rd, json, d) < 0 ||
        read_results(&rd, json, d, ids) < 0 || read_rank_failures(&rd, json, d) < 0)
        goto out;
    rc = 0;
out:
    free(ids);
    if (rc < 0)
        cf_smoke_doc_release(d);
    return rc;
}

void cf_smoke_doc_release(struct cf_smoke_doc *d)
{
    free(d->backend);
    free(d->launcher);
    free(d->lib_version);
    free(d->lib_path);
    free(d->mpi_abi);
    free(d->mpi_chosen_by);
    free(d->verdict);
    free(d->inconclusive_why);
    cf_strvec_clear(&d->bad_hosts);
    free(d->skipped);
    for (size_t r = 0; r < d->nlisted; r++) {
        free(d->ranks[r].hostname);
        free(d->ranks[r].device);
        free(d->ranks[r].links);
    }
    free(d->ranks);
    for (size_t i = 0; i < d->nrows; i++) {
        free(d->rows[i].rank_time_us);
        free(d->rows[i].rank_of);
    }
    free(d->rows);
    free(d->slowest_vs_median);
    free(d->groups);
    free(d->network);
    free(d->conns);
    for (size_t i = 0; i < d->nfailures; i++) {
        free(d->failures[i].doing);
        free(d->failures[i].reason);
    }
    free(d->failures);
    for (size_t i = 0; i < d->nproblems; i++) {
        free(d->problems[i].doing);
        free(d->problems[i].reason);
    }
    free(d->problems);
    for (size_t i = 0; i < d->ninfo; i++) {
        for (size_t k = 0; k < d->info[i].n; k++)
            release_item(&d->info[i].item[k]);
        free(d->info[i].item);
    }
    free(d->info);
    for (size_t i = 0; i < d->nresults; i++)
        free(d->results[i].reason);
    free(d->results);
    for (size_t i = 0; i < d->nrank_failures; i++)
        free(d->rank_failures[i].reason);
    free(d->rank_failures);
    free(d->exclude);
    cf_smoke_doc_init(d);
}
