/* Interim cf_pv_from_json over cJSON, and a cf_pickle_read that refuses every
 * pickle, until the safe unpickler's own files replace this one. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/pickle.h"
#include "cclforge/strbuf.h"

struct cf_pvdoc {
    struct cf_pv **all;
    size_t n, cap;
    struct cf_pv *root;
};

static struct cf_pv *pv_new(struct cf_pvdoc *d, enum cf_pv_kind kind)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 256;
        d->all = cf_xrealloc(d->all, d->cap * sizeof *d->all);
    }
    struct cf_pv *v = cf_xcalloc(1, sizeof *v);
    v->kind = kind;
    d->all[d->n++] = v;
    return v;
}

static struct cf_pv *pv_of(struct cf_pvdoc *d, const cJSON *j, size_t depth)
{
    if (depth > 64)
        return NULL;
    if (cJSON_IsNull(j))
        return pv_new(d, CF_PV_NONE);
    if (cJSON_IsBool(j)) {
        struct cf_pv *v = pv_new(d, CF_PV_BOOL);
        v->u.b = cJSON_IsTrue(j);
        return v;
    }
    if (cJSON_IsNumber(j)) {
        double x = j->valuedouble;
        if (x == (double)(int64_t)x && x > -9.2e18 && x < 9.2e18) {
            struct cf_pv *v = pv_new(d, CF_PV_INT);
            v->u.i = (int64_t)x;
            return v;
        }
        struct cf_pv *v = pv_new(d, CF_PV_FLOAT);
        v->u.f = x;
        return v;
    }
    if (cJSON_IsString(j)) {
        struct cf_pv *v = pv_new(d, CF_PV_STR);
        char *s = cf_strdup(j->valuestring);
        v->u.str.s = s;
        v->u.str.len = strlen(s);
        struct cf_pv *keep = pv_new(d, CF_PV_NONE); /* owns s */
        keep->u.str.s = s;
        keep->kind = CF_PV_BYTES;
        return v;
    }
    int is_obj = cJSON_IsObject(j);
    if (!is_obj && !cJSON_IsArray(j))
        return NULL;
    size_t n = (size_t)cJSON_GetArraySize(j), i = 0;
    struct cf_pv *v = pv_new(d, is_obj ? CF_PV_DICT : CF_PV_LIST);
    struct cf_pv **vals = cf_xcalloc(n ? n : 1, sizeof *vals), **keys = NULL;
    if (is_obj)
        keys = cf_xcalloc(n ? n : 1, sizeof *keys);
    const cJSON *c;
    cJSON_ArrayForEach(c, j) {
        vals[i] = pv_of(d, c, depth + 1);
        if (!vals[i])
            return NULL;
        if (is_obj) {
            keys[i] = pv_new(d, CF_PV_STR);
            keys[i]->u.str.s = c->string;
            keys[i]->u.str.len = strlen(c->string);
        }
        i++;
    }
    if (is_obj) {
        v->u.dict.k = keys;
        v->u.dict.v = vals;
        v->u.dict.n = n;
    } else {
        v->u.seq.v = vals;
        v->u.seq.n = n;
    }
    return v;
}

int cf_pickle_read(const void *data, size_t len, const struct cf_pickle_limits *lim, struct cf_pvdoc **out,
                   cf_error *err)
{
    (void)data;
    (void)len;
    (void)lim;
    *out = NULL;
    return cf_error_set(err, CF_ERR_FORMAT, "pickles are not read by this build");
}

int cf_pv_from_json(const char *text, size_t len, const struct cf_pickle_limits *lim, struct cf_pvdoc **out,
                    cf_error *err)
{
    (void)lim;
    *out = NULL;
    cJSON *j = cJSON_ParseWithLength(text, len);
    if (!j)
        return cf_error_set(err, CF_ERR_FORMAT, "not JSON");
    struct cf_pvdoc *d = cf_xcalloc(1, sizeof *d);
    d->root = pv_of(d, j, 0);
    /* keys point into the cJSON tree: keep copies */
    for (size_t i = 0; i < d->n; i++) {
        struct cf_pv *v = d->all[i];
        if (v->kind == CF_PV_DICT)
            for (size_t k = 0; k < v->u.dict.n; k++) {
                char *s = cf_strdup(v->u.dict.k[k]->u.str.s);
                v->u.dict.k[k]->u.str.s = s;
                v->u.dict.k[k]->kind = CF_PV_STR;
            }
    }
    cJSON_Delete(j);
    if (!d->root) {
        cf_pvdoc_free(d);
        return cf_error_set(err, CF_ERR_FORMAT, "JSON nested too deep");
    }
    *out = d;
    return 0;
}

const struct cf_pv *cf_pvdoc_root(const struct cf_pvdoc *d)
{
    return d ? d->root : NULL;
}

void cf_pvdoc_free(struct cf_pvdoc *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        struct cf_pv *v = d->all[i];
        if (v->kind == CF_PV_DICT) {
            for (size_t k = 0; k < v->u.dict.n; k++)
                free((char *)v->u.dict.k[k]->u.str.s);
            free(v->u.dict.k);
            free(v->u.dict.v);
        } else if (v->kind == CF_PV_LIST) {
            free(v->u.seq.v);
        } else if (v->kind == CF_PV_BYTES) {
            free((char *)v->u.str.s);
        }
        free(v);
    }
    free(d->all);
    free(d);
}

const struct cf_pv *cf_pv_get(const struct cf_pv *dict, const char *key)
{
    if (!dict || dict->kind != CF_PV_DICT)
        return NULL;
    for (size_t i = dict->u.dict.n; i-- > 0;) {
        const struct cf_pv *k = dict->u.dict.k[i];
        if (k->kind == CF_PV_STR && !strcmp(k->u.str.s, key))
            return dict->u.dict.v[i];
    }
    return NULL;
}

const char *cf_pv_str(const struct cf_pv *v)
{
    return v && v->kind == CF_PV_STR ? v->u.str.s : NULL;
}

int cf_pv_int(const struct cf_pv *v, int64_t *out)
{
    if (v && v->kind == CF_PV_INT) {
        *out = v->u.i;
        return 0;
    }
    if (v && v->kind == CF_PV_BOOL) {
        *out = v->u.b;
        return 0;
    }
    return -1;
}

size_t cf_pv_len(const struct cf_pv *v)
{
    if (!v)
        return 0;
    if (v->kind == CF_PV_LIST || v->kind == CF_PV_TUPLE)
        return v->u.seq.n;
    if (v->kind == CF_PV_DICT)
        return v->u.dict.n;
    return 0;
}

const struct cf_pv *cf_pv_at(const struct cf_pv *seq, size_t i)
{
    if (!seq || (seq->kind != CF_PV_LIST && seq->kind != CF_PV_TUPLE) || i >= seq->u.seq.n)
        return NULL;
    return seq->u.seq.v[i];
}
