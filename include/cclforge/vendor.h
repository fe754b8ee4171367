/* The vendor table (src/gpu/vendor.c): everything cclforge knows about a GPU
 * software stack, as data, and the one place each vendor fact is spelled:
 * the --vendor word, the GPU vendor, root variables and default roots,
 * markers, the arch-list variable, library stems and sonames. One entry per
 * vendor; a new vendor is one new entry. The communication libraries (NCCL,
 * RCCL) have a table of their own that vendor entries point into.
 * Lists are NULL-terminated. Relative paths are relative to the toolkit root and
 * may hold one '*' glob component (e.g. "cuda/cuda-*\/include"). */
#ifndef CCLFORGE_VENDOR_H
#define CCLFORGE_VENDOR_H

#include <stddef.h>

#include "cclforge/arch.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The one vendor enum: a GPU software stack cclforge builds and checks for. */
enum cf_vendor { CF_VENDOR_NVIDIA = 0, CF_VENDOR_ROCM, CF_VENDOR_DTK };
#define CF_VENDOR_COUNT 3

/* A library with the NCCL C API. */
enum cf_commlib { CF_COMMLIB_NONE = 0, CF_COMMLIB_NCCL, CF_COMMLIB_RCCL };

/* One library's names; a list ends at its first NULL. */
struct cf_comm_profile {
    enum cf_commlib lib;
    const char *kind;             /* "nccl" / "rccl": the word surveys and manifests use */
    const char *display;          /* "NCCL" / "RCCL" */
    const char *soname;           /* "libnccl.so.2" / "librccl.so.1" */
    const char *stem;             /* "libnccl.so": the soname without its major version */
    const char *link_name;        /* "nccl": -l<link_name> */
    const char *headers[3];       /* relative to an include root: "nccl.h"; "rccl/rccl.h", "rccl.h" */
    const char *home_env;         /* "NCCL_HOME" / "RCCL_HOME" */
};

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
    const char *path;    /* relative to the root; for CF_VER_NVCC the compiler under the root */
};

struct cf_vendor_profile {
    enum cf_vendor vendor;
    const char *word;               /* the --vendor word: "nvidia", "rocm", "dtk" */
    const char *id;                 /* the survey's toolkit vendor: "cuda", "rocm", "dtk" */
    const char *display;            /* "NVIDIA CUDA" */
    const char *gpu_vendor;         /* "nvidia", "amd", "hygon": matches cf_gpu.vendor */
    enum cf_arch_family arch_family; /* the archs its GPUs have: sm or gfx */
    const char *const *root_env;    /* environment variables naming a root, by priority */
    const char *const *default_roots; /* absolute paths / globs tried after the environment */
    const char *const *markers;     /* a root belongs to this vendor if any of these exists in it */
    const char *compiler;           /* "nvcc", "hipcc": looked up under root/bin and on PATH */
    const struct cf_version_source *version_sources; /* tried in order; terminated by parser 0 */
    const char *const *include_dirs; /* include roots a build against this toolkit needs */
    const char *const *lib_dirs;
    const struct cf_comm_profile *comm; /* its communication library */
    /* Runtime and torch. */
    const char *const *visible_env; /* CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES */
    const char *arch_list_env;      /* TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH */
    const char *torch_gpu_lib;      /* "libtorch_cuda.so" / "libtorch_hip.so" */
    const char *runtime_stem;       /* the device runtime's soname stem: "libcudart.so" / "libamdhip64.so" */
    const char *const *torch_gpu_link; /* {"c10_cuda", "torch_cuda"} / {"c10_hip", "torch_hip"}:
                                        * what a native extension links besides comm->link_name */
};

/* The table, most specific first (DTK before ROCm: a DTK root is also ROCm-shaped). */
const struct cf_vendor_profile *cf_vendor_profiles(size_t *n);
/* By enum. */
const struct cf_vendor_profile *cf_vendor_get(enum cf_vendor v);
/* By toolkit id ("cuda", "rocm", "dtk"), NULL if unknown. */
const struct cf_vendor_profile *cf_vendor_profile(const char *id);
/* By --vendor word ("nvidia", "rocm", "dtk", any case), NULL if unknown. */
const struct cf_vendor_profile *cf_vendor_by_word(const char *word);
/* "nvidia, rocm or dtk": the --vendor words, for messages. */
void cf_vendor_words(struct strbuf *out);
/* The first profile (enum order) whose GPU vendor ("nvidia", "amd", "hygon") /
 * arch family matches, NULL if none. */
const struct cf_vendor_profile *cf_vendor_profile_for_gpu(const char *gpu_vendor);
const struct cf_vendor_profile *cf_vendor_for_arch_family(enum cf_arch_family family);

/* The communication libraries. */
const struct cf_comm_profile *cf_comm_profile(enum cf_commlib lib); /* NULL for NONE */
const struct cf_comm_profile *cf_comm_profile_by_kind(const char *kind); /* "nccl", "rccl" */
/* Which library a soname or file name is: "libnccl.so.2", ".../librccl.so.1.0",
 * "libnccl.so" (its stem, then nothing or a '.'). */
enum cf_commlib cf_commlib_from_name(const char *soname_or_path);
const char *cf_commlib_name(enum cf_commlib lib); /* "NCCL", "RCCL", "" */

#ifdef __cplusplus
}
#endif
#endif
