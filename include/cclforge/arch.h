/* GPU architectures, the one module for them (src/gpu/arch.c): one
 * representation of an arch or of a piece of GPU code ("sm_61", "sm_90a",
 * "compute_120", "lto_90", "gfx90a"), one parser for every way users and
 * tools write them, one order, one CUDA version code, the CUDA toolkit's
 * target table, the one rule for which code runs on which GPU, and the
 * compiler flags NCCL and RCCL expect. The ELF reader (fatbins), the survey,
 * doctor and the builders all speak it; it sits just above util. */
#ifndef CCLFORGE_ARCH_H
#define CCLFORGE_ARCH_H

#include <cjson/cJSON.h>

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whose instruction set: NVIDIA sm archs or AMD gfx targets (Hygon DCUs are gfx9). */
enum cf_arch_family { CF_ARCH_NONE = 0, CF_ARCH_NVIDIA, CF_ARCH_AMD };

/* The form GPU code takes. A GPU's own arch is written as machine code. */
enum cf_arch_code {
    CF_CODE_SASS = 0, /* machine code for one arch: "sm_90", an AMD code object "gfx90a" */
    CF_CODE_PTX,      /* "compute_90": the driver JIT-compiles it at load time */
    CF_CODE_LTOIR,    /* "lto_90": NVVM IR for nvJitLink; the driver cannot load it */
};

struct cf_arch {
    enum cf_arch_family family;
    enum cf_arch_code code;
    unsigned sm;     /* NVIDIA: compute capability major*10+minor (61, 90, 120); 0 for AMD */
    unsigned gfx;    /* AMD: major<<8 | minor<<4 | stepping (gfx90a 0x90a, gfx1100 0xb00);
                      * 0 for NVIDIA and for generic targets ("gfx9-generic") */
    char variant;    /* NVIDIA: 0, 'a' (arch-specific) or 'f' (family-specific) */
    char name[24];   /* canonical: "sm_61", "sm_90a", "compute_120f", "lto_90", "gfx90a"
                      * (an AMD target's ":xnack-" features are dropped) */
};

/* Parses one arch as users and tools write it, case-insensitively: compute
 * capabilities "6.1", "12.0", "61"; "sm_61", "sm61", "sm_90a", "compute_120f",
 * "lto_90"; AMD targets "gfx90a", "gfx942:xnack-", "gfx9-generic". Syntax
 * only: a well-formed arch no table lists (sm_130) parses; cf_arch_list_parse
 * checks that it exists. -1 with a usage error naming the accepted forms. */
int cf_arch_parse(const char *text, struct cf_arch *out, cf_error *err);
/* The NVIDIA arch `sm` (61) with variant 0/'a'/'f' as code of kind `code`. */
void cf_arch_nvidia(unsigned sm, char variant, enum cf_arch_code code, struct cf_arch *out);
/* The one order: family, then NVIDIA sm / AMD target number, then variant
 * (plain, a, f), then code (SASS, PTX, LTO-IR), then name. */
int cf_arch_cmp(const struct cf_arch *a, const struct cf_arch *b);

/* The GPU's arch name from what drivers report: compute capability (6, 1) ->
 * "sm_61"; KFD's gfx_target_version (major*10000 + minor*100 + stepping,
 * 90010) -> "gfx90a" ("gfx?<v>" when a part does not fit one hex digit). */
void cf_sm_name(int cc_major, int cc_minor, char *buf, size_t len);
void cf_gfx_target_name(unsigned gfx_target_version, char *buf, size_t len);

/* ---- which code runs on which GPU ---- */

enum cf_arch_fit {
    CF_FIT_NONE = 0, /* cannot run: "no kernel image is available" / hipErrorNoBinaryForGpu */
    CF_FIT_JIT,      /* PTX the driver JIT-compiles for the GPU (slow first start) */
    CF_FIT_NATIVE,   /* machine code the GPU runs as it is */
};

/* The rule, from the CUDA Programming Guide (binary and PTX compatibility,
 * feature-set suffixes) and checked against nvcc 13.0's own compatibility
 * checks (docs/gpucode.md):
 * - SASS sm_XY runs on GPUs of the same major X with minor >= Y (sm_80 on sm_86);
 * - PTX compute_XY JIT-compiles for every GPU at or above XY (compute_90 on sm_120);
 * - 'a' code (sm_90a, compute_100a) runs on exactly that arch;
 * - 'f' code (sm_100f, compute_120f) runs on the same major with minor >= Y
 *   (sm_100f on sm_100 and sm_103, not sm_110; sm_120f on sm_120 and sm_121);
 * - LTO-IR never runs (nvJitLink links it into SASS at build time);
 * - AMD code objects run on their own gfx target only (features ignored).
 * The GPU's own variant and code kind are ignored. */
enum cf_arch_fit cf_arch_fit(const struct cf_arch *code, const struct cf_arch *gpu);
/* The best fit of a list of code names ("sm_80", "compute_90", "gfx90a:xnack-",
 * as surveys and manifests write them) for the GPU arch named `gpu`; names that
 * do not parse never fit. */
enum cf_arch_fit cf_arch_best_fit(const struct strvec *code, const char *gpu);
/* 1 when cf_arch_best_fit is not CF_FIT_NONE. */
int cf_arch_covered(const struct strvec *code, const char *gpu);

/* ---- build targets: what users ask NCCL and RCCL to be built for ---- */

/* A sorted (cf_arch_cmp), de-duplicated set of archs of one family. */
struct cf_arch_list {
    struct cf_arch *v;
    size_t n;
    size_t alloc;
    int ptx_requested; /* some entry said "+PTX" */
};
#define CF_ARCH_LIST_INIT { 0, 0, 0, 0 }

/* Parses a list of build targets separated by ';', ',' or spaces and appends
 * them: every form cf_arch_parse takes, "+PTX" suffixes, and the family names
 * torch's TORCH_CUDA_ARCH_LIST accepts ("Ampere"). Each target must be known
 * to the toolkit tables and plain (no 'a'/'f' variant); "compute_90" means sm_90.
 * Mixing families is an error. */
int cf_arch_list_parse(struct cf_arch_list *list, const char *text, cf_error *err);
void cf_arch_list_add(struct cf_arch_list *list, const struct cf_arch *a);
void cf_arch_list_release(struct cf_arch_list *list);
enum cf_arch_family cf_arch_list_family(const struct cf_arch_list *list);
int cf_arch_list_contains(const struct cf_arch_list *list, const char *name);
/* The newest arch (last in order), NULL when empty. */
const struct cf_arch *cf_arch_list_newest(const struct cf_arch_list *list);
/* "sm_61;sm_120" (sep between names). */
void cf_arch_list_join(const struct cf_arch_list *list, const char *sep, struct strbuf *out);
/* The archs' names as a JSON array. */
cJSON *cf_arch_list_json(const struct cf_arch_list *list);
/* The install directory tag: "sm61-sm120", "gfx90a-gfx942". */
void cf_arch_list_dirname(const struct cf_arch_list *list, struct strbuf *out);

/* "13.0" -> 13000, "12.8.1" -> 12080, "11" -> 11000 (CUDA_VERSION's encoding,
 * as cuDriverGetVersion returns it); 0 when unknown or unparsable. */
int cf_cuda_version_code(const char *version);

/* Checks every arch against what CUDA `cuda_version` can target. When
 * `nvcc_archs` (from `nvcc --list-gpu-arch`, e.g. "compute_75 compute_80 ...")
 * is given it is the authority; otherwise the built-in table decides. The error
 * names the arch, the toolkit and the reason (e.g. dropped in CUDA 13.0). */
int cf_arch_check_cuda(const struct cf_arch_list *list, const char *cuda_version,
                       const char *nvcc_archs, cf_error *err);

/* NVCC_GENCODE as NCCL's makefiles expect:
 * "-gencode=arch=compute_61,code=sm_61 -gencode=arch=compute_120,code=sm_120"
 * plus "-gencode=arch=compute_120,code=compute_120" for PTX of the newest. */
void cf_arch_nvcc_gencode(const struct cf_arch_list *list, int ptx, struct strbuf *out);

#ifdef __cplusplus
}
#endif
#endif
