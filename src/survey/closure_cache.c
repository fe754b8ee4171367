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
#include <sys/stat.h>
#include <sys/utsname.h>

#include <cjson/cJSON.h>

#include "cclforge/depcache.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "survey/closure_cache.h"

/* What else decides the answer: the question, the environment the loader
 * reads and the host (a cache root shared by hosts of other CPUs: hwcaps). */
void cf_closure_cache_key(const char *path, const char *soname, struct strbuf *key)
{
    static const char *const vars[] = { "LD_LIBRARY_PATH", "GLIBC_TUNABLES" };
    struct utsname u;
    int named = uname(&u) == 0;
    cf_sb_addf(key, "path=%s\nsoname=%s\nhost=%s %s\n", path, soname ? soname : "", named ? u.nodename : "?",
               named ? u.machine : "?");
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        cf_sb_addf(key, "%s%s%s\n", vars[i], v ? "=" : " unset", v ? v : "");
    }
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

/* A dependency that may be absent ("?": then it must stay absent). */
static void depend(struct strvec *deps, const char *path)
{
    char *d = cf_asprintf("?%s", path);
    if (!cf_strvec_contains(deps, d))
        cf_strvec_push(deps, d);
    free(d);
}

/* An absent path stays absent while its nearest existing ancestor directory
 * is unchanged (creating a child changes the parent's mtime): hwcaps
 * subdirectories that do not exist, times every search directory, are most
 * of the inputs, and this keeps a warm check to one stat per directory. */
static void depend_nearest(struct strvec *deps, const char *path)
{
    char *p = cf_strdup(path);
    struct stat st;
    while (stat(p, &st) != 0 && strcmp(p, "/") != 0 && strcmp(p, ".") != 0) {
        char *up = cf_dirname(p);
        free(p);
        p = up;
    }
    depend(deps, p);
    free(p);
}

void cf_closure_cache_put(const struct strbuf *key, const struct closure_answer *a, const struct cf_ldso_result *res)
{
    struct strvec deps = STRVEC_INIT;
    char *self = cf_self_exe(); /* another cclforge may answer otherwise */
    if (!self)
        return;
    cf_strvec_push(&deps, self);
    free(self);
    for (size_t i = 0; i < res->n_objects; i++)
        depend(&deps, res->objects[i].file ? res->objects[i].file : res->objects[i].path);
    /* a file rejected for what it holds (another class, machine, a bad header)
     * may be rewritten in place, which its directory's mtime does not show */
    for (size_t i = 0; i < res->n_nodes; i++)
        for (size_t k = 0; k < res->nodes[i].n_considered; k++) {
            const struct cf_ldso_candidate *c = &res->nodes[i].considered[k];
            if (c->list < 0 && c->path && c->reject != CF_LDSO_REJ_NONE && c->reject != CF_LDSO_REJ_NOT_FOUND &&
                c->reject != CF_LDSO_REJ_DIR_MISSING)
                depend(&deps, c->path);
        }
    for (size_t i = 0; i < res->inputs.n; i++)
        depend_nearest(&deps, res->inputs.v[i]);
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
