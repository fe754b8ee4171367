/* Small cJSON helpers shared by the library's JSON readers and writers and
 * the CLI: the one home of typed reads (strict readers such as the survey's
 * report the key; lenient ones such as manifests ignore a wrong type). */
#ifndef CCLFORGE_JSON_H
#define CCLFORGE_JSON_H

#include <cjson/cJSON.h>

#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* o[key] = v as a string, or null when v is NULL. */
void cf_json_put_str(cJSON *o, const char *key, const char *v);
/* A new array of sv's strings. */
cJSON *cf_json_strvec(const struct strvec *sv);
/* o[key] = the array of sv's strings. */
void cf_json_put_strvec(cJSON *o, const char *key, const struct strvec *sv);

/* Typed reads of o[key] (o may be NULL or a non-object: nothing there). Each
 * returns 1 and sets *out when the value has the type, 0 and leaves *out
 * alone when the key is absent or null, -1 and leaves *out alone when the
 * value has another type. */
int cf_json_get_str(const cJSON *o, const char *key, const char **out); /* *out points into o */
int cf_json_get_num(const cJSON *o, const char *key, double *out);
int cf_json_get_bool(const cJSON *o, const char *key, int *out);
/* Appends the strings of the array o[key]; -1 (and nothing appended) when it
 * is not an array of strings only. */
int cf_json_get_strvec(const cJSON *o, const char *key, struct strvec *out);
/* Lenient shorthands: the value, or NULL / dflt when absent or of another type. */
const char *cf_json_str(const cJSON *o, const char *key);
double cf_json_num(const cJSON *o, const char *key, double dflt);

#ifdef __cplusplus
}
#endif
#endif
