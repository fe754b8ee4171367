/* What one glibc release's loader derives from one CPU: the glibc-hwcaps
 * subdirectories, the legacy hwcap names, the platform ($PLATFORM) and the
 * hwcap bits its ld.so.cache lookup matches against. The release decides by
 * the rules in glibc_rules.c, the CPU by its facts (cpufacts.h); nothing
 * here looks at the machine it runs on. */
#include "ldso_internal.h"

#include <elf.h>
#include <string.h>

#include "cclforge/strbuf.h"

/* glibc's x86 tables (sysdeps/x86/dl-procinfo.c, dl-hwcap.h): the platforms
 * are bits 48.. of an ld.so.cache entry's hwcap; x86-64 starts at "haswell". */
enum { FIRST_PLATFORM_BIT = 48, X86_64_PLATFORMS_START = 2, X86_PLATFORMS = 4, I386_PLATFORMS = 2 };
static const char *const x86_platforms[] = { "i586", "i686", "haswell", "xeon_phi" };

static uint64_t platform_bit(const char *platform, size_t start, size_t count)
{
    for (size_t i = start; platform && i < count; i++)
        if (strcmp(platform, x86_platforms[i]) == 0)
            return 1ULL << (FIRST_PLATFORM_BIT + i);
    return ~0ULL; /* _dl_string_platform returned -1 */
}

static int has_all(const struct cf_cpu_facts *f, const enum cf_cpu_feature *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!cf_cpu_has(f, list[i]))
            return 0;
    return 1;
}

/* init_cpu_features' Intel-only block: the platform name and the avx512_1 bit. */
static const char *intel_platform(const struct cf_cpu_facts *f, int *avx512_1)
{
    static const enum cf_cpu_feature avx512_1_needs[] = { CF_CPU_AVX512BW, CF_CPU_AVX512DQ, CF_CPU_AVX512VL };
    static const enum cf_cpu_feature haswell_needs[] = { CF_CPU_AVX2, CF_CPU_FMA, CF_CPU_BMI1, CF_CPU_BMI2,
                                                         CF_CPU_LZCNT, CF_CPU_MOVBE, CF_CPU_POPCNT };
    *avx512_1 = 0;
    if (f->vendor != CF_CPU_VENDOR_INTEL)
        return NULL;
    const char *platform = NULL;
    if (cf_cpu_has(f, CF_CPU_AVX512CD)) {
        if (cf_cpu_has(f, CF_CPU_AVX512ER)) {
            if (cf_cpu_has(f, CF_CPU_AVX512PF))
                platform = "xeon_phi";
        } else {
            *avx512_1 = has_all(f, avx512_1_needs, 3);
        }
    }
    if (!platform && has_all(f, haswell_needs, sizeof haswell_needs / sizeof haswell_needs[0]))
        platform = "haswell";
    return platform;
}

static void x86_64_view(struct cf_glibc g, const struct cf_cpu_facts *cpu, const char *kernel_platform,
                        struct ldso_view *v)
{
    int avx512_1 = 0;
    const char *named = cf_glibc_follows(g, CF_GLIBC_X86_PLATFORM_NAMES) ? intel_platform(cpu, &avx512_1) : NULL;
    if (named)
        v->platform = named;
    else if (cf_glibc_follows(g, CF_GLIBC_X86_PLATFORM_CLEARED))
        v->platform = NULL;
    else
        v->platform = kernel_platform; /* AT_PLATFORM, left in place */
    /* dl_hwcap & HWCAP_IMPORTANT, in bit order: 2.27+ x86_64 = 1 << 1,
     * avx512_1 = 1 << 2; 2.26 had avx512_1 = 1 << 1 and no x86_64 bit. */
    int x86_64_bit = cf_glibc_follows(g, CF_GLIBC_X86_64_HWCAP);
    if (x86_64_bit) {
        cf_strvec_push(&v->legacy, "x86_64");
        v->hwcap |= 1ULL << 1;
    }
    if (avx512_1) {
        cf_strvec_push(&v->legacy, "avx512_1");
        v->hwcap |= 1ULL << (x86_64_bit ? 2 : 1);
    }
    if (cf_glibc_follows(g, CF_GLIBC_X86_PLATFORM_NAMES)) {
        v->platform_mask = ((1ULL << X86_PLATFORMS) - 1) << FIRST_PLATFORM_BIT;
        v->platform_bit = platform_bit(v->platform, X86_64_PLATFORMS_START, X86_PLATFORMS);
    }
    if (cf_glibc_follows(g, CF_GLIBC_HWCAPS_SUBDIRS)) {
        static const char *const levels[] = { "x86-64-v4", "x86-64-v3", "x86-64-v2" };
        int level = cf_cpu_isa_level(cpu);
        for (int lv = 4; lv >= 2; lv--)
            if (level >= lv)
                cf_strvec_push(&v->hwcaps, levels[4 - lv]);
    }
}

static void i386_view(struct cf_glibc g, const struct cf_cpu_facts *cpu, const char *kernel_platform,
                      struct ldso_view *v)
{
    /* sse2 is hwcap bit 0; the platform is i686 on any CPU that runs x86-64. */
    if (!cpu->x86 || cf_cpu_has(cpu, CF_CPU_SSE2)) {
        cf_strvec_push(&v->legacy, "sse2");
        v->hwcap |= 1ULL;
    }
    v->platform = kernel_platform;
    if (cf_glibc_follows(g, CF_GLIBC_X86_PLATFORM_NAMES)) {
        v->platform_mask = ((1ULL << I386_PLATFORMS) - 1) << FIRST_PLATFORM_BIT;
        v->platform_bit = platform_bit(v->platform, 0, I386_PLATFORMS);
    }
}

void cf_ldso_view_build(struct cf_glibc g, const struct cf_cpu_facts *cpu_before_tunables,
                        const struct cf_cpu_facts *cpu, unsigned machine, int elf_class,
                        const char *kernel_platform, struct ldso_view *v)
{
    memset(v, 0, sizeof *v);
    v->platform_bit = ~0ULL;
    v->isa_1 = cf_cpu_isa_bits(cpu_before_tunables); /* isa_1 is set in update_active: before the Zhaoxin quirk and the tunables */
    if (machine == EM_X86_64)
        x86_64_view(g, cpu, kernel_platform, v);
    else if (machine == EM_386)
        i386_view(g, cpu, kernel_platform, v);
    else
        v->platform = kernel_platform;
    (void)elf_class;
    /* _dl_important_hwcaps: hwcap names, then the platform, then "tls". */
    if (!cf_glibc_follows(g, CF_GLIBC_LEGACY_SUBDIRS)) {
        cf_strvec_clear(&v->legacy);
        return;
    }
    if (v->platform)
        cf_strvec_push(&v->legacy, v->platform);
    cf_strvec_push(&v->legacy, "tls");
}

void cf_ldso_view_release(struct ldso_view *v)
{
    cf_strvec_clear(&v->hwcaps);
    cf_strvec_clear(&v->legacy);
}
