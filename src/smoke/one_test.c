/* One test, as nccl-tests' BenchTime runs it: inputs written, -w warmup calls, a
 * barrier, -n (--iters) timed calls (back to back, or each waited for with -z, or
 * captured in a graph launched -G times), then -c check calls on fresh inputs, each
 * compared element by element with the value computed here. The timed calls are cut
 * into samples (stats.c): the row keeps nccl-tests' mean time, and a median, spread
 * and band the verdict can trust. Then the ranks agree: every rank's time, wrong
 * count and sample statistics go to every rank, so the row names the slowest rank
 * and how far it is from the median. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/fnv1a.h"
#include "smoke/one_test.h"
#include "smoke/stats.h"

#define SLOW_FAULT_S 0.3

struct test {
    struct smoke_test_ctx *t;
    enum cf_smoke_op op;
    const struct cf_smoke_op_info *info;
    struct cf_smoke_layout l;
    struct cf_smoke_data d;
    int root, in_place;
    size_t esize;
    struct cf_smoke_call call;
    int prepared; /* the backend holds call prepared (timed_iterations) */
};

static uint64_t seed_for(const struct test *x, unsigned long serial)
{
    /* differs between tests and checks, so a stale result of an earlier one cannot
     * pass; made of what the test is, so every rank of the group draws the same */
    uint64_t parts[] = { (uint64_t)x->op, (uint64_t)x->d.dtype, (uint64_t)x->d.redop, (uint64_t)x->root,
                         x->l.bytes, (uint64_t)x->in_place, (uint64_t)x->t->group, serial };
    uint64_t s = CF_FNV1A64_BASIS;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        s = cf_fnv1a64_u64(s, parts[i]);
    return s;
}

static const struct cf_smoke_fault *fault_here(const struct test *x, enum cf_smoke_fault_action a)
{
    const struct cf_smoke_fault *f = &x->t->o->fault;
    return f->action == a && f->rank == x->t->world_rank && f->op == x->op ? f : NULL;
}

/* whether this rank's send buffer goes into the result (a non-root's does not in a
 * broadcast or scatter) */
static int contributes(const struct test *x)
{
    return !((x->op == CF_OP_BROADCAST || x->op == CF_OP_SCATTER) && x->t->rank != x->root);
}

/* fault injection: a wrong input where it travels (sums and copies), else a wrong result */
static int corrupts_input(const struct test *x)
{
    return fault_here(x, CF_FAULT_CORRUPT) && contributes(x) &&
           (x->d.redop == CF_RED_SUM || x->d.redop == CF_RED_COUNT);
}

static void fill_sentinel(unsigned char *p, size_t bytes)
{
    memset(p, 0xff, bytes); /* -1 for signed, all ones for unsigned, NaN for floats: never a result */
}

/* Writes this rank's inputs and sentinels where results will land, into backend memory. */
static int fill(struct test *x)
{
    struct smoke_test_ctx *t = x->t;
    const struct cf_smoke_layout *l = &x->l;
    size_t e = x->esize;
    char *errbuf = t->errbuf;
    if (x->in_place) {
        /* one buffer: the recv region, with this rank's send region inside it */
        size_t elems = l->bytes / e;
        fill_sentinel(t->hrecv, l->bytes);
        if (contributes(x))
            for (size_t i = 0; i < l->send_elems; i++)
                cf_smoke_store(x->d.dtype, t->hrecv, l->send_offset + i, cf_smoke_input(&x->d, t->rank, i));
        if (corrupts_input(x) && l->send_elems)
            cf_smoke_store(x->d.dtype, t->hrecv, l->send_offset + l->send_elems / 2,
                           cf_smoke_input(&x->d, t->rank, l->send_elems / 2) + 1);
        return t->b->upload(t->b, t->drecv, t->hrecv, elems * e, errbuf, SMOKE_ERRLEN);
    }
    if (contributes(x))
        for (size_t i = 0; i < l->send_elems; i++)
            cf_smoke_store(x->d.dtype, t->hsend, i, cf_smoke_input(&x->d, t->rank, i));
    else
        fill_sentinel(t->hsend, l->send_elems * e);
    if (corrupts_input(x) && l->send_elems)
        cf_smoke_store(x->d.dtype, t->hsend, l->send_elems / 2, cf_smoke_input(&x->d, t->rank, l->send_elems / 2) + 1);
    fill_sentinel(t->hrecv, l->recv_elems * e);
    if (t->b->upload(t->b, t->dsend, t->hsend, l->send_elems * e, errbuf, SMOKE_ERRLEN) < 0)
        return -1;
    return t->b->upload(t->b, t->drecv, t->hrecv, l->recv_elems * e, errbuf, SMOKE_ERRLEN);
}

/* What element j of this rank's receive region must hold; *untouched: the sentinel,
 * because the collective must not write there. */
static double expected_at(const struct test *x, size_t j, int *untouched)
{
    const struct smoke_test_ctx *t = x->t;
    int r = t->rank, n = t->nranks, root = x->root;
    size_t share = x->l.count;
    *untouched = 0;
    switch (x->op) {
    case CF_OP_ALL_REDUCE:
        return cf_smoke_reduced(&x->d, j);
    case CF_OP_REDUCE:
        if (r == root)
            return cf_smoke_reduced(&x->d, j);
        if (x->in_place)
            return cf_smoke_input(&x->d, r, j);
        *untouched = 1;
        return 0;
    case CF_OP_BROADCAST:
        return cf_smoke_input(&x->d, root, j);
    case CF_OP_ALL_GATHER:
        return cf_smoke_input(&x->d, (int)(j / share), j % share);
    case CF_OP_GATHER:
        if (r == root || (x->in_place && (int)(j / share) == r))
            return cf_smoke_input(&x->d, (int)(j / share), j % share);
        *untouched = 1;
        return 0;
    case CF_OP_REDUCE_SCATTER:
        return cf_smoke_reduced(&x->d, (size_t)r * share + j);
    case CF_OP_SCATTER:
        return cf_smoke_input(&x->d, root, (size_t)r * share + j);
    case CF_OP_ALLTOALL:
        return cf_smoke_input(&x->d, (int)(j / share), (size_t)r * share + j % share);
    case CF_OP_SENDRECV:
        return cf_smoke_input(&x->d, (r - 1 + n) % n, j);
    default:
        return 0;
    }
}

static int all_ones(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xff)
            return 0;
    return 1;
}

/* Compares the downloaded receive region with the expected values; describes the first miss. */
static long verify(const struct test *x, const unsigned char *recv, struct strbuf *why)
{
    long wrong = 0;
    for (size_t j = 0; j < x->l.recv_elems; j++) {
        int untouched;
        double want = expected_at(x, j, &untouched);
        int bad;
        double got = cf_smoke_load(x->d.dtype, recv, j);
        if (untouched) {
            bad = !all_ones(recv + j * x->esize, x->esize);
        } else {
            double tol = cf_smoke_tolerance(&x->d, want);
            double diff = got > want ? got - want : want - got;
            bad = !(diff <= tol); /* a NaN (the sentinel left in place) is never close */
        }
        if (bad) {
            if (!wrong) {
                if (untouched)
                    cf_sb_addf(why, "index %zu: written, but the collective must leave it alone (got %.17g)", j,
                               got);
                else
                    cf_sb_addf(why, "index %zu: expected %.17g, got %.17g", j, want, got);
            }
            wrong++;
        }
    }
    return wrong;
}

static void fire_fault(const struct test *x)
{
    const struct cf_smoke_fault *f = &x->t->o->fault;
    /* abort, exit and hang end the process: they fire once */
    if (f->rank == x->t->world_rank && f->op == x->op)
        cf_smoke_fault_fire(f->action);
}

static void nap(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&ts, NULL);
}

/* one call, without the progress mark */
static int bare_call(struct test *x)
{
    struct smoke_test_ctx *t = x->t;
    if (fault_here(x, CF_FAULT_SLOW))
        nap(SLOW_FAULT_S);
    if (t->b->collective(t->b, &x->call, t->errbuf, SMOKE_ERRLEN) < 0)
        return -1;
    if (t->o->blocking && (t->b->features & CF_FEAT_ASYNC) && t->b->sync(t->b, t->errbuf, SMOKE_ERRLEN) < 0)
        return -1;
    return 0;
}

/* one call as the timed loop made it, prepared or not: the -c checks check the very
 * call that was timed */
static int start_timed_call(struct test *x)
{
    struct smoke_test_ctx *t = x->t;
    return x->prepared ? t->b->run_prepared(t->b, t->errbuf, SMOKE_ERRLEN)
                       : t->b->collective(t->b, &x->call, t->errbuf, SMOKE_ERRLEN);
}

/* one call, and the rank's progress mark */
static int call(struct test *x)
{
    if (bare_call(x) < 0)
        return -1;
    cf_smoke_sink_progress(x->t->sink);
    return 0;
}

/* Calls until the next progress mark in the timed loop. The mark reads the
 * clock, which next to a 1 KiB host all_reduce (~1 us) is a few per cent of
 * the time measured: the stride is re-judged at each mark from the calls
 * since the last, for about four marks per SMOKE_PROGRESS_S, and a slow call
 * marks after every call. At most MAX_STRIDE: if calls turn 1,000 times
 * slower mid-loop, a mark is late by 64 of them, not by thousands (the
 * supervisor's --timeout counts from the last mark). */
static int progress_stride(int calls, double seconds)
{
    enum { MAX_STRIDE = 64 };
    if (seconds <= 0)
        return calls * 2 < MAX_STRIDE ? calls * 2 : MAX_STRIDE;
    double stride = SMOKE_PROGRESS_S / 4 / (seconds / calls);
    return stride >= MAX_STRIDE ? MAX_STRIDE : stride < 1 ? 1 : (int)stride;
}

/* How many samples the timed calls are cut into. Where a call is complete when it
 * returns (MPI, -z 1) a cut costs one clock read, and every call is a sample up to
 * SMOKE_MAX_SAMPLES. Where completion needs a wait on the device a cut costs a wait:
 * a plain run (--pattern all) keeps nccl-tests' single wait after all of them, and a
 * search, whose verdict rests on the spread, cuts them into SMOKE_WAITED_SAMPLES. */
#define SMOKE_WAITED_SAMPLES 10
static int sample_count(const struct smoke_test_ctx *t, int units, int waits)
{
    int cap = !waits ? SMOKE_MAX_SAMPLES : t->o->pattern == CF_PATTERN_ALL ? 1 : SMOKE_WAITED_SAMPLES;
    return units < cap ? units : cap;
}

/* The end (exclusive) of sample s of ns over units. */
static long long sample_end(int s, int ns, int units)
{
    return (long long)(s + 1) * units / ns;
}

/* The timed calls, cut into samples (time per call of each, µs); *time_us: the time per
 * call over all of them, as nccl-tests reports it. -1 on a backend error. */
static int timed_iterations(struct test *x, double *samples, int *nsamples, double *time_us)
{
    struct smoke_test_ctx *t = x->t;
    const struct cf_smoke_opts *o = t->o;
    int graph = o->graph_launches > 0 && (t->b->features & CF_FEAT_GRAPH);
    int waits = graph || ((t->b->features & CF_FEAT_ASYNC) && !o->blocking);
    int units = graph ? o->graph_launches : o->iters; /* what is cut into samples */
    double calls_per_unit = graph ? o->iters : 1;
    int ns = sample_count(t, units, waits);
    *nsamples = ns;
    if (graph && t->b->graph_capture(t->b, t->errbuf, SMOKE_ERRLEN) < 0)
        return -1;
    /* the prepared call where the backend has one and nothing else must happen per call */
    x->prepared = !graph && t->b->prepare && !fault_here(x, CF_FAULT_SLOW) &&
                  !(o->blocking && (t->b->features & CF_FEAT_ASYNC)) && t->b->prepare(t->b, &x->call);
    int stride = 1, next = 1, s = 0;
    long long cut = graph ? -1 : sample_end(0, ns, units) - 1;
    double t0 = cf_now_seconds(), mark = t0, last = t0;
    for (int i = 0; i < o->iters; i++) {
        if ((x->prepared ? t->b->run_prepared(t->b, t->errbuf, SMOKE_ERRLEN) : bare_call(x)) < 0)
            return -1;
        if (i == cut) {
            /* the sample ends when its calls are complete: the last one waits in any case */
            if ((waits || s == ns - 1) && t->b->sync(t->b, t->errbuf, SMOKE_ERRLEN) < 0)
                return -1;
            double now = cf_now_seconds();
            samples[s] = (now - last) * 1e6 / (double)(cut + 1 - (s ? sample_end(s - 1, ns, units) : 0));
            last = now;
            if (++s < ns)
                cut = sample_end(s, ns, units) - 1;
        }
        if (--next == 0) {
            double now = cf_now_seconds();
            stride = next = progress_stride(stride, now - mark);
            mark = now;
            cf_smoke_sink_progress(t->sink);
        }
    }
    if (graph) {
        /* the captured calls ran nowhere yet: time the launches, sample by sample */
        t0 = last = cf_now_seconds();
        for (s = 0; s < ns; s++) {
            long long from = s ? sample_end(s - 1, ns, units) : 0, to = sample_end(s, ns, units);
            if (t->b->graph_launch(t->b, (int)(to - from), t->errbuf, SMOKE_ERRLEN) < 0 ||
                t->b->sync(t->b, t->errbuf, SMOKE_ERRLEN) < 0)
                return -1;
            double now = cf_now_seconds();
            samples[s] = (now - last) * 1e6 / ((double)(to - from) * calls_per_unit);
            last = now;
            cf_smoke_sink_progress(t->sink);
        }
    }
    double per = (double)units * calls_per_unit;
    *time_us = per > 0 ? (last - t0) * 1e6 / per : 0;
    return 0;
}

/* One statistic over the ranks, as -a asks for the time: rank 0's, the mean, min or max. */
static double over_ranks(const double *v, int n, enum cf_smoke_average a)
{
    double sum = 0, lo = v[0], hi = v[0];
    for (int i = 0; i < n; i++) {
        sum += v[i];
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    static const int which[] = { [CF_AVG_RANK0] = 0, [CF_AVG_MEAN] = 1, [CF_AVG_MIN] = 2, [CF_AVG_MAX] = 3 };
    double pick[] = { v[0], sum / n, lo, hi };
    return pick[which[a]];
}

/* What each rank gives for a test, a slot per rank each: its time, wrong count and the
 * statistics of its samples. */
enum { AG_TIME, AG_WRONG, AG_MEDIAN, AG_FAST, AG_SLOW, AG_BAND_FAST, AG_BAND_SLOW, AG_COUNT };

/* the row everyone agrees on: the time per -a, the slowest rank and the median; the
 * samples' statistics per -a over the ranks as the time */
static void agreed_row(const struct test *x, const double *agree, int checked, int nsamples,
                       struct cf_smoke_row *row, struct smoke_bw_figure *fig)
{
    const struct smoke_test_ctx *t = x->t;
    int n = t->nranks;
    const double *times = agree + AG_TIME * n;
    int slowest = 0;
    for (int i = 0; i < n; i++)
        if (times[i] > times[slowest])
            slowest = i;
    row->time_us = over_ranks(times, n, t->o->average);
    double factor = cf_smoke_busbw_factor(x->info, n);
    row->algbw = row->time_us > 0 ? (double)x->l.bytes / row->time_us / 1e3 : 0;
    row->busbw = row->algbw * factor;
    long wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += (long)agree[AG_WRONG * n + i];
    row->wrong = checked ? wrong : -1;
    row->ok = wrong == 0;
    row->slowest_rank = t->world_of[slowest];
    row->slowest_us = times[slowest];
    double *sorted = cf_xmalloc((size_t)n * sizeof *sorted);
    memcpy(sorted, times, (size_t)n * sizeof *sorted);
    row->median_us = cf_smoke_median(sorted, (size_t)n);
    free(sorted);
    struct smoke_time_stats st = { .n = nsamples };
    st.median = over_ranks(agree + AG_MEDIAN * n, n, t->o->average);
    st.fast = over_ranks(agree + AG_FAST * n, n, t->o->average);
    st.slow = over_ranks(agree + AG_SLOW * n, n, t->o->average);
    st.band_fast = over_ranks(agree + AG_BAND_FAST * n, n, t->o->average);
    st.band_slow = over_ranks(agree + AG_BAND_SLOW * n, n, t->o->average);
    cf_smoke_bw_figure(&st, (double)x->l.bytes / 1e3 * factor, fig);
    row->samples = nsamples;
    row->busbw_median = fig->median;
    row->busbw_spread = fig->spread;
}

/* -c checks on fresh inputs; -1 on a backend error, else the wrong count (why: the first) */
static long check(struct test *x, struct strbuf *why)
{
    struct smoke_test_ctx *t = x->t;
    long wrong = 0;
    for (int c = 0; c < t->o->check && !wrong; c++) {
        x->d.seed = seed_for(x, 1 + (unsigned long)c);
        if (fill(x) < 0 || start_timed_call(x) < 0 ||
            t->b->sync(t->b, t->errbuf, SMOKE_ERRLEN) < 0)
            return -1;
        const void *region = x->in_place ? (const char *)t->drecv + x->l.recv_offset * x->esize : t->drecv;
        if (t->b->download(t->b, t->hrecv, region, x->l.recv_elems * x->esize, t->errbuf, SMOKE_ERRLEN) < 0)
            return -1;
        if (fault_here(x, CF_FAULT_CORRUPT) && !corrupts_input(x) && x->l.recv_elems) {
            size_t mid = x->l.recv_elems / 2; /* what this rank received comes out wrong */
            cf_smoke_store(x->d.dtype, t->hrecv, mid, cf_smoke_load(x->d.dtype, t->hrecv, mid) + 1);
        }
        wrong = verify(x, t->hrecv, why);
        cf_smoke_sink_progress(t->sink);
    }
    return wrong;
}

/* nccl-tests' warm-up (TimeTest): -w calls at every size from -b to -e by a factor of
 * 2, out of place, before the timed sizes; nothing is checked */
int cf_smoke_warmup(struct smoke_test_ctx *t, enum cf_smoke_op op, enum cf_smoke_dtype dt,
                    enum cf_smoke_redop redop, int root)
{
    if (t->o->warmup_iters <= 0)
        return 0;
    char *doing = cf_asprintf("warm-up of %s %s (-w %d at every size to -e)", cf_smoke_op_info(op)->name,
                              cf_smoke_dtype_info(dt)->name, t->o->warmup_iters);
    t->sink->begin(t->sink, doing, 1);
    free(doing);
    for (size_t bytes = t->o->sweep.min_bytes; bytes && bytes <= t->o->sweep.max_bytes; bytes *= 2) {
        struct cf_smoke_layout l;
        cf_smoke_layout_for(op, bytes, dt, t->nranks, t->rank, &l);
        if (!l.count)
            continue;
        struct test x;
        memset(&x, 0, sizeof x);
        x.t = t;
        x.op = op;
        x.call = (struct cf_smoke_call){ op, redop, dt, cf_smoke_op_info(op)->rooted ? root : -1, t->dsend,
                                         t->drecv, l.count };
        for (int i = 0; i < t->o->warmup_iters; i++)
            if (call(&x) < 0)
                return -1;
        if (bytes > t->o->sweep.max_bytes / 2)
            break;
    }
    return t->b->sync(t->b, t->errbuf, SMOKE_ERRLEN);
}

int cf_smoke_one_test(struct smoke_test_ctx *t, enum cf_smoke_op op, enum cf_smoke_dtype dt,
                      enum cf_smoke_redop redop, int root, size_t bytes, int in_place)
{
    struct test x;
    memset(&x, 0, sizeof x);
    x.t = t;
    x.op = op;
    x.info = cf_smoke_op_info(op);
    x.root = x.info->rooted ? root : -1;
    x.in_place = in_place;
    x.esize = cf_smoke_dtype_info(dt)->size;
    cf_smoke_layout_for(op, bytes, dt, t->nranks, t->rank, &x.l);
    if (x.l.count == 0)
        return SMOKE_TEST_SKIPPED;
    x.d.dtype = dt;
    x.d.redop = x.info->reduces ? redop : CF_RED_COUNT;
    x.d.nranks = t->nranks;
    x.call.op = op;
    x.call.redop = redop;
    x.call.dtype = dt;
    x.call.root = x.root;
    x.call.count = x.l.count;
    x.call.send = in_place ? (const char *)t->drecv + x.l.send_offset * x.esize : t->dsend;
    x.call.recv = in_place ? (char *)t->drecv + x.l.recv_offset * x.esize : t->drecv;

    struct cf_smoke_row row;
    memset(&row, 0, sizeof row);
    row.op = op;
    row.dtype = dt;
    row.redop = x.d.redop;
    row.root = x.root;
    row.in_place = in_place;
    row.bytes = x.l.bytes;
    row.count = x.l.count;
    row.group = t->group;
    row.nranks = t->nranks;

    const struct cf_smoke_fault *f = &t->o->fault;
    if (f->action == CF_FAULT_HANG)
        fire_fault(&x); /* hangs before saying what it starts: the others wait in it */
    char *doing = cf_smoke_describe(&row);
    t->sink->begin(t->sink, doing, 1);
    free(doing);
    fire_fault(&x);

    x.d.seed = seed_for(&x, 0);
    if (fill(&x) < 0)
        return -1;
    /* one call before the barrier, as nccl-tests' BenchTime does ("Sync"): whatever -w
     * says, the connections a fresh communicator makes on its first call of this
     * pattern (MPI's lazy TCP, NCCL's runtime connect) are made here, untimed */
    if (call(&x) < 0 || t->b->sync(t->b, t->errbuf, SMOKE_ERRLEN) < 0)
        return -1;
    double barrier = 0; /* nccl-tests' Barrier before the timed loop: all start together */
    if (t->b->host_sum(t->b, &barrier, 1, t->errbuf, SMOKE_ERRLEN) < 0)
        return -1;
    double samples[SMOKE_MAX_SAMPLES], time_us = 0;
    int nsamples = 0;
    if (timed_iterations(&x, samples, &nsamples, &time_us) < 0)
        return -1;
    struct smoke_time_stats own;
    cf_smoke_time_stats(samples, nsamples, &own);
    /* the timed calls may have changed in-place data: check fresh ones */
    struct strbuf why = STRBUF_INIT;
    int checked = t->o->check > 0 && (x.info->checks_in_place || !in_place);
    long wrong = checked ? check(&x, &why) : 0;
    if (wrong < 0 || (t->b->check_device && t->b->check_device(t->b, t->errbuf, SMOKE_ERRLEN) < 0)) {
        cf_sb_release(&why);
        return -1;
    }
    /* every rank's time, wrong count and sample statistics, to every rank */
    int n = t->nranks;
    double *agree = cf_xcalloc(AG_COUNT * (size_t)n, sizeof *agree);
    double mine[AG_COUNT] = { [AG_TIME] = time_us, [AG_WRONG] = (double)wrong, [AG_MEDIAN] = own.median,
                              [AG_FAST] = own.fast, [AG_SLOW] = own.slow, [AG_BAND_FAST] = own.band_fast,
                              [AG_BAND_SLOW] = own.band_slow };
    for (int k = 0; k < AG_COUNT; k++)
        agree[k * n + t->rank] = mine[k];
    if (t->b->host_sum(t->b, agree, AG_COUNT * (size_t)n, t->errbuf, SMOKE_ERRLEN) < 0) {
        free(agree);
        cf_sb_release(&why);
        return -1;
    }
    struct smoke_bw_figure fig;
    row.iters = t->o->iters * (t->o->graph_launches > 0 && (t->b->features & CF_FEAT_GRAPH) ? t->o->graph_launches : 1);
    agreed_row(&x, agree, checked, nsamples, &row, &fig);
    row.rank_time_us = agree + AG_TIME * n;
    row.rank_of = (int *)t->world_of;

    struct cf_smoke_event ev = { .kind = CF_EV_RESULT, .rank = t->world_rank, .local_rank = t->sink->local_rank };
    ev.row = row;
    ev.own_wrong = wrong;
    ev.own_time_us = time_us;
    ev.leader = t->rank == 0;
    if (wrong)
        cf_sb_addf(&why, " (%ld wrong element%s on this rank)", wrong, wrong == 1 ? "" : "s");
    else if (row.wrong > 0)
        cf_sb_addf(&why, "%ld wrong element(s) on other ranks", row.wrong);
    ev.text = why.len ? cf_sb_str(&why) : NULL;
    t->sink->event(t->sink, &ev);
    cf_sb_release(&why);
    free(agree);

    cf_smoke_tally_add(&t->tally, row.busbw, &fig, nsamples, row.ok);
    return SMOKE_TEST_RAN;
}
