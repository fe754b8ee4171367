/* Decompressing the start of a compressed offload bundle's payload, with
 * memory bounded by the output cap (not by the bundle). Internal. */
#ifndef CCLFORGE_CCOB_DECOMPRESS_H
#define CCLFORGE_CCOB_DECOMPRESS_H

#include <stddef.h>

#include "byte_source.h"
#include "cclforge/error.h"
#include "cclforge/strbuf.h"

/* Decompresses src[from, to) (method 0 zlib, 1 zstd) into out, stopping once
 * about max_out bytes are produced or the stream ends. Returns 0 (out may be
 * shorter than max_out), -1 for an unknown method or corrupt data. */
int cf_ccob_decompress_prefix(struct cf_byte_source *src, size_t from, size_t to, unsigned method,
                              size_t max_out, struct strbuf *out, const char *name, cf_error *err);

#endif
