/* Remembered probe answers (a program's --version, a Python's description of
 * itself), valid while the files they depend on are unchanged: see
 * src/util/dep_cache.c for the rules. */
#ifndef CCLFORGE_DEPCACHE_H
#define CCLFORGE_DEPCACHE_H

#include <stddef.h>

#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most files one entry may depend on (more: not stored, not read). */
#define CF_DEPCACHE_MAX_DEPS 4096

/* Appends the answer stored for (kind, key) to value and returns 1 when there
 * is one and every file it depends on is as it was; 0 otherwise. */
int cf_depcache_get(const char *kind, const char *key, size_t key_len, struct strbuf *value);
/* Stores value for (kind, key), depending on the files deps (NULL-terminated;
 * directories count too: a new package changes site-packages' mtime; a
 * "?path" may be absent, and must then stay absent). Not stored when a
 * dependency is missing or changed in the last two seconds.
 * Failures are silent: it is a cache. */
void cf_depcache_put(const char *kind, const char *key, size_t key_len, const char *value, size_t value_len,
                     const char *const *deps);

#ifdef __cplusplus
}
#endif
#endif
