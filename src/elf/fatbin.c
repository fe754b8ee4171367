/* CUDA fatbin containers, read from bytes with no CUDA toolkit.
 *
 * Container header (16 bytes, little-endian):
 *   u32 magic 0xBA55ED50, u16 version (1), u16 header size (16), u64 size of
 *   the entries that follow.
 * Entry header (64 bytes, longer in CUDA 12.8+: 80 for PTX, 112 for sm_100+):
 *   0 u16 kind (1 PTX, 2 cubin, 8 LTO-IR)   2 u16 (0x0101)
 *   4 u32 entry header size                 8 u64 payload size (padded to 8)
 *  16 u32 compressed size                  20 u32 (0 or 0x40)
 *  24 u16 version major                    26 u16 version minor
 *  28 u32 arch (75, 90, 120)               32 u32 name offset, 36 u32 name length
 *  40 u64 flags (see gpucode.h)            48 u64 reserved
 *  56 u64 uncompressed size
 * The next entry starts at entry + header size + payload size. Details and how
 * they were established: docs/gpucode.md. */
#include "cclforge/gpucode.h"

#include <stdio.h>
#include <string.h>

#include "gpucode_walk.h"
#include "le_read.h"

enum {
    CONTAINER_HEADER_MIN = 16,
    ENTRY_HEADER_MIN = 64,
};

static enum cf_fatbin_kind kind_from_raw(unsigned raw)
{
    static const unsigned known[] = { CF_FATBIN_PTX, CF_FATBIN_SASS, CF_FATBIN_LTOIR };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (known[i] == raw)
            return (enum cf_fatbin_kind)raw;
    return CF_FATBIN_OTHER;
}

static char variant_from_flags(uint64_t flags)
{
    if (flags & CF_FATBIN_FLAG_ARCH_SPECIFIC)
        return 'a';
    if (flags & CF_FATBIN_FLAG_FAMILY)
        return 'f';
    return 0;
}

/* Parses the entries of one container whose header is at `start`. */
static int walk_container(struct cf_byte_source *src, size_t start, const char *name,
                          cf_fatbin_visit_fn visit, void *ctx, size_t *next, int *stopped,
                          cf_error *err)
{
    size_t len = src->len;
    const uint8_t *c = cf_src_get(src, start, CONTAINER_HEADER_MIN);
    if (!c)
        return cf_src_read_error(src, name, start, err);
    unsigned version = le16(c + 4);
    unsigned hsize = le16(c + 6);
    uint64_t fat_size = le64(c + 8);
    if (version != 1)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: fatbin container at offset %zu has version %u (only 1 is known)",
                            name, start, version);
    if (hsize < CONTAINER_HEADER_MIN || hsize > len - start)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: fatbin container at offset %zu has a bad header size %u", name,
                            start, hsize);
    size_t body = start + hsize;
    if (fat_size > len - body)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: fatbin container at offset %zu claims %llu bytes but only %zu "
                            "remain (truncated)",
                            name, start, (unsigned long long)fat_size, len - body);
    size_t end = body + (size_t)fat_size;
    size_t pos = body;
    while (pos < end) {
        if (end - pos < ENTRY_HEADER_MIN)
            return cf_error_set(err, CF_ERR_FORMAT,
                                "%s: fatbin entry at offset %zu is truncated (%zu bytes left, "
                                "a header needs %d)",
                                name, pos, end - pos, ENTRY_HEADER_MIN);
        const uint8_t *h = cf_src_get(src, pos, ENTRY_HEADER_MIN);
        if (!h)
            return cf_src_read_error(src, name, pos, err);
        uint32_t ehsize = le32(h + 4);
        uint64_t payload = le64(h + 8);
        if (ehsize < ENTRY_HEADER_MIN || ehsize > end - pos)
            return cf_error_set(err, CF_ERR_FORMAT,
                                "%s: fatbin entry at offset %zu has a bad header size %u", name,
                                pos, ehsize);
        if (payload > end - pos - ehsize)
            return cf_error_set(err, CF_ERR_FORMAT,
                                "%s: fatbin entry at offset %zu claims a %llu-byte payload past "
                                "its container's end",
                                name, pos, (unsigned long long)payload);
        struct cf_fatbin_entry e;
        memset(&e, 0, sizeof(e));
        e.raw_kind = le16(h);
        e.kind = kind_from_raw(e.raw_kind);
        e.version_major = le16(h + 24);
        e.version_minor = le16(h + 26);
        e.arch = le32(h + 28);
        e.flags = le64(h + 40);
        e.variant = variant_from_flags(e.flags);
        e.compressed =
            (e.flags & (CF_FATBIN_FLAG_COMPRESSED | CF_FATBIN_FLAG_COMPRESSED_OLD)) != 0;
        e.uncompressed_size = e.compressed ? le64(h + 56) : 0;
        e.container_offset = start;
        e.header_offset = pos;
        e.payload_offset = pos + ehsize;
        e.payload_size = payload;
        if (visit && visit(&e, ctx)) {
            *stopped = 1;
            break;
        }
        pos += ehsize + (size_t)payload;
    }
    *next = end;
    return 0;
}

int cf_fatbin_walk_source(struct cf_byte_source *src, const char *name, cf_fatbin_visit_fn visit,
                          void *ctx, size_t *n_containers, cf_error *err)
{
    size_t count = 0;
    size_t pos = 0;
    size_t len = src->len;
    int stopped = 0;
    if (!name)
        name = "fatbin";
    if (n_containers)
        *n_containers = 0;
    while (pos < len && !stopped) {
        /* Containers are laid back to back; the linker may pad with zeros. */
        pos = cf_src_skip_zeros(src, pos);
        if (src->io_error) {
            cf_src_read_error(src, name, pos, err);
            goto fail;
        }
        if (pos >= len)
            break;
        const uint8_t *m = cf_src_get(src, pos, 4);
        if (len - pos < CONTAINER_HEADER_MIN || !m || le32(m) != CF_FATBIN_MAGIC) {
            if (!m && src->io_error)
                cf_src_read_error(src, name, pos, err);
            else
                cf_error_set(err, CF_ERR_FORMAT,
                             len - pos < CONTAINER_HEADER_MIN
                                 ? "%s: truncated fatbin container header at offset %zu"
                                 : "%s: no fatbin magic (0xBA55ED50) at offset %zu",
                             name, pos);
            goto fail;
        }
        size_t next = pos;
        if (walk_container(src, pos, name, visit, ctx, &next, &stopped, err) < 0)
            goto fail;
        count++;
        pos = next;
    }
    if (n_containers)
        *n_containers = count;
    return 0;
fail:
    if (n_containers)
        *n_containers = count;
    return -1;
}

int cf_fatbin_walk(const uint8_t *buf, size_t len, const char *name, cf_fatbin_visit_fn visit,
                   void *ctx, size_t *n_containers, cf_error *err)
{
    struct cf_byte_source src;
    cf_src_init_memory(&src, buf, len);
    return cf_fatbin_walk_source(&src, name, visit, ctx, n_containers, err);
}

void cf_fatbin_entry_name(const struct cf_fatbin_entry *entry, char *buf, size_t size)
{
    if (entry->kind == CF_FATBIN_OTHER) {
        snprintf(buf, size, "kind%u_%u", entry->raw_kind, entry->arch);
        return;
    }
    struct cf_arch a;
    cf_fatbin_entry_arch(entry, &a);
    snprintf(buf, size, "%s", a.name);
}

void cf_fatbin_entry_arch(const struct cf_fatbin_entry *entry, struct cf_arch *out)
{
    enum cf_arch_code code = entry->kind == CF_FATBIN_PTX     ? CF_CODE_PTX
                             : entry->kind == CF_FATBIN_LTOIR ? CF_CODE_LTOIR
                                                              : CF_CODE_SASS;
    cf_arch_nvidia(entry->arch, entry->variant, code, out);
}
