/* Table-driven JSON for plain structs (cclforge/json_fields.h). */
#include "cclforge/json_fields.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/json.h"
#include "cclforge/strbuf.h"

#define MAX_ITEMS (1u << 20) /* per array: a survey has tens; a hostile file gets no more */

static void *at(const void *obj, size_t off)
{
    return (char *)obj + off;
}

static cJSON *field_to_json(const struct cf_jf_table *t, const struct cf_jf *f, const void *obj)
{
    const void *p = at(obj, f->offset);
    switch (f->type) {
    case CF_JF_STR: {
        const char *s = *(char *const *)p;
        return s ? cJSON_CreateString(s) : cJSON_CreateNull();
    }
    case CF_JF_INT: return cJSON_CreateNumber(*(const int *)p);
    case CF_JF_BOOL: return cJSON_CreateBool(*(const int *)p);
    case CF_JF_U64: {
        uint64_t v = *(const uint64_t *)p;
        return v == UINT64_MAX ? cJSON_CreateString("unlimited") : cJSON_CreateNumber((double)v);
    }
    case CF_JF_LL: return cJSON_CreateNumber((double)*(const long long *)p);
    case CF_JF_DOUBLE: return cJSON_CreateNumber(*(const double *)p);
    case CF_JF_STRVEC: return cf_json_strvec(p);
    case CF_JF_ARRAY: {
        cJSON *a = cJSON_CreateArray();
        const char *items = *(char *const *)p;
        size_t n = *(const size_t *)at(obj, f->count_offset);
        const struct cf_jf_table *sub = t->subs[f->sub];
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(a, cf_jf_to_json(sub, items + i * sub->size));
        return a;
    }
    }
    return cJSON_CreateNull();
}

cJSON *cf_jf_to_json(const struct cf_jf_table *t, const void *obj)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < t->n; i++)
        cJSON_AddItemToObject(o, t->fields[i].key, field_to_json(t, &t->fields[i], obj));
    return o;
}

static int bad(cf_error *err, const char *where, const char *key, const char *want)
{
    return cf_error_set(err, CF_ERR_FORMAT, "survey JSON: %s.%s must be %s", where, key, want);
}

static int integral_in(double v, double lo, double hi)
{
    return v == v && v >= lo && v <= hi && v == (double)(long long)v;
}

static int field_from_json(const struct cf_jf_table *t, const struct cf_jf *f, const cJSON *v, void *obj,
                           const char *where, cf_error *err)
{
    void *p = at(obj, f->offset);
    switch (f->type) {
    case CF_JF_STR:
        if (!cJSON_IsString(v))
            return bad(err, where, f->key, "a string or null");
        *(char **)p = cf_strdup(v->valuestring);
        return 0;
    case CF_JF_INT:
        if (!cJSON_IsNumber(v) || !integral_in(v->valuedouble, -2147483648.0, 2147483647.0))
            return bad(err, where, f->key, "an integer");
        *(int *)p = (int)v->valuedouble;
        return 0;
    case CF_JF_BOOL:
        if (!cJSON_IsBool(v))
            return bad(err, where, f->key, "true or false");
        *(int *)p = cJSON_IsTrue(v);
        return 0;
    case CF_JF_U64:
        if (cJSON_IsString(v) && !strcmp(v->valuestring, "unlimited")) {
            *(uint64_t *)p = UINT64_MAX;
            return 0;
        }
        if (!cJSON_IsNumber(v) || !integral_in(v->valuedouble, 0, 9007199254740992.0))
            return bad(err, where, f->key, "a non-negative integer or \"unlimited\"");
        *(uint64_t *)p = (uint64_t)v->valuedouble;
        return 0;
    case CF_JF_LL:
        if (!cJSON_IsNumber(v) || !integral_in(v->valuedouble, -9007199254740992.0, 9007199254740992.0))
            return bad(err, where, f->key, "an integer");
        *(long long *)p = (long long)v->valuedouble;
        return 0;
    case CF_JF_DOUBLE:
        if (!cJSON_IsNumber(v))
            return bad(err, where, f->key, "a number");
        *(double *)p = v->valuedouble;
        return 0;
    case CF_JF_STRVEC: {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > (int)MAX_ITEMS)
            return bad(err, where, f->key, "an array of strings");
        const cJSON *it;
        cJSON_ArrayForEach(it, v)
        {
            if (!cJSON_IsString(it))
                return bad(err, where, f->key, "an array of strings");
            cf_strvec_push(p, it->valuestring);
        }
        return 0;
    }
    case CF_JF_ARRAY: {
        int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
        if (n < 0 || n > (int)MAX_ITEMS)
            return bad(err, where, f->key, "an array of objects");
        const struct cf_jf_table *sub = t->subs[f->sub];
        char *items = cf_xcalloc(n ? (size_t)n : 1, sub->size);
        *(char **)p = items;
        size_t *count = at(obj, f->count_offset);
        *count = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, v)
        {
            char *sub_where = cf_asprintf("%s.%s[%zu]", where, f->key, *count);
            int rc = cJSON_IsObject(it) ? cf_jf_from_json(sub, it, items + *count * sub->size, sub_where, err)
                                        : cf_error_set(err, CF_ERR_FORMAT, "survey JSON: %s must be an object",
                                                       sub_where);
            free(sub_where);
            (*count)++; /* counted even when partly read, so release frees it */
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    }
    return 0;
}

int cf_jf_from_json(const struct cf_jf_table *t, const cJSON *o, void *obj, const char *where, cf_error *err)
{
    if (!cJSON_IsObject(o))
        return cf_error_set(err, CF_ERR_FORMAT, "survey JSON: %s must be an object", where);
    for (size_t i = 0; i < t->n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, t->fields[i].key);
        if (!v || cJSON_IsNull(v))
            continue;
        if (field_from_json(t, &t->fields[i], v, obj, where, err) < 0)
            return -1;
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
        case CF_JF_ARRAY: {
            char *items = *(char **)p;
            size_t *count = at(obj, f->count_offset);
            for (size_t k = 0; items && k < *count; k++)
                cf_jf_release(t->subs[f->sub], items + k * t->subs[f->sub]->size);
            free(items);
            *(char **)p = NULL;
            *count = 0;
            break;
        }
        default: break;
        }
    }
}
