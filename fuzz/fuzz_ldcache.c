/* libFuzzer target for the ld.so.cache parser and lookup. */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/ldcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cf_ldcache *c = NULL;
    if (cf_ldcache_parse(data, size, "fuzz", &c, NULL) != 0)
        return 0;
    struct cf_ldcache_query q;
    memset(&q, 0, sizeof q);
    cf_ldcache_abi_for(EM_X86_64, 64, &q.abi, NULL);
    static const char *const hwcaps[] = { "x86-64-v3", "x86-64-v2" };
    q.hwcaps = hwcaps;
    q.n_hwcaps = 2;
    q.isa_1 = 7;
    size_t n = cf_ldcache_count(c);
    for (size_t i = 0; i < n && i < 64; i++) {
        const struct cf_ldcache_entry *e = cf_ldcache_entry_at(c, i);
        (void)cf_ldcache_lookup(c, e->key, &q);
        char *d = cf_ldcache_describe(e);
        free(d);
    }
    (void)cf_ldcache_lookup(c, "libc.so.6", &q);
    cf_ldcache_free(c);
    return 0;
}
