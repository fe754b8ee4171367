/* libFuzzer target for the readers of Flight Recorder dumps (src/hang/):
 * any bytes read as a pickle and as JSON, under limits, either fail with a
 * message naming the form (and, for a pickle, the byte) or give a value
 * graph that holds together: every string NUL-terminated at its length,
 * every item present, no dict key a list or dict, no string key twice in a
 * dict, and cf_pv_get finding each key's own value. The walk is bounded, so
 * a shared or cyclic graph is checked without unrolling it. Seeds: torch's
 * pickle and JSON of one gloo rank and Python's protocol-4 re-pickle
 * (fuzz/corpus/fuzz_pickle/). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/pickle.h"
#include "fuzz_guard.h"

#define WALK_MAX 200000

static void check_dict(const struct cf_pv *d)
{
    size_t n = d->u.dict.n;
    for (size_t i = 0; i < n; i++) {
        const struct cf_pv *k = d->u.dict.k[i];
        if (!k || !d->u.dict.v[i] || k->kind == CF_PV_LIST || k->kind == CF_PV_DICT)
            abort();
        if (k->kind != CF_PV_STR || memchr(k->u.str.s, '\0', k->u.str.len))
            continue;
        /* keys are unique, so the look-up finds this very entry */
        if (n <= 256 && cf_pv_get(d, k->u.str.s) != d->u.dict.v[i])
            abort();
    }
}

static void walk(const struct cf_pv *root)
{
    const struct cf_pv **todo = malloc(WALK_MAX * sizeof *todo);
    size_t top = 0, seen = 0;
    todo[top++] = root;
    while (top && seen++ < WALK_MAX) {
        const struct cf_pv *v = todo[--top];
        switch (v->kind) {
        case CF_PV_NONE:
        case CF_PV_BOOL:
        case CF_PV_INT:
        case CF_PV_FLOAT:
            break;
        case CF_PV_STR:
        case CF_PV_BYTES:
            if (v->u.str.s[v->u.str.len] != '\0')
                abort();
            break;
        case CF_PV_LIST:
        case CF_PV_TUPLE:
            if (cf_pv_len(v) != v->u.seq.n || (v->u.seq.n && cf_pv_at(v, v->u.seq.n - 1) != v->u.seq.v[v->u.seq.n - 1]))
                abort();
            for (size_t i = 0; i < v->u.seq.n && top < WALK_MAX; i++) {
                if (!v->u.seq.v[i])
                    abort();
                todo[top++] = v->u.seq.v[i];
            }
            break;
        case CF_PV_DICT:
            check_dict(v);
            for (size_t i = 0; i < v->u.dict.n && top < WALK_MAX; i++)
                todo[top++] = v->u.dict.v[i];
            break;
        default:
            abort();
        }
    }
    free(todo);
}

static void read_one(const uint8_t *data, size_t size, int json)
{
    struct cf_pickle_limits lim = { 0 };
    lim.max_items = 1 << 20;
    lim.max_memory = 32 << 20;
    struct cf_pvdoc *d = NULL;
    cf_error err = CF_ERROR_INIT;
    int rc = json ? cf_pv_from_json((const char *)data, size, &lim, &d, &err)
                  : cf_pickle_read(data, size, &lim, &d, &err);
    if (rc == 0) {
        if (!d || !cf_pvdoc_root(d) || err.kind != CF_OK)
            abort();
        walk(cf_pvdoc_root(d));
    } else {
        const char *m = cf_error_message(&err);
        if (d || rc != -1 || !m || strncmp(m, json ? "JSON" : "pickle", json ? 4 : 6) != 0)
            abort();
    }
    cf_pvdoc_free(d);
    cf_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_guarded g;
    if (fuzz_guard_copy(data, size, &g) != 0)
        return 0;
    read_one(g.data, size, 0);
    read_one(g.data, size, 1);
    fuzz_guard_release(&g);
    return 0;
}
