/* The closure check's answer, remembered while its inputs are unchanged
 * (closure_cache.c). */
#ifndef CCLFORGE_SURVEY_CLOSURE_CACHE_H
#define CCLFORGE_SURVEY_CLOSURE_CACHE_H

#include "cclforge/ldso.h"
#include "cclforge/strbuf.h"

struct closure_answer {
    int needed;          /* the closure needs the soname asked about */
    char *resolved;      /* where that soname resolves; NULL: not found or not asked */
    struct strvec missing, undefined;
};

/* The key of the question (path, soname) in this process's environment. */
void cf_closure_cache_key(const char *path, const char *soname, struct strbuf *key);
/* 1 and *a filled when a valid answer is stored for key; 0 otherwise. */
int cf_closure_cache_get(const struct strbuf *key, struct closure_answer *a);
/* Stores a, valid while what res was read from is unchanged (res resolved
 * with explain and list_inputs). Silent on failure: it is a cache. */
void cf_closure_cache_put(const struct strbuf *key, const struct closure_answer *a, const struct cf_ldso_result *res);
void cf_closure_answer_release(struct closure_answer *a);

#endif
