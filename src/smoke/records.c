/* The line protocol a supervised rank speaks to its supervisor: one record a line,
 * "@cclforge-smoke<TAB>TYPE<TAB>key=value<TAB>...", values escaped (\t \n \r \\).
 * One table says which fields each record type carries and where they live, for
 * encoding and decoding alike; unknown keys are ignored (forward compatible). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/clock.h"
#include "smoke/smoke_internal.h"

#define MAX_LIST (1 << 20)

enum field_kind { F_INT, F_LONG, F_SIZE, F_DBL, F_TEXT, F_KEY, F_VALUE, F_CHARS, F_TIMES, F_RANKS, F_WAITS };
struct field {
    const char *name;
    const char *types; /* the record types that carry it */
    enum field_kind kind;
    size_t offset;     /* in struct cf_smoke_event */
    size_t cap;        /* F_CHARS: the array's size */
    long min, max;     /* F_INT / F_LONG: the accepted range */
};

#define EV(m) offsetof(struct cf_smoke_event, m)
#define ALL "BRIFDHPTGVL"
static const struct field fields[] = {
    { "rank", ALL, F_INT, EV(rank), 0, -1, 1 << 24 },
    { "local", ALL, F_INT, EV(local_rank), 0, -1, 1 << 24 },
    { "t", ALL, F_DBL, EV(t), 0, 0, 0 },
    { "op", "R", F_INT, EV(row.op), 0, 0, CF_OP_COUNT - 1 },
    { "dtype", "R", F_INT, EV(row.dtype), 0, 0, CF_DT_COUNT - 1 },
    { "redop", "R", F_INT, EV(row.redop), 0, 0, CF_RED_COUNT },
    { "root", "R", F_INT, EV(row.root), 0, -1, 1 << 24 },
    { "in_place", "R", F_INT, EV(row.in_place), 0, 0, 1 },
    { "bytes", "R", F_SIZE, EV(row.bytes), 0, 0, 0 },
    { "count", "R", F_SIZE, EV(row.count), 0, 0, 0 },
    { "time_us", "R", F_DBL, EV(row.time_us), 0, 0, 0 },
    { "algbw", "R", F_DBL, EV(row.algbw), 0, 0, 0 },
    { "busbw", "R", F_DBL, EV(row.busbw), 0, 0, 0 },
    { "wrong", "R", F_LONG, EV(row.wrong), 0, -1, LONG_MAX },
    { "ok", "R", F_INT, EV(row.ok), 0, 0, 1 },
    { "group", "R", F_INT, EV(row.group), 0, 0, 1 << 24 },
    { "nranks", "R", F_INT, EV(row.nranks), 0, 0, 1 << 24 },
    { "slowest", "R", F_INT, EV(row.slowest_rank), 0, -1, 1 << 24 },
    { "slowest_us", "R", F_DBL, EV(row.slowest_us), 0, 0, 0 },
    { "median_us", "R", F_DBL, EV(row.median_us), 0, 0, 0 },
    { "own_wrong", "R", F_LONG, EV(own_wrong), 0, -1, LONG_MAX },
    { "own_time_us", "R", F_DBL, EV(own_time_us), 0, 0, 0 },
    { "leader", "R", F_INT, EV(leader), 0, 0, 1 },
    { "iters", "R", F_INT, EV(row.iters), 0, 0, 1 << 30 },
    { "samples", "R", F_INT, EV(row.samples), 0, 0, 1 << 24 },
    { "bw_median", "R", F_DBL, EV(row.busbw_median), 0, 0, 0 },
    { "bw_spread", "R", F_DBL, EV(row.busbw_spread), 0, 0, 0 },
    { "times", "R", F_TIMES, 0, 0, 0, 0 },
    { "ranks", "R", F_RANKS, 0, 0, 0, 0 },
    { "c_rank", "T", F_INT, EV(conn.rank), 0, 0, 1 << 24 },
    { "c_peer", "T", F_INT, EV(conn.peer), 0, 0, 1 << 24 },
    { "c_kind", "T", F_CHARS, EV(conn.kind), sizeof(((struct cf_smoke_transport_conn *)0)->kind), 0, 0 },
    { "c_via", "T", F_CHARS, EV(conn.via), sizeof(((struct cf_smoke_transport_conn *)0)->via), 0, 0 },
    { "c_channels", "T", F_INT, EV(conn.channels), 0, 0, 1 << 24 },
    { "g_id", "G", F_INT, EV(group.id), 0, 0, 1 << 24 },
    { "g_round", "G", F_INT, EV(group.round), 0, 0, 1 << 24 },
    { "g_label", "G", F_CHARS, EV(group.label), sizeof(((struct cf_smoke_group *)0)->label), 0, 0 },
    { "g_nranks", "G", F_INT, EV(group.nranks), 0, 0, 1 << 24 },
    { "g_nhosts", "G", F_INT, EV(group.nhosts), 0, 0, 1 << 24 },
    { "g_busbw", "G", F_DBL, EV(group.avg_busbw), 0, 0, 0 },
    { "g_tests", "G", F_LONG, EV(group.tests), 0, 0, LONG_MAX },
    { "g_failed", "G", F_LONG, EV(group.failed), 0, 0, LONG_MAX },
    { "g_median", "G", F_DBL, EV(group.busbw_median), 0, 0, 0 },
    { "g_spread", "G", F_DBL, EV(group.busbw_spread), 0, 0, 0 },
    { "g_bad", "G", F_INT, EV(group.bad), 0, 0, 1 },
    { "g_concl", "G", F_INT, EV(group.conclusive), 0, 0, 1 },
    { "g_why", "G", F_CHARS, EV(group.why), sizeof(((struct cf_smoke_group *)0)->why), 0, 0 },
    { "key", "I", F_KEY, 0, 0, 0, 0 },
    { "value", "I", F_VALUE, 0, 0, 0, 0 },
    { "waits", "B", F_WAITS, 0, 0, 0, 0 },
    { "text", "BRFPVL", F_TEXT, 0, 0, 0, 0 },
};
#undef EV

static void add_escaped(struct strbuf *sb, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '\t': cf_sb_adds(sb, "\\t"); break;
        case '\n': cf_sb_adds(sb, "\\n"); break;
        case '\r': cf_sb_adds(sb, "\\r"); break;
        case '\\': cf_sb_adds(sb, "\\\\"); break;
        default: cf_sb_addc(sb, *s);
        }
    }
}

static void unescape_into(struct strbuf *sb, const char *s, size_t n)
{
    static const struct { char code, c; } escapes[] = { { 't', '\t' }, { 'n', '\n' }, { 'r', '\r' }, { '\\', '\\' } };
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < n) {
            for (size_t k = 0; k < sizeof escapes / sizeof escapes[0]; k++)
                if (escapes[k].code == s[i + 1]) {
                    c = escapes[k].c;
                    i++;
                    break;
                }
        }
        cf_sb_addc(sb, c);
    }
}

static void encode_field(struct strbuf *line, const struct field *f, const struct cf_smoke_event *ev, int waits)
{
    const void *at = (const char *)ev + f->offset;
    const char *s = NULL;
    switch (f->kind) {
    case F_WAITS:
        if (waits)
            cf_sb_addf(line, "\t%s=1", f->name);
        return;
    case F_INT: cf_sb_addf(line, "\t%s=%d", f->name, *(const int *)at); return;
    case F_LONG: cf_sb_addf(line, "\t%s=%ld", f->name, *(const long *)at); return;
    case F_SIZE: cf_sb_addf(line, "\t%s=%zu", f->name, *(const size_t *)at); return;
    case F_DBL: cf_sb_addf(line, "\t%s=%.17g", f->name, *(const double *)at); return;
    case F_CHARS: s = (const char *)at; break;
    case F_TEXT: s = ev->text; break;
    case F_KEY: s = ev->key; break;
    case F_VALUE: s = ev->value; break;
    case F_TIMES:
    case F_RANKS:
        if (ev->row.nranks <= 0 || !(f->kind == F_TIMES ? (const void *)ev->row.rank_time_us : (const void *)ev->row.rank_of))
            return;
        cf_sb_addf(line, "\t%s=", f->name);
        for (int i = 0; i < ev->row.nranks; i++) {
            if (f->kind == F_TIMES)
                cf_sb_addf(line, "%s%.17g", i ? "," : "", ev->row.rank_time_us[i]);
            else
                cf_sb_addf(line, "%s%d", i ? "," : "", ev->row.rank_of[i]);
        }
        return;
    }
    if (!s)
        return;
    cf_sb_addf(line, "\t%s=", f->name);
    add_escaped(line, s);
}

void cf_smoke_record_encode(struct strbuf *line, enum smoke_record_type type, const struct cf_smoke_event *ev,
                            int waits)
{
    cf_sb_addf(line, "%s%c", SMOKE_RECORD_PREFIX, (char)type);
    struct cf_smoke_event stamped = *ev;
    stamped.t = cf_now_seconds();
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strchr(fields[i].types, (char)type))
            encode_field(line, &fields[i], &stamped, waits);
    cf_sb_addc(line, '\n');
}

static int parse_number(const char *s, size_t n, int is_double, long *l, double *d, size_t *z)
{
    char tmp[64];
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    errno = 0;
    if (is_double == 1)
        *d = strtod(tmp, &end);
    else if (is_double == 2)
        *z = (size_t)strtoull(tmp, &end, 10);
    else
        *l = strtol(tmp, &end, 10);
    return *end || errno || (is_double == 2 && tmp[0] == '-') ? -1 : 0;
}

/* "1.5,2,3": a list of numbers, at most MAX_LIST */
static int parse_list(const char *s, size_t n, int doubles, void **out, size_t *count)
{
    size_t cap = 0, k = 0;
    double *dv = NULL;
    int *iv = NULL;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ',')
            j++;
        long l = 0;
        double d = 0;
        size_t z = 0;
        if (k >= MAX_LIST || parse_number(s + i, j - i, doubles, &l, &d, &z) < 0 ||
            (!doubles && (l < -1 || l > 1 << 24))) {
            free(dv);
            free(iv);
            return -1;
        }
        if (k == cap) {
            cap = cap ? cap * 2 : 16;
            if (doubles)
                dv = cf_xrealloc(dv, cap * sizeof *dv);
            else
                iv = cf_xrealloc(iv, cap * sizeof *iv);
        }
        if (doubles)
            dv[k++] = d;
        else
            iv[k++] = (int)l;
        i = j + 1;
    }
    *out = doubles ? (void *)dv : (void *)iv;
    *count = k;
    return 0;
}

static int set_field(struct smoke_record *rec, const struct field *f, const char *v, size_t n)
{
    char *at = (char *)&rec->ev + f->offset;
    long l = 0;
    double d = 0;
    size_t z = 0;
    switch (f->kind) {
    case F_WAITS:
        rec->waits = n == 1 && v[0] == '1';
        return 0;
    case F_INT:
    case F_LONG:
        if (parse_number(v, n, 0, &l, &d, &z) < 0 || l < f->min || l > f->max)
            return -1;
        if (f->kind == F_INT)
            *(int *)at = (int)l;
        else
            *(long *)at = l;
        return 0;
    case F_SIZE:
        if (parse_number(v, n, 2, &l, &d, &z) < 0)
            return -1;
        *(size_t *)at = z;
        return 0;
    case F_DBL:
        if (parse_number(v, n, 1, &l, &d, &z) < 0)
            return -1;
        *(double *)at = d;
        return 0;
    case F_CHARS: {
        struct strbuf sb = STRBUF_INIT;
        unescape_into(&sb, v, n);
        size_t k = sb.len < f->cap - 1 ? sb.len : f->cap - 1;
        memcpy(at, cf_sb_str(&sb), k);
        at[k] = 0;
        cf_sb_release(&sb);
        return 0;
    }
    case F_TEXT: cf_sb_reset(&rec->text); unescape_into(&rec->text, v, n); return 0;
    case F_KEY: cf_sb_reset(&rec->key); unescape_into(&rec->key, v, n); return 0;
    case F_VALUE: cf_sb_reset(&rec->value); unescape_into(&rec->value, v, n); return 0;
    case F_TIMES:
        free(rec->times);
        rec->times = NULL;
        return parse_list(v, n, 1, (void **)&rec->times, &rec->ntimes);
    case F_RANKS:
        free(rec->ranks);
        rec->ranks = NULL;
        return parse_list(v, n, 0, (void **)&rec->ranks, &rec->nranks_list);
    }
    return -1;
}

enum smoke_record_type cf_smoke_record_type_for(enum cf_smoke_event_kind kind)
{
    static const enum smoke_record_type types[] = {
        [CF_EV_RESULT] = REC_RESULT, [CF_EV_INFO] = REC_INFO, [CF_EV_LOG] = REC_LOG, [CF_EV_FAIL] = REC_FAIL,
        [CF_EV_PROBLEM] = REC_PROBLEM, [CF_EV_TRANSPORT] = REC_TRANSPORT, [CF_EV_GROUP] = REC_GROUP,
        [CF_EV_VERDICT] = REC_VERDICT,
    };
    return (unsigned)kind < sizeof types / sizeof types[0] ? types[kind] : REC_INFO;
}

static enum cf_smoke_event_kind kind_of(enum smoke_record_type t)
{
    switch (t) {
    case REC_RESULT: return CF_EV_RESULT;
    case REC_FAIL: return CF_EV_FAIL;
    case REC_PROBLEM: return CF_EV_PROBLEM;
    case REC_TRANSPORT: return CF_EV_TRANSPORT;
    case REC_GROUP: return CF_EV_GROUP;
    case REC_VERDICT: return CF_EV_VERDICT;
    case REC_LOG: return CF_EV_LOG;
    default: return CF_EV_INFO;
    }
}

int cf_smoke_record_decode(const char *line, struct smoke_record *rec)
{
    static const char types[] = ALL;
    const char *p = strstr(line, SMOKE_RECORD_PREFIX);
    if (!p)
        return 0;
    p += strlen(SMOKE_RECORD_PREFIX);
    memset(&rec->ev, 0, sizeof rec->ev);
    cf_sb_reset(&rec->text);
    cf_sb_reset(&rec->key);
    cf_sb_reset(&rec->value);
    free(rec->times);
    free(rec->ranks);
    rec->times = NULL;
    rec->ranks = NULL;
    rec->ntimes = rec->nranks_list = 0;
    rec->ev.rank = -1;
    rec->ev.row.slowest_rank = -1;
    rec->waits = 0;
    if (!*p || (p[1] && p[1] != '\t') || !memchr(types, *p, sizeof types - 1))
        return -1;
    rec->type = (enum smoke_record_type)*p;
    p++;
    int have_rank = 0;
    while (*p == '\t') {
        p++;
        const char *end = strchr(p, '\t');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (!eq)
            return -1;
        size_t klen = (size_t)(eq - p);
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
            const struct field *f = &fields[i];
            if (strlen(f->name) != klen || memcmp(p, f->name, klen) || !strchr(f->types, (char)rec->type))
                continue;
            if (set_field(rec, f, eq + 1, n - klen - 1) < 0)
                return -1;
            have_rank |= i == 0;
        }
        p += n;
    }
    if (*p || !have_rank)
        return -1;
    /* per-rank lists belong to the row: as many as its ranks, or none */
    if ((rec->times && rec->ntimes != (size_t)rec->ev.row.nranks) ||
        (rec->ranks && rec->nranks_list != (size_t)rec->ev.row.nranks))
        return -1;
    rec->ev.kind = kind_of(rec->type);
    rec->ev.row.rank_time_us = rec->times;
    rec->ev.row.rank_of = rec->ranks;
    rec->ev.text = rec->text.len ? cf_sb_str(&rec->text) : NULL;
    rec->ev.key = rec->key.len ? cf_sb_str(&rec->key) : NULL;
    rec->ev.value = rec->value.len ? cf_sb_str(&rec->value) : NULL;
    return 1;
}

void cf_smoke_record_release(struct smoke_record *rec)
{
    cf_sb_release(&rec->text);
    cf_sb_release(&rec->key);
    cf_sb_release(&rec->value);
    free(rec->times);
    free(rec->ranks);
    rec->times = NULL;
    rec->ranks = NULL;
}

/* ---- the record sink ---- */

static void emit(struct smoke_sink *s, enum smoke_record_type type, const struct cf_smoke_event *ev, int waits)
{
    struct strbuf line = STRBUF_INIT;
    cf_smoke_record_encode(&line, type, ev, waits);
    /* one write per record: on a socket, a record is never split by another writer */
    cf_write_all(*(int *)s->ctx, line.buf, line.len);
    cf_sb_release(&line);
}

static void record_begin(struct smoke_sink *s, const char *doing, int waits)
{
    struct cf_smoke_event ev = { .kind = CF_EV_INFO, .rank = s->rank, .local_rank = s->local_rank, .text = doing };
    emit(s, REC_BEGIN, &ev, waits);
}

static void record_event(struct smoke_sink *s, const struct cf_smoke_event *ev)
{
    emit(s, cf_smoke_record_type_for(ev->kind), ev, 0);
}

static void record_progress(struct smoke_sink *s)
{
    struct cf_smoke_event ev = { .kind = CF_EV_INFO, .rank = s->rank, .local_rank = s->local_rank };
    emit(s, REC_PROGRESS, &ev, 0);
}

void cf_smoke_record_sink(struct smoke_sink *s, int *fd, int rank, int local_rank)
{
    memset(s, 0, sizeof *s);
    s->begin = record_begin;
    s->event = record_event;
    s->progress = record_progress;
    s->ctx = fd;
    s->rank = rank;
    s->local_rank = local_rank;
}

void cf_smoke_sink_begin(struct smoke_sink *s, int waits, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&sb, fmt, ap);
    va_end(ap);
    s->begin(s, cf_sb_str(&sb), waits);
    cf_sb_release(&sb);
}

/* an event of this rank whose text (or, with a key, value) is the formatted string */
static void sink_formatted(struct smoke_sink *s, enum cf_smoke_event_kind kind, const char *key, const char *fmt,
                           va_list ap) __attribute__((format(printf, 4, 0)));
static void sink_formatted(struct smoke_sink *s, enum cf_smoke_event_kind kind, const char *key, const char *fmt,
                           va_list ap)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addvf(&sb, fmt, ap);
    struct cf_smoke_event ev = { .kind = kind, .rank = s->rank, .local_rank = s->local_rank };
    ev.key = key;
    if (key)
        ev.value = cf_sb_str(&sb);
    else
        ev.text = cf_sb_str(&sb);
    s->event(s, &ev);
    cf_sb_release(&sb);
}

void cf_smoke_sink_info(struct smoke_sink *s, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sink_formatted(s, CF_EV_INFO, key, fmt, ap);
    va_end(ap);
}

void cf_smoke_sink_text(struct smoke_sink *s, enum cf_smoke_event_kind kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sink_formatted(s, kind, NULL, fmt, ap);
    va_end(ap);
}

void cf_smoke_sink_progress(void *sink)
{
    struct smoke_sink *s = sink;
    double now = cf_now_seconds();
    if (now - s->last_progress < SMOKE_PROGRESS_S)
        return;
    s->last_progress = now;
    if (s->progress)
        s->progress(s);
}
