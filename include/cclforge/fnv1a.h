/* FNV-1a (Fowler, Noll, Vo): the one hash of cache keys, hash-table slots and
 * the ids several hosts must derive alike. The constants are the published
 * ones, so a hash is the same on every host and in every version: cache keys
 * on disk and the derived rendezvous port depend on that. */
#ifndef CCLFORGE_FNV1A_H
#define CCLFORGE_FNV1A_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CF_FNV1A64_BASIS 0xcbf29ce484222325ull
#define CF_FNV1A32_BASIS 0x811c9dc5u

/* State h carried over len more bytes: start from CF_FNV1A64_BASIS (or a
 * seeded basis) and feed the pieces in order. */
uint64_t cf_fnv1a64_more(uint64_t h, const void *data, size_t len);
/* State h carried over the 8 bytes of v, least significant first: the same on
 * hosts of either byte order. */
uint64_t cf_fnv1a64_u64(uint64_t h, uint64_t v);
/* FNV-1a 64 of len bytes. */
uint64_t cf_fnv1a64(const void *data, size_t len);
/* FNV-1a 32 of a NUL-terminated string. */
uint32_t cf_fnv1a32_str(const char *s);

#ifdef __cplusplus
}
#endif
#endif
