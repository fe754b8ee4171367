/* What the two readers of values (pickle.c, pv_json.c) share: the document's
 * arena with its memory budget, and the containers built in it. Private to
 * src/hang/. */
#ifndef CCLFORGE_HANG_PV_DOC_H
#define CCLFORGE_HANG_PV_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/pickle.h"

/* The limits with every 0 replaced by its default for an input of len bytes. */
struct cf_pickle_limits cf_pv_limits_resolve(const struct cf_pickle_limits *lim, size_t len);

/* A document whose arena may hold up to budget bytes; NULL on out of memory. */
struct cf_pvdoc *cf_pvdoc_new(size_t budget);
void cf_pvdoc_set_root(struct cf_pvdoc *d, struct cf_pv *root);
/* size bytes from the arena, 8-aligned, not zeroed; NULL when the budget is spent
 * (or malloc fails). Freed only with the document. */
void *cf_pvdoc_alloc(struct cf_pvdoc *d, size_t size);
/* Counts bytes a reader holds outside the arena (its stack, memo, scratch)
 * against the same budget; -1 when they would pass it. */
int cf_pvdoc_charge(struct cf_pvdoc *d, size_t bytes);
/* Grows a reader's own malloc'd array *arr of *cap elements of elem bytes to
 * hold need (new elements zeroed), charging the growth; -1 over the budget. */
int cf_pvdoc_grow(struct cf_pvdoc *d, void **arr, size_t *cap, size_t need, size_t elem);

/* A new value of a kind (its payload zero); NULL when the budget is spent. */
struct cf_pv *cf_pv_new(struct cf_pvdoc *d, enum cf_pv_kind kind);
/* A STR or BYTES value holding a copy of len bytes, NUL-terminated. Between
 * the value and its bytes sits a word for its hash as a dict key, computed
 * once when first asked (cf_pv_key_hash_slot): torch's keys are one string
 * each, fetched through the memo for every entry. */
struct cf_pv *cf_pv_new_text(struct cf_pvdoc *d, enum cf_pv_kind kind, const void *s, size_t len);

static inline uint64_t *cf_pv_key_hash_slot(const struct cf_pv *text_value)
{
    return (uint64_t *)(void *)(uintptr_t)(text_value + 1);
}

/* The offset of the first byte of text that does not start a valid UTF-8
 * character, len when all of it is UTF-8. */
size_t cf_pv_utf8_invalid_at(const char *text, size_t len);

/* How containers grow, and why one cannot. */
enum cf_pv_grow { CF_PV_GROWN = 0, CF_PV_NO_MEMORY, CF_PV_TOO_DEEP };

/* Nesting of a value: 0 for a scalar, 1 for an empty container, else one more
 * than its deepest item at the time that item was placed. A container
 * changed after it was itself placed (pickle's memo allows it, and cycles)
 * may hold more than its holder recorded, so a walk over values must bound
 * itself; the readers never recurse over the graph. */
size_t cf_pv_depth(const struct cf_pv *v);
/* A LIST or TUPLE of n items (copied), no deeper than max_depth. */
enum cf_pv_grow cf_pv_seq_make(struct cf_pvdoc *d, enum cf_pv_kind kind, struct cf_pv *const *items, size_t n,
                               size_t max_depth, struct cf_pv **out);
/* Appends n items to a LIST. */
enum cf_pv_grow cf_pv_list_extend(struct cf_pvdoc *d, struct cf_pv *list, struct cf_pv *const *items, size_t n,
                                  size_t max_depth);
/* Appends n key/value pairs (kv[2i] the key, kv[2i+1] its value) to a DICT,
 * repeated keys included: cf_pv_dict_dedup makes them one. */
enum cf_pv_grow cf_pv_dict_extend(struct cf_pvdoc *d, struct cf_pv *dict, struct cf_pv *const *kv, size_t npairs,
                                  size_t max_depth);
/* A key the readers take: a scalar or a tuple (Python's hashable values among
 * these kinds); a LIST or DICT is not. */
int cf_pv_hashable(const struct cf_pv *key);
/* Makes each repeated key of a DICT one entry, where the key first stood,
 * holding the last value given (Python's dict). scratch is the caller's
 * reusable table (*scratch_cap entries, grown here, charged to the budget);
 * -1 when the budget is spent. */
int cf_pv_dict_dedup(struct cf_pvdoc *d, struct cf_pv *dict, uint32_t **scratch, size_t *scratch_cap);

#endif
