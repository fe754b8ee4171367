/* The nccl / rccl backend: any library with the NCCL C API, on device memory through
 * the CUDA or HIP runtime, everything loaded by dlopen. Collectives record events
 * (each one while the device is behind, strided while launches are the bottleneck),
 * so waiting for them reports progress as they complete (a long run of slow
 * operations is progress, not a hang); alltoall, gather and scatter are grouped
 * send/recv, as nccl-tests does them before NCCL 2.28. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/host.h"
#include "cclforge/clock.h"
#include "cclforge/envp.h"
#include "cclforge/fnv1a.h"
#include "cclforge/fs.h"
#include "cclforge/vendor.h"
#include "smoke/nccl_api.h"
#include "smoke/smoke_internal.h"

#define EVENT_RING 256   /* events in flight before a launch waits for the oldest */
#define EVENT_STRIDE_MAX 32
#define POLL_NS 50000
/* Polled without sleeping this long first: a nap (50 us, more with the timer's
 * slack) after a collective that ends in 5 us was a microsecond of every timed
 * call over 100 iterations (H200, 1 rank); nccl-tests spins in its synchronize. */
#define SPIN_S 200e-6

struct registration {
    cf_nccl_comm_t comm;
    void *handle;
};

struct nccl_state {
    const struct smoke_rank_setup *setup;
    struct smoke_sink *sink;
    struct cf_nccl_api api;
    struct cf_gpu_runtime rt;
    cf_nccl_comm_t world, sub, cur;
    cf_gpu_stream_t stream;
    int rank, nranks;         /* world */
    int cur_rank, cur_nranks; /* the current communicator */
    void *scratch;            /* device memory for host_sum / host_allgather */
    size_t scratch_cap;
    void *events[EVENT_RING];
    int ev_head, ev_pending, ev_created;
    int since_event, event_stride; /* calls launched since the last event; calls per event */
    int capturing;
    void *graph, *graph_exec;
    struct registration *regs;
    size_t nregs;
    char *lib_real;           /* the library file the loader chose */
    char log_path[1024];      /* NCCL_DEBUG_FILE: where NCCL's INFO lines go */
    int own_log;
    struct cf_smoke_backend mpi; /* carries the unique id under an external mpirun */
};

static int fail_text(char *errbuf, size_t errlen, char *text)
{
    snprintf(errbuf, errlen, "%s", text);
    free(text);
    return -1;
}

static int fail_nccl(struct nccl_state *s, const char *call, int rc, char *errbuf, size_t errlen)
{
    char *why = cf_nccl_explain(&s->api, rc, s->cur);
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

/* NCCL's own words about its transports, into a file of this rank (read back by
 * cf_smoke_nccl_report_transport): INFO level for INIT and NET. A user's own
 * NCCL_DEBUG_FILE is kept and read instead (%h and %p expanded as NCCL does). */
static void capture_nccl_log(struct nccl_state *s)
{
    const char *file = getenv("NCCL_DEBUG_FILE");
    char host[256] = "";
    cf_host_name(host, sizeof host);
    if (file) {
        struct strbuf sb = STRBUF_INIT;
        for (const char *p = file; *p; p++) {
            if (p[0] == '%' && p[1] == 'h')
                cf_sb_adds(&sb, host), p++;
            else if (p[0] == '%' && p[1] == 'p')
                cf_sb_addf(&sb, "%d", (int)getpid()), p++;
            else
                cf_sb_addc(&sb, *p);
        }
        snprintf(s->log_path, sizeof s->log_path, "%s", cf_sb_str(&sb));
        cf_sb_release(&sb);
    } else {
        const char *tmp = cf_envp_get(s->setup->opts->envp, SMOKE_TMPDIR_ENV);
        if (!tmp || !*tmp)
            tmp = getenv("TMPDIR");
        snprintf(s->log_path, sizeof s->log_path, "%s/cclforge-smoke-nccl.%d.log", tmp && *tmp ? tmp : "/tmp",
                 (int)getpid());
        unlink(s->log_path);
        setenv("NCCL_DEBUG_FILE", s->log_path, 1);
        s->own_log = 1;
    }
    const char *level = getenv("NCCL_DEBUG");
    if (!level || (strcasecmp(level, "INFO") && strcasecmp(level, "TRACE")))
        setenv("NCCL_DEBUG", "INFO", 1);
    const char *subsys = getenv("NCCL_DEBUG_SUBSYS");
    if (subsys && *subsys && strcasecmp(subsys, "ALL")) {
        char *both = cf_asprintf("%s,INIT,NET", subsys);
        setenv("NCCL_DEBUG_SUBSYS", both, 1);
        free(both);
    } else if (!subsys) {
        setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
    }
}

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
        /* rank 0 says where it listened and what it was advertised as; the others, where they reached it */
        if (s->rank == 0) {
            cf_smoke_sink_info(s->sink, "rendezvous_listen", "%s", cf_rdv_listen_desc(r));
            cf_smoke_sink_info(s->sink, "rendezvous_advertised", "%s", cf_rdv_advertised(r));
            struct strbuf strays = STRBUF_INIT;
            cf_launch_strays_describe(cf_rdv_strays(r), &strays);
            if (strays.len) /* named, never blamed on a rank */
                cf_smoke_sink_info(s->sink, "rendezvous_strays", "%s", cf_sb_str(&strays));
            cf_sb_release(&strays);
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
        struct smoke_mpi_info mpi;
        if (cf_smoke_mpi_backend_open(&s->mpi, s->setup->opts, &mpi, &err) < 0) {
            snprintf(errbuf, errlen, "%s", cf_error_message(&err));
            cf_error_clear(&err);
            return -1;
        }
        if (s->mpi.init(&s->mpi, &s->setup->ctx, errbuf, errlen) < 0)
            return -1;
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

/* "0000:1B:00.0 sm_90": the device as the runtime names it */
static void describe_device(struct nccl_state *s, int dev, char *out, size_t cap)
{
    char bus[64] = "";
    if (s->rt.DeviceGetPCIBusId(bus, (int)sizeof bus, dev) != 0)
        snprintf(bus, sizeof bus, "device %d", dev);
    int major = 0, minor = 0;
    if (!strcmp(s->rt.api, "cuda") && s->rt.DeviceGetAttribute &&
        s->rt.DeviceGetAttribute(&major, CF_CUDA_ATTR_CC_MAJOR, dev) == 0 &&
        s->rt.DeviceGetAttribute(&minor, CF_CUDA_ATTR_CC_MINOR, dev) == 0)
        snprintf(out, cap, "%s sm_%d%d", bus, major, minor);
    else
        snprintf(out, cap, "%s", bus);
}

static int select_device(struct nccl_state *s, struct cf_smoke_backend *b, const struct cf_smoke_rank_ctx *ctx,
                         char **problem, int *count_ok)
{
    int count = 0;
    int rc = s->rt.GetDeviceCount(&count);
    *count_ok = rc == 0;
    if (rc != 0)
        *problem = cf_gpu_explain(&s->rt, "GetDeviceCount", rc);
    else if (ctx->local_rank >= count)
        *problem = cf_asprintf("local rank %d needs device %d but %d device(s) are visible", ctx->local_rank,
                               ctx->local_rank, count);
    else if ((rc = s->rt.SetDevice(ctx->local_rank)) != 0)
        *problem = cf_gpu_explain(&s->rt, "SetDevice", rc);
    else if ((rc = s->rt.StreamCreateWithFlags ? s->rt.StreamCreateWithFlags(&s->stream, CF_GPU_STREAM_NON_BLOCKING)
                                                : s->rt.StreamCreate(&s->stream)) != 0)
        *problem = cf_gpu_explain(&s->rt, "StreamCreate", rc);
    else
        describe_device(s, ctx->local_rank, b->device, sizeof b->device);
    return count;
}

static int nccl_init(struct cf_smoke_backend *b, const struct cf_smoke_rank_ctx *ctx, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    const struct cf_smoke_opts *o = s->setup->opts;
    int is_rccl = o->backend == CF_BACKEND_RCCL;
    s->rank = s->cur_rank = ctx->rank;
    s->nranks = s->cur_nranks = ctx->nranks;
    cf_error err = CF_ERROR_INIT;

    capture_nccl_log(s);
    cf_smoke_sink_begin(s->sink, 0, "loading the comm library");
    const struct cf_comm_profile *comm = cf_comm_profile(is_rccl ? CF_COMMLIB_RCCL : CF_COMMLIB_NCCL);
    if (cf_nccl_api_load(&s->api, o->lib_path, comm->soname, &err) < 0) {
        snprintf(errbuf, errlen, "%s", cf_error_message(&err));
        cf_error_clear(&err);
        return -1;
    }
    char version[32];
    cf_nccl_version_string(s->api.version, version, sizeof version);
    snprintf(b->version, sizeof b->version, "%s %s (%d)", is_rccl ? "RCCL" : "NCCL", version, s->api.version);
    s->lib_real = loaded_path(&s->api);
    cf_smoke_sink_info(s->sink, "lib_path", "%s", s->lib_real ? s->lib_real : s->api.path);
    cf_smoke_sink_info(s->sink, "nccl_version", "%d", s->api.version);
    cf_smoke_sink_info(s->sink, "lib_version", "%s", b->version);

    char *near = s->lib_real ? cf_dirname(s->lib_real) : NULL;
    int rc = cf_gpu_runtime_load(&s->rt, is_rccl ? "hip" : "cuda", o->runtime_path, near, &err);
    free(near);
    if (rc < 0) {
        snprintf(errbuf, errlen, "%s", cf_error_message(&err));
        cf_error_clear(&err);
        return -1;
    }
    cf_smoke_sink_info(s->sink, "runtime_path", "%s", s->rt.path);
    if (s->api.CommRegister && s->api.MemAlloc)
        b->features |= CF_FEAT_REGISTER;
    if (s->rt.StreamBeginCapture && s->rt.StreamEndCapture && s->rt.GraphInstantiateWithFlags && s->rt.GraphLaunch)
        b->features |= CF_FEAT_GRAPH;

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
    cf_smoke_sink_info(s->sink, "unique_id_fnv1a", "%016llx", (unsigned long long)cf_fnv1a64(&id, sizeof id));

    /* The device comes first; when it is missing NCCL's own verdict is still asked
     * for, because its words (ncclGetLastError) are what a user will search for. */
    cf_smoke_sink_begin(s->sink, 0, "selecting local device %d", ctx->local_rank);
    char *device_problem = NULL;
    int count_ok = 0;
    int count = select_device(s, b, ctx, &device_problem, &count_ok);
    cf_smoke_sink_info(s->sink, "device_count", "%d", count_ok ? count : 0);
    /* a device this rank cannot have is our problem, not NCCL's: say it without init */
    if (device_problem && count_ok)
        return fail_text(errbuf, errlen, device_problem);
    cf_smoke_sink_begin(s->sink, 1, "ncclCommInitRank (%d ranks)", s->nranks);
    rc = s->api.CommInitRank(&s->world, s->nranks, id, s->rank);
    if (rc != CF_NCCL_SUCCESS) {
        char *why = cf_nccl_explain(&s->api, rc, NULL);
        snprintf(errbuf, errlen, "ncclCommInitRank failed: %s%s%s", why, device_problem ? "; " : "",
                 device_problem ? device_problem : "");
        free(why);
        free(device_problem);
        s->world = NULL;
        return -1;
    }
    s->cur = s->world;
    if (device_problem)
        return fail_text(errbuf, errlen, device_problem);
    /* a library that broke the device in comm init is named now, not three tests later */
    return b->check_device(b, errbuf, errlen);
}

static void *nccl_alloc(struct cf_smoke_backend *b, size_t bytes, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    void *p = NULL;
    /* -R registers what NCCL allocated itself (ncclMemAlloc), as nccl-tests does */
    int rc = s->setup->opts->registration && s->api.MemAlloc ? s->api.MemAlloc(&p, bytes ? bytes : 1)
                                                              : s->rt.Malloc(&p, bytes ? bytes : 1);
    if (rc != 0) {
        fail_gpu(s, "Malloc", rc, errbuf, errlen);
        return NULL;
    }
    return p;
}

static void nccl_release(struct cf_smoke_backend *b, void *buf)
{
    struct nccl_state *s = b->state;
    if (!buf)
        return;
    if (s->setup->opts->registration && s->api.MemFree)
        s->api.MemFree(buf);
    else
        s->rt.Free(buf);
}

/* Copies go on the collectives' stream. A plain Memcpy runs on the legacy
 * default stream, which a non-blocking stream does not wait for, and from
 * pageable memory it returns before its DMA lands: on an H200 the sentinel
 * fill of a 1 MiB output landed after NCCL had written the result (every
 * wrong element read -1). On one stream, each copy and collective follow in
 * order; a download then waits for its stream before the host reads. */
static int nccl_upload(struct cf_smoke_backend *b, void *dst, const void *host, size_t bytes, char *errbuf,
                       size_t errlen)
{
    struct nccl_state *s = b->state;
    int rc = s->rt.MemcpyAsync(dst, host, bytes, CF_GPU_MEMCPY_H2D, s->stream);
    return rc ? fail_gpu(s, "MemcpyAsync (host to device)", rc, errbuf, errlen) : 0;
}

static int nccl_download(struct cf_smoke_backend *b, void *host, const void *src, size_t bytes, char *errbuf,
                         size_t errlen)
{
    struct nccl_state *s = b->state;
    int rc = s->rt.MemcpyAsync(host, src, bytes, CF_GPU_MEMCPY_D2H, s->stream);
    if (rc == 0)
        rc = s->rt.StreamSynchronize(s->stream);
    return rc ? fail_gpu(s, "MemcpyAsync (device to host)", rc, errbuf, errlen) : 0;
}

static void nap(void)
{
    struct timespec ts = { 0, POLL_NS };
    nanosleep(&ts, NULL);
}

/* Waits for the oldest collective in flight, telling the rank it progressed. */
static int wait_oldest(struct nccl_state *s, struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    void *ev = s->events[s->ev_head];
    double spin_until = 0;
    for (;;) {
        int rc = s->rt.EventQuery(ev);
        if (rc == 0)
            break;
        if (rc != CF_GPU_NOT_READY)
            return fail_gpu(s, "EventQuery", rc, errbuf, errlen);
        int async = CF_NCCL_SUCCESS;
        if (s->api.CommGetAsyncError && s->api.CommGetAsyncError(s->cur, &async) == CF_NCCL_SUCCESS &&
            async != CF_NCCL_SUCCESS && async != CF_NCCL_IN_PROGRESS)
            return fail_nccl(s, "asynchronous NCCL error", async, errbuf, errlen);
        double now = cf_now_seconds();
        if (!spin_until)
            spin_until = now + SPIN_S;
        if (now >= spin_until)
            nap();
    }
    s->ev_head = (s->ev_head + 1) % EVENT_RING;
    s->ev_pending--;
    if (b->progress)
        b->progress(b->progress_ctx);
    return 0;
}

/* An event costs its call about a microsecond of launch time, which shows
 * only while launches are the bottleneck: then the newest event is already
 * done when the next is due, and the stride doubles (up to EVENT_STRIDE_MAX
 * calls per event). While the device is behind, every call gets one. */
static int event_due(struct nccl_state *s)
{
    if (++s->since_event < s->event_stride)
        return 0;
    s->since_event = 0;
    int newest = (s->ev_head + s->ev_pending - 1 + EVENT_RING) % EVENT_RING;
    int idle = s->ev_pending == 0 || s->rt.EventQuery(s->events[newest]) == 0;
    s->event_stride = idle ? (s->event_stride * 2 > EVENT_STRIDE_MAX ? EVENT_STRIDE_MAX : s->event_stride * 2) : 1;
    return 1;
}

static int after_launch(struct nccl_state *s, struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    if (s->capturing)
        return 0; /* the graph's launches are timed as a whole */
    if (!event_due(s))
        return 0;
    if (s->ev_pending == EVENT_RING && wait_oldest(s, b, errbuf, errlen) < 0)
        return -1;
    int slot = (s->ev_head + s->ev_pending) % EVENT_RING;
    if (slot >= s->ev_created) {
        int rc = s->rt.EventCreateWithFlags(&s->events[slot], CF_GPU_EVENT_DISABLE_TIMING);
        if (rc != 0)
            return fail_gpu(s, "EventCreateWithFlags", rc, errbuf, errlen);
        s->ev_created = slot + 1;
    }
    int rc = s->rt.EventRecord(s->events[slot], s->stream);
    if (rc != 0)
        return fail_gpu(s, "EventRecord", rc, errbuf, errlen);
    s->ev_pending++;
    return 0;
}

/* alltoall, gather and scatter: grouped send/recv of one share per peer */
static int grouped(struct nccl_state *s, const struct cf_smoke_call *c, int dt, size_t esize)
{
    int me = s->cur_rank, n = s->cur_nranks, rc = s->api.GroupStart();
    size_t share = c->count * esize;
    for (int r = 0; rc == CF_NCCL_SUCCESS && r < n; r++) {
        int sends = c->op == CF_OP_ALLTOALL || (c->op == CF_OP_SCATTER && me == c->root);
        int recvs = c->op == CF_OP_ALLTOALL || (c->op == CF_OP_GATHER && me == c->root);
        const char *from = (const char *)c->send + (c->op == CF_OP_GATHER ? 0 : r * share);
        char *to = (char *)c->recv + (c->op == CF_OP_SCATTER ? 0 : r * share);
        if (sends)
            rc = s->api.Send(from, c->count, dt, r, s->cur, s->stream);
        if (rc == CF_NCCL_SUCCESS && recvs)
            rc = s->api.Recv(to, c->count, dt, r, s->cur, s->stream);
    }
    /* everyone's one message of gather and scatter */
    if (rc == CF_NCCL_SUCCESS && c->op == CF_OP_GATHER)
        rc = s->api.Send(c->send, c->count, dt, c->root, s->cur, s->stream);
    if (rc == CF_NCCL_SUCCESS && c->op == CF_OP_SCATTER)
        rc = s->api.Recv(c->recv, c->count, dt, c->root, s->cur, s->stream);
    int end_rc = s->api.GroupEnd();
    return rc == CF_NCCL_SUCCESS ? end_rc : rc;
}

static int nccl_collective(struct cf_smoke_backend *b, const struct cf_smoke_call *c, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    int dt = (int)c->dtype; /* cclforge numbers its types as ncclDataType_t */
    int op = (int)c->redop; /* ... and its reductions as ncclRedOp_t */
    size_t esize = cf_smoke_dtype_info(c->dtype)->size;
    int rc = 0;
    static const char *const calls[CF_OP_COUNT] = {
        [CF_OP_ALL_REDUCE] = "ncclAllReduce", [CF_OP_BROADCAST] = "ncclBroadcast", [CF_OP_ALL_GATHER] = "ncclAllGather",
        [CF_OP_REDUCE_SCATTER] = "ncclReduceScatter", [CF_OP_SENDRECV] = "ncclSend/ncclRecv",
        [CF_OP_REDUCE] = "ncclReduce", [CF_OP_ALLTOALL] = "ncclSend/ncclRecv (alltoall)",
        [CF_OP_GATHER] = "ncclSend/ncclRecv (gather)", [CF_OP_SCATTER] = "ncclSend/ncclRecv (scatter)",
    };
    switch (c->op) {
    case CF_OP_ALL_REDUCE: rc = s->api.AllReduce(c->send, c->recv, c->count, dt, op, s->cur, s->stream); break;
    case CF_OP_BROADCAST: rc = s->api.Broadcast(c->send, c->recv, c->count, dt, c->root, s->cur, s->stream); break;
    case CF_OP_REDUCE: rc = s->api.Reduce(c->send, c->recv, c->count, dt, op, c->root, s->cur, s->stream); break;
    case CF_OP_ALL_GATHER: rc = s->api.AllGather(c->send, c->recv, c->count, dt, s->cur, s->stream); break;
    case CF_OP_REDUCE_SCATTER:
        rc = s->api.ReduceScatter(c->send, c->recv, c->count, dt, op, s->cur, s->stream);
        break;
    case CF_OP_SENDRECV: {
        int next = (s->cur_rank + 1) % s->cur_nranks, prev = (s->cur_rank - 1 + s->cur_nranks) % s->cur_nranks;
        rc = s->api.GroupStart();
        if (rc == CF_NCCL_SUCCESS)
            rc = s->api.Send(c->send, c->count, dt, next, s->cur, s->stream);
        if (rc == CF_NCCL_SUCCESS)
            rc = s->api.Recv(c->recv, c->count, dt, prev, s->cur, s->stream);
        int end_rc = s->api.GroupEnd();
        if (rc == CF_NCCL_SUCCESS)
            rc = end_rc;
        break;
    }
    case CF_OP_ALLTOALL:
    case CF_OP_GATHER:
    case CF_OP_SCATTER:
        rc = grouped(s, c, dt, esize);
        break;
    default:
        snprintf(errbuf, errlen, "unknown collective %d", (int)c->op);
        return -1;
    }
    if (rc != CF_NCCL_SUCCESS)
        return fail_nccl(s, calls[c->op], rc, errbuf, errlen);
    return after_launch(s, b, errbuf, errlen);
}

static int nccl_sync(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    s->since_event = 0; /* the next test (another size) starts with an event per call */
    s->event_stride = 1;
    while (s->ev_pending)
        if (wait_oldest(s, b, errbuf, errlen) < 0)
            return -1;
    int rc = s->rt.StreamSynchronize(s->stream);
    if (rc != 0)
        return fail_gpu(s, "StreamSynchronize", rc, errbuf, errlen);
    int async = CF_NCCL_SUCCESS;
    if (s->api.CommGetAsyncError && s->api.CommGetAsyncError(s->cur, &async) == CF_NCCL_SUCCESS &&
        async != CF_NCCL_SUCCESS && async != CF_NCCL_IN_PROGRESS)
        return fail_nccl(s, "asynchronous NCCL error", async, errbuf, errlen);
    return 0;
}

static int scratch_for(struct nccl_state *s, size_t bytes, char *errbuf, size_t errlen)
{
    if (bytes <= s->scratch_cap)
        return 0;
    if (s->scratch)
        s->rt.Free(s->scratch);
    s->scratch = NULL;
    s->scratch_cap = 0;
    int rc = s->rt.Malloc(&s->scratch, bytes);
    if (rc != 0)
        return fail_gpu(s, "Malloc (agreement buffer)", rc, errbuf, errlen);
    s->scratch_cap = bytes;
    return 0;
}

static int nccl_host_sum(struct cf_smoke_backend *b, double *vals, size_t n, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    if (scratch_for(s, n * sizeof *vals, errbuf, errlen) < 0 ||
        nccl_upload(b, s->scratch, vals, n * sizeof *vals, errbuf, errlen) < 0)
        return -1;
    int rc = s->api.AllReduce(s->scratch, s->scratch, n, CF_NCCL_FLOAT64, CF_NCCL_SUM, s->cur, s->stream);
    if (rc != CF_NCCL_SUCCESS)
        return fail_nccl(s, "ncclAllReduce (agreement)", rc, errbuf, errlen);
    if (nccl_sync(b, errbuf, errlen) < 0)
        return -1;
    return nccl_download(b, vals, s->scratch, n * sizeof *vals, errbuf, errlen);
}

static int nccl_host_allgather(struct cf_smoke_backend *b, const void *mine, void *all, size_t len, char *errbuf,
                               size_t errlen)
{
    struct nccl_state *s = b->state;
    size_t n = (size_t)s->cur_nranks;
    if (scratch_for(s, len * n, errbuf, errlen) < 0)
        return -1;
    char *slot = (char *)s->scratch + (size_t)s->cur_rank * len;
    if (nccl_upload(b, slot, mine, len, errbuf, errlen) < 0)
        return -1;
    int rc = s->api.AllGather(slot, s->scratch, len, CF_NCCL_UINT8, s->cur, s->stream);
    if (rc != CF_NCCL_SUCCESS)
        return fail_nccl(s, "ncclAllGather (host table)", rc, errbuf, errlen);
    if (nccl_sync(b, errbuf, errlen) < 0)
        return -1;
    return nccl_download(b, all, s->scratch, len * n, errbuf, errlen);
}

static int nccl_host_bcast(struct cf_smoke_backend *b, void *buf, size_t len, int root, char *errbuf, size_t errlen)
{
    (void)b, (void)buf, (void)len, (void)root;
    snprintf(errbuf, errlen, "host broadcast is not offered by the nccl backend");
    return -1;
}

static void deregister(struct nccl_state *s, cf_nccl_comm_t comm)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->nregs; i++) {
        if (s->regs[i].comm == comm && s->api.CommDeregister)
            s->api.CommDeregister(comm, s->regs[i].handle);
        else
            s->regs[kept++] = s->regs[i];
    }
    s->nregs = kept;
}

static int nccl_split(struct cf_smoke_backend *b, int color, int key, int *rank, int *nranks, char *errbuf,
                      size_t errlen)
{
    struct nccl_state *s = b->state;
    if (!s->api.CommSplit)
        return fail_text(errbuf, errlen,
                         cf_asprintf("--pattern needs ncclCommSplit (NCCL 2.18 or later); %s has none", b->version));
    cf_nccl_comm_t sub = NULL;
    int rc = s->api.CommSplit(s->world, color >= 0 ? color : CF_NCCL_SPLIT_NOCOLOR, key, &sub, NULL);
    if (rc != CF_NCCL_SUCCESS)
        return fail_nccl(s, "ncclCommSplit", rc, errbuf, errlen);
    s->sub = sub;
    s->cur = sub ? sub : s->world;
    s->cur_rank = s->rank;
    s->cur_nranks = s->nranks;
    if (sub && (s->api.CommUserRank(sub, &s->cur_rank) != CF_NCCL_SUCCESS ||
                s->api.CommCount(sub, &s->cur_nranks) != CF_NCCL_SUCCESS))
        return fail_text(errbuf, errlen, cf_strdup("ncclCommUserRank/ncclCommCount failed on the split communicator"));
    *rank = s->cur_rank;
    *nranks = s->cur_nranks;
    return 0;
}

static void nccl_unsplit(struct cf_smoke_backend *b)
{
    struct nccl_state *s = b->state;
    if (s->sub) {
        deregister(s, s->sub);
        s->api.CommDestroy(s->sub);
    }
    s->sub = NULL;
    s->cur = s->world;
    s->cur_rank = s->rank;
    s->cur_nranks = s->nranks;
}

static int nccl_check_device(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    /* the runtime's sticky error, then a kernel of the runtime's own (a memset) */
    int rc = s->rt.PeekAtLastError();
    const char *what = "the runtime's last error";
    if (rc == 0 && s->scratch_cap == 0)
        rc = scratch_for(s, 64, errbuf, errlen) < 0 ? -1 : 0;
    if (rc == 0) {
        what = "a trivial kernel (MemsetAsync) on the device";
        rc = s->rt.MemsetAsync(s->scratch, 0, 8, s->stream);
        if (rc == 0)
            rc = s->rt.StreamSynchronize(s->stream);
        if (rc == 0)
            rc = s->rt.GetLastError();
    }
    if (rc == 0)
        return 0;
    if (rc < 0)
        return -1; /* the agreement buffer: errbuf says why */
    const char *words = s->rt.GetErrorString ? s->rt.GetErrorString(rc) : NULL;
    return fail_text(errbuf, errlen,
                     cf_asprintf("the device is left in a bad state (%s: %s, error %d): %s may lack device code for "
                                 "this GPU (%s); build the library for its arch (cclforge nccl build --archs ...) or "
                                 "use one that has it",
                                 what, words ? words : "unknown error", rc, s->lib_real ? s->lib_real : s->api.path,
                                 b->device[0] ? b->device : "?"));
}

static void drop_graph(struct nccl_state *s)
{
    if (s->graph_exec && s->rt.GraphExecDestroy)
        s->rt.GraphExecDestroy(s->graph_exec);
    if (s->graph && s->rt.GraphDestroy)
        s->rt.GraphDestroy(s->graph);
    s->graph_exec = s->graph = NULL;
}

static int nccl_graph_capture(struct cf_smoke_backend *b, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    drop_graph(s);
    int rc = s->rt.StreamBeginCapture(s->stream, CF_GPU_CAPTURE_THREAD_LOCAL);
    if (rc != 0)
        return fail_gpu(s, "StreamBeginCapture", rc, errbuf, errlen);
    s->capturing = 1;
    return 0;
}

static int nccl_graph_launch(struct cf_smoke_backend *b, int launches, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    s->capturing = 0;
    int rc = s->rt.StreamEndCapture(s->stream, &s->graph);
    if (rc != 0)
        return fail_gpu(s, "StreamEndCapture", rc, errbuf, errlen);
    rc = s->rt.GraphInstantiateWithFlags(&s->graph_exec, s->graph, 0);
    if (rc != 0)
        return fail_gpu(s, "GraphInstantiateWithFlags", rc, errbuf, errlen);
    for (int i = 0; i < launches; i++) {
        rc = s->rt.GraphLaunch(s->graph_exec, s->stream);
        if (rc != 0)
            return fail_gpu(s, "GraphLaunch", rc, errbuf, errlen);
        if (after_launch(s, b, errbuf, errlen) < 0)
            return -1;
    }
    return 0;
}

static int nccl_register(struct cf_smoke_backend *b, void *buf, size_t bytes, char *errbuf, size_t errlen)
{
    struct nccl_state *s = b->state;
    void *handle = NULL;
    int rc = s->api.CommRegister(s->cur, buf, bytes, &handle);
    if (rc != CF_NCCL_SUCCESS)
        return fail_nccl(s, "ncclCommRegister", rc, errbuf, errlen);
    s->regs = cf_xrealloc(s->regs, (s->nregs + 1) * sizeof *s->regs);
    s->regs[s->nregs].comm = s->cur;
    s->regs[s->nregs].handle = handle;
    s->nregs++;
    return 0;
}

void cf_smoke_nccl_report_transport(struct cf_smoke_backend *b, int run_ok)
{
    struct nccl_state *s = b->state;
    if (!s || !s->log_path[0])
        return;
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(s->log_path, 64u << 20, &text, &err) < 0) {
        cf_error_clear(&err);
        cf_sb_release(&text);
        return; /* NCCL wrote nothing (it never got that far) */
    }
    struct cf_smoke_nccl_log log;
    cf_smoke_nccl_log_parse(cf_sb_str(&text), text.len, &log);
    cf_sb_release(&text);
    struct smoke_sink *sink = s->sink;
    if (log.net || log.plugin)
        cf_smoke_sink_info(sink, "net_plugin", "%s%s%s", log.net ? log.net : "", log.plugin ? " plugin " : "",
                           log.plugin ? log.plugin : "");
    for (size_t i = 0; i < log.warnings.n; i++)
        cf_smoke_sink_info(sink, "nccl_warn", "%s", log.warnings.v[i]);
    for (size_t i = 0; i < log.nconns; i++) {
        struct cf_smoke_event ev = { .kind = CF_EV_TRANSPORT, .rank = s->rank, .local_rank = sink->local_rank };
        ev.conn = log.conns[i];
        sink->event(sink, &ev);
    }
    enum cf_smoke_transport want = s->setup->opts->expect_transport;
    if (run_ok && want != CF_TRANSPORT_ANY) {
        struct strbuf bad = STRBUF_INIT;
        size_t applies = 0, wrong = 0;
        for (size_t i = 0; i < log.nconns; i++) {
            const struct cf_smoke_transport_conn *c = &log.conns[i];
            if (!cf_smoke_transport_applies(want, c))
                continue;
            applies++;
            if (!cf_smoke_transport_matches(want, c) && wrong++ < 3)
                cf_sb_addf(&bad, "%s%d -> %d via %s", bad.len ? ", " : "", c->rank, c->peer, c->via);
        }
        const char *said = log.warnings.n ? log.warnings.v[0] : NULL;
        if (wrong)
            cf_smoke_sink_text(sink, CF_EV_PROBLEM, "--expect-transport %s: rank %d: %zu connection%s used another "
                               "transport (%s)%s%s", cf_smoke_transport_name(want), s->rank, wrong,
                               wrong == 1 ? "" : "s", cf_sb_str(&bad), said ? "; NCCL said: " : "", said ? said : "");
        else if (!applies && s->rank == 0)
            cf_smoke_sink_text(sink, CF_EV_PROBLEM, "--expect-transport %s: NCCL logged no %s connection (%s)",
                               cf_smoke_transport_name(want),
                               want == CF_TRANSPORT_IB || want == CF_TRANSPORT_SOCKET ? "network" : "intra-host",
                               want == CF_TRANSPORT_IB || want == CF_TRANSPORT_SOCKET ? "every rank on one host?"
                                                                                       : "every rank on its own host?");
        cf_sb_release(&bad);
    }
    cf_smoke_nccl_log_release(&log);
}

static void nccl_finalize(struct cf_smoke_backend *b)
{
    struct nccl_state *s = b->state;
    if (!s)
        return;
    nccl_unsplit(b);
    deregister(s, s->world);
    drop_graph(s);
    for (int i = 0; i < s->ev_created; i++)
        s->rt.EventDestroy(s->events[i]);
    if (s->scratch)
        s->rt.Free(s->scratch);
    if (s->world)
        s->api.CommDestroy(s->world);
    if (s->stream)
        s->rt.StreamDestroy(s->stream);
    if (s->mpi.finalize) {
        s->mpi.finalize(&s->mpi);
        b->finalize_later = s->mpi.finalize_later;
        b->leave_by_exit = s->mpi.leave_by_exit;
    }
    if (s->own_log)
        unlink(s->log_path);
    free(s->regs);
    free(s->lib_real);
    cf_gpu_runtime_unload(&s->rt);
    cf_nccl_api_unload(&s->api);
    free(s);
    b->state = NULL;
}

int cf_smoke_nccl_backend_open(struct cf_smoke_backend *b, const struct smoke_rank_setup *setup,
                               struct smoke_sink *sink, cf_error *err)
{
    (void)err;
    struct nccl_state *s = cf_xcalloc(1, sizeof *s);
    s->setup = setup;
    s->sink = sink;
    s->event_stride = 1;
    *b = (struct cf_smoke_backend){
        .name = setup->opts->backend == CF_BACKEND_RCCL ? "rccl" : "nccl", .state = s,
        .features = CF_FEAT_DEVICE | CF_FEAT_ASYNC, .init = nccl_init, .alloc = nccl_alloc,
        .release = nccl_release, .upload = nccl_upload, .download = nccl_download, .collective = nccl_collective,
        .sync = nccl_sync, .host_sum = nccl_host_sum, .host_allgather = nccl_host_allgather,
        .host_bcast = nccl_host_bcast, .split = nccl_split, .unsplit = nccl_unsplit,
        .check_device = nccl_check_device, .graph_capture = nccl_graph_capture, .graph_launch = nccl_graph_launch,
        .register_buffer = nccl_register, .finalize = nccl_finalize,
    };
    return 0;
}
