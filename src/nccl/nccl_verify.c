/* Checking a freshly built NCCL/RCCL with the inspect engine before it is
 * installed: soname, version banner, and the GPU code of every requested arch. */
#include "cclforge/nccl_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/gpucode.h"

static void check_soname(const struct cf_nccl_plan *plan, struct cf_elf *elf, struct cf_nccl_verify *out)
{
    const struct cf_elf_dynamic *dyn = cf_elf_get_dynamic(elf);
    out->soname = cf_strdup(dyn && dyn->soname ? dyn->soname : "");
    if (strcmp(out->soname, plan->vendor->comm->soname))
        cf_strvec_pushf(&out->problems, "soname is '%s', expected %s", out->soname, plan->vendor->comm->soname);
}

static void check_banner(const struct cf_nccl_plan *plan, struct cf_elf *elf, struct cf_nccl_verify *out,
                         cf_error *err)
{
    struct cf_commlib_identity id;
    memset(&id, 0, sizeof id);
    if (cf_commlib_identify(elf, &id, err) < 0) {
        cf_strvec_pushf(&out->problems, "cannot read the version banner: %s", cf_error_message(err));
        cf_error_clear(err);
        return;
    }
    if (!id.found) {
        cf_strvec_pushf(&out->problems, "no \"%s version\" banner found in the library",
                     plan->vendor->comm->display);
        return;
    }
    out->banner = cf_strdup(id.banner.text);
    if (id.banner.major != (unsigned)plan->tag.major || id.banner.minor != (unsigned)plan->tag.minor ||
        id.banner.patch != (unsigned)plan->tag.patch)
        cf_strvec_pushf(&out->problems, "banner \"%s\" does not match the tag %s", id.banner.text, plan->tag_text);
    if (id.distinct_versions)
        cf_strvec_pushf(&out->problems, "the library carries banners of %zu different versions", id.n_banners);
    /* In Docker the image's CUDA built it, not the local toolkit. */
    if (plan->vendor->arch_family == CF_ARCH_NVIDIA && !plan->docker && plan->cuda_version && id.banner.toolkit[0]) {
        char built[16];
        snprintf(built, sizeof built, "%u.%u", id.banner.toolkit_major, id.banner.toolkit_minor);
        if (strcmp(built, plan->cuda_version))
            cf_strvec_pushf(&out->problems, "banner says CUDA %s but the toolkit is CUDA %s", built, plan->cuda_version);
    }
}

/* Plain archs only: sm_100a/sm_100f from NCCL's FP8 kernels are extras. */
static int has_plain(const struct cf_arch *v, size_t n, unsigned sm)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].sm == sm && v[i].variant == 0)
            return 1;
    return 0;
}

static void check_nvidia_archs(const struct cf_nccl_plan *plan, const struct cf_gpucode_inventory *inv,
                               struct cf_nccl_verify *out)
{
    for (size_t i = 0; i < inv->n_sass; i++) {
        const char *name = inv->sass[i].name;
        cf_strvec_push(&out->sass, name);
        if (inv->sass[i].variant || !cf_arch_list_contains(&plan->archs, name))
            cf_strvec_push(&out->extra, name);
    }
    const struct cf_arch *newest = cf_arch_list_newest(&plan->archs);
    for (size_t i = 0; i < inv->n_ptx; i++) {
        const char *name = inv->ptx[i].name;
        cf_strvec_push(&out->ptx, name);
        if (!plan->ptx || !newest || inv->ptx[i].variant || inv->ptx[i].sm != newest->sm)
            cf_strvec_pushf(&out->extra, "%s (PTX)", name);
    }
    for (size_t i = 0; i < plan->archs.n; i++)
        if (!has_plain(inv->sass, inv->n_sass, plan->archs.v[i].sm)) {
            cf_strvec_push(&out->missing, plan->archs.v[i].name);
            cf_strvec_pushf(&out->problems, "no %s machine code in the library's fatbins", plan->archs.v[i].name);
        }
    if (plan->ptx && newest && !has_plain(inv->ptx, inv->n_ptx, newest->sm)) {
        cf_strvec_pushf(&out->missing, "compute_%u (PTX)", newest->sm);
        cf_strvec_pushf(&out->problems, "no compute_%u PTX in the library's fatbins (asked for by --ptx)", newest->sm);
    }
}

static void check_amd_archs(const struct cf_nccl_plan *plan, const struct cf_gpucode_inventory *inv,
                            struct cf_nccl_verify *out)
{
    struct strvec bare = STRVEC_INIT;
    for (size_t i = 0; i < inv->amd_targets.n; i++) {
        const char *t = inv->amd_targets.v[i];
        char *plain = cf_strndup(t, strcspn(t, ":"));
        cf_strvec_push(&out->sass, t);
        if (!cf_arch_list_contains(&plan->archs, plain))
            cf_strvec_push(&out->extra, t);
        cf_strvec_push_nodup(&bare, plain);
    }
    for (size_t i = 0; i < plan->archs.n; i++)
        if (!cf_strvec_contains(&bare, plan->archs.v[i].name)) {
            cf_strvec_push(&out->missing, plan->archs.v[i].name);
            cf_strvec_pushf(&out->problems, "no %s code object in the library's offload bundles%s", plan->archs.v[i].name,
                         inv->compressed_bundles ? " (some bundles are compressed and cannot be listed)" : "");
        }
    cf_strvec_clear(&bare);
}

int cf_nccl_verify_library(const struct cf_nccl_plan *plan, const char *library, struct cf_nccl_verify *out,
                           cf_error *err)
{
    memset(out, 0, sizeof *out);
    out->library = cf_strdup(library);
    struct cf_elf *elf = NULL;
    if (cf_elf_open(library, &elf, err) < 0)
        return cf_error_prefix(err, "verifying the built library");
    check_soname(plan, elf, out);
    check_banner(plan, elf, out, err);
    struct cf_gpucode_inventory inv;
    memset(&inv, 0, sizeof inv);
    if (cf_gpucode_inventory(elf, &inv, err) < 0) {
        cf_strvec_pushf(&out->problems, "cannot read the GPU code: %s", cf_error_message(err));
        cf_error_clear(err);
    } else {
        if (inv.problem)
            cf_strvec_pushf(&out->problems, "GPU code container problem: %s", inv.problem);
        if (plan->vendor->arch_family == CF_ARCH_NVIDIA)
            check_nvidia_archs(plan, &inv, out);
        else
            check_amd_archs(plan, &inv, out);
    }
    cf_gpucode_inventory_release(&inv);
    cf_elf_close(elf);
    return 0;
}

void cf_nccl_verify_release(struct cf_nccl_verify *v)
{
    free(v->library);
    free(v->soname);
    free(v->banner);
    cf_strvec_clear(&v->sass);
    cf_strvec_clear(&v->ptx);
    cf_strvec_clear(&v->missing);
    cf_strvec_clear(&v->extra);
    cf_strvec_clear(&v->problems);
    memset(v, 0, sizeof *v);
}
