/* The survey's "nccl_config" section: NCCL's (or RCCL's) configuration as the
 * ranks started here will see it (cclforge/ncclconf.h). */
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/ncclconf.h"
#include "survey/survey_internal.h"

extern char **environ;

/* The environment the probes see: opts->env's entries over the process's own
 * ("KEY" alone in opts->env unsets KEY). */
static void merged_env(const struct cf_survey_opts *opts, struct strvec *out)
{
    for (const char *const *e = opts->env; e && *e; e++)
        if (strchr(*e, '='))
            cf_strvec_push(out, *e);
    for (char **e = environ; e && *e; e++) {
        size_t klen = strcspn(*e, "=");
        int shadowed = 0;
        for (const char *const *o = opts->env; o && *o && !shadowed; o++)
            shadowed = !strncmp(*o, *e, klen) && ((*o)[klen] == '=' || (*o)[klen] == 0);
        if (!shadowed)
            cf_strvec_push(out, *e);
    }
}

/* RCCL's rules apply on a host whose libtorch is HIP, or whose GPUs are AMD or
 * Hygon, or whose only comm libraries are RCCL. */
static int uses_rccl(const struct cf_survey *a, const struct cf_survey *b)
{
    const struct cf_survey *both[2] = { a, b };
    int nccl = 0, rccl = 0;
    for (int k = 0; k < 2; k++) {
        const struct cf_survey *s = both[k];
        if (s->n_torches && s->torches[0].flavour != CF_TORCH_UNKNOWN && s->torches[0].flavour != CF_TORCH_CPU)
            return s->torches[0].flavour == CF_TORCH_HIP;
        for (size_t i = 0; i < s->n_gpus; i++)
            if (s->gpus[i].vendor && strcmp(s->gpus[i].vendor, "nvidia"))
                return 1;
        for (size_t i = 0; i < s->n_comm_libs; i++) {
            int r = s->comm_libs[i].kind && !strcmp(s->comm_libs[i].kind, "rccl");
            rccl |= r;
            nccl |= !r;
        }
    }
    return rccl && !nccl;
}

/* NCCL_TOPO_FILE: there, a regular file, and NCCL's XML */
static void check_topo_file(struct cf_nccl_config *c)
{
    const struct cf_nccl_setting *t = cf_nccl_config_get(c, "NCCL_TOPO_FILE");
    if (!t || !t->value || !*t->value)
        return;
    if (!cf_is_file(t->value)) {
        c->topo_file_problem = cf_asprintf("%s does not exist or is not a regular file", t->value);
        return;
    }
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    char why[256] = "";
    if (cf_read_file(t->value, 16u << 20, &text, &err) < 0)
        c->topo_file_problem = cf_strdup(cf_error_message(&err));
    else if (cf_nccl_topo_xml_check(cf_sb_str(&text), text.len, why, sizeof why) < 0)
        c->topo_file_problem = cf_asprintf("%s: %s", t->value, why);
    cf_error_clear(&err);
    cf_sb_release(&text);
}

void cf_probe_nccl_config(const struct cf_survey_opts *opts, const struct cf_survey *injected, struct cf_survey *s)
{
    struct strvec env = STRVEC_INIT;
    merged_env(opts, &env);
    struct cf_nccl_config_inputs in = { uses_rccl(injected, s) ? "rccl" : "nccl", cf_strvec_argv(&env), NULL, NULL };
    s->nccl_config = cf_xcalloc(1, sizeof *s->nccl_config);
    cf_nccl_config_build(&in, s->nccl_config);
    cf_strvec_clear(&env);
    /* this host's libraries: the probed ones, else those injected for tests */
    struct cf_survey host = *s;
#define BORROW(sec, arr, n)                                                                                            \
    if (injected->injected[sec]) {                                                                                     \
        host.arr = injected->arr;                                                                                      \
        host.n = injected->n;                                                                                          \
    }
    BORROW(CF_SEC_LIBTORCH, torches, n_torches)
    BORROW(CF_SEC_COMM_LIBS, comm_libs, n_comm_libs)
    BORROW(CF_SEC_TOOLKITS, toolkits, n_toolkits)
    BORROW(CF_SEC_GPUS, gpus, n_gpus)
#undef BORROW
    cf_nccl_config_find_plugins(opts, &host, s->nccl_config);
    check_topo_file(s->nccl_config);
}
