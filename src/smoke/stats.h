/* The statistics of a test's timed iterations and of a group's tests (stats.c): a
 * median, the spread of the samples, and the band the median lies in at 90%
 * confidence, so that a group is called slow only when its numbers say so. Pure
 * functions over doubles: every rank computes the same from the same agreed values. */
#ifndef CCLFORGE_SMOKE_STATS_H
#define CCLFORGE_SMOKE_STATS_H

#include <stddef.h>

/* Samples a test keeps at most: more iterations are timed in this many equal batches. */
#define SMOKE_MAX_SAMPLES 64
/* Samples a median's 90% band needs (the fewest with one: 1 - 2/2^5 = 93.75%). */
#define SMOKE_MIN_BAND_SAMPLES 5

/* One rank's view of one test's samples (times per call, µs). */
struct smoke_time_stats {
    double median;
    double fast, slow;       /* the spread: k-th fastest and k-th slowest, k = 1 + n/10 */
    double band_fast, band_slow; /* the median's 90% band (order statistics); 0 when n is too small */
    int n;
};
/* Sorts v (n >= 1) and fills st. */
void cf_smoke_time_stats(double *v, int n, struct smoke_time_stats *st);
/* The median of v (n >= 1; v is sorted in place). */
double cf_smoke_median(double *v, size_t n);
/* The order statistic (1-based) that opens the median's band at >= 90% confidence
 * for n samples: the largest k with P(Binomial(n, 1/2) < k) <= 5%; 0 when none. */
int cf_smoke_band_rank(int n);

/* A figure in busbw (GB/s): its median, spread and band. */
struct smoke_bw_figure {
    double median;
    double spread;           /* (fast - slow) / median of the samples' busbw; < 0: unknown */
    double lo, hi;           /* the median's band; have_band 0: too few samples to have one */
    int have_band;
};
/* A test's figure from its agreed times: busbw = bw_per_us / time. */
void cf_smoke_bw_figure(const struct smoke_time_stats *t, double bw_per_us, struct smoke_bw_figure *out);

/* One group's figures, agreed over the world. */
struct smoke_group_result {
    double avg_busbw;        /* mean busbw over its tests (nccl-tests' footer figure) */
    struct smoke_bw_figure bw; /* medians over its tests of each test's figure */
    long tests;
    int samples;             /* samples per test (the fewest of its tests) */
    int failed;
};
#define SMOKE_RESULT_WORDS 9
/* A group's result as doubles for a host sum (from its rank 0; zeros elsewhere) and back. */
void cf_smoke_result_pack(const struct smoke_group_result *r, double *w);
void cf_smoke_result_unpack(const double *w, struct smoke_group_result *r);

/* The tests a group ran, for its result. */
struct smoke_tally {
    double bw_sum;
    long tests, failed;
    int samples;
    double *median, *spread, *lo, *hi; /* per test */
    int bands;               /* tests with a band */
    size_t cap;
};
void cf_smoke_tally_reset(struct smoke_tally *t);
void cf_smoke_tally_add(struct smoke_tally *t, double busbw, const struct smoke_bw_figure *f, int samples, int ok);
void cf_smoke_tally_result(const struct smoke_tally *t, struct smoke_group_result *out);
void cf_smoke_tally_release(struct smoke_tally *t);

#endif
