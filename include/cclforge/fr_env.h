/* What makes PyTorch's Flight Recorder leave a dump when a collective times
 * out, by torch version: the variables, their older TORCH_NCCL_* names and
 * the values a job should set. One table (src/doctor/fr_env.c), read by
 * `cclforge hang env` and by doctor's note on the environment. */
#ifndef CCLFORGE_FR_ENV_H
#define CCLFORGE_FR_ENV_H

#include <stddef.h>

#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_fr_var {
    const char *name;        /* the current name */
    const char *older;       /* the name torch before `since` reads (and later torch still does), NULL none */
    const char *since;       /* the first torch checked to read `name` (older: `older`) */
    const char *value;       /* what a job should set */
    const char *default_ok;  /* the torch from which leaving it unset records and dumps (checked
                              * against that torch), NULL: unset never does */
    const char *why;
};

/* the table, in the order a job sets them */
const struct cf_fr_var *cf_fr_vars(size_t *n);
/* the name torch `version` reads for v ("2.4.1" -> the older one); NULL version
 * (no torch found): the older one, which every torch reads */
const char *cf_fr_var_name(const struct cf_fr_var *v, const char *torch_version);
/* Would an environment (envp, NULL-terminated) leave dumps on a timeout with
 * this torch? 1 yes; 0 no, with what is missing in `missing` */
int cf_fr_env_leaves_dumps(char *const *envp, const char *torch_version, struct strvec *missing);
struct cf_survey;
struct cf_findings;
/* doctor's note (info, "no-flight-recorder-dumps") when the torch in use is a
 * GPU torch found on this host and envp would leave no dump on a timeout */
void cf_doctor_fr_env_note(const struct cf_survey *s, char *const *envp, struct cf_findings *out);

#ifdef __cplusplus
}
#endif
#endif
