/* libFuzzer target for the ld.so.cache parser and lookup, differential: the
 * lookup-only reading the loader emulation uses (entries decoded as a lookup
 * meets them) must answer every name as the whole-table parse does whenever
 * that parse accepts the image, and must never read outside it otherwise. */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/ldcache.h"
#include "fuzz_guard.h"

static void same_answer(const char *a, const char *b)
{
    if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
        abort();
}

static void fuzz_one(const uint8_t *data, size_t size)
{
    struct cf_ldcache_query q;
    memset(&q, 0, sizeof q);
    cf_ldcache_abi_for(EM_X86_64, 64, &q.abi, NULL);
    static const char *const hwcaps[] = { "x86-64-v3", "x86-64-v2" };
    q.hwcaps = hwcaps;
    q.n_hwcaps = 2;
    q.isa_1 = 7;
    struct cf_ldcache_query old = q;
    old.glibc = (struct cf_glibc){ 2, 31 };
    struct cf_ldcache *lazy = NULL;
    int lazy_ok = cf_ldcache_parse_lookup(data, size, "fuzz", &lazy, NULL) == 0;
    struct cf_ldcache *c = NULL;
    if (cf_ldcache_parse(data, size, "fuzz", &c, NULL) != 0) {
        if (lazy_ok) {
            (void)cf_ldcache_lookup(lazy, "libc.so.6", &q);
            (void)cf_ldcache_lookup(lazy, "libfoo.so.2", &old);
        }
        cf_ldcache_free(lazy);
        return;
    }
    if (!lazy_ok)
        abort(); /* a cache the whole parse accepts, the lookup-only one must accept */
    size_t n = cf_ldcache_count(c);
    for (size_t i = 0; i < n && i < 64; i++) {
        const struct cf_ldcache_entry *e = cf_ldcache_entry_at(c, i);
        same_answer(cf_ldcache_lookup(c, e->key, &q), cf_ldcache_lookup(lazy, e->key, &q));
        same_answer(cf_ldcache_lookup(c, e->key, &old), cf_ldcache_lookup(lazy, e->key, &old));
        char *d = cf_ldcache_describe(e);
        free(d);
    }
    same_answer(cf_ldcache_lookup(c, "libc.so.6", &q), cf_ldcache_lookup(lazy, "libc.so.6", &q));
    cf_ldcache_free(c);
    cf_ldcache_free(lazy);
}

FUZZ_GUARDED_TARGET(fuzz_one)
