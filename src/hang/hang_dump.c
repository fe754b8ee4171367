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

/* numbers a document carries exactly (a JSON double): a counter, an id */
#define COUNTER_MAX (INT64_C(1) << 52)

static int64_t counter(int64_t x)
{
    return x >= 0 && x <= COUNTER_MAX ? x : -1;
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

static const char *pooled(struct cf_hang_result *r, const char *s)
{
    return s ? cf_hang_intern(r, s, strlen(s)) : NULL;
}

/* the pool's copy of what sb holds, sb emptied for the next use */
static const char *pooled_sb(struct cf_hang_result *r, struct strbuf *sb)
{
    const char *s = sb->len ? cf_hang_intern(r, sb->buf, sb->len) : NULL;
    cf_sb_reset(sb);
    return s;
}

/* a whole number in decimal, without printf's machinery (a million entries) */
static void add_int(struct strbuf *sb, int64_t x)
{
    char buf[24];
    size_t i = sizeof buf;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do
        buf[--i] = (char)('0' + u % 10);
    while ((u /= 10) && i > 1);
    if (x < 0)
        buf[--i] = '-';
    cf_sb_add(sb, buf + i, sizeof buf - i);
}

/* a value written back as Python would print it: sizes "[[4, 2]]" */
static void repr(const struct cf_pv *v, struct strbuf *out, int depth)
{
    if (!v || depth > 8) {
        cf_sb_adds(out, "?");
        return;
    }
    switch (v->kind) {
    case CF_PV_INT: add_int(out, v->u.i); break;
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

static const char *repr_pooled(struct cf_hang_result *r, const struct cf_pv *v, struct strbuf *scratch)
{
    if (!v)
        return NULL;
    repr(v, scratch, 0);
    return scratch->len ? pooled_sb(r, scratch) : cf_hang_intern(r, "", 0);
}

/* the dtypes as "Float,Float" (a list of names) */
static const char *names_of(struct cf_hang_result *r, const struct cf_pv *v, struct strbuf *sb)
{
    if (!v)
        return NULL;
    for (size_t i = 0; i < cf_pv_len(v); i++) {
        const char *s = cf_pv_str(cf_pv_at(v, i));
        if (i)
            cf_sb_addc(sb, ',');
        cf_sb_adds(sb, s ? s : "?");
    }
    return sb->len ? pooled_sb(r, sb) : cf_hang_intern(r, "", 0);
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

static void read_frames(struct cf_hang_result *r, const struct cf_pv *frames, struct cf_hang_entry *e,
                        struct strbuf *scratch)
{
    struct strbuf *stack = scratch;
    for (size_t i = 0; i < cf_pv_len(frames) && i < 64; i++) {
        const struct cf_pv *f = cf_pv_at(frames, i);
        const char *file = cf_pv_str(cf_pv_get(f, "filename"));
        const char *name = cf_pv_str(cf_pv_get(f, "name"));
        int64_t line = int_of(cf_pv_get(f, "line"), -1);
        if (!file)
            continue;
        if (e->where)
            break;
        if (!e->where && !torch_frame(file)) {
            cf_sb_adds(stack, file);
            cf_sb_addc(stack, ':');
            add_int(stack, line);
            cf_sb_adds(stack, " (");
            cf_sb_adds(stack, name ? name : "?");
            cf_sb_addc(stack, ')');
            e->where = pooled_sb(r, stack);
        }
    }
    for (size_t i = 0; i < cf_pv_len(frames) && i < 64; i++) {
        const struct cf_pv *f = cf_pv_at(frames, i);
        const char *file = cf_pv_str(cf_pv_get(f, "filename"));
        const char *name = cf_pv_str(cf_pv_get(f, "name"));
        if (!file)
            continue;
        if (stack->len)
            cf_sb_addc(stack, '\n');
        cf_sb_adds(stack, file);
        cf_sb_addc(stack, ':');
        add_int(stack, int_of(cf_pv_get(f, "line"), -1));
        cf_sb_addc(stack, ' ');
        cf_sb_adds(stack, name ? name : "?");
    }
    e->stack = pooled_sb(r, stack);
}

/* An entry's fields, found in one pass over its keys. A pickle's keys are
 * memo-shared strings, the same pointer in every entry, so the field a key
 * position held last time is tried first. */
enum field { F_RECORD_ID, F_PG, F_PG_ID, F_PROF, F_IS_P2P, F_P2P_SEQ, F_COLL_SEQ, F_SEQ, F_STATE, F_RETIRED,
             F_IN_SIZES, F_OUT_SIZES, F_IN_DTYPES, F_OUT_DTYPES, F_TIME, F_DURATION, F_FRAMES, F_COUNT };
static const char *const field_names[F_COUNT] = {
    "record_id", "process_group", "pg_id", "profiling_name", "is_p2p", "p2p_seq_id", "collective_seq_id",
    "seq_id", "state", "retired", "input_sizes", "output_sizes", "input_dtypes", "output_dtypes",
    "time_created_ns", "duration_ms", "frames",
};
#define KEY_CACHE 32
struct key_cache {
    const char *key[KEY_CACHE];
    int field[KEY_CACHE];
};

static void fields_of(const struct cf_pv *v, struct key_cache *kc, const struct cf_pv *f[F_COUNT])
{
    for (int i = 0; i < F_COUNT; i++)
        f[i] = NULL;
    for (size_t k = 0; k < v->u.dict.n; k++) {
        const char *key = cf_pv_str(v->u.dict.k[k]);
        if (!key)
            continue;
        int which = -1;
        if (k < KEY_CACHE && kc->key[k] == key) {
            which = kc->field[k];
        } else {
            for (int i = 0; i < F_COUNT && which < 0; i++)
                if (!strcmp(key, field_names[i]))
                    which = i;
            if (k < KEY_CACHE) {
                kc->key[k] = key;
                kc->field[k] = which;
            }
        }
        if (which >= 0)
            f[which] = v->u.dict.v[k];
    }
}

static void read_entry(struct cf_hang_result *r, const struct cf_pv *v, struct cf_hang_entry *e,
                       struct strbuf *scratch, struct key_cache *kc)
{
    const struct cf_pv *f[F_COUNT];
    fields_of(v, kc, f);
    e->record_id = counter(int_of(f[F_RECORD_ID], -1));
    const struct cf_pv *pg = f[F_PG];
    e->pg_id = int_of(f[F_PG_ID], -1);
    e->group = pooled(r, cf_pv_str(cf_pv_at(pg, 0)));
    e->desc = pooled(r, cf_pv_str(cf_pv_at(pg, 1)));
    if (!e->group) { /* no process_group pair: the numeric pg_id names the group */
        add_int(scratch, e->pg_id);
        e->group = pooled_sb(r, scratch);
    }
    e->profiling_name = pooled(r, cf_pv_str(f[F_PROF]));
    const char *pn = e->profiling_name ? e->profiling_name : "?";
    const char *colon = strrchr(pn, ':');
    const char *op = colon ? colon + 1 : pn;
    e->op = cf_hang_intern(r, op, strcspn(op, " "));
    /* is_p2p arrived late; before it, the op name says it */
    int64_t p2p = int_of(f[F_IS_P2P], -1);
    e->is_p2p = p2p >= 0 ? (int)p2p : (!strcmp(e->op, "send") || !strcmp(e->op, "recv"));
    e->seq = counter(int_of(f[e->is_p2p ? F_P2P_SEQ : F_COLL_SEQ], -1));
    if (e->seq < 0)
        e->seq = counter(int_of(f[F_SEQ], -1));
    e->state = pooled(r, cf_pv_str(f[F_STATE]));
    e->retired = (int)int_of(f[F_RETIRED], -1);
    const struct cf_pv *in = f[F_IN_SIZES], *out = f[F_OUT_SIZES];
    e->in_sizes = repr_pooled(r, in, scratch);
    e->out_sizes = repr_pooled(r, out, scratch);
    e->in_numel = in ? numel_of(in) : -1;
    e->out_numel = out ? numel_of(out) : -1;
    e->in_dtypes = names_of(r, f[F_IN_DTYPES], scratch);
    e->out_dtypes = names_of(r, f[F_OUT_DTYPES], scratch);
    e->time_created_ns = int_of(f[F_TIME], 0);
    if (e->time_created_ns < 0 || e->time_created_ns > (INT64_C(1) << 62))
        e->time_created_ns = 0;
    const struct cf_pv *dur = f[F_DURATION];
    e->duration_ms = dur && dur->kind == CF_PV_FLOAT ? dur->u.f : dur && dur->kind == CF_PV_INT ? (double)dur->u.i : -1;
    read_frames(r, f[F_FRAMES], e, scratch);
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
        s->last_enqueued = counter(int_of(cf_pv_get(v, "last_enqueued_collective"), -1));
        s->last_started = counter(int_of(cf_pv_get(v, "last_started_collective"), -1));
        s->last_completed = counter(int_of(cf_pv_get(v, "last_completed_collective"), -1));
        d->n_status++;
    }
}

static void read_root(struct cf_hang_result *r, const struct cf_pv *root, struct cf_hang_dump *d)
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
    struct strbuf scratch = STRBUF_INIT;
    struct key_cache kc;
    memset(&kc, 0, sizeof kc);
    for (size_t i = 0; i < n; i++) {
        const struct cf_pv *v = cf_pv_at(entries, i);
        if (!v || v->kind != CF_PV_DICT)
            continue;
        struct cf_hang_entry *e = &d->entries[d->n_entries++];
        read_entry(r, v, e, &scratch, &kc);
        if (e->record_id >= 0 && (d->first_record_id < 0 || e->record_id < d->first_record_id))
            d->first_record_id = e->record_id;
    }
    cf_sb_release(&scratch);
    if (d->first_record_id < 0)
        d->first_record_id = 0;
    d->n_recorded = d->n_entries;
    read_config(cf_pv_get(root, "pg_config"), d);
    read_status(cf_pv_get(root, "pg_status"), d);
}

void cf_hang_read_dump(const void *data, size_t len, struct cf_hang_result *r, struct cf_hang_dump *d)
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
    read_root(r, cf_pvdoc_root(doc), d);
    cf_pvdoc_free(doc);
}
