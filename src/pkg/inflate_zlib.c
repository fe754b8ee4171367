/* The zlib inflater (the zlib cclforge links for compressed offload bundles):
 * raw deflate (no zlib header), its CRC-32 taken over each piece it puts out. */
#include <stdlib.h>
#include <zlib.h>

#include "cclforge/strbuf.h"
#include "pkg/inflate_engine.h"

struct zlib_state {
    z_stream zs;
    uint32_t crc;
};

static int zlib_start(const struct cf_inflate_engine *e, void **state, cf_error *err)
{
    struct zlib_state *s = cf_xcalloc(1, sizeof *s);
    if (inflateInit2(&s->zs, -MAX_WBITS) != Z_OK) {
        cf_error_set(err, CF_ERR_INTERNAL, "zlib: %s", s->zs.msg ? s->zs.msg : "cannot start inflate");
        free(s);
        return -1;
    }
    s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    *state = s;
    return 0;
}

/* zlib counts in uInt: pieces beyond 4 GiB are taken in turns by the caller's loop */
static uInt clamp(size_t n)
{
    return n > (uInt)-1 ? (uInt)-1 : (uInt)n;
}

static enum cf_inflate_step zlib_run(const struct cf_inflate_engine *e, void *state, struct cf_inflate_io *io,
                                     cf_error *err)
{
    struct zlib_state *s = state;
    uInt in = clamp(io->avail_in), out = clamp(io->avail_out);
    s->zs.next_in = (Bytef *)io->next_in;
    s->zs.avail_in = in;
    s->zs.next_out = io->next_out;
    s->zs.avail_out = out;
    int rc = inflate(&s->zs, Z_NO_FLUSH);
    size_t used = in - s->zs.avail_in, made = out - s->zs.avail_out;
    s->crc = (uint32_t)crc32_z(s->crc, io->next_out, made);
    io->next_in += used;
    io->avail_in -= used;
    io->next_out += made;
    io->avail_out -= made;
    if (rc == Z_STREAM_END)
        return CF_INFLATE_END;
    /* Z_BUF_ERROR: no progress possible without more input or room, not a fault */
    if (rc == Z_OK || rc == Z_BUF_ERROR)
        return CF_INFLATE_MORE;
    cf_error_set(err, CF_ERR_FORMAT, "corrupt deflate data (%s)", s->zs.msg ? s->zs.msg : "zlib error");
    return CF_INFLATE_BAD;
}

static uint32_t zlib_out_crc(const struct cf_inflate_engine *e, void *state)
{
    return ((struct zlib_state *)state)->crc;
}

static void zlib_end(const struct cf_inflate_engine *e, void *state)
{
    struct zlib_state *s = state;
    inflateEnd(&s->zs);
    free(s);
}

static uint32_t zlib_crc32(const struct cf_inflate_engine *e, uint32_t crc, const unsigned char *buf, size_t n)
{
    return (uint32_t)crc32_z(crc, buf, n);
}

static const struct cf_inflate_ops zlib_ops = {
    "zlib", zlib_start, zlib_run, zlib_out_crc, zlib_end, zlib_crc32,
};

int cf_inflate_zlib_setup(struct cf_inflate_engine *e, cf_error *err)
{
    e->ops = &zlib_ops;
    return 0;
}
