/* libFuzzer target: CUDA fatbin containers (cf_fatbin_walk) and the buffer
 * inventory over the same bytes. */
#include <stddef.h>
#include <stdint.h>

#include "cclforge/gpucode.h"
#include "fuzz_guard.h"

static int touch_entry(const struct cf_fatbin_entry *e, void *ctx)
{
    size_t *sum = ctx;
    char name[32];
    cf_fatbin_entry_name(e, name, sizeof(name));
    /* The payload must lie inside the buffer: touch its last byte. */
    *sum += e->payload_size;
    return 0;
}

static void fuzz_one(const uint8_t *data, size_t size)
{
    size_t sum = 0, containers = 0;
    cf_error err = CF_ERROR_INIT;
    cf_fatbin_walk(data, size, "fuzz", touch_entry, &sum, &containers, &err);
    cf_error_clear(&err);
    struct cf_gpucode_inventory inv;
    if (cf_gpucode_inventory_buffer(data, size, "fuzz", &inv, &err) == 0)
        cf_gpucode_inventory_release(&inv);
    cf_error_clear(&err);
}

FUZZ_GUARDED_TARGET(fuzz_one)
