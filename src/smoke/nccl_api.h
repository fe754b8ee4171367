/* The slice of the NCCL C API that smoke uses, declared here so that no nccl.h, CUDA
 * or HIP header is needed at build time. Layouts follow nccl.h (stable since NCCL 2.x;
 * RCCL exports the same symbols). Enum arguments are plain ints, as in the C ABI. */
#ifndef CCLFORGE_SMOKE_NCCL_API_H
#define CCLFORGE_SMOKE_NCCL_API_H

#include <stddef.h>

#include "cclforge/error.h"

#define CF_NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[CF_NCCL_UNIQUE_ID_BYTES]; } cf_nccl_unique_id;
typedef struct cf_nccl_comm *cf_nccl_comm_t;
typedef void *cf_gpu_stream_t; /* cudaStream_t / hipStream_t */

enum { CF_NCCL_SUCCESS = 0, CF_NCCL_IN_PROGRESS = 7 };
enum { CF_NCCL_SUM = 0 }; /* ncclRedOp_t ncclSum */
enum { CF_NCCL_UINT8 = 1, CF_NCCL_FLOAT64 = 8 };
enum { CF_NCCL_SPLIT_NOCOLOR = -1 };

struct cf_nccl_api {
    void *handle;
    char *path;     /* what was asked for (a path or a soname) */
    int version;    /* ncclGetVersion's code: 22809 for 2.28.9 */
    int (*GetVersion)(int *version);
    int (*GetUniqueId)(cf_nccl_unique_id *id);
    int (*CommInitRank)(cf_nccl_comm_t *comm, int nranks, cf_nccl_unique_id id, int rank);
    int (*CommDestroy)(cf_nccl_comm_t comm);
    int (*CommAbort)(cf_nccl_comm_t comm);
    int (*CommGetAsyncError)(cf_nccl_comm_t comm, int *async_error);
    const char *(*GetErrorString)(int result);
    const char *(*GetLastError)(cf_nccl_comm_t comm); /* NCCL >= 2.13; may be NULL */
    int (*AllReduce)(const void *send, void *recv, size_t count, int dtype, int op, cf_nccl_comm_t comm,
                     cf_gpu_stream_t stream);
    int (*Broadcast)(const void *send, void *recv, size_t count, int dtype, int root, cf_nccl_comm_t comm,
                     cf_gpu_stream_t stream);
    int (*AllGather)(const void *send, void *recv, size_t send_count, int dtype, cf_nccl_comm_t comm,
                     cf_gpu_stream_t stream);
    int (*ReduceScatter)(const void *send, void *recv, size_t recv_count, int dtype, int op, cf_nccl_comm_t comm,
                         cf_gpu_stream_t stream);
    int (*Reduce)(const void *send, void *recv, size_t count, int dtype, int op, int root, cf_nccl_comm_t comm,
                  cf_gpu_stream_t stream);
    int (*CommSplit)(cf_nccl_comm_t comm, int color, int key, cf_nccl_comm_t *newcomm, void *config); /* >= 2.18 */
    int (*CommUserRank)(cf_nccl_comm_t comm, int *rank);
    int (*CommCount)(cf_nccl_comm_t comm, int *count);
    int (*CommRegister)(cf_nccl_comm_t comm, void *buff, size_t size, void **handle); /* >= 2.19 */
    int (*CommDeregister)(cf_nccl_comm_t comm, void *handle);
    int (*MemAlloc)(void **ptr, size_t size); /* >= 2.19 */
    int (*MemFree)(void *ptr);
    int (*Send)(const void *send, size_t count, int dtype, int peer, cf_nccl_comm_t comm, cf_gpu_stream_t stream);
    int (*Recv)(void *recv, size_t count, int dtype, int peer, cf_nccl_comm_t comm, cf_gpu_stream_t stream);
    int (*GroupStart)(void);
    int (*GroupEnd)(void);
};

/* dlopens path (or default_soname when path is NULL), resolves the API and reads the
 * version. A library without ncclGetVersion & co. is refused with a clear message. */
int cf_nccl_api_load(struct cf_nccl_api *api, const char *path, const char *default_soname, cf_error *err);
void cf_nccl_api_unload(struct cf_nccl_api *api);
/* "2.28.9" from 22809 (and the pre-2.9 encoding 2708 -> "2.7.8"). */
void cf_nccl_version_string(int code, char *buf, size_t len);
/* "<ncclGetErrorString> (ncclResult N); last error: <ncclGetLastError>" */
char *cf_nccl_explain(const struct cf_nccl_api *api, int result, cf_nccl_comm_t comm);

/* The device runtime (CUDA runtime or HIP), also by dlopen. */
struct cf_gpu_runtime {
    void *handle;
    char *path;
    const char *api;   /* "cuda" or "hip": the symbol prefix */
    int (*GetDeviceCount)(int *count);
    int (*SetDevice)(int device);
    int (*Malloc)(void **ptr, size_t bytes);
    int (*Free)(void *ptr);
    int (*Memcpy)(void *dst, const void *src, size_t bytes, int kind);
    int (*MemcpyAsync)(void *dst, const void *src, size_t bytes, int kind, cf_gpu_stream_t stream);
    int (*Memset)(void *dst, int value, size_t bytes);
    int (*StreamCreate)(cf_gpu_stream_t *stream);
    int (*StreamSynchronize)(cf_gpu_stream_t stream);
    int (*StreamDestroy)(cf_gpu_stream_t stream);
    const char *(*GetErrorString)(int error);
    int (*RuntimeGetVersion)(int *version);
    int (*GetLastError)(void);
    int (*PeekAtLastError)(void);
    int (*MemsetAsync)(void *dst, int value, size_t bytes, cf_gpu_stream_t stream);
    int (*DeviceGetPCIBusId)(char *bus_id, int len, int device);
    int (*EventCreateWithFlags)(void **event, unsigned flags);
    int (*EventRecord)(void *event, cf_gpu_stream_t stream);
    int (*EventQuery)(void *event);
    int (*EventDestroy)(void *event);
    /* may be NULL: */
    int (*StreamCreateWithFlags)(cf_gpu_stream_t *stream, unsigned flags);
    int (*DeviceGetAttribute)(int *value, int attr, int device);
    int (*StreamBeginCapture)(cf_gpu_stream_t stream, int mode);
    int (*StreamEndCapture)(cf_gpu_stream_t stream, void **graph);
    int (*GraphInstantiateWithFlags)(void **exec, void *graph, unsigned long long flags);
    int (*GraphLaunch)(void *exec, cf_gpu_stream_t stream);
    int (*GraphExecDestroy)(void *exec);
    int (*GraphDestroy)(void *graph);
};
/* The same values in CUDA and HIP. */
enum { CF_GPU_MEMCPY_H2D = 1, CF_GPU_MEMCPY_D2H = 2 };
enum { CF_GPU_NOT_READY = 600, CF_GPU_STREAM_NON_BLOCKING = 1, CF_GPU_EVENT_DISABLE_TIMING = 2,
       CF_GPU_CAPTURE_THREAD_LOCAL = 1 };
/* cudaDevAttrComputeCapabilityMajor / Minor (CUDA only: HIP numbers its attributes otherwise) */
enum { CF_CUDA_ATTR_CC_MAJOR = 75, CF_CUDA_ATTR_CC_MINOR = 76 };

/* vendor "cuda" or "hip"; path NULL searches near_dir first, then the loader's paths. */
int cf_gpu_runtime_load(struct cf_gpu_runtime *rt, const char *vendor, const char *path, const char *near_dir,
                        cf_error *err);
void cf_gpu_runtime_unload(struct cf_gpu_runtime *rt);
/* "<prefix>GetErrorString words> (error N)" */
char *cf_gpu_explain(const struct cf_gpu_runtime *rt, const char *call, int code);

#endif
