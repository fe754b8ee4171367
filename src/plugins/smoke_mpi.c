/* The MPI backend of `cclforge smoke`: collectives on host memory through MPI.
 * Built as a plugin so that only it links libmpi; it uses nothing from libcclforge.
 * fp16 and bf16 sums are done in C (MPI has no 16-bit float types). */
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/smoke_backend.h"
#include "cclforge/smoke_half.h"

struct mpi_state {
    int rank, nranks;
    int we_initialized;
    MPI_Op sum_f16, sum_bf16;
};

static size_t dtype_size(enum cf_smoke_dtype dt)
{
    static const size_t sizes[CF_DT_COUNT] = {
        [CF_DT_INT32] = 4, [CF_DT_INT64] = 8, [CF_DT_FLOAT16] = 2,
        [CF_DT_BFLOAT16] = 2, [CF_DT_FLOAT32] = 4, [CF_DT_FLOAT64] = 8,
    };
    return (unsigned)dt < CF_DT_COUNT ? sizes[dt] : 0;
}

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

static void sum_f16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = cf_f32_to_f16(cf_f16_to_f32(a[i]) + cf_f16_to_f32(b[i]));
}

static void sum_bf16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = cf_f32_to_bf16(cf_bf16_to_f32(a[i]) + cf_bf16_to_f32(b[i]));
}

/* The MPI datatype and sum operation for a cclforge dtype. */
static void mpi_type(struct mpi_state *s, enum cf_smoke_dtype dt, MPI_Datatype *type, MPI_Op *op)
{
    switch (dt) {
    case CF_DT_INT32: *type = MPI_INT32_T; *op = MPI_SUM; break;
    case CF_DT_INT64: *type = MPI_INT64_T; *op = MPI_SUM; break;
    case CF_DT_FLOAT16: *type = MPI_UINT16_T; *op = s->sum_f16; break;
    case CF_DT_BFLOAT16: *type = MPI_UINT16_T; *op = s->sum_bf16; break;
    case CF_DT_FLOAT32: *type = MPI_FLOAT; *op = MPI_SUM; break;
    default: *type = MPI_DOUBLE; *op = MPI_SUM; break;
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
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->nranks);
    if (ctx && (ctx->rank != s->rank || ctx->nranks != s->nranks))
        return fail(errbuf, errlen,
                    "MPI says rank %d of %d but the launcher's variables say rank %d of %d: was cclforge started "
                    "by mpirun?",
                    s->rank, s->nranks, ctx->rank, ctx->nranks);
    MPI_Op_create(sum_f16, 1, &s->sum_f16);
    MPI_Op_create(sum_bf16, 1, &s->sum_bf16);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = 0; /* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4" */
    size_t keep = strlen(lib) < sizeof b->version - 1 ? strlen(lib) : sizeof b->version - 1;
    memcpy(b->version, lib, keep);
    b->version[keep] = 0;
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
    (void)b;
    (void)errbuf;
    (void)errlen;
    if (dst != src)
        memmove(dst, src, bytes);
    return 0;
}

static int mpi_collective(struct cf_smoke_backend *b, enum cf_smoke_op op, const void *send, void *recv,
                          size_t count, enum cf_smoke_dtype dtype, char *errbuf, size_t errlen)
{
    struct mpi_state *s = b->state;
    size_t esize = dtype_size(dtype);
    if (count > INT_MAX)
        return fail(errbuf, errlen, "%zu elements exceed MPI's int count", count);
    int n = (int)count;
    MPI_Datatype type;
    MPI_Op sum;
    mpi_type(s, dtype, &type, &sum);
    int rc = MPI_SUCCESS;
    const char *call = "";
    /* NCCL's in-place forms, spelled the MPI way (MPI_IN_PLACE; aliasing is not allowed) */
    switch (op) {
    case CF_OP_ALL_REDUCE:
        call = "MPI_Allreduce";
        rc = MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, n, type, sum, MPI_COMM_WORLD);
        break;
    case CF_OP_BROADCAST:
        call = "MPI_Bcast";
        if (s->rank == 0 && send != recv)
            memcpy(recv, send, count * esize);
        rc = MPI_Bcast(recv, n, type, 0, MPI_COMM_WORLD);
        break;
    case CF_OP_ALL_GATHER: {
        call = "MPI_Allgather";
        int in_place = send == (const char *)recv + (size_t)s->rank * count * esize;
        rc = MPI_Allgather(in_place ? MPI_IN_PLACE : send, n, type, recv, n, type, MPI_COMM_WORLD);
        break;
    }
    case CF_OP_REDUCE_SCATTER: {
        call = "MPI_Reduce_scatter_block";
        char *slot = (char *)send + (size_t)s->rank * count * esize;
        if ((char *)recv == slot) {
            /* MPI leaves an in-place result at the start of the buffer, NCCL at the rank's slot */
            rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, (void *)send, n, type, sum, MPI_COMM_WORLD);
            if (rc == MPI_SUCCESS && s->rank != 0)
                memmove(slot, send, count * esize);
        } else {
            rc = MPI_Reduce_scatter_block(send, recv, n, type, sum, MPI_COMM_WORLD);
        }
        break;
    }
    case CF_OP_SENDRECV: {
        call = "MPI_Sendrecv";
        int next = (s->rank + 1) % s->nranks, prev = (s->rank - 1 + s->nranks) % s->nranks;
        rc = MPI_Sendrecv(send, n, type, next, 0, recv, n, type, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    }
    default:
        return fail(errbuf, errlen, "unknown collective %d", (int)op);
    }
    return rc == MPI_SUCCESS ? 0 : fail_mpi(call, rc, errbuf, errlen);
}

static int mpi_sync(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    (void)b;
    (void)errbuf;
    (void)errlen;
    return 0; /* blocking calls: done when they return */
}

static int mpi_host_sum(struct cf_smoke_backend *b, double *vals, size_t n, char *errbuf, size_t errlen)
{
    (void)b;
    if (n > INT_MAX)
        return fail(errbuf, errlen, "too many values");
    int rc = MPI_Allreduce(MPI_IN_PLACE, vals, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : fail_mpi("MPI_Allreduce", rc, errbuf, errlen);
}

static int mpi_host_bcast(struct cf_smoke_backend *b, void *buf, size_t len, int root, char *errbuf, size_t errlen)
{
    (void)b;
    if (len > INT_MAX)
        return fail(errbuf, errlen, "broadcast too large");
    int rc = MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : fail_mpi("MPI_Bcast", rc, errbuf, errlen);
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
        MPI_Op_free(&s->sum_f16);
        MPI_Op_free(&s->sum_bf16);
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
    b->host_bcast = mpi_host_bcast;
    b->finalize = mpi_finalize;
    return 0;
}
