/* The CPU facts glibc's loader decides by (x86 only): the vendor and which
 * features are usable, as sysdeps/x86/cpu-features.c computes them (cpuid
 * and the OS's XSAVE state). Probed on this host, or given as a spec so a
 * resolution can be planned for another host (AMD from an Intel box, a
 * Haswell-less VM, ...). */
#ifndef CCLFORGE_CPUFACTS_H
#define CCLFORGE_CPUFACTS_H

#include <stdint.h>

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Two vendors change what glibc's loader does: Intel (the haswell / xeon_phi
 * platform) and Zhaoxin (AVX and AVX2 turned off on four models from 2.32,
 * cf_cpu_apply_zhaoxin_quirk). Hygon (whose CPUs come with DCUs) is an AMD
 * design; glibc treats it as AMD, and from 2.41 as a kind of its own that
 * differs in tuning only. Zhaoxin is "CentaurHauls" or "  Shanghai  ". */
enum cf_cpu_vendor {
    CF_CPU_VENDOR_UNKNOWN, CF_CPU_VENDOR_INTEL, CF_CPU_VENDOR_AMD, CF_CPU_VENDOR_HYGON, CF_CPU_VENDOR_ZHAOXIN,
    CF_CPU_VENDOR_OTHER
};

/* Named as glibc names them (the GLIBC_TUNABLES glibc.cpu.hwcaps spelling). */
enum cf_cpu_feature {
    CF_CPU_CMOV, CF_CPU_CX8, CF_CPU_SSE2,                           /* part of x86-64 */
    CF_CPU_CMPXCHG16B, CF_CPU_LAHF64_SAHF64, CF_CPU_POPCNT, CF_CPU_SSE3, CF_CPU_SSSE3,
    CF_CPU_SSE4_1, CF_CPU_SSE4_2,                                   /* x86-64-v2 */
    CF_CPU_AVX, CF_CPU_AVX2, CF_CPU_BMI1, CF_CPU_BMI2, CF_CPU_F16C, CF_CPU_FMA, CF_CPU_LZCNT,
    CF_CPU_MOVBE, CF_CPU_OSXSAVE,                                   /* x86-64-v3 */
    CF_CPU_AVX512F, CF_CPU_AVX512BW, CF_CPU_AVX512CD, CF_CPU_AVX512DQ, CF_CPU_AVX512VL, /* x86-64-v4 */
    CF_CPU_AVX512ER, CF_CPU_AVX512PF,                               /* Xeon Phi */
    CF_CPU_FEATURE_COUNT
};

struct cf_cpu_facts {
    int x86;                   /* 1: the facts below are known (an x86 CPU, probed or given) */
    enum cf_cpu_vendor vendor;
    uint64_t usable;           /* 1 << cf_cpu_feature for each usable feature */
    unsigned family, model;    /* as /proc/cpuinfo shows them (cpuid leaf 1); 0: not known */
    char source[96];           /* "cpuid", "--cpu amd,x86-64-v3", ", GLIBC_TUNABLES" appended */
};

/* This host's facts (x86: cpuid and xgetbv; elsewhere x86 = 0): the
 * registers glibc read at start-up where it exposes them, else cpuid. */
void cf_cpu_probe(struct cf_cpu_facts *out);

/* One way of probing, so that the two can be compared: cpuid itself (one
 * instruction per leaf), or the raw cpuid words glibc kept
 * (__x86_get_cpuid_feature_leaf, glibc 2.33+) and cpuid for the vendor
 * only. -1 when this build or CPU has no such way. */
enum cf_cpu_way { CF_CPU_FROM_CPUID, CF_CPU_FROM_GLIBC };
int cf_cpu_probe_from(enum cf_cpu_way way, struct cf_cpu_facts *out);

/* A spec, comma-separated: a vendor ("intel", "amd", "hygon", "zhaoxin",
 * "other", or "host" for this CPU's), then optionally a level ("x86-64-v1"
 * .. "x86-64-v4", "xeon-phi") replacing the features, "+FEATURE" /
 * "-FEATURE" changes, and "family=N" / "model=N" (decimal or 0x hex, as
 * /proc/cpuinfo shows them; "host" keeps this CPU's). A vendor alone keeps
 * this host's features. -1 with CF_ERR_USAGE naming the bad part. */
int cf_cpu_parse(const char *spec, const struct cf_cpu_facts *host, struct cf_cpu_facts *out, cf_error *err);

/* glibc.cpu.hwcaps=-AVX2,-BMI1 in a GLIBC_TUNABLES value clears those usable
 * bits, as the loader does (the "-NAME" form, for the names glibc accepts
 * there; "+NAME" cannot add what the CPU lacks and is ignored). `key` is
 * "glibc.cpu.hwcaps" or (2.26-2.28) "glibc.tune.hwcaps"; `split`: the
 * release before 2.33 whose platform test reads AVX2_Usable / FMA_Usable,
 * so those two are cleared by "-AVX2_Usable" / "-FMA_Usable" and not by
 * "-AVX2" / "-FMA". Returns 1 when something changed. */
int cf_cpu_apply_tunables(struct cf_cpu_facts *f, const char *glibc_tunables, const char *key, int split);

/* glibc 2.32+ (CF_GLIBC_ZHAOXIN_AVX_OFF) clears AVX and AVX2 on Zhaoxin
 * family 6 model 0x0f / 0x19 and family 7 model 0x1b / 0x3b, after the
 * features that need AVX were decided (FMA and F16C stay), so those hosts
 * are x86-64-v2 to its loader. Returns 1 when it changed something (and
 * says so in f->source). */
int cf_cpu_apply_zhaoxin_quirk(struct cf_cpu_facts *f);

/* GNU_PROPERTY_X86_ISA_1_* bits (1 baseline, 2 v2, 4 v3, 8 v4) as glibc's
 * get_isa_level computes them, and the highest level (0..4). */
unsigned cf_cpu_isa_bits(const struct cf_cpu_facts *f);
int cf_cpu_isa_level(const struct cf_cpu_facts *f);
int cf_cpu_has(const struct cf_cpu_facts *f, enum cf_cpu_feature feature);

const char *cf_cpu_vendor_name(enum cf_cpu_vendor v); /* "intel", "amd", "hygon", "zhaoxin", "other", "unknown" */
const char *cf_cpu_feature_name(enum cf_cpu_feature feature); /* "AVX2" */

#ifdef __cplusplus
}
#endif
#endif
