/* The streaming inflaters a member's raw deflate data can go through, as a
 * table of operations: zlib (always there: cclforge links it) and ISA-L's
 * igzip (faster: 1.6-2.3x zlib with its CRC-32 on torch's largest members;
 * linked where the build found it, statically in the release). Both stream
 * in pieces into buffers of the caller's size, so the memory per member
 * stays bounded whichever runs; zip_read.c keeps every check (sizes, cut
 * off, more data than declared, CRC-32) for either.
 *
 * cf_inflate_pick() is the one place that chooses, once per run:
 * CCLFORGE_INFLATE=zlib|isal forces one (so one build tests both), unset or
 * "auto" takes the first of the table that is available. Internal to src/pkg. */
#ifndef CCLFORGE_PKG_INFLATE_ENGINE_H
#define CCLFORGE_PKG_INFLATE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"

#define CF_INFLATE_ENV "CCLFORGE_INFLATE"

/* The caller's buffers, advanced by run() as it consumes and produces. */
struct cf_inflate_io {
    const unsigned char *next_in;
    size_t avail_in;
    unsigned char *next_out;
    size_t avail_out;
};

enum cf_inflate_step {
    CF_INFLATE_MORE, /* give it more input or more room */
    CF_INFLATE_END,  /* the final block has ended and every byte is out */
    CF_INFLATE_BAD   /* corrupt data: err says what the engine found */
};

struct cf_inflate_engine;
struct cf_inflate_ops {
    const char *name; /* what CCLFORGE_INFLATE names it, and the report shows */
    /* One raw deflate stream: start, run until END or BAD, end (always, once started). */
    int (*start)(const struct cf_inflate_engine *e, void **state, cf_error *err);
    enum cf_inflate_step (*run)(const struct cf_inflate_engine *e, void *state, struct cf_inflate_io *io,
                                cf_error *err);
    uint32_t (*out_crc)(const struct cf_inflate_engine *e, void *state); /* CRC-32 of every byte out so far */
    void (*end)(const struct cf_inflate_engine *e, void *state);
    /* CRC-32 continued over more bytes (zlib's crc32 convention): stored members */
    uint32_t (*crc32)(const struct cf_inflate_engine *e, uint32_t crc, const unsigned char *buf, size_t n);
};

/* An engine ready to run. */
struct cf_inflate_engine {
    const struct cf_inflate_ops *ops;
};

/* Fills e with the engine CCLFORGE_INFLATE names, or the fastest available
 * when it is unset, empty or "auto". An unknown name, or a named engine
 * that is not available here (not built in, or known wrong on this CPU), is
 * CF_ERR_USAGE saying why. */
int cf_inflate_pick(struct cf_inflate_engine *e, cf_error *err);
/* Fills e with the engine called name (as CCLFORGE_INFLATE would). */
int cf_inflate_named(struct cf_inflate_engine *e, const char *name, cf_error *err);

/* Each engine's own setup, for the table in inflate_engine.c: 0 and e
 * filled when it can run here, else -1 with err saying why not. */
int cf_inflate_zlib_setup(struct cf_inflate_engine *e, cf_error *err);
int cf_inflate_isal_setup(struct cf_inflate_engine *e, cf_error *err);

#endif
