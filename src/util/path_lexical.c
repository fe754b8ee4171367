/* Paths as strings: made absolute and normalised without touching the file
 * system, for paths that need not exist (RPATH targets, archive members). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

char *cf_path_normalize(const char *abs, int *escaped)
{
    struct strvec parts = STRVEC_INIT, kept = STRVEC_INIT;
    int climbed_out = 0;
    cf_strvec_split(&parts, abs, "/", 0);
    for (size_t i = 0; i < parts.n; i++) {
        if (!strcmp(parts.v[i], "."))
            continue;
        if (!strcmp(parts.v[i], "..")) {
            if (kept.n) {
                free(kept.v[--kept.n]);
                kept.v[kept.n] = NULL;
            } else {
                climbed_out = 1; /* "/.." is "/" to the kernel */
            }
            continue;
        }
        cf_strvec_push(&kept, parts.v[i]);
    }
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < kept.n; i++)
        cf_sb_addf(&sb, "/%s", kept.v[i]);
    if (!sb.len)
        cf_sb_addc(&sb, '/');
    cf_strvec_clear(&parts);
    cf_strvec_clear(&kept);
    if (escaped)
        *escaped = climbed_out;
    return cf_sb_detach(&sb);
}

char *cf_path_absolute(const char *path)
{
    if (path[0] == '/')
        return cf_strdup(path);
    char *cwd = getcwd(NULL, 0);
    char *abs = cf_path_join(cwd ? cwd : "/", path);
    free(cwd);
    return abs;
}
