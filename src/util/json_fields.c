/* Table-driven JSON for plain structs (cclforge/json_fields.h). */
#include "cclforge/json_fields.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/json.h"
#include "cclforge/strbuf.h"

#define MAX_ITEMS (1u << 20) /* per array: a survey has tens; a hostile file gets no more */
#define PATH_MAX_LEN 192 /* "fabric.ib[0].ports[1].gids[2].ndev": a message's, cut past that */
#define WHOLE_MAX 9007199254740992.0 /* 2^53: the whole numbers a double holds exactly */

static void *at(const void *obj, size_t off)
{
    return (char *)obj + off;
}

/* a number the field holds, as a double (NAN for the types that are not numbers) */
static double number_of(const struct cf_jf *f, const void *p)
{
    switch (f->type) {
    case CF_JF_INT:
    case CF_JF_BOOL:
    case CF_JF_RANK: return *(const int *)p;
    case CF_JF_BOOL_LONG:
    case CF_JF_LONG: return (double)*(const long *)p;
    case CF_JF_LL: return (double)*(const long long *)p;
    case CF_JF_SIZE: return (double)*(const size_t *)p;
    case CF_JF_U64: return (double)*(const uint64_t *)p;
    case CF_JF_DOUBLE: return *(const double *)p;
    default: return NAN;
    }
}

static cJSON *field_to_json(const struct cf_jf_table *t, const struct cf_jf *f, const void *obj)
{
    const void *p = at(obj, f->offset);
    if ((f->flags & CF_JF_NULL_IF_NEGATIVE) && number_of(f, p) < 0)
        return cJSON_CreateNull();
    switch (f->type) {
    case CF_JF_STR: {
        const char *s = *(char *const *)p;
        return s ? cJSON_CreateString(s) : f->flags & CF_JF_EMPTY_IF_NULL ? cJSON_CreateString("") : cJSON_CreateNull();
    }
    case CF_JF_FIXED: return cJSON_CreateString(p);
    case CF_JF_BOOL:
    case CF_JF_BOOL_LONG: return cJSON_CreateBool(number_of(f, p) != 0);
    case CF_JF_U64:
        if (*(const uint64_t *)p == UINT64_MAX)
            return cJSON_CreateString("unlimited");
        return cJSON_CreateNumber(number_of(f, p));
    case CF_JF_ENUM: return cJSON_CreateString(f->name(*(const int *)p));
    case CF_JF_STRVEC: return cf_json_strvec(p);
    case CF_JF_LATER: return cJSON_CreateNull();
    case CF_JF_PTR: {
        const void *one = *(const void *const *)p;
        return one ? cf_jf_to_json(t->subs[f->sub], one) : cJSON_CreateNull();
    }
    case CF_JF_OBJECT: return cf_jf_to_json(t->subs[f->sub], p);
    case CF_JF_ARRAY: {
        cJSON *a = cJSON_CreateArray();
        const char *items = f->flags & CF_JF_IN_PLACE ? p : *(char *const *)p;
        size_t n = *(const size_t *)at(obj, f->count_offset);
        const struct cf_jf_table *sub = t->subs[f->sub];
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(a, cf_jf_to_json(sub, items + i * sub->size));
        return a;
    }
    default: return cJSON_CreateNumber(number_of(f, p));
    }
}

void cf_jf_add(cJSON *o, const struct cf_jf_table *t, const void *obj)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct cf_jf *f = &t->fields[i];
        if (!(f->type == CF_JF_STR && (f->flags & CF_JF_OMIT_NULL) && !*(char *const *)at(obj, f->offset)))
            cJSON_AddItemToObject(o, f->key, field_to_json(t, f, obj));
    }
}

cJSON *cf_jf_to_json(const struct cf_jf_table *t, const void *obj)
{
    cJSON *o = cJSON_CreateObject();
    cf_jf_add(o, t, obj);
    return o;
}

static int refuse_v(const struct cf_jf_reader *r, const char *path, const char *fmt, va_list ap)
{
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    const char *q = r->bare ? "" : "\"";
    return cf_error_set(r->err, CF_ERR_FORMAT, "%s%s%s%s%s%s%s%s", r->doc ? r->doc : "", r->doc ? ": " : "",
                        path ? q : "", path ? path : "", path ? q : "", path ? " " : "", what, r->advice);
}

int cf_jf_refuse(const struct cf_jf_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = refuse_v(r, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

/* -1: the field at path is refused, for what */
__attribute__((format(printf, 3, 4))) static int bad(const struct cf_jf_reader *r, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = refuse_v(r, path, fmt, ap);
    va_end(ap);
    return rc;
}

/* the range a number of the field must lie in: its own, else its type's */
static void range_of(const struct cf_jf *f, double *lo, double *hi)
{
    *lo = f->min;
    *hi = f->max;
    if (f->min < f->max)
        return;
    switch (f->type) {
    case CF_JF_INT: *lo = -2147483648.0, *hi = 2147483647.0; break;
    case CF_JF_SIZE:
    case CF_JF_U64: *lo = 0, *hi = WHOLE_MAX; break;
    case CF_JF_DOUBLE: *lo = -HUGE_VAL, *hi = HUGE_VAL; break;
    default: *lo = -WHOLE_MAX, *hi = WHOLE_MAX; break;
    }
}

static int read_number(const struct cf_jf_reader *r, const struct cf_jf *f, const cJSON *v, void *p, const char *path)
{
    if (f->type == CF_JF_U64 && cJSON_IsString(v) && !strcmp(v->valuestring, "unlimited")) {
        *(uint64_t *)p = UINT64_MAX;
        return 0;
    }
    if (!cJSON_IsNumber(v))
        return bad(r, path, "is not a number");
    double x = v->valuedouble, lo, hi;
    range_of(f, &lo, &hi);
    if (f->type == CF_JF_RANK && x != -1 && !(x >= 0 && x < r->ranks))
        return bad(r, path, "is %g: no such rank (the run had %d)", x, r->ranks);
    if (!(x >= lo && x <= hi) || (f->type == CF_JF_DOUBLE && f->min < f->max && !isfinite(x)))
        return bad(r, path, "is %g, out of range (%g to %g)", x, lo, hi);
    if (f->type != CF_JF_DOUBLE && x != floor(x))
        return bad(r, path, "is %g, not a whole number", x);
    switch (f->type) {
    case CF_JF_INT:
    case CF_JF_RANK: *(int *)p = (int)x; break;
    case CF_JF_LONG: *(long *)p = (long)x; break;
    case CF_JF_LL: *(long long *)p = (long long)x; break;
    case CF_JF_SIZE: *(size_t *)p = (size_t)x; break;
    case CF_JF_U64: *(uint64_t *)p = (uint64_t)x; break;
    default: *(double *)p = x; break;
    }
    return 0;
}

static int read_array(const struct cf_jf_reader *r, const struct cf_jf_table *t, const struct cf_jf *f, const cJSON *v,
                      void *obj, const char *path)
{
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 0)
        return bad(r, path, "is not an array");
    if ((unsigned)n > (f->max > 0 ? (unsigned)f->max : MAX_ITEMS))
        return bad(r, path, "holds %d entries, more than %.0f", n, f->max > 0 ? f->max : MAX_ITEMS);
    const struct cf_jf_table *sub = t->subs[f->sub];
    char *items = f->flags & CF_JF_IN_PLACE ? at(obj, f->offset) : cf_xcalloc((size_t)n + 1, sub->size);
    if (!(f->flags & CF_JF_IN_PLACE))
        *(char **)at(obj, f->offset) = items;
    size_t *count = at(obj, f->count_offset);
    *count = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        char *item = items + *count * sub->size, item_path[PATH_MAX_LEN];
        snprintf(item_path, sizeof item_path, "%.160s[%zu]", path, *count);
        if (sub->blank)
            memcpy(item, sub->blank, sub->size);
        int rc = cf_jf_read(r, sub, it, item, item_path);
        (*count)++; /* counted even when partly read, so release frees it */
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int read_field(const struct cf_jf_reader *r, const struct cf_jf_table *t, const struct cf_jf *f, const cJSON *v,
                      void *obj, const char *path)
{
    void *p = at(obj, f->offset);
    switch (f->type) {
    case CF_JF_STR:
    case CF_JF_FIXED:
    case CF_JF_ENUM:
        if (!cJSON_IsString(v))
            return bad(r, path, "is not a string");
        if (f->type == CF_JF_STR) {
            *(char **)p = cf_strdup(v->valuestring);
        } else if (f->type == CF_JF_FIXED) {
            if (strlen(v->valuestring) >= f->size)
                return bad(r, path, "is longer than %zu bytes", f->size - 1);
            memcpy(p, v->valuestring, strlen(v->valuestring) + 1);
        } else {
            int k = 0;
            while (k < f->nnames && strcmp(f->name(k), v->valuestring))
                k++;
            if (k == f->nnames)
                return bad(r, path, "is '%.60s', not one of the names it may hold", v->valuestring);
            *(int *)p = k;
        }
        return 0;
    case CF_JF_BOOL:
    case CF_JF_BOOL_LONG:
        if (!cJSON_IsBool(v))
            return bad(r, path, "is not true or false");
        if (f->type == CF_JF_BOOL)
            *(int *)p = cJSON_IsTrue(v);
        else
            *(long *)p = cJSON_IsTrue(v);
        return 0;
    case CF_JF_STRVEC: {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > (int)MAX_ITEMS)
            return bad(r, path, "is not an array of strings");
        const cJSON *it;
        cJSON_ArrayForEach(it, v)
        {
            if (!cJSON_IsString(it))
                return bad(r, path, "is not an array of strings");
            cf_strvec_push(p, it->valuestring);
        }
        return 0;
    }
    case CF_JF_LATER: return 0;
    case CF_JF_PTR: {
        const struct cf_jf_table *sub = t->subs[f->sub];
        void *one = *(void **)p = cf_xcalloc(1, sub->size);
        if (sub->blank)
            memcpy(one, sub->blank, sub->size);
        return cf_jf_read(r, sub, v, one, path);
    }
    case CF_JF_OBJECT: return cf_jf_read(r, t->subs[f->sub], v, p, path);
    case CF_JF_ARRAY: return read_array(r, t, f, v, obj, path);
    default: return read_number(r, f, v, p, path);
    }
}

int cf_jf_read(const struct cf_jf_reader *r, const struct cf_jf_table *t, const cJSON *o, void *obj, const char *path)
{
    if (!cJSON_IsObject(o))
        return bad(r, path, "is not an object");
    for (size_t i = 0; i < t->n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, t->fields[i].key);
        unsigned flags = t->fields[i].flags;
        int none = !v || (cJSON_IsNull(v) && !(flags & CF_JF_NULLABLE));
        if ((flags & CF_JF_CALLER_READS) || (none ? !(flags & CF_JF_REQUIRED) : cJSON_IsNull(v)))
            continue;
        char field_path[PATH_MAX_LEN];
        snprintf(field_path, sizeof field_path, "%.160s%s%.27s", path, path[0] ? "." : "", t->fields[i].key);
        if ((none ? bad(r, field_path, "is missing") : read_field(r, t, &t->fields[i], v, obj, field_path)) < 0)
            return -1;
    }
    return 0;
}

int cf_jf_from_json(const struct cf_jf_table *t, const cJSON *o, void *obj, const char *where, cf_error *err)
{
    const struct cf_jf_reader r = { err, "survey JSON", "", 0, 0 };
    return cf_jf_read(&r, t, o, obj, where);
}

int cf_jf_same_numbers(const struct cf_jf_reader *r, const struct cf_jf_table *t, const void *got, const void *want,
                       const char *path)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct cf_jf *f = &t->fields[i];
        double g = number_of(f, at(got, f->offset)), w = number_of(f, at(want, f->offset));
        if (g != w) {
            char field_path[PATH_MAX_LEN];
            snprintf(field_path, sizeof field_path, "%.160s%s%.27s", path, path[0] ? "." : "", f->key);
            return bad(r, field_path, "is %.0f, but the document holds %.0f", g, w);
        }
    }
    return 0;
}

void cf_jf_release(const struct cf_jf_table *t, void *obj)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct cf_jf *f = &t->fields[i];
        void *p = at(obj, f->offset);
        switch (f->type) {
        case CF_JF_STR:
            free(*(char **)p);
            *(char **)p = NULL;
            break;
        case CF_JF_STRVEC: cf_strvec_clear(p); break;
        case CF_JF_PTR:
            if (*(void **)p)
                cf_jf_release(t->subs[f->sub], *(void **)p);
            free(*(void **)p);
            *(void **)p = NULL;
            break;
        case CF_JF_OBJECT: cf_jf_release(t->subs[f->sub], p); break;
        case CF_JF_ARRAY: {
            int in_place = f->flags & CF_JF_IN_PLACE;
            char *items = in_place ? p : *(char **)p;
            size_t *count = at(obj, f->count_offset);
            for (size_t k = 0; items && k < *count; k++)
                cf_jf_release(t->subs[f->sub], items + k * t->subs[f->sub]->size);
            if (!in_place) {
                free(items);
                *(char **)p = NULL;
            }
            *count = 0;
            break;
        }
        default: break;
        }
    }
}
