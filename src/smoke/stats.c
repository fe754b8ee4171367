/* Robust figures from few, noisy samples. A test's time is a median over its timed
 * iterations, not a mean: one iteration that waited 12 ms for a busy core cannot
 * make a 0.1 ms pair look slow. Its spread is read from order statistics (the whole
 * range under 10 samples, about p10..p90 from 10), and the band its median lies in
 * from the binomial law of the order statistics, which holds whatever the
 * distribution of the times: with n samples, the k-th smallest is below the true
 * median with probability P(Binomial(n, 1/2) >= k). */
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "smoke/stats.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cf_smoke_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int cf_smoke_band_rank(int n)
{
    /* P(B < k) = sum over j < k of C(n, j) / 2^n, summed while it stays within 5% */
    double unit = 1;
    for (int i = 0; i < n; i++)
        unit *= 0.5;
    double c = 1, below = 0; /* C(n, j), P(B < j + 1) */
    int k = 0;
    for (int j = 0; 2 * j < n; j++) {
        below += c * unit;
        if (below > 0.05)
            break;
        k = j + 1;
        c = c * (n - j) / (j + 1);
    }
    return k;
}

void cf_smoke_time_stats(double *v, int n, struct smoke_time_stats *st)
{
    memset(st, 0, sizeof *st);
    if (n < 1)
        return;
    st->n = n;
    st->median = cf_smoke_median(v, (size_t)n);
    int k = 1 + n / 10;
    st->fast = v[k - 1];
    st->slow = v[n - k];
    int b = cf_smoke_band_rank(n);
    if (b > 0) {
        st->band_fast = v[b - 1];
        st->band_slow = v[n - b];
    }
}

void cf_smoke_bw_figure(const struct smoke_time_stats *t, double bw_per_us, struct smoke_bw_figure *out)
{
    memset(out, 0, sizeof *out);
    out->spread = -1;
    if (t->n < 1 || t->median <= 0)
        return;
    out->median = bw_per_us / t->median;
    /* (bw_fast - bw_slow) / bw_median with bw = c / time */
    if (t->n >= 2 && t->fast > 0 && t->slow > 0)
        out->spread = t->median / t->fast - t->median / t->slow;
    if (t->band_fast > 0 && t->band_slow > 0) {
        out->have_band = 1;
        out->lo = bw_per_us / t->band_slow;
        out->hi = bw_per_us / t->band_fast;
    }
}

void cf_smoke_result_pack(const struct smoke_group_result *r, double *w)
{
    double v[SMOKE_RESULT_WORDS] = { r->avg_busbw, r->bw.median, r->bw.spread, r->bw.lo, r->bw.hi,
                                     r->bw.have_band, (double)r->tests, r->samples, r->failed };
    memcpy(w, v, sizeof v);
}

void cf_smoke_result_unpack(const double *w, struct smoke_group_result *r)
{
    memset(r, 0, sizeof *r);
    r->avg_busbw = w[0];
    r->bw.median = w[1];
    r->bw.spread = w[2];
    r->bw.lo = w[3];
    r->bw.hi = w[4];
    r->bw.have_band = w[5] > 0;
    r->tests = (long)w[6];
    r->samples = (int)w[7];
    r->failed = w[8] > 0;
}

void cf_smoke_tally_reset(struct smoke_tally *t)
{
    t->bw_sum = 0;
    t->tests = t->failed = 0;
    t->samples = 0;
    t->bands = 0;
}

void cf_smoke_tally_add(struct smoke_tally *t, double busbw, const struct smoke_bw_figure *f, int samples, int ok)
{
    if ((size_t)t->tests == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->median = cf_xrealloc(t->median, t->cap * sizeof *t->median);
        t->spread = cf_xrealloc(t->spread, t->cap * sizeof *t->spread);
        t->lo = cf_xrealloc(t->lo, t->cap * sizeof *t->lo);
        t->hi = cf_xrealloc(t->hi, t->cap * sizeof *t->hi);
    }
    size_t i = (size_t)t->tests++;
    t->median[i] = f->median;
    t->spread[i] = f->spread;
    t->lo[i] = f->lo;
    t->hi[i] = f->hi;
    t->bands += f->have_band;
    t->samples = i == 0 || samples < t->samples ? samples : t->samples;
    t->bw_sum += busbw;
    t->failed += !ok;
}

/* the median of one column of the tally (a copy is sorted) */
static double column_median(const double *col, size_t n)
{
    double *v = cf_xmalloc(n * sizeof *v);
    memcpy(v, col, n * sizeof *v);
    double m = cf_smoke_median(v, n);
    free(v);
    return m;
}

void cf_smoke_tally_result(const struct smoke_tally *t, struct smoke_group_result *out)
{
    memset(out, 0, sizeof *out);
    out->bw.spread = -1;
    out->tests = t->tests;
    out->failed = t->failed > 0;
    out->samples = t->samples;
    if (!t->tests)
        return;
    size_t n = (size_t)t->tests;
    out->avg_busbw = t->bw_sum / (double)t->tests;
    out->bw.median = column_median(t->median, n);
    int spread_known = 1;
    for (size_t i = 0; i < n; i++)
        spread_known &= t->spread[i] >= 0;
    if (spread_known)
        out->bw.spread = column_median(t->spread, n);
    /* a band for the group only when every test has one: one without would be judged
     * on a single value */
    if ((long)t->bands == t->tests) {
        out->bw.have_band = 1;
        out->bw.lo = column_median(t->lo, n);
        out->bw.hi = column_median(t->hi, n);
    }
}

void cf_smoke_tally_release(struct smoke_tally *t)
{
    free(t->median);
    free(t->spread);
    free(t->lo);
    free(t->hi);
    memset(t, 0, sizeof *t);
}
