/* The loader rules that changed between glibc releases, as data. Each row was
 * read off glibc's own history (bminor/glibc, the release tags and branches);
 * docs/ldso.md shows the table with the commits. */
#include "cclforge/glibc.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

#define V(a, b) { a, b }
#define NOW { 0, 0 }

static const struct cf_glibc_rule_info rules[CF_GLIBC_RULE_COUNT] = {
    { CF_GLIBC_HWCAPS_SUBDIRS, "glibc-hwcaps", V(2, 33), NOW,
      "elf/dl-hwcaps.c, elf/dl-cache.c: glibc-hwcaps subdirectories and cache entries (dad90d5282, 600d9e0c87)" },
    { CF_GLIBC_LEGACY_SUBDIRS, "legacy-hwcaps", V(2, 0), V(2, 37),
      "elf/dl-hwcaps.c _dl_important_hwcaps power set; removed by 6099908fb8" },
    { CF_GLIBC_X86_64_HWCAP, "x86_64-hwcap", V(2, 27), NOW,
      "sysdeps/x86/cpu-features.c: GLRO(dl_hwcap) = HWCAP_X86_64 (2.26 started from 0)" },
    { CF_GLIBC_X86_PLATFORM_NAMES, "intel-platform", V(2, 26), NOW,
      "sysdeps/x86/cpu-features.c: haswell / xeon_phi and avx512_1 when basic.kind == arch_kind_intel" },
    { CF_GLIBC_X86_PLATFORM_CLEARED, "platform-cleared", V(2, 26), V(2, 27),
      "sysdeps/x86/cpu-features.c 2.26: GLRO(dl_platform) = NULL before the Intel checks" },
    { CF_GLIBC_ZHAOXIN_AVX_OFF, "zhaoxin-avx-off", V(2, 32), NOW,
      "sysdeps/x86/cpu-features.c arch_kind_zhaoxin: CPU_FEATURE_UNSET AVX, AVX2 on family 6 model 0xf / 0x19, "
      "family 7 model 0x1b / 0x3b (32ac0b9884)" },
    { CF_GLIBC_CACHE_LEGACY_ENTRIES, "cache-legacy-entries", V(2, 0), V(2, 40),
      "elf/dl-cache.c search_cache hwcap_exclude / platform check; removed by c5aa5fd40a" },
    { CF_GLIBC_CACHE_FIRST_ENTRY, "cache-first-entry", V(2, 0), V(2, 33),
      "elf/dl-cache.c: best == NULL || flags == dl_correct_cache_id; rewritten by 66db95b6e8 (BZ 27046)" },
    { CF_GLIBC_TUNABLE_HWCAPS, "tunable-hwcaps", V(2, 33), NOW,
      "sysdeps/x86/cpu-tunables.c set_hwcaps over CPU_FEATURE_USABLE (one usable array from 2.33)" },
    { CF_GLIBC_TUNABLE_HWCAPS_SPLIT, "tunable-hwcaps-split", V(2, 26), V(2, 33),
      "sysdeps/x86/cpu-tunables.c: cpuid bits and AVX2_Usable / FMA_Usable cleared apart" },
    { CF_GLIBC_TUNABLE_TUNE_PREFIX, "tunable-glibc.tune", V(2, 26), V(2, 29),
      "sysdeps/x86/dl-tunables.list: glibc.tune.hwcaps, renamed glibc.cpu.hwcaps in 2.29" },
    { CF_GLIBC_MAIN_REALPATH, "main-realpath", V(2, 42), NOW,
      "elf/dl-load.c _dl_canonicalize for an explicit ld.so invocation (9b646f5dc9, BZ 25263)" },
    { CF_GLIBC_INTERP_ALWAYS_LISTED, "interp-always-listed", V(2, 41), NOW,
      "elf/rtld.c: rtld_multiple_ref is always true (8f8dd904c4)" },
};

int cf_glibc_compare(struct cf_glibc a, struct cf_glibc b)
{
    if (a.major != b.major)
        return a.major < b.major ? -1 : 1;
    return a.minor == b.minor ? 0 : a.minor < b.minor ? -1 : 1;
}

int cf_glibc_follows(struct cf_glibc v, enum cf_glibc_rule rule)
{
    if ((unsigned)rule >= CF_GLIBC_RULE_COUNT)
        return 0;
    const struct cf_glibc_rule_info *r = &rules[rule];
    if (cf_glibc_compare(v, r->since) < 0)
        return 0;
    return r->until.major == 0 || cf_glibc_compare(v, r->until) < 0;
}

const char *cf_glibc_rule_name(enum cf_glibc_rule rule)
{
    return (unsigned)rule < CF_GLIBC_RULE_COUNT ? rules[rule].name : "?";
}

int cf_glibc_parse(const char *text, struct cf_glibc *out, cf_error *err)
{
    unsigned major = 0, minor = 0;
    int used = 0;
    if (!text || sscanf(text, "%u.%u%n", &major, &minor, &used) != 2 || major != 2 || minor > 999 ||
        (text[used] != '\0' && !strchr(".-+ \t\n", text[used])))
        return cf_error_set(err, CF_ERR_USAGE, "--glibc %s: not a glibc release; give MAJOR.MINOR, e.g. 2.31",
                            text ? text : "(null)");
    out->major = major;
    out->minor = minor;
    return 0;
}

/* "... stable release version 2.36." in read-only data: ld.so's --version
 * text and libc.so.6's banner, in every release since 2.17. */
static int version_in(const struct cf_elf *elf, struct cf_glibc *out)
{
    static const char needle[] = "release version ";
    for (size_t i = 0; i < cf_elf_section_count(elf); i++) {
        const struct cf_elf_section *s = cf_elf_section_at(elf, i);
        const uint8_t *p;
        size_t len;
        if (s->type != SHT_PROGBITS || !(s->flags & SHF_ALLOC) || (s->flags & (SHF_WRITE | SHF_EXECINSTR)) ||
            cf_elf_section_bytes(elf, s, &p, &len, NULL) != 0)
            continue;
        const uint8_t *end = p + len;
        for (const uint8_t *hit = memmem(p, len, needle, sizeof needle - 1); hit;
             hit = memmem(hit + 1, (size_t)(end - hit - 1), needle, sizeof needle - 1)) {
            const uint8_t *v = hit + sizeof needle - 1;
            char buf[16];
            size_t n = 0;
            while (v + n < end && n < sizeof buf - 1 && ((v[n] >= '0' && v[n] <= '9') || v[n] == '.'))
                n++;
            memcpy(buf, v, n);
            buf[n] = '\0';
            if (cf_glibc_parse(buf, out, NULL) == 0)
                return 0;
        }
    }
    return -1;
}

static int version_of_file(const char *path, struct cf_glibc *out, char **soname)
{
    struct cf_elf *elf;
    if (!cf_is_file(path) || cf_elf_open(path, &elf, NULL) != 0)
        return -1;
    int rc = version_in(elf, out);
    if (rc == 0 && cf_elf_check_intact(elf, NULL) != 0)
        rc = -1;
    if (rc == 0 && soname && cf_elf_get_dynamic(elf)->soname)
        *soname = cf_strdup(cf_elf_get_dynamic(elf)->soname);
    cf_elf_close(elf);
    return rc;
}

int cf_glibc_detect(const char *interp, const char *const *dirs, struct cf_glibc *out, char **source,
                    char **loader_soname)
{
    *source = NULL;
    if (loader_soname)
        *loader_soname = NULL;
    if (interp && version_of_file(interp, out, loader_soname) == 0) {
        *source = cf_strdup(interp);
        return 0;
    }
    for (const char *const *d = dirs; d && *d; d++) {
        char *libc = cf_path_join(*d, "libc.so.6");
        if (version_of_file(libc, out, NULL) == 0) {
            *source = libc;
            return 0;
        }
        free(libc);
    }
    return -1;
}
