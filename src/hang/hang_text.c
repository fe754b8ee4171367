/* The text a person reads: the verdict first (which ranks, at which
 * collective, since when, where in their code, on which host and GPU), the
 * Slurm exclude: line, then each group, every divergence, the dumps refused
 * and the notes. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cclforge/hang.h"

static void ranks_text(struct strbuf *sb, const int *v, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        cf_sb_addf(sb, "%s%d", i ? "," : "", v[i]);
        if (j > i)
            cf_sb_addf(sb, "-%d", v[j]);
        i = j + 1;
    }
}

static void where_ran(struct strbuf *sb, const struct cf_hang_result *r, int rank)
{
    const struct cf_hang_dump *d = cf_hang_dump_of(r, rank);
    if (!d || !d->host)
        return;
    cf_sb_addf(sb, "  rank %d: host %s", rank, d->host);
    if (d->gpu >= 0)
        cf_sb_addf(sb, ", GPU %d", d->gpu);
    cf_sb_addc(sb, '\n');
}

static void group_name(struct strbuf *sb, const struct cf_hang_group *g)
{
    cf_sb_addf(sb, "group %s", g->name);
    if (g->desc)
        cf_sb_addf(sb, " (%s)", g->desc);
}

void cf_hang_verdict(const struct cf_hang_result *r, struct strbuf *sb)
{
    const struct cf_hang_group *g = NULL;
    const struct cf_hang_divergence *d = cf_hang_first(r, &g);
    if (d) {
        cf_sb_addf(sb, "hang: at %s #%lld of ", d->op, (long long)d->seq);
        group_name(sb, g);
        cf_sb_addf(sb, ": %s", d->why);
        if (d->n_in) {
            cf_sb_adds(sb, d->n_in == 1 ? "; rank " : "; ranks ");
            ranks_text(sb, d->ranks_in, d->n_in);
            cf_sb_adds(sb, d->n_in == 1 ? " is in it" : " are in it");
            if (d->since_ns) {
                time_t t = (time_t)(d->since_ns / 1000000000);
                struct tm tm;
                char when[32];
                if (gmtime_r(&t, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
                    cf_sb_addf(sb, " since %s UTC", when);
            }
        }
        cf_sb_addc(sb, '\n');
        if (d->where)
            cf_sb_addf(sb, "  issued at %s\n", d->where);
        for (size_t i = 0; i < d->n_odd && i < 16; i++)
            where_ran(sb, r, d->ranks_odd[i]);
        char *ex = cf_hang_exclude(r);
        if (ex)
            cf_sb_addf(sb, "exclude: %s\n", ex);
        free(ex);
        return;
    }
    for (size_t i = 0; i < r->n_groups; i++)
        if (r->groups[i].n_absent) {
            cf_sb_adds(sb, "hang: no dump of ");
            cf_sb_adds(sb, r->groups[i].n_absent == 1 ? "rank " : "ranks ");
            ranks_text(sb, r->groups[i].absent, r->groups[i].n_absent);
            cf_sb_adds(sb, ", which ");
            group_name(sb, &r->groups[i]);
            cf_sb_adds(sb, " names; the dumps read agree\n");
            return;
        }
    if (r->n_dumps == (size_t)r->n_refused) {
        cf_sb_adds(sb, "hang: no dump could be read\n");
        return;
    }
    cf_sb_addf(sb, "hang: consistent: the ranks of every group (%zu) agree through their last collective\n",
               r->n_groups);
}

void cf_hang_text(const struct cf_hang_result *r, struct strbuf *sb)
{
    cf_hang_verdict(r, sb);
    for (size_t i = 0; i < r->n_groups; i++) {
        const struct cf_hang_group *g = &r->groups[i];
        cf_sb_adds(sb, "\n");
        group_name(sb, g);
        cf_sb_adds(sb, ": ranks ");
        ranks_text(sb, g->ranks, g->n_ranks);
        cf_sb_addf(sb, " (from %s), collectives #%lld to #%lld", g->membership, (long long)g->known_from,
                   (long long)g->last_seq);
        if (!g->n_div)
            cf_sb_adds(sb, ": consistent");
        cf_sb_addc(sb, '\n');
        if (g->n_absent) {
            cf_sb_adds(sb, "  no dump: ");
            ranks_text(sb, g->absent, g->n_absent);
            cf_sb_addc(sb, '\n');
        }
        for (size_t k = 0; k < g->n_div; k++)
            cf_sb_addf(sb, "  %s#%lld %s %s: %s\n", g->div[k].is_p2p ? "p2p " : "", (long long)g->div[k].seq,
                       cf_hang_kind_name(g->div[k].kind), g->div[k].op, g->div[k].why);
    }
    size_t read = r->n_dumps - (size_t)r->n_refused;
    cf_sb_addf(sb, "\ndumps: %zu read", read);
    if (read) {
        const struct cf_hang_dump *d = NULL;
        for (size_t i = 0; i < r->n_dumps && !d; i++)
            if (!r->dumps[i].refused)
                d = &r->dumps[i];
        cf_sb_addf(sb, " (%s, version %s)", d->format, d->version ? d->version : "none");
    }
    cf_sb_addf(sb, ", %d refused\n", r->n_refused);
    for (size_t i = 0; i < r->n_dumps; i++)
        if (r->dumps[i].refused)
            cf_sb_addf(sb, "  %s: %s\n", r->dumps[i].path, r->dumps[i].refused);
    for (size_t i = 0; i < r->notes.n; i++)
        cf_sb_addf(sb, "note: %s\n", r->notes.v[i]);
}
