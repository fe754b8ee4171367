/* The survey entry point: inject what a JSON file gives, probe the rest. */
#include "cclforge/host.h"
#include "cclforge/survey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/commlib.h"
#include "cclforge/clock.h"
#include "survey/survey_internal.h"

/* Moves one section from src to dst (dst's is empty: it was not injected). */
static void move_section(struct cf_survey *dst, struct cf_survey *src, enum cf_survey_section sec)
{
#define MOVE(arr, n)              \
    do {                          \
        dst->arr = src->arr;      \
        dst->n = src->n;          \
        src->arr = NULL;          \
        src->n = 0;               \
    } while (0)
    switch (sec) {
    case CF_SEC_HOST:
        dst->hostname = src->hostname;
        src->hostname = NULL;
        break;
    case CF_SEC_TOOLKITS: MOVE(toolkits, n_toolkits); break;
    case CF_SEC_GPUS: MOVE(gpus, n_gpus); break;
    case CF_SEC_GPU_PROBES: MOVE(probes, n_probes); break;
    case CF_SEC_DRIVER:
        dst->driver = src->driver;
        memset(&src->driver, 0, sizeof src->driver);
        break;
    case CF_SEC_LIBTORCH: MOVE(torches, n_torches); break;
    case CF_SEC_COMM_LIBS: MOVE(comm_libs, n_comm_libs); break;
    case CF_SEC_COMPILERS: MOVE(compilers, n_compilers); break;
    case CF_SEC_NCCL_CONFIG:
        dst->nccl_config = src->nccl_config;
        src->nccl_config = NULL;
        break;
    case CF_SEC_FABRIC:
        dst->fabric = src->fabric;
        src->fabric = NULL;
        break;
    case CF_SEC_COUNT: break;
    }
#undef MOVE
}

int cf_survey_run(const struct cf_survey_opts *opts, struct cf_survey *out, cf_error *err)
{
    static const struct cf_survey_opts no_opts;
    if (!opts)
        opts = &no_opts;
    double t0 = cf_now_seconds();
    memset(out, 0, sizeof *out);

    const char *file = opts->survey_file ? opts->survey_file : cf_env_get(opts, CF_SURVEY_ENV);
    if (file && *file && cf_survey_load(file, out, err) < 0) {
        cf_survey_release(out);
        return -1;
    }

    struct cf_survey probed = CF_SURVEY_INIT;
    if (!out->injected[CF_SEC_HOST]) {
        char host[256] = "";
        if (cf_host_name(host, sizeof host) == 0)
            probed.hostname = cf_strdup(host);
    }
    if (!out->injected[CF_SEC_TOOLKITS] && !(opts->skip & CF_SURVEY_SKIP_TOOLKITS))
        cf_probe_toolkits(opts, &probed);
    if (!out->injected[CF_SEC_GPUS] && !(opts->skip & CF_SURVEY_SKIP_GPUS)) {
        cf_probe_gpus_nvidia(opts, &probed);
        cf_probe_gpus_kfd(opts, &probed);
    } else if (out->injected[CF_SEC_GPUS] && !out->injected[CF_SEC_GPU_PROBES]) {
        struct cf_gpu_probe *p = cf_survey_add_probe(&probed, "any", "json");
        p->ok = 1;
        p->count = (int)out->n_gpus;
        p->note = cf_asprintf("GPUs injected from %s", out->injected_from ? out->injected_from : "JSON");
    }
    if (!out->injected[CF_SEC_COMPILERS] && !(opts->skip & CF_SURVEY_SKIP_COMPILERS))
        cf_probe_compilers(opts, &probed);
    struct probe_ctx ctx = { opts, 0, { 0 } };
    int rc = 0;
    if (!out->injected[CF_SEC_COMM_LIBS] && !(opts->skip & CF_SURVEY_SKIP_COMM))
        cf_probe_comm_libs(&ctx, &probed);
    if (!out->injected[CF_SEC_LIBTORCH] && !(opts->skip & CF_SURVEY_SKIP_TORCH))
        rc = cf_probe_libtorch(&ctx, &probed, err);
    cf_python_info_release(&ctx.py);
    /* after the libraries: which library's file rules apply depends on them */
    if (rc == 0 && !out->injected[CF_SEC_NCCL_CONFIG] && !(opts->skip & CF_SURVEY_SKIP_NCCL_CONFIG))
        cf_probe_nccl_config(opts, out, &probed);
    if (rc == 0 && !out->injected[CF_SEC_FABRIC] && !(opts->skip & CF_SURVEY_SKIP_FABRIC))
        cf_probe_fabric(opts, &probed);
    if (rc < 0) {
        cf_survey_release(&probed);
        cf_survey_release(out);
        return -1;
    }

    for (int i = 0; i < CF_SEC_COUNT; i++)
        if (!out->injected[i])
            move_section(out, &probed, (enum cf_survey_section)i);
    cf_survey_release(&probed);
    out->seconds = cf_now_seconds() - t0;
    return 0;
}
