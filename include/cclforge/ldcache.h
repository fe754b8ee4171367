/* Reading /etc/ld.so.cache the way glibc's dynamic loader does (elf/dl-cache.c,
 * sysdeps/generic/dl-cache.h, glibc 2.36): the "glibc-ld.so.cache1.1" format
 * (entries with flags, osversion, hwcap and the glibc-hwcaps extension), the old
 * "ld.so-1.7.0" format, and the old format with the new one embedded after it.
 * Every offset is bounds-checked; a corrupt cache is an error, never a crash. */
#ifndef CCLFORGE_LDCACHE_H
#define CCLFORGE_LDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/glibc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entry flags, as ldconfig writes them (sysdeps/generic/ldconfig.h). */
#define CF_LDCACHE_FLAG_TYPE_MASK 0x00ff
#define CF_LDCACHE_FLAG_LIBC4 0x0000
#define CF_LDCACHE_FLAG_ELF 0x0001
#define CF_LDCACHE_FLAG_ELF_LIBC5 0x0002
#define CF_LDCACHE_FLAG_ELF_LIBC6 0x0003
#define CF_LDCACHE_FLAG_REQUIRED_MASK 0xff00
#define CF_LDCACHE_FLAG_SPARC_LIB64 0x0100
#define CF_LDCACHE_FLAG_IA64_LIB64 0x0200
#define CF_LDCACHE_FLAG_X8664_LIB64 0x0300
#define CF_LDCACHE_FLAG_S390_LIB64 0x0400
#define CF_LDCACHE_FLAG_POWERPC_LIB64 0x0500
#define CF_LDCACHE_FLAG_MIPS64_LIBN32 0x0600
#define CF_LDCACHE_FLAG_MIPS64_LIBN64 0x0700
#define CF_LDCACHE_FLAG_X8664_LIBX32 0x0800
#define CF_LDCACHE_FLAG_ARM_LIBHF 0x0900
#define CF_LDCACHE_FLAG_AARCH64_LIB64 0x0a00
#define CF_LDCACHE_FLAG_ARM_LIBSF 0x0b00
#define CF_LDCACHE_FLAG_MIPS_LIB32_NAN2008 0x0c00
#define CF_LDCACHE_FLAG_MIPS64_LIBN32_NAN2008 0x0d00
#define CF_LDCACHE_FLAG_MIPS64_LIBN64_NAN2008 0x0e00
#define CF_LDCACHE_FLAG_RISCV_FLOAT_ABI_SOFT 0x0f00
#define CF_LDCACHE_FLAG_RISCV_FLOAT_ABI_DOUBLE 0x1000

/* hwcap bit 62: the low 32 bits index the glibc-hwcaps extension section. */
#define CF_LDCACHE_HWCAP_EXTENSION (1ULL << 62)

enum cf_ldcache_format {
    CF_LDCACHE_NEW,          /* glibc-ld.so.cache1.1 only (glibc >= 2.32 default) */
    CF_LDCACHE_OLD,          /* ld.so-1.7.0 only */
    CF_LDCACHE_OLD_WITH_NEW  /* ld.so-1.7.0 followed by an embedded 1.1 table (lookups use the new one) */
};

struct cf_ldcache_entry {
    const char *key;           /* the soname, e.g. "libz.so.1" */
    const char *value;         /* the path, e.g. "/lib/x86_64-linux-gnu/libz.so.1" */
    int32_t flags;             /* CF_LDCACHE_FLAG_* type | required */
    uint32_t osversion;        /* new format only */
    uint64_t hwcap;            /* new format only */
    const char *hwcaps_subdir; /* glibc-hwcaps name ("x86-64-v3") of an extension entry, else NULL */
    unsigned isa_level;        /* extension entries: ISA level bits 32..41 of hwcap */
};

struct cf_ldcache; /* opaque: owns the file's mapping, or a copy of an image in memory */

/* Reads and validates a cache file. A missing file is CF_ERR_NOTFOUND. */
int cf_ldcache_open(const char *path, struct cf_ldcache **out, cf_error *err);
/* For lookups only, as the loader emulation opens it: checks the header and
 * the table's bounds, and decodes an entry only when a lookup meets it (as
 * glibc does; ~11 of ~1,000 entries per name), so a run that looks up a few
 * names does not decode the whole table. cf_ldcache_entry_at returns NULL on
 * such a cache (the old format alone is still read whole); a lookup that
 * meets a corrupt entry finds nothing. */
int cf_ldcache_open_lookup(const char *path, struct cf_ldcache **out, cf_error *err);
/* The same over an image in memory (copied): for the fuzz target. */
int cf_ldcache_parse_lookup(const void *data, size_t len, const char *name, struct cf_ldcache **out,
                            cf_error *err);
/* Parses a cache image from memory (copied); `name` labels errors. */
int cf_ldcache_parse(const void *data, size_t len, const char *name, struct cf_ldcache **out,
                     cf_error *err);
void cf_ldcache_free(struct cf_ldcache *cache);

enum cf_ldcache_format cf_ldcache_get_format(const struct cf_ldcache *cache);
/* The entries lookups use (the new table when present), in file order. */
size_t cf_ldcache_count(const struct cf_ldcache *cache);
const struct cf_ldcache_entry *cf_ldcache_entry_at(const struct cf_ldcache *cache, size_t i);
/* The generator extension ("ldconfig (GNU libc) 2.36"), or NULL. */
const char *cf_ldcache_generator(const struct cf_ldcache *cache);
/* -1 with err once a read of the mapped file found it shorter than when it
 * was opened (truncated in place): what was read from it then was zeros. */
int cf_ldcache_check_intact(const struct cf_ldcache *cache, cf_error *err);

/* Which entries a loader accepts: glibc's _dl_cache_check_flags and
 * _DL_CACHE_DEFAULT_ID for one ABI (machine + ELF class). */
struct cf_ldcache_abi {
    int32_t accepted[2];
    size_t n_accepted;
    int32_t default_id; /* an entry with these flags ends the search */
    int x86_isa_check;  /* x86: extension entries carry an ISA level to check */
};
/* Fills abi for an ELF machine (EM_*) and class (32/64). Returns -1 with err
 * for a combination glibc has no cache ABI for. */
int cf_ldcache_abi_for(unsigned machine, int elf_class, struct cf_ldcache_abi *abi, cf_error *err);

/* What the lookup knows about the CPU (glibc's search_cache inputs). */
struct cf_ldcache_query {
    struct cf_ldcache_abi abi;
    /* Active glibc-hwcaps subdirectory names, highest priority first
     * (e.g. "x86-64-v3", "x86-64-v2"). */
    const char *const *hwcaps;
    size_t n_hwcaps;
    /* x86 GNU_PROPERTY_X86_ISA_1 bits the CPU supports (1 baseline, 2 v2, 4 v3, 8 v4). */
    uint32_t isa_1;
    /* Legacy hwcap matching: the loader's dl_hwcap & hwcap_mask (an entry with
     * any other bit below the platform bits, or bit 62, is skipped; TLS bit 63
     * always passes), the platform bits of this ABI (_DL_HWCAP_PLATFORM), and
     * the bit of the loader's own platform (~0 when it names none of them):
     * an entry with platform bits must carry exactly that one. */
    uint64_t hwcap;
    uint64_t platform_mask;
    uint64_t platform;
    /* The release whose search_cache to follow (glibc.h rules: named hwcaps
     * from 2.33, legacy entries until 2.39, the older first-entry rule before
     * 2.33); {0, 0} means the newest. */
    struct cf_glibc glibc;
};

/* glibc's _dl_load_cache_lookup (search_cache) for the query's release: the
 * path for `name`, or NULL. The pointer lives as long as the cache. */
const char *cf_ldcache_lookup(const struct cf_ldcache *cache, const char *name,
                              const struct cf_ldcache_query *query);

/* glibc's _dl_cache_libcmp: names compare with digit runs as numbers. */
int cf_ldcache_libcmp(const char *a, const char *b);

/* ldconfig -p's description of an entry: "libc6,x86-64" or
 * "libc6,x86-64, hwcap: \"x86-64-v3\"". Caller frees. */
char *cf_ldcache_describe(const struct cf_ldcache_entry *entry);

#ifdef __cplusplus
}
#endif
#endif
