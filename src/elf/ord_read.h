/* Loads from unaligned bytes in an ELF file's own byte order (big: EI_DATA
 * says big-endian), for the readers that take fields straight from a mapping
 * or a pread window. Callers check bounds before calling. One load, and a
 * byte swap only when the file's order is not the host's. */
#ifndef CCLFORGE_ORD_READ_H
#define CCLFORGE_ORD_READ_H

#include <stdint.h>
#include <string.h>

#define CF_HOST_BIG (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

static inline uint16_t ord16(const uint8_t *p, int big)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return big != CF_HOST_BIG ? __builtin_bswap16(v) : v;
}

static inline uint32_t ord32(const uint8_t *p, int big)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return big != CF_HOST_BIG ? __builtin_bswap32(v) : v;
}

static inline uint64_t ord64(const uint8_t *p, int big)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return big != CF_HOST_BIG ? __builtin_bswap64(v) : v;
}

/* A field of `bytes` bytes: 1, 2, 4 or 8, the widths ELF fields have.
 * Inlined: it runs for every field of every header of every object a
 * closure opens, and a call per field cost 5 % of `inspect`'s instructions. */
static inline __attribute__((always_inline)) uint64_t ord_u(const uint8_t *p, int bytes, int big)
{
    switch (bytes) {
    case 1: return p[0];
    case 2: return ord16(p, big);
    case 4: return ord32(p, big);
    default: return ord64(p, big);
    }
}

#endif
