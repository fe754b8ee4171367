/* Paths as strings: made absolute and normalised without touching the file
 * system, for paths that need not exist (RPATH targets, archive members). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

/* One pass over the input into one output buffer no longer than it: a
 * component is appended as "/name"; ".." cuts the output back to its last
 * '/'. Every output byte is written once and cut at most once, so the work is
 * linear in the length whatever the path (a hostile symlink target may be
 * hundreds of megabytes of "a/../"), and no string is made per component. */
char *cf_path_normalize(const char *abs, int *escaped)
{
    size_t len = strlen(abs);
    char *out = cf_xmalloc(len + 2);
    size_t o = 0;
    int climbed_out = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && abs[i] == '/')
            i++;
        size_t start = i;
        while (i < len && abs[i] != '/')
            i++;
        size_t n = i - start;
        if (n == 0 || (n == 1 && abs[start] == '.'))
            continue;
        if (n == 2 && abs[start] == '.' && abs[start + 1] == '.') {
            if (o == 0)
                climbed_out = 1; /* "/.." is "/" to the kernel */
            while (o > 0 && out[--o] != '/')
                ;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, abs + start, n);
        o += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    if (escaped)
        *escaped = climbed_out;
    return out;
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
