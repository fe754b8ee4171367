/* Element types: sizes, NCCL's enum values, exact integer ranges, predictable inputs. */
#include <string.h>

#include "cclforge/smoke.h"
#include "cclforge/smoke_half.h"

/* ncclDataType_t: ncclInt32 = 2, ncclInt64 = 4, ncclFloat16 = 6, ncclFloat32 = 7,
 * ncclFloat64 = 8, ncclBfloat16 = 9 (nccl.h, stable since NCCL 2.10; RCCL the same). */
static const struct cf_smoke_dtype_info dtype_table[CF_DT_COUNT] = {
    { CF_DT_INT32, "int32", "int", 4, 2, INT32_MAX },
    { CF_DT_INT64, "int64", "long", 8, 4, INT64_MAX / 2 },
    { CF_DT_FLOAT16, "half", "fp16", 2, 6, 2048 },
    { CF_DT_BFLOAT16, "bfloat16", "bf16", 2, 9, 256 },
    { CF_DT_FLOAT32, "float", "fp32", 4, 7, 1 << 24 },
    { CF_DT_FLOAT64, "double", "fp64", 8, 8, (int64_t)1 << 53 },
};

const struct cf_smoke_dtype_info *cf_smoke_dtype_info(enum cf_smoke_dtype dt)
{
    return (unsigned)dt < CF_DT_COUNT ? &dtype_table[dt] : NULL;
}

int cf_smoke_dtype_parse(const char *name, enum cf_smoke_dtype *out)
{
    for (int i = 0; i < CF_DT_COUNT; i++)
        if (!strcmp(name, dtype_table[i].name) || !strcmp(name, dtype_table[i].alias)) {
            *out = dtype_table[i].dtype;
            return 0;
        }
    return -1;
}

double cf_smoke_load(enum cf_smoke_dtype dt, const void *buf, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf + i * dtype_table[dt].size;
    switch (dt) {
    case CF_DT_INT32: { int32_t v; memcpy(&v, p, sizeof v); return v; }
    case CF_DT_INT64: { int64_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case CF_DT_FLOAT16: { uint16_t v; memcpy(&v, p, sizeof v); return cf_f16_to_f32(v); }
    case CF_DT_BFLOAT16: { uint16_t v; memcpy(&v, p, sizeof v); return cf_bf16_to_f32(v); }
    case CF_DT_FLOAT32: { float v; memcpy(&v, p, sizeof v); return v; }
    case CF_DT_FLOAT64: { double v; memcpy(&v, p, sizeof v); return v; }
    default: return 0;
    }
}

void cf_smoke_store(enum cf_smoke_dtype dt, void *buf, size_t i, double v)
{
    unsigned char *p = (unsigned char *)buf + i * dtype_table[dt].size;
    switch (dt) {
    case CF_DT_INT32: { int32_t x = (int32_t)v; memcpy(p, &x, sizeof x); break; }
    case CF_DT_INT64: { int64_t x = (int64_t)v; memcpy(p, &x, sizeof x); break; }
    case CF_DT_FLOAT16: { uint16_t x = cf_f32_to_f16((float)v); memcpy(p, &x, sizeof x); break; }
    case CF_DT_BFLOAT16: { uint16_t x = cf_f32_to_bf16((float)v); memcpy(p, &x, sizeof x); break; }
    case CF_DT_FLOAT32: { float x = (float)v; memcpy(p, &x, sizeof x); break; }
    case CF_DT_FLOAT64: memcpy(p, &v, sizeof v); break;
    default: break;
    }
}

int64_t cf_smoke_pattern(enum cf_smoke_dtype dt, int nranks, int rank, size_t i, uint32_t seed)
{
    /* Values stay below exact_limit / nranks, so every partial sum a reduction forms
     * (in any order, in any tree) is an exactly representable integer. */
    int64_t limit = dtype_table[dt].exact_limit / (nranks > 0 ? nranks : 1);
    int64_t m = limit < 1021 ? limit : 1021; /* a prime: ranks and indices do not alias */
    if (m < 1)
        m = 1;
    uint64_t x = (uint64_t)rank * 131u + (uint64_t)i * 7u + seed;
    return (int64_t)(x % (uint64_t)m);
}
