/* Small cJSON helpers shared by the library's JSON writers and the CLI. */
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

#ifdef __cplusplus
}
#endif
#endif
