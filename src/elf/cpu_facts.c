/* CPU facts as glibc's init_cpu_features and update_active see them
 * (sysdeps/x86/cpu-features.c): the vendor, and a feature is usable when
 * cpuid has it and, for AVX and AVX-512, the OS saves its registers (XCR0). */
#include "cclforge/cpufacts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <dlfcn.h>
#include <stddef.h>
#endif

#include "cclforge/strbuf.h"

#define BIT(f) (UINT64_C(1) << (f))

/* Names, and which ones GLIBC_TUNABLES glibc.cpu.hwcaps accepts
 * (sysdeps/x86/cpu-tunables.c, TUNABLE_CALLBACK (set_hwcaps)). */
static const struct {
    enum cf_cpu_feature feature;
    const char *name;
    int tunable;
} features[] = {
    { CF_CPU_CMOV, "CMOV", 1 },       { CF_CPU_CX8, "CX8", 1 },
    { CF_CPU_SSE2, "SSE2", 1 },       { CF_CPU_CMPXCHG16B, "CMPXCHG16B", 0 },
    { CF_CPU_LAHF64_SAHF64, "LAHF64_SAHF64", 0 },
    { CF_CPU_POPCNT, "POPCNT", 1 },   { CF_CPU_SSE3, "SSE3", 0 },
    { CF_CPU_SSSE3, "SSSE3", 1 },     { CF_CPU_SSE4_1, "SSE4_1", 1 },
    { CF_CPU_SSE4_2, "SSE4_2", 1 },   { CF_CPU_AVX, "AVX", 1 },
    { CF_CPU_AVX2, "AVX2", 1 },       { CF_CPU_BMI1, "BMI1", 1 },
    { CF_CPU_BMI2, "BMI2", 1 },       { CF_CPU_F16C, "F16C", 0 },
    { CF_CPU_FMA, "FMA", 1 },         { CF_CPU_LZCNT, "LZCNT", 1 },
    { CF_CPU_MOVBE, "MOVBE", 1 },     { CF_CPU_OSXSAVE, "OSXSAVE", 1 },
    { CF_CPU_AVX512F, "AVX512F", 1 }, { CF_CPU_AVX512BW, "AVX512BW", 1 },
    { CF_CPU_AVX512CD, "AVX512CD", 1 }, { CF_CPU_AVX512DQ, "AVX512DQ", 1 },
    { CF_CPU_AVX512VL, "AVX512VL", 1 }, { CF_CPU_AVX512ER, "AVX512ER", 1 },
    { CF_CPU_AVX512PF, "AVX512PF", 1 },
};

/* The x86-64 micro-architecture levels of the psABI, as glibc's get_isa_level
 * (sysdeps/x86/get-isa-level.h, with BMI1/BMI2 in v3 as every release branch
 * from 2.33 has it). Each level needs the ones below. */
static const uint64_t level_features[] = {
    BIT(CF_CPU_CMOV) | BIT(CF_CPU_CX8) | BIT(CF_CPU_SSE2),
    BIT(CF_CPU_CMPXCHG16B) | BIT(CF_CPU_LAHF64_SAHF64) | BIT(CF_CPU_POPCNT) | BIT(CF_CPU_SSE3) |
        BIT(CF_CPU_SSSE3) | BIT(CF_CPU_SSE4_1) | BIT(CF_CPU_SSE4_2),
    BIT(CF_CPU_AVX) | BIT(CF_CPU_AVX2) | BIT(CF_CPU_BMI1) | BIT(CF_CPU_BMI2) | BIT(CF_CPU_F16C) |
        BIT(CF_CPU_FMA) | BIT(CF_CPU_LZCNT) | BIT(CF_CPU_MOVBE) | BIT(CF_CPU_OSXSAVE),
    BIT(CF_CPU_AVX512F) | BIT(CF_CPU_AVX512BW) | BIT(CF_CPU_AVX512CD) | BIT(CF_CPU_AVX512DQ) |
        BIT(CF_CPU_AVX512VL),
};
enum { LEVELS = sizeof level_features / sizeof level_features[0] };

/* Knights Landing / Mill: AVX2-class plus AVX-512 F, CD, ER, PF, no BW/DQ/VL. */
static uint64_t xeon_phi_features(void)
{
    return level_features[0] | level_features[1] | level_features[2] | BIT(CF_CPU_AVX512F) | BIT(CF_CPU_AVX512CD) |
           BIT(CF_CPU_AVX512ER) | BIT(CF_CPU_AVX512PF);
}

static const struct {
    enum cf_cpu_vendor vendor;
    const char *name;
} vendors[] = {
    { CF_CPU_VENDOR_INTEL, "intel" },     { CF_CPU_VENDOR_AMD, "amd" },     { CF_CPU_VENDOR_HYGON, "hygon" },
    { CF_CPU_VENDOR_ZHAOXIN, "zhaoxin" }, { CF_CPU_VENDOR_OTHER, "other" }, { CF_CPU_VENDOR_UNKNOWN, "unknown" },
};

#define VENDOR_CHOICES "intel, amd, hygon, zhaoxin, other or host" /* the table's names, for messages */

const char *cf_cpu_vendor_name(enum cf_cpu_vendor v)
{
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
        if (vendors[i].vendor == v)
            return vendors[i].name;
    return "unknown";
}

const char *cf_cpu_feature_name(enum cf_cpu_feature f)
{
    for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
        if (features[i].feature == f)
            return features[i].name;
    return "?";
}

int cf_cpu_has(const struct cf_cpu_facts *f, enum cf_cpu_feature feature)
{
    return f->x86 && (f->usable & BIT(feature)) != 0;
}

unsigned cf_cpu_isa_bits(const struct cf_cpu_facts *f)
{
    unsigned bits = 0;
    for (int lv = 0; lv < LEVELS && f->x86; lv++) {
        if ((f->usable & level_features[lv]) != level_features[lv])
            break;
        bits |= 1u << lv;
    }
    return bits;
}

int cf_cpu_isa_level(const struct cf_cpu_facts *f)
{
    int level = 0;
    for (unsigned bits = cf_cpu_isa_bits(f); bits; bits >>= 1)
        level++;
    return level;
}

#if defined(__x86_64__) || defined(__i386__)
/* Where each feature sits in cpuid, and what the OS must save for it. */
enum reg { EAX1, ECX1, EDX1, EBX7, ECX81, REG_COUNT };
enum state { NO_STATE, YMM_STATE, ZMM_STATE };
static const struct {
    enum cf_cpu_feature feature;
    enum reg reg;
    unsigned bit;
    enum state state;
} cpuid_bits[] = {
    { CF_CPU_SSE3, ECX1, 0, NO_STATE },     { CF_CPU_SSSE3, ECX1, 9, NO_STATE },
    { CF_CPU_FMA, ECX1, 12, YMM_STATE },    { CF_CPU_CMPXCHG16B, ECX1, 13, NO_STATE },
    { CF_CPU_SSE4_1, ECX1, 19, NO_STATE },  { CF_CPU_SSE4_2, ECX1, 20, NO_STATE },
    { CF_CPU_MOVBE, ECX1, 22, NO_STATE },   { CF_CPU_POPCNT, ECX1, 23, NO_STATE },
    { CF_CPU_OSXSAVE, ECX1, 27, NO_STATE }, { CF_CPU_AVX, ECX1, 28, YMM_STATE },
    { CF_CPU_F16C, ECX1, 29, YMM_STATE },   { CF_CPU_CX8, EDX1, 8, NO_STATE },
    { CF_CPU_CMOV, EDX1, 15, NO_STATE },    { CF_CPU_SSE2, EDX1, 26, NO_STATE },
    { CF_CPU_BMI1, EBX7, 3, NO_STATE },     { CF_CPU_AVX2, EBX7, 5, YMM_STATE },
    { CF_CPU_BMI2, EBX7, 8, NO_STATE },     { CF_CPU_AVX512F, EBX7, 16, ZMM_STATE },
    { CF_CPU_AVX512DQ, EBX7, 17, ZMM_STATE }, { CF_CPU_AVX512PF, EBX7, 26, ZMM_STATE },
    { CF_CPU_AVX512ER, EBX7, 27, ZMM_STATE }, { CF_CPU_AVX512CD, EBX7, 28, ZMM_STATE },
    { CF_CPU_AVX512BW, EBX7, 30, ZMM_STATE }, { CF_CPU_AVX512VL, EBX7, 31, ZMM_STATE },
    { CF_CPU_LAHF64_SAHF64, ECX81, 0, NO_STATE }, { CF_CPU_LZCNT, ECX81, 5, NO_STATE },
};

static enum cf_cpu_vendor vendor_of(unsigned ebx, unsigned ecx, unsigned edx)
{
    static const struct {
        unsigned ebx, ecx, edx;
        enum cf_cpu_vendor vendor;
    } ids[] = {
        { 0x756e6547, 0x6c65746e, 0x49656e69, CF_CPU_VENDOR_INTEL }, /* GenuineIntel */
        { 0x68747541, 0x444d4163, 0x69746e65, CF_CPU_VENDOR_AMD },   /* AuthenticAMD */
        { 0x6f677948, 0x656e6975, 0x6e65476e, CF_CPU_VENDOR_HYGON }, /* HygonGenuine */
        { 0x746e6543, 0x736c7561, 0x48727561, CF_CPU_VENDOR_ZHAOXIN }, /* CentaurHauls */
        { 0x68532020, 0x20206961, 0x68676e61, CF_CPU_VENDOR_ZHAOXIN }, /* "  Shanghai  " */
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ebx == ids[i].ebx && ecx == ids[i].ecx && edx == ids[i].edx)
            return ids[i].vendor;
    return CF_CPU_VENDOR_OTHER;
}

/* Leaf 0: the vendor and the highest basic leaf; -1 when there is no cpuid. */
static int leaf0(unsigned *max, enum cf_cpu_vendor *vendor)
{
#ifdef __i386__
    if (!__get_cpuid_max(0, NULL)) /* the EFLAGS.ID test: a 486 has no cpuid */
        return -1;
#endif
    unsigned b, c, d;
    __cpuid(0, *max, b, c, d);
    *vendor = vendor_of(b, c, d);
    return 0;
}

/* Each leaf once (<cpuid.h>'s __get_cpuid asks for the highest leaf again
 * every time): cpuid is a hypervisor exit in a VM, 10-28 us each measured
 * on this project's development VMs. */
static int regs_from_cpuid(unsigned regs[REG_COUNT], enum cf_cpu_vendor *vendor)
{
    unsigned max, a, b, c, d;
    if (leaf0(&max, vendor) != 0)
        return -1;
    if (max >= 1) {
        __cpuid(1, a, b, c, d);
        regs[EAX1] = a;
        regs[ECX1] = c;
        regs[EDX1] = d;
    }
    if (max >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        regs[EBX7] = b;
    }
    __cpuid(0x80000000, max, b, c, d);
    if (max >= 0x80000001) {
        __cpuid(0x80000001, a, b, c, d);
        regs[ECX81] = c;
    }
    return 0;
}

/* glibc 2.33+ keeps the raw cpuid words it read at start-up beside the
 * active ones and hands them out (__x86_get_cpuid_feature_leaf,
 * <sys/platform/x86.h>). Looked up at run time, so one binary uses them where
 * they exist and still needs nothing newer than GLIBC_2.17 (the release
 * build's floor). The layout is that header's, a public ABI; where the header
 * is at hand the build checks it. */
struct glibc_cpuid_leaf {
    unsigned int cpuid_array[4];
    unsigned int active_array[4];
};
#define GLIBC_LEAF_1 0
#define GLIBC_LEAF_7 1
#define GLIBC_LEAF_80000001 2
#define GLIBC_EAX 0
#define GLIBC_EBX 1
#define GLIBC_ECX 2
#define GLIBC_EDX 3
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
_Static_assert(sizeof(struct cpuid_feature) == sizeof(struct glibc_cpuid_leaf)
                   && offsetof(struct cpuid_feature, cpuid_array) == offsetof(struct glibc_cpuid_leaf, cpuid_array),
               "glibc's struct cpuid_feature");
_Static_assert(CPUID_INDEX_1 == GLIBC_LEAF_1 && CPUID_INDEX_7 == GLIBC_LEAF_7
                   && CPUID_INDEX_80000001 == GLIBC_LEAF_80000001,
               "glibc's CPUID_INDEX_*");
_Static_assert(cpuid_register_index_eax == GLIBC_EAX && cpuid_register_index_ebx == GLIBC_EBX
                   && cpuid_register_index_ecx == GLIBC_ECX && cpuid_register_index_edx == GLIBC_EDX,
               "glibc's cpuid_register_index_*");
#endif
#endif

/* The same registers as glibc read them, so only the vendor costs an
 * instruction (glibc keeps its vendor to itself); 1 when this glibc has no
 * such function. */
static int regs_from_glibc(unsigned regs[REG_COUNT], enum cf_cpu_vendor *vendor)
{
    const struct glibc_cpuid_leaf *(*leaf)(unsigned int);
    void *sym = dlsym(RTLD_DEFAULT, "__x86_get_cpuid_feature_leaf");
    if (!sym)
        return 1;
    memcpy(&leaf, &sym, sizeof leaf);
    unsigned max;
    if (leaf0(&max, vendor) != 0)
        return -1;
    regs[EAX1] = leaf(GLIBC_LEAF_1)->cpuid_array[GLIBC_EAX];
    regs[ECX1] = leaf(GLIBC_LEAF_1)->cpuid_array[GLIBC_ECX];
    regs[EDX1] = leaf(GLIBC_LEAF_1)->cpuid_array[GLIBC_EDX];
    regs[EBX7] = leaf(GLIBC_LEAF_7)->cpuid_array[GLIBC_EBX];
    regs[ECX81] = leaf(GLIBC_LEAF_80000001)->cpuid_array[GLIBC_ECX];
    return 0;
}

/* update_active, for the features we name: usable when cpuid has it and,
 * for AVX and AVX-512, XCR0 says the OS saves its registers. */
static void usable_from(const unsigned regs[REG_COUNT], struct cf_cpu_facts *out)
{
    /* family and model as Linux shows them: the extended family counts from
     * family 0xf, the extended model from family 6 (glibc's Zhaoxin branch
     * adds it always, the same for the families 6 and 7 it tests) */
    out->family = regs[EAX1] >> 8 & 0xf;
    out->model = regs[EAX1] >> 4 & 0xf;
    if (out->family == 0xf)
        out->family += regs[EAX1] >> 20 & 0xff;
    if (out->family >= 6)
        out->model += (regs[EAX1] >> 16 & 0xf) << 4;
    unsigned long long xcr0 = 0;
    if (regs[ECX1] & (1u << 27)) { /* OSXSAVE: xgetbv is allowed (and no exit) */
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (unsigned long long)hi << 32 | lo;
    }
    int ymm = (xcr0 & 6) == 6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
    for (size_t i = 0; i < sizeof cpuid_bits / sizeof cpuid_bits[0]; i++) {
        if (!(regs[cpuid_bits[i].reg] >> cpuid_bits[i].bit & 1u))
            continue;
        if ((cpuid_bits[i].state == YMM_STATE && !ymm) || (cpuid_bits[i].state == ZMM_STATE && !zmm))
            continue;
        out->usable |= BIT(cpuid_bits[i].feature);
    }
    /* FMA, F16C and AVX2 are usable only with AVX, the other AVX-512 parts
     * only with AVX512F. */
    if (!(out->usable & BIT(CF_CPU_AVX)))
        out->usable &= ~(BIT(CF_CPU_FMA) | BIT(CF_CPU_F16C) | BIT(CF_CPU_AVX2));
    if (!(out->usable & BIT(CF_CPU_AVX512F)))
        out->usable &= ~(BIT(CF_CPU_AVX512BW) | BIT(CF_CPU_AVX512CD) | BIT(CF_CPU_AVX512DQ) | BIT(CF_CPU_AVX512VL) |
                         BIT(CF_CPU_AVX512ER) | BIT(CF_CPU_AVX512PF));
    out->x86 = 1;
}
#endif

int cf_cpu_probe_from(enum cf_cpu_way way, struct cf_cpu_facts *out)
{
    memset(out, 0, sizeof *out);
#if defined(__x86_64__) || defined(__i386__)
    /* each: 0 done, -1 no cpuid, 1 this way is not available here */
    static int (*const ways[])(unsigned[REG_COUNT], enum cf_cpu_vendor *) = {
        [CF_CPU_FROM_CPUID] = regs_from_cpuid,
        [CF_CPU_FROM_GLIBC] = regs_from_glibc,
    };
    static const char *const names[] = { [CF_CPU_FROM_CPUID] = "cpuid",
                                         [CF_CPU_FROM_GLIBC] = "cpuid, as glibc read it" };
    if ((unsigned)way >= sizeof ways / sizeof ways[0])
        return -1;
    unsigned regs[REG_COUNT] = { 0 };
    int got = ways[way](regs, &out->vendor);
    if (got > 0) {
        out->vendor = CF_CPU_VENDOR_UNKNOWN;
        return -1;
    }
    snprintf(out->source, sizeof out->source, "%s", names[way]);
    if (got < 0)
        return 0; /* no cpuid: nothing known, x86 stays 0 */
    usable_from(regs, out);
    return 0;
#else
    (void)way;
    return -1;
#endif
}

void cf_cpu_probe(struct cf_cpu_facts *out)
{
    if (cf_cpu_probe_from(CF_CPU_FROM_GLIBC, out) != 0 && cf_cpu_probe_from(CF_CPU_FROM_CPUID, out) != 0)
        snprintf(out->source, sizeof out->source, "cpuid");
}

/* A feature by name: any case in a --cpu spec; exactly, and only the names
 * glibc takes there, in a tunable. */
static int feature_by_name(const char *name, size_t len, int as_tunable)
{
    for (size_t i = 0; i < sizeof features / sizeof features[0]; i++) {
        if (strlen(features[i].name) != len)
            continue;
        int same = as_tunable ? features[i].tunable && memcmp(features[i].name, name, len) == 0
                              : strncasecmp(features[i].name, name, len) == 0;
        if (same)
            return (int)features[i].feature;
    }
    return -1;
}

int cf_cpu_parse(const char *spec, const struct cf_cpu_facts *host, struct cf_cpu_facts *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    struct strvec parts = STRVEC_INIT;
    cf_strvec_split(&parts, spec, ",", 0);
    int rc = 0;
    if (parts.n == 0) {
        rc = cf_error_set(err, CF_ERR_USAGE, "--cpu: empty; name a vendor: " VENDOR_CHOICES);
        goto done;
    }
    out->x86 = 1;
    out->usable = host && host->x86 ? host->usable : level_features[0] | level_features[1];
    if (strcmp(parts.v[0], "host") == 0) {
        out->vendor = host && host->x86 ? host->vendor : CF_CPU_VENDOR_UNKNOWN;
        if (host && host->x86) {
            out->family = host->family;
            out->model = host->model;
        }
    } else {
        out->vendor = CF_CPU_VENDOR_UNKNOWN;
        for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
            if (vendors[i].vendor != CF_CPU_VENDOR_UNKNOWN && strcmp(parts.v[0], vendors[i].name) == 0)
                out->vendor = vendors[i].vendor;
        if (out->vendor == CF_CPU_VENDOR_UNKNOWN) {
            rc = cf_error_set(err, CF_ERR_USAGE, "--cpu %s: '%s' is no CPU vendor; use " VENDOR_CHOICES,
                              spec, parts.v[0]);
            goto done;
        }
    }
    for (size_t i = 1; i < parts.n; i++) {
        const char *p = parts.v[i];
        if (strncmp(p, "x86-64-v", 8) == 0 && p[8] >= '1' && p[8] <= '4' && p[9] == '\0') {
            out->usable = 0;
            for (int lv = 0; lv < p[8] - '0'; lv++)
                out->usable |= level_features[lv];
        } else if (strcmp(p, "xeon-phi") == 0) {
            out->usable = xeon_phi_features();
        } else if ((p[0] == '+' || p[0] == '-') && feature_by_name(p + 1, strlen(p + 1), 0) >= 0) {
            uint64_t bit = BIT(feature_by_name(p + 1, strlen(p + 1), 0));
            out->usable = p[0] == '+' ? out->usable | bit : out->usable & ~bit;
        } else if (strncmp(p, "family=", 7) == 0 || strncmp(p, "model=", 6) == 0) {
            int is_family = p[0] == 'f';
            const char *num = strchr(p, '=') + 1;
            char *end = NULL;
            unsigned long v = *num >= '0' && *num <= '9' ? strtoul(num, &end, 0) : 0;
            if (!end || *end || v > (is_family ? 0x10fu : 0xffu)) { /* family 0xf + 0xff extended */
                rc = cf_error_set(err, CF_ERR_USAGE,
                                  "--cpu %s: '%s' is no %s number (decimal or 0x hex, as /proc/cpuinfo shows it)",
                                  spec, p, is_family ? "family" : "model");
                goto done;
            }
            *(is_family ? &out->family : &out->model) = (unsigned)v;
        } else {
            rc = cf_error_set(err, CF_ERR_USAGE,
                              "--cpu %s: '%s' is neither a level (x86-64-v1..v4, xeon-phi), +FEATURE/-FEATURE "
                              "with a feature glibc tests (AVX2, BMI1, AVX512F, ...), family=N nor model=N",
                              spec, p);
            goto done;
        }
    }
    snprintf(out->source, sizeof out->source, "--cpu %s", spec);
done:
    cf_strvec_clear(&parts);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}

int cf_cpu_apply_zhaoxin_quirk(struct cf_cpu_facts *f)
{
    /* sysdeps/x86/cpu-features.c, the arch_kind_zhaoxin branch (32ac0b9884;
     * 44d757eb9f named the family 7 ones Wudaokou and Lujiazui) */
    static const struct {
        unsigned family, model;
    } models[] = { { 6, 0x0f }, { 6, 0x19 }, { 7, 0x1b }, { 7, 0x3b } };
    const uint64_t avx = BIT(CF_CPU_AVX) | BIT(CF_CPU_AVX2);
    if (!f->x86 || f->vendor != CF_CPU_VENDOR_ZHAOXIN || !(f->usable & avx))
        return 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        if (f->family == models[i].family && f->model == models[i].model) {
            f->usable &= ~avx;
            size_t used = strlen(f->source);
            snprintf(f->source + used, sizeof f->source - used, ", Zhaoxin AVX off");
            return 1;
        }
    }
    return 0;
}

/* Before 2.33: the tunable names that clear a bit the platform test reads. */
static int split_feature(const char *name, size_t len)
{
    static const struct {
        const char *name;
        enum cf_cpu_feature feature;
    } usable[] = { { "AVX2_Usable", CF_CPU_AVX2 }, { "FMA_Usable", CF_CPU_FMA }, { "AVX_Usable", CF_CPU_AVX } };
    for (size_t i = 0; i < sizeof usable / sizeof usable[0]; i++)
        if (strlen(usable[i].name) == len && memcmp(usable[i].name, name, len) == 0)
            return (int)usable[i].feature;
    int f = feature_by_name(name, len, 1);
    /* The cpuid bits of these three are not what the test reads. */
    return f == CF_CPU_AVX2 || f == CF_CPU_FMA || f == CF_CPU_AVX || f == CF_CPU_AVX512F ? -1 : f;
}

int cf_cpu_apply_tunables(struct cf_cpu_facts *f, const char *tunables, const char *key_name, int split)
{
    if (!tunables || !f->x86)
        return 0;
    char key[64];
    snprintf(key, sizeof key, "%s=", key_name);
    uint64_t before = f->usable;
    /* name=value pairs separated by ':'; the value is a ','-separated list. */
    for (const char *p = tunables; *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        size_t klen = strlen(key);
        if (len > klen && strncmp(p, key, klen) == 0) {
            const char *v = p + klen, *stop = p + len;
            while (v < stop) {
                const char *comma = memchr(v, ',', (size_t)(stop - v));
                size_t n = comma ? (size_t)(comma - v) : (size_t)(stop - v);
                int feature = n < 2 || v[0] != '-' ? -1 : split ? split_feature(v + 1, n - 1) : feature_by_name(v + 1, n - 1, 1);
                if (feature >= 0)
                    f->usable &= ~BIT(feature);
                v += n + (comma != NULL);
            }
        }
        p += len + (end != NULL);
    }
    if (f->usable == before)
        return 0;
    size_t used = strlen(f->source);
    snprintf(f->source + used, sizeof f->source - used, ", GLIBC_TUNABLES");
    return 1;
}
