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

/* "KEY=..." (or "KEY") of entry is key's */
static int same_key(const char *entry, const char *key, size_t klen)
{
    return !strncmp(entry, key, klen) && (entry[klen] == '=' || !entry[klen]);
}

void cf_envp_with(char *const *envp, const char *const *set, struct strvec *out)
{
    for (; envp && *envp; envp++) {
        int replaced = 0;
        for (const char *const *s = set; s && *s && !replaced; s++)
            replaced = same_key(*envp, *s, strcspn(*s, "="));
        if (!replaced)
            cf_strvec_push(out, *envp);
    }
    for (const char *const *s = set; s && *s; s++)
        cf_strvec_push(out, *s);
}
