/* `cclforge hang env`: the variables a job sets to leave Flight Recorder dumps
 * on a timeout, named as the torch found here reads them (the table is
 * doctor's, src/doctor/fr_env.c). */
#include <string.h>

#include "cclforge/fr_env.h"
#include "cclforge/hang.h"
#include "cclforge/survey.h"

char *cf_hang_torch_version(const char *python, char **found_by)
{
    struct cf_survey_opts o;
    memset(&o, 0, sizeof o);
    o.survey_file = "";
    o.python = python;
    o.skip = CF_SURVEY_SKIP_GPUS | CF_SURVEY_SKIP_TOOLKITS | CF_SURVEY_SKIP_COMPILERS | CF_SURVEY_SKIP_COMM |
             CF_SURVEY_SKIP_NCCL_CONFIG | CF_SURVEY_SKIP_FABRIC | CF_SURVEY_SKIP_NVML;
    struct cf_survey s;
    memset(&s, 0, sizeof s);
    cf_error err = CF_ERROR_INIT;
    char *version = NULL;
    *found_by = NULL;
    if (cf_survey_run(&o, &s, &err) == 0 && s.n_torches && s.torches[0].version) {
        version = cf_strdup(s.torches[0].version);
        *found_by = cf_strdup(s.torches[0].found_by);
    }
    cf_error_clear(&err);
    cf_survey_release(&s);
    return version;
}

void cf_hang_env_text(const char *torch_version, struct strbuf *out)
{
    size_t n;
    const struct cf_fr_var *v = cf_fr_vars(&n);
    if (torch_version)
        cf_sb_addf(out, "# for torch %s\n", torch_version);
    else
        cf_sb_adds(out, "# no torch found: the TORCH_NCCL_* names, which every torch reads\n");
    for (size_t i = 0; i < n; i++) {
        cf_sb_addf(out, "export %s=%s", cf_fr_var_name(&v[i], torch_version), v[i].value);
        cf_sb_addf(out, "  # %s", v[i].why);
        if (v[i].older && !strcmp(cf_fr_var_name(&v[i], torch_version), v[i].name))
            cf_sb_addf(out, " (older torch: %s)", v[i].older);
        cf_sb_addc(out, '\n');
    }
}
