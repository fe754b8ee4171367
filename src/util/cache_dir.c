/* Where cclforge keeps what it can rebuild: builds, scan results, probes. */
#include <stdlib.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

char *cf_cache_root(void)
{
    const char *home = env_nonempty("CCLFORGE_HOME");
    if (home)
        return cf_strdup(home);
    const char *xdg = env_nonempty("XDG_CACHE_HOME");
    if (xdg)
        return cf_path_join(xdg, "cclforge");
    const char *user_home = env_nonempty("HOME");
    return cf_asprintf("%s/.cache/cclforge", user_home ? user_home : "/tmp");
}
