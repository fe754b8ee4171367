/* What an answer of the loader emulation depends on, as the dependency cache
 * (cclforge/depcache.h) takes it: the files a later run must find unchanged
 * for a remembered answer to stay true, and the environment it was asked in
 * (doctor's closure check, survey/closure_cache.c). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "cclforge/depcache.h"
#include "cclforge/fs.h"
#include "cclforge/ldso.h"

void cf_ldso_env_key(struct strbuf *key)
{
    /* what the loader reads from the environment, and the host (a cache root
     * shared by hosts of other CPUs: hwcaps) */
    static const char *const vars[] = { "LD_LIBRARY_PATH", "GLIBC_TUNABLES" };
    struct utsname u;
    int named = uname(&u) == 0;
    cf_sb_addf(key, "host=%s %s\n", named ? u.nodename : "?", named ? u.machine : "?");
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            cf_sb_addf(key, "%s=%s\n", vars[i], v);
        else
            cf_sb_addf(key, "%s unset\n", vars[i]);
    }
}

int cf_ldso_candidate_read(const struct cf_ldso_candidate *c)
{
    return c->list < 0 && c->path && c->reject != CF_LDSO_REJ_NONE && c->reject != CF_LDSO_REJ_NOT_FOUND &&
           c->reject != CF_LDSO_REJ_DIR_MISSING;
}

static void depend(struct strvec *deps, const char *path)
{
    char *d = cf_asprintf("?%s", path);
    if (!cf_strvec_contains(deps, d))
        cf_strvec_push(deps, d);
    free(d);
}

static void depend_nearest(struct strvec *deps, const char *path)
{
    /* An absent path stays absent while its nearest existing ancestor
     * directory is unchanged (creating a child changes the parent's mtime):
     * hwcaps subdirectories that do not exist, times every search directory,
     * are most of the inputs, and this keeps a warm check to one stat each. */
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

int cf_ldso_result_depends(const struct cf_ldso_result *res, struct strvec *deps)
{
    /* each input costs a stat on every warm run, and a search of the list
     * here: past the dependency cache's bound it would not be kept anyway */
    size_t n = deps->n + res->n_objects + res->inputs.n;
    for (size_t i = 0; i < res->n_nodes; i++)
        for (size_t k = 0; k < res->nodes[i].n_considered; k++)
            n += (size_t)cf_ldso_candidate_read(&res->nodes[i].considered[k]);
    if (n > CF_DEPCACHE_MAX_DEPS)
        return -1;
    for (size_t i = 0; i < res->n_objects; i++)
        depend(deps, res->objects[i].file ? res->objects[i].file : res->objects[i].path);
    /* a file rejected for what it holds (another class, machine, a bad header)
     * may be rewritten in place, which its directory's mtime does not show */
    for (size_t i = 0; i < res->n_nodes; i++)
        for (size_t k = 0; k < res->nodes[i].n_considered; k++)
            if (cf_ldso_candidate_read(&res->nodes[i].considered[k]))
                depend(deps, res->nodes[i].considered[k].path);
    for (size_t i = 0; i < res->inputs.n; i++)
        depend_nearest(deps, res->inputs.v[i]);
    return 0;
}
