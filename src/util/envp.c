#include "cclforge/envp.h"

#include <string.h>

const char *cf_envp_get(char *const *envp, const char *key)
{
    size_t klen = strlen(key);
    for (; envp && *envp; envp++)
        if (!strncmp(*envp, key, klen) && (*envp)[klen] == '=')
            return *envp + klen + 1;
    return NULL;
}
