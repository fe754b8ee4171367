/* libFuzzer target for the zip reader `wheel verify` uses: the structure
 * (zip_scan.c: end records, ZIP64, central directory, local headers,
 * overlaps) and then every member's data (zip_read.c: stored and deflate,
 * sizes and CRC-32), from a copy of the input that ends at an unmapped page.
 * Invariants: a member read to its end gives exactly its declared size; a
 * failure always says why; names shown for messages hold no control byte;
 * every name goes into the name index and is found again. Output is capped
 * per input so a bomb costs the fuzzer no more than a small file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "fuzz_guard.h"
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

static void read_member(struct mem *m, const struct cf_zip_entry *e, size_t *budget)
{
    struct cf_zip_member *r = malloc(sizeof *r);
    cf_error err = CF_ERROR_INIT;
    if (!r)
        return;
    if (cf_zip_member_open(r, read_mem, m, e, &err) == 0) {
        unsigned char buf[4096];
        ssize_t got;
        uint64_t total = 0;
        while (*budget && (got = cf_zip_member_read(r, buf, sizeof buf, &err)) > 0) {
            total += (uint64_t)got;
            *budget = (size_t)got >= *budget ? 0 : *budget - (size_t)got;
            if (total > e->usize)
                abort(); /* never more than declared */
        }
        if (*budget && got == 0 && total != e->usize)
            abort(); /* a clean end means every declared byte came out */
        if (*budget && got < 0 && !cf_error_message(&err)[0])
            abort();
        cf_zip_member_close(r);
    }
    cf_error_clear(&err);
    free(r);
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
    size_t budget = OUTPUT_BUDGET;
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
        if (!scan.n_faults && cf_zip_member_supported(e))
            read_member(&m, e, &budget);
    }
    cf_name_index_release(&ix);
    cf_zip_scan_release(&scan);
    fuzz_guard_release(&g);
    return 0;
}
