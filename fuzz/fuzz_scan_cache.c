/* libFuzzer target for the scan cache's entry reader (an entry file is bytes
 * on disk: anything may be in it): decode, and when it decodes, encode again
 * and decode that (the round trip must hold). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/scancache.h"
#include "fuzz_guard.h"

static void fuzz_one(const uint8_t *data, size_t size)
{
    struct cf_scan_facts f;
    cf_error err = CF_ERROR_INIT;
    if (cf_scan_entry_decode(data, size, NULL, &f, &err) == 0) {
        struct strbuf b = STRBUF_INIT;
        struct cf_file_id id = { 1, 2, 3, 4, 5 };
        cf_scan_entry_encode(&id, &f, &b);
        struct cf_scan_facts g;
        if (cf_scan_entry_decode((const uint8_t *)b.buf, b.len, &id, &g, NULL) != 0)
            abort(); /* what was decoded must encode into something that decodes */
        cf_scan_facts_release(&g);
        cf_sb_release(&b);
        cf_scan_facts_release(&f);
    }
    cf_error_clear(&err);
}

FUZZ_GUARDED_TARGET(fuzz_one)
