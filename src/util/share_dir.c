#include "cclforge/share.h"

#include <stdlib.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

char *cf_share_file(const char *rel)
{
    static const char *const above_exe[] = { "share/cclforge", "../share/cclforge" };
    char *exe = cf_realpath("/proc/self/exe");
    char *bin = exe ? cf_dirname(exe) : NULL;
    char *found = NULL;
    for (size_t i = 0; bin && !found && i < sizeof above_exe / sizeof above_exe[0]; i++) {
        char *cand = cf_asprintf("%s/%s/%s", bin, above_exe[i], rel);
        char *abs = cf_realpath(cand);
        if (abs && cf_is_file(abs))
            found = abs;
        else
            free(abs);
        free(cand);
    }
    free(exe);
    free(bin);
    return found;
}
