/* What one read of a file's data finds (NCCL/RCCL banners, the fatbin
 * containers met in read-only data, the GPU code inventory), remembered per
 * file: in memory for one run, and on disk under the cache root
 * (<root>/scan-v2/) across runs, so a 1 GB libtorch_cuda.so or cuBLASLt is
 * scanned once. An entry is keyed by the file's device, inode, size, mtime
 * and ctime in nanoseconds, so a file that is replaced, or rewritten in place
 * even with its size and mtime put back (ctime moves), is never served stale;
 * files changed in the last two seconds are not stored (a timestamp tick
 * could hide a second change). Writers are safe to race: each entry is a
 * temporary file (mkostemp, O_NOFOLLOW) in the entry's directory renamed
 * into place. The directory is kept under a size bound, oldest entries out. */
#ifndef CCLFORGE_SCANCACHE_H
#define CCLFORGE_SCANCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/commlib.h"
#include "cclforge/error.h"
#include "cclforge/fs.h"
#include "cclforge/gpucode.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_elf;

enum {
    CF_SCAN_BANNER = 1u << 0, /* banners and fatbin sites (one pass over read-only data) */
    CF_SCAN_GPU = 1u << 1,    /* the GPU code inventory (needs the sites) */
};

struct cf_scan_facts {
    unsigned have;                 /* CF_SCAN_* bits filled */
    struct cf_commlib_identity id; /* CF_SCAN_BANNER */
    struct cf_fatbin_sites sites;
    struct cf_gpucode_inventory gpu; /* CF_SCAN_GPU */
};
void cf_scan_facts_release(struct cf_scan_facts *f);

struct cf_scan_cache; /* opaque */

/* dir: where entries live; NULL: <cf_cache_root()>/scan-v2. persistent 0:
 * memory only (--no-cache). max_bytes: the directory's bound (0:
 * $CCLFORGE_SCAN_CACHE_MAX bytes, else 256 MB).
 * Never fails: a cache that cannot be created just stays in memory. */
struct cf_scan_cache *cf_scan_cache_new(const char *dir, int persistent, uint64_t max_bytes);
void cf_scan_cache_free(struct cf_scan_cache *c);

/* The facts `what` asks for about an opened file: from the cache when an
 * entry for this very file holds them, else scanned now (and remembered).
 * *hit says which (1 from memory or disk). The identity's library name is
 * set from this object's soname each time. -1 only when the file's bytes
 * are unreadable (a section outside the file); c may be NULL (no cache). */
int cf_scan_file(struct cf_scan_cache *c, struct cf_elf *elf, unsigned what, struct cf_scan_facts *out, int *hit,
                 cf_error *err);

/* Counters of one cache over its life (for --json and tests). */
struct cf_scan_cache_stats {
    size_t memory_hits, disk_hits, misses, stored, evicted;
};
void cf_scan_cache_stats(const struct cf_scan_cache *c, struct cf_scan_cache_stats *out);
/* The directory, or NULL when memory only. */
const char *cf_scan_cache_dir(const struct cf_scan_cache *c);

/* The entry format, exposed for the fuzz target and tests: encode appends
 * an entry for (id, facts) to out; decode parses one (untrusted bytes: every
 * count is checked against the bytes left), -1 with err when malformed or
 * for another key (want, NULL: any). */
void cf_scan_entry_encode(const struct cf_file_id *id, const struct cf_scan_facts *facts, struct strbuf *out);
int cf_scan_entry_decode(const uint8_t *data, size_t len, const struct cf_file_id *want, struct cf_scan_facts *out,
                         cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
