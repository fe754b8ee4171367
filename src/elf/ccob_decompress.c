/* The start of a CCOB payload. zlib inflates as a stream (32 KB window).
 * zstd uses the buffer-less API, block by block into one flat buffer: the
 * streaming API would allocate the frame's whole window (up to 128 MB for a
 * large bundle compressed with long-distance matching) before producing the
 * first byte, while the entry table sits in the first block. */
#include "ccob_decompress.h"

#define ZSTD_STATIC_LINKING_ONLY /* the buffer-less API (exported by libzstd.so) */
#include <zlib.h>
#include <zstd.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { METHOD_ZLIB = 0, METHOD_ZSTD = 1, CHUNK = 4096 };

/* Copies src[off, off+n) into dst (the source window may be smaller than n). */
static int copy_range(struct cf_byte_source *src, size_t off, size_t n, uint8_t *dst)
{
    while (n > 0) {
        size_t got = 0;
        const uint8_t *p = cf_src_get_some(src, off, n, &got);
        if (!p || got == 0)
            return -1;
        memcpy(dst, p, got);
        dst += got;
        off += got;
        n -= got;
    }
    return 0;
}

static int inflate_prefix(struct cf_byte_source *src, size_t from, size_t to, size_t max_out,
                          struct strbuf *out, const char *name, cf_error *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit(&zs) != Z_OK)
        return cf_error_set(err, CF_ERR_INTERNAL, "%s: zlib initialisation failed", name);
    cf_sb_grow(out, max_out);
    int rc = 0, z = Z_OK;
    size_t pos = from;
    while (out->len < max_out && z != Z_STREAM_END) {
        size_t got = 0;
        const uint8_t *p = pos < to ? cf_src_get_some(src, pos, to - pos < CHUNK ? to - pos : CHUNK, &got) : NULL;
        if (!p) {
            rc = cf_error_set(err, CF_ERR_FORMAT,
                              "%s: compressed offload bundle: zlib data ends early (offset %zu)",
                              name, pos);
            break;
        }
        zs.next_in = (Bytef *)(uintptr_t)p;
        zs.avail_in = (uInt)got;
        while (zs.avail_in > 0 && out->len < max_out) {
            zs.next_out = (Bytef *)out->buf + out->len;
            zs.avail_out = (uInt)(max_out - out->len);
            z = inflate(&zs, Z_NO_FLUSH);
            out->len = max_out - zs.avail_out;
            if (z == Z_STREAM_END)
                break;
            if (z != Z_OK) {
                rc = cf_error_set(err, CF_ERR_FORMAT,
                                  "%s: compressed offload bundle: corrupt zlib data near offset "
                                  "%zu (%s)",
                                  name, pos, zs.msg ? zs.msg : "inflate failed");
                break;
            }
        }
        if (rc)
            break;
        pos += got - zs.avail_in;
    }
    inflateEnd(&zs);
    out->buf[out->len] = 0;
    return rc;
}

static int zstd_prefix(struct cf_byte_source *src, size_t from, size_t to, size_t max_out,
                       struct strbuf *out, const char *name, cf_error *err)
{
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (!dctx)
        return cf_error_set(err, CF_ERR_INTERNAL, "%s: zstd initialisation failed", name);
    /* Blocks decompress to at most 128 KB each: room for the cap plus one. */
    size_t cap = max_out + ZSTD_BLOCKSIZE_MAX;
    cf_sb_grow(out, cap);
    uint8_t *in = cf_xmalloc(ZSTD_BLOCKSIZE_MAX + ZSTD_FRAMEHEADERSIZE_MAX);
    int rc = 0;
    size_t pos = from;
    ZSTD_decompressBegin(dctx);
    while (out->len < max_out) {
        size_t need = ZSTD_nextSrcSizeToDecompress(dctx);
        if (need == 0)
            break; /* end of frame */
        if (need > ZSTD_BLOCKSIZE_MAX + ZSTD_FRAMEHEADERSIZE_MAX || need > to - pos) {
            rc = cf_error_set(err, CF_ERR_FORMAT,
                              "%s: compressed offload bundle: zstd data ends early or is corrupt "
                              "(offset %zu)",
                              name, pos);
            break;
        }
        if (copy_range(src, pos, need, in) != 0) {
            rc = cf_src_read_error(src, name, pos, err);
            break;
        }
        size_t n = ZSTD_decompressContinue(dctx, out->buf + out->len, cap - out->len, in, need);
        if (ZSTD_isError(n)) {
            rc = cf_error_set(err, CF_ERR_FORMAT,
                              "%s: compressed offload bundle: corrupt zstd data near offset %zu (%s)",
                              name, pos, ZSTD_getErrorName(n));
            break;
        }
        out->len += n;
        pos += need;
    }
    free(in);
    ZSTD_freeDCtx(dctx);
    out->buf[out->len] = 0;
    return rc;
}

int cf_ccob_decompress_prefix(struct cf_byte_source *src, size_t from, size_t to, unsigned method,
                              size_t max_out, struct strbuf *out, const char *name, cf_error *err)
{
    if (to > src->len)
        to = src->len;
    if (from > to)
        from = to;
    switch (method) {
    case METHOD_ZLIB:
        return inflate_prefix(src, from, to, max_out, out, name, err);
    case METHOD_ZSTD:
        return zstd_prefix(src, from, to, max_out, out, name, err);
    default:
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: compressed offload bundle uses unknown compression method %u",
                            name, method);
    }
}
