/* The Flight Recorder's variables by torch version. torch 2.15's
 * FlightRecorder.hpp and libtorch read each TORCH_FR_* name and its
 * TORCH_NCCL_* alias; torch before the renaming reads only the alias. The
 * defaults of 2.15 record 2,000 entries and dump on a timeout; for an older
 * torch, whose defaults this table does not vouch for, a job sets them. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/fr_env.h"

static const struct cf_fr_var vars[] = {
    { "TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE", "2.7", "2000", "2.15",
      "entries each rank keeps (0 records nothing)" },
    { "TORCH_FR_DUMP_ON_TIMEOUT", "TORCH_NCCL_DUMP_ON_TIMEOUT", "2.7", "1", "2.15",
      "write the dump when a collective times out" },
    { "TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "2.7", "/shared/fr/rank_", NULL,
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
    if (v->older && torch_version && older_than(torch_version, v->since))
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
        if (!val && v->older && !(torch_version && older_than(torch_version, v->since)))
            val = env_get(envp, v->older);
        int unset_ok = !val && v->default_ok && torch_version && !older_than(torch_version, v->default_ok);
        if (!unset_ok && (!val || !strcmp(val, "0") || !*val))
            cf_strvec_pushf(missing, "%s=%s", cf_fr_var_name(v, torch_version), v->value);
    }
    return missing->n == 0;
}
