/* Reading a NULL-terminated "KEY=VALUE" environment vector (the library is handed
 * one instead of reading the process's own, so tests can give any environment). */
#ifndef CCLFORGE_ENVP_H
#define CCLFORGE_ENVP_H

#ifdef __cplusplus
extern "C" {
#endif

/* The value of key in envp, or NULL when it is not set (envp may be NULL). */
const char *cf_envp_get(char *const *envp, const char *key);

#ifdef __cplusplus
}
#endif
#endif
