/* The vendor profile table. Sources for each value are in docs/doctor.md. */
#include "cclforge/vendor.h"

#include <string.h>

static const struct cf_version_source cuda_versions[] = {
    { CF_VER_CUDA_JSON, "version.json" },     /* CUDA >= 11.1 runfile / .deb installs */
    { CF_VER_CUDA_TXT, "version.txt" },       /* CUDA <= 11.0 */
    { CF_VER_NVCC, "bin/nvcc" },              /* pip-assembled trees have neither file */
    { CF_VER_CUDA_H, "include/cuda.h" },      /* always there with the headers; major.minor only */
    { CF_VER_NONE, NULL },
};

static const struct cf_version_source rocm_versions[] = {
    { CF_VER_PLAIN, ".info/version" },        /* "6.2.4-120" */
    { CF_VER_HIP_H, "include/hip/hip_version.h" },
    { CF_VER_NONE, NULL },
};

/* DTK writes its own release ("24.04.1") to .info/version; hip_version.h then gives
 * the HIP it bundles, which is only a fallback for the toolkit's own number. */
static const struct cf_version_source dtk_versions[] = {
    { CF_VER_PLAIN, ".info/version-dtk" },
    { CF_VER_PLAIN, ".info/version" },
    { CF_VER_HIP_H, "include/hip/hip_version.h" },
    { CF_VER_NONE, NULL },
};

/* What DTK shares with ROCm: RCCL, the HIP runtime's variables, libtorch_hip. */
static const char *const rccl_headers[] = { "rccl/rccl.h", "rccl.h", NULL };
static const char *const hip_visible_env[] = { "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", NULL };
static const char *const hip_bridge_libs[] = { "c10_hip", "torch_hip", "rccl", NULL };

static const struct cf_vendor_profile profiles[] = {
    {
        .id = "dtk",
        .display = "Hygon DTK",
        .gpu_vendor = "hygon",
        .root_env = (const char *const[]){ "DTK_HOME", "ROCM_PATH", "ROCM_HOME", "HIP_PATH", NULL },
        .default_roots = (const char *const[]){ "/opt/dtk", "/opt/dtk-*", NULL },
        /* DTK ships CUDA-compatible headers under cuda/cuda-<major>; plain ROCm does not. */
        .markers = (const char *const[]){ "cuda/cuda-*/include", ".info/version-dtk", NULL },
        .compiler = "hipcc",
        .version_sources = dtk_versions,
        .include_dirs = (const char *const[]){ "include", "include/rccl", "cuda/cuda-*/include", NULL },
        .lib_dirs = (const char *const[]){ "lib", "lib64", NULL },
        .comm_kind = "rccl",
        .comm_soname = "librccl.so.1",
        .comm_headers = rccl_headers,
        .comm_home_env = "RCCL_HOME",
        .visible_env = hip_visible_env,
        .arch_list_env = "PYTORCH_ROCM_ARCH",
        .torch_gpu_lib = "libtorch_hip.so",
        .bridge_link_libs = hip_bridge_libs,
        .arch_prefix = "gfx",
    },
    {
        .id = "rocm",
        .display = "AMD ROCm",
        .gpu_vendor = "amd",
        .root_env = (const char *const[]){ "ROCM_PATH", "ROCM_HOME", "HIP_PATH", NULL },
        .default_roots = (const char *const[]){ "/opt/rocm", "/opt/rocm-*", NULL },
        .markers = (const char *const[]){ "include/hip/hip_version.h", ".info/version", "bin/hipcc", NULL },
        .compiler = "hipcc",
        .version_sources = rocm_versions,
        .include_dirs = (const char *const[]){ "include", NULL },
        .lib_dirs = (const char *const[]){ "lib", "lib64", NULL },
        .comm_kind = "rccl",
        .comm_soname = "librccl.so.1",
        .comm_headers = rccl_headers,
        .comm_home_env = "RCCL_HOME",
        .visible_env = hip_visible_env,
        .arch_list_env = "PYTORCH_ROCM_ARCH",
        .torch_gpu_lib = "libtorch_hip.so",
        .bridge_link_libs = hip_bridge_libs,
        .arch_prefix = "gfx",
    },
    {
        .id = "cuda",
        .display = "NVIDIA CUDA",
        .gpu_vendor = "nvidia",
        .root_env = (const char *const[]){ "CUDA_HOME", "CUDA_PATH", NULL },
        .default_roots = (const char *const[]){ "/usr/local/cuda", "/usr/local/cuda-*", "/opt/cuda", NULL },
        .markers = (const char *const[]){ "include/cuda.h", "bin/nvcc", "version.json", NULL },
        .compiler = "nvcc",
        .version_sources = cuda_versions,
        .include_dirs = (const char *const[]){ "include", NULL },
        .lib_dirs = (const char *const[]){ "lib64", "lib", "targets/x86_64-linux/lib", NULL },
        .comm_kind = "nccl",
        .comm_soname = "libnccl.so.2",
        .comm_headers = (const char *const[]){ "nccl.h", NULL },
        .comm_home_env = "NCCL_HOME",
        .visible_env = (const char *const[]){ "CUDA_VISIBLE_DEVICES", NULL },
        .arch_list_env = "TORCH_CUDA_ARCH_LIST",
        .torch_gpu_lib = "libtorch_cuda.so",
        .bridge_link_libs = (const char *const[]){ "c10_cuda", "torch_cuda", "nccl", NULL },
        .arch_prefix = "sm_",
    },
};

const struct cf_vendor_profile *cf_vendor_profiles(size_t *n)
{
    *n = sizeof profiles / sizeof profiles[0];
    return profiles;
}

const struct cf_vendor_profile *cf_vendor_profile(const char *id)
{
    for (size_t i = 0; id && i < sizeof profiles / sizeof profiles[0]; i++)
        if (!strcmp(profiles[i].id, id))
            return &profiles[i];
    return NULL;
}

const struct cf_vendor_profile *cf_vendor_profile_for_gpu(const char *gpu_vendor)
{
    for (size_t i = 0; gpu_vendor && i < sizeof profiles / sizeof profiles[0]; i++)
        if (!strcmp(profiles[i].gpu_vendor, gpu_vendor))
            return &profiles[i];
    return NULL;
}
