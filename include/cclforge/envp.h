/* Reading a NULL-terminated "KEY=VALUE" environment vector (the library is handed
 * one instead of reading the process's own, so tests can give any environment). */
#ifndef CCLFORGE_ENVP_H
#define CCLFORGE_ENVP_H

#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The value of key in envp, or NULL when it is not set (envp may be NULL). */
const char *cf_envp_get(char *const *envp, const char *key);
/* Appends to out envp with each "KEY=VALUE" of set in place of that key's
 * entry (set's entries last): the environment a child started with set
 * over an inherited envp sees. */
void cf_envp_with(char *const *envp, const char *const *set, struct strvec *out);

#ifdef __cplusplus
}
#endif
#endif
