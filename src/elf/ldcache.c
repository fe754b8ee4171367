/* The ld.so.cache reader and glibc's lookup over it. Layouts and the lookup
 * algorithm follow glibc 2.36: sysdeps/generic/dl-cache.h (formats, extension
 * directory) and elf/dl-cache.c (_dl_load_cache_lookup, search_cache,
 * _dl_cache_libcmp). Unlike glibc, which only checks offsets it happens to touch,
 * we validate every entry when parsing, so a corrupt cache is an error up front. */
#include "cclforge/ldcache.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_HEADER_SIZE 16u  /* char magic[11]; pad; unsigned nlibs */
#define OLD_ENTRY_SIZE 12u   /* int32 flags; uint32 key, value */
#define NEW_HEADER_SIZE 48u  /* struct cache_file_new */
#define NEW_ENTRY_SIZE 24u   /* struct file_entry_new */
#define EXTENSION_MAGIC 0xeaa42174u /* (uint32_t) -358342284 */
#define EXT_TAG_GENERATOR 0u
#define EXT_TAG_GLIBC_HWCAPS 1u
#define ISA_LEVEL_MASK 0x3ffu
#define MAX_CACHE_BYTES (256u << 20)

struct cf_ldcache {
    const uint8_t *bytes; /* what is parsed: map.data, or copy */
    size_t len;
    struct cf_mmap map;   /* the file's mapping (map.data NULL for an image in memory) */
    uint8_t *copy;        /* the caller's image, copied (NULL for a file) */
    char *name;
    enum cf_ldcache_format format;
    struct cf_ldcache_entry *entries; /* NULL in a lookup-only cache: decoded on demand */
    size_t n_entries;
    char *generator;
    /* Lookup-only (cf_ldcache_open_lookup): where the new table lies. */
    int lazy;
    size_t new_base;
    int big_endian;
    size_t hwcaps_off, n_hwcaps;
};

/* Bounds-checked readers over the image in the cache's byte order. */
struct reader {
    const uint8_t *p;
    size_t len;
    int big_endian;
};

static inline int rd32(const struct reader *r, size_t off, uint32_t *v)
{
    if (off > r->len || r->len - off < 4)
        return -1;
    const uint8_t *b = r->p + off;
    *v = r->big_endian ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
                       : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
    return 0;
}

static inline int rd64(const struct reader *r, size_t off, uint64_t *v)
{
    uint32_t a, b;
    if (rd32(r, off, &a) != 0 || rd32(r, off + 4, &b) != 0)
        return -1;
    *v = r->big_endian ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    return 0;
}

/* A NUL-terminated string at base+off inside the image, or NULL. */
static inline const char *string_at(const struct reader *r, size_t base, uint64_t off)
{
    if (base > r->len || off >= r->len - base)
        return NULL;
    const char *s = (const char *)r->p + base + off;
    /* The cache ends with its string table: when its last byte is NUL every
     * string is terminated inside the image, and no search is needed. */
    if (r->p[r->len - 1] != '\0' && !memchr(s, '\0', r->len - base - off))
        return NULL;
    return s;
}

static int corrupt(struct cf_ldcache *c, cf_error *err, const char *what)
{
    return cf_error_set(err, CF_ERR_FORMAT,
                        "%s: corrupt ld.so.cache: %s (regenerate it with `ldconfig`)", c->name, what);
}

/* The extension directory (glibc's cache_extension_load): generator string and
 * the glibc-hwcaps name table. An unusable directory is ignored, as glibc does. */
struct extensions {
    size_t hwcaps_off; /* file offset of the uint32 index array */
    size_t n_hwcaps;
};

static void load_extensions(struct cf_ldcache *c, const struct reader *r, size_t new_base,
                            struct extensions *ext)
{
    memset(ext, 0, sizeof *ext);
    uint32_t ext_off, magic, count;
    if (rd32(r, new_base + 32, &ext_off) != 0 || ext_off == 0 || ext_off % 4 != 0)
        return;
    if (rd32(r, ext_off, &magic) != 0 || magic != EXTENSION_MAGIC || rd32(r, ext_off + 4, &count) != 0)
        return;
    if ((uint64_t)ext_off + 8 + (uint64_t)count * 16 > r->len)
        return;
    for (uint32_t i = 0; i < count; i++) {
        size_t at = ext_off + 8 + (size_t)i * 16;
        uint32_t tag, offset, size;
        if (rd32(r, at, &tag) || rd32(r, at + 8, &offset) || rd32(r, at + 12, &size))
            return;
        if ((uint64_t)offset + size > r->len)
            return; /* glibc drops the whole directory */
        if (tag == EXT_TAG_GENERATOR && !c->generator)
            c->generator = cf_strndup((const char *)r->p + offset, strnlen((const char *)r->p + offset, size));
        else if (tag == EXT_TAG_GLIBC_HWCAPS) {
            if (size == 0 || offset % 4 != 0 || size % 4 != 0)
                continue; /* cache_extension_verify */
            ext->hwcaps_off = offset;
            ext->n_hwcaps = size / 4;
        }
    }
}

/* Entry i of the new table at `base`: -1 when a string lies outside the image. */
static int decode_new_entry(const struct reader *r, size_t base, size_t hwcaps_off, size_t n_hwcaps, uint32_t i,
                            struct cf_ldcache_entry *e)
{
    size_t at = base + NEW_HEADER_SIZE + (size_t)i * NEW_ENTRY_SIZE;
    uint32_t flags = 0, key = 0, value = 0;
    memset(e, 0, sizeof *e);
    rd32(r, at, &flags);
    rd32(r, at + 4, &key);
    rd32(r, at + 8, &value);
    rd32(r, at + 12, &e->osversion);
    rd64(r, at + 16, &e->hwcap);
    e->flags = (int32_t)flags;
    /* String offsets of the new table count from its header. */
    e->key = string_at(r, base, key);
    e->value = string_at(r, base, value);
    if (!e->key || !e->value)
        return -1;
    if (((e->hwcap >> 32) & ~(uint64_t)ISA_LEVEL_MASK) == (CF_LDCACHE_HWCAP_EXTENSION >> 32)) {
        e->isa_level = (unsigned)((e->hwcap >> 32) & ISA_LEVEL_MASK);
        uint32_t idx = (uint32_t)e->hwcap, str;
        /* The hwcaps name offsets count from the start of the file. */
        if (idx < n_hwcaps && rd32(r, hwcaps_off + (size_t)idx * 4, &str) == 0)
            e->hwcaps_subdir = string_at(r, 0, str);
    }
    return 0;
}

static int parse_new_table(struct cf_ldcache *c, const struct reader *r, size_t base, cf_error *err)
{
    uint32_t nlibs;
    if (rd32(r, base + 20, &nlibs) != 0)
        return corrupt(c, err, "truncated header");
    if ((r->len - base - NEW_HEADER_SIZE) / NEW_ENTRY_SIZE < nlibs)
        return corrupt(c, err, "more entries than the file holds");
    struct extensions ext;
    load_extensions(c, r, base, &ext);
    c->n_entries = nlibs;
    c->new_base = base;
    c->big_endian = r->big_endian;
    c->hwcaps_off = ext.hwcaps_off;
    c->n_hwcaps = ext.n_hwcaps;
    if (c->lazy)
        return 0; /* entries are decoded, and checked, as a lookup meets them (glibc's way) */
    c->entries = cf_xcalloc(nlibs ? nlibs : 1, sizeof *c->entries);
    for (uint32_t i = 0; i < nlibs; i++) {
        if (decode_new_entry(r, base, ext.hwcaps_off, ext.n_hwcaps, i, &c->entries[i]) != 0) {
            char what[96];
            snprintf(what, sizeof what, "entry %u points outside the string table", i);
            return corrupt(c, err, what);
        }
    }
    return 0;
}

static int parse_old_table(struct cf_ldcache *c, const struct reader *r, uint32_t nlibs, cf_error *err)
{
    size_t strings = OLD_HEADER_SIZE + (size_t)nlibs * OLD_ENTRY_SIZE;
    c->entries = cf_xcalloc(nlibs ? nlibs : 1, sizeof *c->entries);
    c->n_entries = nlibs;
    for (uint32_t i = 0; i < nlibs; i++) {
        size_t at = OLD_HEADER_SIZE + (size_t)i * OLD_ENTRY_SIZE;
        uint32_t flags = 0, key = 0, value = 0;
        rd32(r, at, &flags);
        rd32(r, at + 4, &key);
        rd32(r, at + 8, &value);
        struct cf_ldcache_entry *e = &c->entries[i];
        e->flags = (int32_t)flags;
        e->key = string_at(r, strings, key);
        e->value = string_at(r, strings, value);
        if (!e->key || !e->value) {
            char what[96];
            snprintf(what, sizeof what, "entry %u points outside the string table", i);
            return corrupt(c, err, what);
        }
    }
    return 0;
}

/* glibc's cache_file_new_matches_endian, generalised: we read either byte order. */
static int new_table_byte_order(struct cf_ldcache *c, const uint8_t *hdr, int *big, cf_error *err)
{
    switch (hdr[28] & 3) {
    case 0: *big = 0; return 0; /* written before the flag existed: assume little */
    case 2: *big = 0; return 0;
    case 3: *big = 1; return 0;
    default: return corrupt(c, err, "header marks the cache invalid");
    }
}

/* Parses c->bytes (set by the caller, with what owns them). */
static int parse_into(struct cf_ldcache *c, cf_error *err)
{
    size_t len = c->len;
    struct reader r = { c->bytes, len, 0 };
    int rc;
    if (len > NEW_HEADER_SIZE && memcmp(c->bytes, NEW_MAGIC, strlen(NEW_MAGIC)) == 0) {
        c->format = CF_LDCACHE_NEW;
        rc = new_table_byte_order(c, c->bytes, &r.big_endian, err);
        if (rc == 0)
            rc = parse_new_table(c, &r, 0, err);
    } else if (len > OLD_HEADER_SIZE && memcmp(c->bytes, OLD_MAGIC, strlen(OLD_MAGIC)) == 0) {
        uint32_t nlibs;
        rd32(&r, 12, &nlibs);
        if ((len - OLD_HEADER_SIZE) / OLD_ENTRY_SIZE < nlibs) {
            rc = corrupt(c, err, "more entries than the file holds");
        } else {
            /* The new table, if any, starts 8-byte aligned after the old entries. */
            size_t off = (OLD_HEADER_SIZE + (size_t)nlibs * OLD_ENTRY_SIZE + 7) & ~(size_t)7;
            if (len >= off + NEW_HEADER_SIZE && memcmp(c->bytes + off, NEW_MAGIC, strlen(NEW_MAGIC)) == 0) {
                c->format = CF_LDCACHE_OLD_WITH_NEW;
                rc = new_table_byte_order(c, c->bytes + off, &r.big_endian, err);
                if (rc == 0)
                    rc = parse_new_table(c, &r, off, err);
            } else {
                c->format = CF_LDCACHE_OLD;
                c->lazy = 0; /* the old format alone is read whole */
                rc = parse_old_table(c, &r, nlibs, err);
            }
        }
    } else {
        rc = cf_error_set(err, CF_ERR_FORMAT,
                          "%s: not an ld.so.cache (no \"%s\" or \"%s\" magic); regenerate it with `ldconfig`",
                          c->name, NEW_MAGIC, OLD_MAGIC);
    }
    if (rc == 0)
        rc = cf_ldcache_check_intact(c, err);
    return rc;
}

static struct cf_ldcache *cache_new(const char *name, int lazy)
{
    struct cf_ldcache *c = cf_xcalloc(1, sizeof *c);
    c->name = cf_strdup(name ? name : "ld.so.cache");
    c->lazy = lazy;
    return c;
}

static int finish(struct cf_ldcache *c, struct cf_ldcache **out, cf_error *err)
{
    if (parse_into(c, err) != 0) {
        cf_ldcache_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

/* An image in memory is copied: the cache outlives the caller's buffer. */
static int parse_copy(const void *data, size_t len, const char *name, int lazy, struct cf_ldcache **out,
                      cf_error *err)
{
    *out = NULL;
    struct cf_ldcache *c = cache_new(name, lazy);
    c->copy = cf_xmalloc(len ? len : 1);
    if (len)
        memcpy(c->copy, data, len);
    c->bytes = c->copy;
    c->len = len;
    return finish(c, out, err);
}

int cf_ldcache_parse(const void *data, size_t len, const char *name, struct cf_ldcache **out,
                     cf_error *err)
{
    return parse_copy(data, len, name, 0, out, err);
}

int cf_ldcache_parse_lookup(const void *data, size_t len, const char *name, struct cf_ldcache **out,
                            cf_error *err)
{
    return parse_copy(data, len, name, 1, out, err);
}

/* A file is mapped rather than read: a read copies ~50 KB into fresh heap
 * pages in every process, a dozen page faults. */
static int open_cache(const char *path, int lazy, struct cf_ldcache **out, cf_error *err)
{
    *out = NULL;
    if (!cf_path_exists(path))
        return cf_error_set(err, CF_ERR_NOTFOUND, "%s: no ld.so.cache (run `ldconfig` to create it)", path);
    struct cf_mmap map;
    if (cf_mmap_file(path, &map, err) != 0)
        return -1;
    if (map.len > MAX_CACHE_BYTES) {
        cf_munmap(&map);
        return cf_error_set(err, CF_ERR_FORMAT, "%s: larger than %u MB, not an ld.so.cache; regenerate it with `ldconfig`",
                            path, MAX_CACHE_BYTES >> 20);
    }
    struct cf_ldcache *c = cache_new(path, lazy);
    c->map = map;
    c->bytes = map.data;
    c->len = map.len;
    return finish(c, out, err);
}

int cf_ldcache_open(const char *path, struct cf_ldcache **out, cf_error *err)
{
    return open_cache(path, 0, out, err);
}

int cf_ldcache_open_lookup(const char *path, struct cf_ldcache **out, cf_error *err)
{
    return open_cache(path, 1, out, err);
}

void cf_ldcache_free(struct cf_ldcache *cache)
{
    if (!cache)
        return;
    if (cache->map.data)
        cf_munmap(&cache->map);
    free(cache->copy);
    free(cache->name);
    free(cache->entries);
    free(cache->generator);
    free(cache);
}

enum cf_ldcache_format cf_ldcache_get_format(const struct cf_ldcache *cache) { return cache->format; }
size_t cf_ldcache_count(const struct cf_ldcache *cache) { return cache->n_entries; }
const char *cf_ldcache_generator(const struct cf_ldcache *cache) { return cache->generator; }

int cf_ldcache_check_intact(const struct cf_ldcache *cache, cf_error *err)
{
    return cf_mmap_check_intact(&cache->map, cache->name,
                                "its entries are not reliable; regenerate it with `ldconfig` and run again", err);
}

/* The entry a lookup looks at: from the table, or decoded now (lookup-only
 * cache) into *tmp; NULL when it points outside the image. */
static const struct cf_ldcache_entry *entry_for_lookup(const struct cf_ldcache *c, size_t i,
                                                       struct cf_ldcache_entry *tmp)
{
    if (c->entries)
        return &c->entries[i];
    struct reader r = { c->bytes, c->len, c->big_endian };
    return decode_new_entry(&r, c->new_base, c->hwcaps_off, c->n_hwcaps, (uint32_t)i, tmp) == 0 ? tmp : NULL;
}

const struct cf_ldcache_entry *cf_ldcache_entry_at(const struct cf_ldcache *cache, size_t i)
{
    return i < cache->n_entries && cache->entries ? &cache->entries[i] : NULL;
}

/* _DL_CACHE_DEFAULT_ID and _dl_cache_check_flags per ABI, from
 * sysdeps/unix/sysv/linux/<arch>/dl-cache.h (generic: flags 1 or 3). */
struct abi_row {
    unsigned machine;
    int elf_class;
    int32_t default_id;
    int32_t also; /* a second accepted value, or -1 */
    int x86_isa_check;
};

static const struct abi_row abi_table[] = {
    { EM_X86_64, 64, CF_LDCACHE_FLAG_X8664_LIB64 | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 1 },
    { EM_X86_64, 32, CF_LDCACHE_FLAG_X8664_LIBX32 | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 1 },
    { EM_386, 32, CF_LDCACHE_FLAG_ELF_LIBC6, CF_LDCACHE_FLAG_ELF, 1 },
    { EM_AARCH64, 64, CF_LDCACHE_FLAG_AARCH64_LIB64 | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 0 },
    /* ARM: we cannot tell hard from soft float without e_flags; Debian armhf is hard-float. */
    { EM_ARM, 32, CF_LDCACHE_FLAG_ARM_LIBHF | CF_LDCACHE_FLAG_ELF_LIBC6, CF_LDCACHE_FLAG_ELF_LIBC6, 0 },
    { EM_PPC64, 64, CF_LDCACHE_FLAG_POWERPC_LIB64 | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 0 },
    { EM_PPC, 32, CF_LDCACHE_FLAG_ELF_LIBC6, CF_LDCACHE_FLAG_ELF, 0 },
    { EM_S390, 64, CF_LDCACHE_FLAG_S390_LIB64 | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 0 },
    { EM_S390, 32, CF_LDCACHE_FLAG_ELF_LIBC6, CF_LDCACHE_FLAG_ELF, 0 },
    { EM_SPARCV9, 64, CF_LDCACHE_FLAG_SPARC_LIB64 | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 0 },
    { EM_IA_64, 64, CF_LDCACHE_FLAG_IA64_LIB64 | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 0 },
    /* RISC-V: the double-float ABI (lp64d) every distribution ships. */
    { EM_RISCV, 64, CF_LDCACHE_FLAG_RISCV_FLOAT_ABI_DOUBLE | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 0 },
    { EM_RISCV, 32, CF_LDCACHE_FLAG_RISCV_FLOAT_ABI_DOUBLE | CF_LDCACHE_FLAG_ELF_LIBC6, -1, 0 },
};

int cf_ldcache_abi_for(unsigned machine, int elf_class, struct cf_ldcache_abi *abi, cf_error *err)
{
    for (size_t i = 0; i < sizeof abi_table / sizeof abi_table[0]; i++) {
        const struct abi_row *row = &abi_table[i];
        if (row->machine != machine || row->elf_class != elf_class)
            continue;
        memset(abi, 0, sizeof *abi);
        abi->default_id = row->default_id;
        abi->accepted[abi->n_accepted++] = row->default_id;
        if (row->also != -1)
            abi->accepted[abi->n_accepted++] = row->also;
        abi->x86_isa_check = row->x86_isa_check;
        return 0;
    }
    return cf_error_set(err, CF_ERR_USAGE, "no ld.so.cache ABI known for ELF machine %u, class %d",
                        machine, elf_class);
}

int cf_ldcache_libcmp(const char *p1, const char *p2)
{
    while (*p1 != '\0') {
        if (*p1 >= '0' && *p1 <= '9') {
            if (*p2 >= '0' && *p2 <= '9') {
                /* Digit runs compare numerically; glibc uses int arithmetic, and so
                 * must we for the binary search to agree with ldconfig's sort. */
                unsigned val1 = (unsigned)(*p1++ - '0');
                unsigned val2 = (unsigned)(*p2++ - '0');
                while (*p1 >= '0' && *p1 <= '9')
                    val1 = val1 * 10u + (unsigned)(*p1++ - '0');
                while (*p2 >= '0' && *p2 <= '9')
                    val2 = val2 * 10u + (unsigned)(*p2++ - '0');
                if (val1 != val2)
                    return (int)(val1 - val2);
            } else {
                return 1;
            }
        } else if (*p2 >= '0' && *p2 <= '9') {
            return -1;
        } else if (*p1 != *p2) {
            return (unsigned char)*p1 - (unsigned char)*p2;
        } else {
            ++p1;
            ++p2;
        }
    }
    return (unsigned char)*p1 - (unsigned char)*p2;
}

static int flags_accepted(const struct cf_ldcache_abi *abi, int32_t flags)
{
    for (size_t i = 0; i < abi->n_accepted; i++)
        if (abi->accepted[i] == flags)
            return 1;
    return 0;
}

/* Priority of a glibc-hwcaps subdirectory: 1 is best, 0 means not usable
 * (glibc_hwcaps_priority over _dl_hwcaps_priorities). */
static uint32_t hwcaps_priority(const struct cf_ldcache_query *q, const char *subdir)
{
    if (!subdir)
        return 0;
    for (size_t i = 0; i < q->n_hwcaps; i++)
        if (strcmp(q->hwcaps[i], subdir) == 0)
            return (uint32_t)i + 1;
    return 0;
}

static int isa_level_compatible(const struct cf_ldcache_query *q, const struct cf_ldcache_entry *e)
{
    if (!q->abi.x86_isa_check)
        return 1;
    uint32_t level = e->isa_level < 32 ? 1u << e->isa_level : 0;
    return level != 0 && (level & q->isa_1) == level;
}

/* Whether a legacy (non-glibc-hwcaps) entry's hwcap word suits the loader:
 * no bit it lacks, and if the entry names a platform, the loader's one. */
static int legacy_hwcap_matches(const struct cf_ldcache_query *q, const struct cf_ldcache_entry *e)
{
    uint64_t exclude = ~(q->hwcap | q->platform_mask | (1ULL << 63));
    if (e->hwcap & exclude)
        return 0;
    uint64_t plat = e->hwcap & q->platform_mask;
    return plat == 0 || plat == q->platform;
}

/* search_cache from elf/dl-cache.c: binary search on the libcmp order, then walk
 * the run of equal keys. From 2.33 glibc-hwcaps entries come first and the
 * best priority wins, otherwise the first entry with acceptable flags and
 * hwcaps; before 2.33 the first acceptable entry, unless one with the
 * default flags follows. */
const char *cf_ldcache_lookup(const struct cf_ldcache *cache, const char *name,
                              const struct cf_ldcache_query *q)
{
    int is_new = cache->format != CF_LDCACHE_OLD;
    struct cf_glibc v = q->glibc.major ? q->glibc : CF_GLIBC_NEWEST;
    int named_ok = cf_glibc_follows(v, CF_GLIBC_HWCAPS_SUBDIRS);
    int legacy_ok = cf_glibc_follows(v, CF_GLIBC_CACHE_LEGACY_ENTRIES);
    int first_entry = cf_glibc_follows(v, CF_GLIBC_CACHE_FIRST_ENTRY);
    long left = 0, right = (long)cache->n_entries - 1;
    const char *best = NULL;
    uint32_t best_priority = 0;
    struct cf_ldcache_entry tmp;
    const struct cf_ldcache_entry *lib;
#define ENTRY(i) (lib = entry_for_lookup(cache, (size_t)(i), &tmp))
    while (left <= right) {
        long middle = (left + right) / 2;
        if (!ENTRY(middle))
            return NULL; /* a corrupt entry: the cache is not used */
        int cmpres = cf_ldcache_libcmp(name, lib->key);
        if (cmpres == 0) {
            left = middle;
            while (middle > 0) {
                if (!ENTRY(middle - 1))
                    return NULL;
                if (cf_ldcache_libcmp(name, lib->key) != 0)
                    break;
                --middle;
            }
            do {
                if (!ENTRY(middle))
                    return NULL;
                if (middle > left && cf_ldcache_libcmp(name, lib->key) != 0)
                    break;
                if (!flags_accepted(&q->abi, lib->flags))
                    continue;
                if (first_entry) {
                    /* 2.32 and older: no named hwcaps (bit 62 is just an unknown bit). */
                    if (best != NULL && lib->flags != q->abi.default_id)
                        continue;
                    if (is_new && !legacy_hwcap_matches(q, lib))
                        continue;
                    best = lib->value;
                    if (lib->flags == q->abi.default_id)
                        break;
                    continue;
                }
                int named_hwcap = 0;
                if (is_new) {
                    named_hwcap = named_ok && ((lib->hwcap >> 32) & ~(uint64_t)ISA_LEVEL_MASK) ==
                                                  (CF_LDCACHE_HWCAP_EXTENSION >> 32);
                    if (named_hwcap && !isa_level_compatible(q, lib))
                        continue;
                    if (!named_hwcap && best != NULL)
                        break;
                    if (!named_hwcap && (legacy_ok ? !legacy_hwcap_matches(q, lib) : lib->hwcap != 0))
                        continue;
                    if (named_hwcap) {
                        uint32_t prio = hwcaps_priority(q, lib->hwcaps_subdir);
                        if (prio == 0)
                            continue;
                        if (best == NULL || prio < best_priority)
                            best_priority = prio;
                        else
                            continue;
                    }
                }
                best = lib->value;
                if (!named_hwcap && lib->flags == q->abi.default_id)
                    break;
            } while (++middle <= right);
            break;
        }
        if (cmpres < 0)
            left = middle + 1;
        else
            right = middle - 1;
    }
#undef ENTRY
    return best;
}

static const char *const type_names[] = { "libc4", "ELF", "libc5", "libc6" };

/* ldconfig's print_entry (elf/cache.c) wording for the required-ABI byte. */
static const struct {
    int32_t flag;
    const char *text;
} required_names[] = {
    { CF_LDCACHE_FLAG_SPARC_LIB64, ",64bit" },          { CF_LDCACHE_FLAG_IA64_LIB64, ",IA-64" },
    { CF_LDCACHE_FLAG_X8664_LIB64, ",x86-64" },         { CF_LDCACHE_FLAG_S390_LIB64, ",64bit" },
    { CF_LDCACHE_FLAG_POWERPC_LIB64, ",64bit" },        { CF_LDCACHE_FLAG_MIPS64_LIBN32, ",N32" },
    { CF_LDCACHE_FLAG_MIPS64_LIBN64, ",64bit" },        { CF_LDCACHE_FLAG_X8664_LIBX32, ",x32" },
    { CF_LDCACHE_FLAG_ARM_LIBHF, ",hard-float" },       { CF_LDCACHE_FLAG_AARCH64_LIB64, ",AArch64" },
    { CF_LDCACHE_FLAG_ARM_LIBSF, ",soft-float" },       { CF_LDCACHE_FLAG_MIPS_LIB32_NAN2008, ",nan2008" },
    { CF_LDCACHE_FLAG_MIPS64_LIBN32_NAN2008, ",N32,nan2008" },
    { CF_LDCACHE_FLAG_MIPS64_LIBN64_NAN2008, ",64bit,nan2008" },
    { CF_LDCACHE_FLAG_RISCV_FLOAT_ABI_SOFT, ",soft-float" },
    { CF_LDCACHE_FLAG_RISCV_FLOAT_ABI_DOUBLE, ",double-float" },
};

char *cf_ldcache_describe(const struct cf_ldcache_entry *e)
{
    struct strbuf sb = STRBUF_INIT;
    int32_t type = e->flags & CF_LDCACHE_FLAG_TYPE_MASK;
    cf_sb_adds(&sb, type >= 0 && type <= 3 ? type_names[type] : "unknown");
    int32_t required = e->flags & CF_LDCACHE_FLAG_REQUIRED_MASK;
    if (required != 0) {
        const char *text = NULL;
        for (size_t i = 0; i < sizeof required_names / sizeof required_names[0]; i++)
            if (required_names[i].flag == required)
                text = required_names[i].text;
        if (text)
            cf_sb_adds(&sb, text);
        else
            cf_sb_addf(&sb, ",%d", (int)required);
    }
    if (e->hwcaps_subdir)
        cf_sb_addf(&sb, ", hwcap: \"%s\"", e->hwcaps_subdir);
    else if (e->hwcap != 0)
        cf_sb_addf(&sb, ", hwcap: %#.16llx", (unsigned long long)e->hwcap);
    return cf_sb_detach(&sb);
}
