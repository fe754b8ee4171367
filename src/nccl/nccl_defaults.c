/* What `nccl build` takes from the survey when the user left it out: the
 * active libtorch's NCCL version (the tag to build) and the visible GPUs'
 * archs. The survey is this host's, or an injected one (--survey FILE,
 * CCLFORGE_SURVEY), so a build can be planned for another host. */
#include "nccl_internal.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/survey.h"

/* The NCCL the active libtorch uses: its embedded copy, else the one it
 * loads, else the one its wheel pins. NULL when none is known. */
static char *torch_nccl_version(const struct cf_survey *s)
{
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (!t)
        return NULL;
    if (t->embedded && t->embedded->version)
        return cf_strdup(t->embedded->version);
    if (t->loaded && t->loaded->version)
        return cf_strdup(t->loaded->version);
    return t->nccl_built_against ? cf_strdup(t->nccl_built_against) : NULL;
}

int cf_nccl_survey_defaults(const char *survey_file, int need_torch, int need_gpus, char **torch_nccl,
                            char **archs, cf_error *err)
{
    struct cf_survey_opts so;
    memset(&so, 0, sizeof so);
    so.survey_file = survey_file;
    /* Only what the defaults need: no compilers, comm libraries or toolkits. */
    so.skip = CF_SURVEY_SKIP_COMPILERS | CF_SURVEY_SKIP_COMM | CF_SURVEY_SKIP_TOOLKITS | CF_SURVEY_SKIP_NCCL_CONFIG |
              CF_SURVEY_SKIP_FABRIC;
    if (!need_torch)
        so.skip |= CF_SURVEY_SKIP_TORCH;
    if (!need_gpus)
        so.skip |= CF_SURVEY_SKIP_GPUS;
    struct cf_survey s = CF_SURVEY_INIT;
    if (cf_survey_run(&so, &s, err) < 0)
        return -1;
    if (need_torch)
        *torch_nccl = torch_nccl_version(&s);
    if (need_gpus) {
        struct strvec list = STRVEC_INIT;
        cf_survey_gpu_archs(&s, 1, &list);
        struct strbuf joined = STRBUF_INIT;
        for (size_t i = 0; i < list.n; i++)
            cf_sb_addf(&joined, "%s%s", i ? ";" : "", list.v[i]);
        if (joined.len)
            *archs = cf_sb_detach(&joined);
        cf_sb_release(&joined);
        cf_strvec_clear(&list);
    }
    cf_survey_release(&s);
    return 0;
}
