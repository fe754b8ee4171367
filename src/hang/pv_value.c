/* Look-ups over values that never fail on a wrong kind (cclforge/pickle.h):
 * a reader of a dump asks for what it expects and gets NULL or 0 otherwise. */
#include <string.h>

#include "cclforge/pickle.h"

const struct cf_pv *cf_pv_get(const struct cf_pv *dict, const char *key)
{
    if (!dict || dict->kind != CF_PV_DICT || !key)
        return NULL;
    size_t len = strlen(key);
    for (size_t i = 0; i < dict->u.dict.n; i++) {
        const struct cf_pv *k = dict->u.dict.k[i];
        if (k->kind == CF_PV_STR && k->u.str.len == len && memcmp(k->u.str.s, key, len) == 0)
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
    if (v && v->kind == CF_PV_INT)
        *out = v->u.i;
    else if (v && v->kind == CF_PV_BOOL)
        *out = v->u.b != 0;
    else
        return -1;
    return 0;
}

size_t cf_pv_len(const struct cf_pv *v)
{
    if (!v)
        return 0;
    if (v->kind == CF_PV_LIST || v->kind == CF_PV_TUPLE)
        return v->u.seq.n;
    return v->kind == CF_PV_DICT ? v->u.dict.n : 0;
}

const struct cf_pv *cf_pv_at(const struct cf_pv *seq, size_t i)
{
    if (!seq || (seq->kind != CF_PV_LIST && seq->kind != CF_PV_TUPLE) || i >= seq->u.seq.n)
        return NULL;
    return seq->u.seq.v[i];
}
