/* Cross-host checks: what stops ranks on different hosts from talking. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/doctor.h"
#include "cclforge/vendor.h"
#include "doctor/doctor_internal.h"

/* The host facts (facts.c labels) each cross-host finding judges: their
 * difference is counted by these findings, not as a plain "hosts-differ". */
static const struct {
    const char *id, *label;
} judges[] = {
    { "comm-kind-differs", "NCCL" },       { "nccl-version-differs", "NCCL" },  { "comm-missing-on-host", "NCCL" },
    { "comm-version-unknown", "NCCL" },    { "torch-version-differs", "torch" }, { "torch-missing-on-host", "torch" },
};

int cf_doctor_compare_severity(const struct cf_findings *f, const char *label)
{
    int worst = -1;
    for (size_t i = 0; i < f->n; i++)
        for (size_t k = 0; k < sizeof judges / sizeof *judges; k++)
            if (!strcmp(f->v[i].id, judges[k].id) && !strcmp(judges[k].label, label) && (int)f->v[i].severity > worst)
                worst = (int)f->v[i].severity;
    return worst;
}

/* "host-a: NCCL 2.28.9, host-b: NCCL 2.27.5" */
static void describe_comms(const struct cf_survey *hosts, const char *const *labels, size_t n, struct strbuf *out)
{
    for (size_t i = 0; i < n; i++) {
        const struct cf_comm_lib *c = cf_survey_active_comm(&hosts[i]);
        cf_sb_addf(out, "%s%s: ", i ? ", " : "", labels[i]);
        if (c)
            cf_sb_addf(out, "%s %s", cf_comm_lib_profile(c)->display, c->version ? c->version : "(version unknown)");
        else
            cf_sb_adds(out, "none");
    }
}

static void compare_comm(const struct cf_survey *hosts, const char *const *labels, size_t n, struct cf_findings *out)
{
    const struct cf_comm_lib *first = NULL;
    int kinds_differ = 0, codes_differ = 0, missing = 0, unknown = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cf_comm_lib *c = cf_survey_active_comm(&hosts[i]);
        if (!c) {
            missing = 1;
            continue;
        }
        if (!c->version_code)
            unknown = 1;
        if (!first) {
            first = c;
            continue;
        }
        if (cf_comm_lib_profile(c) != cf_comm_lib_profile(first))
            kinds_differ = 1;
        else if (c->version_code && first->version_code && c->version_code != first->version_code)
            codes_differ = 1;
    }
    struct strbuf desc = STRBUF_INIT;
    describe_comms(hosts, labels, n, &desc);
    if (kinds_differ)
        cf_findings_add(out, CF_SEV_ERROR, "comm-kind-differs", "hosts",
                        "run one job per vendor, or bridge them outside NCCL/RCCL",
                        "NCCL and RCCL ranks cannot form one communicator (%s)", desc.buf);
    if (codes_differ)
        cf_findings_add(out, CF_SEV_ERROR, "nccl-version-differs", "hosts",
                        "give every host the same NCCL build: cclforge nccl build on one, then copy or "
                        "`cclforge nccl activate` it everywhere",
                        "NCCL compares the full version code at bootstrap: ranks fail with \"Mismatched NCCL "
                        "version detected\" (%s)",
                        desc.buf);
    if (missing)
        cf_findings_add(out, CF_SEV_WARNING, "comm-missing-on-host", "hosts", "cclforge nccl build",
                        "some hosts have no NCCL/RCCL at all (%s)", desc.buf);
    if (unknown && !missing)
        cf_findings_add(out, CF_SEV_WARNING, "comm-version-unknown", "hosts", NULL,
                        "the NCCL version of some hosts is unknown, so it cannot be compared (%s)", desc.buf);
    cf_sb_release(&desc);
}

static void compare_torch(const struct cf_survey *hosts, const char *const *labels, size_t n, struct cf_findings *out)
{
    const char *first = NULL;
    int differ = 0, missing = 0;
    struct strbuf desc = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const struct cf_libtorch *t = cf_survey_torch(&hosts[i]);
        const char *v = t ? t->version : NULL;
        cf_sb_addf(&desc, "%s%s: %s", i ? ", " : "", labels[i], v ? v : "none");
        if (!v) {
            missing = 1;
            continue;
        }
        if (!first)
            first = v;
        else if (strcmp(first, v))
            differ = 1;
    }
    if (differ)
        cf_findings_add(out, CF_SEV_ERROR, "torch-version-differs", "hosts",
                        "install the same torch build on every host",
                        "different torch versions exchange differently shaped collectives and store keys (%s)",
                        desc.buf);
    else if (missing && first)
        cf_findings_add(out, CF_SEV_WARNING, "torch-missing-on-host", "hosts", NULL,
                        "some hosts have no libtorch (%s)", desc.buf);
    cf_sb_release(&desc);
}

/* The GPU archs of all hosts, each with its library kind and how many hosts have
 * it: each host's library is judged against this list, not against every other
 * host in turn (1,024 hosts of 8 GPUs took seconds that way). */
struct arch_count {
    const char *arch, *kind;
    size_t hosts, last; /* last: 1 + the index of the last host counted */
};

static size_t count_archs(const struct cf_survey *hosts, size_t n, struct arch_count **out)
{
    struct arch_count *v = NULL;
    size_t nv = 0;
    for (size_t h = 0; h < n; h++)
        for (size_t g = 0; g < hosts[h].n_gpus; g++) {
            const struct cf_gpu *gpu = &hosts[h].gpus[g];
            const struct cf_vendor_profile *p = cf_vendor_profile_for_gpu(gpu->vendor);
            if (!gpu->arch || !p)
                continue;
            size_t k = 0;
            while (k < nv && (strcmp(v[k].arch, gpu->arch) || strcmp(v[k].kind, p->comm->kind)))
                k++;
            if (k == nv) {
                v = cf_xrealloc(v, (nv + 1) * sizeof *v);
                v[nv++] = (struct arch_count){ gpu->arch, p->comm->kind, 0, 0 };
            }
            if (v[k].last != h + 1) {
                v[k].hosts++;
                v[k].last = h + 1;
            }
        }
    *out = v;
    return nv;
}

/* whether a GPU of this host, for this library kind, is of arch */
static int host_has_arch(const struct cf_survey *host, const char *kind, const char *arch)
{
    for (size_t g = 0; g < host->n_gpus; g++) {
        const struct cf_gpu *gpu = &host->gpus[g];
        const struct cf_vendor_profile *p = cf_vendor_profile_for_gpu(gpu->vendor);
        if (gpu->arch && p && !strcmp(gpu->arch, arch) && !strcmp(p->comm->kind, kind))
            return 1;
    }
    return 0;
}

static void compare_archs(const struct cf_survey *hosts, const char *const *labels, size_t n, struct cf_findings *out)
{
    struct arch_count *archs = NULL;
    size_t n_archs = count_archs(hosts, n, &archs);
    struct strvec every = STRVEC_INIT; /* every host's visible archs, once each: the shared build's list */
    int every_read = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cf_comm_lib *c = cf_survey_active_comm(&hosts[i]);
        if (!c || !c->archs_known)
            continue;
        const char *kind = cf_comm_lib_profile(c)->kind;
        struct strvec own = STRVEC_INIT, others = STRVEC_INIT;
        for (size_t g = 0; g < hosts[i].n_gpus; g++) { /* in the host's GPU order */
            const char *arch = hosts[i].gpus[g].arch;
            if (arch && host_has_arch(&hosts[i], kind, arch) && !cf_arch_covered(&c->archs, arch) &&
                !cf_strvec_contains(&own, arch))
                cf_strvec_push(&own, arch);
        }
        for (size_t k = 0; k < n_archs; k++) /* on some host other than this one */
            if (!strcmp(archs[k].kind, kind) && !cf_arch_covered(&c->archs, archs[k].arch) &&
                archs[k].hosts > (size_t)host_has_arch(&hosts[i], kind, archs[k].arch))
                cf_strvec_push(&others, archs[k].arch);
        char subject[512];
        snprintf(subject, sizeof subject, "%s: %s", labels[i], c->path ? c->path : cf_comm_lib_profile(c)->display);
        if (own.n) {
            struct strbuf list = STRBUF_INIT;
            for (size_t k = 0; k < own.n; k++)
                cf_sb_addf(&list, "%s%s", k ? "," : "", own.v[k]);
            struct strbuf cmd = STRBUF_INIT;
            cf_nccl_build_command(&hosts[i], c, &own, &cmd);
            /* the host is in the subject only: hosts with the same finding read as one */
            cf_findings_add(out, CF_SEV_ERROR, "gpu-arch-not-covered", subject, cmd.buf,
                            "%s %s has no code for the host's own GPUs: %s", cf_comm_lib_profile(c)->display,
                            c->version ? c->version : "", list.buf);
            cf_sb_release(&cmd);
            cf_sb_release(&list);
        }
        if (others.n) {
            struct strbuf list = STRBUF_INIT;
            for (size_t k = 0; k < others.n; k++)
                cf_sb_addf(&list, "%s%s", k ? "," : "", others.v[k]);
            if (!every_read) {
                struct strvec all = STRVEC_INIT;
                for (size_t h = 0; h < n; h++)
                    cf_survey_gpu_archs(&hosts[h], 1, &all);
                for (size_t k = 0; k < all.n; k++)
                    if (!cf_strvec_contains(&every, all.v[k]))
                        cf_strvec_push(&every, all.v[k]);
                cf_strvec_clear(&all);
                every_read = 1;
            }
            struct strbuf cmd = STRBUF_INIT;
            cf_nccl_build_command(&hosts[i], c, &every, &cmd);
            char *remedy = cf_asprintf("%s, to share one build across hosts", cmd.buf);
            cf_sb_release(&cmd);
            cf_findings_add(out, CF_SEV_WARNING, "host-lib-lacks-arch", subject, remedy,
                            "%s %s lacks code for GPUs of other hosts (%s): it cannot be shared with them",
                            cf_comm_lib_profile(c)->display, c->version ? c->version : "", list.buf);
            free(remedy);
            cf_sb_release(&list);
        }
        cf_strvec_clear(&own);
        cf_strvec_clear(&others);
    }
    cf_strvec_clear(&every);
    free(archs);
}

void cf_doctor_compare(const struct cf_survey *hosts, const char *const *labels, size_t n, struct cf_findings *out)
{
    compare_comm(hosts, labels, n, out);
    compare_torch(hosts, labels, n, out);
    compare_archs(hosts, labels, n, out);
    cf_sort_findings(out);
}
