/* The line protocol a supervised rank speaks to its supervisor: one record a line,
 * "@cclforge-smoke<TAB>TYPE<TAB>key=value<TAB>...", values escaped (\t \n \\), so
 * records survive being merged with a library's own output (mpirun's stdout). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "smoke/smoke_internal.h"

int cf_smoke_write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

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

static void add_kv(struct strbuf *sb, const char *key, const char *value)
{
    cf_sb_addf(sb, "\t%s=", key);
    add_escaped(sb, value);
}

void cf_smoke_record_encode(struct strbuf *line, enum smoke_record_type type, const struct cf_smoke_event *ev,
                         const char *doing, int waits)
{
    cf_sb_addf(line, "%s%c\trank=%d\tlocal=%d\tt=%.6f", SMOKE_RECORD_PREFIX, (char)type, ev->rank, ev->local_rank,
            cf_now_seconds());
    if (type == REC_RESULT) {
        const struct cf_smoke_row *r = &ev->row;
        cf_sb_addf(line, "\top=%d\tdtype=%d\tin_place=%d\tbytes=%zu\tcount=%zu\ttime_us=%.17g\talgbw=%.17g"
                      "\tbusbw=%.17g\twrong=%ld\tok=%d\twrong_all=%ld",
                (int)r->op, (int)r->dtype, r->in_place, r->bytes, r->count, r->time_us, r->algbw, r->busbw,
                r->wrong, r->ok, ev->wrong_all_ranks);
    }
    if (ev->key)
        add_kv(line, "key", ev->key);
    if (ev->value)
        add_kv(line, "value", ev->value);
    if (ev->text)
        add_kv(line, "text", ev->text);
    if (doing)
        add_kv(line, "doing", doing);
    if (waits)
        cf_sb_adds(line, "\twaits=1");
    cf_sb_addc(line, '\n');
}

static void unescape_into(struct strbuf *sb, const char *s, size_t n)
{
    static const struct { char code, c; } escapes[] = { { 't', '\t' }, { 'n', '\n' }, { 'r', '\r' }, { '\\', '\\' } };
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            char c = s[i + 1];
            for (size_t k = 0; k < sizeof escapes / sizeof escapes[0]; k++)
                if (escapes[k].code == c) {
                    cf_sb_addc(sb, escapes[k].c);
                    i++;
                    goto next;
                }
        }
        cf_sb_addc(sb, s[i]);
    next:;
    }
}

static int parse_long(const char *s, size_t n, long *out)
{
    char tmp[32];
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    errno = 0;
    long v = strtol(tmp, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, size_t n, double *out)
{
    char tmp[64];
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    double v = strtod(tmp, &end);
    if (*end)
        return -1;
    *out = v;
    return 0;
}

/* Assigns one key=value to the record; unknown keys are ignored (forward compatible). */
static int set_field(struct smoke_record *rec, const char *k, size_t klen, const char *v, size_t vlen)
{
    struct cf_smoke_event *ev = &rec->ev;
    struct cf_smoke_row *row = &ev->row;
    long l = 0;
    double d = 0;
#define KEY(name) (klen == sizeof(name) - 1 && !memcmp(k, name, klen))
    if (KEY("rank")) {
        if (parse_long(v, vlen, &l))
            return -1;
        ev->rank = (int)l;
    } else if (KEY("local")) {
        if (parse_long(v, vlen, &l))
            return -1;
        ev->local_rank = (int)l;
    } else if (KEY("op")) {
        if (parse_long(v, vlen, &l) || l < 0 || l >= CF_OP_COUNT)
            return -1;
        row->op = (enum cf_smoke_op)l;
    } else if (KEY("dtype")) {
        if (parse_long(v, vlen, &l) || l < 0 || l >= CF_DT_COUNT)
            return -1;
        row->dtype = (enum cf_smoke_dtype)l;
    } else if (KEY("in_place")) {
        if (parse_long(v, vlen, &l))
            return -1;
        row->in_place = l != 0;
    } else if (KEY("bytes") || KEY("count")) {
        if (parse_long(v, vlen, &l) || l < 0)
            return -1;
        if (KEY("bytes"))
            row->bytes = (size_t)l;
        else
            row->count = (size_t)l;
    } else if (KEY("time_us") || KEY("algbw") || KEY("busbw")) {
        if (parse_double(v, vlen, &d))
            return -1;
        if (KEY("time_us"))
            row->time_us = d;
        else if (KEY("algbw"))
            row->algbw = d;
        else
            row->busbw = d;
    } else if (KEY("wrong")) {
        if (parse_long(v, vlen, &l))
            return -1;
        row->wrong = l;
    } else if (KEY("wrong_all")) {
        if (parse_long(v, vlen, &l))
            return -1;
        ev->wrong_all_ranks = l;
    } else if (KEY("t")) {
        if (parse_double(v, vlen, &d))
            return -1;
        ev->t = d;
    } else if (KEY("ok")) {
        if (parse_long(v, vlen, &l))
            return -1;
        row->ok = l != 0;
    } else if (KEY("waits")) {
        rec->waits = vlen == 1 && v[0] == '1';
    } else if (KEY("key")) {
        unescape_into(&rec->key, v, vlen);
    } else if (KEY("value")) {
        unescape_into(&rec->value, v, vlen);
    } else if (KEY("text") || KEY("doing")) {
        /* a BEGIN record carries its description as "doing"; both land in text */
        unescape_into(&rec->text, v, vlen);
    }
#undef KEY
    return 0;
}

int cf_smoke_record_decode(const char *line, struct smoke_record *rec)
{
    static const char types[] = { REC_BEGIN, REC_RESULT, REC_INFO, REC_FAIL, REC_DONE };
    const char *p = strstr(line, SMOKE_RECORD_PREFIX);
    if (!p)
        return 0;
    p += strlen(SMOKE_RECORD_PREFIX);
    memset(&rec->ev, 0, sizeof rec->ev);
    cf_sb_reset(&rec->text);
    cf_sb_reset(&rec->key);
    cf_sb_reset(&rec->value);
    rec->ev.rank = -1;
    rec->waits = 0;
    if (!*p || (p[1] && p[1] != '\t') || !memchr(types, *p, sizeof types))
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
        if (klen == 4 && !memcmp(p, "rank", 4))
            have_rank = 1;
        if (set_field(rec, p, klen, eq + 1, n - klen - 1))
            return -1;
        p += n;
    }
    if (*p || !have_rank)
        return -1;
    static const enum cf_smoke_event_kind kinds[] = {
        ['B'] = CF_EV_INFO, ['R'] = CF_EV_RESULT, ['I'] = CF_EV_INFO, ['F'] = CF_EV_FAIL, ['D'] = CF_EV_INFO,
    };
    rec->ev.kind = kinds[(unsigned char)rec->type];
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
}

/* ---- the record sink ---- */

static void emit(struct smoke_sink *s, enum smoke_record_type type, const struct cf_smoke_event *ev,
                 const char *doing, int waits)
{
    struct strbuf line = STRBUF_INIT;
    cf_smoke_record_encode(&line, type, ev, doing, waits);
    /* one write per record: a pipe keeps writes up to PIPE_BUF whole */
    cf_smoke_write_all(*(int *)s->ctx, line.buf, line.len);
    cf_sb_release(&line);
}

static void record_begin(struct smoke_sink *s, const char *doing, int waits)
{
    struct cf_smoke_event ev = { .kind = CF_EV_INFO, .rank = s->rank, .local_rank = s->local_rank };
    emit(s, REC_BEGIN, &ev, doing, waits);
}

static void record_event(struct smoke_sink *s, const struct cf_smoke_event *ev)
{
    static const enum smoke_record_type types[] = {
        [CF_EV_RESULT] = REC_RESULT, [CF_EV_INFO] = REC_INFO, [CF_EV_LOG] = REC_INFO, [CF_EV_FAIL] = REC_FAIL,
    };
    emit(s, types[ev->kind], ev, NULL, 0);
}

void cf_smoke_record_sink(struct smoke_sink *s, int *fd, int rank, int local_rank)
{
    s->begin = record_begin;
    s->event = record_event;
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

void cf_smoke_sink_info(struct smoke_sink *s, const char *key, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&sb, fmt, ap);
    va_end(ap);
    struct cf_smoke_event ev = { .kind = CF_EV_INFO, .rank = s->rank, .local_rank = s->local_rank };
    ev.key = key;
    ev.value = cf_sb_str(&sb);
    s->event(s, &ev);
    cf_sb_release(&sb);
}
