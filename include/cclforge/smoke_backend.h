/* The backend interface of `cclforge smoke`: what a rank needs from a comm library.
 *
 * It is an ABI as well as an API: the MPI backend is a plugin (cclforge_smoke_mpi.so)
 * built against libmpi and dlopen'ed only when asked, so cclforge itself never links
 * MPI. The plugin uses nothing from libcclforge; errors cross the boundary as text in
 * a caller-owned buffer. Bump CF_SMOKE_BACKEND_ABI on any change to this file. */
#ifndef CCLFORGE_SMOKE_BACKEND_H
#define CCLFORGE_SMOKE_BACKEND_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CF_SMOKE_BACKEND_ABI 1
/* The symbol a backend plugin exports (type cf_smoke_plugin_open_fn). */
#define CF_SMOKE_PLUGIN_SYMBOL "cclforge_smoke_plugin_open"

/* Collectives, in the order nccl-tests lists them. */
enum cf_smoke_op {
    CF_OP_ALL_REDUCE,
    CF_OP_BROADCAST,
    CF_OP_ALL_GATHER,
    CF_OP_REDUCE_SCATTER,
    CF_OP_SENDRECV, /* a ring: rank r sends to r+1 and receives from r-1 */
    CF_OP_COUNT
};

/* Element types. The numbering is cclforge's; backends map it to their own. */
enum cf_smoke_dtype {
    CF_DT_INT32,
    CF_DT_INT64,
    CF_DT_FLOAT16,
    CF_DT_BFLOAT16,
    CF_DT_FLOAT32,
    CF_DT_FLOAT64,
    CF_DT_COUNT
};

/* What a backend learns about its rank when it starts. */
struct cf_smoke_rank_ctx {
    int rank;
    int nranks;
    int local_rank; /* selects the device: rank i of a node uses local device i */
};

struct cf_smoke_backend {
    int abi;             /* CF_SMOKE_BACKEND_ABI */
    const char *name;    /* "mpi", "nccl", "rccl" */
    void *state;         /* the backend's own */
    char version[64];    /* filled by init: "Open MPI v4.1.4", "NCCL 2.28.9" */

    /* Every function returns 0 or -1 with a message in errbuf (errlen bytes). */
    int (*init)(struct cf_smoke_backend *b, const struct cf_smoke_rank_ctx *ctx, char *errbuf, size_t errlen);
    /* Memory the collectives work on (device memory for NCCL, host memory for MPI). */
    void *(*alloc)(struct cf_smoke_backend *b, size_t bytes, char *errbuf, size_t errlen);
    void (*release)(struct cf_smoke_backend *b, void *buf);
    int (*upload)(struct cf_smoke_backend *b, void *dst, const void *host, size_t bytes, char *errbuf, size_t errlen);
    int (*download)(struct cf_smoke_backend *b, void *host, const void *src, size_t bytes, char *errbuf,
                    size_t errlen);
    /* Starts one collective with NCCL's argument conventions: count is the per-call
     * count NCCL takes (all_gather: send count, reduce_scatter: receive count);
     * broadcast's root is rank 0; in-place when recv aliases send as NCCL defines it. */
    int (*collective)(struct cf_smoke_backend *b, enum cf_smoke_op op, const void *send, void *recv, size_t count,
                      enum cf_smoke_dtype dtype, char *errbuf, size_t errlen);
    /* Waits until every collective started so far has completed. */
    int (*sync)(struct cf_smoke_backend *b, char *errbuf, size_t errlen);
    /* Sums n doubles on the host across ranks (used to agree on times and error counts). */
    int (*host_sum)(struct cf_smoke_backend *b, double *vals, size_t n, char *errbuf, size_t errlen);
    /* Broadcasts host bytes from root (the MPI plugin carries the NCCL unique id with it). */
    int (*host_bcast)(struct cf_smoke_backend *b, void *buf, size_t len, int root, char *errbuf, size_t errlen);
    void (*finalize)(struct cf_smoke_backend *b);
};

/* A plugin fills *b (abi, name, function pointers) and returns 0, or -1 with a message
 * when abi differs from the one it was built for. */
typedef int (*cf_smoke_plugin_open_fn)(struct cf_smoke_backend *b, int abi, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
