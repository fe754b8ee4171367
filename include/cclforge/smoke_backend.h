/* The backend interface of `cclforge smoke`: what a rank needs from a comm library
 * (NCCL/RCCL in backend_nccl.c, MPI in backend_mpi.c, each loaded by dlopen at run
 * time). Errors come back as text in a caller-owned buffer. */
#ifndef CCLFORGE_SMOKE_BACKEND_H
#define CCLFORGE_SMOKE_BACKEND_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Collectives (nccl-tests' binaries). Rooted ones take cf_smoke_call.root. */
enum cf_smoke_op {
    CF_OP_ALL_REDUCE,
    CF_OP_BROADCAST,
    CF_OP_ALL_GATHER,
    CF_OP_REDUCE_SCATTER,
    CF_OP_SENDRECV, /* a ring: rank r sends to r+1 and receives from r-1 */
    CF_OP_REDUCE,
    CF_OP_ALLTOALL, /* grouped send/recv of one share to every rank */
    CF_OP_GATHER,
    CF_OP_SCATTER,
    CF_OP_COUNT
};

/* Reductions, numbered as ncclRedOp_t (ncclSum 0 .. ncclAvg 4). */
enum cf_smoke_redop { CF_RED_SUM, CF_RED_PROD, CF_RED_MAX, CF_RED_MIN, CF_RED_AVG, CF_RED_COUNT };

/* Element types, numbered as ncclDataType_t (ncclInt8 0 .. ncclBfloat16 9). */
enum cf_smoke_dtype {
    CF_DT_INT8,
    CF_DT_UINT8,
    CF_DT_INT32,
    CF_DT_UINT32,
    CF_DT_INT64,
    CF_DT_UINT64,
    CF_DT_FLOAT16,
    CF_DT_FLOAT32,
    CF_DT_FLOAT64,
    CF_DT_BFLOAT16,
    CF_DT_COUNT
};

/* What a backend learns about its rank when it starts. */
struct cf_smoke_rank_ctx {
    int rank;
    int nranks;
    int local_rank; /* selects the device: rank i of a node uses local device i */
};

/* One collective call with NCCL's conventions: count is the per-call count NCCL takes
 * (all_gather, gather, alltoall: the share each rank sends to each; reduce_scatter,
 * scatter: the share each receives); in-place when recv aliases send as NCCL defines it. */
struct cf_smoke_call {
    enum cf_smoke_op op;
    enum cf_smoke_redop redop;
    enum cf_smoke_dtype dtype;
    int root;
    const void *send;
    void *recv;
    size_t count;
};

/* What a backend can do beyond the collectives (cf_smoke_backend.features). */
enum {
    CF_FEAT_DEVICE = 1,   /* device memory through a GPU runtime: sticky-error checks apply */
    CF_FEAT_GRAPH = 2,    /* graph_capture / graph_launch (-G) */
    CF_FEAT_REGISTER = 4, /* register (-R) */
    CF_FEAT_ASYNC = 8     /* collectives return before they complete (-z makes sense) */
};

struct cf_smoke_backend {
    const char *name;    /* "mpi", "nccl", "rccl" */
    void *state;         /* the backend's own */
    char version[64];    /* filled by init: "Open MPI v4.1.4", "NCCL 2.28.9 (22809)" */
    char device[128];    /* filled by init: "0000:1B:00.0 sm_90", "host memory" */
    unsigned features;   /* CF_FEAT_* */
    /* Set by the caller before init: called whenever an operation completes, so a rank
     * that makes progress is never taken for a hung one. */
    void (*progress)(void *ctx);
    void *progress_ctx;

    /* Every function returns 0 or -1 with a message in errbuf (errlen bytes). */
    int (*init)(struct cf_smoke_backend *b, const struct cf_smoke_rank_ctx *ctx, char *errbuf, size_t errlen);
    /* Memory the collectives work on (device memory for NCCL, host memory for MPI). */
    void *(*alloc)(struct cf_smoke_backend *b, size_t bytes, char *errbuf, size_t errlen);
    void (*release)(struct cf_smoke_backend *b, void *buf);
    int (*upload)(struct cf_smoke_backend *b, void *dst, const void *host, size_t bytes, char *errbuf, size_t errlen);
    int (*download)(struct cf_smoke_backend *b, void *host, const void *src, size_t bytes, char *errbuf,
                    size_t errlen);
    /* Starts one collective on the current communicator. */
    int (*collective)(struct cf_smoke_backend *b, const struct cf_smoke_call *call, char *errbuf, size_t errlen);
    /* Optional (NULL: not offered): fixes every argument of call once, so that
     * run_prepared starts it again with nothing of the harness around it: the timed
     * loop's call, where argument handling is a visible part of a small host call.
     * 1: prepared, until the next prepare;
     * 0: the call needs work around it each time (avg, an in-place slot...) or MPI
     * cannot take it: collective it is, and says why. */
    int (*prepare)(struct cf_smoke_backend *b, const struct cf_smoke_call *call);
    int (*run_prepared)(struct cf_smoke_backend *b, char *errbuf, size_t errlen);
    /* Waits until every collective started so far has completed. */
    int (*sync)(struct cf_smoke_backend *b, char *errbuf, size_t errlen);
    /* Sums n doubles on the host across the current communicator's ranks. */
    int (*host_sum)(struct cf_smoke_backend *b, double *vals, size_t n, char *errbuf, size_t errlen);
    /* Every rank of the current communicator gives len bytes; all receive all, in rank order. */
    int (*host_allgather)(struct cf_smoke_backend *b, const void *mine, void *all, size_t len, char *errbuf,
                          size_t errlen);
    /* Broadcasts host bytes from root over the world (MPI carries the NCCL unique id). */
    int (*host_bcast)(struct cf_smoke_backend *b, void *buf, size_t len, int root, char *errbuf, size_t errlen);
    /* Collective over the world: ranks with the same color >= 0 form a communicator
     * (ordered by key) that becomes the current one; color < 0 takes part in none.
     * Fills this rank's place in it. unsplit returns to the world. */
    int (*split)(struct cf_smoke_backend *b, int color, int key, int *rank, int *nranks, char *errbuf,
                 size_t errlen);
    void (*unsplit)(struct cf_smoke_backend *b);
    /* A barrier over the world that waits without spinning (NULL: host_sum serves): the
     * ranks that sit out a round must not take the CPU from those that run it. */
    int (*idle_barrier)(struct cf_smoke_backend *b, char *errbuf, size_t errlen);

    /* Device backends only (NULL otherwise). */
    /* The runtime's last error and a trivial kernel launch through it: a device left
     * broken by the comm library is found here, not three tests later. */
    int (*check_device)(struct cf_smoke_backend *b, char *errbuf, size_t errlen);
    /* Captures the collectives started until graph_launch into a graph, then launches
     * it `launches` times (CUDA/HIP graphs). */
    int (*graph_capture)(struct cf_smoke_backend *b, char *errbuf, size_t errlen);
    int (*graph_launch)(struct cf_smoke_backend *b, int launches, char *errbuf, size_t errlen);
    /* Registers a buffer with the communicator (ncclCommRegister); all registrations are
     * undone by finalize. */
    int (*register_buffer)(struct cf_smoke_backend *b, void *buf, size_t bytes, char *errbuf, size_t errlen);

    void (*finalize)(struct cf_smoke_backend *b);
    /* Set by finalize: what must wait until the rank has printed its report (MPI_Finalize:
     * MPICH's Hydra may drop what a rank writes after it). NULL: nothing. */
    int (*finalize_later)(void);
    /* Set by finalize: the process must end by exit(), whose handlers the comm library
     * needs (MPICH's report the rank's end to its launcher), not by _exit(). */
    int leave_by_exit;
};

#ifdef __cplusplus
}
#endif
#endif
