/* The document of values and its arena: chunks allocated as the readers need
 * them and freed together, every byte counted against one budget, so a
 * hostile input ends with an error at the limit, never with memory taken
 * out of proportion. */
#include <stdlib.h>
#include <string.h>

#include "hang/pv_doc.h"

#define PV_CHUNK_FIRST ((size_t)16 << 10)
#define PV_CHUNK_MAX ((size_t)1 << 20)

struct pv_chunk {
    struct pv_chunk *next;
    size_t size, used;
    uint64_t data[]; /* 8-aligned */
};

struct cf_pvdoc {
    struct pv_chunk *chunks; /* the one being filled first */
    size_t next_chunk;       /* the size of the next ordinary chunk */
    size_t charged, budget;
    struct cf_pv *root;
};

struct cf_pickle_limits cf_pv_limits_resolve(const struct cf_pickle_limits *lim, size_t len)
{
    struct cf_pickle_limits r = { 0 };
    if (lim)
        r = *lim;
    if (!r.max_bytes)
        r.max_bytes = (size_t)1 << 30;
    if (!r.max_depth)
        r.max_depth = 64;
    if (!r.max_items)
        r.max_items = (size_t)64 << 20;
    if (!r.max_memory) {
        /* a value is 32 bytes and each item of a container a pointer,
         * where the pickle spends 1 to 3 bytes on a BINGET or a BININT2 */
        size_t scaled = len > SIZE_MAX / 32 ? SIZE_MAX / 2 : 16 * len;
        r.max_memory = scaled + ((size_t)64 << 20);
    }
    return r;
}

struct cf_pvdoc *cf_pvdoc_new(size_t budget)
{
    struct cf_pvdoc *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->next_chunk = PV_CHUNK_FIRST;
    d->budget = budget;
    d->charged = sizeof *d;
    return d;
}

void cf_pvdoc_set_root(struct cf_pvdoc *d, struct cf_pv *root)
{
    d->root = root;
}

const struct cf_pv *cf_pvdoc_root(const struct cf_pvdoc *d)
{
    return d ? d->root : NULL;
}

void cf_pvdoc_free(struct cf_pvdoc *d)
{
    if (!d)
        return;
    for (struct pv_chunk *c = d->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(d);
}

int cf_pvdoc_charge(struct cf_pvdoc *d, size_t bytes)
{
    if (d->charged > d->budget || bytes > d->budget - d->charged)
        return -1;
    d->charged += bytes;
    return 0;
}

int cf_pvdoc_grow(struct cf_pvdoc *d, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t want = *cap ? *cap * 2 : 16;
    if (want < need)
        want = need;
    if (want > SIZE_MAX / elem || cf_pvdoc_charge(d, (want - *cap) * elem) != 0)
        return -1;
    void *bigger = realloc(*arr, want * elem);
    if (!bigger)
        return -1;
    memset((char *)bigger + *cap * elem, 0, (want - *cap) * elem);
    *arr = bigger;
    *cap = want;
    return 0;
}

static struct pv_chunk *chunk_new(struct cf_pvdoc *d, size_t data_size)
{
    size_t total = sizeof(struct pv_chunk) + data_size;
    if (total < data_size || cf_pvdoc_charge(d, total) != 0)
        return NULL;
    struct pv_chunk *c = malloc(total);
    if (!c)
        return NULL;
    c->size = data_size;
    c->used = 0;
    return c;
}

void *cf_pvdoc_alloc(struct cf_pvdoc *d, size_t size)
{
    if (size > SIZE_MAX - 8)
        return NULL;
    size = (size + 7) & ~(size_t)7;
    struct pv_chunk *c = d->chunks;
    if (!c || c->size - c->used < size) {
        if (size > d->next_chunk / 4) {
            /* a large block gets a chunk of its own, behind the one being
             * filled, whose room stays in use */
            struct pv_chunk *big = chunk_new(d, size);
            if (!big)
                return NULL;
            if (c) {
                big->next = c->next;
                c->next = big;
            } else {
                big->next = NULL;
                d->chunks = big;
            }
            big->used = size;
            return big->data;
        }
        struct pv_chunk *fresh = chunk_new(d, d->next_chunk);
        if (!fresh) /* near the budget's end: only what this block needs */
            fresh = chunk_new(d, size);
        if (!fresh)
            return NULL;
        if (d->next_chunk < PV_CHUNK_MAX)
            d->next_chunk *= 2;
        fresh->next = c;
        d->chunks = c = fresh;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    return p;
}

struct cf_pv *cf_pv_new(struct cf_pvdoc *d, enum cf_pv_kind kind)
{
    struct cf_pv *v = cf_pvdoc_alloc(d, sizeof *v);
    if (v) {
        memset(v, 0, sizeof *v);
        v->kind = kind;
    }
    return v;
}

struct cf_pv *cf_pv_new_text(struct cf_pvdoc *d, enum cf_pv_kind kind, const void *s, size_t len)
{
    if (len > SIZE_MAX - sizeof(struct cf_pv) - sizeof(uint64_t) - 1)
        return NULL;
    /* the value, its hash as a dict key (pv_container.c), its bytes: one block */
    struct cf_pv *v = cf_pvdoc_alloc(d, sizeof *v + sizeof(uint64_t) + len + 1);
    if (!v)
        return NULL;
    memset(v + 1, 0, sizeof(uint64_t));
    char *text = (char *)(v + 1) + sizeof(uint64_t);
    if (len)
        memcpy(text, s, len);
    text[len] = '\0';
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->u.str.s = text;
    v->u.str.len = len;
    return v;
}
