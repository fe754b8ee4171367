/* The nccl / rccl backend: any library with the NCCL C API, on device memory through
 * the CUDA or HIP runtime, everything loaded by dlopen. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "smoke/nccl_api.h"
#include "smoke/smoke_internal.h"

struct nccl_state {
    const struct smoke_rank_setup *setup;
    struct smoke_sink *sink;
    struct cf_nccl_api api;
    struct cf_gpu_runtime rt;
    cf_nccl_comm_t comm;
    cf_gpu_stream_t stream;
    int rank, nranks;
    double *scratch; /* device memory for host_sum */
    struct cf_smoke_backend mpi; /* carries the unique id under an external mpirun */
    int mpi_up;
};

#define SCRATCH_DOUBLES 64

static int fail_text(char *errbuf, size_t errlen, char *text)
{
    snprintf(errbuf, errlen, "%s", text);
    free(text);
    return -1;
}

static int fail_nccl(struct nccl_state *s, const char *call, int rc, char *errbuf, size_t errlen)
{
    char *why = cf_nccl_explain(&s->api, rc, s->comm);
    char *text = cf_asprintf("%s failed: %s", call, why);
    free(why);
    return fail_text(errbuf, errlen, text);
}

static int fail_gpu(struct nccl_state *s, const char *call, int rc, char *errbuf, size_t errlen)
{
    return fail_text(errbuf, errlen, cf_gpu_explain(&s->rt, call, rc));
}

/* The real file the loader chose for the library (dladdr of one of its functions). */
static char *loaded_path(const struct cf_nccl_api *api)
{
    void *addr;
    memcpy(&addr, &api->GetVersion, sizeof addr);
    Dl_info info;
    if (dladdr(addr, &info) && info.dli_fname)
        return cf_realpath(info.dli_fname);
    return NULL;
}

/* Rank 0 listens on every address of the port and hands the id to every rank that
 * proves it belongs to the run; each says where the rendezvous was. */
static int share_over_tcp(struct nccl_state *s, cf_nccl_unique_id *id, char *errbuf, size_t errlen)
{
    const struct smoke_rendezvous *rdv = &s->setup->rdv;
    struct cf_rdv_opts ro = { rdv->addr, rdv->port, rdv->listen_fd, s->rank, s->nranks, &rdv->secret,
                              SMOKE_RDV_TAG, rdv->timeout_s, sizeof *id };
    struct cf_rdv *r = NULL;
    cf_error err = CF_ERROR_INIT;
    unsigned char *data = (unsigned char *)id;
    size_t len = sizeof *id;
    int rc = cf_rdv_open(&ro, &r, &err);
    if (rc == 0) {
        if (s->rank == 0) {
            cf_smoke_sink_info(s->sink, "rendezvous_listen", "%s", cf_rdv_listen_desc(r));
            cf_smoke_sink_info(s->sink, "rendezvous_advertised", "%s", cf_rdv_advertised(r));
        } else {
            cf_smoke_sink_info(s->sink, "rendezvous_reached", "%s", cf_rdv_peer_addr(r, 0));
        }
        rc = cf_rdv_bcast(r, &data, &len, &err);
        if (rc == 0 && s->rank != 0) {
            if (len == sizeof *id)
                memcpy(id, data, len);
            else
                rc = cf_error_set(&err, CF_ERR_FAILED, "rank 0 sent %zu bytes for a %zu-byte unique id", len,
                                  sizeof *id);
            free(data);
        }
    }
    cf_rdv_close(r);
    if (rc < 0)
        snprintf(errbuf, errlen, "%s", cf_error_message(&err));
    cf_error_clear(&err);
    return rc;
}

static int exchange_unique_id(struct nccl_state *s, cf_nccl_unique_id *id, char *errbuf, size_t errlen)
{
    const struct smoke_rendezvous *rdv = &s->setup->rdv;
    if (s->nranks == 1)
        return 0;
    cf_error err = CF_ERROR_INIT;
    switch (rdv->transport) {
    case SMOKE_ID_TCP:
        cf_smoke_sink_begin(s->sink, 1, "unique-id rendezvous over TCP at %s:%d", rdv->addr, rdv->port);
        return share_over_tcp(s, id, errbuf, errlen);
    case SMOKE_ID_MPI: {
        cf_smoke_sink_begin(s->sink, 1, "unique-id broadcast over MPI");
        char *plugin = NULL;
        if (cf_smoke_mpi_backend_open(&s->mpi, s->setup->opts->envp, &plugin, &err) < 0) {
            snprintf(errbuf, errlen, "%s", cf_error_message(&err));
            cf_error_clear(&err);
            return -1;
        }
        free(plugin);
        if (s->mpi.init(&s->mpi, &s->setup->ctx, errbuf, errlen) < 0)
            return -1;
        s->mpi_up = 1;
        return s->mpi.host_bcast(&s->mpi, id, sizeof *id, 0, errbuf, errlen);
    }
    default:
        snprintf(errbuf, errlen,
                 "no way to share the NCCL unique id between %d ranks: set MASTER_ADDR and MASTER_PORT "
                 "(or run under mpirun)",
                 s->nranks);
        return -1;
    }
}

static int nccl_init(struct cf_smoke_backend *b, const struct cf_smoke_rank_ctx *ctx, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    const struct cf_smoke_opts *o = s->setup->opts;
    int is_rccl = o->backend == CF_BACKEND_RCCL;
    s->rank = ctx->rank;
    s->nranks = ctx->nranks;
    cf_error err = CF_ERROR_INIT;

    cf_smoke_sink_begin(s->sink, 0, "loading the comm library");
    if (cf_nccl_api_load(&s->api, o->lib_path, is_rccl ? "librccl.so.1" : "libnccl.so.2", &err) < 0) {
        snprintf(errbuf, errlen, "%s", cf_error_message(&err));
        cf_error_clear(&err);
        return -1;
    }
    char version[32];
    cf_nccl_version_string(s->api.version, version, sizeof version);
    snprintf(b->version, sizeof b->version, "%s %s (%d)", is_rccl ? "RCCL" : "NCCL", version, s->api.version);
    char *real = loaded_path(&s->api);
    cf_smoke_sink_info(s->sink, "lib_path", "%s", real ? real : s->api.path);
    cf_smoke_sink_info(s->sink, "nccl_version", "%d", s->api.version);
    cf_smoke_sink_info(s->sink, "lib_version", "%s", b->version);

    char *near = real ? cf_dirname(real) : NULL;
    int rc = cf_gpu_runtime_load(&s->rt, is_rccl ? "hip" : "cuda", o->runtime_path, near, &err);
    free(near);
    free(real);
    if (rc < 0) {
        snprintf(errbuf, errlen, "%s", cf_error_message(&err));
        cf_error_clear(&err);
        return -1;
    }
    cf_smoke_sink_info(s->sink, "runtime_path", "%s", s->rt.path);

    cf_nccl_unique_id id;
    memset(&id, 0, sizeof id);
    if (s->rank == 0) {
        cf_smoke_sink_begin(s->sink, 0, "ncclGetUniqueId");
        rc = s->api.GetUniqueId(&id);
        if (rc != CF_NCCL_SUCCESS)
            return fail_nccl(s, "ncclGetUniqueId", rc, errbuf, errlen);
    }
    if (exchange_unique_id(s, &id, errbuf, errlen) < 0)
        return -1;
    cf_smoke_sink_info(s->sink, "unique_id_fnv1a", "%016llx", (unsigned long long)cf_smoke_fnv1a(&id, sizeof id));

    /* The device comes first; when it is missing NCCL's own verdict is still asked
     * for, because its words (ncclGetLastError) are what a user will search for. */
    cf_smoke_sink_begin(s->sink, 0, "selecting local device %d", ctx->local_rank);
    char *device_problem = NULL;
    int count = 0;
    int count_rc = s->rt.GetDeviceCount(&count);
    rc = count_rc;
    if (rc != 0)
        device_problem = cf_gpu_explain(&s->rt, "GetDeviceCount", rc);
    else if (ctx->local_rank >= count)
        device_problem = cf_asprintf("local rank %d needs device %d but %d device(s) are visible",
                                     ctx->local_rank, ctx->local_rank, count);
    else if ((rc = s->rt.SetDevice(ctx->local_rank)) != 0)
        device_problem = cf_gpu_explain(&s->rt, "SetDevice", rc);
    else if ((rc = s->rt.StreamCreate(&s->stream)) != 0)
        device_problem = cf_gpu_explain(&s->rt, "StreamCreate", rc);
    cf_smoke_sink_info(s->sink, "device_count", "%d", count_rc == 0 ? count : 0);

    /* a device this rank cannot have is our problem, not NCCL's: say it without init */
    if (device_problem && count_rc == 0)
        return fail_text(errbuf, errlen, device_problem);
    cf_smoke_sink_begin(s->sink, 1, "ncclCommInitRank (%d ranks)", s->nranks);
    rc = s->api.CommInitRank(&s->comm, s->nranks, id, s->rank);
    if (rc != CF_NCCL_SUCCESS) {
        char *why = cf_nccl_explain(&s->api, rc, NULL);
        snprintf(errbuf, errlen, "ncclCommInitRank failed: %s%s%s", why, device_problem ? "; " : "",
                 device_problem ? device_problem : "");
        free(why);
        free(device_problem);
        s->comm = NULL;
        return -1;
    }
    if (device_problem)
        return fail_text(errbuf, errlen, device_problem);
    rc = s->rt.Malloc((void **)&s->scratch, SCRATCH_DOUBLES * sizeof(double));
    if (rc != 0)
        return fail_gpu(s, "Malloc", rc, errbuf, errlen);
    return 0;
}

static void *nccl_alloc(struct cf_smoke_backend *b, size_t bytes, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    void *p = NULL;
    int rc = s->rt.Malloc(&p, bytes ? bytes : 1);
    if (rc != 0) {
        fail_gpu(s, "Malloc", rc, errbuf, errlen);
        return NULL;
    }
    return p;
}

static void nccl_release(struct cf_smoke_backend *b, void *buf)
{
    struct nccl_state *s = b->state;
    if (buf)
        s->rt.Free(buf);
}

static int nccl_upload(struct cf_smoke_backend *b, void *dst, const void *host, size_t bytes, char *errbuf,
                       size_t errlen)
{
    struct nccl_state *s = b->state;
    int rc = s->rt.Memcpy(dst, host, bytes, CF_GPU_MEMCPY_H2D);
    return rc ? fail_gpu(s, "Memcpy (host to device)", rc, errbuf, errlen) : 0;
}

static int nccl_download(struct cf_smoke_backend *b, void *host, const void *src, size_t bytes, char *errbuf,
                         size_t errlen)
{
    struct nccl_state *s = b->state;
    int rc = s->rt.Memcpy(host, src, bytes, CF_GPU_MEMCPY_D2H);
    return rc ? fail_gpu(s, "Memcpy (device to host)", rc, errbuf, errlen) : 0;
}

static int nccl_collective(struct cf_smoke_backend *b, enum cf_smoke_op op, const void *send, void *recv,
                           size_t count, enum cf_smoke_dtype dtype, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    int dt = cf_smoke_dtype_info(dtype)->nccl_type;
    int rc = 0;
    const char *call = "";
    switch (op) {
    case CF_OP_ALL_REDUCE:
        call = "ncclAllReduce";
        rc = s->api.AllReduce(send, recv, count, dt, CF_NCCL_SUM, s->comm, s->stream);
        break;
    case CF_OP_BROADCAST:
        call = "ncclBroadcast";
        rc = s->api.Broadcast(send, recv, count, dt, 0, s->comm, s->stream);
        break;
    case CF_OP_ALL_GATHER:
        call = "ncclAllGather";
        rc = s->api.AllGather(send, recv, count, dt, s->comm, s->stream);
        break;
    case CF_OP_REDUCE_SCATTER:
        call = "ncclReduceScatter";
        rc = s->api.ReduceScatter(send, recv, count, dt, CF_NCCL_SUM, s->comm, s->stream);
        break;
    case CF_OP_SENDRECV: {
        call = "ncclSend/ncclRecv";
        int next = (s->rank + 1) % s->nranks, prev = (s->rank - 1 + s->nranks) % s->nranks;
        rc = s->api.GroupStart();
        if (rc == CF_NCCL_SUCCESS)
            rc = s->api.Send(send, count, dt, next, s->comm, s->stream);
        if (rc == CF_NCCL_SUCCESS)
            rc = s->api.Recv(recv, count, dt, prev, s->comm, s->stream);
        int end_rc = s->api.GroupEnd();
        if (rc == CF_NCCL_SUCCESS)
            rc = end_rc;
        break;
    }
    default:
        snprintf(errbuf, errlen, "unknown collective %d", (int)op);
        return -1;
    }
    return rc == CF_NCCL_SUCCESS ? 0 : fail_nccl(s, call, rc, errbuf, errlen);
}

static int nccl_sync(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    int rc = s->rt.StreamSynchronize(s->stream);
    if (rc != 0)
        return fail_gpu(s, "StreamSynchronize", rc, errbuf, errlen);
    int async = CF_NCCL_SUCCESS;
    if (s->api.CommGetAsyncError && s->api.CommGetAsyncError(s->comm, &async) == CF_NCCL_SUCCESS &&
        async != CF_NCCL_SUCCESS && async != CF_NCCL_IN_PROGRESS)
        return fail_nccl(s, "asynchronous NCCL error", async, errbuf, errlen);
    return 0;
}

static int nccl_host_sum(struct cf_smoke_backend *b, double *vals, size_t n, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    if (n > SCRATCH_DOUBLES) {
        snprintf(errbuf, errlen, "host_sum of %zu values exceeds the scratch buffer", n);
        return -1;
    }
    if (nccl_upload(b, s->scratch, vals, n * sizeof *vals, errbuf, errlen) < 0)
        return -1;
    int rc = s->api.AllReduce(s->scratch, s->scratch, n, CF_NCCL_FLOAT64, CF_NCCL_SUM, s->comm, s->stream);
    if (rc != CF_NCCL_SUCCESS)
        return fail_nccl(s, "ncclAllReduce (agreement)", rc, errbuf, errlen);
    if (nccl_sync(b, errbuf, errlen) < 0)
        return -1;
    return nccl_download(b, vals, s->scratch, n * sizeof *vals, errbuf, errlen);
}

static int nccl_host_bcast(struct cf_smoke_backend *b, void *buf, size_t len, int root, char *errbuf, size_t errlen)
{
    snprintf(errbuf, errlen, "host broadcast is not offered by the nccl backend");
    return -1;
}

static void nccl_finalize(struct cf_smoke_backend *b)
{
    struct nccl_state *s = b->state;
    if (!s)
        return;
    if (s->scratch)
        s->rt.Free(s->scratch);
    if (s->comm)
        s->api.CommDestroy(s->comm);
    if (s->stream)
        s->rt.StreamDestroy(s->stream);
    if (s->mpi_up)
        s->mpi.finalize(&s->mpi);
    cf_gpu_runtime_unload(&s->rt);
    cf_nccl_api_unload(&s->api);
    free(s);
    b->state = NULL;
}

int cf_smoke_nccl_backend_open(struct cf_smoke_backend *b, const struct smoke_rank_setup *setup,
                            struct smoke_sink *sink, cf_error *err)
{
    memset(b, 0, sizeof *b);
    struct nccl_state *s = cf_xcalloc(1, sizeof *s);
    s->setup = setup;
    s->sink = sink;
    b->abi = CF_SMOKE_BACKEND_ABI;
    b->name = setup->opts->backend == CF_BACKEND_RCCL ? "rccl" : "nccl";
    b->state = s;
    b->init = nccl_init;
    b->alloc = nccl_alloc;
    b->release = nccl_release;
    b->upload = nccl_upload;
    b->download = nccl_download;
    b->collective = nccl_collective;
    b->sync = nccl_sync;
    b->host_sum = nccl_host_sum;
    b->host_bcast = nccl_host_bcast;
    b->finalize = nccl_finalize;
    return 0;
}
