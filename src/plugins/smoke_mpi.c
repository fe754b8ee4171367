/* The MPI backend of `cclforge smoke`: collectives on host memory through MPI, with
 * NCCL's argument conventions. Built as a plugin so that only it links libmpi; it
 * uses nothing from libcclforge. fp16 and bf16 reductions are done in C (MPI has no
 * 16-bit float types); avg is NCCL's: integers summed then divided by n, floats
 * multiplied by 1/n first, then summed. */
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cclforge/smoke_backend.h"
#include "cclforge/smoke_half.h"

struct mpi_state {
    int rank, nranks;         /* the current communicator */
    int we_initialized;
    MPI_Comm cur, sub;
    MPI_Op half_ops[2][4];    /* [fp16, bf16][sum, prod, max, min] */
};

static const size_t dtype_sizes[CF_DT_COUNT] = {
    [CF_DT_INT8] = 1, [CF_DT_UINT8] = 1, [CF_DT_INT32] = 4, [CF_DT_UINT32] = 4, [CF_DT_INT64] = 8,
    [CF_DT_UINT64] = 8, [CF_DT_FLOAT16] = 2, [CF_DT_FLOAT32] = 4, [CF_DT_FLOAT64] = 8, [CF_DT_BFLOAT16] = 2,
};

static int fail(char *errbuf, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_mpi(const char *call, int rc, char *errbuf, size_t errlen)
{
    char words[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(rc, words, &n) != MPI_SUCCESS)
        snprintf(words, sizeof words, "MPI error %d", rc);
    return fail(errbuf, errlen, "%s failed: %s", call, words);
}

/* ---- 16-bit floats: one user op per reduction, through float ---- */
typedef float (*half_load)(uint16_t);
typedef uint16_t (*half_store)(float);

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
    static void fn(void *in, void *inout, int *len, MPI_Datatype *dt)                                              \
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

static MPI_Datatype mpi_type(enum cf_smoke_dtype dt)
{
    switch (dt) {
    case CF_DT_INT8: return MPI_INT8_T;
    case CF_DT_UINT8: return MPI_UINT8_T;
    case CF_DT_INT32: return MPI_INT32_T;
    case CF_DT_UINT32: return MPI_UINT32_T;
    case CF_DT_INT64: return MPI_INT64_T;
    case CF_DT_UINT64: return MPI_UINT64_T;
    case CF_DT_FLOAT32: return MPI_FLOAT;
    case CF_DT_FLOAT64: return MPI_DOUBLE;
    default: return MPI_UINT16_T; /* fp16, bf16: bits, reduced by our own ops */
    }
}

static MPI_Op mpi_op(const struct mpi_state *s, enum cf_smoke_dtype dt, enum cf_smoke_redop red)
{
    static const int index[CF_RED_COUNT] = { [CF_RED_SUM] = 0, [CF_RED_PROD] = 1, [CF_RED_MAX] = 2, [CF_RED_MIN] = 3,
                                             [CF_RED_AVG] = 0 };
    if (dt == CF_DT_FLOAT16 || dt == CF_DT_BFLOAT16)
        return s->half_ops[dt == CF_DT_BFLOAT16][index[red]];
    switch (red) {
    case CF_RED_PROD: return MPI_PROD;
    case CF_RED_MAX: return MPI_MAX;
    case CF_RED_MIN: return MPI_MIN;
    default: return MPI_SUM;
    }
}

static int is_float(enum cf_smoke_dtype dt)
{
    return dt == CF_DT_FLOAT16 || dt == CF_DT_FLOAT32 || dt == CF_DT_FLOAT64 || dt == CF_DT_BFLOAT16;
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

static int mpi_init(struct cf_smoke_backend *b, const struct cf_smoke_rank_ctx *ctx, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    int up = 0;
    MPI_Initialized(&up);
    if (!up) {
        int rc = MPI_Init(NULL, NULL);
        if (rc != MPI_SUCCESS)
            return fail(errbuf, errlen, "MPI_Init failed (error %d)", rc);
        s->we_initialized = 1;
    }
    /* errors come back as values, so a failure is reported rather than aborting the job */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    s->cur = MPI_COMM_WORLD;
    s->sub = MPI_COMM_NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->nranks);
    if (ctx && (ctx->rank != s->rank || ctx->nranks != s->nranks))
        return fail(errbuf, errlen,
                    "MPI says rank %d of %d but the launcher's variables say rank %d of %d: was cclforge started "
                    "by mpirun?",
                    s->rank, s->nranks, ctx->rank, ctx->nranks);
    MPI_User_function *ops[2][4] = { { f16_sum, f16_prod, f16_max, f16_min }, { bf16_sum, bf16_prod, bf16_max, bf16_min } };
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 4; k++)
            MPI_Op_create(ops[t][k], 1, &s->half_ops[t][k]);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = 0; /* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4" */
    snprintf(b->version, sizeof b->version, "%.63s", lib);
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

/* the reductions: avg's premultiplied copy of the input when it is a float */
static int reduction(struct mpi_state *s, const struct cf_smoke_call *c, size_t send_elems, char *errbuf,
                     size_t errlen, const char **call)
{
    size_t esize = dtype_sizes[c->dtype];
    int n = (int)c->count;
    MPI_Datatype type = mpi_type(c->dtype);
    MPI_Op op = mpi_op(s, c->dtype, c->redop);
    int avg = c->redop == CF_RED_AVG;
    const void *send = c->send;
    void *scaled = NULL;
    if (avg && is_float(c->dtype)) {
        scaled = malloc(send_elems * esize + 1);
        if (!scaled)
            return fail(errbuf, errlen, "out of memory");
        prescale(c->dtype, c->send, scaled, send_elems, s->nranks);
        send = scaled;
    }
    int in_place = send == c->recv;
    int rc = MPI_SUCCESS;
    size_t divided = 0;
    switch (c->op) {
    case CF_OP_ALL_REDUCE:
        *call = "MPI_Allreduce";
        rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : send, c->recv, n, type, op, s->cur);
        divided = c->count;
        break;
    case CF_OP_REDUCE:
        *call = "MPI_Reduce";
        /* MPI_IN_PLACE only at the root; elsewhere recv is not touched */
        rc = MPI_Reduce(in_place && s->rank == c->root ? MPI_IN_PLACE : send, c->recv, n, type, op, c->root, s->cur);
        divided = s->rank == c->root ? c->count : 0;
        break;
    default: { /* reduce_scatter */
        *call = "MPI_Reduce_scatter_block";
        char *slot = (char *)send + (size_t)s->rank * c->count * esize;
        if ((char *)c->recv == slot) {
            /* MPI leaves an in-place result at the start of the buffer, NCCL at the rank's slot */
            rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, (void *)send, n, type, op, s->cur);
            if (rc == MPI_SUCCESS && s->rank != 0)
                memmove(slot, send, c->count * esize);
        } else {
            rc = MPI_Reduce_scatter_block(send, c->recv, n, type, op, s->cur);
        }
        divided = c->count;
        break;
    }
    }
    free(scaled);
    if (rc == MPI_SUCCESS && avg && !is_float(c->dtype) && divided)
        divide(c->dtype, c->recv, divided, s->nranks);
    return rc;
}

static int mpi_collective(struct cf_smoke_backend *b, const struct cf_smoke_call *c, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    size_t esize = dtype_sizes[c->dtype];
    if (c->count > INT_MAX / (size_t)(s->nranks > 0 ? s->nranks : 1))
        return fail(errbuf, errlen, "%zu elements exceed MPI's int count", c->count);
    int n = (int)c->count;
    MPI_Datatype type = mpi_type(c->dtype);
    int rc = MPI_SUCCESS;
    const char *call = "";
    size_t share = c->count * esize;
    /* NCCL's in-place forms, spelled the MPI way (MPI_IN_PLACE: MPI forbids aliasing) */
    switch (c->op) {
    case CF_OP_ALL_REDUCE:
    case CF_OP_REDUCE:
        rc = reduction(s, c, c->count, errbuf, errlen, &call);
        break;
    case CF_OP_REDUCE_SCATTER:
        rc = reduction(s, c, c->count * (size_t)s->nranks, errbuf, errlen, &call);
        break;
    case CF_OP_BROADCAST:
        call = "MPI_Bcast";
        if (s->rank == c->root && c->send != c->recv)
            memcpy(c->recv, c->send, share);
        rc = MPI_Bcast(c->recv, n, type, c->root, s->cur);
        break;
    case CF_OP_ALL_GATHER:
        call = "MPI_Allgather";
        rc = MPI_Allgather(c->send == (const char *)c->recv + (size_t)s->rank * share ? MPI_IN_PLACE : c->send, n, type,
                           c->recv, n, type, s->cur);
        break;
    case CF_OP_GATHER:
        call = "MPI_Gather";
        rc = MPI_Gather(s->rank == c->root && c->send == (const char *)c->recv + (size_t)s->rank * share ? MPI_IN_PLACE
                                                                                                         : c->send,
                        n, type, c->recv, n, type, c->root, s->cur);
        break;
    case CF_OP_SCATTER:
        call = "MPI_Scatter";
        rc = MPI_Scatter(c->send, n, type,
                         s->rank == c->root && (const char *)c->recv == (const char *)c->send + (size_t)s->rank * share
                             ? MPI_IN_PLACE
                             : c->recv,
                         n, type, c->root, s->cur);
        break;
    case CF_OP_ALLTOALL:
        call = "MPI_Alltoall";
        rc = MPI_Alltoall(c->send == c->recv ? MPI_IN_PLACE : c->send, n, type, c->recv, n, type, s->cur);
        break;
    case CF_OP_SENDRECV: {
        call = c->send == c->recv ? "MPI_Sendrecv_replace" : "MPI_Sendrecv";
        int next = (s->rank + 1) % s->nranks, prev = (s->rank - 1 + s->nranks) % s->nranks;
        rc = c->send == c->recv
                 ? MPI_Sendrecv_replace(c->recv, n, type, next, 0, prev, 0, s->cur, MPI_STATUS_IGNORE)
                 : MPI_Sendrecv(c->send, n, type, next, 0, c->recv, n, type, prev, 0, s->cur, MPI_STATUS_IGNORE);
        break;
    }
    default:
        return fail(errbuf, errlen, "unknown collective %d", (int)c->op);
    }
    if (rc == -1)
        return -1; /* reduction() said why */
    return rc == MPI_SUCCESS ? 0 : fail_mpi(call, rc, errbuf, errlen);
}

static int mpi_sync(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    (void)b, (void)errbuf, (void)errlen;
    return 0; /* blocking calls: done when they return */
}

static int mpi_host_sum(struct cf_smoke_backend *b, double *vals, size_t n, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    if (n > INT_MAX)
        return fail(errbuf, errlen, "too many values");
    int rc = MPI_Allreduce(MPI_IN_PLACE, vals, (int)n, MPI_DOUBLE, MPI_SUM, s->cur);
    return rc == MPI_SUCCESS ? 0 : fail_mpi("MPI_Allreduce", rc, errbuf, errlen);
}

static int mpi_host_allgather(struct cf_smoke_backend *b, const void *mine, void *all, size_t len, char *errbuf,
                              size_t errlen)
{
    struct mpi_state *s = b->state;
    if (len > INT_MAX)
        return fail(errbuf, errlen, "too many bytes");
    int rc = MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, s->cur);
    return rc == MPI_SUCCESS ? 0 : fail_mpi("MPI_Allgather", rc, errbuf, errlen);
}

static int mpi_host_bcast(struct cf_smoke_backend *b, void *buf, size_t len, int root, char *errbuf, size_t errlen)
{
    (void)b;
    if (len > INT_MAX)
        return fail(errbuf, errlen, "broadcast too large");
    int rc = MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : fail_mpi("MPI_Bcast", rc, errbuf, errlen);
}

static int mpi_split(struct cf_smoke_backend *b, int color, int key, int *rank, int *nranks, char *errbuf,
                     size_t errlen)
{
    struct mpi_state *s = b->state;
    MPI_Comm sub = MPI_COMM_NULL;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, color >= 0 ? color : MPI_UNDEFINED, key, &sub);
    if (rc != MPI_SUCCESS)
        return fail_mpi("MPI_Comm_split", rc, errbuf, errlen);
    s->sub = sub;
    s->cur = sub != MPI_COMM_NULL ? sub : MPI_COMM_WORLD;
    if (sub != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
        MPI_Comm_rank(sub, &s->rank);
        MPI_Comm_size(sub, &s->nranks);
    }
    *rank = s->rank;
    *nranks = s->nranks;
    return 0;
}

/* MPI's blocking calls spin while they wait; a rank with nothing to do in a round
 * waits here instead, polling a non-blocking barrier with a nap between tests */
static int mpi_idle_barrier(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    (void)b;
    MPI_Request req;
    int rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS)
        return fail_mpi("MPI_Ibarrier", rc, errbuf, errlen);
    for (;;) {
        int done = 0;
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return fail_mpi("MPI_Test", rc, errbuf, errlen);
        if (done)
            return 0;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

static void mpi_unsplit(struct cf_smoke_backend *b)
{
    struct mpi_state *s = b->state;
    if (s->sub != MPI_COMM_NULL)
        MPI_Comm_free(&s->sub);
    s->sub = MPI_COMM_NULL;
    s->cur = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->nranks);
}

static void mpi_finalize(struct cf_smoke_backend *b)
{
    struct mpi_state *s = b->state;
    if (!s)
        return;
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down) {
        mpi_unsplit(b);
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < 4; k++)
                if (s->half_ops[t][k] != MPI_OP_NULL && s->half_ops[t][k])
                    MPI_Op_free(&s->half_ops[t][k]);
        if (s->we_initialized)
            MPI_Finalize();
    }
    free(s);
    b->state = NULL;
}

__attribute__((visibility("default"))) int cclforge_smoke_plugin_open(struct cf_smoke_backend *b, int abi,
                                                                      char *errbuf, size_t errlen);
int cclforge_smoke_plugin_open(struct cf_smoke_backend *b, int abi, char *errbuf, size_t errlen)
{
    if (abi != CF_SMOKE_BACKEND_ABI)
        return fail(errbuf, errlen, "plugin built for backend ABI %d, cclforge speaks %d: rebuild them together",
                    CF_SMOKE_BACKEND_ABI, abi);
    memset(b, 0, sizeof *b);
    b->abi = CF_SMOKE_BACKEND_ABI;
    b->name = "mpi";
    b->state = calloc(1, sizeof(struct mpi_state));
    if (!b->state)
        return fail(errbuf, errlen, "out of memory");
    b->init = mpi_init;
    b->alloc = mpi_alloc;
    b->release = mpi_release;
    b->upload = mpi_copy;
    b->download = mpi_copy;
    b->collective = mpi_collective;
    b->sync = mpi_sync;
    b->host_sum = mpi_host_sum;
    b->host_allgather = mpi_host_allgather;
    b->host_bcast = mpi_host_bcast;
    b->split = mpi_split;
    b->unsplit = mpi_unsplit;
    b->idle_barrier = mpi_idle_barrier;
    b->finalize = mpi_finalize;
    return 0;
}
