/* Little-endian loads from unaligned bytes, for the GPU container parsers
 * (fatbins and offload bundles are little-endian on every host). Callers check
 * bounds before calling. */
#ifndef CCLFORGE_LE_READ_H
#define CCLFORGE_LE_READ_H

#include <stdint.h>

static inline uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

#endif
