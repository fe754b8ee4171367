/* The Flight Recorder's variables by torch version. torch 2.15's
 * FlightRecorder.hpp and libtorch read each TORCH_FR_* name and its
 * TORCH_NCCL_* alias ("what existing users set, so it must keep working");
 * the alias is what older torch reads, so a torch before 2.15 (the one
 * checked) or none found is given the alias. The
 * defaults of 2.15 record 2,000 entries and dump on a timeout; for an older
 * torch, whose defaults this table does not vouch for, a job sets them. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/doctor.h"
#include "cclforge/fr_env.h"
#include "cclforge/survey.h"

static const struct cf_fr_var vars[] = {
    { "TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE", "2.15", "2000", "2.15",
      "entries each rank keeps (0 records nothing)" },
    { "TORCH_FR_DUMP_ON_TIMEOUT", "TORCH_NCCL_DUMP_ON_TIMEOUT", "2.15", "1", "2.15",
      "write the dump when a collective times out" },
    { "TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "2.15", "/shared/fr/rank_", NULL,
      "where: the rank is appended; a directory every host can write and you can read" },
    { "TORCH_NCCL_ENABLE_TIMING", NULL, "2.2", "1", NULL, "record start and end (durations, started vs completed; NCCL)" },
};

const struct cf_fr_var *cf_fr_vars(size_t *n)
{
    *n = sizeof vars / sizeof *vars;
    return vars;
}

/* "2.6.0+cu124" before "2.7"? major.minor compared as numbers */
static int older_than(const char *version, const char *since)
{
    char *end;
    long vmaj = strtol(version, &end, 10), vmin = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    long smaj = strtol(since, &end, 10), smin = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    return vmaj < smaj || (vmaj == smaj && vmin < smin);
}

const char *cf_fr_var_name(const struct cf_fr_var *v, const char *torch_version)
{
    if (v->older && (!torch_version || older_than(torch_version, v->since)))
        return v->older;
    return v->name;
}

static const char *env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

int cf_fr_env_leaves_dumps(char *const *envp, const char *torch_version, struct strvec *missing)
{
    /* the buffer and the dump switch decide; the file has a default in /tmp */
    for (size_t i = 0; i < 2; i++) {
        const struct cf_fr_var *v = &vars[i];
        const char *val = env_get(envp, cf_fr_var_name(v, torch_version));
        if (!val && v->older)
            val = env_get(envp, v->older);
        int unset_ok = !val && v->default_ok && torch_version && !older_than(torch_version, v->default_ok);
        if (!unset_ok && (!val || !strcmp(val, "0") || !*val))
            cf_strvec_pushf(missing, "%s=%s", cf_fr_var_name(v, torch_version), v->value);
    }
    return missing->n == 0;
}

void cf_doctor_fr_env_note(const struct cf_survey *s, char *const *envp, struct cf_findings *out)
{
    /* the environment is this process's: a torch injected from elsewhere says nothing about it */
    if (s->injected[CF_SEC_LIBTORCH] || !s->n_torches)
        return;
    const struct cf_libtorch *t = &s->torches[0];
    if (t->flavour != CF_TORCH_CUDA && t->flavour != CF_TORCH_HIP)
        return;
    struct strvec missing = STRVEC_INIT;
    if (!cf_fr_env_leaves_dumps(envp, t->version, &missing)) {
        struct strbuf remedy = STRBUF_INIT;
        cf_sb_adds(&remedy, "export");
        for (size_t i = 0; i < missing.n; i++)
            cf_sb_addf(&remedy, " %s", missing.v[i]);
        cf_sb_adds(&remedy, " (all of it: cclforge hang env)");
        cf_findings_add(out, CF_SEV_INFO, "no-flight-recorder-dumps", t->root ? t->root : "torch", remedy.buf,
                        "a collective that times out under torch %s would leave no Flight Recorder dump to read "
                        "with cclforge hang",
                        t->version ? t->version : "(version unknown)");
        cf_sb_release(&remedy);
    }
    cf_strvec_clear(&missing);
}
