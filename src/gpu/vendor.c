/* The vendor table and the comm-library table (cclforge/vendor.h). Sources
 * for each value are in docs/doctor.md. */
#include "cclforge/vendor.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

enum { NCCL, RCCL }; /* positions in comms[] */
static const struct cf_comm_profile comms[] = {
    [NCCL] = {
        .lib = CF_COMMLIB_NCCL,
        .kind = "nccl",
        .display = "NCCL",
        .soname = "libnccl.so.2",
        .stem = "libnccl.so",
        .link_name = "nccl",
        .headers = { "nccl.h" },
        .home_env = "NCCL_HOME",
    },
    [RCCL] = {
        .lib = CF_COMMLIB_RCCL,
        .kind = "rccl",
        .display = "RCCL",
        .soname = "librccl.so.1",
        .stem = "librccl.so",
        .link_name = "rccl",
        .headers = { "rccl/rccl.h", "rccl.h" },
        .home_env = "RCCL_HOME",
    },
};

static const struct cf_version_source cuda_versions[] = {
    { CF_VER_CUDA_JSON, "version.json" },     /* CUDA >= 11.1 runfile / .deb installs */
    { CF_VER_CUDA_TXT, "version.txt" },       /* CUDA <= 11.0 */
    { CF_VER_NVCC, "bin/nvcc" },              /* pip-assembled trees have neither file */
    { CF_VER_CUDA_H, "include/cuda.h" },      /* always there with the headers; major.minor only */
    { CF_VER_NONE, "" },
};

static const struct cf_version_source rocm_versions[] = {
    { CF_VER_PLAIN, ".info/version" },        /* "6.2.4-120" */
    { CF_VER_HIP_H, "include/hip/hip_version.h" },
    { CF_VER_NONE, "" },
};

/* DTK writes its own release ("24.04.1") to .info/version; hip_version.h then gives
 * the HIP it bundles, which is only a fallback for the toolkit's own number. */
static const struct cf_version_source dtk_versions[] = {
    { CF_VER_PLAIN, ".info/version-dtk" },
    { CF_VER_PLAIN, ".info/version" },
    { CF_VER_HIP_H, "include/hip/hip_version.h" },
    { CF_VER_NONE, "" },
};

/* What DTK shares with ROCm: gfx archs, hipcc, RCCL, the HIP runtime's
 * variables, libtorch_hip. */
static const char *const hip_visible_env[] = { "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", NULL };
static const char *const hip_torch_link[] = { "c10_hip", "torch_hip", NULL };
static const char *const hip_lib_dirs[] = { "lib", "lib64", NULL };
#define HIP_STACK                                                                                                  \
    .arch_family = CF_ARCH_AMD, .compiler = "hipcc", .lib_dirs = hip_lib_dirs, .comm = &comms[RCCL],            \
    .visible_env = hip_visible_env, .arch_list_env = "PYTORCH_ROCM_ARCH", .torch_gpu_lib = "libtorch_hip.so",   \
    .runtime_stem = "libamdhip64.so",                                                                            \
    .torch_gpu_link = hip_torch_link

static const struct cf_vendor_profile profiles[] = {
    {
        .vendor = CF_VENDOR_DTK,
        .word = "dtk",
        .id = "dtk",
        .display = "Hygon DTK",
        .gpu_vendor = "hygon",
        HIP_STACK,
        .root_env = (const char *const[]){ "DTK_HOME", "ROCM_PATH", "ROCM_HOME", "HIP_PATH", NULL },
        .default_roots = (const char *const[]){ "/opt/dtk", "/opt/dtk-*", NULL },
        /* DTK ships CUDA-compatible headers under cuda/cuda-<major>; plain ROCm does not. */
        .markers = (const char *const[]){ "cuda/cuda-*/include", ".info/version-dtk", NULL },
        .version_sources = dtk_versions,
        .include_dirs = (const char *const[]){ "include", "include/rccl", "cuda/cuda-*/include", NULL },
    },
    {
        .vendor = CF_VENDOR_ROCM,
        .word = "rocm",
        .id = "rocm",
        .display = "AMD ROCm",
        .gpu_vendor = "amd",
        HIP_STACK,
        .root_env = (const char *const[]){ "ROCM_PATH", "ROCM_HOME", "HIP_PATH", NULL },
        .default_roots = (const char *const[]){ "/opt/rocm", "/opt/rocm-*", NULL },
        .markers = (const char *const[]){ "include/hip/hip_version.h", ".info/version", "bin/hipcc", NULL },
        .version_sources = rocm_versions,
        .include_dirs = (const char *const[]){ "include", NULL },
    },
    {
        .vendor = CF_VENDOR_NVIDIA,
        .word = "nvidia",
        .id = "cuda",
        .display = "NVIDIA CUDA",
        .gpu_vendor = "nvidia",
        .arch_family = CF_ARCH_NVIDIA,
        .root_env = (const char *const[]){ "CUDA_HOME", "CUDA_PATH", NULL },
        .default_roots = (const char *const[]){ "/usr/local/cuda", "/usr/local/cuda-*", "/opt/cuda", NULL },
        .markers = (const char *const[]){ "include/cuda.h", "bin/nvcc", "version.json", NULL },
        .compiler = "nvcc",
        .version_sources = cuda_versions,
        .include_dirs = (const char *const[]){ "include", NULL },
        .lib_dirs = (const char *const[]){ "lib64", "lib", "targets/x86_64-linux/lib", NULL },
        .comm = &comms[NCCL],
        .visible_env = (const char *const[]){ "CUDA_VISIBLE_DEVICES", NULL },
        .arch_list_env = "TORCH_CUDA_ARCH_LIST",
        .torch_gpu_lib = "libtorch_cuda.so",
        .runtime_stem = "libcudart.so",
        .torch_gpu_link = (const char *const[]){ "c10_cuda", "torch_cuda", NULL },
    },
};

const struct cf_vendor_profile *cf_vendor_profiles(size_t *n)
{
    *n = ARRAY_LEN(profiles);
    return profiles;
}

const struct cf_vendor_profile *cf_vendor_get(enum cf_vendor v)
{
    for (size_t i = 0; i < ARRAY_LEN(profiles); i++)
        if (profiles[i].vendor == v)
            return &profiles[i];
    return NULL;
}

/* The first entry (table order) whose string field at `field` equals key. */
static const struct cf_vendor_profile *profile_where(size_t field, const char *key,
                                                    int (*same)(const char *, const char *))
{
    for (size_t i = 0; key && i < ARRAY_LEN(profiles); i++)
        if (!same(*(const char *const *)((const char *)&profiles[i] + field), key))
            return &profiles[i];
    return NULL;
}

const struct cf_vendor_profile *cf_vendor_profile(const char *id)
{
    return profile_where(offsetof(struct cf_vendor_profile, id), id, strcmp);
}

const struct cf_vendor_profile *cf_vendor_by_word(const char *word)
{
    return profile_where(offsetof(struct cf_vendor_profile, word), word, strcasecmp);
}

void cf_vendor_words(struct strbuf *out)
{
    for (int v = 0; v < CF_VENDOR_COUNT; v++)
        cf_sb_addf(out, "%s%s", v == 0 ? "" : v == CF_VENDOR_COUNT - 1 ? " or " : ", ",
                   cf_vendor_get((enum cf_vendor)v)->word);
}

const struct cf_vendor_profile *cf_vendor_profile_for_gpu(const char *gpu_vendor)
{
    return profile_where(offsetof(struct cf_vendor_profile, gpu_vendor), gpu_vendor, strcmp);
}

/* Enum order: gfx archs alone mean plain ROCm, not DTK. */
const struct cf_vendor_profile *cf_vendor_for_arch_family(enum cf_arch_family family)
{
    for (int v = 0; v < CF_VENDOR_COUNT; v++)
        if (cf_vendor_get((enum cf_vendor)v)->arch_family == family)
            return cf_vendor_get((enum cf_vendor)v);
    return NULL;
}

const struct cf_comm_profile *cf_comm_profile(enum cf_commlib lib)
{
    return lib == CF_COMMLIB_NCCL ? &comms[NCCL] : lib == CF_COMMLIB_RCCL ? &comms[RCCL] : NULL;
}

const struct cf_comm_profile *cf_comm_profile_by_kind(const char *kind)
{
    for (size_t i = 0; kind && i < ARRAY_LEN(comms); i++)
        if (!strcmp(comms[i].kind, kind))
            return &comms[i];
    return NULL;
}

enum cf_commlib cf_commlib_from_name(const char *soname)
{
    if (!soname)
        return CF_COMMLIB_NONE;
    const char *slash = strrchr(soname, '/');
    const char *base = slash ? slash + 1 : soname;
    for (size_t i = 0; i < ARRAY_LEN(comms); i++) {
        size_t n = strlen(comms[i].stem);
        if (strncmp(base, comms[i].stem, n) == 0 && (base[n] == 0 || base[n] == '.'))
            return comms[i].lib;
    }
    return CF_COMMLIB_NONE;
}

const char *cf_commlib_name(enum cf_commlib lib)
{
    const struct cf_comm_profile *c = cf_comm_profile(lib);
    return c ? c->display : "";
}
