/* For the tests of the zip reader and its inflate engines. */
#ifndef CCLFORGE_TS_INFLATE_H
#define CCLFORGE_TS_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "pkg/inflate_engine.h"

/* A cf_zip_read_fn over the bytes of the struct strbuf ctx: -1 past its end. */
int ts_read_strbuf(void *ctx, uint64_t off, void *buf, size_t n);
/* The engines this build can run, into out: zlib always, then isal where it
 * is built in and loads (else it says why on stdout). How many. */
size_t ts_inflate_engines(struct cf_inflate_engine out[2]);

#endif
