/* GPU architectures as users write them ("6.1;12.0", "sm_61,sm_120", "8.6+PTX",
 * "gfx90a;gfx942"), normalized, checked against what a toolkit can target, and
 * turned into the compiler flags NCCL and RCCL expect. */
#ifndef CCLFORGE_ARCH_H
#define CCLFORGE_ARCH_H

#include <cjson/cJSON.h>

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cf_gpu_vendor { CF_VENDOR_NONE = 0, CF_VENDOR_NVIDIA, CF_VENDOR_AMD };

struct cf_arch {
    enum cf_gpu_vendor vendor;
    int sm;          /* NVIDIA: 61, 120, ...; 0 for AMD */
    char name[16];   /* canonical: "sm_61", "gfx90a" */
};

/* A sorted, de-duplicated set of archs of one vendor. */
struct cf_arch_list {
    struct cf_arch *v;
    size_t n;
    size_t alloc;
    int ptx_requested; /* some entry said "+PTX" */
};
#define CF_ARCH_LIST_INIT { 0, 0, 0, 0 }

/* Parses one arch token: "6.1", "61", "sm_61", "compute_61", "sm61", "gfx90a",
 * "gfx942:xnack-" (feature suffix dropped). Rejects unknown archs naming the
 * accepted forms. *ptx is set when the token ends in "+PTX". */
int cf_arch_parse_one(const char *token, struct cf_arch *out, int *ptx, cf_error *err);
/* Parses a list separated by ';', ',' or spaces and appends to list. Mixing
 * vendors is an error. */
int cf_arch_list_parse(struct cf_arch_list *list, const char *text, cf_error *err);
void cf_arch_list_add(struct cf_arch_list *list, const struct cf_arch *a);
void cf_arch_list_release(struct cf_arch_list *list);
enum cf_gpu_vendor cf_arch_list_vendor(const struct cf_arch_list *list);
int cf_arch_list_contains(const struct cf_arch_list *list, const char *name);
/* The newest arch (last after sorting), NULL when empty. */
const struct cf_arch *cf_arch_list_newest(const struct cf_arch_list *list);
/* "sm_61;sm_120" (sep between names). */
void cf_arch_list_join(const struct cf_arch_list *list, const char *sep, struct strbuf *out);
/* The archs' names as a JSON array. */
cJSON *cf_arch_list_json(const struct cf_arch_list *list);
/* The install directory tag: "sm61-sm120", "gfx90a-gfx942". */
void cf_arch_list_dirname(const struct cf_arch_list *list, struct strbuf *out);

/* "13.0" -> 13000; "12.8" -> 12080. -1 when unparsable. */
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

/* The GPU vendor word ("nvidia", "rocm", "dtk") -> vendor; -1 when unknown. */
int cf_vendor_from_word(const char *word, enum cf_gpu_vendor *out);
const char *cf_vendor_name(enum cf_gpu_vendor v);

#ifdef __cplusplus
}
#endif
#endif
