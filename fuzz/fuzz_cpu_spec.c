/* libFuzzer target for the CPU a resolution plans for: a --cpu spec, a
 * GLIBC_TUNABLES value and a --glibc release, as the user types them, and
 * what that release's loader makes of them. The input is
 * "spec\0tunables\0release"; missing parts are NULL. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/cpufacts.h"
#include "cclforge/glibc.h"
#include "cclforge/ldso.h"
#include "fuzz_parts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *parts[3];
    fuzz_split_parts(data, size, parts, 3);
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
        cf_ldso_cpu_as_loaded(&f, g, parts[1]);
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
