/* Lists, tuples and dicts in the arena. Their items live in one block whose
 * header holds its capacity and the container's depth; a container grows by
 * a new block twice the size (the old one stays in the arena until the
 * document goes), so the value itself never moves: what the memo shares
 * stays shared. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hang/pv_doc.h"

struct pv_slots {
    size_t cap;
    size_t depth;
    struct cf_pv *v[]; /* a DICT's keys, then its values */
};

static struct pv_slots *slots_of(struct cf_pv **first)
{
    return (struct pv_slots *)(void *)((char *)first - offsetof(struct pv_slots, v));
}

static struct cf_pv **first_slot(const struct cf_pv *c)
{
    return c->kind == CF_PV_DICT ? c->u.dict.k : c->u.seq.v;
}

size_t cf_pv_depth(const struct cf_pv *v)
{
    if (v->kind != CF_PV_LIST && v->kind != CF_PV_TUPLE && v->kind != CF_PV_DICT)
        return 0;
    struct cf_pv **first = first_slot(v);
    return first ? slots_of(first)->depth : 1;
}

static size_t depth_over(const struct cf_pv *const *items, size_t n, size_t depth)
{
    for (size_t i = 0; i < n; i++) {
        if (items[i]->kind < CF_PV_LIST) /* a scalar (the kinds before LIST): depth 1 here */
            continue;
        size_t d = cf_pv_depth(items[i]) + 1;
        if (d > depth)
            depth = d;
    }
    return depth;
}

static struct pv_slots *slots_new(struct cf_pvdoc *d, size_t cap, size_t per_item)
{
    if (cap > (SIZE_MAX - sizeof(struct pv_slots)) / (per_item * sizeof(struct cf_pv *)))
        return NULL;
    struct pv_slots *s = cf_pvdoc_alloc(d, sizeof *s + cap * per_item * sizeof(struct cf_pv *));
    if (s)
        s->cap = cap;
    return s;
}

enum cf_pv_grow cf_pv_seq_make(struct cf_pvdoc *d, enum cf_pv_kind kind, struct cf_pv *const *items, size_t n,
                               size_t max_depth, struct cf_pv **out)
{
    size_t depth = depth_over((const struct cf_pv *const *)items, n, 1);
    if (depth > max_depth)
        return CF_PV_TOO_DEEP;
    struct cf_pv *v = cf_pv_new(d, kind);
    if (!v)
        return CF_PV_NO_MEMORY;
    if (n) {
        struct pv_slots *s = slots_new(d, n, 1);
        if (!s)
            return CF_PV_NO_MEMORY;
        s->depth = depth;
        memcpy(s->v, items, n * sizeof *items);
        v->u.seq.v = s->v;
        v->u.seq.n = n;
    }
    *out = v;
    return CF_PV_GROWN;
}

/* Room for `more` items in a container of n whose slots start at first;
 * the (possibly new) block, or NULL when the budget is spent. */
static struct pv_slots *room_for(struct cf_pvdoc *d, struct cf_pv **first, size_t n, size_t more, size_t per_item)
{
    struct pv_slots *old = first ? slots_of(first) : NULL;
    if (more > SIZE_MAX / 2 - n)
        return NULL;
    if (old && n + more <= old->cap)
        return old;
    size_t cap = old ? old->cap * 2 : 0;
    if (cap < n + more)
        cap = n + more;
    struct pv_slots *s = slots_new(d, cap, per_item);
    if (!s)
        return NULL;
    s->depth = old ? old->depth : 1;
    if (n) {
        memcpy(s->v, old->v, n * sizeof *s->v);
        if (per_item == 2)
            memcpy(s->v + cap, old->v + old->cap, n * sizeof *s->v);
    }
    return s;
}

enum cf_pv_grow cf_pv_list_extend(struct cf_pvdoc *d, struct cf_pv *list, struct cf_pv *const *items, size_t n,
                                  size_t max_depth)
{
    if (!n)
        return CF_PV_GROWN;
    size_t depth = depth_over((const struct cf_pv *const *)items, n, cf_pv_depth(list));
    if (depth > max_depth)
        return CF_PV_TOO_DEEP;
    struct pv_slots *s = room_for(d, list->u.seq.v, list->u.seq.n, n, 1);
    if (!s)
        return CF_PV_NO_MEMORY;
    s->depth = depth;
    memcpy(s->v + list->u.seq.n, items, n * sizeof *items);
    list->u.seq.v = s->v;
    list->u.seq.n += n;
    return CF_PV_GROWN;
}

enum cf_pv_grow cf_pv_dict_extend(struct cf_pvdoc *d, struct cf_pv *dict, struct cf_pv *const *kv, size_t npairs,
                                  size_t max_depth)
{
    if (!npairs)
        return CF_PV_GROWN;
    size_t depth = depth_over((const struct cf_pv *const *)kv, 2 * npairs, cf_pv_depth(dict));
    if (depth > max_depth)
        return CF_PV_TOO_DEEP;
    size_t n = dict->u.dict.n;
    struct pv_slots *s = room_for(d, dict->u.dict.k, n, npairs, 2);
    if (!s)
        return CF_PV_NO_MEMORY;
    s->depth = depth;
    struct cf_pv **keys = s->v, **values = s->v + s->cap;
    for (size_t i = 0; i < npairs; i++) {
        keys[n + i] = kv[2 * i];
        values[n + i] = kv[2 * i + 1];
    }
    dict->u.dict.k = keys;
    dict->u.dict.v = values;
    dict->u.dict.n = n + npairs;
    return CF_PV_GROWN;
}

int cf_pv_hashable(const struct cf_pv *key)
{
    return key->kind != CF_PV_LIST && key->kind != CF_PV_DICT;
}

/* Python's dict sees True, 1 and 1.0 as one key: a number is its integer
 * when it has one. */
static int key_as_int(const struct cf_pv *k, int64_t *out)
{
    if (k->kind == CF_PV_INT)
        *out = k->u.i;
    else if (k->kind == CF_PV_BOOL)
        *out = k->u.b != 0;
    else if (k->kind == CF_PV_FLOAT && k->u.f >= -9223372036854775808.0 && k->u.f < 9223372036854775808.0 &&
             (double)(int64_t)k->u.f == k->u.f)
        *out = (int64_t)k->u.f;
    else
        return 0;
    return 1;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static uint64_t hash_bytes(const char *s, size_t len, uint64_t seed)
{
    uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    memcpy(&tail, s + i, len - i);
    return mix(h ^ tail);
}

static uint64_t key_hash(const struct cf_pv *k)
{
    int64_t i;
    if (k->kind != CF_PV_STR && key_as_int(k, &i))
        return mix((uint64_t)i);
    switch (k->kind) {
    case CF_PV_STR:
    case CF_PV_BYTES: {
        uint64_t *slot = cf_pv_key_hash_slot(k); /* 0: not yet computed */
        if (!*slot)
            *slot = hash_bytes(k->u.str.s, k->u.str.len, k->kind) | (uint64_t)1 << 63;
        return *slot;
    }
    case CF_PV_NONE:
        return 3;
    case CF_PV_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &k->u.f, sizeof bits);
        return mix(bits);
    }
    default: /* a tuple is one key per value the memo shares */
        return mix((uint64_t)(uintptr_t)k);
    }
}

static int key_equal(const struct cf_pv *a, const struct cf_pv *b)
{
    if (a == b)
        return 1;
    if (a->kind == CF_PV_STR && b->kind == CF_PV_STR)
        return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    int64_t x = 0, y = 0;
    int ai = key_as_int(a, &x), bi = key_as_int(b, &y);
    if (ai || bi)
        return ai && bi && x == y;
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case CF_PV_STR:
    case CF_PV_BYTES:
        return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    case CF_PV_NONE:
        return 1;
    case CF_PV_FLOAT:
        return a->u.f == b->u.f;
    default:
        return 0;
    }
}

/* Below this many keys a plain scan is cheaper than a table. */
#define PV_DEDUP_SCAN 8

int cf_pv_dict_dedup(struct cf_pvdoc *d, struct cf_pv *dict, uint32_t **scratch, size_t *scratch_cap)
{
    size_t n = dict->u.dict.n, kept = 0;
    struct cf_pv **k = dict->u.dict.k, **v = dict->u.dict.v;
    if (n < 2)
        return 0;
    if (n <= PV_DEDUP_SCAN) {
        for (size_t i = 0; i < n; i++) {
            size_t j = 0;
            while (j < kept && !key_equal(k[j], k[i]))
                j++;
            if (j == kept) {
                k[kept] = k[i];
                v[kept++] = v[i];
            } else {
                v[j] = v[i];
            }
        }
        dict->u.dict.n = kept;
        return 0;
    }
    if (n > UINT32_MAX / 4)
        return -1;
    size_t size = 16;
    while (size < 2 * n)
        size *= 2;
    if (size > *scratch_cap) {
        uint32_t *bigger = cf_pvdoc_charge(d, size * sizeof **scratch) == 0 ? realloc(*scratch, size * sizeof **scratch)
                                                                            : NULL;
        if (!bigger)
            return -1;
        *scratch = bigger;
        *scratch_cap = size;
    }
    uint32_t *table = *scratch;
    memset(table, 0xff, size * sizeof *table);
    for (size_t i = 0; i < n; i++) {
        size_t at = (size_t)key_hash(k[i]) & (size - 1);
        while (table[at] != UINT32_MAX && !key_equal(k[table[at]], k[i]))
            at = (at + 1) & (size - 1);
        if (table[at] == UINT32_MAX) {
            table[at] = (uint32_t)kept;
            k[kept] = k[i];
            v[kept++] = v[i];
        } else {
            v[table[at]] = v[i];
        }
    }
    dict->u.dict.n = kept;
    return 0;
}
