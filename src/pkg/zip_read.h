/* A member's data, streamed from the archive's bytes: stored members as they
 * are, deflated ones through an inflate engine (inflate_engine.h: zlib or
 * ISA-L's igzip, the same checks for either), with the member's declared
 * size and CRC-32 checked as the bytes go by. Works from the table
 * zip_scan.c read, so it needs nothing per member beyond that table: libzip
 * keeps ~250 bytes per member of its own (17.5 MB for a 70,000-member
 * wheel), and reading members in bounded memory is this file's whole point. Members compressed otherwise
 * (bzip2, lzma: rare in wheels) are left to libzip (cf_zip_member_supported).
 * Internal to src/pkg. */
#ifndef CCLFORGE_PKG_ZIP_READ_H
#define CCLFORGE_PKG_ZIP_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cclforge/error.h"
#include "pkg/inflate_engine.h"
#include "pkg/zip_scan.h"

struct cf_zip_member {
    cf_zip_read_fn read;
    void *ctx;
    const struct cf_zip_entry *e;
    uint64_t in_pos;      /* compressed bytes consumed */
    uint64_t out;         /* bytes produced */
    uint32_t crc;         /* of a stored member's bytes (the engine keeps a deflated one's) */
    const struct cf_inflate_engine *engine;
    void *inflating;      /* the engine's state, NULL for a stored member */
    int ended;            /* the deflate stream has ended */
    int done;             /* every byte out, size and CRC found right */
    struct cf_inflate_io io; /* input left over from the last read, in `in` */
    unsigned char in[65536];
};

/* 1 for the methods this reader handles (stored, deflate). */
int cf_zip_member_supported(const struct cf_zip_entry *e);
/* engine inflates a deflated member; it must outlive m. */
int cf_zip_member_open(struct cf_zip_member *m, const struct cf_inflate_engine *engine, cf_zip_read_fn read, void *ctx,
                       const struct cf_zip_entry *e, cf_error *err);
/* Up to n bytes of data; 0 at the end, once the size and CRC-32 are found
 * right; -1 with err naming the fault (corrupt data, more or fewer bytes
 * than declared, a CRC mismatch). */
ssize_t cf_zip_member_read(struct cf_zip_member *m, void *buf, size_t n, cf_error *err);
void cf_zip_member_close(struct cf_zip_member *m);

#endif
