/* NCCL/RCCL libraries: what one file holds (banner, version, GPU code), read with
 * the inspection engine without loading it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/gpucode.h"
#include "cclforge/scancache.h"
#include "survey/survey_internal.h"

int cf_survey_scan(const struct cf_survey_opts *opts, struct cf_elf *elf, struct cf_scan_facts *out)
{
    struct cf_scan_cache *cache = cf_scan_cache_new(NULL, !opts->no_cache, 0);
    cf_error err = CF_ERROR_INIT;
    int hit;
    int rc = cf_scan_file(cache, elf, CF_SCAN_BANNER | CF_SCAN_GPU, out, &hit, &err);
    cf_error_clear(&err);
    cf_scan_cache_free(cache);
    return rc;
}

int cf_gpu_archs_of(const struct cf_gpucode_inventory *inv, struct strvec *out)
{
    for (size_t i = 0; i < inv->n_sass; i++)
        if (!cf_strvec_contains(out, inv->sass[i].name))
            cf_strvec_push(out, inv->sass[i].name);
    for (size_t i = 0; i < inv->n_ptx; i++)
        if (!cf_strvec_contains(out, inv->ptx[i].name))
            cf_strvec_push(out, inv->ptx[i].name);
    for (size_t i = 0; i < inv->amd_targets.n; i++)
        if (!cf_strvec_contains(out, inv->amd_targets.v[i]))
            cf_strvec_push(out, inv->amd_targets.v[i]);
    /* Compressed offload bundles do not name their targets in the header. */
    return !(inv->compressed_bundles > 0 && inv->amd_targets.n == 0);
}

void cf_comm_from_banner(struct cf_comm_lib *c, const struct cf_commlib_banner *b)
{
    free(c->kind);
    c->kind = cf_strdup(cf_comm_profile(b->lib == CF_COMMLIB_RCCL ? CF_COMMLIB_RCCL : CF_COMMLIB_NCCL)->kind);
    free(c->version);
    c->version = cf_asprintf("%u.%u.%u%s", b->major, b->minor, b->patch, b->suffix);
    c->version_code = (int)b->version_code;
    free(c->banner);
    c->banner = cf_strdup(b->text);
    if (b->toolkit[0]) {
        char *tv = cf_asprintf("%u.%u", b->toolkit_major, b->toolkit_minor);
        if (!strcmp(b->toolkit, "hip")) {
            free(c->hip_version);
            c->hip_version = tv;
        } else {
            free(c->cuda_version);
            c->cuda_version = tv;
        }
    }
}

struct cf_comm_lib *cf_comm_lib_examine(const struct cf_survey_opts *opts, const char *path, const char *kind_hint,
                                        const char *how, int require_banner)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open(path, &elf, &err) < 0) {
        cf_error_clear(&err);
        if (require_banner)
            return NULL;
        struct cf_comm_lib *c = cf_xcalloc(1, sizeof *c);
        c->kind = cf_strdup(kind_hint);
        c->path = cf_strdup(path);
        c->how = cf_strdup(how);
        return c;
    }
    struct cf_scan_facts facts;
    int scanned = cf_survey_scan(opts, elf, &facts) == 0;
    const struct cf_commlib_banner *banner = scanned && facts.id.found ? &facts.id.banner : NULL;
    if (!banner && require_banner) {
        if (scanned)
            cf_scan_facts_release(&facts);
        cf_elf_close(elf);
        return NULL;
    }
    struct cf_comm_lib *c = cf_xcalloc(1, sizeof *c);
    c->kind = cf_strdup(kind_hint);
    c->path = cf_realpath(path);
    if (!c->path)
        c->path = cf_strdup(path);
    c->how = cf_strdup(how);
    if (banner)
        cf_comm_from_banner(c, banner);
    c->archs_known = scanned && cf_gpu_archs_of(&facts.gpu, &c->archs);
    if (scanned)
        cf_scan_facts_release(&facts);
    cf_elf_close(elf);
    cf_closure_check(opts, path, NULL, NULL, NULL, &c->missing_libs, &c->undefined_symbols);
    return c;
}

char *cf_preloaded_comm_lib(const struct cf_survey_opts *opts, const char *soname)
{
    const char *preload = cf_env_get(opts, "LD_PRELOAD");
    if (!preload)
        return NULL;
    /* "libnccl.so.2" -> stem "libnccl.so": a preloaded libnccl.so.2.28.9 counts too. */
    const char *so = strstr(soname, ".so");
    size_t stem = so ? (size_t)(so - soname) + 3 : strlen(soname);
    struct strvec entries = STRVEC_INIT;
    cf_strvec_split(&entries, preload, ": ", 0); /* ld.so accepts both separators */
    char *found = NULL;
    for (size_t i = 0; i < entries.n && !found; i++)
        if (!strncmp(cf_basename(entries.v[i]), soname, stem) && cf_is_file(entries.v[i]))
            found = cf_strdup(entries.v[i]);
    cf_strvec_clear(&entries);
    return found;
}

static int have_comm_path(const struct cf_survey *s, const char *path)
{
    char *real = cf_realpath(path);
    int found = 0;
    for (size_t i = 0; real && i < s->n_comm_libs && !found; i++)
        found = s->comm_libs[i].path && !strcmp(s->comm_libs[i].path, real);
    free(real);
    return found;
}

static void add_comm(const struct cf_survey_opts *opts, struct cf_survey *s, const char *path, const char *kind,
                     const char *how)
{
    if (!cf_is_file(path) || have_comm_path(s, path))
        return;
    struct cf_comm_lib *c = cf_comm_lib_examine(opts, path, kind, how, 0);
    *cf_survey_add_comm_lib(s) = *c;
    free(c);
}

void cf_probe_comm_libs(struct probe_ctx *ctx, struct cf_survey *s)
{
    size_t n;
    const struct cf_vendor_profile *profiles = cf_vendor_profiles(&n);
    struct strvec seen_kinds = STRVEC_INIT;
    for (size_t i = 0; i < n; i++) {
        const struct cf_vendor_profile *p = &profiles[i];
        if (cf_strvec_contains(&seen_kinds, p->comm->soname))
            continue;
        cf_strvec_push(&seen_kinds, p->comm->soname);
        /* A preloaded copy is what every process gets first. */
        char *pre = cf_preloaded_comm_lib(ctx->opts, p->comm->soname);
        if (pre) {
            add_comm(ctx->opts, s, pre, p->comm->kind, "LD_PRELOAD");
            free(pre);
        }
        /* What a program without RPATH gets: LD_LIBRARY_PATH, ld.so.cache, default dirs. */
        char *loaded = cf_loader_resolve_default(ctx->opts, NULL, p->comm->soname);
        if (loaded) {
            add_comm(ctx->opts, s, loaded, p->comm->kind, "loaded");
            free(loaded);
        }
        const char *home = cf_env_get(ctx->opts, p->comm->home_env);
        if (home) {
            char *lib = cf_asprintf("%s/lib/%s", home, p->comm->soname);
            add_comm(ctx->opts, s, lib, p->comm->kind, p->comm->home_env);
            free(lib);
        }
    }
    cf_strvec_clear(&seen_kinds);
    /* pip's nvidia-nccl-cuXX wheel: site-packages/nvidia/nccl/lib/libnccl.so.2 */
    const struct cf_python_info *py = cf_python_locate(ctx);
    if (py && py->nccl_dir) {
        const struct cf_comm_profile *nccl = cf_comm_profile(CF_COMMLIB_NCCL);
        char *lib = cf_asprintf("%s/lib/%s", py->nccl_dir, nccl->soname);
        add_comm(ctx->opts, s, lib, nccl->kind, "pip (nvidia-nccl)");
        free(lib);
    }
}
