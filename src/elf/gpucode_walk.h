/* The fatbin and offload-bundle walkers over a byte source (memory or pread
 * window); the public buffer entry points in gpucode.h wrap these. Internal. */
#ifndef CCLFORGE_GPUCODE_WALK_H
#define CCLFORGE_GPUCODE_WALK_H

#include "byte_source.h"
#include "cclforge/gpucode.h"

int cf_fatbin_walk_source(struct cf_byte_source *src, const char *name, cf_fatbin_visit_fn visit,
                          void *ctx, size_t *n_containers, cf_error *err);
int cf_bundle_walk_source(struct cf_byte_source *src, const char *name, cf_bundle_visit_fn visit,
                          cf_ccob_visit_fn visit_ccob, void *ctx, size_t *n_bundles,
                          size_t *n_compressed, cf_error *err);

#endif
