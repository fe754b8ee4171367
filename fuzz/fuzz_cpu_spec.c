/* libFuzzer target for the CPU a resolution plans for: a --cpu spec, a
 * GLIBC_TUNABLES value and a --glibc release, as the user types them. The
 * input is "spec\0tunables\0release"; missing parts are NULL. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/cpufacts.h"
#include "cclforge/glibc.h"
#include "cclforge/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *parts[3] = { NULL, NULL, NULL };
    size_t at = 0;
    for (int i = 0; i < 3 && at <= size; i++) {
        const uint8_t *end = memchr(data + at, '\0', size - at);
        size_t len = end ? (size_t)(end - (data + at)) : size - at;
        parts[i] = cf_strndup((const char *)data + at, len);
        at += len + 1;
    }
    struct cf_cpu_facts host = { .x86 = 1, .vendor = CF_CPU_VENDOR_ZHAOXIN, .usable = ~UINT64_C(0) >> 38,
                                 .family = 7, .model = 0x3b };
    struct cf_cpu_facts f;
    cf_error err = CF_ERROR_INIT;
    if (parts[0] && cf_cpu_parse(parts[0], &host, &f, &err) == 0) {
        struct cf_glibc g = { 2, 36 };
        if (parts[2])
            (void)cf_glibc_parse(parts[2], &g, NULL);
        uint64_t before = f.usable;
        int level = cf_cpu_isa_level(&f);
        if (cf_glibc_follows(g, CF_GLIBC_ZHAOXIN_AVX_OFF))
            cf_cpu_apply_zhaoxin_quirk(&f);
        cf_cpu_apply_tunables(&f, parts[1], "glibc.cpu.hwcaps", cf_glibc_follows(g, CF_GLIBC_TUNABLE_HWCAPS_SPLIT));
        cf_cpu_apply_tunables(&f, parts[1], "glibc.tune.hwcaps", 1);
        /* the quirk and the tunables only take features away */
        if ((f.usable & ~before) != 0 || cf_cpu_isa_level(&f) > level || cf_cpu_isa_level(&f) > 4)
            abort();
        if (memchr(f.source, '\0', sizeof f.source) == NULL)
            abort();
    } else if (parts[0] && !cf_error_message(&err)) {
        abort(); /* a refused spec says why */
    }
    cf_error_clear(&err);
    for (int i = 0; i < 3; i++)
        free(parts[i]);
    return 0;
}
