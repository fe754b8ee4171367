/* libFuzzer target for the zip reader `wheel verify` uses: the structure
 * (zip_scan.c: end records, ZIP64, central directory, local headers,
 * overlaps) and then every member's data (zip_read.c: stored and deflate,
 * sizes and CRC-32) through each inflate engine this build has (zlib, and
 * ISA-L's igzip where libisal.so.2 is at hand), from a copy of the input
 * that ends at an unmapped page. Invariants: a member read to its end gives
 * exactly its declared size; a failure always says why; when two engines
 * both read a member to its end they gave the same bytes (one may refuse a
 * stream the other takes: igzip is laxer about some malformed codes, and
 * the size and CRC-32 still hold); names shown for messages hold no control
 * byte; every name goes into the name index and is found again. Output is
 * capped per input and engine so a bomb costs the fuzzer no more than a
 * small file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "fuzz_guard.h"
#include "pkg/inflate_engine.h"
#include "pkg/name_index.h"
#include "pkg/zip_read.h"
#include "pkg/zip_scan.h"

#define OUTPUT_BUDGET (8u << 20)

struct mem {
    const uint8_t *data;
    size_t size;
};

static int read_mem(void *ctx, uint64_t off, void *buf, size_t n)
{
    const struct mem *m = ctx;
    if (off > m->size || n > m->size - off)
        return -1;
    memcpy(buf, m->data + off, n);
    return 0;
}

/* What one engine made of a member: whether it read to a clean end, and a hash of the bytes. */
struct outcome {
    int clean;
    uint64_t fnv;
};

static struct outcome read_member(const struct cf_inflate_engine *engine, struct mem *m, const struct cf_zip_entry *e,
                                  size_t *budget)
{
    struct outcome o = { 0, 1469598103934665603ull };
    struct cf_zip_member *r = malloc(sizeof *r);
    cf_error err = CF_ERROR_INIT;
    if (!r)
        return o;
    if (cf_zip_member_open(r, engine, read_mem, m, e, &err) == 0) {
        unsigned char buf[4096];
        ssize_t got = -1;
        uint64_t total = 0;
        while (*budget && (got = cf_zip_member_read(r, buf, sizeof buf, &err)) > 0) {
            total += (uint64_t)got;
            *budget = (size_t)got >= *budget ? 0 : *budget - (size_t)got;
            if (total > e->usize)
                abort(); /* never more than declared */
            for (ssize_t k = 0; k < got; k++)
                o.fnv = (o.fnv ^ buf[k]) * 1099511628211ull;
        }
        if (*budget && got == 0 && total != e->usize)
            abort(); /* a clean end means every declared byte came out */
        if (*budget && got < 0 && !cf_error_message(&err)[0])
            abort();
        o.clean = *budget && got == 0;
        cf_zip_member_close(r);
    }
    cf_error_clear(&err);
    free(r);
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_guarded g;
    if (fuzz_guard_copy(data, size, &g) < 0)
        return 0;
    struct mem m = { g.data, size };
    struct cf_zip_limits lim = { 4096, (uint64_t)1 << 32, 50 };
    struct cf_zip_scan scan;
    cf_error err = CF_ERROR_INIT;
    if (cf_zip_scan(read_mem, &m, size, &lim, &scan, &err) < 0) {
        if (!cf_error_message(&err)[0])
            abort();
        cf_error_clear(&err);
        fuzz_guard_release(&g);
        return 0;
    }
    if (scan.faults.n > scan.n_faults + 1)
        abort();
    struct cf_name_index ix = CF_NAME_INDEX_INIT;
    /* each engine this build can run, with an output budget of its own */
    static const char *const names[] = { "zlib", "isal" };
    struct cf_inflate_engine engines[2];
    size_t budget[2], n_engines = 0;
    for (size_t k = 0; k < 2; k++)
        if (cf_inflate_named(&engines[n_engines], names[k], NULL) == 0)
            budget[n_engines++] = OUTPUT_BUDGET;
    for (size_t i = 0; i < scan.n; i++) {
        const struct cf_zip_entry *e = &scan.entries[i];
        struct strbuf shown = STRBUF_INIT;
        cf_zip_name_display(&shown, e->name, e->name_len);
        for (size_t k = 0; k < shown.len; k++)
            if ((unsigned char)shown.buf[k] < 0x20 || shown.buf[k] == 0x7f)
                abort();
        cf_sb_release(&shown);
        cf_name_index_add(&ix, e->name, e->name_len, i, NULL);
        if (!cf_name_index_find(&ix, e->name, e->name_len, NULL))
            abort();
        if (scan.n_faults || !cf_zip_member_supported(e))
            continue;
        struct outcome first = { 0, 0 };
        for (size_t k = 0; k < n_engines; k++) {
            struct outcome o = read_member(&engines[k], &m, e, &budget[k]);
            if (k > 0 && first.clean && o.clean && first.fnv != o.fnv)
                abort(); /* two engines read the member to its end, with different bytes */
            if (k == 0)
                first = o;
        }
    }
    cf_name_index_release(&ix);
    cf_zip_scan_release(&scan);
    fuzz_guard_release(&g);
    return 0;
}
