/* libFuzzer target: NCCL/RCCL banner scanning and parsing over arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "fuzz_guard.h"

static int check_banner(const struct cf_commlib_banner *b, void *ctx)
{
    size_t *sum = ctx;
    *sum += strlen(b->text) + strlen(b->suffix) + strlen(b->toolkit) + b->version_code;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
    struct fuzz_guarded g;
    if (fuzz_guard_copy(input, size, &g) != 0)
        return 0;
    const uint8_t *data = g.data;
    size_t sum = 0;
    cf_banner_scan(data, size, 0, check_banner, &sum);
    struct cf_commlib_banner b;
    cf_banner_parse((const char *)data, size, &b);
    fuzz_guard_release(&g);
    return 0;
}
