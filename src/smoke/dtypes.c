/* Element types: sizes, exact ranges, loading and storing any of them as a double. */
#include <string.h>

#include "cclforge/smoke.h"
#include "cclforge/smoke_half.h"

#define P2(e) ((int64_t)1 << (e))

/* exact_limit: the largest integer every value up to which the type holds exactly
 * (and, for 64-bit integers, that a double holds too: results are compared as doubles);
 * unsigned types stop one short of all-ones, the sentinel's bit pattern. max_pow2:
 * the largest power of two it holds. Indexed by ncclDataType_t. */
static const struct cf_smoke_dtype_info dtype_table[CF_DT_COUNT] = {
    { CF_DT_INT8, "int8", "char", 1, 0, 127, 6 },
    { CF_DT_UINT8, "uint8", "uchar", 1, 0, 254, 7 },
    { CF_DT_INT32, "int32", "int", 4, 0, P2(31) - 1, 30 },
    { CF_DT_UINT32, "uint32", "uint", 4, 0, P2(32) - 2, 31 },
    { CF_DT_INT64, "int64", "long", 8, 0, P2(53), 62 },
    { CF_DT_UINT64, "uint64", "ulong", 8, 0, P2(53), 63 },
    { CF_DT_FLOAT16, "half", "fp16", 2, 1, 2048, 15 },
    { CF_DT_FLOAT32, "float", "fp32", 4, 1, P2(24), 127 },
    { CF_DT_FLOAT64, "double", "fp64", 8, 1, P2(53), 1023 },
    { CF_DT_BFLOAT16, "bfloat16", "bf16", 2, 1, 256, 127 },
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

#define LOAD(T)                                                                                                   \
    {                                                                                                             \
        T v;                                                                                                      \
        memcpy(&v, p, sizeof v);                                                                                  \
        return (double)v;                                                                                         \
    }
#define STORE(T)                                                                                                  \
    {                                                                                                             \
        T x = (T)v;                                                                                               \
        memcpy(p, &x, sizeof x);                                                                                  \
        return;                                                                                                   \
    }

double cf_smoke_load(enum cf_smoke_dtype dt, const void *buf, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf + i * dtype_table[dt].size;
    uint16_t h;
    switch (dt) {
    case CF_DT_INT8: LOAD(int8_t)
    case CF_DT_UINT8: LOAD(uint8_t)
    case CF_DT_INT32: LOAD(int32_t)
    case CF_DT_UINT32: LOAD(uint32_t)
    case CF_DT_INT64: LOAD(int64_t)
    case CF_DT_UINT64: LOAD(uint64_t)
    case CF_DT_FLOAT32: LOAD(float)
    case CF_DT_FLOAT64: LOAD(double)
    case CF_DT_FLOAT16: memcpy(&h, p, 2); return cf_f16_to_f32(h);
    case CF_DT_BFLOAT16: memcpy(&h, p, 2); return cf_bf16_to_f32(h);
    default: return 0;
    }
}

void cf_smoke_store(enum cf_smoke_dtype dt, void *buf, size_t i, double v)
{
    unsigned char *p = (unsigned char *)buf + i * dtype_table[dt].size;
    uint16_t h;
    switch (dt) {
    case CF_DT_INT8: STORE(int8_t)
    case CF_DT_UINT8: STORE(uint8_t)
    case CF_DT_INT32: STORE(int32_t)
    case CF_DT_UINT32: STORE(uint32_t)
    case CF_DT_INT64: STORE(int64_t)
    case CF_DT_UINT64: STORE(uint64_t)
    case CF_DT_FLOAT32: STORE(float)
    case CF_DT_FLOAT64: STORE(double)
    case CF_DT_FLOAT16: h = cf_f32_to_f16((float)v); memcpy(p, &h, 2); return;
    case CF_DT_BFLOAT16: h = cf_f32_to_bf16((float)v); memcpy(p, &h, 2); return;
    default: return;
    }
}
