/* Shared between the NCCL build driver's files; not a public interface. */
#ifndef CCLFORGE_NCCL_INTERNAL_H
#define CCLFORGE_NCCL_INTERNAL_H

#include <cjson/cJSON.h>

#include "cclforge/nccl_build.h"

/* What a finished build produced, for the manifest. */
struct nccl_built {
    const struct cf_nccl_verify *verify;
    char *source_commit;   /* git sources */
    char *source_sha256;   /* tarballs */
    char *library_rel;     /* "lib/libnccl.so.2.28.9" */
    char *library_sha256;
    double build_seconds;
    struct strvec commands; /* the commands run, shell-quoted for reading */
};

/* The defaults nccl build takes from a survey (this host's, or survey_file):
 * the active libtorch's NCCL version (need_torch; NULL when none) and the
 * visible GPUs' archs joined by ';' (need_gpus; NULL when none). -1 only
 * for a survey file that cannot be read. */
int cf_nccl_survey_defaults(const char *survey_file, int need_torch, int need_gpus, char **torch_nccl,
                            char **archs, cf_error *err);

/* The cache key of a plan: what must match for a cache hit. */
cJSON *cf_nccl_plan_inputs(const struct cf_nccl_plan *plan);
char *cf_nccl_manifest_text(const struct cf_nccl_plan *plan, const struct nccl_built *built);
/* Fills staging with include/, lib/ (file + soname + dev symlinks), pkgconfig, build.log, manifest.json. */
int cf_nccl_stage_layout(const struct cf_nccl_plan *plan, const char *staging, const char *library,
                      struct nccl_built *built, cf_error *err);
int cf_nccl_copy_tree(const char *from, const char *to, cf_error *err);
void cf_nccl_clean_stale(const struct cf_nccl_plan *plan);
/* Reads <dir>/manifest.json; NULL when absent or malformed. */
cJSON *cf_nccl_read_manifest(const char *dir);

#endif
