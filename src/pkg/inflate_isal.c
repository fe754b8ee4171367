/* ISA-L's igzip as an inflater: raw deflate with the gzip CRC-32 (the zip
 * one) computed as the bytes go out (crc_flag ISAL_GZIP_NO_HDR: no header
 * read, no trailer checked, igzip_inflate.c in ISA-L 2.30-2.32). Its state
 * (struct inflate_state, 87 KB: the Huffman tables and a 64 KiB window the
 * output passes through) is the layout of the <isa-l/igzip_lib.h> compiled
 * against, the same in every release from 2.24 to 2.32.1.
 *
 * How igzip reports, read from its source: isal_inflate() returns
 * ISAL_DECOMP_OK when it stopped for input or room, a negative code for
 * corrupt data (an invalid block type or code, a symbol outside the table, a
 * distance before the start of the output); block_state becomes
 * ISAL_BLOCK_FINISH once the final block has ended and every byte held in
 * its window has been handed out. It writes no more than avail_out bytes to
 * next_out (what does not fit waits in its window). */
#include "pkg/inflate_engine.h"

#ifdef CCLFORGE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <stdlib.h>

#include "cclforge/strbuf.h"

static int isal_start(const struct cf_inflate_engine *e, void **state, cf_error *err)
{
    struct inflate_state *s = cf_xmalloc(sizeof *s);
    isal_inflate_init(s);
    s->crc_flag = ISAL_GZIP_NO_HDR;
    *state = s;
    return 0;
}

/* igzip counts in uint32_t: larger pieces are taken in turns by the caller's loop */
static uint32_t clamp(size_t n)
{
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static const char *isal_fault(int rc)
{
    static const struct {
        int rc;
        const char *what;
    } faults[] = {
        { ISAL_INVALID_BLOCK, "invalid block" },
        { ISAL_INVALID_SYMBOL, "invalid code" },
        { ISAL_INVALID_LOOKBACK, "invalid distance too far back" },
    };
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        if (faults[i].rc == rc)
            return faults[i].what;
    return "igzip error";
}

static enum cf_inflate_step isal_run(const struct cf_inflate_engine *e, void *state, struct cf_inflate_io *io,
                                     cf_error *err)
{
    struct inflate_state *s = state;
    uint32_t in = clamp(io->avail_in), out = clamp(io->avail_out);
    s->next_in = (uint8_t *)io->next_in;
    s->avail_in = in;
    s->next_out = io->next_out;
    s->avail_out = out;
    int rc = isal_inflate(s);
    size_t used = in - s->avail_in, made = out - s->avail_out;
    io->next_in += used;
    io->avail_in -= used;
    io->next_out += made;
    io->avail_out -= made;
    if (rc < 0) {
        cf_error_set(err, CF_ERR_FORMAT, "corrupt deflate data (%s, igzip %d)", isal_fault(rc), rc);
        return CF_INFLATE_BAD;
    }
    return s->block_state == ISAL_BLOCK_FINISH ? CF_INFLATE_END : CF_INFLATE_MORE;
}

static uint32_t isal_out_crc(const struct cf_inflate_engine *e, void *state)
{
    return ((struct inflate_state *)state)->crc;
}

static void isal_end(const struct cf_inflate_engine *e, void *state)
{
    free(state);
}

static uint32_t isal_crc32(const struct cf_inflate_engine *e, uint32_t crc, const unsigned char *buf, size_t n)
{
    return crc32_gzip_refl(crc, buf, n);
}

static const struct cf_inflate_ops isal_ops = {
    "isal", isal_start, isal_run, isal_out_crc, isal_end, isal_crc32,
};

int cf_inflate_isal_setup(struct cf_inflate_engine *e, cf_error *err)
{
    e->ops = &isal_ops;
    return 0;
}

#else
int cf_inflate_isal_setup(struct cf_inflate_engine *e, cf_error *err)
{
    return cf_error_set(err, CF_ERR_NOTFOUND, "this cclforge was built without ISA-L (no <isa-l/igzip_lib.h> at build "
                                              "time: install libisal-dev and rebuild)");
}
#endif
