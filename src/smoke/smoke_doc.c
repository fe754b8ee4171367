/* The smoke document's one home (cclforge/smoke_doc.h): the typed model, filled
 * by a live run or by the strict reader, and the writer of cclforge.smoke/2 --
 * both directions driven by one field table per struct (cclforge/json_fields.h). */
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/json.h"
#include "cclforge/json_fields.h"
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

/* ---- the document's fields, for the writer and the reader ---- */

static const char *role_name(int v)
{
    return role_names[v];
}

static const char *op_name(int v)
{
    return cf_smoke_doc_op_name((enum cf_smoke_op)v);
}

static const char *dtype_name(int v)
{
    return cf_smoke_doc_dtype_name((enum cf_smoke_dtype)v);
}

static const char *redop_name(int v)
{
    return cf_smoke_doc_redop_name((enum cf_smoke_redop)v);
}

/* the ranges: a busbw no link reaches, a time in µs of 30,000 years, more tests than a run makes */
#define RANGE_BUSBW .min = 0, .max = CF_SMOKE_BUSBW_MAX
#define RANGE_TIME .min = 0, .max = 1e18
#define RANGE_COUNT .min = 0, .max = 1e15
#define RANGE_SIZE .min = 0, .max = (double)CF_SMOKE_BYTES_MAX
#define RANGE_RANKS .min = 0, .max = CF_SMOKE_RANKS_MAX
#define RANGE_LOCAL .min = -1, .max = CF_SMOKE_RANKS_MAX /* -1: not one rank's */
#define RANGE_ID .min = 0, .max = INT_MAX
#define RANGE_WRONG .min = 0, .max = 1e18
#define RANGE_SPREAD .min = 0, .max = 1e6
#define FIXED(type, member) .size = sizeof((type *)0)->member
/* a test's op, dtype and redop by name ("?" unknown, "none" no reduction) */
#define TEST_NAMES(type)                                                                                           \
    CF_JF_AS(type, "op", op, CF_JF_ENUM, .name = op_name, .nnames = CF_OP_COUNT + 1),                              \
        CF_JF_AS(type, "dtype", dtype, CF_JF_ENUM, .name = dtype_name, .nnames = CF_DT_COUNT + 1),                 \
        CF_JF_AS(type, "redop", redop, CF_JF_ENUM, .name = redop_name, .nnames = CF_RED_COUNT + 1)

#define K(key, field, ...) CF_JF_AS(struct cf_smoke_doc_rank, key, field, __VA_ARGS__)
static const struct cf_jf rank_fields[] = {
    CF_JF_SLOT("rank") /* its index */,
    K("hostname", hostname, CF_JF_STR), K("device", device, CF_JF_STR),
    K("pid", pid, CF_JF_INT, RANGE_ID), CF_JF_SLOT("links"),
};
#undef K
static const struct cf_jf_table rank_table = CF_JF_TABLE(struct cf_smoke_doc_rank, rank_fields);

#define R(key, field, ...) CF_JF_AS(struct cf_smoke_row, key, field, __VA_ARGS__)
static const struct cf_jf row_fields[] = {
    TEST_NAMES(struct cf_smoke_row),
    R("root", root, CF_JF_INT, RANGE_LOCAL), R("in_place", in_place, CF_JF_BOOL),
    R("bytes", bytes, CF_JF_SIZE, RANGE_SIZE), R("count", count, CF_JF_SIZE, RANGE_SIZE),
    R("time_us", time_us, CF_JF_DOUBLE, RANGE_TIME), R("algbw_gbps", algbw, CF_JF_DOUBLE, RANGE_BUSBW),
    R("busbw_gbps", busbw, CF_JF_DOUBLE, RANGE_BUSBW), CF_JF_SLOT("busbw_factor"),
    R("iters", iters, CF_JF_INT, .min = -1, .max = INT_MAX),
    R("busbw_spread", busbw_spread, CF_JF_DOUBLE, RANGE_SPREAD, .flags = CF_JF_NULL_IF_NEGATIVE),
    R("wrong", wrong, CF_JF_LONG, RANGE_WRONG, .flags = CF_JF_NULL_IF_NEGATIVE), R("ok", ok, CF_JF_BOOL),
    R("group", group, CF_JF_INT, RANGE_ID), R("nranks", nranks, CF_JF_INT, RANGE_RANKS),
    R("slowest_rank", slowest_rank, CF_JF_RANK), CF_JF_SLOT("slowest_host"),
    R("slowest_time_us", slowest_us, CF_JF_DOUBLE, RANGE_TIME),
    R("median_time_us", median_us, CF_JF_DOUBLE, RANGE_TIME), CF_JF_SLOT("slowest_vs_median"),
    CF_JF_SLOT("rank_time_us"),
};
#undef R
static const struct cf_smoke_row row_blank = {
    .op = CF_OP_COUNT, .dtype = CF_DT_COUNT, .redop = CF_RED_COUNT, .root = -1, .ok = 1, .wrong = -1,
    .nranks = -1, .slowest_rank = -1, .busbw_spread = -1, .iters = -1, /* unknown */
};
static const struct cf_jf_table row_table = CF_JF_TABLE_BLANK(struct cf_smoke_row, row_fields, &row_blank);

/* a row's slowest rank against the median, kept beside the rows */
static const struct cf_jf ratio_fields[] = { { .key = "slowest_vs_median", .type = CF_JF_DOUBLE, RANGE_TIME } };
static const struct cf_jf_table ratio_table = CF_JF_TABLE(double, ratio_fields);

/* one rank's time of a row */
struct rank_time {
    int rank;
    double time_us;
};
static const struct cf_jf time_fields[] = {
    CF_JF_AS(struct rank_time, "rank", rank, CF_JF_RANK),
    CF_JF_AS(struct rank_time, "time_us", time_us, CF_JF_DOUBLE, RANGE_TIME),
};
static const struct cf_jf_table time_table = CF_JF_TABLE(struct rank_time, time_fields);

#define G(key, field, ...) CF_JF_AS(struct cf_smoke_group, key, field, __VA_ARGS__)
static const struct cf_jf group_fields[] = {
    G("id", id, CF_JF_INT, RANGE_ID), G("round", round, CF_JF_INT, RANGE_ID),
    G("label", label, CF_JF_FIXED, FIXED(struct cf_smoke_group, label)),
    G("nranks", nranks, CF_JF_INT, RANGE_RANKS), G("nhosts", nhosts, CF_JF_INT, RANGE_RANKS),
    G("tests", tests, CF_JF_LONG, RANGE_COUNT), G("avg_busbw_gbps", avg_busbw, CF_JF_DOUBLE, RANGE_BUSBW),
    G("busbw_median_gbps", busbw_median, CF_JF_DOUBLE, RANGE_BUSBW),
    G("busbw_spread", busbw_spread, CF_JF_DOUBLE, RANGE_SPREAD, .flags = CF_JF_NULL_IF_NEGATIVE),
    G("failed", failed, CF_JF_BOOL_LONG), G("bad", bad, CF_JF_BOOL), G("conclusive", conclusive, CF_JF_BOOL),
    G("why", why, CF_JF_FIXED, FIXED(struct cf_smoke_group, why)),
};
#undef G
static const struct cf_smoke_group group_blank = { .busbw_median = NAN, .busbw_spread = -1 };
static const struct cf_jf_table group_table = CF_JF_TABLE_BLANK(struct cf_smoke_group, group_fields, &group_blank);

#define C(key, field, ...) CF_JF_AS(struct cf_smoke_transport_conn, key, field, __VA_ARGS__)
static const struct cf_jf conn_fields[] = {
    C("rank", rank, CF_JF_RANK), C("peer", peer, CF_JF_RANK),
    C("kind", kind, CF_JF_FIXED, FIXED(struct cf_smoke_transport_conn, kind)),
    C("via", via, CF_JF_FIXED, FIXED(struct cf_smoke_transport_conn, via)),
    C("channels", channels, CF_JF_INT, RANGE_ID),
};
#undef C
static const struct cf_smoke_transport_conn conn_blank = { .rank = -1, .peer = -1 };
static const struct cf_jf_table conn_table = CF_JF_TABLE_BLANK(struct cf_smoke_transport_conn, conn_fields, &conn_blank);

static const struct cf_jf failure_fields[] = {
    CF_JF_AS(struct cf_smoke_failure, "rank", rank, CF_JF_RANK),
    CF_JF_AS(struct cf_smoke_failure, "doing", doing, CF_JF_STR, .flags = CF_JF_OMIT_NULL),
    CF_JF_AS(struct cf_smoke_failure, "reason", reason, CF_JF_STR, .flags = CF_JF_OMIT_NULL),
};
static const struct cf_smoke_failure failure_blank = { .rank = -1 };
static const struct cf_jf_table failure_table = CF_JF_TABLE_BLANK(struct cf_smoke_failure, failure_fields, &failure_blank);

#define R(key, field, ...) CF_JF_AS(struct cf_smoke_rank_result, key, field, __VA_ARGS__)
static const struct cf_jf result_fields[] = {
    R("rank", rank, CF_JF_RANK), R("local_rank", local_rank, CF_JF_INT, RANGE_LOCAL),
    TEST_NAMES(struct cf_smoke_rank_result),
    R("root", root, CF_JF_INT, RANGE_LOCAL), R("bytes", bytes, CF_JF_SIZE, RANGE_SIZE),
    R("in_place", in_place, CF_JF_BOOL), R("group", group, CF_JF_INT, RANGE_ID), R("pass", pass, CF_JF_BOOL),
    R("wrong", wrong, CF_JF_LONG, RANGE_WRONG), R("time_us", time_us, CF_JF_DOUBLE, RANGE_TIME),
    R("reason", reason, CF_JF_STR, .flags = CF_JF_OMIT_NULL),
};
#undef R
static const struct cf_smoke_rank_result result_blank = {
    .rank = -1, .local_rank = -1, .root = -1, .op = CF_OP_COUNT, .dtype = CF_DT_COUNT, .redop = CF_RED_COUNT,
};
static const struct cf_jf_table result_table = CF_JF_TABLE_BLANK(struct cf_smoke_rank_result, result_fields, &result_blank);

#define F(key, field, ...) CF_JF_AS(struct cf_smoke_rank_failure, key, field, __VA_ARGS__)
static const struct cf_jf rank_failure_fields[] = {
    F("rank", rank, CF_JF_RANK), F("local_rank", local_rank, CF_JF_INT, RANGE_LOCAL),
    F("reason", reason, CF_JF_STR, .flags = CF_JF_EMPTY_IF_NULL), F("stops_the_run", stops_the_run, CF_JF_BOOL),
};
#undef F
static const struct cf_smoke_rank_failure rank_failure_blank = { .rank = -1, .local_rank = -1 };
static const struct cf_jf_table rank_failure_table =
    CF_JF_TABLE_BLANK(struct cf_smoke_rank_failure, rank_failure_fields, &rank_failure_blank);

enum { SUB_RANK, SUB_ROW, SUB_GROUP, SUB_CONN, SUB_FAILURE, SUB_RESULT, SUB_RANK_FAILURE };
static const struct cf_jf_table *const doc_subs[] = { &rank_table,    &row_table,    &group_table,       &conn_table,
                                                      &failure_table, &result_table, &rank_failure_table };

#define D(key, field, ...) CF_JF_AS(struct cf_smoke_doc, key, field, __VA_ARGS__)
#define ANY .max = INT_MAX /* a run's every rank's every test: as many as the file holds */
#define A(key, field, count, sub_, ...) \
    D(key, field, CF_JF_ARRAY, .count_offset = offsetof(struct cf_smoke_doc, count), .sub = sub_, __VA_ARGS__)
/* in the document's order, after "schema"; "rank" is written for a rank's own
 * document, "inconclusive_why" for an inconclusive run, "bad_hosts" when known */
static const struct cf_jf doc_fields[] = {
    D("role", role, CF_JF_ENUM, .name = role_name, .nnames = sizeof role_names / sizeof *role_names),
    D("backend", backend, CF_JF_STR, .flags = CF_JF_EMPTY_IF_NULL),
    D("launcher", launcher, CF_JF_STR, .flags = CF_JF_EMPTY_IF_NULL),
    D("nranks", nranks, CF_JF_INT, RANGE_RANKS), D("rank", rank, CF_JF_INT, RANGE_LOCAL),
    D("lib_version", lib_version, CF_JF_STR), D("lib_path", lib_path, CF_JF_STR), D("mpi_abi", mpi_abi, CF_JF_STR),
    D("mpi_chosen_by", mpi_chosen_by, CF_JF_STR), D("ok", ok, CF_JF_BOOL, .flags = CF_JF_NULL_IF_NEGATIVE),
    D("verdict", verdict, CF_JF_STR), D("conclusive", conclusive, CF_JF_BOOL),
    D("inconclusive_why", inconclusive_why, CF_JF_STR), D("bad_hosts", bad_hosts, CF_JF_STRVEC, .flags = CF_JF_CALLER_READS),
    D("passed", passed, CF_JF_LONG, RANGE_COUNT), D("failed", failed, CF_JF_LONG, RANGE_COUNT),
    D("aborted", aborted, CF_JF_BOOL), D("interrupted", interrupted, CF_JF_BOOL),
    D("out_of_bounds", out_of_bounds, CF_JF_LONG, RANGE_WRONG),
    D("avg_busbw_gbps", avg_busbw, CF_JF_DOUBLE, RANGE_BUSBW), D("skipped", skipped, CF_JF_STR),
    A("ranks", ranks, nlisted, SUB_RANK, .max = CF_SMOKE_RANKS_MAX), A("rows", rows, nrows, SUB_ROW, ANY),
    A("groups", groups, ngroups, SUB_GROUP, ANY), D("network", network, CF_JF_STR),
    A("transports", conns, nconns, SUB_CONN, ANY), A("failures", failures, nfailures, SUB_FAILURE, ANY),
    A("problems", problems, nproblems, SUB_FAILURE, ANY), CF_JF_SLOT("rank_info"),
    A("rank_results", results, nresults, SUB_RESULT, ANY),
    A("rank_failures", rank_failures, nrank_failures, SUB_RANK_FAILURE, ANY),
    D("exclude", exclude, CF_JF_STR, .flags = CF_JF_OMIT_NULL),
};
#undef A
#undef ANY
#undef D
static const struct cf_jf_table doc_table = CF_JF_TABLE_SUBS(struct cf_smoke_doc, doc_fields, doc_subs);

/* ---- the writer ---- */

static void later(cJSON *o, const char *key, cJSON *value)
{
    cJSON_ReplaceItemInObjectCaseSensitive(o, key, value);
}

static void write_rank(const struct cf_smoke_doc *d, size_t r, cJSON *o)
{
    const struct cf_smoke_doc_rank *h = &d->ranks[r];
    later(o, "rank", cJSON_CreateNumber((double)r));
    if (h->has_links)
        later(o, "links", cf_rank_links_to_json(h->links, h->nlinks));
    else
        cJSON_DeleteItemFromObjectCaseSensitive(o, "links");
}

static void write_row(const struct cf_smoke_doc *d, size_t i, cJSON *o)
{
    const struct cf_smoke_row *r = &d->rows[i];
    const char *host = r->slowest_rank >= 0 && (size_t)r->slowest_rank < d->nlisted ? d->ranks[r->slowest_rank].hostname
                                                                                     : NULL;
    later(o, "busbw_factor", cJSON_CreateNumber((unsigned)r->op < CF_OP_COUNT
                                                    ? cf_smoke_busbw_factor(cf_smoke_op_info(r->op), r->nranks)
                                                    : 0));
    later(o, "slowest_host", host ? cJSON_CreateString(host) : cJSON_CreateNull());
    later(o, "slowest_vs_median", cJSON_CreateNumber(d->slowest_vs_median[i]));
    cJSON *times = cJSON_CreateArray();
    for (int k = 0; r->rank_time_us && k < r->nranks; k++) {
        struct rank_time t = { r->rank_of[k], r->rank_time_us[k] };
        cJSON_AddItemToArray(times, cf_jf_to_json(&time_table, &t));
    }
    later(o, "rank_time_us", times);
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

/* the per-test arrays a slim document leaves out, in the document's order */
static const char *const heavy_names[] = { "rows", "groups", "transports", "rank_info", "rank_results",
                                           "rank_failures" };

static cJSON *doc_json(const struct cf_smoke_doc *d, int slim)
{
    cJSON *doc = cJSON_CreateObject(), *o;
    cJSON_AddStringToObject(doc, "schema", CF_SMOKE_DOC_SCHEMA);
    cf_jf_add(doc, &doc_table, d);
    if (d->role != CF_ROLE_RANK)
        cJSON_DeleteItemFromObjectCaseSensitive(doc, "rank");
    if (d->conclusive)
        cJSON_DeleteItemFromObjectCaseSensitive(doc, "inconclusive_why");
    if (!d->bad_hosts_known)
        cJSON_DeleteItemFromObjectCaseSensitive(doc, "bad_hosts");
    size_t i = 0;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(doc, "ranks")) write_rank(d, i++, o);
    i = 0;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(doc, "rows")) write_row(d, i++, o);
    later(doc, "rank_info", rank_info_json(d));
    if (slim) {
        cJSON *left = cJSON_AddArrayToObject(doc, "left_out_of_report");
        for (size_t k = 0; k < sizeof heavy_names / sizeof *heavy_names; k++) {
            cJSON_DeleteItemFromObjectCaseSensitive(doc, heavy_names[k]);
            cJSON_AddItemToArray(left, cJSON_CreateString(heavy_names[k]));
        }
    }
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

/* ---- the reader: the tables, then what they cannot say ---- */

/* the items of the document's array at key, which the tables have read */
static const cJSON *items_of(const cJSON *json, const char *key)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(json, key);
    return a ? a->child : NULL;
}

static int check_ranks(const struct cf_jf_reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
    const cJSON *r = items_of(json, "ranks");
    for (size_t i = 0; i < d->nlisted; i++, r = r->next) {
        struct cf_smoke_doc_rank *o = &d->ranks[i];
        double rank = (double)i;
        const cJSON *links = cJSON_GetObjectItemCaseSensitive(r, "links");
        if (cf_json_get_num(r, "rank", &rank) < 0 || rank != (double)i)
            return cf_jf_refuse(rd, "\"ranks[%zu].rank\" is not %zu: the ranks are listed in order", i, i);
        if (!links || cJSON_IsNull(links))
            continue;
        int nl = cJSON_GetArraySize(links);
        o->has_links = 1;
        o->links = cf_xcalloc(CF_RANK_LINKS_MAX, sizeof *o->links);
        if (!cJSON_IsArray(links) || nl > CF_RANK_LINKS_MAX ||
            (o->nlinks = cf_rank_links_from_json(links, o->links, CF_RANK_LINKS_MAX)) != (size_t)nl)
            return cf_jf_refuse(rd, "\"ranks[%zu].links\" is not a list of up to %d links (name, kind, line_gbit, "
                                    "capacity_gbps, limit, net or peer)", i, CF_RANK_LINKS_MAX);
    }
    return 0;
}

static int read_bad_hosts(const struct cf_jf_reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(json, "bad_hosts"), *v;
    d->bad_hosts_known = list != NULL && !cJSON_IsNull(list);
    if (!d->bad_hosts_known)
        return 0;
    if (!cJSON_IsArray(list))
        return cf_jf_refuse(rd, "\"bad_hosts\" is not an array of host names");
    const char **names = cf_xcalloc(d->nlisted + 1, sizeof *names);
    for (size_t r = 0; r < d->nlisted; r++)
        names[r] = d->ranks[r].hostname;
    struct cf_sorted_names hosts;
    cf_sorted_names_build(&hosts, names, d->nlisted, NULL);
    free(names);
    int i = 0, rc = 0;
    cJSON_ArrayForEach(v, list) {
        if (!cJSON_IsString(v)) {
            rc = cf_jf_refuse(rd, "\"bad_hosts[%d]\" holds something other than a host name", i);
            break;
        }
        if (!v->valuestring[0] || cf_sorted_names_find(&hosts, v->valuestring, strlen(v->valuestring)) < 0) {
            rc = cf_jf_refuse(rd, "\"bad_hosts[%d]\" names a host that no rank ran on", i);
            break;
        }
        cf_strvec_push(&d->bad_hosts, v->valuestring);
        i++;
    }
    cf_sorted_names_release(&hosts);
    return rc;
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

static int check_groups(const struct cf_jf_reader *rd, const cJSON *json, struct cf_smoke_doc *d, struct group_id *ids)
{
    const cJSON *g = items_of(json, "groups");
    for (size_t i = 0; i < d->ngroups; i++, g = g->next) {
        if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(g, "id")))
            return cf_jf_refuse(rd, "\"groups[%zu].id\" is not a number: every group has one", i);
        ids[i] = (struct group_id){ d->groups[i].id, i };
    }
    qsort(ids, d->ngroups, sizeof *ids, group_id_cmp);
    for (size_t i = 1; i < d->ngroups; i++)
        if (ids[i].id == ids[i - 1].id)
            return cf_jf_refuse(rd, "\"groups[%zu].id\" is %d, the id of groups[%zu] too", ids[i].ix, ids[i].id,
                                ids[i - 1].ix);
    return 0;
}

/* a row's or a result's group: 0 (the world) or one of "groups" */
static int check_group(const struct cf_jf_reader *rd, const struct group_id *ids, size_t n, const char *path, int group)
{
    struct group_id probe = { group, 0 };
    if (group == 0 || bsearch(&probe, ids, n, sizeof *ids, group_id_cmp))
        return 0;
    return cf_jf_refuse(rd, "\"%s.group\" is %d: no such group in \"groups\"", path, group);
}

static int read_row_times(const struct cf_jf_reader *rd, const cJSON *r, const char *p, struct cf_smoke_row *o)
{
    char tp[96];
    snprintf(tp, sizeof tp, "%s.rank_time_us", p);
    const cJSON *times = cJSON_GetObjectItemCaseSensitive(r, "rank_time_us"), *t;
    if (times && !cJSON_IsNull(times) && !cJSON_IsArray(times))
        return cf_jf_refuse(rd, "\"%s\" is not an array", tp);
    int n = cJSON_GetArraySize(times);
    if (o->nranks < 0)
        o->nranks = n;
    if (n && n != o->nranks)
        return cf_jf_refuse(rd, "\"%s\" has %d entries, the row's nranks %d", tp, n, o->nranks);
    if (!n)
        return 0;
    o->rank_time_us = cf_xcalloc((size_t)n, sizeof *o->rank_time_us);
    o->rank_of = cf_xcalloc((size_t)n, sizeof *o->rank_of);
    int k = 0;
    cJSON_ArrayForEach(t, times) {
        char ep[112];
        snprintf(ep, sizeof ep, "%s[%d]", tp, k);
        struct rank_time rt = { -1, NAN };
        if (cf_jf_read(rd, &time_table, t, &rt, ep) < 0)
            return -1;
        if (rt.rank < 0)
            return cf_jf_refuse(rd, "\"%s.rank\" is not a number", ep);
        o->rank_of[k] = rt.rank;
        o->rank_time_us[k++] = rt.time_us;
    }
    return 0;
}

static int check_rows(const struct cf_jf_reader *rd, const cJSON *json, struct cf_smoke_doc *d,
                      const struct group_id *ids)
{
    const cJSON *r = items_of(json, "rows");
    d->slowest_vs_median = cf_xcalloc(d->nrows + 1, sizeof *d->slowest_vs_median);
    for (size_t i = 0; i < d->nrows; i++, r = r->next) {
        char p[64];
        snprintf(p, sizeof p, "rows[%zu]", i);
        struct cf_smoke_row *o = &d->rows[i];
        double *ratio = &d->slowest_vs_median[i];
        *ratio = NAN;
        if (cf_jf_read(rd, &ratio_table, r, ratio, p) < 0 || check_group(rd, ids, d->ngroups, p, o->group) < 0 ||
            read_row_times(rd, r, p, o) < 0)
            return -1;
        if (o->nranks < 0)
            o->nranks = 0;
        if (isnan(*ratio))
            *ratio = o->median_us > 0 ? o->slowest_us / o->median_us : 0;
    }
    for (size_t i = 0; i < d->nresults; i++) {
        char p[64];
        snprintf(p, sizeof p, "rank_results[%zu]", i);
        if (check_group(rd, ids, d->ngroups, p, d->results[i].group) < 0)
            return -1;
    }
    return 0;
}

static int read_rank_info(const struct cf_jf_reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(json, "rank_info"), *r, *v;
    if (!info || cJSON_IsNull(info))
        return 0;
    if (!cJSON_IsObject(info))
        return cf_jf_refuse(rd, "\"rank_info\" is not an object");
    d->info = cf_xcalloc((size_t)cJSON_GetArraySize(info) + 1, sizeof *d->info);
    cJSON_ArrayForEach(r, info) {
        char p[96], *end;
        snprintf(p, sizeof p, "rank_info.%.60s", r->string);
        long rank = strtol(r->string, &end, 10);
        if (!r->string[0] || *end || rank < -1 || rank >= rd->ranks)
            return cf_jf_refuse(rd, "\"%s\": no such rank (the run had %d)", p, rd->ranks);
        if (!cJSON_IsObject(r))
            return cf_jf_refuse(rd, "\"%s\" is not an object", p);
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
                return cf_jf_refuse(rd, "\"%s.%.60s\" is neither a string nor a list of strings", p, v->string);
        }
    }
    return 0;
}

/* what the tables cannot say: the ranks agree, the names and groups exist */
static int check_doc(struct cf_jf_reader *rd, const cJSON *json, struct cf_smoke_doc *d)
{
    if (d->nranks < 0)
        d->nranks = (int)d->nlisted;
    else if (d->nlisted && d->nlisted != (size_t)d->nranks)
        return cf_jf_refuse(rd, "\"ranks\" lists %zu ranks, \"nranks\" says %d", d->nlisted, d->nranks);
    if (d->role == CF_ROLE_RANK && d->rank >= d->nranks)
        return cf_jf_refuse(rd, "\"rank\" is %d: no such rank (the run had %d)", d->rank, d->nranks);
    struct group_id *ids = cf_xcalloc(d->ngroups + 1, sizeof *ids);
    int rc = check_ranks(rd, json, d) < 0 || read_bad_hosts(rd, json, d) < 0 || check_groups(rd, json, d, ids) < 0 ||
                     check_rows(rd, json, d, ids) < 0 || read_rank_info(rd, json, d) < 0
                 ? -1
                 : 0;
    free(ids);
    return rc;
}

int cf_smoke_doc_read(const cJSON *json, struct cf_smoke_doc *d, cf_error *err)
{
    cf_smoke_doc_init(d);
    const char *schema = NULL;
    if (!cJSON_IsObject(json) || cf_json_get_str(json, "schema", &schema) < 1 || strcmp(schema, CF_SMOKE_DOC_SCHEMA))
        return cf_error_set(err, CF_ERR_FORMAT, "not a cclforge smoke document (schema %s): %s", CF_SMOKE_DOC_SCHEMA,
                            schema ? "another schema" : "no \"schema\"");
    /* the ranks that exist: "nranks", else the ranks listed */
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(json, "nranks");
    struct cf_jf_reader rd = { err, "smoke document", " (write it as cclforge smoke --json does)",
                               cJSON_IsNumber(n) && n->valuedouble >= 0 && n->valuedouble <= CF_SMOKE_RANKS_MAX
                                   ? (int)n->valuedouble
                                   : cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(json, "ranks")),
                               0 };
    d->nranks = -1; /* unknown: the ranks listed */
    if (cf_jf_read(&rd, &doc_table, json, d, "") < 0 || check_doc(&rd, json, d) < 0) {
        cf_smoke_doc_release(d);
        return -1;
    }
    return 0;
}

void cf_smoke_doc_release(struct cf_smoke_doc *d)
{
    for (size_t r = 0; r < d->nlisted; r++)
        free(d->ranks[r].links);
    for (size_t i = 0; i < d->nrows; i++) {
        free(d->rows[i].rank_time_us);
        free(d->rows[i].rank_of);
    }
    free(d->slowest_vs_median);
    for (size_t i = 0; i < d->ninfo; i++) {
        for (size_t k = 0; k < d->info[i].n; k++)
            release_item(&d->info[i].item[k]);
        free(d->info[i].item);
    }
    free(d->info);
    cf_jf_release(&doc_table, d);
    cf_smoke_doc_init(d);
}
