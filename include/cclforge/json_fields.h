/* JSON for plain data structs from a table of their fields: one writer (keys in
 * the table's order), one strict reader and one release for every struct so
 * described, so that a document loads back unchanged and a wrong type or an
 * impossible value in a hand-written or hostile file is an error naming the
 * field as a path ("rows[3].bytes"). */
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
    CF_JF_BOOL_LONG, /* long 0/1 */
    CF_JF_U64,    /* uint64_t; UINT64_MAX <-> "unlimited" */
    CF_JF_LL,     /* long long (counters; -1 for unknown) */
    CF_JF_LONG,   /* long */
    CF_JF_SIZE,   /* size_t */
    CF_JF_DOUBLE, /* double */
    CF_JF_STRVEC, /* struct strvec */
    CF_JF_FIXED,  /* char[size]: a longer string is refused, never cut */
    CF_JF_ENUM,   /* int written as name(v); read back from the name, v in [0, nnames) */
    CF_JF_RANK,   /* int: a rank of the reader's world, or -1 (not one rank's) */
    CF_JF_LATER,  /* the caller's: null in its place for it to replace, never read (CF_JF_SLOT) */
    CF_JF_ARRAY,  /* T *items at offset, size_t count at count_offset; T described by sub */
    CF_JF_PTR,    /* T *, one object described by sub or NULL <-> null */
    CF_JF_OBJECT, /* a T in place, described by sub */
};

/* How a field is written and read beyond its type. */
enum {
    CF_JF_NULL_IF_NEGATIVE = 1, /* a number (or bool) below 0 is unknown: null */
    CF_JF_OMIT_NULL = 2,        /* a NULL string is left out */
    CF_JF_EMPTY_IF_NULL = 4,    /* a NULL string is written "" */
    CF_JF_CALLER_READS = 8,     /* written, but the caller reads it (a check the table cannot say) */
    CF_JF_REQUIRED = 16,        /* the reader refuses an object without it (or with null) */
    CF_JF_NULLABLE = 32,        /* ... though null is one of its values */
    CF_JF_IN_PLACE = 64,        /* CF_JF_ARRAY: T items[max] in the struct itself, not a T * */
};

/* One field: its key, type and place in the struct, and for the reader the
 * range a number must lie in (min < max; a whole number's type bounds it
 * otherwise) or the most items an array may hold (max). */
#define CF_JF_KEY_MAX 28
struct cf_jf {
    char key[CF_JF_KEY_MAX];
    enum cf_jf_type type;
    unsigned sub;        /* CF_JF_ARRAY, CF_JF_PTR, CF_JF_OBJECT: the items' table, subs[sub] of the row's table */
    size_t offset;
    size_t count_offset; /* CF_JF_ARRAY */
    size_t size;         /* CF_JF_FIXED: the buffer's size */
    unsigned flags;
    double min, max;
    const char *(*name)(int v); /* CF_JF_ENUM */
    int nnames;
};
struct cf_jf_table {
    const struct cf_jf *fields;
    size_t n;
    size_t size; /* sizeof the struct */
    const struct cf_jf_table *const *subs; /* the tables of its CF_JF_ARRAY fields */
    const void *blank; /* an array's new item before it is read (NULL: zeroes) */
};

#define CF_JF(S, field, kind) { .key = #field, .type = kind, .offset = offsetof(S, field) }
#define CF_JF_ARR(S, field, count, sub_) \
    { .key = #field, .type = CF_JF_ARRAY, .sub = sub_, .offset = offsetof(S, field), .count_offset = offsetof(S, count) }
#define CF_JF_PTR_TO(S, field, sub_) { .key = #field, .type = CF_JF_PTR, .sub = sub_, .offset = offsetof(S, field) }
/* a field whose key is not its member's name, with what else it needs (.min, .max, .flags, ...) */
#define CF_JF_AS(S, key_, field, kind, ...) { .key = key_, .type = kind, .offset = offsetof(S, field), __VA_ARGS__ }
/* a key in its place whose value the caller writes (and reads) */
#define CF_JF_SLOT(key_) { .key = key_, .type = CF_JF_LATER }
#define CF_JF_TABLE(type, fields) { fields, sizeof fields / sizeof fields[0], sizeof(type), NULL, NULL }
#define CF_JF_TABLE_SUBS(type, fields, subs) { fields, sizeof fields / sizeof fields[0], sizeof(type), subs, NULL }
#define CF_JF_TABLE_BLANK(type, fields, blank) { fields, sizeof fields / sizeof fields[0], sizeof(type), NULL, blank }

/* A new object with every field of obj; cf_jf_add adds them to o, in the table's order. */
cJSON *cf_jf_to_json(const struct cf_jf_table *t, const void *obj);
void cf_jf_add(cJSON *o, const struct cf_jf_table *t, const void *obj);

/* Who reads: refusals read "<doc>: \"<path>\" <what><advice>", the path naming the
 * field ("rows[3].bytes"); ranks bounds the CF_JF_RANK fields. */
struct cf_jf_reader {
    cf_error *err;
    const char *doc;    /* "smoke document"; NULL: the caller names the document */
    const char *advice; /* " (write it as cclforge smoke --json does)", or "" */
    int ranks;
    int bare;           /* paths without the quotes */
};
/* Fills obj (zeroed or set to its defaults by the caller) from the object o at
 * path ("" for a document); absent or null keys keep their value. -1 with a
 * CF_ERR_FORMAT error on a wrong type or a value out of range (obj may then
 * hold part of the data: release it). */
int cf_jf_read(const struct cf_jf_reader *r, const struct cf_jf_table *t, const cJSON *o, void *obj, const char *path);
/* cf_jf_read as "survey JSON" at where ("fabric.ib[0]"). */
int cf_jf_from_json(const struct cf_jf_table *t, const cJSON *o, void *obj, const char *where, cf_error *err);
/* -1, with a CF_ERR_FORMAT error in the reader's words. */
int cf_jf_refuse(const struct cf_jf_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 when every number of got (at path) is want's, else -1 refusing the first
 * that is not: a count a document states beside what it holds. */
int cf_jf_same_numbers(const struct cf_jf_reader *r, const struct cf_jf_table *t, const void *got, const void *want,
                       const char *path);
/* Frees what the fields own (strings, vectors, arrays, objects) and zeroes them. */
void cf_jf_release(const struct cf_jf_table *t, void *obj);

#ifdef __cplusplus
}
#endif
#endif
