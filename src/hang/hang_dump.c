/* One rank's Flight Recorder dump into the model: the format from the first
 * byte (a pickle's PROTO, JSON's '{'), the values through the safe reader of
 * cclforge/pickle.h, then the fields by name. Field names are read whatever
 * the version says, so a version this reader does not list is read the same
 * way and marked unknown; a field a version lacks stays unknown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/hang.h"
#include "cclforge/pickle.h"

/* the dump versions whose layout the reader was written against (torch's
 * FlightRecorder.hpp version_val, 2.2 to 2.10) */
static const char *const known_versions[] = { "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10" };

static char *str_of(const struct cf_pv *v)
{
    const char *s = cf_pv_str(v);
    return s ? cf_strdup(s) : NULL;
}

/* a whole number, or one written as a decimal string (torch's JSON writes
 * pg_status's counters as strings) */
static int64_t int_of(const struct cf_pv *v, int64_t fallback)
{
    int64_t x;
    if (cf_pv_int(v, &x) == 0)
        return x;
    const char *s = cf_pv_str(v);
    if (!s || !*s || strlen(s) > 19)
        return fallback;
    char *end;
    long long y = strtoll(s, &end, 10);
    return *end ? fallback : (int64_t)y;
}

/* a value written back as Python would print it: sizes "[[4, 2]]" */
static void repr(const struct cf_pv *v, struct strbuf *out, int depth)
{
    if (!v || depth > 8) {
        cf_sb_adds(out, "?");
        return;
    }
    switch (v->kind) {
    case CF_PV_INT: cf_sb_addf(out, "%lld", (long long)v->u.i); break;
    case CF_PV_FLOAT: cf_sb_addf(out, "%g", v->u.f); break;
    case CF_PV_BOOL: cf_sb_adds(out, v->u.b ? "True" : "False"); break;
    case CF_PV_NONE: cf_sb_adds(out, "None"); break;
    case CF_PV_STR: cf_sb_add(out, v->u.str.s, v->u.str.len); break;
    case CF_PV_LIST:
    case CF_PV_TUPLE:
        cf_sb_addc(out, '[');
        for (size_t i = 0; i < v->u.seq.n; i++) {
            if (i)
                cf_sb_adds(out, ", ");
            repr(v->u.seq.v[i], out, depth + 1);
        }
        cf_sb_addc(out, ']');
        break;
    default: cf_sb_adds(out, "?"); break;
    }
}

static char *repr_of(const struct cf_pv *v)
{
    if (!v)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    repr(v, &sb, 0);
    return cf_sb_detach(&sb);
}

/* the dtypes as "Float,Float" (a list of names) */
static char *names_of(const struct cf_pv *v)
{
    if (!v)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < cf_pv_len(v); i++) {
        const char *s = cf_pv_str(cf_pv_at(v, i));
        if (i)
            cf_sb_addc(&sb, ',');
        cf_sb_adds(&sb, s ? s : "?");
    }
    return cf_sb_detach(&sb);
}

/* elements of the first tensor of a sizes list ([[4, 2], ...] -> 8); -1 unknown */
static int64_t numel_of(const struct cf_pv *sizes)
{
    const struct cf_pv *first = cf_pv_at(sizes, 0);
    if (!first)
        return cf_pv_len(sizes) == 0 && sizes ? 0 : -1;
    int64_t n = 1;
    for (size_t i = 0; i < cf_pv_len(first); i++) {
        int64_t d;
        if (cf_pv_int(cf_pv_at(first, i), &d) < 0 || d < 0)
            return -1;
        if (d && n > INT64_MAX / d)
            return -1;
        n *= d;
    }
    return n;
}

/* torch's own files are not where the user issued the collective */
static int torch_frame(const char *file)
{
    static const char *const marks[] = { "/torch/", "site-packages/torch", "<frozen", "<string>" };
    if (!file || file[0] == '<')
        return 1;
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
        if (strstr(file, marks[i]))
            return 1;
    return 0;
}

static void read_frames(const struct cf_pv *frames, struct cf_hang_entry *e)
{
    struct strbuf stack = STRBUF_INIT;
    for (size_t i = 0; i < cf_pv_len(frames) && i < 64; i++) {
        const struct cf_pv *f = cf_pv_at(frames, i);
        const char *file = cf_pv_str(cf_pv_get(f, "filename"));
        const char *name = cf_pv_str(cf_pv_get(f, "name"));
        int64_t line = int_of(cf_pv_get(f, "line"), -1);
        if (!file)
            continue;
        cf_sb_addf(&stack, "%s:%lld %s\n", file, (long long)line, name ? name : "?");
        if (!e->where && !torch_frame(file))
            e->where = cf_asprintf("%s:%lld (%s)", file, (long long)line, name ? name : "?");
    }
    cf_sb_rtrim(&stack);
    e->stack = stack.len ? cf_sb_detach(&stack) : (cf_sb_release(&stack), NULL);
}

static void read_entry(const struct cf_pv *v, struct cf_hang_entry *e)
{
    e->record_id = int_of(cf_pv_get(v, "record_id"), -1);
    const struct cf_pv *pg = cf_pv_get(v, "process_group");
    e->pg_id = int_of(cf_pv_get(v, "pg_id"), -1);
    e->group = str_of(cf_pv_at(pg, 0));
    e->desc = str_of(cf_pv_at(pg, 1));
    if (!e->group) /* no process_group pair: the numeric pg_id names the group */
        e->group = cf_asprintf("%lld", (long long)e->pg_id);
    e->profiling_name = str_of(cf_pv_get(v, "profiling_name"));
    const char *pn = e->profiling_name ? e->profiling_name : "?";
    const char *colon = strrchr(pn, ':');
    const char *op = colon ? colon + 1 : pn;
    e->op = cf_strndup(op, strcspn(op, " "));
    /* is_p2p arrived late; before it, the op name says it */
    int64_t p2p = int_of(cf_pv_get(v, "is_p2p"), -1);
    e->is_p2p = p2p >= 0 ? (int)p2p : (!strcmp(e->op, "send") || !strcmp(e->op, "recv"));
    e->seq = int_of(cf_pv_get(v, e->is_p2p ? "p2p_seq_id" : "collective_seq_id"), -1);
    if (e->seq < 0)
        e->seq = int_of(cf_pv_get(v, "seq_id"), -1);
    e->state = str_of(cf_pv_get(v, "state"));
    e->retired = (int)int_of(cf_pv_get(v, "retired"), -1);
    const struct cf_pv *in = cf_pv_get(v, "input_sizes"), *out = cf_pv_get(v, "output_sizes");
    e->in_sizes = repr_of(in);
    e->out_sizes = repr_of(out);
    e->in_numel = in ? numel_of(in) : -1;
    e->out_numel = out ? numel_of(out) : -1;
    e->in_dtypes = names_of(cf_pv_get(v, "input_dtypes"));
    e->out_dtypes = names_of(cf_pv_get(v, "output_dtypes"));
    e->time_created_ns = int_of(cf_pv_get(v, "time_created_ns"), 0);
    const struct cf_pv *dur = cf_pv_get(v, "duration_ms");
    e->duration_ms = dur && dur->kind == CF_PV_FLOAT ? dur->u.f : dur && dur->kind == CF_PV_INT ? (double)dur->u.i : -1;
    read_frames(cf_pv_get(v, "frames"), e);
}

/* "[0, 1]" (as torch writes it) or a list of ints; -1 when neither */
static int parse_ranks(const struct cf_pv *v, int **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (v && (v->kind == CF_PV_LIST || v->kind == CF_PV_TUPLE)) {
        *out = cf_xcalloc(cf_pv_len(v) + 1, sizeof **out);
        for (size_t i = 0; i < cf_pv_len(v); i++) {
            int64_t r;
            if (cf_pv_int(cf_pv_at(v, i), &r) < 0 || r < 0 || r >= CF_HANG_RANKS_MAX)
                return free(*out), *out = NULL, -1;
            (*out)[(*n)++] = (int)r;
        }
        return 0;
    }
    const char *s = cf_pv_str(v);
    if (!s)
        return -1;
    size_t cap = 16;
    *out = cf_xcalloc(cap, sizeof **out);
    const char *p = s;
    while (*p == ' ' || *p == '[')
        p++;
    while (*p && *p != ']') {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p || r < 0 || r >= CF_HANG_RANKS_MAX)
            return free(*out), *out = NULL, *n = 0, -1;
        if (*n == cap)
            *out = cf_xrealloc(*out, (cap *= 2) * sizeof **out);
        (*out)[(*n)++] = (int)r;
        p = end;
        while (*p == ' ' || *p == ',')
            p++;
    }
    return 0;
}

static void read_config(const struct cf_pv *cfg, struct cf_hang_dump *d)
{
    if (!cfg || cfg->kind != CF_PV_DICT)
        return;
    d->config = cf_xcalloc(cfg->u.dict.n + 1, sizeof *d->config);
    for (size_t i = 0; i < cfg->u.dict.n; i++) {
        struct cf_hang_pg_config *c = &d->config[d->n_config];
        const struct cf_pv *v = cfg->u.dict.v[i];
        c->key = str_of(cfg->u.dict.k[i]);
        if (!c->key)
            c->key = repr_of(cfg->u.dict.k[i]);
        c->name = str_of(cf_pv_get(v, "name"));
        c->desc = str_of(cf_pv_get(v, "desc"));
        parse_ranks(cf_pv_get(v, "ranks"), &c->ranks, &c->n_ranks);
        d->n_config++;
    }
}

/* pg_status is keyed by the process's own pg_id: the group's name is the one
 * the entries give that pg_id; a key no entry names is left out */
static char *status_group(const struct cf_hang_dump *d, const char *key)
{
    char *end;
    long long id = strtoll(key, &end, 10);
    if (!*key || *end)
        return NULL;
    for (size_t i = 0; i < d->n_entries; i++)
        if (d->entries[i].pg_id == id)
            return cf_strdup(d->entries[i].group);
    return NULL;
}

static void read_status(const struct cf_pv *st, struct cf_hang_dump *d)
{
    if (!st || st->kind != CF_PV_DICT)
        return;
    d->status = cf_xcalloc(st->u.dict.n + 1, sizeof *d->status);
    for (size_t i = 0; i < st->u.dict.n; i++) {
        struct cf_hang_pg_status *s = &d->status[d->n_status];
        const struct cf_pv *v = st->u.dict.v[i];
        char *key = str_of(st->u.dict.k[i]);
        if (!key)
            key = repr_of(st->u.dict.k[i]);
        s->group = status_group(d, key);
        free(key);
        if (!s->group)
            continue;
        s->last_enqueued = int_of(cf_pv_get(v, "last_enqueued_collective"), -1);
        s->last_started = int_of(cf_pv_get(v, "last_started_collective"), -1);
        s->last_completed = int_of(cf_pv_get(v, "last_completed_collective"), -1);
        d->n_status++;
    }
}

static void read_root(const struct cf_pv *root, struct cf_hang_dump *d)
{
    if (!root || root->kind != CF_PV_DICT) {
        d->refused = cf_strdup("not a Flight Recorder dump (its top level is not a dict)");
        return;
    }
    const struct cf_pv *entries = cf_pv_get(root, "entries");
    const struct cf_pv *version = cf_pv_get(root, "version");
    if (!version && !entries) {
        d->refused = cf_strdup("not a Flight Recorder dump (neither \"version\" nor \"entries\")");
        return;
    }
    d->version = str_of(version);
    for (size_t i = 0; d->version && i < sizeof known_versions / sizeof *known_versions; i++)
        d->version_known |= !strcmp(d->version, known_versions[i]);
    if (d->rank < 0) {
        int64_t rank = int_of(cf_pv_get(root, "rank"), -1);
        d->rank = rank >= 0 && rank < CF_HANG_RANKS_MAX ? (int)rank : -1;
    }
    size_t n = cf_pv_len(entries);
    d->entries = cf_xcalloc(n + 1, sizeof *d->entries);
    d->first_record_id = -1;
    for (size_t i = 0; i < n; i++) {
        const struct cf_pv *v = cf_pv_at(entries, i);
        if (!v || v->kind != CF_PV_DICT)
            continue;
        struct cf_hang_entry *e = &d->entries[d->n_entries++];
        read_entry(v, e);
        if (e->record_id >= 0 && (d->first_record_id < 0 || e->record_id < d->first_record_id))
            d->first_record_id = e->record_id;
    }
    if (d->first_record_id < 0)
        d->first_record_id = 0;
    d->n_recorded = d->n_entries;
    read_config(cf_pv_get(root, "pg_config"), d);
    read_status(cf_pv_get(root, "pg_status"), d);
}

void cf_hang_read_dump(const void *data, size_t len, struct cf_hang_dump *d)
{
    const unsigned char *b = data;
    size_t i = 0;
    while (i < len && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r'))
        i++;
    struct cf_pvdoc *doc = NULL;
    cf_error err = CF_ERROR_INIT;
    int rc;
    if (len >= 2 && b[0] == 0x80) {
        d->format = cf_strdup("pickle");
        rc = cf_pickle_read(data, len, NULL, &doc, &err);
    } else if (i < len && b[i] == '{') {
        d->format = cf_strdup("json");
        rc = cf_pv_from_json(data, len, NULL, &doc, &err);
    } else {
        d->refused = cf_strdup(len ? "neither a pickle (no PROTO byte) nor JSON" : "empty");
        return;
    }
    if (rc < 0) {
        d->refused = cf_strdup(cf_error_message(&err));
        cf_error_clear(&err);
        return;
    }
    read_root(cf_pvdoc_root(doc), d);
    cf_pvdoc_free(doc);
}
