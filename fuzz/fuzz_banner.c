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

static void fuzz_one(const uint8_t *data, size_t size)
{
    size_t sum = 0;
    cf_banner_scan(data, size, 0, check_banner, &sum);
    struct cf_commlib_banner b;
    cf_banner_parse((const char *)data, size, &b);
}

FUZZ_GUARDED_TARGET(fuzz_one)
