/* Loads from unaligned bytes in an ELF file's own byte order (big: EI_DATA
 * says big-endian), for the readers that take fields straight from a mapping
 * or a pread window. Callers check bounds before calling. */
#ifndef CCLFORGE_ORD_READ_H
#define CCLFORGE_ORD_READ_H

#include <stdint.h>

static inline uint16_t ord16(const uint8_t *p, int big)
{
    return big ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static inline uint32_t ord32(const uint8_t *p, int big)
{
    return big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
               : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline uint64_t ord64(const uint8_t *p, int big)
{
    uint64_t a = ord32(p, big), b = ord32(p + 4, big);
    return big ? a << 32 | b : b << 32 | a;
}

/* A field of `bytes` (1 to 8) bytes. */
static inline uint64_t ord_u(const uint8_t *p, int bytes, int big)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = big ? v << 8 | p[i] : v | (uint64_t)p[i] << (8 * i);
    return v;
}

#endif
