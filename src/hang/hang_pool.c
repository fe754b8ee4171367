/* One copy of each string the dumps repeat: a million entries name a few
 * groups, ops, states, sizes and stacks, so each entry keeps pointers into
 * this pool (an open-addressing set, freed at once) and equal strings are one
 * pointer, which the analysis compares first. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/fnv1a.h"
#include "cclforge/hang.h"

struct cf_hang_pool {
    char **slot;
    size_t cap, n;
};

static void grow(struct cf_hang_pool *p)
{
    size_t cap = p->cap ? 2 * p->cap : 1024;
    char **slot = cf_xcalloc(cap, sizeof *slot);
    for (size_t i = 0; i < p->cap; i++)
        if (p->slot[i]) {
            size_t h = (size_t)cf_fnv1a64(p->slot[i], strlen(p->slot[i])) & (cap - 1);
            while (slot[h])
                h = (h + 1) & (cap - 1);
            slot[h] = p->slot[i];
        }
    free(p->slot);
    p->slot = slot;
    p->cap = cap;
}

const char *cf_hang_intern(struct cf_hang_result *r, const char *s, size_t len)
{
    if (!s)
        return NULL;
    if (!r->pool)
        r->pool = cf_xcalloc(1, sizeof *r->pool);
    struct cf_hang_pool *p = r->pool;
    if (2 * (p->n + 1) > p->cap)
        grow(p);
    size_t h = (size_t)cf_fnv1a64(s, len) & (p->cap - 1);
    for (; p->slot[h]; h = (h + 1) & (p->cap - 1))
        if (!strncmp(p->slot[h], s, len) && p->slot[h][len] == '\0')
            return p->slot[h];
    p->slot[h] = cf_strndup(s, len);
    p->n++;
    return p->slot[h];
}

void cf_hang_pool_free(struct cf_hang_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->cap; i++)
        free(p->slot[i]);
    free(p->slot);
    free(p);
}
