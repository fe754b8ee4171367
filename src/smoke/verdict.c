/* The run's verdict, one line a person or a Slurm prolog can act on: what failed and
 * where, or that every test passed; and the slowest rank and host against the
 * median. --min-busbw turns an average below it into a failure of its own. A
 * --pattern search brings its own verdict (groups.c): it is kept. */
#include <stdlib.h>
#include <string.h>

#include "smoke/smoke_internal.h"

static const char *host_of(const struct cf_smoke_report *rep, int rank)
{
    return rep->hosts && rank >= 0 && rank < rep->nranks && rep->hosts[rank].hostname ? rep->hosts[rank].hostname
                                                                                     : "?";
}

/* the rank that was slowest most often, and its worst ratio to the median */
static int slowest_rank(const struct cf_smoke_report *rep, double *ratio, long *times)
{
    if (rep->nranks < 2 || !rep->nrows)
        return -1;
    long *count = cf_xcalloc((size_t)rep->nranks, sizeof *count);
    double *worst = cf_xcalloc((size_t)rep->nranks, sizeof *worst);
    for (size_t i = 0; i < rep->nrows; i++) {
        const struct cf_smoke_row *r = &rep->rows[i];
        if (r->slowest_rank < 0 || r->slowest_rank >= rep->nranks || r->median_us <= 0)
            continue;
        count[r->slowest_rank]++;
        double q = r->slowest_us / r->median_us;
        if (q > worst[r->slowest_rank])
            worst[r->slowest_rank] = q;
    }
    int best = -1;
    for (int k = 0; k < rep->nranks; k++)
        if (count[k] && (best < 0 || count[k] > count[best] || (count[k] == count[best] && worst[k] > worst[best])))
            best = k;
    if (best >= 0) {
        *ratio = worst[best];
        *times = count[best];
    }
    free(count);
    free(worst);
    return best;
}

void cf_smoke_verdict(struct cf_smoke_report *rep, const struct cf_smoke_opts *o)
{
    cf_smoke_report_finish(rep);
    double ratio = 0;
    long times = 0;
    int slow = slowest_rank(rep, &ratio, &times);
    struct strbuf slowest = STRBUF_INIT;
    if (slow >= 0)
        cf_sb_addf(&slowest, "slowest host %s (rank %d): %.2fx the median time, slowest in %ld of %zu tests",
                   host_of(rep, slow), slow, ratio, times, rep->nrows);
    if (o->min_busbw > 0 && rep->nrows && rep->avg_busbw < o->min_busbw) {
        char *p = cf_asprintf("average busbw %.3g GB/s is below --min-busbw %g GB/s%s%s", rep->avg_busbw,
                              o->min_busbw, slowest.len ? "; " : "", cf_sb_str(&slowest));
        cf_smoke_report_add_problem(rep, -1, p);
        free(p);
        cf_smoke_report_finish(rep);
    }
    /* a smoke that completed no test proved nothing: never "ok: 0 tests passed" */
    int reporter = rep->role == CF_ROLE_SUPERVISOR || (rep->role == CF_ROLE_RANK && rep->rank == 0);
    if (reporter && !rep->nrows && !rep->nfailures && !rep->nproblems) {
        cf_smoke_report_add_problem(rep, -1, "no test ran: the smoke was asked for and no collective completed, "
                                             "so nothing was checked");
        cf_smoke_report_finish(rep);
    }
    if (!rep->verdict) {
        struct strbuf v = STRBUF_INIT;
        const struct cf_smoke_failure *f = rep->nfailures ? &rep->failures[0] : NULL;
        long failed_rows = 0;
        const struct cf_smoke_row *first_bad = NULL;
        for (size_t i = 0; i < rep->nrows; i++)
            if (!rep->rows[i].ok) {
                failed_rows++;
                if (!first_bad)
                    first_bad = &rep->rows[i];
            }
        if (f && f->rank >= 0) {
            cf_sb_addf(&v, "FAIL: rank %d", f->rank);
            if (strcmp(host_of(rep, f->rank), "?"))
                cf_sb_addf(&v, " (host %s)", host_of(rep, f->rank));
            cf_sb_addf(&v, " failed while %s: %s", f->doing[0] ? f->doing : "starting", f->reason);
        } else if (f) {
            cf_sb_addf(&v, "FAIL: %s", f->reason);
        } else if (rep->nproblems) {
            cf_sb_addf(&v, "FAIL: %s", rep->problems[0].reason);
        } else if (first_bad) {
            char *what = cf_smoke_describe(first_bad);
            cf_sb_addf(&v, "FAIL: %ld of %zu tests had wrong results (first: %s, %ld wrong elements)", failed_rows,
                       rep->nrows, what, first_bad->wrong);
            free(what);
        } else {
            cf_sb_addf(&v, "ok: %zu tests passed, average busbw %.3g GB/s", rep->nrows, rep->avg_busbw);
            if (slowest.len)
                cf_sb_addf(&v, "; %s", cf_sb_str(&slowest));
        }
        rep->verdict = cf_sb_detach(&v);
    }
    cf_sb_release(&slowest);
}
