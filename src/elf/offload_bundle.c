/* clang offload bundles (HIP fat binaries), read from bytes with no ROCm.
 *
 * Plain bundle (little-endian), as clang-offload-bundler writes it:
 *   "__CLANG_OFFLOAD_BUNDLE__" (24 bytes), u64 number of entries, then per
 *   entry: u64 offset (from the bundle start), u64 size, u64 ID length, ID
 *   bytes (no NUL), e.g. "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-".
 * Compressed bundle (LLVM 18+, OffloadBundler.cpp CompressedOffloadBundle):
 *   "CCOB", u16 version, u16 method (0 zlib, 1 zstd); v1: u32 uncompressed
 *   size, u64 hash; v2: u32 total size, u32 uncompressed size, u64 hash;
 *   v3: u64 total size, u64 uncompressed size, u64 hash; then the compressed
 *   plain bundle. Its entry IDs are inside the compressed data: only the first
 *   block(s), up to CF_CCOB_PREFIX_MAX bytes of output, are decompressed. */
#include "cclforge/gpucode.h"

#include <string.h>

#include "cclforge/strbuf.h"
#include "ccob_decompress.h"
#include "gpucode_walk.h"
#include "le_read.h"

enum {
    MAGIC_LEN = 24,
    CCOB_MAGIC_LEN = 4,
    ENTRY_FIXED = 24,   /* offset, size, ID length */
    MAX_ID_LEN = 1024,  /* real IDs are < 100 bytes; bounds memory on hostile input */
};

static const struct {
    unsigned version;
    size_t header_size;
} ccob_layouts[] = { { 1, 20 }, { 2, 24 }, { 3, 32 } };

const char *cf_ccob_method_name(unsigned method)
{
    static const char *const names[] = { "zlib", "zstd" };
    return method < sizeof(names) / sizeof(names[0]) ? names[method] : "unknown";
}

/* Is `piece` (the last '-' component of a bundle target) an offload arch? */
static int is_offload_arch(const char *piece, size_t len)
{
    static const char *const prefixes[] = { "gfx", "sm_" };
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t n = strlen(prefixes[i]);
        if (len > n && memcmp(piece, prefixes[i], n) == 0)
            return 1;
    }
    return 0;
}

/* Splits "<kind>-<triple>[-<target id>]" into three strings inside `parts`,
 * the way LLVM's OffloadTargetInfo does: the target ID is the last '-'
 * component (before any ':' features) when it names a GPU. */
static void split_bundle_id(const char *id, struct strbuf *parts, size_t *kind_at,
                            size_t *triple_at, size_t *target_at)
{
    const char *dash = strchr(id, '-');
    size_t kind_len = dash ? (size_t)(dash - id) : strlen(id);
    const char *target = dash ? dash + 1 : id + kind_len;
    const char *colon = strchr(target, ':');
    size_t head_len = colon ? (size_t)(colon - target) : strlen(target);
    size_t last = head_len;
    while (last > 0 && target[last - 1] != '-')
        last--;
    size_t triple_len = strlen(target), target_from = strlen(target);
    if (last > 0 && is_offload_arch(target + last, head_len - last)) {
        triple_len = last - 1;
        target_from = last;
    }
    cf_sb_reset(parts);
    *kind_at = 0;
    cf_sb_add(parts, id, kind_len);
    cf_sb_addc(parts, 0);
    *triple_at = parts->len;
    cf_sb_add(parts, target, triple_len);
    cf_sb_addc(parts, 0);
    *target_at = parts->len;
    cf_sb_adds(parts, target + target_from);
}

/* Parses the plain bundle at `start`; sets *end to the end of its last code object. */
static int walk_plain(struct cf_byte_source *src, size_t start, const char *name,
                      const struct cf_ccob_info *ccob, cf_bundle_visit_fn visit, void *ctx,
                      size_t *end, int *stopped, cf_error *err)
{
    size_t avail = src->len - start;
    /* A decompressed prefix holds the table; code objects lie beyond it. */
    uint64_t code_avail = ccob ? ccob->uncompressed_size : avail;
    if (avail < MAGIC_LEN + 8)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: offload bundle at offset %zu is truncated before its entry count",
                            name, start);
    const uint8_t *b = cf_src_get(src, start, MAGIC_LEN + 8);
    if (!b)
        return cf_src_read_error(src, name, start, err);
    uint64_t n = le64(b + MAGIC_LEN);
    if (n > (avail - MAGIC_LEN - 8) / ENTRY_FIXED)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: offload bundle at offset %zu claims %llu entries, more than its "
                            "%zu bytes can hold",
                            name, start, (unsigned long long)n, avail);
    size_t pos = MAGIC_LEN + 8;
    uint64_t max_end = pos;
    struct strbuf idbuf = STRBUF_INIT, parts = STRBUF_INIT;
    int rc = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *e = avail - pos >= ENTRY_FIXED ? cf_src_get(src, start + pos, ENTRY_FIXED) : NULL;
        if (!e) {
            rc = src->io_error ? cf_src_read_error(src, name, start + pos, err)
                               : cf_error_set(err, CF_ERR_FORMAT,
                                              "%s: offload bundle at offset %zu: entry %llu is "
                                              "truncated",
                                              name, start, (unsigned long long)i);
            break;
        }
        uint64_t off = le64(e), size = le64(e + 8), idlen = le64(e + 16);
        pos += ENTRY_FIXED;
        if (idlen > MAX_ID_LEN || idlen > avail - pos) {
            rc = cf_error_set(err, CF_ERR_FORMAT,
                              "%s: offload bundle at offset %zu: entry %llu has a bad ID length "
                              "%llu",
                              name, start, (unsigned long long)i, (unsigned long long)idlen);
            break;
        }
        if (off > code_avail || size > code_avail - off) {
            rc = cf_error_set(err, CF_ERR_FORMAT,
                              "%s: offload bundle at offset %zu: entry %llu's code object "
                              "(offset %llu, %llu bytes) lies past the end (truncated)",
                              name, start, (unsigned long long)i, (unsigned long long)off,
                              (unsigned long long)size);
            break;
        }
        const uint8_t *id = idlen ? cf_src_get(src, start + pos, (size_t)idlen) : (const uint8_t *)"";
        if (!id) {
            rc = cf_src_read_error(src, name, start + pos, err);
            break;
        }
        cf_sb_reset(&idbuf);
        cf_sb_add(&idbuf, id, (size_t)idlen);
        pos += (size_t)idlen;
        if (strlen(idbuf.buf) != idbuf.len) {
            rc = cf_error_set(err, CF_ERR_FORMAT,
                              "%s: offload bundle at offset %zu: entry %llu's ID contains a NUL",
                              name, start, (unsigned long long)i);
            break;
        }
        if (off + size > max_end)
            max_end = off + size;
        size_t kind_at, triple_at, target_at;
        split_bundle_id(idbuf.buf, &parts, &kind_at, &triple_at, &target_at);
        struct cf_bundle_entry be = {
            .id = idbuf.buf,
            .kind = parts.buf + kind_at,
            .triple = parts.buf + triple_at,
            .target_id = parts.buf + target_at,
            .bundle_offset = ccob ? ccob->bundle_offset : start,
            .code_offset = ccob ? off : start + off,
            .code_size = size,
            .compressed = ccob != NULL,
        };
        if (visit && visit(&be, ctx)) {
            *stopped = 1;
            break;
        }
    }
    cf_sb_release(&idbuf);
    cf_sb_release(&parts);
    if (max_end < pos)
        max_end = pos;
    *end = start + (size_t)max_end;
    return rc;
}

static int has_magic_at(struct cf_byte_source *src, size_t p, const char *magic, size_t n)
{
    const uint8_t *m = src->len - p >= n ? cf_src_get(src, p, n) : NULL;
    return m && memcmp(m, magic, n) == 0;
}

/* Finds the next bundle magic of either kind at an 8-aligned offset in [from, len). */
static size_t find_next_magic(struct cf_byte_source *src, size_t from)
{
    for (size_t p = (from + 7) & ~(size_t)7; p < src->len; p += 8) {
        if (has_magic_at(src, p, CF_CCOB_MAGIC, CCOB_MAGIC_LEN) ||
            has_magic_at(src, p, CF_BUNDLE_MAGIC, MAGIC_LEN))
            return p;
        if (src->io_error)
            break;
    }
    return src->len;
}

static int walk_ccob(struct cf_byte_source *src, size_t start, const char *name,
                     cf_bundle_visit_fn visit_entry, cf_ccob_visit_fn visit, void *ctx,
                     size_t *end, int *stopped, cf_error *err)
{
    size_t avail = src->len - start;
    if (avail < 8)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: compressed offload bundle at offset %zu is truncated", name, start);
    const uint8_t *b = cf_src_get(src, start, 8);
    if (!b)
        return cf_src_read_error(src, name, start, err);
    struct cf_ccob_info info = { .bundle_offset = start, .version = le16(b + 4),
                                 .method = le16(b + 6) };
    size_t hsize = 0;
    for (size_t i = 0; i < sizeof(ccob_layouts) / sizeof(ccob_layouts[0]); i++)
        if (ccob_layouts[i].version == info.version)
            hsize = ccob_layouts[i].header_size;
    if (!hsize)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: compressed offload bundle at offset %zu has unknown version %u",
                            name, start, info.version);
    if (avail < hsize)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: compressed offload bundle at offset %zu is truncated (header "
                            "needs %zu bytes, %zu remain)",
                            name, start, hsize, avail);
    b = cf_src_get(src, start, hsize);
    if (!b)
        return cf_src_read_error(src, name, start, err);
    switch (info.version) {
    case 1:
        info.uncompressed_size = le32(b + 8);
        info.hash = le64(b + 12);
        break;
    case 2:
        info.total_size = le32(b + 8);
        info.uncompressed_size = le32(b + 12);
        info.hash = le64(b + 16);
        break;
    default:
        info.total_size = le64(b + 8);
        info.uncompressed_size = le64(b + 16);
        info.hash = le64(b + 24);
        break;
    }
    if (info.version >= 2 && (info.total_size < hsize || info.total_size > avail))
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: compressed offload bundle at offset %zu claims %llu bytes but "
                            "%zu remain (truncated or corrupt)",
                            name, start, (unsigned long long)info.total_size, avail);
    /* v1 does not store its size: it ends where the next bundle starts. */
    *end = info.version >= 2 ? start + (size_t)info.total_size : find_next_magic(src, start + hsize);
    if (visit && visit(&info, ctx)) {
        *stopped = 1;
        return 0;
    }
    if (!visit_entry)
        return 0;
    /* The entry table is at the start of the compressed plain bundle:
     * decompress only that far. */
    struct strbuf prefix = STRBUF_INIT;
    int rc = cf_ccob_decompress_prefix(src, start + hsize, *end, info.method, CF_CCOB_PREFIX_MAX,
                                       &prefix, name, err);
    if (rc == 0) {
        struct cf_byte_source inner;
        cf_src_init_memory(&inner, (const uint8_t *)prefix.buf, prefix.len);
        size_t inner_end = 0;
        if (prefix.len < MAGIC_LEN || memcmp(prefix.buf, CF_BUNDLE_MAGIC, MAGIC_LEN) != 0)
            rc = cf_error_set(err, CF_ERR_FORMAT,
                              "%s: compressed offload bundle at offset %zu does not hold a "
                              "bundle (no __CLANG_OFFLOAD_BUNDLE__ after decompression)",
                              name, start);
        else
            rc = walk_plain(&inner, 0, name, &info, visit_entry, ctx, &inner_end, stopped, err);
    }
    cf_sb_release(&prefix);
    return rc;
}

int cf_bundle_walk_source(struct cf_byte_source *src, const char *name, cf_bundle_visit_fn visit,
                          cf_ccob_visit_fn visit_ccob, void *ctx, size_t *n_bundles,
                          size_t *n_compressed, cf_error *err)
{
    size_t plain = 0, compressed = 0, pos = 0, len = src->len;
    int stopped = 0, rc = 0;
    if (!name)
        name = "offload bundle";
    while (pos < len && !stopped) {
        /* HIP pads bundles in .hip_fatbin with zeros to their alignment. */
        pos = cf_src_skip_zeros(src, pos);
        if (src->io_error) {
            rc = cf_src_read_error(src, name, pos, err);
            break;
        }
        if (pos >= len)
            break;
        size_t end = len;
        if (has_magic_at(src, pos, CF_BUNDLE_MAGIC, MAGIC_LEN)) {
            rc = walk_plain(src, pos, name, NULL, visit, ctx, &end, &stopped, err);
            if (rc < 0)
                break;
            plain++;
        } else if (has_magic_at(src, pos, CF_CCOB_MAGIC, CCOB_MAGIC_LEN)) {
            rc = walk_ccob(src, pos, name, visit, visit_ccob, ctx, &end, &stopped, err);
            if (rc < 0)
                break;
            compressed++;
        } else {
            rc = src->io_error ? cf_src_read_error(src, name, pos, err)
                               : cf_error_set(err, CF_ERR_FORMAT,
                                              "%s: no offload bundle magic "
                                              "(__CLANG_OFFLOAD_BUNDLE__ or CCOB) at offset %zu",
                                              name, pos);
            break;
        }
        pos = end;
    }
    if (n_bundles)
        *n_bundles = plain + compressed;
    if (n_compressed)
        *n_compressed = compressed;
    return rc;
}

int cf_bundle_walk(const uint8_t *buf, size_t len, const char *name, cf_bundle_visit_fn visit,
                   cf_ccob_visit_fn visit_ccob, void *ctx, size_t *n_bundles,
                   size_t *n_compressed, cf_error *err)
{
    struct cf_byte_source src;
    cf_src_init_memory(&src, buf, len);
    return cf_bundle_walk_source(&src, name, visit, visit_ccob, ctx, n_bundles, n_compressed, err);
}
