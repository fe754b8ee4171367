/* One rank's life: start the backend, sweep ops x types x sizes x placements with
 * warmup, timed iterations and an exact check, agree with the other ranks on the
 * time and the number of wrong elements, report, finish. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "smoke/smoke_internal.h"

#define ERRLEN 1024
#define SENTINEL (-1.0) /* never a valid result: every expected value is >= 0 */

struct rank_state {
    const struct cf_smoke_opts *o;
    struct cf_smoke_backend *b;
    struct smoke_sink *sink;
    int rank, nranks;
    void *dsend, *drecv;          /* backend memory */
    unsigned char *hsend, *hrecv; /* host staging */
    size_t cap;
    int fault_fired;
    char errbuf[ERRLEN];
};

/* Element counts of one call and where its buffers sit (NCCL's conventions). */
struct layout {
    size_t send_elems, recv_elems, call_count;
    void *send, *recv;
};

char *cf_smoke_describe(enum cf_smoke_op op, enum cf_smoke_dtype dt, size_t bytes, int in_place)
{
    return cf_asprintf("%s %s %zu B %s", cf_smoke_op_info(op)->name, cf_smoke_dtype_info(dt)->name, bytes,
                       in_place ? "in-place" : "out-of-place");
}

static struct layout layout_for(struct rank_state *st, enum cf_smoke_op op, size_t count, size_t esize,
                                int in_place)
{
    struct layout l;
    size_t n = (size_t)st->nranks;
    l.send_elems = l.recv_elems = l.call_count = count;
    if (op == CF_OP_ALL_GATHER)
        l.send_elems = l.call_count = count / n;
    if (op == CF_OP_REDUCE_SCATTER)
        l.recv_elems = l.call_count = count / n;
    l.send = st->dsend;
    l.recv = in_place ? st->dsend : st->drecv;
    if (in_place && op == CF_OP_ALL_GATHER)
        l.send = (char *)st->dsend + (size_t)st->rank * l.send_elems * esize;
    if (in_place && op == CF_OP_REDUCE_SCATTER)
        l.recv = (char *)st->dsend + (size_t)st->rank * l.recv_elems * esize;
    return l;
}

static uint32_t seed_for(enum cf_smoke_op op, enum cf_smoke_dtype dt, size_t bytes, int in_place)
{
    /* differs between tests, so a stale result of the previous one cannot pass */
    return (uint32_t)(op * 7919u + dt * 104729u + bytes * 31u + (unsigned)in_place * 13u);
}

/* What the collective must produce at element j of this rank's receive buffer. */
static int64_t expected_at(struct rank_state *st, enum cf_smoke_op op, enum cf_smoke_dtype dt,
                           const struct layout *l, size_t j, uint32_t seed)
{
    int n = st->nranks;
    int64_t sum = 0;
    switch (op) {
    case CF_OP_ALL_REDUCE:
        for (int r = 0; r < n; r++)
            sum += cf_smoke_pattern(dt, n, r, j, seed);
        return sum;
    case CF_OP_BROADCAST:
        return cf_smoke_pattern(dt, n, 0, j, seed);
    case CF_OP_ALL_GATHER:
        return cf_smoke_pattern(dt, n, (int)(j / l->send_elems), j % l->send_elems, seed);
    case CF_OP_REDUCE_SCATTER:
        for (int r = 0; r < n; r++)
            sum += cf_smoke_pattern(dt, n, r, (size_t)st->rank * l->recv_elems + j, seed);
        return sum;
    case CF_OP_SENDRECV:
        return cf_smoke_pattern(dt, n, (st->rank - 1 + n) % n, j, seed);
    default:
        return 0;
    }
}

static int corrupting(struct rank_state *st, enum cf_smoke_op op)
{
    const struct cf_smoke_fault *f = &st->o->fault;
    return f->action == CF_FAULT_CORRUPT && f->rank == st->rank && f->op == op && st->fault_fired == 1;
}

/* Writes this rank's inputs (and sentinels where results will land) into backend memory. */
static int fill(struct rank_state *st, enum cf_smoke_op op, enum cf_smoke_dtype dt, const struct layout *l,
                int in_place, uint32_t seed)
{
    size_t esize = cf_smoke_dtype_info(dt)->size;
    int n = st->nranks;
    int own_data = !(op == CF_OP_BROADCAST && in_place && st->rank != 0);
    for (size_t i = 0; i < l->send_elems; i++)
        cf_smoke_store(dt, st->hsend, i,
                       own_data ? (double)cf_smoke_pattern(dt, n, st->rank, i, seed) : SENTINEL);
    if (corrupting(st, op) && l->send_elems) /* fault injection: one wrong input element */
        cf_smoke_store(dt, st->hsend, l->send_elems / 2, cf_smoke_load(dt, st->hsend, l->send_elems / 2) + 1);
    for (size_t j = 0; j < l->recv_elems; j++)
        cf_smoke_store(dt, st->hrecv, j, SENTINEL);
    int rc = 0;
    if (in_place && op == CF_OP_ALL_GATHER) {
        memcpy(st->hrecv + (size_t)st->rank * l->send_elems * esize, st->hsend, l->send_elems * esize);
        rc = st->b->upload(st->b, l->recv, st->hrecv, l->recv_elems * esize, st->errbuf, ERRLEN);
    } else {
        rc = st->b->upload(st->b, l->send, st->hsend, l->send_elems * esize, st->errbuf, ERRLEN);
        if (rc == 0 && !in_place)
            rc = st->b->upload(st->b, l->recv, st->hrecv, l->recv_elems * esize, st->errbuf, ERRLEN);
    }
    return rc;
}

/* Compares the receive buffer with the expected values; describes the first miss. */
static long verify(struct rank_state *st, enum cf_smoke_op op, enum cf_smoke_dtype dt, const struct layout *l,
                   uint32_t seed, struct strbuf *why)
{
    long wrong = 0;
    for (size_t j = 0; j < l->recv_elems; j++) {
        double got = cf_smoke_load(dt, st->hrecv, j);
        int64_t want = expected_at(st, op, dt, l, j, seed);
        if (got != (double)want) {
            if (!wrong)
                cf_sb_addf(why, "index %zu: expected %lld, got %.9g", j, (long long)want, got);
            wrong++;
        }
    }
    return wrong;
}

static void fire_fault(struct rank_state *st, enum cf_smoke_op op)
{
    const struct cf_smoke_fault *f = &st->o->fault;
    if (f->action == CF_FAULT_NONE || f->rank != st->rank || f->op != op || st->fault_fired++)
        return;
    switch (f->action) {
    case CF_FAULT_ABORT:
        raise(SIGABRT);
        _exit(134);
    case CF_FAULT_EXIT:
        _exit(3);
    case CF_FAULT_HANG:
        for (;;)
            pause();
    default:
        break;
    }
}

static int run_one(struct rank_state *st, enum cf_smoke_op op, enum cf_smoke_dtype dt, size_t count,
                   int in_place, struct cf_smoke_report *rep)
{
    const struct cf_smoke_opts *o = st->o;
    size_t esize = cf_smoke_dtype_info(dt)->size;
    size_t bytes = count * esize;
    struct layout l = layout_for(st, op, count, esize, in_place);
    uint32_t seed = seed_for(op, dt, bytes, in_place);
    struct cf_smoke_backend *b = st->b;

    if (st->o->fault.action == CF_FAULT_HANG)
        fire_fault(st, op); /* hangs before saying what it starts: the others wait in it */
    char *doing = cf_smoke_describe(op, dt, bytes, in_place);
    st->sink->begin(st->sink, doing, 1);
    free(doing);
    fire_fault(st, op);

    if (fill(st, op, dt, &l, in_place, seed) < 0)
        return -1;
    for (int i = 0; i < o->warmup_iters; i++)
        if (b->collective(b, op, l.send, l.recv, l.call_count, dt, st->errbuf, ERRLEN) < 0)
            return -1;
    if (b->sync(b, st->errbuf, ERRLEN) < 0)
        return -1;
    double t0 = cf_now_seconds();
    for (int i = 0; i < o->iters; i++)
        if (b->collective(b, op, l.send, l.recv, l.call_count, dt, st->errbuf, ERRLEN) < 0)
            return -1;
    if (b->sync(b, st->errbuf, ERRLEN) < 0)
        return -1;
    double time_us = o->iters > 0 ? (cf_now_seconds() - t0) * 1e6 / o->iters : 0;

    /* the timed runs may have changed in-place data: check a fresh run */
    long wrong = 0;
    struct strbuf why = STRBUF_INIT;
    if (o->check) {
        if (fill(st, op, dt, &l, in_place, seed) < 0 ||
            b->collective(b, op, l.send, l.recv, l.call_count, dt, st->errbuf, ERRLEN) < 0 ||
            b->sync(b, st->errbuf, ERRLEN) < 0 ||
            b->download(b, st->hrecv, l.recv, l.recv_elems * esize, st->errbuf, ERRLEN) < 0) {
            cf_sb_release(&why);
            return -1;
        }
        wrong = verify(st, op, dt, &l, seed, &why);
    }
    double agree[2] = { time_us, (double)wrong };
    if (b->host_sum(b, agree, 2, st->errbuf, ERRLEN) < 0) {
        cf_sb_release(&why);
        return -1;
    }
    struct cf_smoke_row row = { op, dt, in_place, bytes, count, agree[0] / st->nranks, 0, 0, wrong, wrong == 0 };
    row.algbw = row.time_us > 0 ? (double)bytes / row.time_us / 1e3 : 0;
    row.busbw = row.algbw * cf_smoke_op_info(op)->busbw_factor(st->nranks);

    struct cf_smoke_event ev = { .kind = CF_EV_RESULT, .rank = st->rank, .local_rank = st->sink->local_rank };
    ev.row = row;
    ev.wrong_all_ranks = (long)agree[1];
    if (wrong)
        cf_sb_addf(&why, " (%ld wrong element%s on this rank)", wrong, wrong == 1 ? "" : "s");
    else if (ev.wrong_all_ranks)
        cf_sb_addf(&why, "%ld wrong element(s) on other ranks", ev.wrong_all_ranks);
    ev.text = why.len ? cf_sb_str(&why) : NULL;
    st->sink->event(st->sink, &ev);
    cf_sb_release(&why);

    row.wrong = ev.wrong_all_ranks;
    row.ok = row.wrong == 0;
    cf_smoke_report_add_row(rep, &row);
    return 0;
}

static size_t next_size(const struct cf_smoke_sweep *sw, size_t bytes)
{
    size_t next = sw->step_bytes ? bytes + sw->step_bytes : (size_t)((double)bytes * sw->step_factor);
    return next > bytes ? next : 0; /* 0: the sweep stops */
}

static int sweep(struct rank_state *st, struct cf_smoke_report *rep)
{
    const struct cf_smoke_opts *o = st->o;
    for (int op = 0; op < CF_OP_COUNT; op++) {
        if (!(o->ops & (1u << op)))
            continue;
        for (int dt = 0; dt < CF_DT_COUNT; dt++) {
            if (!(o->dtypes & (1u << dt)))
                continue;
            size_t esize = cf_smoke_dtype_info((enum cf_smoke_dtype)dt)->size;
            for (size_t bytes = o->sweep.min_bytes; bytes && bytes <= o->sweep.max_bytes;
                 bytes = next_size(&o->sweep, bytes)) {
                size_t count = cf_smoke_count_for((enum cf_smoke_op)op, bytes, esize, st->nranks);
                if (count == 0)
                    continue;
                for (int place = 0; place < 2; place++) {
                    int in_place = place == 1;
                    if (!(o->places & (in_place ? CF_PLACE_IN : CF_PLACE_OUT)))
                        continue;
                    if (in_place && !cf_smoke_op_info((enum cf_smoke_op)op)->has_in_place)
                        continue;
                    if (run_one(st, (enum cf_smoke_op)op, (enum cf_smoke_dtype)dt, count, in_place, rep) < 0)
                        return -1;
                }
            }
        }
    }
    return 0;
}

static int open_backend(const struct smoke_rank_setup *setup, struct smoke_sink *sink, struct cf_smoke_backend *b,
                        cf_error *err)
{
    if (setup->opts->backend != CF_BACKEND_MPI)
        return cf_smoke_nccl_backend_open(b, setup, sink, err);
    char *plugin = NULL;
    if (cf_smoke_mpi_backend_open(b, setup->opts->envp, &plugin, err) < 0)
        return -1;
    cf_smoke_sink_info(sink, "plugin_path", "%s", plugin);
    free(plugin);
    return 0;
}

int cf_smoke_rank_main(const struct smoke_rank_setup *setup, struct smoke_sink *sink, struct cf_smoke_report *rep,
                    cf_error *err)
{
    struct cf_smoke_backend b;
    struct rank_state st;
    memset(&st, 0, sizeof st);
    st.o = setup->opts;
    st.b = &b;
    st.sink = sink;
    st.rank = setup->ctx.rank;
    st.nranks = setup->ctx.nranks;
    rep->rank = st.rank;
    rep->nranks = st.nranks;

    cf_smoke_sink_begin(sink, 0, "starting the %s backend",
                     setup->opts->backend == CF_BACKEND_MPI ? "mpi" : "nccl");
    fire_fault(&st, CF_OP_COUNT); /* the fault switch's "init" */
    if (open_backend(setup, sink, &b, err) < 0)
        return -1;
    int rc = -1;
    if (setup->opts->backend == CF_BACKEND_MPI)
        cf_smoke_sink_begin(sink, 1, "MPI_Init");
    int init_rc = b.init(&b, &setup->ctx, st.errbuf, ERRLEN);
    if (b.version[0]) {
        free(rep->lib_version);
        rep->lib_version = cf_strdup(b.version);
    }
    if (init_rc < 0) {
        cf_error_set(err, CF_ERR_FAILED, "%s", st.errbuf);
        goto out;
    }
    if (setup->opts->backend == CF_BACKEND_MPI) /* the nccl backend said it as soon as it knew */
        cf_smoke_sink_info(sink, "lib_version", "%s", b.version);

    st.cap = setup->opts->sweep.max_bytes + 64;
    st.hsend = cf_xmalloc(st.cap);
    st.hrecv = cf_xmalloc(st.cap);
    cf_smoke_sink_begin(sink, 0, "allocating 2 x %zu bytes", st.cap);
    if (!(st.dsend = b.alloc(&b, st.cap, st.errbuf, ERRLEN)) || !(st.drecv = b.alloc(&b, st.cap, st.errbuf, ERRLEN))) {
        cf_error_set(err, CF_ERR_FAILED, "%s", st.errbuf);
        goto out;
    }
    if (sweep(&st, rep) < 0) {
        cf_error_set(err, CF_ERR_FAILED, "%s", st.errbuf);
        goto out;
    }
    rc = 0;
out:
    if (st.dsend)
        b.release(&b, st.dsend);
    if (st.drecv)
        b.release(&b, st.drecv);
    free(st.hsend);
    free(st.hrecv);
    b.finalize(&b);
    return rc;
}
