/* Which glibc release the target runs, and the loader rules that changed
 * between releases (2.17 to 2.42), as one table: docs/ldso.md lists each rule
 * with the glibc commit that introduced or removed it. The loader emulation
 * asks cf_glibc_follows() instead of hard-coding one release's behaviour. */
#ifndef CCLFORGE_GLIBC_H
#define CCLFORGE_GLIBC_H

#include <stddef.h>

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_glibc {
    unsigned major, minor; /* 2, 36 */
};

/* The oldest and newest releases whose rules the table was checked against. */
#define CF_GLIBC_OLDEST ((struct cf_glibc){ 2, 17 })
#define CF_GLIBC_NEWEST ((struct cf_glibc){ 2, 42 })

enum cf_glibc_rule {
    /* glibc-hwcaps/<level>/ subdirectories of every search directory, and the
     * glibc-hwcaps extension entries of ld.so.cache (with their x86 ISA level). */
    CF_GLIBC_HWCAPS_SUBDIRS,
    /* The legacy power set of hwcap names, platform and "tls" as
     * subdirectories of every search directory (removed in 2.37). */
    CF_GLIBC_LEGACY_SUBDIRS,
    /* x86-64: dl_hwcap always holds HWCAP_X86_64, the legacy "x86_64" name. */
    CF_GLIBC_X86_64_HWCAP,
    /* x86: init_cpu_features names the platform ("haswell", "xeon_phi") on
     * Intel CPUs only, and sets the "avx512_1" hwcap bit there. */
    CF_GLIBC_X86_PLATFORM_NAMES,
    /* x86-64 2.26 only: that code first cleared the kernel's AT_PLATFORM, so
     * other CPUs have no platform at all (no $PLATFORM, no platform subdir). */
    CF_GLIBC_X86_PLATFORM_CLEARED,
    /* x86: AVX and AVX2 unusable on four Zhaoxin models (slow 256-bit
     * units), so glibc-hwcaps take x86-64-v2 there (cf_cpu_apply_zhaoxin_quirk). */
    CF_GLIBC_ZHAOXIN_AVX_OFF,
    /* ld.so.cache entries with legacy hwcap or platform bits are used when
     * they match the CPU (from 2.40 every such entry is skipped). */
    CF_GLIBC_CACHE_LEGACY_ENTRIES,
    /* search_cache keeps the first acceptable entry and lets only one with the
     * default flags replace it (before the BZ 27046 rewrite, 2.33). */
    CF_GLIBC_CACHE_FIRST_ENTRY,
    /* GLIBC_TUNABLES glibc.cpu.hwcaps=-FEATURE clears usable CPU features
     * that the platform and ISA-level decisions read, one "usable" array. */
    CF_GLIBC_TUNABLE_HWCAPS,
    /* Before 2.33 the tunable cleared cpuid bits and *_Usable bits apart: the
     * platform test reads AVX2_Usable and FMA_Usable but the cpuid bits of
     * the rest; 2.26 to 2.28 spell the tunable glibc.tune.hwcaps. */
    CF_GLIBC_TUNABLE_HWCAPS_SPLIT,
    CF_GLIBC_TUNABLE_TUNE_PREFIX,
    /* ld.so PROG (which ldd runs) takes the program's real path as its name
     * and $ORIGIN, as direct execution does (BZ 25263, 2.42). */
    CF_GLIBC_MAIN_REALPATH,
    /* The dynamic loader stays in the link map (what ldd lists, after the last
     * object of the search list) even when no DT_NEEDED names it; before 2.41
     * it was unlinked unless something needed it (rtld_multiple_ref). */
    CF_GLIBC_INTERP_ALWAYS_LISTED,
    CF_GLIBC_RULE_COUNT
};

struct cf_glibc_rule_info {
    enum cf_glibc_rule rule;
    const char *name;     /* "glibc-hwcaps", "legacy-hwcaps", ... (JSON, docs) */
    struct cf_glibc since;
    struct cf_glibc until; /* first release without it; {0, 0}: still there */
    const char *source;   /* where it lives in glibc ("elf/dl-hwcaps.c", commit) */
};

/* 1 when release v follows the rule. */
int cf_glibc_follows(struct cf_glibc v, enum cf_glibc_rule rule);
const char *cf_glibc_rule_name(enum cf_glibc_rule rule);

/* "2.36" (or "2.36.9000", "2.36-9+deb12u14": the rest is ignored). -1 when
 * the text is not a glibc version (CF_ERR_USAGE, naming it). */
int cf_glibc_parse(const char *text, struct cf_glibc *out, cf_error *err);
/* a < b: -1, equal 0, a > b: 1. */
int cf_glibc_compare(struct cf_glibc a, struct cf_glibc b);

/* The release of the glibc whose dynamic loader is `interp` (a path, already
 * under the root), else of the libc.so.6 in one of `dirs` (NULL-terminated,
 * already under the root): read from the "... release version X.Y" banner
 * both carry. *source gets the file it came from (caller frees); when that is
 * the loader, *loader_soname (may be NULL) gets its DT_SONAME, read from the
 * same open (caller frees; NULL otherwise). -1 when neither holds one (no
 * glibc there: a partial root, musl). */
int cf_glibc_detect(const char *interp, const char *const *dirs, struct cf_glibc *out, char **source,
                    char **loader_soname);

#ifdef __cplusplus
}
#endif
#endif
