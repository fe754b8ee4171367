/* Open addressing with linear probing, kept under half full. The hash is
 * FNV-1a from a random basis, then a final mix so the slot (the low bits)
 * depends on every byte: a wheel's names are chosen by its author, and names
 * crafted to share slots would turn every lookup into a long probe. */
#include "pkg/name_index.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/fnv1a.h"
#include "cclforge/strbuf.h"
#include "cclforge/syscompat.h"

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

uint64_t cf_name_hash_start(struct cf_name_index *ix)
{
    if (!ix->seed) {
        uint64_t seed = 0;
        if (cf_getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            seed = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
        }
        ix->seed = seed | 1;
    }
    return CF_FNV1A64_BASIS ^ ix->seed;
}

static struct cf_name_slot *probe(struct cf_name_slot *slots, size_t cap, const char *key, size_t len, uint64_t raw)
{
    for (size_t i = (size_t)mix(raw) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        struct cf_name_slot *s = &slots[i];
        if (!s->key || (s->len == len && memcmp(s->key, key, len) == 0))
            return s;
    }
}

/* The hashes are not kept (16-byte slots): growing recomputes them, which
 * costs the keys' length once per doubling, linear overall. */
static void grow_to(struct cf_name_index *ix, size_t cap)
{
    struct cf_name_slot *slots = cf_xcalloc(cap, sizeof *slots);
    uint64_t start = cf_name_hash_start(ix);
    for (size_t i = 0; i < ix->cap; i++)
        if (ix->slots[i].key) {
            const struct cf_name_slot *s = &ix->slots[i];
            *probe(slots, cap, s->key, s->len, cf_fnv1a64_more(start, s->key, s->len)) = *s;
        }
    free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
}

static void grow(struct cf_name_index *ix)
{
    grow_to(ix, ix->cap ? ix->cap * 2 : 64);
}

void cf_name_index_reserve(struct cf_name_index *ix, size_t n)
{
    size_t cap = ix->cap ? ix->cap : 64;
    while (cap < 2 * (n + 1) && cap < ((size_t)1 << 40))
        cap *= 2;
    if (cap > ix->cap)
        grow_to(ix, cap);
}

int cf_name_index_add_raw(struct cf_name_index *ix, const char *key, size_t len, uint64_t raw, size_t value,
                          size_t *existing)
{
    if ((ix->n + 1) * 2 > ix->cap)
        grow(ix);
    struct cf_name_slot *s = probe(ix->slots, ix->cap, key, len, raw);
    if (s->key) {
        if (existing)
            *existing = s->value;
        return 0;
    }
    *s = (struct cf_name_slot){ key, (uint32_t)len, (uint32_t)value };
    ix->n++;
    return 1;
}

int cf_name_index_find_raw(const struct cf_name_index *ix, const char *key, size_t len, uint64_t raw, size_t *value)
{
    if (!ix->cap)
        return 0;
    const struct cf_name_slot *s = probe(ix->slots, ix->cap, key, len, raw);
    if (!s->key)
        return 0;
    if (value)
        *value = s->value;
    return 1;
}

int cf_name_index_add(struct cf_name_index *ix, const char *key, size_t len, size_t value, size_t *existing)
{
    uint64_t raw = cf_fnv1a64_more(cf_name_hash_start(ix), key, len);
    return cf_name_index_add_raw(ix, key, len, raw, value, existing);
}

int cf_name_index_find(struct cf_name_index *ix, const char *key, size_t len, size_t *value)
{
    uint64_t raw = cf_fnv1a64_more(cf_name_hash_start(ix), key, len);
    return cf_name_index_find_raw(ix, key, len, raw, value);
}

void cf_name_index_release(struct cf_name_index *ix)
{
    free(ix->slots);
    memset(ix, 0, sizeof *ix);
}
