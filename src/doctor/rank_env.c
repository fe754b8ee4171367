/* NCCL variables that differ between the ranks of one host (cclforge/doctor.h):
 * the classic variable exported in one shell, or set for one rank of an MPMD
 * line, that the launcher never passed to the others (mpirun needs -x NAME;
 * srun passes the environment unless --export says otherwise). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/ncclconf.h"
#include "doctor/doctor_internal.h"

#define NAMED_RANKS 8 /* a group lists this many ranks, then "+N more" */

/* What a rank has for name: its value, "(hidden)" for a secret, NULL when unset. */
static const char *value_in(const struct cf_nccl_config *c, const char *name)
{
    const struct cf_nccl_setting *s = c ? cf_nccl_config_get(c, name) : NULL;
    if (!s)
        return NULL;
    return s->hidden ? "(hidden)" : s->value ? s->value : "";
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* "ranks 0, 1 NCCL_IB_HCA=mlx5_0; rank 2 unset" for the ranks of one host. */
static void describe_groups(const struct cf_rank_env *ranks, size_t n, const char *host, const char *name,
                            struct strbuf *out)
{
    unsigned char *done = cf_xcalloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; i++) {
        if (done[i] || !ranks[i].config || strcmp(ranks[i].host, host))
            continue;
        const char *v = value_in(ranks[i].config, name);
        struct strbuf who = STRBUF_INIT;
        size_t count = 0;
        for (size_t k = i; k < n; k++)
            if (!done[k] && ranks[k].config && !strcmp(ranks[k].host, host) && same(value_in(ranks[k].config, name), v)) {
                done[k] = 1;
                if (count++ < NAMED_RANKS)
                    cf_sb_addf(&who, "%s%d", count > 1 ? ", " : "", ranks[k].rank);
            }
        if (count > NAMED_RANKS)
            cf_sb_addf(&who, " +%zu more", count - NAMED_RANKS);
        cf_sb_addf(out, "%s%s %s ", out->len ? "; " : "", count == 1 ? "rank" : "ranks", cf_sb_str(&who));
        if (v)
            cf_sb_addf(out, "%s=%s", name, v);
        else
            cf_sb_adds(out, "unset");
        cf_sb_release(&who);
    }
    free(done);
}

/* 1 when two ranks of host disagree about name. */
static int differs_on(const struct cf_rank_env *ranks, size_t n, const char *host, const char *name)
{
    const char *first = NULL;
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ranks[i].config || strcmp(ranks[i].host, host))
            continue;
        const char *v = value_in(ranks[i].config, name);
        if (seen && !same(v, first))
            return 1;
        first = v;
        seen = 1;
    }
    return 0;
}

void cf_doctor_compare_ranks(const struct cf_rank_env *ranks, size_t n, struct cf_findings *out)
{
    /* every variable any rank has, and every host, in first-seen order */
    struct strvec names = STRVEC_INIT, hosts = STRVEC_INIT;
    for (size_t i = 0; i < n; i++) {
        if (!ranks[i].config)
            continue;
        if (!cf_strvec_contains(&hosts, ranks[i].host))
            cf_strvec_push(&hosts, ranks[i].host);
        for (size_t k = 0; k < ranks[i].config->n_settings; k++)
            if (ranks[i].config->settings[k].name && !cf_strvec_contains(&names, ranks[i].config->settings[k].name))
                cf_strvec_push(&names, ranks[i].config->settings[k].name);
    }
    for (size_t h = 0; h < hosts.n; h++)
        for (size_t v = 0; v < names.n; v++) {
            if (!differs_on(ranks, n, hosts.v[h], names.v[v]))
                continue;
            struct strbuf why = STRBUF_INIT;
            describe_groups(ranks, n, hosts.v[h], names.v[v], &why);
            char *subject = cf_asprintf("%s on %s", names.v[v], hosts.v[h]);
            char *remedy = cf_asprintf("give every rank the same value: set it before the launcher and pass it on "
                                       "(mpirun -x %s, srun --export=ALL), or in a file NCCL reads (/etc/nccl.conf)",
                                       names.v[v]);
            cf_findings_add(out, CF_SEV_WARNING, "nccl-env-rank-differs", subject, remedy,
                            "ranks of one host see different values (%s): a setting meant for the job reached only "
                            "some of its ranks",
                            cf_sb_str(&why));
            free(remedy);
            free(subject);
            cf_sb_release(&why);
        }
    cf_strvec_clear(&names);
    cf_strvec_clear(&hosts);
}
