/* What is compared across hosts: one row per fact, each a function of the survey
 * and the severity a difference has (errors: ranks cannot talk; warnings: one host
 * behaves differently; info: worth knowing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/doctor.h"
#include "cclforge/fabric.h"
#include "cclforge/ncclconf.h"
#include "doctor/doctor_internal.h"

typedef void (*fact_fn)(const struct cf_survey *s, struct strbuf *out);

static void comm_version(const struct cf_survey *s, struct strbuf *out)
{
    const struct cf_comm_lib *c = cf_survey_active_comm(s);
    if (c && c->version)
        cf_sb_addf(out, "%s %s (%d)", c->kind && !strcmp(c->kind, "rccl") ? "RCCL" : "NCCL", c->version,
                   c->version_code);
}

static void comm_path(const struct cf_survey *s, struct strbuf *out)
{
    const struct cf_comm_lib *c = cf_survey_active_comm(s);
    if (c && c->path)
        cf_sb_adds(out, c->path);
}

static void join_into(const struct strvec *v, const char *sep, struct strbuf *out)
{
    for (size_t i = 0; i < v->n; i++)
        cf_sb_addf(out, "%s%s", i ? sep : "", v->v[i]);
}

static void comm_archs(const struct cf_survey *s, struct strbuf *out)
{
    const struct cf_comm_lib *c = cf_survey_active_comm(s);
    if (c && c->archs_known)
        join_into(&c->archs, " ", out);
}

static void comm_runtime(const struct cf_survey *s, struct strbuf *out)
{
    const struct cf_comm_lib *c = cf_survey_active_comm(s);
    if (c && c->cuda_version)
        cf_sb_addf(out, "CUDA %s", c->cuda_version);
    else if (c && c->hip_version)
        cf_sb_addf(out, "HIP %s", c->hip_version);
}

static void driver(const struct cf_survey *s, struct strbuf *out)
{
    if (s->driver.nvidia_version || s->driver.cuda_driver_version)
        cf_sb_addf(out, "NVIDIA %s (CUDA %d.%d)", s->driver.nvidia_version ? s->driver.nvidia_version : "?",
                   s->driver.cuda_driver_version / 1000, s->driver.cuda_driver_version % 1000 / 10);
    if (s->driver.amd_version)
        cf_sb_addf(out, "%samdgpu %s", out->len ? ", " : "", s->driver.amd_version);
}

static void toolkit(const struct cf_survey *s, struct strbuf *out)
{
    for (size_t i = 0; i < s->n_toolkits; i++)
        cf_sb_addf(out, "%s%s %s", i ? ", " : "", s->toolkits[i].vendor ? s->toolkits[i].vendor : "?",
                   s->toolkits[i].version ? s->toolkits[i].version : "?");
}

static void torch(const struct cf_survey *s, struct strbuf *out)
{
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (t && t->version)
        cf_sb_adds(out, t->version);
}

static void torch_abi(const struct cf_survey *s, struct strbuf *out)
{
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (t && t->cxx11_abi >= 0)
        cf_sb_addf(out, "%d", t->cxx11_abi);
}

static void glibc(const struct cf_survey *s, struct strbuf *out)
{
    if (s->fabric && s->fabric->glibc)
        cf_sb_adds(out, s->fabric->glibc);
}

static void kernel(const struct cf_survey *s, struct strbuf *out)
{
    if (s->fabric && s->fabric->kernel)
        cf_sb_adds(out, s->fabric->kernel);
}

static void net_plugin(const struct cf_survey *s, struct strbuf *out)
{
    for (size_t i = 0; s->nccl_config && i < s->nccl_config->n_plugins; i++) {
        const struct cf_nccl_plugin *p = &s->nccl_config->plugins[i];
        if (strcmp(p->kind, "net"))
            continue;
        cf_sb_addf(out, "%s%s", out->len ? ", " : "", p->path ? p->path : "(not found)");
        for (size_t k = 0; k < p->symbols.n; k++)
            if (cf_starts_with(p->symbols.v[k], "ncclNetPlugin_v"))
                cf_sb_addf(out, " %s", p->symbols.v[k] + strlen("ncclNetPlugin_"));
    }
}

static void ib_ports(const struct cf_survey *s, struct strbuf *out)
{
    for (size_t i = 0; s->fabric && i < s->fabric->n_ib; i++)
        for (size_t k = 0; k < s->fabric->ib[i].n_ports; k++) {
            const struct cf_ib_port *p = &s->fabric->ib[i].ports[k];
            cf_sb_addf(out, "%s%s:%d %s %s", out->len ? ", " : "", s->fabric->ib[i].name, p->port,
                       p->state_name ? p->state_name : "?", p->rate ? p->rate : "?");
        }
}

static void gpus(const struct cf_survey *s, struct strbuf *out)
{
    /* "8x NVIDIA H100 80GB HBM3 (sm_90)" per model */
    int *done = cf_xcalloc(s->n_gpus ? s->n_gpus : 1, sizeof *done);
    for (size_t i = 0; i < s->n_gpus; i++) {
        if (done[i])
            continue;
        int count = 0;
        for (size_t k = i; k < s->n_gpus; k++) {
            int same = !done[k] && !strcmp(s->gpus[k].name ? s->gpus[k].name : "", s->gpus[i].name ? s->gpus[i].name : "") &&
                       !strcmp(s->gpus[k].arch ? s->gpus[k].arch : "", s->gpus[i].arch ? s->gpus[i].arch : "");
            if (same) {
                done[k] = 1;
                count++;
            }
        }
        cf_sb_addf(out, "%s%dx %s (%s)", out->len ? ", " : "", count, s->gpus[i].name ? s->gpus[i].name : "GPU",
                   s->gpus[i].arch ? s->gpus[i].arch : "?");
    }
    free(done);
}

static void shm(const struct cf_survey *s, struct strbuf *out)
{
    if (s->fabric && s->fabric->limits.shm_bytes)
        cf_sb_addf(out, "%.1f GiB", (double)s->fabric->limits.shm_bytes / (1024.0 * 1024 * 1024));
}

static void memlock(const struct cf_survey *s, struct strbuf *out)
{
    if (!s->fabric)
        return;
    uint64_t m = s->fabric->limits.memlock_soft;
    if (m == UINT64_MAX)
        cf_sb_adds(out, "unlimited");
    else
        cf_sb_addf(out, "%llu KiB", (unsigned long long)(m / 1024));
}

static const struct {
    const char *label;
    enum cf_severity sev;
    fact_fn fn;
} facts[] = {
    { "NCCL", CF_SEV_ERROR, comm_version },
    { "NCCL library", CF_SEV_INFO, comm_path },
    { "NCCL GPU code", CF_SEV_WARNING, comm_archs },
    { "NCCL built for", CF_SEV_WARNING, comm_runtime },
    { "driver", CF_SEV_WARNING, driver },
    { "toolkit", CF_SEV_INFO, toolkit },
    { "torch", CF_SEV_ERROR, torch },
    { "torch C++11 ABI", CF_SEV_WARNING, torch_abi },
    { "glibc", CF_SEV_INFO, glibc },
    { "net plugin", CF_SEV_WARNING, net_plugin },
    { "IB ports", CF_SEV_WARNING, ib_ports },
    { "GPUs", CF_SEV_WARNING, gpus },
    { "kernel", CF_SEV_INFO, kernel },
    { "/dev/shm", CF_SEV_INFO, shm },
    { "memlock", CF_SEV_INFO, memlock },
};

static void push(struct cf_host_fact **out, size_t *n, const char *label, const char *value, enum cf_severity sev)
{
    *out = cf_xrealloc(*out, (*n + 1) * sizeof **out);
    struct cf_host_fact *f = &(*out)[(*n)++];
    f->label = cf_strdup(label);
    f->value = cf_strdup(value && *value ? value : "(none)");
    f->sev = sev;
}

void cf_host_facts(const struct cf_survey *s, struct cf_host_fact **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        struct strbuf v = STRBUF_INIT;
        facts[i].fn(s, &v);
        push(out, n, facts[i].label, cf_sb_str(&v), facts[i].sev);
        cf_sb_release(&v);
    }
    /* every NCCL variable set anywhere is a fact of its own (consolidation fills
     * "(unset)" for hosts without it); hidden values are never compared */
    for (size_t i = 0; s->nccl_config && i < s->nccl_config->n_settings; i++) {
        const struct cf_nccl_setting *x = &s->nccl_config->settings[i];
        push(out, n, x->name, x->hidden ? "(hidden)" : x->value ? x->value : "", CF_SEV_WARNING);
    }
}

void cf_host_facts_release(struct cf_host_fact *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].label);
        free(f[i].value);
    }
    free(f);
}
