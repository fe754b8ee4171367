/* Streaming member data (APPNOTE 4.4.5: method 0 stored, 8 deflate, as raw
 * deflate without a zlib header). The compressed bytes read are bounded by
 * the central directory's size, the bytes produced by the declared size: a
 * deflate stream that would inflate further is stopped, not followed. */
#include "pkg/zip_read.h"

#include <string.h>

#define METHOD_STORED 0
#define METHOD_DEFLATE 8

int cf_zip_member_supported(const struct cf_zip_entry *e)
{
    return e->method == METHOD_STORED || e->method == METHOD_DEFLATE;
}

int cf_zip_member_open(struct cf_zip_member *m, const struct cf_inflate_engine *engine, cf_zip_read_fn read, void *ctx,
                       const struct cf_zip_entry *e, cf_error *err)
{
    memset(m, 0, offsetof(struct cf_zip_member, in));
    m->read = read;
    m->ctx = ctx;
    m->e = e;
    m->engine = engine;
    /* never NULL, even for a member of no compressed bytes: the engines advance it by 0 */
    m->io.next_in = m->in;
    if (!cf_zip_member_supported(e))
        return cf_error_set(err, CF_ERR_FORMAT, "compression method %u is not read here", e->method);
    if (e->method == METHOD_DEFLATE && engine->ops->start(engine, &m->inflating, err) < 0)
        return -1;
    return 0;
}

/* The next compressed bytes into m->in; how many (0 when the member's are all read), -1 on a read error. */
static ssize_t fill(struct cf_zip_member *m, cf_error *err)
{
    uint64_t left = m->e->csize - m->in_pos;
    size_t want = left < sizeof m->in ? (size_t)left : sizeof m->in;
    if (want && m->read(m->ctx, m->e->data_offset + m->in_pos, m->in, want) < 0)
        return cf_error_set(err, CF_ERR_IO, "cannot read %zu bytes at offset %llu", want,
                            (unsigned long long)(m->e->data_offset + m->in_pos));
    m->in_pos += want;
    return (ssize_t)want;
}

static ssize_t finish(struct cf_zip_member *m, cf_error *err)
{
    if (m->out != m->e->usize)
        return cf_error_set(err, CF_ERR_FORMAT, "the data ends after %llu of the %llu bytes the archive declares",
                            (unsigned long long)m->out, (unsigned long long)m->e->usize);
    uint32_t crc = m->inflating ? m->engine->ops->out_crc(m->engine, m->inflating) : m->crc;
    if (crc != m->e->crc)
        return cf_error_set(err, CF_ERR_FORMAT, "CRC-32 is %08x, the archive says %08x", crc, m->e->crc);
    m->done = 1;
    return 0;
}

/* Inflates into out[0..cap): bytes produced (0 once the stream has ended), or
 * -1. cap 0 means every declared byte is out: one byte of room then tells
 * whether the stream really ends there or would go on. */
static ssize_t inflate_some(struct cf_zip_member *m, unsigned char *out, size_t cap, cf_error *err)
{
    unsigned char extra;
    struct cf_inflate_io *io = &m->io;
    io->next_out = cap ? out : &extra;
    io->avail_out = cap ? cap : 1;
    for (;;) {
        if (io->avail_in == 0 && m->in_pos < m->e->csize) {
            ssize_t f = fill(m, err);
            if (f < 0)
                return -1;
            io->next_in = m->in;
            io->avail_in = (size_t)f;
        }
        size_t in_before = io->avail_in, room_before = io->avail_out;
        enum cf_inflate_step step = m->engine->ops->run(m->engine, m->inflating, io, err);
        if (step == CF_INFLATE_BAD)
            return -1;
        size_t got = cap ? cap - io->avail_out : 0;
        if (!cap && io->avail_out == 0)
            return cf_error_set(err, CF_ERR_FORMAT, "more data than the %llu bytes the archive declares",
                                (unsigned long long)m->e->usize);
        if (step == CF_INFLATE_END) {
            m->ended = 1;
            return (ssize_t)got;
        }
        if (cap && io->avail_out == 0)
            return (ssize_t)got;
        if (io->avail_in == 0 && m->in_pos == m->e->csize) {
            if (got)
                return (ssize_t)got;
            return cf_error_set(err, CF_ERR_FORMAT, "the deflate stream is cut off after %llu of the %llu bytes "
                                                    "the archive declares",
                                (unsigned long long)(m->out + got), (unsigned long long)m->e->usize);
        }
        /* input and room, and neither taken: calling again would spin */
        if (io->avail_in == in_before && io->avail_out == room_before)
            return cf_error_set(err, CF_ERR_FORMAT, "corrupt deflate data (%s stops making progress)",
                                m->engine->ops->name);
    }
}

ssize_t cf_zip_member_read(struct cf_zip_member *m, void *buf, size_t n, cf_error *err)
{
    if (m->done || n == 0)
        return 0;
    /* never more than the declared size: what would follow is reported, not produced */
    uint64_t room = m->e->usize - m->out;
    size_t cap = room < n ? (size_t)room : n;
    ssize_t got;
    if (!m->inflating) {
        if (cap == 0)
            return finish(m, err);
        if (m->read(m->ctx, m->e->data_offset + m->in_pos, buf, cap) < 0)
            return cf_error_set(err, CF_ERR_IO, "cannot read %zu bytes at offset %llu", cap,
                                (unsigned long long)(m->e->data_offset + m->in_pos));
        m->in_pos += cap;
        got = (ssize_t)cap;
        m->crc = m->engine->ops->crc32(m->engine, m->crc, buf, cap);
    } else if (m->ended) {
        return finish(m, err); /* the stream ended: right only if every declared byte came out */
    } else if ((got = inflate_some(m, buf, cap, err)) < 0) {
        return -1;
    }
    m->out += (uint64_t)got;
    return got ? got : finish(m, err);
}

void cf_zip_member_close(struct cf_zip_member *m)
{
    if (m->inflating)
        m->engine->ops->end(m->engine, m->inflating);
    m->inflating = NULL;
}
