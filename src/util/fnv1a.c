#include "cclforge/fnv1a.h"

enum { FNV1A32_PRIME = 0x01000193u };
#define FNV1A64_PRIME 0x100000001b3ull

uint64_t cf_fnv1a64_more(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * FNV1A64_PRIME;
    return h;
}

uint64_t cf_fnv1a64_u64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * FNV1A64_PRIME;
    return h;
}

uint64_t cf_fnv1a64(const void *data, size_t len)
{
    return cf_fnv1a64_more(CF_FNV1A64_BASIS, data, len);
}

uint32_t cf_fnv1a32_str(const char *s)
{
    uint32_t h = CF_FNV1A32_BASIS;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * FNV1A32_PRIME;
    return h;
}
