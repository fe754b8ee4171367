/* libFuzzer target for the wheel parsers: RECORD (CSV), METADATA/WHEEL headers,
 * wheel file names and platform tags. The first byte picks the parser; the rest
 * is the input, in a copy that ends at an unmapped page. Invariant: a parsed
 * RECORD formatted back and parsed again gives the same entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "cclforge/wheel.h"
#include "fuzz_guard.h"

static void record_round_trip(const char *text, size_t len)
{
    struct cf_record rec;
    cf_error err = CF_ERROR_INIT;
    if (cf_record_parse(text, len, &rec, &err) < 0) {
        if (!cf_error_message(&err)[0])
            abort(); /* a rejection always says why */
        cf_error_clear(&err);
        return;
    }
    struct strbuf out = STRBUF_INIT;
    for (size_t i = 0; i < rec.n; i++) {
        const struct cf_record_entry *e = &rec.entries[i];
        /* the writer only writes sha256 digests, which never need quoting */
        if (e->algo && (strcmp(e->algo, "sha256") || strpbrk(e->digest, ",\"\r\n"))) {
            cf_record_release(&rec);
            cf_sb_release(&out);
            return;
        }
        cf_record_format_line(&out, e->path, e->algo ? e->digest : NULL, e->size < 0 ? 0 : e->size);
    }
    struct cf_record again;
    if (rec.n && cf_record_parse(out.buf ? out.buf : "", out.len, &again, &err) < 0)
        abort(); /* what we write, we must read */
    if (!rec.n) {
        cf_record_release(&rec);
        cf_sb_release(&out);
        return;
    }
    if (again.n != rec.n)
        abort();
    for (size_t i = 0; i < rec.n; i++)
        if (strcmp(again.entries[i].path, rec.entries[i].path) ||
            (rec.entries[i].digest && strcmp(again.entries[i].digest, rec.entries[i].digest)))
            abort();
    cf_record_release(&again);
    cf_record_release(&rec);
    cf_sb_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct fuzz_guarded g;
    if (fuzz_guard_copy(data + 1, size - 1, &g) < 0)
        return 0;
    const char *text = (const char *)g.data;
    size_t len = size - 1;
    cf_error err = CF_ERROR_INIT;
    switch (data[0] % 4) {
    case 0:
        record_round_trip(text, len);
        break;
    case 1: {
        struct cf_kv kv;
        if (cf_kv_parse(text, len, &kv, &err) == 0) {
            for (size_t i = 0; i < kv.n; i++)
                if (!kv.keys[i][0] || !cf_kv_get(&kv, kv.keys[i]))
                    abort();
            cf_kv_release(&kv);
        }
        cf_error_clear(&err);
        break;
    }
    case 2:
    case 3: {
        char *s = cf_strndup(text, len); /* names and tags are C strings */
        struct cf_wheel_name wn;
        if (cf_wheel_name_parse(s, &wn, &err) == 0) {
            if (!wn.dist[0] || !wn.platform_tag[0])
                abort();
            int c = cf_platform_glibc_ceiling(wn.platform_tag);
            if (c < 0 || c > 9999)
                abort();
            cf_wheel_name_release(&wn);
        }
        cf_error_clear(&err);
        int c = cf_platform_glibc_ceiling(s);
        if (c < 0 || c > 9999)
            abort();
        free(s);
        break;
    }
    }
    fuzz_guard_release(&g);
    return 0;
}
