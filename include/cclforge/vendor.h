/* Vendor profiles: everything cclforge knows about a GPU software stack, as data.
 * One table entry per vendor (src/survey/vendor.c); a new vendor is one new entry.
 * Lists are NULL-terminated. Relative paths are relative to the toolkit root and
 * may hold one '*' glob component (e.g. "cuda/cuda-*\/include"). */
#ifndef CCLFORGE_VENDOR_H
#define CCLFORGE_VENDOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How to read a version out of a file or program. */
enum cf_version_parser {
    CF_VER_NONE = 0,
    CF_VER_NVCC,          /* `nvcc --version`: "release 13.0, V13.0.88" -> 13.0.88 */
    CF_VER_CUDA_JSON,     /* version.json: {"cuda": {"version": "12.4.1"}} */
    CF_VER_CUDA_TXT,      /* version.txt: "CUDA Version 11.0.228" */
    CF_VER_CUDA_H,        /* include/cuda.h: #define CUDA_VERSION 13000 -> 13.0 */
    CF_VER_PLAIN,         /* first line of the file, e.g. ROCm .info/version "6.2.4-120" -> 6.2.4 */
    CF_VER_HIP_H,         /* include/hip/hip_version.h: HIP_VERSION_MAJOR/MINOR/PATCH */
};

struct cf_version_source {
    enum cf_version_parser parser;
    const char *path;     /* relative to the root; for CF_VER_NVCC the compiler under the root */
};

struct cf_vendor_profile {
    const char *id;                 /* "cuda", "rocm", "dtk": the survey's toolkit vendor */
    const char *display;            /* "NVIDIA CUDA" */
    const char *gpu_vendor;         /* "nvidia", "amd", "hygon": matches cf_gpu.vendor */
    const char *const *root_env;    /* environment variables naming a root, by priority */
    const char *const *default_roots; /* absolute paths / globs tried after the environment */
    const char *const *markers;     /* a root belongs to this vendor if any of these exists in it */
    const char *compiler;           /* "nvcc", "hipcc": looked up under root/bin and on PATH */
    const struct cf_version_source *version_sources; /* tried in order; terminated by parser 0 */
    const char *const *include_dirs; /* include roots a build against this toolkit needs */
    const char *const *lib_dirs;
    /* Communication library. */
    const char *comm_kind;          /* "nccl" / "rccl" */
    const char *comm_soname;        /* "libnccl.so.2" / "librccl.so.1" */
    const char *const *comm_headers; /* relative to an include root: "nccl.h", "rccl/rccl.h" */
    const char *comm_home_env;      /* "NCCL_HOME" / "RCCL_HOME" */
    /* Runtime and torch. */
    const char *const *visible_env; /* CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES */
    const char *arch_list_env;      /* TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH */
    const char *torch_gpu_lib;      /* "libtorch_cuda.so" / "libtorch_hip.so" */
    const char *const *bridge_link_libs; /* {"c10_cuda", "torch_cuda", "nccl"} / {"c10_hip", "torch_hip", "rccl"} */
    const char *arch_prefix;        /* "sm_" / "gfx" */
};

/* The table, most specific first (DTK before ROCm: a DTK root is also ROCm-shaped). */
const struct cf_vendor_profile *cf_vendor_profiles(size_t *n);
/* By id ("cuda", "rocm", "dtk"), NULL if unknown. */
const struct cf_vendor_profile *cf_vendor_profile(const char *id);
/* The profile whose comm library is `kind` ("nccl", "rccl") and GPU vendor matches; first match. */
const struct cf_vendor_profile *cf_vendor_profile_for_gpu(const char *gpu_vendor);

#ifdef __cplusplus
}
#endif
#endif
