/* JSON for plain data structs from a table of their fields: one writer, one
 * type-checked reader and one release for every struct so described, so that a
 * section written by `doctor --json` loads back unchanged and a wrong type in a
 * hand-written or hostile file is an error naming the key. */
#ifndef CCLFORGE_JSON_FIELDS_H
#define CCLFORGE_JSON_FIELDS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cf_jf_type {
    CF_JF_STR,    /* char * (NULL <-> null) */
    CF_JF_INT,    /* int */
    CF_JF_BOOL,   /* int 0/1 */
    CF_JF_U64,    /* uint64_t; UINT64_MAX <-> "unlimited" */
    CF_JF_LL,     /* long long (counters; -1 for unknown) */
    CF_JF_DOUBLE, /* double */
    CF_JF_STRVEC, /* struct strvec */
    CF_JF_ARRAY,  /* T *items at offset, size_t count at count_offset; T described by sub */
};

struct cf_jf_table;
struct cf_jf {
    const char *key;
    enum cf_jf_type type;
    size_t offset;
    const struct cf_jf_table *sub; /* CF_JF_ARRAY */
    size_t count_offset;           /* CF_JF_ARRAY */
};
struct cf_jf_table {
    const struct cf_jf *fields;
    size_t n;
    size_t size; /* sizeof the struct */
};

#define CF_JF(type, field, kind) { #field, kind, offsetof(type, field), NULL, 0 }
#define CF_JF_ARR(type, field, count, table) { #field, CF_JF_ARRAY, offsetof(type, field), &(table), offsetof(type, count) }
#define CF_JF_TABLE(type, fields) { fields, sizeof fields / sizeof fields[0], sizeof(type) }

/* A new object with every field of obj. */
cJSON *cf_jf_to_json(const struct cf_jf_table *t, const void *obj);
/* Fills obj (zeroed by the caller) from the object o; absent keys keep their zero.
 * where names o in errors ("fabric.ib[0]"). -1 with a CF_ERR_FORMAT error on a wrong
 * type (obj may then hold part of the data: release it). */
int cf_jf_from_json(const struct cf_jf_table *t, const cJSON *o, void *obj, const char *where, cf_error *err);
/* Frees what the fields own (strings, vectors, arrays) and zeroes them. */
void cf_jf_release(const struct cf_jf_table *t, void *obj);

#ifdef __cplusplus
}
#endif
#endif
