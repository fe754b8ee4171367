/* The survey's use of the loader emulation (cclforge/ldso.h, cclforge/ldcache.h):
 * which libnccl.so.2 a library really gets, and what its closure lacks. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/ldso.h"
#include "cclforge/symcheck.h"
#include "survey/closure_cache.h"
#include "survey/survey_internal.h"

/* The machine this program runs as: what a program started here would be. */
static unsigned host_machine(void)
{
    struct cf_elf *self = NULL;
    cf_error err = CF_ERROR_INIT;
    unsigned machine = EM_X86_64;
    char *exe = cf_self_exe();
    int opened = cf_elf_open(exe ? exe : "/proc/self/exe", &self, &err) == 0;
    free(exe);
    if (opened) {
        machine = cf_elf_get_header(self)->machine;
        cf_elf_close(self);
    }
    cf_error_clear(&err);
    return machine;
}

/* The loader as the survey's environment sets it up (LD_LIBRARY_PATH);
 * facts: storage shared by a run of lookups, or NULL. */
static void survey_ldso_opts(const struct cf_survey_opts *opts, struct cf_ldso_facts *facts, struct cf_ldso_opts *lo)
{
    memset(lo, 0, sizeof *lo);
    lo->facts_cache = facts;
    lo->ld_library_path = cf_env_get(opts, "LD_LIBRARY_PATH");
    lo->ignore_ld_library_path = lo->ld_library_path == NULL;
}

/* Where a default 64-bit program of this machine would find soname under lo,
 * or NULL. */
static char *located_path(const char *soname, const struct cf_ldso_opts *lo)
{
    struct cf_ldso_node node;
    cf_error err = CF_ERROR_INIT;
    char *found = NULL;
    if (cf_ldso_locate(soname, host_machine(), 64, 0, lo, &node, &err) == 0) {
        if (node.path)
            found = cf_strdup(node.path);
        cf_ldso_node_release(&node);
    }
    cf_error_clear(&err);
    return found;
}

/* For a program without RPATH/RUNPATH glibc searches LD_LIBRARY_PATH, then
 * ld.so.cache, then the system directories: cf_ldso_locate does exactly that. */
char *cf_loader_resolve_default(const struct cf_survey_opts *opts, struct cf_ldso_facts *facts, const char *soname)
{
    struct cf_ldso_opts lo;
    survey_ldso_opts(opts, facts, &lo);
    return located_path(soname, &lo);
}

char *cf_loader_resolve_in(const char *const *dirs, const char *soname)
{
    struct cf_ldso_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.ignore_ld_library_path = 1;
    lo.ignore_ldcache = 1;
    lo.system_dirs = dirs;
    return located_path(soname, &lo);
}

const char *cf_host_multiarch(void)
{
    struct cf_ldso_platform p;
    if (cf_ldso_platform_for(host_machine(), 64, NULL, &p, NULL) != 0)
        return NULL;
    const char *tuple = p.multiarch; /* a string in the layout table */
    cf_ldso_platform_release(&p);
    return tuple;
}

char *cf_loader_dlopen_from(const struct cf_survey_opts *opts, struct cf_ldso_facts *facts, const char *root,
                            const char *caller, const char *name, char **why)
{
    struct cf_ldso_opts lo;
    survey_ldso_opts(opts, facts, &lo);
    struct cf_ldso_node node;
    cf_error err = CF_ERROR_INIT;
    char *found = NULL;
    *why = NULL;
    int rc = cf_ldso_dlopen_from(root, caller, name, &lo, &node, &err);
    if (rc != 0 && caller) { /* not in root's closure: loaded on its own (LD_PRELOAD), below the program */
        cf_error_clear(&err);
        rc = cf_ldso_dlopen_from(caller, NULL, name, &lo, &node, &err);
    }
    if (rc == 0) {
        if (node.path) {
            found = cf_strdup(node.path);
            *why = cf_ldso_describe_reason(&node);
        }
        cf_ldso_node_release(&node);
    }
    cf_error_clear(&err);
    return found;
}

enum { MAX_UNDEFINED_KEPT = 50 };

/* The closure of path resolved and its symbols checked, into a. */
static void closure_answer_of(const char *path, const char *soname, int remember, struct closure_answer *a)
{
    struct cf_ldso_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.explain = remember; /* the rejected candidates are part of what the answer depends on */
    lo.list_inputs = remember;
    struct cf_ldso_result res;
    cf_error err = CF_ERROR_INIT;
    if (cf_ldso_resolve(path, &lo, &res, &err) < 0) {
        cf_error_clear(&err);
        return;
    }
    for (size_t i = 0; i < res.n_nodes; i++) {
        const struct cf_ldso_node *n = &res.nodes[i];
        if (!n->path && n->needed && !cf_strvec_contains(&a->missing, n->needed))
            cf_strvec_push(&a->missing, n->needed);
        if (soname && n->depth > 0 && n->needed && !strcmp(cf_basename(n->needed), soname)) {
            a->needed = 1;
            if (!a->resolved && n->path)
                a->resolved = cf_strdup(n->path);
        }
    }
    /* ldd -r without running anything: what stays undefined in the whole closure. */
    struct cf_symcheck_result sc;
    int checked = cf_symcheck_run(&res, &sc, &err) == 0;
    if (checked) {
        for (size_t i = 0; i < sc.n_problems && a->undefined.n < MAX_UNDEFINED_KEPT; i++)
            if (sc.problems[i].message) {
                /* ldd's tab before the path reads badly inside one line */
                char *m = cf_strdup(sc.problems[i].message);
                for (char *p = m; *p; p++)
                    if (*p == '\t')
                        *p = ' ';
                if (!cf_strvec_contains(&a->undefined, m))
                    cf_strvec_push(&a->undefined, m);
                free(m);
            }
        cf_symcheck_result_release(&sc);
    }
    cf_error_clear(&err);
    if (remember && checked) {
        struct strbuf key = STRBUF_INIT;
        cf_closure_cache_key(path, soname, &key);
        cf_closure_cache_put(&key, a, &res);
        cf_sb_release(&key);
    }
    cf_ldso_result_release(&res);
}

void cf_closure_check(const struct cf_survey_opts *opts, const char *path, const char *soname, int *needed,
                      char **resolved, struct strvec *missing, struct strvec *undefined)
{
    if (needed)
        *needed = 0;
    if (resolved)
        *resolved = NULL;
    if (!cf_is_file(path))
        return;
    struct closure_answer a;
    memset(&a, 0, sizeof a);
    int cached = 0;
    if (!opts->no_cache) {
        struct strbuf key = STRBUF_INIT;
        cf_closure_cache_key(path, soname, &key);
        cached = cf_closure_cache_get(&key, &a);
        cf_sb_release(&key);
    }
    if (!cached)
        closure_answer_of(path, soname, !opts->no_cache, &a);
    if (needed)
        *needed = a.needed;
    if (resolved) {
        *resolved = a.resolved;
        a.resolved = NULL;
    }
    for (size_t i = 0; i < a.missing.n; i++)
        if (!cf_strvec_contains(missing, a.missing.v[i]))
            cf_strvec_push(missing, a.missing.v[i]);
    for (size_t i = 0; i < a.undefined.n && undefined->n < MAX_UNDEFINED_KEPT; i++)
        if (!cf_strvec_contains(undefined, a.undefined.v[i]))
            cf_strvec_push(undefined, a.undefined.v[i]);
    cf_closure_answer_release(&a);
}
