/* libFuzzer target: clang offload bundles, plain and compressed (cf_bundle_walk). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cclforge/gpucode.h"
#include "fuzz_guard.h"

struct bounds {
    const uint8_t *data;
    size_t size;
    size_t ids;
};

static int check_entry(const struct cf_bundle_entry *e, void *ctx)
{
    struct bounds *b = ctx;
    b->ids += strlen(e->id) + strlen(e->kind) + strlen(e->triple) + strlen(e->target_id);
    /* Code objects of plain bundles must lie inside the buffer (those of
     * compressed bundles are offsets into the uncompressed bundle). */
    if (!e->compressed && e->code_size && b->data[e->code_offset + e->code_size - 1] == 0xFF)
        b->ids++;
    return 0;
}

static int check_ccob(const struct cf_ccob_info *info, void *ctx)
{
    struct bounds *b = ctx;
    b->ids += cf_ccob_method_name(info->method)[0] != 0;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
    struct fuzz_guarded g;
    if (fuzz_guard_copy(input, size, &g) != 0)
        return 0;
    const uint8_t *data = g.data;
    struct bounds b = { data, size, 0 };
    size_t n = 0, compressed = 0;
    cf_error err = CF_ERROR_INIT;
    cf_bundle_walk(data, size, "fuzz", check_entry, check_ccob, &b, &n, &compressed, &err);
    cf_error_clear(&err);
    struct cf_gpucode_inventory inv;
    if (cf_gpucode_inventory_buffer(data, size, "fuzz", &inv, &err) == 0)
        cf_gpucode_inventory_release(&inv);
    cf_error_clear(&err);
    fuzz_guard_release(&g);
    return 0;
}
