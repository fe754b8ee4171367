/* The MPI backend of `cclforge smoke`: collectives on host memory through a libmpi
 * loaded at run time (mpi_api.c: Open MPI or an MPICH-ABI library), with NCCL's
 * argument conventions. fp16 and bf16 reductions are done in C (MPI has no 16-bit
 * float types); avg is NCCL's: integers summed then divided by n, floats multiplied
 * by 1/n first, then summed. */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cclforge/smoke.h"
#include "cclforge/smoke_half.h"
#include "smoke/mpi_api.h"
#include "smoke/smoke_internal.h"

/* What a call needs around its one MPI call; none: it can be issued as planned, again
 * and again (the timed loop's prepared call). */
enum {
    AROUND_PRESCALE = 1,  /* avg of floats: the send buffer is a copy premultiplied by 1/n */
    AROUND_DIVIDE = 2,    /* avg of integers: the sum divided by n afterwards */
    AROUND_ROOT_COPY = 4, /* broadcast out of place: the root's input copied to recv first */
    AROUND_SLOT_MOVE = 8, /* reduce_scatter in place: MPI's result moved to the rank's slot */
    AROUND_STATUS = 16    /* sendrecv: the status checked */
};

/* One MPI call with every argument fixed: NCCL's in-place forms spelled the MPI way
 * (MPI_IN_PLACE: MPI forbids aliasing). */
struct mpi_call {
    enum cf_smoke_op op;
    const void *send; /* NULL until the caller's prescaled copy fills it (AROUND_PRESCALE) */
    void *recv;
    int n, root, to, from; /* to, from: sendrecv's peers */
    cf_mpi_handle type, red, comm;
    unsigned around;
    size_t send_elems, divided; /* the prescaled copy's elements; the elements divided */
};

struct mpi_state {
    struct cf_mpi_api mpi;
    int rank, nranks; /* the current communicator */
    size_t max_count; /* INT_MAX / nranks: the largest count every call's MPI int holds (a division a call
                       * is ~8 ns, next to a 1 KiB host all_reduce of ~1 us) */
    int we_initialized;
    cf_mpi_handle cur, sub;
    cf_mpi_handle half_ops[2][4]; /* [fp16, bf16][sum, prod, max, min] */
    struct mpi_call ready;        /* mpi_prepare's */
};

/* The MPI type of each element type: fp16 and bf16 travel as bits, reduced by our ops. */
static const enum cf_mpi_handle_id mpi_types[CF_DT_COUNT] = {
    [CF_DT_INT8] = CF_MPI_INT8_T,     [CF_DT_UINT8] = CF_MPI_UINT8_T,   [CF_DT_INT32] = CF_MPI_INT32_T,
    [CF_DT_UINT32] = CF_MPI_UINT32_T, [CF_DT_INT64] = CF_MPI_INT64_T,   [CF_DT_UINT64] = CF_MPI_UINT64_T,
    [CF_DT_FLOAT16] = CF_MPI_UINT16_T, [CF_DT_FLOAT32] = CF_MPI_FLOAT, [CF_DT_FLOAT64] = CF_MPI_DOUBLE,
    [CF_DT_BFLOAT16] = CF_MPI_UINT16_T,
};
/* avg is a sum (then a division or a premultiplication) */
static const enum cf_mpi_handle_id mpi_ops[CF_RED_COUNT] = {
    [CF_RED_SUM] = CF_MPI_SUM, [CF_RED_PROD] = CF_MPI_PROD, [CF_RED_MAX] = CF_MPI_MAX, [CF_RED_MIN] = CF_MPI_MIN,
    [CF_RED_AVG] = CF_MPI_SUM,
};
static const int half_op_index[CF_RED_COUNT] = { [CF_RED_SUM] = 0, [CF_RED_PROD] = 1, [CF_RED_MAX] = 2,
                                                 [CF_RED_MIN] = 3, [CF_RED_AVG] = 0 };

static int fail(char *errbuf, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_mpi(const struct cf_mpi_api *m, const char *call, int rc, char *errbuf, size_t errlen)
{
    char *words = cf_xcalloc(1, (size_t)m->abi->max_error_string + 1);
    int n = 0;
    if (m->Error_string(rc, words, &n) != 0)
        snprintf(words, (size_t)m->abi->max_error_string, "MPI error %d", rc);
    fail(errbuf, errlen, "%s failed: %s", call, words);
    free(words);
    return -1;
}

/* ---- 16-bit floats: one user op per reduction, through float ---- */
static float fold(int red, float a, float b)
{
    switch (red) {
    case 1: return a * b;
    case 2: return a > b ? a : b;
    case 3: return a < b ? a : b;
    default: return a + b;
    }
}

#define HALF_OP(fn, load, store, red)                                                                              \
    static void fn(void *in, void *inout, int *len, void *dt)                                                      \
    {                                                                                                              \
        (void)dt;                                                                                                  \
        const uint16_t *a = in;                                                                                    \
        uint16_t *b = inout;                                                                                       \
        for (int i = 0; i < *len; i++)                                                                             \
            b[i] = store(fold(red, load(a[i]), load(b[i])));                                                      \
    }
HALF_OP(f16_sum, cf_f16_to_f32, cf_f32_to_f16, 0)
HALF_OP(f16_prod, cf_f16_to_f32, cf_f32_to_f16, 1)
HALF_OP(f16_max, cf_f16_to_f32, cf_f32_to_f16, 2)
HALF_OP(f16_min, cf_f16_to_f32, cf_f32_to_f16, 3)
HALF_OP(bf16_sum, cf_bf16_to_f32, cf_f32_to_bf16, 0)
HALF_OP(bf16_prod, cf_bf16_to_f32, cf_f32_to_bf16, 1)
HALF_OP(bf16_max, cf_bf16_to_f32, cf_f32_to_bf16, 2)
HALF_OP(bf16_min, cf_bf16_to_f32, cf_f32_to_bf16, 3)

static cf_mpi_handle mpi_type(const struct mpi_state *s, enum cf_smoke_dtype dt)
{
    return s->mpi.h[mpi_types[dt]];
}

static cf_mpi_handle mpi_op(const struct mpi_state *s, enum cf_smoke_dtype dt, enum cf_smoke_redop red)
{
    if (dt == CF_DT_FLOAT16 || dt == CF_DT_BFLOAT16)
        return s->half_ops[dt == CF_DT_BFLOAT16][half_op_index[red]];
    return s->mpi.h[mpi_ops[red]];
}

static int is_float(enum cf_smoke_dtype dt)
{
    return cf_smoke_dtype_info(dt)->is_float;
}

/* avg of floats: every input times 1/n (in float for 16 and 32 bits), into dst */
static void prescale(enum cf_smoke_dtype dt, const void *src, void *dst, size_t n, int nranks)
{
    float f = 1.0f / (float)nranks;
    double d = 1.0 / nranks;
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        switch (dt) {
        case CF_DT_FLOAT32: ((float *)dst)[i] = ((const float *)src)[i] * f; break;
        case CF_DT_FLOAT64: ((double *)dst)[i] = ((const double *)src)[i] * d; break;
        case CF_DT_FLOAT16:
            memcpy(&h, (const char *)src + 2 * i, 2);
            h = cf_f32_to_f16(cf_f16_to_f32(h) * f);
            memcpy((char *)dst + 2 * i, &h, 2);
            break;
        case CF_DT_BFLOAT16:
            memcpy(&h, (const char *)src + 2 * i, 2);
            h = cf_f32_to_bf16(cf_bf16_to_f32(h) * f);
            memcpy((char *)dst + 2 * i, &h, 2);
            break;
        default: break;
        }
    }
}

/* avg of integers: the sum divided by n */
static void divide(enum cf_smoke_dtype dt, void *buf, size_t n, int nranks)
{
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case CF_DT_INT8: ((int8_t *)buf)[i] = (int8_t)(((int8_t *)buf)[i] / nranks); break;
        case CF_DT_UINT8: ((uint8_t *)buf)[i] = (uint8_t)(((uint8_t *)buf)[i] / nranks); break;
        case CF_DT_INT32: ((int32_t *)buf)[i] /= nranks; break;
        case CF_DT_UINT32: ((uint32_t *)buf)[i] /= (uint32_t)nranks; break;
        case CF_DT_INT64: ((int64_t *)buf)[i] /= nranks; break;
        case CF_DT_UINT64: ((uint64_t *)buf)[i] /= (uint64_t)nranks; break;
        default: break;
        }
    }
}

/* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"; "MPICH Version:      5.0.2\n..."
 * -> "MPICH Version: 5.0.2": the first line, its first clause, runs of blanks as one */
static void short_version(const char *lib, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = lib; *p && *p != ',' && *p != '\n' && n + 1 < cap; p++) {
        if ((*p == ' ' || *p == '\t') && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = *p == '\t' ? ' ' : *p;
    }
    while (n && out[n - 1] == ' ')
        n--;
    out[n] = 0;
}

/* This rank's place in comm, now the one calls go to, and the largest count
 * every call's MPI int holds there. */
static void use_comm(struct mpi_state *s, cf_mpi_handle comm)
{
    s->mpi.Comm_rank(comm, &s->rank);
    s->mpi.Comm_size(comm, &s->nranks);
    s->max_count = INT_MAX / (size_t)(s->nranks > 0 ? s->nranks : 1);
}

static int mpi_init(struct cf_smoke_backend *b, const struct cf_smoke_rank_ctx *ctx, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    const struct cf_mpi_api *m = &s->mpi;
    int up = 0;
    m->Initialized(&up);
    if (!up) {
        int rc = m->Init(NULL, NULL);
        if (rc != 0)
            return fail(errbuf, errlen, "MPI_Init of %s failed (error %d)", m->path, rc);
        s->we_initialized = 1;
    }
    cf_mpi_handle world = m->h[CF_MPI_COMM_WORLD];
    /* errors come back as values, so a failure is reported rather than aborting the job */
    m->Comm_set_errhandler(world, m->h[CF_MPI_ERRORS_RETURN]);
    s->cur = world;
    s->sub = m->h[CF_MPI_COMM_NULL];
    use_comm(s, world);
    if (ctx && (ctx->rank != s->rank || ctx->nranks != s->nranks))
        return fail(errbuf, errlen,
                    "%s says rank %d of %d but the launcher's variables say rank %d of %d: was cclforge started by "
                    "this MPI's own launcher (mpirun/mpiexec)?",
                    m->path, s->rank, s->nranks, ctx->rank, ctx->nranks);
    cf_mpi_user_fn *ops[2][4] = { { f16_sum, f16_prod, f16_max, f16_min }, { bf16_sum, bf16_prod, bf16_max, bf16_min } };
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 4; k++) {
            union cf_mpi_slot op = { 0 };
            if (m->Op_create(ops[t][k], 1, &op) != 0)
                return fail(errbuf, errlen, "MPI_Op_create failed");
            s->half_ops[t][k] = cf_mpi_slot_get(m, &op);
        }
    char *lib = cf_xcalloc(1, (size_t)m->abi->max_library_version_string + 1);
    int len = 0;
    m->Get_library_version(lib, &len);
    short_version(lib, b->version, sizeof b->version);
    free(lib);
    snprintf(b->device, sizeof b->device, "host memory");
    return 0;
}

static void *mpi_alloc(struct cf_smoke_backend *b, size_t bytes, char *errbuf, size_t errlen)
{
    (void)b;
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        fail(errbuf, errlen, "out of memory allocating %zu bytes", bytes);
    return p;
}

static void mpi_release(struct cf_smoke_backend *b, void *buf)
{
    (void)b;
    free(buf);
}

static int mpi_copy(struct cf_smoke_backend *b, void *dst, const void *src, size_t bytes, char *errbuf, size_t errlen)
{
    (void)b, (void)errbuf, (void)errlen;
    if (dst != src)
        memmove(dst, src, bytes);
    return 0;
}

static const char *const mpi_call_names[CF_OP_COUNT] = {
    [CF_OP_ALL_REDUCE] = "MPI_Allreduce", [CF_OP_REDUCE] = "MPI_Reduce",
    [CF_OP_REDUCE_SCATTER] = "MPI_Reduce_scatter_block", [CF_OP_BROADCAST] = "MPI_Bcast",
    [CF_OP_ALL_GATHER] = "MPI_Allgather", [CF_OP_GATHER] = "MPI_Gather", [CF_OP_SCATTER] = "MPI_Scatter",
    [CF_OP_ALLTOALL] = "MPI_Alltoall", [CF_OP_SENDRECV] = "MPI_Sendrecv",
};

static const char *call_name(const struct mpi_call *p)
{
    return p->op == CF_OP_SENDRECV && p->send == p->recv ? "MPI_Sendrecv_replace" : mpi_call_names[p->op];
}

/* 0, or -1 with why in errbuf: a call MPI cannot take */
static int plan(const struct mpi_state *s, const struct cf_smoke_call *c, struct mpi_call *p, char *errbuf,
                size_t errlen)
{
    if ((unsigned)c->op >= CF_OP_COUNT)
        return fail(errbuf, errlen, "unknown collective %d", (int)c->op);
    if (c->count > s->max_count)
        return fail(errbuf, errlen, "%zu elements exceed MPI's int count", c->count);
    void *in_place = s->mpi.in_place;
    size_t share = c->count * cf_smoke_dtype_info(c->dtype)->size;
    int root = s->rank == c->root;
    *p = (struct mpi_call){ .op = c->op, .send = c->send, .recv = c->recv, .n = (int)c->count, .root = c->root,
                            .type = mpi_type(s, c->dtype), .comm = s->cur, .divided = c->count };
    switch (c->op) {
    case CF_OP_ALL_REDUCE:
    case CF_OP_REDUCE:
    case CF_OP_REDUCE_SCATTER: {
        p->red = mpi_op(s, c->dtype, c->redop);
        p->send_elems = c->op == CF_OP_REDUCE_SCATTER ? c->count * (size_t)s->nranks : c->count;
        if (c->op == CF_OP_REDUCE && !root)
            p->divided = 0; /* recv is not touched */
        if (c->redop == CF_RED_AVG)
            p->around |= is_float(c->dtype) ? AROUND_PRESCALE : AROUND_DIVIDE;
        if (p->around & AROUND_PRESCALE) {
            p->send = NULL; /* a copy of its own: never in place */
            break;
        }
        const char *slot = (const char *)c->send + (size_t)s->rank * share;
        if (c->op == CF_OP_ALL_REDUCE && c->send == c->recv)
            p->send = in_place;
        else if (c->op == CF_OP_REDUCE && c->send == c->recv && root)
            p->send = in_place; /* MPI_IN_PLACE only at the root; elsewhere recv is not touched */
        else if (c->op == CF_OP_REDUCE_SCATTER && (const char *)c->recv == slot) {
            /* MPI leaves an in-place result at the start of the buffer, NCCL at the rank's slot */
            p->send = in_place;
            p->recv = (void *)c->send;
            p->around |= s->rank ? AROUND_SLOT_MOVE : 0;
        }
        break;
    }
    case CF_OP_BROADCAST:
        p->around |= root && c->send != c->recv ? AROUND_ROOT_COPY : 0;
        break;
    case CF_OP_ALL_GATHER:
        p->send = c->send == (const char *)c->recv + (size_t)s->rank * share ? in_place : c->send;
        break;
    case CF_OP_GATHER:
        p->send = root && c->send == (const char *)c->recv + (size_t)s->rank * share ? in_place : c->send;
        break;
    case CF_OP_SCATTER:
        p->recv = root && (const char *)c->recv == (const char *)c->send + (size_t)s->rank * share ? in_place
                                                                                                 : c->recv;
        break;
    case CF_OP_ALLTOALL:
        p->send = c->send == c->recv ? in_place : c->send;
        break;
    default: /* sendrecv: a ring, and its status says where the message came from */
        p->to = (s->rank + 1) % s->nranks;
        p->from = (s->rank - 1 + s->nranks) % s->nranks;
        p->around |= AROUND_STATUS;
        break;
    }
    return 0;
}

/* the planned call; status: MPI_Status room for sendrecv */
static int issue(const struct cf_mpi_api *m, const struct mpi_call *p, void *status)
{
    switch (p->op) {
    case CF_OP_ALL_REDUCE: return m->Allreduce(p->send, p->recv, p->n, p->type, p->red, p->comm);
    case CF_OP_REDUCE: return m->Reduce(p->send, p->recv, p->n, p->type, p->red, p->root, p->comm);
    case CF_OP_REDUCE_SCATTER: return m->Reduce_scatter_block(p->send, p->recv, p->n, p->type, p->red, p->comm);
    case CF_OP_BROADCAST: return m->Bcast(p->recv, p->n, p->type, p->root, p->comm);
    case CF_OP_ALL_GATHER: return m->Allgather(p->send, p->n, p->type, p->recv, p->n, p->type, p->comm);
    case CF_OP_GATHER: return m->Gather(p->send, p->n, p->type, p->recv, p->n, p->type, p->root, p->comm);
    case CF_OP_SCATTER: return m->Scatter(p->send, p->n, p->type, p->recv, p->n, p->type, p->root, p->comm);
    case CF_OP_ALLTOALL: return m->Alltoall(p->send, p->n, p->type, p->recv, p->n, p->type, p->comm);
    default:
        return p->send == p->recv
                   ? m->Sendrecv_replace(p->recv, p->n, p->type, p->to, 0, p->from, 0, p->comm, status)
                   : m->Sendrecv(p->send, p->n, p->type, p->to, 0, p->recv, p->n, p->type, p->from, 0, p->comm,
                                 status);
    }
}

/* A sendrecv's status says where its message came from: read through the ABI's own
 * MPI_Status layout, so a wrong layout in the table fails the run, not silently. */
static int check_status(const struct mpi_state *s, const unsigned char *status, int source, char *errbuf,
                        size_t errlen)
{
    const struct cf_mpi_abi *abi = s->mpi.abi;
    int got_source, got_tag;
    memcpy(&got_source, status + abi->status_source, sizeof got_source);
    memcpy(&got_tag, status + abi->status_tag, sizeof got_tag);
    if (got_source == source && got_tag == 0)
        return 0;
    return fail(errbuf, errlen, "MPI_Sendrecv's status says source %d tag %d, expected source %d tag 0 (%s ABI)",
                got_source, got_tag, source, abi->name);
}

static int mpi_collective(struct cf_smoke_backend *b, const struct cf_smoke_call *c, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    const struct cf_mpi_api *m = &s->mpi;
    struct mpi_call p;
    if (plan(s, c, &p, errbuf, errlen) < 0)
        return -1;
    size_t esize = cf_smoke_dtype_info(c->dtype)->size;
    void *scaled = NULL;
    if (p.around & AROUND_PRESCALE) {
        scaled = malloc(p.send_elems * esize + 1);
        if (!scaled)
            return fail(errbuf, errlen, "out of memory");
        prescale(c->dtype, c->send, scaled, p.send_elems, s->nranks);
        p.send = scaled;
    }
    if (p.around & AROUND_ROOT_COPY)
        memcpy(c->recv, c->send, c->count * esize);
    _Alignas(8) unsigned char status[CF_MPI_STATUS_MAX] = { 0 };
    int rc = issue(m, &p, status);
    free(scaled);
    if (rc != 0)
        return fail_mpi(m, call_name(&p), rc, errbuf, errlen);
    if (p.around & AROUND_SLOT_MOVE)
        memmove(c->recv, p.recv, c->count * esize);
    if ((p.around & AROUND_DIVIDE) && p.divided)
        divide(c->dtype, c->recv, p.divided, s->nranks);
    return p.around & AROUND_STATUS ? check_status(s, status, p.from, errbuf, errlen) : 0;
}

/* The timed loop's call: planned once, issued as is (nothing around it). */
static int mpi_prepare(struct cf_smoke_backend *b, const struct cf_smoke_call *c)
{
    struct mpi_state *s = b->state;
    char why[1]; /* collective says why */
    return plan(s, c, &s->ready, why, sizeof why) == 0 && s->ready.around == 0;
}

static int mpi_run_prepared(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    int rc = issue(&s->mpi, &s->ready, NULL);
    return rc == 0 ? 0 : fail_mpi(&s->mpi, call_name(&s->ready), rc, errbuf, errlen);
}

static int mpi_sync(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    (void)b, (void)errbuf, (void)errlen;
    return 0; /* blocking calls: done when they return */
}

static int mpi_host_sum(struct cf_smoke_backend *b, double *vals, size_t n, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    const struct cf_mpi_api *m = &s->mpi;
    if (n > INT_MAX)
        return fail(errbuf, errlen, "too many values");
    int rc = m->Allreduce(m->in_place, vals, (int)n, m->h[CF_MPI_DOUBLE], m->h[CF_MPI_SUM], s->cur);
    return rc == 0 ? 0 : fail_mpi(m, "MPI_Allreduce", rc, errbuf, errlen);
}

static int mpi_host_allgather(struct cf_smoke_backend *b, const void *mine, void *all, size_t len, char *errbuf,
                              size_t errlen)
{
    struct mpi_state *s = b->state;
    const struct cf_mpi_api *m = &s->mpi;
    if (len > INT_MAX)
        return fail(errbuf, errlen, "too many bytes");
    cf_mpi_handle byte = m->h[CF_MPI_BYTE];
    int rc = m->Allgather(mine, (int)len, byte, all, (int)len, byte, s->cur);
    return rc == 0 ? 0 : fail_mpi(m, "MPI_Allgather", rc, errbuf, errlen);
}

static int mpi_host_bcast(struct cf_smoke_backend *b, void *buf, size_t len, int root, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    const struct cf_mpi_api *m = &s->mpi;
    if (len > INT_MAX)
        return fail(errbuf, errlen, "broadcast too large");
    int rc = m->Bcast(buf, (int)len, m->h[CF_MPI_BYTE], root, m->h[CF_MPI_COMM_WORLD]);
    return rc == 0 ? 0 : fail_mpi(m, "MPI_Bcast", rc, errbuf, errlen);
}

static int mpi_split(struct cf_smoke_backend *b, int color, int key, int *rank, int *nranks, char *errbuf,
                     size_t errlen)
{
    struct mpi_state *s = b->state;
    const struct cf_mpi_api *m = &s->mpi;
    union cf_mpi_slot out;
    cf_mpi_slot_set(m, &out, m->h[CF_MPI_COMM_NULL]);
    int rc = m->Comm_split(m->h[CF_MPI_COMM_WORLD], color >= 0 ? color : m->abi->undefined, key, &out);
    if (rc != 0)
        return fail_mpi(m, "MPI_Comm_split", rc, errbuf, errlen);
    cf_mpi_handle sub = cf_mpi_slot_get(m, &out);
    int none = sub == m->h[CF_MPI_COMM_NULL];
    s->sub = sub;
    s->cur = none ? m->h[CF_MPI_COMM_WORLD] : sub;
    if (!none) {
        m->Comm_set_errhandler(sub, m->h[CF_MPI_ERRORS_RETURN]);
        use_comm(s, sub);
    }
    *rank = s->rank;
    *nranks = s->nranks;
    return 0;
}

/* MPI's blocking calls spin while they wait; a rank with nothing to do in a round
 * waits here instead, polling a non-blocking barrier with a nap between tests */
static int mpi_idle_barrier(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    const struct cf_mpi_api *m = &s->mpi;
    union cf_mpi_slot req = { 0 };
    int rc = m->Ibarrier(m->h[CF_MPI_COMM_WORLD], &req);
    if (rc != 0)
        return fail_mpi(m, "MPI_Ibarrier", rc, errbuf, errlen);
    for (;;) {
        int done = 0;
        rc = m->Test(&req, &done, m->status_ignore);
        if (rc != 0)
            return fail_mpi(m, "MPI_Test", rc, errbuf, errlen);
        if (done)
            return 0;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

static void mpi_unsplit(struct cf_smoke_backend *b)
{
    struct mpi_state *s = b->state;
    const struct cf_mpi_api *m = &s->mpi;
    cf_mpi_handle world = m->h[CF_MPI_COMM_WORLD];
    if (s->sub != m->h[CF_MPI_COMM_NULL]) {
        union cf_mpi_slot sub;
        cf_mpi_slot_set(m, &sub, s->sub);
        m->Comm_free(&sub);
    }
    s->sub = m->h[CF_MPI_COMM_NULL];
    s->cur = world;
    use_comm(s, world);
}

static void mpi_finalize(struct cf_smoke_backend *b)
{
    struct mpi_state *s = b->state;
    if (!s)
        return;
    const struct cf_mpi_api *m = &s->mpi;
    int up = 0, down = 0;
    m->Initialized(&up);
    m->Finalized(&down);
    if (up && !down) {
        mpi_unsplit(b);
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < 4; k++)
                if (s->half_ops[t][k] && s->half_ops[t][k] != m->h[CF_MPI_OP_NULL]) {
                    union cf_mpi_slot op;
                    cf_mpi_slot_set(m, &op, s->half_ops[t][k]);
                    m->Op_free(&op);
                }
        if (s->we_initialized)
            b->finalize_later = m->Finalize; /* after the report: see smoke_backend.h */
        b->leave_by_exit = m->abi->leave_by_exit;
    }
    cf_mpi_api_unload(&s->mpi);
    free(s);
    b->state = NULL;
}

int cf_smoke_mpi_backend_open(struct cf_smoke_backend *b, const struct cf_smoke_opts *o, struct smoke_mpi_info *info,
                              cf_error *err)
{
    memset(b, 0, sizeof *b);
    memset(info, 0, sizeof *info);
    struct mpi_state *s = cf_xcalloc(1, sizeof *s);
    if (cf_mpi_api_load(&s->mpi, o->mpi_lib, o->envp, err) < 0) {
        free(s);
        return -1;
    }
    info->path = s->mpi.path;
    info->abi = s->mpi.abi->name;
    info->soname = s->mpi.abi->sonames[0];
    info->chosen_by = s->mpi.chosen_by;
    *b = (struct cf_smoke_backend){
        .name = "mpi", .state = s, .init = mpi_init, .alloc = mpi_alloc, .release = mpi_release,
        .upload = mpi_copy, .download = mpi_copy, .collective = mpi_collective, .prepare = mpi_prepare,
        .run_prepared = mpi_run_prepared, .sync = mpi_sync, .host_sum = mpi_host_sum,
        .host_allgather = mpi_host_allgather, .host_bcast = mpi_host_bcast, .split = mpi_split,
        .unsplit = mpi_unsplit, .idle_barrier = mpi_idle_barrier, .finalize = mpi_finalize,
    };
    return 0;
}
