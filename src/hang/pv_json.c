/* JSON text read into the values the unpickler makes (cf_pv_from_json), so
 * one reader of dumps serves both forms. A direct parse rather than cJSON:
 * torch's JSON carries nanosecond times as integers past 2^53, which a
 * double would round, and the values go straight into the arena. No
 * recursion: open arrays and objects are a stack of their own, bounded by
 * the depth limit. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "hang/pv_doc.h"

/* Longer number tokens are refused rather than copied for strtod. */
#define JSON_NUMBER_MAX 1024

struct json_frame {
    enum cf_pv_kind kind; /* LIST or DICT */
    size_t base;          /* where its values start on the value stack */
};

struct json_reader {
    const char *in;
    size_t len, pos;
    struct cf_pickle_limits lim;
    struct cf_pvdoc *doc;
    cf_error *err;
    struct cf_pv **values; /* finished values of the open containers */
    size_t vn, vcap;
    struct json_frame *frames;
    size_t fn, fcap;
    char *text; /* a string's unescaped bytes */
    size_t text_cap;
    uint32_t *dedup;
    size_t dedup_cap;
    size_t items;
    struct cf_pv *none, *yes, *no, *small_int[256];
};

static int fail(struct json_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct json_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = cf_vasprintf(fmt, ap);
    va_end(ap);
    cf_error_set(r->err, CF_ERR_FORMAT, "JSON byte %zu: %s", r->pos, why);
    free(why);
    return -1;
}

static int fail_memory(struct json_reader *r)
{
    return fail(r, "over the memory limit of %zu bytes", r->lim.max_memory);
}

static int push(struct json_reader *r, struct cf_pv *v)
{
    if (!v)
        return fail_memory(r);
    if (++r->items > r->lim.max_items)
        return fail(r, "more than %zu values", r->lim.max_items);
    if (cf_pvdoc_grow(r->doc, (void **)&r->values, &r->vcap, r->vn + 1, sizeof *r->values) != 0)
        return fail_memory(r);
    r->values[r->vn++] = v;
    return 0;
}

static void skip_space(struct json_reader *r)
{
    while (r->pos < r->len &&
           (r->in[r->pos] == ' ' || r->in[r->pos] == '\n' || r->in[r->pos] == '\r' || r->in[r->pos] == '\t'))
        r->pos++;
}

static int at(const struct json_reader *r, char c)
{
    return r->pos < r->len && r->in[r->pos] == c;
}

static int word(struct json_reader *r, const char *w)
{
    size_t n = strlen(w);
    if (r->len - r->pos < n || memcmp(r->in + r->pos, w, n) != 0)
        return 0;
    r->pos += n;
    return 1;
}

static struct cf_pv *singleton(struct json_reader *r, struct cf_pv **slot, enum cf_pv_kind kind, int b)
{
    if (!*slot && (*slot = cf_pv_new(r->doc, kind)) != NULL)
        (*slot)->u.b = b;
    return *slot;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* \uXXXX at p (p[0] == 'u'), a surrogate pair joined; *used: bytes read
 * after the backslash. A lone surrogate becomes U+FFFD (UTF-8 has none). */
static int unicode_escape(const char *p, size_t left, unsigned *cp, size_t *used)
{
    if (left < 5 || hex4(p + 1, cp) != 0)
        return -1;
    *used = 5;
    if (*cp >= 0xd800 && *cp < 0xdc00) {
        unsigned low;
        if (left >= 11 && p[5] == '\\' && p[6] == 'u' && hex4(p + 7, &low) == 0 && low >= 0xdc00 && low < 0xe000) {
            *cp = 0x10000 + ((*cp - 0xd800) << 10) + (low - 0xdc00);
            *used = 11;
        } else {
            *cp = 0xfffd;
        }
    } else if (*cp >= 0xdc00 && *cp < 0xe000) {
        *cp = 0xfffd;
    }
    return 0;
}

static struct cf_pv *text_value(struct json_reader *r, const char *s, size_t n)
{
    struct cf_pv *v = cf_pv_new_text(r->doc, CF_PV_STR, s, n);
    if (!v)
        fail_memory(r);
    return v;
}

/* The string at r->pos (its opening quote) as a STR value; NULL with the
 * error set. */
static struct cf_pv *read_string(struct json_reader *r)
{
    size_t start = ++r->pos, n = 0;
    int escaped = 0;
    while (r->pos < r->len && r->in[r->pos] != '"') {
        unsigned char c = (unsigned char)r->in[r->pos];
        if (c < 0x20) {
            fail(r, "a control character (0x%02x) inside a string", c);
            return NULL;
        }
        if (c == '\\') {
            escaped = 1;
            r->pos++;
        }
        r->pos++;
    }
    if (r->pos >= r->len) {
        r->pos = start - 1;
        fail(r, "a string that never ends");
        return NULL;
    }
    size_t raw = r->pos - start;
    size_t bad = cf_pv_utf8_invalid_at(r->in + start, raw); /* escapes are ASCII: checked as they decode */
    if (bad < raw) {
        r->pos = start + bad;
        fail(r, "a string that is not UTF-8");
        return NULL;
    }
    r->pos++;
    if (!escaped)
        return text_value(r, r->in + start, raw);
    /* escapes never make a string longer than its text */
    if (cf_pvdoc_grow(r->doc, (void **)&r->text, &r->text_cap, raw + 1, 1) != 0) {
        fail_memory(r);
        return NULL;
    }
    for (size_t i = start; i < start + raw;) {
        char c = r->in[i];
        if (c != '\\') {
            r->text[n++] = c;
            i++;
            continue;
        }
        char e = r->in[i + 1];
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *k = e ? strchr(from, e) : NULL;
        if (k) {
            r->text[n++] = to[k - from];
            i += 2;
            continue;
        }
        unsigned cp;
        size_t used;
        if (e != 'u' || unicode_escape(r->in + i + 1, start + raw - i - 1, &cp, &used) != 0) {
            r->pos = i;
            fail(r, "a bad escape in a string");
            return NULL;
        }
        n += put_utf8(r->text + n, cp);
        i += 1 + used;
    }
    return text_value(r, r->text, n);
}

static int read_number(struct json_reader *r)
{
    size_t start = r->pos, digits = 0;
    int whole = 1;
    if (at(r, '-'))
        r->pos++;
    size_t int_start = r->pos;
    while (r->pos < r->len && r->in[r->pos] >= '0' && r->in[r->pos] <= '9')
        r->pos++, digits++;
    if (!digits || (digits > 1 && r->in[int_start] == '0')) {
        r->pos = start;
        return fail(r, "a malformed number");
    }
    if (at(r, '.')) {
        whole = 0;
        size_t frac = ++r->pos;
        while (r->pos < r->len && r->in[r->pos] >= '0' && r->in[r->pos] <= '9')
            r->pos++;
        if (r->pos == frac)
            return fail(r, "a number with no digits after its point");
    }
    if (at(r, 'e') || at(r, 'E')) {
        whole = 0;
        r->pos++;
        if (at(r, '+') || at(r, '-'))
            r->pos++;
        size_t exp = r->pos;
        while (r->pos < r->len && r->in[r->pos] >= '0' && r->in[r->pos] <= '9')
            r->pos++;
        if (r->pos == exp)
            return fail(r, "a number with no digits in its exponent");
    }
    int negative = r->in[start] == '-';
    if (whole) {
        /* in magnitude, so that -2^63 fits */
        uint64_t m = 0, limit = negative ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
        size_t i = int_start;
        for (; i < r->pos; i++) {
            uint64_t d = (uint64_t)(r->in[i] - '0');
            if (m > (limit - d) / 10)
                break;
            m = m * 10 + d;
        }
        if (i == r->pos) {
            int64_t v = negative ? (int64_t)(0 - m) : (int64_t)m;
            if (v >= 0 && v < 256) {
                struct cf_pv **slot = &r->small_int[v];
                if (!*slot && (*slot = cf_pv_new(r->doc, CF_PV_INT)) != NULL)
                    (*slot)->u.i = v;
                return push(r, *slot);
            }
            struct cf_pv *iv = cf_pv_new(r->doc, CF_PV_INT);
            if (iv)
                iv->u.i = v;
            return push(r, iv);
        }
    }
    size_t n = r->pos - start;
    if (n > JSON_NUMBER_MAX) {
        r->pos = start;
        return fail(r, "a number of %zu characters (at most %d are read)", n, JSON_NUMBER_MAX);
    }
    char buf[JSON_NUMBER_MAX + 1];
    memcpy(buf, r->in + start, n);
    buf[n] = '\0';
    struct cf_pv *fv = cf_pv_new(r->doc, CF_PV_FLOAT);
    if (fv)
        fv->u.f = strtod(buf, NULL);
    return push(r, fv);
}

/* A scalar at r->pos. */
static int read_scalar(struct json_reader *r)
{
    char c = r->in[r->pos];
    if (c == '"') {
        struct cf_pv *s = read_string(r);
        return s ? push(r, s) : -1;
    }
    if (word(r, "true"))
        return push(r, singleton(r, &r->yes, CF_PV_BOOL, 1));
    if (word(r, "false"))
        return push(r, singleton(r, &r->no, CF_PV_BOOL, 0));
    if (word(r, "null"))
        return push(r, singleton(r, &r->none, CF_PV_NONE, 0));
    /* Python's json writes these for floats JSON cannot spell */
    static const struct {
        const char *word;
        double value;
    } special[] = { { "NaN", __builtin_nan("") }, { "Infinity", __builtin_inf() }, { "-Infinity", -__builtin_inf() } };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (word(r, special[i].word)) {
            struct cf_pv *v = cf_pv_new(r->doc, CF_PV_FLOAT);
            if (v)
                v->u.f = special[i].value;
            return push(r, v);
        }
    if (c == '-' || (c >= '0' && c <= '9'))
        return read_number(r);
    return fail(r, "an unexpected character '%c'", c >= 0x20 && c < 0x7f ? c : '?');
}

static int open_container(struct json_reader *r, enum cf_pv_kind kind)
{
    if (r->fn >= r->lim.max_depth)
        return fail(r, "values nested deeper than %zu", r->lim.max_depth);
    if (cf_pvdoc_grow(r->doc, (void **)&r->frames, &r->fcap, r->fn + 1, sizeof *r->frames) != 0)
        return fail_memory(r);
    r->frames[r->fn++] = (struct json_frame){ kind, r->vn };
    r->pos++;
    return 0;
}

/* Closes the innermost container at its ']' or '}': its values become one. */
static int close_container(struct json_reader *r)
{
    struct json_frame f = r->frames[--r->fn];
    size_t n = r->vn - f.base;
    struct cf_pv *const *items = n ? r->values + f.base : NULL; /* "[]" first: no stack yet */
    struct cf_pv *c = NULL;
    enum cf_pv_grow g;
    if (f.kind == CF_PV_LIST) {
        g = cf_pv_seq_make(r->doc, CF_PV_LIST, items, n, r->lim.max_depth, &c);
    } else {
        c = cf_pv_new(r->doc, CF_PV_DICT);
        g = !c ? CF_PV_NO_MEMORY : cf_pv_dict_extend(r->doc, c, items, n / 2, r->lim.max_depth);
        if (g == CF_PV_GROWN && cf_pv_dict_dedup(r->doc, c, &r->dedup, &r->dedup_cap) != 0)
            g = CF_PV_NO_MEMORY;
    }
    if (g == CF_PV_TOO_DEEP)
        return fail(r, "values nested deeper than %zu", r->lim.max_depth);
    if (g != CF_PV_GROWN)
        return fail_memory(r);
    r->pos++;
    r->vn = f.base;
    return push(r, c);
}

/* A key and its colon, after '{' or ','. */
static int read_key(struct json_reader *r)
{
    skip_space(r);
    if (!at(r, '"'))
        return fail(r, "an object key that is not a string");
    if (read_scalar(r) != 0)
        return -1;
    skip_space(r);
    if (!at(r, ':'))
        return fail(r, "no ':' after an object key");
    r->pos++;
    return 0;
}

/* After a value: a ',' or the closing bracket of the innermost container,
 * as often as they come. 1 when the outermost value is complete. */
static int after_value(struct json_reader *r)
{
    for (;;) {
        if (!r->fn)
            return 1;
        skip_space(r);
        struct json_frame *f = &r->frames[r->fn - 1];
        char close = f->kind == CF_PV_LIST ? ']' : '}';
        if (at(r, close)) {
            if (close_container(r) != 0)
                return -1;
            continue;
        }
        if (!at(r, ','))
            return r->pos < r->len ? fail(r, "expected ',' or '%c'", close) : fail(r, "the text ends inside a value");
        r->pos++;
        return f->kind == CF_PV_DICT ? read_key(r) : 0;
    }
}

static int read_document(struct json_reader *r)
{
    if (r->len >= 3 && memcmp(r->in, "\xef\xbb\xbf", 3) == 0)
        r->pos = 3;
    for (;;) {
        skip_space(r);
        if (r->pos >= r->len)
            return fail(r, "the text ends where a value should be");
        char c = r->in[r->pos];
        int rc;
        if (c == '[' || c == '{') {
            enum cf_pv_kind kind = c == '[' ? CF_PV_LIST : CF_PV_DICT;
            if (open_container(r, kind) != 0)
                return -1;
            skip_space(r);
            if (!at(r, c == '[' ? ']' : '}')) {
                if (kind == CF_PV_DICT && read_key(r) != 0)
                    return -1;
                continue;
            }
            rc = close_container(r);
        } else {
            rc = read_scalar(r);
        }
        if (rc != 0)
            return -1;
        rc = after_value(r);
        if (rc < 0)
            return -1;
        if (rc == 1)
            break;
    }
    skip_space(r);
    if (r->pos < r->len)
        return fail(r, "text after the value");
    return 0;
}

int cf_pv_from_json(const char *text, size_t len, const struct cf_pickle_limits *lim, struct cf_pvdoc **out,
                    cf_error *err)
{
    *out = NULL;
    struct json_reader r = { 0 };
    r.in = text;
    r.len = len;
    r.err = err;
    r.lim = cf_pv_limits_resolve(lim, len);
    if (len > r.lim.max_bytes)
        return cf_error_set(err, CF_ERR_FORMAT, "JSON of %zu bytes is over the limit of %zu", len, r.lim.max_bytes);
    if (!(r.doc = cf_pvdoc_new(r.lim.max_memory)))
        return cf_error_set(err, CF_ERR_INTERNAL, "out of memory");
    int rc = read_document(&r);
    if (rc == 0)
        cf_pvdoc_set_root(r.doc, r.values[0]);
    free(r.values);
    free(r.frames);
    free(r.text);
    free(r.dedup);
    if (rc != 0) {
        cf_pvdoc_free(r.doc);
        return -1;
    }
    *out = r.doc;
    return 0;
}
