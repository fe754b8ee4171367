/* The closure check's answer (closure.c) remembered on disk, through the
 * dependency cache (cclforge/depcache.h): a warm doctor with torch otherwise
 * resolves libtorch_cuda.so's whole closure and reads every symbol table in it
 * (~1,900 stat calls and 15 ms of a 20 ms run) to learn what it learnt last
 * time. The answer stays valid while everything it was read from is as it
 * was: every object's file, every candidate rejected for its content, every
 * directory whose existence a search asked (a library added to or removed
 * from one changes its mtime), the ld.so.cache, the glibc files, and this
 * executable. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/depcache.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "survey/closure_cache.h"

/* What else decides the answer: the question, then the environment the
 * loader reads and the host (cf_ldso_env_key). */
void cf_closure_cache_key(const char *path, const char *soname, struct strbuf *key)
{
    cf_sb_addf(key, "path=%s\nsoname=%s\n", path, soname ? soname : "");
    cf_ldso_env_key(key);
}

int cf_closure_cache_get(const struct strbuf *key, struct closure_answer *a)
{
    struct strbuf value = STRBUF_INIT;
    if (!cf_depcache_get("closure", key->buf, key->len, &value)) {
        cf_sb_release(&value);
        return 0;
    }
    cJSON *doc = cJSON_ParseWithLength(value.buf, value.len);
    const char *resolved = NULL;
    int needed = 0;
    int ok = cJSON_IsObject(doc) && cf_json_get_bool(doc, "needed", &needed) == 1 &&
             cf_json_get_str(doc, "resolved", &resolved) >= 0 && cf_json_get_strvec(doc, "missing", &a->missing) == 1 &&
             cf_json_get_strvec(doc, "undefined", &a->undefined) == 1;
    if (ok) {
        a->needed = needed;
        a->resolved = resolved ? cf_strdup(resolved) : NULL;
    } else { /* not ours: asked again, and stored anew */
        cf_strvec_clear(&a->missing);
        cf_strvec_clear(&a->undefined);
    }
    cJSON_Delete(doc);
    cf_sb_release(&value);
    return ok;
}

void cf_closure_cache_put(const struct strbuf *key, const struct closure_answer *a, const struct cf_ldso_result *res)
{
    struct strvec deps = STRVEC_INIT;
    char *self = cf_self_exe(); /* another cclforge may answer otherwise */
    if (!self)
        return;
    cf_strvec_push(&deps, self);
    free(self);
    if (cf_ldso_result_depends(res, &deps) != 0) {
        cf_strvec_clear(&deps);
        return;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddBoolToObject(doc, "needed", a->needed);
    cf_json_put_str(doc, "resolved", a->resolved);
    cf_json_put_strvec(doc, "missing", &a->missing);
    cf_json_put_strvec(doc, "undefined", &a->undefined);
    char *text = cJSON_PrintUnformatted(doc);
    if (text)
        cf_depcache_put("closure", key->buf, key->len, text, strlen(text), (const char *const *)cf_strvec_argv(&deps));
    cJSON_free(text);
    cJSON_Delete(doc);
    cf_strvec_clear(&deps);
}

void cf_closure_answer_release(struct closure_answer *a)
{
    free(a->resolved);
    cf_strvec_clear(&a->missing);
    cf_strvec_clear(&a->undefined);
    memset(a, 0, sizeof *a);
}
