/* The data every test sends: element i of rank r is drawn from a 64-bit hash of
 * (seed, r, i), so no two places of a buffer hold values in a pattern (a block that
 * lands in the wrong place, a stale buffer, a shifted copy all show), and mapped to
 * a range in which the collective's reduction over every rank is exact whatever the
 * order NCCL or MPI adds in:
 *   sum        integers below L/n (L: the type's exact range)
 *   prod       one rank gives a small integer m, up to E others give 2, the rest 1:
 *              the product m x 2^k stays exact
 *   min, max   integers below L
 *   avg        integers: below L/n, the result their sum divided by n (NCCL divides
 *              integers after summing); floats: at most two ranks give a value, the
 *              rest 0, because NCCL multiplies each by 1/n first (nccl-tests does the
 *              same and allows 2 ulp)
 *   (none)     integers below L, for the collectives that only move data */
#include <math.h>
#include <string.h>

#include "cclforge/smoke.h"

static uint64_t mix64(uint64_t x)
{
    /* splitmix64's finaliser: every input bit moves every output bit */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t hash_at(uint64_t seed, int rank, size_t i)
{
    return mix64(seed + mix64((uint64_t)rank + 0x632be59bd9b4e019ull) + (uint64_t)i * 0x9e3779b97f4a7c15ull);
}

static int64_t range_of(const struct cf_smoke_data *d)
{
    return cf_smoke_dtype_info(d->dtype)->exact_limit;
}

static int64_t per_rank_range(const struct cf_smoke_data *d)
{
    int64_t r = range_of(d) / (d->nranks > 0 ? d->nranks : 1);
    return r > 0 ? r : 1;
}

/* prod: m below 2^mbits from one rank, 2^b (b in {0,1}) from E ranks */
static void prod_budget(const struct cf_smoke_data *d, int *mbits, int *e)
{
    int64_t l = range_of(d);
    int lbits = 0;
    while (lbits < 62 && ((int64_t)1 << (lbits + 1)) <= l)
        lbits++;
    int p2 = cf_smoke_dtype_info(d->dtype)->max_pow2;
    if (p2 > 62)
        p2 = 62;
    *mbits = lbits / 2 < 8 ? lbits / 2 : 8;
    *e = p2 - *mbits;
    if (*e < 0)
        *e = 0;
}

/* the two ranks that give values to a floating average at element i */
static void avg_owners(const struct cf_smoke_data *d, size_t i, int *a, int *b)
{
    uint64_t h = hash_at(d->seed, -1, i);
    int n = d->nranks > 0 ? d->nranks : 1;
    *a = (int)(h % (uint64_t)n);
    *b = n > 1 ? (*a + 1 + (int)((h >> 32) % (uint64_t)(n - 1))) % n : *a;
}

double cf_smoke_input(const struct cf_smoke_data *d, int rank, size_t i)
{
    uint64_t h = hash_at(d->seed, rank, i);
    int n = d->nranks > 0 ? d->nranks : 1;
    switch (d->redop) {
    case CF_RED_SUM:
        return (double)(h % (uint64_t)per_rank_range(d));
    case CF_RED_PROD: {
        int mbits, e;
        prod_budget(d, &mbits, &e);
        uint64_t g = hash_at(d->seed, -1, i);
        int m_rank = (int)(g % (uint64_t)n);
        uint64_t m_max = ((uint64_t)1 << mbits) - 1;
        if (rank == m_rank)
            return (double)(1 + h % (m_max ? m_max : 1));
        /* the E ranks after the m rank (cyclically) may double it */
        int after = (rank - m_rank + n) % n; /* 1 .. n-1 */
        return after <= e && (h & 1) ? 2.0 : 1.0;
    }
    case CF_RED_AVG:
        if (cf_smoke_dtype_info(d->dtype)->is_float) {
            int a, b;
            avg_owners(d, i, &a, &b);
            return rank == a || rank == b ? (double)(h % (uint64_t)(range_of(d) / 2)) : 0.0;
        }
        return (double)(h % (uint64_t)per_rank_range(d));
    case CF_RED_MIN:
    case CF_RED_MAX:
    default:
        return (double)(h % (uint64_t)range_of(d));
    }
}

double cf_smoke_reduced(const struct cf_smoke_data *d, size_t i)
{
    int n = d->nranks > 0 ? d->nranks : 1;
    if (d->redop == CF_RED_AVG && cf_smoke_dtype_info(d->dtype)->is_float) {
        int a, b;
        avg_owners(d, i, &a, &b);
        double s = cf_smoke_input(d, a, i) + (b != a ? cf_smoke_input(d, b, i) : 0.0);
        return s / n;
    }
    double acc = cf_smoke_input(d, 0, i);
    for (int r = 1; r < n; r++) {
        double v = cf_smoke_input(d, r, i);
        switch (d->redop) {
        case CF_RED_PROD: acc *= v; break;
        case CF_RED_MAX: acc = v > acc ? v : acc; break;
        case CF_RED_MIN: acc = v < acc ? v : acc; break;
        default: acc += v; break;
        }
    }
    if (d->redop == CF_RED_AVG)
        acc = (double)(uint64_t)(acc / n); /* integers: NCCL sums, then divides (non-negative, below
                                            * 2^53: truncation is floor) */
    return acc;
}

double cf_smoke_tolerance(const struct cf_smoke_data *d, double expected)
{
    const struct cf_smoke_dtype_info *di = cf_smoke_dtype_info(d->dtype);
    if (d->redop != CF_RED_AVG || !di->is_float || expected == 0)
        return 0;
    static const int mantissa_bits[CF_DT_COUNT] = {
        [CF_DT_FLOAT16] = 10, [CF_DT_BFLOAT16] = 7, [CF_DT_FLOAT32] = 23, [CF_DT_FLOAT64] = 52,
    };
    if (!isfinite(expected))
        return 0;
    int exponent; /* |expected| in [2^(exponent-1), 2^exponent) */
    (void)frexp(fabs(expected), &exponent);
    return 2 * ldexp(1.0, exponent - 1 - mantissa_bits[d->dtype]);
}
