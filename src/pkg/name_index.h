/* A hash index from names to numbers (member names to member indices,
 * directory prefixes, RECORD paths): every pass over a wheel's 70,000
 * members or 40,000 RECORD lines stays linear. Keys are not copied: they must
 * outlive the index. Internal to src/pkg.
 *
 * The hash is incremental: the hashes of every prefix of a name come out of
 * one pass over it (cf_fnv1a64_more), so indexing each directory of a deep
 * path costs its length once, not once per directory. */
#ifndef CCLFORGE_PKG_NAME_INDEX_H
#define CCLFORGE_PKG_NAME_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/fnv1a.h"

struct cf_name_index {
    struct cf_name_slot { /* 16 bytes: an index of 200,000 names is 8 MB at most */
        const char *key;  /* NULL: empty */
        uint32_t len;
        uint32_t value;
    } *slots;
    size_t cap; /* a power of two, or 0 */
    size_t n;
    uint64_t seed; /* random per index: names crafted to collide for one seed do not for another */
};

#define CF_NAME_INDEX_INIT { NULL, 0, 0, 0 }

/* Adds key[0..len) -> value. Returns 1 when added, 0 when the key was there
 * already (its value is left as it was and put in *existing when not NULL). */
int cf_name_index_add(struct cf_name_index *ix, const char *key, size_t len, size_t value, size_t *existing);
/* 1 and *value when key[0..len) is there, else 0. */
int cf_name_index_find(struct cf_name_index *ix, const char *key, size_t len, size_t *value);
void cf_name_index_release(struct cf_name_index *ix);
/* Room for n keys before any growth (each growth rehashes every key): for an
 * index whose size is known, e.g. one key per member. */
void cf_name_index_reserve(struct cf_name_index *ix, size_t n);

/* The incremental form: start from cf_name_hash_start(ix), feed bytes with
 * cf_fnv1a64_more (cclforge/fnv1a.h); the raw hash of key[0..len) goes to the
 * _raw calls. */
uint64_t cf_name_hash_start(struct cf_name_index *ix);
int cf_name_index_add_raw(struct cf_name_index *ix, const char *key, size_t len, uint64_t raw, size_t value,
                          size_t *existing);
int cf_name_index_find_raw(const struct cf_name_index *ix, const char *key, size_t len, uint64_t raw, size_t *value);

#endif
