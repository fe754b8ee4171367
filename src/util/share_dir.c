#include "cclforge/share.h"

#include <stdlib.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

static const char *const above_exe[] = { "share/cclforge", "../share/cclforge" };
#define N_ABOVE_EXE (sizeof above_exe / sizeof above_exe[0])

static char *exe_dir(void)
{
    char *exe = cf_self_exe();
    char *bin = exe ? cf_dirname(exe) : NULL;
    free(exe);
    return bin;
}

char *cf_share_looked(const char *rel)
{
    char *bin = exe_dir();
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < N_ABOVE_EXE; i++)
        cf_sb_addf(&sb, "%s%s/%s/%s", i ? ", " : "", bin ? bin : "<the executable's directory>", above_exe[i], rel);
    free(bin);
    return cf_sb_detach(&sb);
}

char *cf_share_file(const char *rel)
{
    char *bin = exe_dir();
    char *found = NULL;
    for (size_t i = 0; bin && !found && i < N_ABOVE_EXE; i++) {
        char *cand = cf_asprintf("%s/%s/%s", bin, above_exe[i], rel);
        char *abs = cf_realpath(cand);
        if (abs && cf_is_file(abs))
            found = abs;
        else
            free(abs);
        free(cand);
    }
    free(bin);
    return found;
}

char *cf_share_need(const char *rel, cf_error *err)
{
    char *found = cf_share_file(rel);
    if (!found) {
        char *looked = cf_share_looked(rel);
        cf_error_set(err, CF_ERR_NOTFOUND,
                     "cclforge's share/cclforge/%s is missing (looked at %s): reinstall cclforge (its wheel and "
                     "tarball carry share/cclforge)",
                     rel, looked);
        free(looked);
    }
    return found;
}
