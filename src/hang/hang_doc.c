/* The hang document, cclforge.hang/1: its model's release, its writer and its
 * reader (docs/schemas/hang.md). A rank's collectives are written as its last
 * CF_HANG_DOC_LAST of each group, what the page draws; the reader fills the
 * same model, so `cclforge report` remakes the page a run wrote. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/hang.h"

/* ---- release ---- */

static void dump_release(struct cf_hang_dump *d)
{
    free(d->path);
    free(d->format);
    free(d->refused);
    free(d->version);
    free(d->host);
    free(d->entries); /* their strings are the pool's */
    for (size_t i = 0; i < d->n_status; i++)
        free(d->status[i].group);
    free(d->status);
    for (size_t i = 0; i < d->n_config; i++) {
        free(d->config[i].key);
        free(d->config[i].name);
        free(d->config[i].desc);
        free(d->config[i].ranks);
    }
    free(d->config);
}

static void div_release(struct cf_hang_divergence *d)
{
    free(d->op);
    free(d->why);
    free(d->ranks_in);
    free(d->ranks_odd);
    free(d->where);
}

void cf_hang_release(struct cf_hang_result *r)
{
    for (size_t i = 0; i < r->n_dumps; i++)
        dump_release(&r->dumps[i]);
    free(r->dumps);
    for (size_t i = 0; i < r->n_groups; i++) {
        struct cf_hang_group *g = &r->groups[i];
        free(g->name);
        free(g->desc);
        free(g->ranks);
        free(g->membership);
        free(g->absent);
        for (size_t k = 0; k < g->n_div; k++)
            div_release(&g->div[k]);
        free(g->div);
    }
    free(r->groups);
    cf_strvec_clear(&r->notes);
    cf_hang_pool_free(r->pool);
    memset(r, 0, sizeof *r);
}

/* ---- writer ---- */

static void add_str(cJSON *o, const char *key, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *int_array(const int *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static cJSON *entry_json(const struct cf_hang_entry *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "group", e->group);
    cJSON_AddNumberToObject(o, "seq", (double)e->seq);
    cJSON_AddBoolToObject(o, "p2p", e->is_p2p);
    cJSON_AddStringToObject(o, "op", e->op);
    add_str(o, "state", e->state);
    if (e->retired >= 0)
        cJSON_AddBoolToObject(o, "retired", e->retired);
    else
        cJSON_AddNullToObject(o, "retired");
    add_str(o, "input_sizes", e->in_sizes);
    add_str(o, "output_sizes", e->out_sizes);
    add_str(o, "input_dtypes", e->in_dtypes);
    add_str(o, "output_dtypes", e->out_dtypes);
    if (e->time_created_ns)
        cJSON_AddNumberToObject(o, "time_created_ns", (double)e->time_created_ns);
    else
        cJSON_AddNullToObject(o, "time_created_ns");
    if (e->duration_ms >= 0)
        cJSON_AddNumberToObject(o, "duration_ms", e->duration_ms);
    else
        cJSON_AddNullToObject(o, "duration_ms");
    add_str(o, "where", e->where);
    add_str(o, "stack", e->stack);
    return o;
}

/* Is entries[i] among the last `keep` of its group in this dump? */
static int among_last(const struct cf_hang_dump *d, size_t i, size_t keep)
{
    size_t later = 0;
    for (size_t k = i + 1; k < d->n_entries && later < keep; k++)
        later += !strcmp(d->entries[k].group, d->entries[i].group);
    return later < keep;
}

static cJSON *dump_json(const struct cf_hang_dump *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", d->rank);
    cJSON_AddStringToObject(o, "file", d->path);
    add_str(o, "format", d->format);
    add_str(o, "refused", d->refused);
    add_str(o, "version", d->version);
    cJSON_AddBoolToObject(o, "version_known", d->version_known);
    add_str(o, "host", d->host);
    if (d->gpu >= 0)
        cJSON_AddNumberToObject(o, "gpu", d->gpu);
    else
        cJSON_AddNullToObject(o, "gpu");
    cJSON_AddNumberToObject(o, "entries", (double)d->n_recorded);
    cJSON_AddNumberToObject(o, "first_record_id", (double)d->first_record_id);
    cJSON_AddBoolToObject(o, "wrapped", d->first_record_id > 0);
    cJSON *last = cJSON_AddArrayToObject(o, "last");
    for (size_t i = 0; i < d->n_entries; i++)
        if (among_last(d, i, CF_HANG_DOC_LAST))
            cJSON_AddItemToArray(last, entry_json(&d->entries[i]));
    return o;
}

static cJSON *div_json(const struct cf_hang_divergence *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "seq", (double)d->seq);
    cJSON_AddBoolToObject(o, "p2p", d->is_p2p);
    cJSON_AddStringToObject(o, "kind", cf_hang_kind_name(d->kind));
    cJSON_AddStringToObject(o, "op", d->op);
    cJSON_AddStringToObject(o, "why", d->why);
    cJSON_AddItemToObject(o, "ranks_in", int_array(d->ranks_in, d->n_in));
    cJSON_AddItemToObject(o, "ranks_odd", int_array(d->ranks_odd, d->n_odd));
    add_str(o, "where", d->where);
    if (d->since_ns)
        cJSON_AddNumberToObject(o, "since_ns", (double)d->since_ns);
    else
        cJSON_AddNullToObject(o, "since_ns");
    return o;
}

void *cf_hang_to_json(const struct cf_hang_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", CF_HANG_SCHEMA);
    int code = cf_hang_exit_code(r);
    cJSON_AddStringToObject(doc, "verdict", code == 0 ? "consistent" : code == 1 ? "divergent" : "unreadable");
    const struct cf_hang_group *fg = NULL;
    const struct cf_hang_divergence *first = cf_hang_first(r, &fg);
    if (first) {
        cJSON *f = div_json(first);
        cJSON_AddStringToObject(f, "group", fg->name);
        cJSON_AddItemToObject(doc, "first", f);
    } else {
        cJSON_AddNullToObject(doc, "first");
    }
    char *exclude = cf_hang_exclude(r);
    add_str(doc, "exclude", exclude);
    free(exclude);
    cJSON_AddNumberToObject(doc, "world", r->world);
    cJSON *groups = cJSON_AddArrayToObject(doc, "groups");
    for (size_t i = 0; i < r->n_groups; i++) {
        const struct cf_hang_group *g = &r->groups[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", g->name);
        add_str(o, "desc", g->desc);
        cJSON_AddItemToObject(o, "ranks", int_array(g->ranks, g->n_ranks));
        cJSON_AddStringToObject(o, "membership", g->membership);
        cJSON_AddItemToObject(o, "absent", int_array(g->absent, g->n_absent));
        cJSON_AddNumberToObject(o, "known_from", (double)g->known_from);
        cJSON_AddNumberToObject(o, "last_seq", (double)g->last_seq);
        cJSON *divs = cJSON_AddArrayToObject(o, "divergences");
        for (size_t k = 0; k < g->n_div; k++)
            cJSON_AddItemToArray(divs, div_json(&g->div[k]));
        cJSON_AddItemToArray(groups, o);
    }
    cJSON *ranks = cJSON_AddArrayToObject(doc, "ranks");
    for (size_t i = 0; i < r->n_dumps; i++)
        cJSON_AddItemToArray(ranks, dump_json(&r->dumps[i]));
    cJSON *notes = cJSON_AddArrayToObject(doc, "notes");
    for (size_t i = 0; i < r->notes.n; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(r->notes.v[i]));
    return doc;
}

/* ---- reader ---- */

struct rd {
    cf_error *err;
    int failed;
};

static const cJSON *need(struct rd *rd, const cJSON *o, const char *key, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && !rd->failed) {
        rd->failed = 1;
        cf_error_set(rd->err, CF_ERR_FORMAT, "%s%s%s: missing", where, *where ? "." : "", key);
    }
    return v;
}

static char *get_str(struct rd *rd, const cJSON *o, const char *key, const char *where, int nullable)
{
    const cJSON *v = need(rd, o, key, where);
    if (!v || rd->failed)
        return NULL;
    if (cJSON_IsString(v))
        return cf_strdup(v->valuestring);
    if (!(nullable && cJSON_IsNull(v))) {
        rd->failed = 1;
        cf_error_set(rd->err, CF_ERR_FORMAT, "%s.%s: not a string", where, key);
    }
    return NULL;
}

static int64_t get_int(struct rd *rd, const cJSON *o, const char *key, const char *where, int64_t lo, int64_t hi,
                       int64_t if_null)
{
    const cJSON *v = need(rd, o, key, where);
    if (!v || rd->failed)
        return lo;
    if (cJSON_IsNull(v))
        return if_null;
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(x >= (double)lo && x <= (double)hi) || x != floor(x)) {
        rd->failed = 1;
        cf_error_set(rd->err, CF_ERR_FORMAT, "%s.%s: not a whole number in [%lld, %lld]", where, key, (long long)lo,
                     (long long)hi);
        return lo;
    }
    return (int64_t)x;
}

static int get_bool(struct rd *rd, const cJSON *o, const char *key, const char *where)
{
    const cJSON *v = need(rd, o, key, where);
    if (!v || rd->failed)
        return 0;
    if (!cJSON_IsBool(v)) {
        rd->failed = 1;
        cf_error_set(rd->err, CF_ERR_FORMAT, "%s.%s: not true or false", where, key);
    }
    return cJSON_IsTrue(v);
}

static int *get_ranks(struct rd *rd, const cJSON *o, const char *key, const char *where, size_t *n)
{
    const cJSON *a = need(rd, o, key, where);
    *n = 0;
    if (!a || rd->failed)
        return NULL;
    if (!cJSON_IsArray(a)) {
        rd->failed = 1;
        cf_error_set(rd->err, CF_ERR_FORMAT, "%s.%s: not an array", where, key);
        return NULL;
    }
    int *v = cf_xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *v);
    const cJSON *x;
    cJSON_ArrayForEach(x, a) {
        double d = cJSON_IsNumber(x) ? x->valuedouble : -1;
        if (!(d >= 0 && d < CF_HANG_RANKS_MAX) || d != floor(d)) {
            rd->failed = 1;
            cf_error_set(rd->err, CF_ERR_FORMAT, "%s.%s[%zu]: not a rank", where, key, *n);
            break;
        }
        v[(*n)++] = (int)d;
    }
    return v;
}

/* a string of the entry, into the pool */
static const char *get_pooled(struct rd *rd, struct cf_hang_result *r, const cJSON *o, const char *key,
                              const char *where, int nullable)
{
    char *s = get_str(rd, o, key, where, nullable);
    const char *p = s ? cf_hang_intern(r, s, strlen(s)) : NULL;
    free(s);
    return p;
}

static void read_entry_json(struct rd *rd, struct cf_hang_result *r, const cJSON *o, struct cf_hang_entry *e,
                            const char *where)
{
    e->group = get_pooled(rd, r, o, "group", where, 0);
    e->seq = get_int(rd, o, "seq", where, -1, INT64_C(1) << 53, -1);
    e->is_p2p = get_bool(rd, o, "p2p", where);
    e->op = get_pooled(rd, r, o, "op", where, 0);
    e->state = get_pooled(rd, r, o, "state", where, 1);
    e->in_sizes = get_pooled(rd, r, o, "input_sizes", where, 1);
    e->out_sizes = get_pooled(rd, r, o, "output_sizes", where, 1);
    e->in_dtypes = get_pooled(rd, r, o, "input_dtypes", where, 1);
    e->out_dtypes = get_pooled(rd, r, o, "output_dtypes", where, 1);
    e->time_created_ns = get_int(rd, o, "time_created_ns", where, 0, INT64_C(1) << 62, 0);
    const cJSON *dur = need(rd, o, "duration_ms", where);
    e->duration_ms = cJSON_IsNumber(dur) && dur->valuedouble >= 0 ? dur->valuedouble : -1;
    e->where = get_pooled(rd, r, o, "where", where, 1);
    e->stack = get_pooled(rd, r, o, "stack", where, 1);
    e->in_numel = e->out_numel = -1;
    const cJSON *retired = need(rd, o, "retired", where);
    e->retired = cJSON_IsBool(retired) ? cJSON_IsTrue(retired) : -1;
}

static void read_div_json(struct rd *rd, const cJSON *o, struct cf_hang_divergence *d, const char *where)
{
    d->seq = get_int(rd, o, "seq", where, -1, INT64_C(1) << 53, -1);
    d->is_p2p = get_bool(rd, o, "p2p", where);
    char *kind = get_str(rd, o, "kind", where, 0);
    d->kind = CF_HANG_KIND_COUNT;
    for (int k = 0; kind && k < CF_HANG_KIND_COUNT; k++)
        if (!strcmp(kind, cf_hang_kind_name((enum cf_hang_kind)k)))
            d->kind = (enum cf_hang_kind)k;
    if (kind && d->kind == CF_HANG_KIND_COUNT && !rd->failed) {
        rd->failed = 1;
        cf_error_set(rd->err, CF_ERR_FORMAT, "%s.kind: %s is not a kind of divergence", where, kind);
    }
    free(kind);
    d->op = get_str(rd, o, "op", where, 0);
    d->why = get_str(rd, o, "why", where, 0);
    d->ranks_in = get_ranks(rd, o, "ranks_in", where, &d->n_in);
    d->ranks_odd = get_ranks(rd, o, "ranks_odd", where, &d->n_odd);
    d->where = get_str(rd, o, "where", where, 1);
    d->since_ns = get_int(rd, o, "since_ns", where, 0, INT64_C(1) << 62, 0);
    if (!rd->failed && !d->n_odd) {
        rd->failed = 1;
        cf_error_set(rd->err, CF_ERR_FORMAT, "%s.ranks_odd: empty (a divergence names its ranks)", where);
    }
}

static const cJSON *need_array(struct rd *rd, const cJSON *o, const char *key, const char *where)
{
    const cJSON *a = need(rd, o, key, where);
    if (a && !cJSON_IsArray(a) && !rd->failed) {
        rd->failed = 1;
        cf_error_set(rd->err, CF_ERR_FORMAT, "%s%s%s: not an array", where, *where ? "." : "", key);
    }
    return rd->failed ? NULL : a;
}

int cf_hang_from_json(const void *json, struct cf_hang_result *r, cf_error *err)
{
    const cJSON *doc = json;
    struct rd rd = { err, 0 };
    memset(r, 0, sizeof *r);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CF_HANG_SCHEMA))
        return cf_error_set(err, CF_ERR_FORMAT, "schema: not %s", CF_HANG_SCHEMA);
    r->world = (int)get_int(&rd, doc, "world", "", 0, CF_HANG_RANKS_MAX, 0);
    const cJSON *ranks = need_array(&rd, doc, "ranks", "");
    const cJSON *x;
    size_t i = 0;
    char where[96];
    r->dumps = cf_xcalloc((size_t)cJSON_GetArraySize(ranks) + 1, sizeof *r->dumps);
    cJSON_ArrayForEach(x, ranks) {
        if (rd.failed)
            break;
        snprintf(where, sizeof where, "ranks[%zu]", i++);
        struct cf_hang_dump *d = &r->dumps[r->n_dumps++];
        d->rank = (int)get_int(&rd, x, "rank", where, -1, CF_HANG_RANKS_MAX - 1, -1);
        d->path = get_str(&rd, x, "file", where, 0);
        d->format = get_str(&rd, x, "format", where, 1);
        d->refused = get_str(&rd, x, "refused", where, 1);
        d->version = get_str(&rd, x, "version", where, 1);
        d->version_known = get_bool(&rd, x, "version_known", where);
        d->host = get_str(&rd, x, "host", where, 1);
        d->gpu = (int)get_int(&rd, x, "gpu", where, 0, CF_HANG_RANKS_MAX, -1);
        d->first_record_id = get_int(&rd, x, "first_record_id", where, 0, INT64_C(1) << 53, 0);
        d->n_recorded = (size_t)get_int(&rd, x, "entries", where, 0, INT64_C(1) << 40, 0);
        r->n_refused += d->refused != NULL;
        const cJSON *last = need_array(&rd, x, "last", where);
        d->entries = cf_xcalloc((size_t)cJSON_GetArraySize(last) + 1, sizeof *d->entries);
        const cJSON *e;
        size_t k = 0;
        cJSON_ArrayForEach(e, last) {
            if (rd.failed)
                break;
            char ew[128];
            snprintf(ew, sizeof ew, "%s.last[%zu]", where, k++);
            read_entry_json(&rd, r, e, &d->entries[d->n_entries++], ew);
        }
    }
    const cJSON *groups = need_array(&rd, doc, "groups", "");
    r->groups = cf_xcalloc((size_t)cJSON_GetArraySize(groups) + 1, sizeof *r->groups);
    i = 0;
    cJSON_ArrayForEach(x, groups) {
        if (rd.failed)
            break;
        snprintf(where, sizeof where, "groups[%zu]", i++);
        struct cf_hang_group *g = &r->groups[r->n_groups++];
        g->name = get_str(&rd, x, "name", where, 0);
        g->desc = get_str(&rd, x, "desc", where, 1);
        g->ranks = get_ranks(&rd, x, "ranks", where, &g->n_ranks);
        g->membership = get_str(&rd, x, "membership", where, 0);
        g->absent = get_ranks(&rd, x, "absent", where, &g->n_absent);
        g->known_from = get_int(&rd, x, "known_from", where, 0, INT64_C(1) << 53, 1);
        g->last_seq = get_int(&rd, x, "last_seq", where, 0, INT64_C(1) << 53, 0);
        const cJSON *divs = need_array(&rd, x, "divergences", where);
        g->div = cf_xcalloc((size_t)cJSON_GetArraySize(divs) + 1, sizeof *g->div);
        const cJSON *dv;
        size_t k = 0;
        cJSON_ArrayForEach(dv, divs) {
            if (rd.failed)
                break;
            char dw[128];
            snprintf(dw, sizeof dw, "%s.divergences[%zu]", where, k++);
            read_div_json(&rd, dv, &g->div[g->n_div++], dw);
        }
    }
    const cJSON *notes = need_array(&rd, doc, "notes", "");
    cJSON_ArrayForEach(x, notes)
        if (cJSON_IsString(x))
            cf_strvec_push(&r->notes, x->valuestring);
    if (rd.failed) {
        cf_hang_release(r);
        return -1;
    }
    return 0;
}
