/* The inflate engines under zip_read.c (src/pkg/inflate_*.c): zlib, and
 * ISA-L's igzip where this build has it (else its
 * tests are skipped, saying why). Real deflate streams made here by zlib's
 * deflate at every level and strategy, and hand-written ones for what a
 * compressor never makes (a block type 3, a distance before the first byte,
 * stored lengths that disagree, a stream with no final block). Every engine
 * must give the same bytes and the same verdicts through cf_zip_member_read:
 * the declared size bounds the output, "more data than", "ends after",
 * "cut off", "corrupt deflate data", a CRC-32 mismatch; and never write past
 * the room it was given. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cclforge/strbuf.h"
#include "pkg/inflate_engine.h"
#include "pkg/zip_read.h"
#include "ts_inflate.h"

/* A member whose data is all of `stream`, declaring usize bytes with CRC-32 crc. */
static struct cf_zip_entry entry_of(const struct strbuf *stream, uint16_t method, uint64_t usize, uint32_t crc)
{
    struct cf_zip_entry e;
    memset(&e, 0, sizeof e);
    e.name = (char *)"m";
    e.name_len = 1;
    e.method = method;
    e.csize = stream->len;
    e.usize = usize;
    e.crc = crc;
    return e;
}

/* Reads the member in reads of `piece` bytes into a buffer guarded by 64
 * bytes that must stay as they were; 0, or -1 with err. */
static int read_member(const struct cf_inflate_engine *engine, struct strbuf *stream, const struct cf_zip_entry *e,
                       size_t piece, struct strbuf *out, cf_error *err)
{
    struct cf_zip_member *m = malloc(sizeof *m);
    int rc = cf_zip_member_open(m, engine, ts_read_strbuf, stream, e, err);
    unsigned char *buf = malloc(piece + 64);
    memset(buf, 0xa5, piece + 64);
    ssize_t got;
    while (rc == 0 && (got = cf_zip_member_read(m, buf, piece, err)) != 0) {
        for (size_t k = piece; k < piece + 64; k++)
            if (buf[k] != 0xa5)
                fail_msg("%s wrote past the %zu bytes of room it was given (byte %zu)", engine->ops->name, piece, k);
        if (got < 0) {
            rc = -1;
            break;
        }
        assert_true((size_t)got <= piece);
        cf_sb_add(out, buf, (size_t)got);
    }
    cf_zip_member_close(m);
    free(buf);
    free(m);
    return rc;
}

/* Raw deflate of data by zlib at level/strategy; flush_every > 0 ends a
 * block (Z_FULL_FLUSH) every that many bytes; final 0 leaves the stream
 * without its final block (Z_SYNC_FLUSH at the end). */
static void deflate_raw(const unsigned char *data, size_t n, int level, int strategy, size_t flush_every, int final,
                        struct strbuf *out)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8, strategy), Z_OK);
    size_t step = flush_every ? flush_every : n ? n : 1, off = 0;
    unsigned char buf[65536];
    do {
        size_t take = n - off < step ? n - off : step;
        zs.next_in = (Bytef *)data + off;
        zs.avail_in = (uInt)take;
        off += take;
        int flush = off < n ? (flush_every ? Z_FULL_FLUSH : Z_NO_FLUSH) : final ? Z_FINISH : Z_SYNC_FLUSH;
        int rc;
        do {
            zs.next_out = buf;
            zs.avail_out = sizeof buf;
            rc = deflate(&zs, flush);
            assert_true(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR);
            cf_sb_add(out, buf, sizeof buf - zs.avail_out);
        } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    } while (off < n);
    deflateEnd(&zs);
}

/* 1.5 MB that compresses in every way: words, runs, noise, all byte values. */
static unsigned char *sample(size_t *n)
{
    static const char *const words[] = { "alpha ", "beta ", "gamma ", "delta\n", "epsilon ", "zeta, " };
    size_t cap = 1536 * 1024, len = 0;
    unsigned char *d = malloc(cap);
    uint32_t x = 30;
    while (len < cap) {
        x = x * 1103515245u + 12345u;
        unsigned kind = (x >> 16) % 4, run = 1 + (x >> 20) % 3000;
        for (unsigned k = 0; k < run && len < cap; k++) {
            x = x * 1103515245u + 12345u;
            if (kind == 0)
                d[len++] = 0;
            else if (kind == 1)
                d[len++] = (unsigned char)(x >> 24);
            else if (kind == 2)
                d[len++] = (unsigned char)(k & 0xff);
            else
                for (const char *w = words[(x >> 16) % 6]; *w && len < cap; w++)
                    d[len++] = (unsigned char)*w;
        }
    }
    *n = len;
    return d;
}

/* A bit writer for the streams a compressor never makes (RFC 1951: fields
 * LSB first, Huffman codes MSB first). */
struct bits {
    struct strbuf sb;
    uint32_t acc;
    int n;
};
static void put_bits(struct bits *b, uint32_t v, int n)
{
    for (int i = 0; i < n; i++) {
        b->acc |= ((v >> i) & 1u) << b->n;
        if (++b->n == 8) {
            cf_sb_addc(&b->sb, (char)b->acc);
            b->acc = 0;
            b->n = 0;
        }
    }
}
static void put_code(struct bits *b, uint32_t code, int n)
{
    for (int i = n - 1; i >= 0; i--)
        put_bits(b, (code >> i) & 1u, 1);
}
static void flush_bits(struct bits *b)
{
    if (b->n)
        put_bits(b, 0, 8 - b->n);
}
/* One final fixed-Huffman block: literal 'a', then a match of length 3 at distance dist (1-4). */
static void fixed_block(struct bits *b, unsigned dist)
{
    put_bits(b, 1, 1);              /* BFINAL */
    put_bits(b, 1, 2);              /* BTYPE 01: fixed codes */
    put_code(b, 0x30 + 'a', 8);     /* literals 0-143: 00110000 + value */
    put_code(b, 257 - 256, 7);      /* length 3: symbol 257, 7 bits */
    put_code(b, dist - 1, 5);       /* distance codes 0-3: distances 1-4 */
    put_code(b, 0, 7);              /* end of block: 256 */
    flush_bits(b);
}

struct engines {
    struct cf_inflate_engine e[2];
    size_t n;
};

static struct engines engines_here(void)
{
    struct engines es;
    es.n = ts_inflate_engines(es.e);
    assert_true(es.n >= 1 && !strcmp(es.e[0].ops->name, "zlib"));
    return es;
}

static void test_sound_streams_every_engine(void **state)
{
    struct engines es = engines_here();
    size_t n;
    unsigned char *data = sample(&n);
    uint32_t crc = (uint32_t)crc32(0, data, (uInt)n);
    static const struct {
        int level, strategy;
        size_t flush_every;
    } ways[] = {
        { 0, Z_DEFAULT_STRATEGY, 0 },    { 1, Z_DEFAULT_STRATEGY, 0 },  { 6, Z_DEFAULT_STRATEGY, 0 },
        { 9, Z_DEFAULT_STRATEGY, 0 },    { 6, Z_FILTERED, 0 },          { 6, Z_HUFFMAN_ONLY, 0 },
        { 6, Z_RLE, 0 },                 { 6, Z_FIXED, 0 },             { 6, Z_DEFAULT_STRATEGY, 100000 },
        { 1, Z_DEFAULT_STRATEGY, 4097 },
    };
    static const size_t pieces[] = { 7, 4096, 65536, 1 << 20 };
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        struct strbuf stream = STRBUF_INIT;
        deflate_raw(data, n, ways[w].level, ways[w].strategy, ways[w].flush_every, 1, &stream);
        struct cf_zip_entry e = entry_of(&stream, 8, n, crc);
        for (size_t k = 0; k < es.n; k++)
            for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
                struct strbuf out = STRBUF_INIT;
                cf_error err = CF_ERROR_INIT;
                if (read_member(&es.e[k], &stream, &e, pieces[p], &out, &err) != 0)
                    fail_msg("%s, level %d strategy %d, reads of %zu: %s", es.e[k].ops->name, ways[w].level,
                             ways[w].strategy, pieces[p], cf_error_message(&err));
                assert_int_equal(out.len, n);
                assert_memory_equal(out.buf, data, n);
                cf_sb_release(&out);
            }
        cf_sb_release(&stream);
    }
    /* one byte at a time, on a smaller stream */
    struct strbuf stream = STRBUF_INIT;
    deflate_raw(data, 200000, 6, Z_DEFAULT_STRATEGY, 0, 1, &stream);
    struct cf_zip_entry e = entry_of(&stream, 8, 200000, (uint32_t)crc32(0, data, 200000));
    for (size_t k = 0; k < es.n; k++) {
        struct strbuf out = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(read_member(&es.e[k], &stream, &e, 1, &out, &err), 0);
        assert_memory_equal(out.buf, data, 200000);
        cf_sb_release(&out);
    }
    cf_sb_release(&stream);
    free(data);
    if (es.n < 2)
        skip();
}

/* Many small dynamic blocks over a 4-letter alphabet (short codes: the
 * decoder's table packs literals with the end-of-block code), so the output
 * fills at an end of block now and then: every engine gives the same bytes.
 * The stream of this shape that trips ISA-L's aarch64 decoder before 2.32
 * (intel/isa-l#316) is tests/fixtures/small_blocks_wheel.py's; this one,
 * checked under qemu, does not. */
static void test_small_blocks_every_engine(void **state)
{
    struct engines es = engines_here();
    size_t n = 0, cap = 1 << 22;
    unsigned char *data = malloc(cap);
    struct strbuf stream = STRBUF_INIT;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    unsigned char buf[4096];
    uint32_t x = 316;
    while (n < cap - 400) {
        x = x * 1103515245u + 12345u;
        size_t block = 50 + (x >> 16) % 350, start = n;
        for (size_t k = 0; k < block; k++) {
            x = x * 1103515245u + 12345u;
            data[n++] = (unsigned char)("abcd"[(x >> 16) & 3]);
        }
        zs.next_in = data + start;
        zs.avail_in = (uInt)block;
        do {
            zs.next_out = buf;
            zs.avail_out = sizeof buf;
            assert_true(deflate(&zs, Z_BLOCK) != Z_STREAM_ERROR);
            cf_sb_add(&stream, buf, sizeof buf - zs.avail_out);
        } while (zs.avail_out == 0);
    }
    int rc;
    do {
        zs.next_out = buf;
        zs.avail_out = sizeof buf;
        rc = deflate(&zs, Z_FINISH);
        cf_sb_add(&stream, buf, sizeof buf - zs.avail_out);
    } while (rc != Z_STREAM_END);
    deflateEnd(&zs);
    struct cf_zip_entry e = entry_of(&stream, 8, n, (uint32_t)crc32(0, data, (uInt)n));
    static const size_t pieces[] = { 4096, 65536 };
    for (size_t k = 0; k < es.n; k++)
        for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
            struct strbuf out = STRBUF_INIT;
            cf_error err = CF_ERROR_INIT;
            if (read_member(&es.e[k], &stream, &e, pieces[p], &out, &err) != 0)
                fail_msg("%s, reads of %zu: %s", es.e[k].ops->name, pieces[p], cf_error_message(&err));
            assert_int_equal(out.len, n);
            assert_memory_equal(out.buf, data, n);
            cf_sb_release(&out);
        }
    cf_sb_release(&stream);
    free(data);
    if (es.n < 2)
        skip();
}

/* Reads member e with every engine: each must fail, saying `says`, and put out no more than `most` bytes. */
static void each_fails(const struct engines *es, struct strbuf *stream, const struct cf_zip_entry *e, const char *says,
                       size_t most)
{
    static const size_t pieces[] = { 1, 7, 65536 };
    for (size_t k = 0; k < es->n; k++)
        for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
            struct strbuf out = STRBUF_INIT;
            cf_error err = CF_ERROR_INIT;
            if (read_member(&es->e[k], stream, e, pieces[p], &out, &err) == 0)
                fail_msg("%s, reads of %zu: no fault found (wanted \"%s\")", es->e[k].ops->name, pieces[p], says);
            if (!strstr(cf_error_message(&err), says))
                fail_msg("%s, reads of %zu: \"%s\", wanted \"%s\"", es->e[k].ops->name, pieces[p],
                         cf_error_message(&err), says);
            if (out.len > most)
                fail_msg("%s: %zu bytes out, more than %zu", es->e[k].ops->name, out.len, most);
            cf_error_clear(&err);
            cf_sb_release(&out);
        }
}

static void test_faults_every_engine(void **state)
{
    struct engines es = engines_here();
    size_t n;
    unsigned char *data = sample(&n);
    n = 300000;
    uint32_t crc = (uint32_t)crc32(0, data, (uInt)n);
    struct strbuf stream = STRBUF_INIT, s = STRBUF_INIT;
    deflate_raw(data, n, 6, Z_DEFAULT_STRATEGY, 0, 1, &stream);
    struct cf_zip_entry e = entry_of(&stream, 8, n, crc);

    /* the declared size bounds the output, both ways */
    e.usize = n - 1;
    each_fails(&es, &stream, &e, "more data than the 299999 bytes the archive declares", n - 1);
    e.usize = n + 1;
    each_fails(&es, &stream, &e, "the data ends after 300000 of the 300001 bytes", n);
    e.usize = n;
    /* a wrong CRC-32 */
    e.crc = crc ^ 1;
    each_fails(&es, &stream, &e, "CRC-32 is", n);
    e.crc = crc;
    /* the stream cut in half (the central directory saying so): cut off */
    e.csize = stream.len / 2;
    each_fails(&es, &stream, &e, "the deflate stream is cut off after", n);
    e.csize = stream.len;
    /* no final block: every byte there, and the stream never ends */
    deflate_raw(data, n, 6, Z_DEFAULT_STRATEGY, 0, 0, &s);
    struct cf_zip_entry open_end = entry_of(&s, 8, n, crc);
    each_fails(&es, &s, &open_end, "the deflate stream is cut off after 300000 of the 300000 bytes", n);
    cf_sb_release(&s);

    /* a block of type 3, which does not exist */
    cf_sb_addc(&s, 0x07);
    cf_sb_add(&s, "\0\0\0\0\0\0\0", 7);
    struct cf_zip_entry type3 = entry_of(&s, 8, 10, 0);
    each_fails(&es, &s, &type3, "corrupt deflate data", 0);
    cf_sb_release(&s);
    /* stored lengths that disagree (LEN 5, NLEN not its complement) */
    cf_sb_add(&s, "\x01\x05\x00\x00\x00hello", 10);
    struct cf_zip_entry nlen = entry_of(&s, 8, 5, (uint32_t)crc32(0, (const Bytef *)"hello", 5));
    each_fails(&es, &s, &nlen, "corrupt deflate data", 0);
    cf_sb_release(&s);
    /* a match reaching before the first byte: 'a', then length 3 at distance 2 */
    struct bits b = { STRBUF_INIT, 0, 0 };
    fixed_block(&b, 2);
    struct cf_zip_entry far = entry_of(&b.sb, 8, 4, (uint32_t)crc32(0, (const Bytef *)"aaaa", 4));
    each_fails(&es, &b.sb, &far, "corrupt deflate data", 1);
    cf_sb_release(&b.sb);
    /* the same written right (distance 1): "aaaa" from every engine, so the writer is sound */
    struct bits good = { STRBUF_INIT, 0, 0 };
    fixed_block(&good, 1);
    struct cf_zip_entry four = entry_of(&good.sb, 8, 4, (uint32_t)crc32(0, (const Bytef *)"aaaa", 4));
    for (size_t k = 0; k < es.n; k++) {
        struct strbuf out = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(read_member(&es.e[k], &good.sb, &four, 7, &out, &err), 0);
        assert_int_equal(out.len, 4);
        assert_memory_equal(out.buf, "aaaa", 4);
        cf_sb_release(&out);
    }
    cf_sb_release(&good.sb);
    /* a member declaring nothing whose stream holds bytes */
    struct cf_zip_entry none = entry_of(&stream, 8, 0, 0);
    each_fails(&es, &stream, &none, "more data than the 0 bytes", 0);
    /* a deflate member of no compressed bytes at all (the fuzzer's: the engines were
     * handed no input pointer and advanced it by 0), declaring bytes or none: cut off */
    struct strbuf empty = STRBUF_INIT;
    struct cf_zip_entry nothing = entry_of(&empty, 8, 5, crc);
    each_fails(&es, &empty, &nothing, "the deflate stream is cut off after 0 of the 5 bytes", 0);
    nothing.usize = 0;
    each_fails(&es, &empty, &nothing, "the deflate stream is cut off after 0 of the 0 bytes", 0);
    cf_sb_release(&stream);
    free(data);
    if (es.n < 2)
        skip();
}

static void test_edges_every_engine(void **state)
{
    struct engines es = engines_here();
    for (size_t k = 0; k < es.n; k++) {
        const struct cf_inflate_engine *en = &es.e[k];
        cf_error err = CF_ERROR_INIT;
        /* an empty deflated member (the final empty fixed block zlib writes) and an empty stored one */
        struct strbuf s = STRBUF_INIT, out = STRBUF_INIT;
        cf_sb_add(&s, "\x03\x00", 2);
        struct cf_zip_entry empty = entry_of(&s, 8, 0, 0);
        assert_int_equal(read_member(en, &s, &empty, 7, &out, &err), 0);
        assert_int_equal(out.len, 0);
        cf_sb_release(&s);
        struct cf_zip_entry stored_empty = entry_of(&s, 0, 0, 0);
        assert_int_equal(read_member(en, &s, &stored_empty, 7, &out, &err), 0);
        assert_int_equal(out.len, 0);

        /* bytes after the final block are not data (zip's csize may hold padding): ignored alike */
        const char *text = "hello, hello, hello";
        deflate_raw((const unsigned char *)text, strlen(text), 9, Z_DEFAULT_STRATEGY, 0, 1, &s);
        cf_sb_add(&s, "trailing junk", 13);
        struct cf_zip_entry tail = entry_of(&s, 8, strlen(text), (uint32_t)crc32(0, (const Bytef *)text, (uInt)strlen(text)));
        assert_int_equal(read_member(en, &s, &tail, 4096, &out, &err), 0);
        assert_int_equal(out.len, strlen(text));
        cf_sb_release(&s);
        cf_sb_release(&out);

        /* every byte out before the final (empty) block: a sync flush, then the end */
        size_t n;
        unsigned char *data = sample(&n);
        n = 70000;
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
        unsigned char buf[1 << 17];
        zs.next_in = data;
        zs.avail_in = (uInt)n;
        zs.next_out = buf;
        zs.avail_out = sizeof buf;
        assert_int_equal(deflate(&zs, Z_SYNC_FLUSH), Z_OK);
        assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
        cf_sb_add(&s, buf, sizeof buf - zs.avail_out);
        deflateEnd(&zs);
        struct cf_zip_entry late_end = entry_of(&s, 8, n, (uint32_t)crc32(0, data, (uInt)n));
        assert_int_equal(read_member(en, &s, &late_end, (size_t)n, &out, &err), 0);
        assert_memory_equal(out.buf, data, n);
        cf_sb_release(&out);
        cf_sb_release(&s);

        /* a stored member's CRC-32 is the engine's too: right, then one byte off */
        cf_sb_add(&s, data, n);
        struct cf_zip_entry stored = entry_of(&s, 0, n, (uint32_t)crc32(0, data, (uInt)n));
        assert_int_equal(read_member(en, &s, &stored, 4093, &out, &err), 0);
        assert_memory_equal(out.buf, data, n);
        cf_sb_release(&out);
        s.buf[n / 2] ^= 0x20;
        assert_int_equal(read_member(en, &s, &stored, 4093, &out, &err), -1);
        assert_non_null(strstr(cf_error_message(&err), "CRC-32 is"));
        cf_error_clear(&err);
        cf_sb_release(&out);
        cf_sb_release(&s);
        free(data);
        /* the engine's CRC-32 continues zlib's */
        static const unsigned char piece[] = "123456789";
        uint32_t c = en->ops->crc32(en, 0, piece, 4);
        assert_int_equal(en->ops->crc32(en, c, piece + 4, 5), 0xcbf43926u); /* the check value of CRC-32 */
    }
    if (es.n < 2)
        skip();
}

/* An engine that takes nothing and gives nothing: the reader stops with a
 * fault instead of calling it for ever (a guard for any engine's bug). */
static int stuck_start(const struct cf_inflate_engine *e, void **state, cf_error *err)
{
    *state = (void *)1;
    return 0;
}
static enum cf_inflate_step stuck_run(const struct cf_inflate_engine *e, void *state, struct cf_inflate_io *io,
                                      cf_error *err)
{
    return CF_INFLATE_MORE;
}
static uint32_t stuck_crc(const struct cf_inflate_engine *e, void *state)
{
    return 0;
}
static void stuck_end(const struct cf_inflate_engine *e, void *state)
{
}
static uint32_t stuck_crc32(const struct cf_inflate_engine *e, uint32_t crc, const unsigned char *p, size_t n)
{
    return crc;
}

static void test_an_engine_that_stalls_is_stopped(void **state)
{
    static const struct cf_inflate_ops stuck = { "stuck", stuck_start, stuck_run, stuck_crc, stuck_end, stuck_crc32 };
    struct cf_inflate_engine en = { &stuck };
    struct strbuf s = STRBUF_INIT, out = STRBUF_INIT;
    cf_sb_add(&s, "\x03\x00", 2);
    struct cf_zip_entry e = entry_of(&s, 8, 10, 0);
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(read_member(&en, &s, &e, 7, &out, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "corrupt deflate data (stuck stops making progress)"));
    cf_error_clear(&err);
    cf_sb_release(&s);
    cf_sb_release(&out);
}

/* An engine is never handed a NULL buffer, not even for a member of no
 * compressed bytes: it advances next_in by what it used, and NULL + 0 is
 * undefined (clang's UBSan stopped the fuzzer on zlib's engine there). */
static int null_buffers;
static enum cf_inflate_step watch_run(const struct cf_inflate_engine *e, void *state, struct cf_inflate_io *io,
                                      cf_error *err)
{
    null_buffers += !io->next_in + !io->next_out;
    return CF_INFLATE_MORE;
}

static void test_an_engine_is_never_handed_null(void **state)
{
    static const struct cf_inflate_ops watch = { "watch", stuck_start, watch_run, stuck_crc, stuck_end, stuck_crc32 };
    struct cf_inflate_engine en = { &watch };
    struct strbuf empty = STRBUF_INIT, out = STRBUF_INIT;
    struct cf_zip_entry e = entry_of(&empty, 8, 5, 0);
    cf_error err = CF_ERROR_INIT;
    null_buffers = 0;
    assert_int_equal(read_member(&en, &empty, &e, 7, &out, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "the deflate stream is cut off after 0 of the 5 bytes"));
    assert_int_equal(null_buffers, 0);
    cf_error_clear(&err);
    cf_sb_release(&out);
}

/* The switch: a name it does not know is refused, listing those it does. */
static void test_engine_names(void **state)
{
    struct cf_inflate_engine en;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_inflate_named(&en, "zlib", &err), 0);
    assert_string_equal(en.ops->name, "zlib");
    assert_int_equal(cf_inflate_named(&en, "gzip", &err), -1);
    assert_int_equal(err.kind, CF_ERR_USAGE);
    assert_string_equal(cf_error_message(&err),
                        "CCLFORGE_INFLATE=gzip: the inflate engine for wheel verify is one of isal, zlib, or auto");
    cf_error_clear(&err);
    setenv("CCLFORGE_INFLATE", "zlib", 1);
    assert_int_equal(cf_inflate_pick(&en, &err), 0);
    assert_string_equal(en.ops->name, "zlib");
    setenv("CCLFORGE_INFLATE", "auto", 1);
    assert_int_equal(cf_inflate_pick(&en, &err), 0);
    int isal = cf_inflate_named(&en, "isal", NULL) == 0;
    assert_int_equal(cf_inflate_pick(&en, &err), 0);
    assert_string_equal(en.ops->name, isal ? "isal" : "zlib"); /* auto: the faster where it runs */
    unsetenv("CCLFORGE_INFLATE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sound_streams_every_engine),
        cmocka_unit_test(test_small_blocks_every_engine),
        cmocka_unit_test(test_faults_every_engine),
        cmocka_unit_test(test_edges_every_engine),
        cmocka_unit_test(test_an_engine_that_stalls_is_stopped),
        cmocka_unit_test(test_an_engine_is_never_handed_null),
        cmocka_unit_test(test_engine_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
