/* A safe reader of Python pickles (protocols 2 to 5) as torch's Flight
 * Recorder writes them: data only. Opcodes that build or call objects
 * (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, NEWOBJ, NEWOBJ_EX, INST, OBJ, PERSID,
 * BINPERSID, EXT1/2/4) are refused with their byte offset; nothing in the
 * input is ever executed. The memo is honoured, so a value stored once and
 * fetched many times is one node: the result is a graph, not a tree. Depth,
 * lengths, item counts and total memory are bounded. JSON documents are read
 * into the same values (cf_pv_from_json), so one reader serves both forms. */
#ifndef CCLFORGE_PICKLE_H
#define CCLFORGE_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cf_pv_kind { CF_PV_NONE, CF_PV_BOOL, CF_PV_INT, CF_PV_FLOAT, CF_PV_STR, CF_PV_BYTES, CF_PV_LIST, CF_PV_TUPLE, CF_PV_DICT };

/* One value. Strings are UTF-8 (a string that is not, surrogates included,
 * is refused, as Python refuses it) and not NUL-checked: len counts; they are
 * kept NUL-terminated for convenience. A LONG1 beyond 64 bits is
 * refused. Dict keys keep the pickle's order; a repeated key keeps the last. */
struct cf_pv {
    enum cf_pv_kind kind;
    union {
        int b;
        int64_t i;
        double f;
        struct { const char *s; size_t len; } str;      /* STR, BYTES */
        struct { struct cf_pv **v; size_t n; } seq;      /* LIST, TUPLE */
        struct { struct cf_pv **k, **v; size_t n; } dict; /* DICT */
    } u;
};

struct cf_pickle_limits {
    size_t max_bytes;  /* input size (0: 1 GiB) */
    size_t max_depth;  /* nesting (0: 64) */
    size_t max_items;  /* values in all (0: 64 Mi) */
    size_t max_memory; /* the arena (0: 16 x input + 64 MiB; torch's dumps take 5-10 x) */
};

/* The values of one document, in one arena freed at once. */
struct cf_pvdoc;

/* Reads a pickle; -1 with CF_ERR_FORMAT naming the byte offset and the opcode
 * (or what was wrong) on refused or malformed input. */
int cf_pickle_read(const void *data, size_t len, const struct cf_pickle_limits *lim, struct cf_pvdoc **out,
                   cf_error *err);
/* Reads JSON text into the same values (objects: DICT with STR keys; arrays:
 * LIST; numbers: INT when written whole, without fraction or exponent, and in
 * range, else FLOAT, so 5.0 stays the FLOAT a pickle would hold). */
int cf_pv_from_json(const char *text, size_t len, const struct cf_pickle_limits *lim, struct cf_pvdoc **out,
                    cf_error *err);
const struct cf_pv *cf_pvdoc_root(const struct cf_pvdoc *d);
void cf_pvdoc_free(struct cf_pvdoc *d);

/* Look-ups that never fail on a wrong kind: NULL / 0 / the fallback instead. */
const struct cf_pv *cf_pv_get(const struct cf_pv *dict, const char *key);
const char *cf_pv_str(const struct cf_pv *v);              /* STR's text, else NULL */
int cf_pv_int(const struct cf_pv *v, int64_t *out);        /* INT (or BOOL) -> 0, else -1 */
size_t cf_pv_len(const struct cf_pv *v);                   /* LIST/TUPLE/DICT size, else 0 */
const struct cf_pv *cf_pv_at(const struct cf_pv *seq, size_t i);

#ifdef __cplusplus
}
#endif
#endif
