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

/* One field: its key, type and place in the struct (a CF_JF_ARRAY's
 * sub-table by number). */
#define CF_JF_KEY_MAX 28
struct cf_jf {
    char key[CF_JF_KEY_MAX];
    enum cf_jf_type type;
    unsigned sub;        /* CF_JF_ARRAY: the items' table, subs[sub] of the row's table */
    size_t offset;
    size_t count_offset; /* CF_JF_ARRAY */
};
struct cf_jf_table {
    const struct cf_jf *fields;
    size_t n;
    size_t size; /* sizeof the struct */
    const struct cf_jf_table *const *subs; /* the tables of its CF_JF_ARRAY fields */
};

#define CF_JF(type, field, kind) { #field, kind, 0, offsetof(type, field), 0 }
#define CF_JF_ARR(type, field, count, sub) { #field, CF_JF_ARRAY, sub, offsetof(type, field), offsetof(type, count) }
#define CF_JF_TABLE(type, fields) { fields, sizeof fields / sizeof fields[0], sizeof(type), NULL }
#define CF_JF_TABLE_SUBS(type, fields, subs) { fields, sizeof fields / sizeof fields[0], sizeof(type), subs }

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
