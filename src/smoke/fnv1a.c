/* The fingerprint each rank prints of the NCCL unique id it holds. */
#include "cclforge/smoke.h"

uint64_t cf_smoke_fnv1a(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
