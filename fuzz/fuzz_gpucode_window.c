/* libFuzzer target, differential: the fatbin and bundle walkers reading a
 * file through the 4 KB pread window (how cf_gpucode_inventory reads real
 * files) must see exactly what they see over the same bytes in memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/gpucode_walk.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

static int hash_fatbin(const struct cf_fatbin_entry *e, void *ctx)
{
    uint64_t *h = ctx;
    *h = mix(mix(mix(*h, e->arch), e->header_offset), e->flags ^ e->payload_size);
    return 0;
}

static int hash_bundle(const struct cf_bundle_entry *e, void *ctx)
{
    uint64_t *h = ctx;
    for (const char *p = e->id; *p; p++)
        *h = mix(*h, (uint8_t)*p);
    *h = mix(mix(*h, e->code_offset), e->code_size);
    return 0;
}

static int hash_ccob(const struct cf_ccob_info *c, void *ctx)
{
    uint64_t *h = ctx;
    *h = mix(mix(*h, c->bundle_offset), c->hash ^ c->total_size);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("fuzz", 0);
    if (fd < 0 || ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        return 0;
    cf_error err = CF_ERROR_INIT;
    struct cf_byte_source src;
    uint64_t hw = 0, hm = 0;
    size_t nw = 0, nm = 0, cw = 0, cm = 0;

    cf_src_init_fd(&src, fd, 0, size, 4096);
    int rw = cf_fatbin_walk_source(&src, "w", hash_fatbin, &hw, &nw, &err);
    cf_src_release(&src);
    cf_error_clear(&err);
    int rm = cf_fatbin_walk(data, size, "m", hash_fatbin, &hm, &nm, &err);
    cf_error_clear(&err);
    if (rw != rm || hw != hm || nw != nm)
        abort();

    hw = hm = 0;
    cf_src_init_fd(&src, fd, 0, size, 4096);
    rw = cf_bundle_walk_source(&src, "w", hash_bundle, hash_ccob, &hw, &nw, &cw, &err);
    cf_src_release(&src);
    cf_error_clear(&err);
    rm = cf_bundle_walk(data, size, "m", hash_bundle, hash_ccob, &hm, &nm, &cm, &err);
    cf_error_clear(&err);
    if (rw != rm || hw != hm || nw != nm || cw != cm)
        abort();
    return 0;
}
