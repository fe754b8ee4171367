/* The CPU probe against glibc's own view of this CPU: `ld.so
 * --list-diagnostics` (glibc 2.33+) prints the vendor kind, the raw cpuid
 * words, the active bits and isa_1 its loader decides by. Both ways of
 * probing (cpuid itself, the words glibc kept) must agree with it and with
 * each other, on Intel and AMD alike. */
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/cpufacts.h"
#include "cclforge/glibc.h"
#include "cclforge/ldso.h"
#include "cclforge/spawn.h"
#include "testsupport.h"

/* Where each feature's bit sits, as the Intel SDM / AMD APM and glibc's
 * sysdeps/x86/include/cpu-features.h place it: glibc's features[] index
 * (0 leaf 1, 1 leaf 7, 2 leaf 0x80000001), register (0 eax .. 3 edx), bit.
 * Written apart from the library's table on purpose: a wrong bit there
 * fails here. */
static const struct {
    enum cf_cpu_feature feature;
    unsigned index, reg, bit;
} where[] = {
    { CF_CPU_SSE3, 0, 2, 0 },      { CF_CPU_SSSE3, 0, 2, 9 },      { CF_CPU_FMA, 0, 2, 12 },
    { CF_CPU_CMPXCHG16B, 0, 2, 13 }, { CF_CPU_SSE4_1, 0, 2, 19 },  { CF_CPU_SSE4_2, 0, 2, 20 },
    { CF_CPU_MOVBE, 0, 2, 22 },    { CF_CPU_POPCNT, 0, 2, 23 },    { CF_CPU_OSXSAVE, 0, 2, 27 },
    { CF_CPU_AVX, 0, 2, 28 },      { CF_CPU_F16C, 0, 2, 29 },      { CF_CPU_CX8, 0, 3, 8 },
    { CF_CPU_CMOV, 0, 3, 15 },     { CF_CPU_SSE2, 0, 3, 26 },      { CF_CPU_BMI1, 1, 1, 3 },
    { CF_CPU_AVX2, 1, 1, 5 },      { CF_CPU_BMI2, 1, 1, 8 },       { CF_CPU_AVX512F, 1, 1, 16 },
    { CF_CPU_AVX512DQ, 1, 1, 17 }, { CF_CPU_AVX512PF, 1, 1, 26 },  { CF_CPU_AVX512ER, 1, 1, 27 },
    { CF_CPU_AVX512CD, 1, 1, 28 }, { CF_CPU_AVX512BW, 1, 1, 30 },  { CF_CPU_AVX512VL, 1, 1, 31 },
    { CF_CPU_LAHF64_SAHF64, 2, 2, 0 }, { CF_CPU_LZCNT, 2, 2, 5 },
};

static void expect_same(const struct cf_cpu_facts *a, const struct cf_cpu_facts *b)
{
    assert_int_equal(a->x86, b->x86);
    assert_int_equal(a->vendor, b->vendor);
    if (a->usable != b->usable)
        fail_msg("usable features differ: %s 0x%llx, %s 0x%llx", a->source, (unsigned long long)a->usable, b->source,
                 (unsigned long long)b->usable);
}

static void test_ways_agree(void **state)
{
    (void)state;
    struct cf_cpu_facts by_cpuid, by_glibc, probed;
    if (cf_cpu_probe_from(CF_CPU_FROM_CPUID, &by_cpuid) != 0) {
        print_message("not an x86 build: no cpuid\n");
        skip();
    }
    assert_true(by_cpuid.x86);
    assert_true(cf_cpu_has(&by_cpuid, CF_CPU_SSE2)); /* every x86-64 CPU */
    cf_cpu_probe(&probed);
    if (cf_cpu_probe_from(CF_CPU_FROM_GLIBC, &by_glibc) == 0) {
        expect_same(&by_glibc, &by_cpuid);
        expect_same(&probed, &by_glibc);
        assert_string_equal(probed.source, by_glibc.source);
    } else { /* glibc before 2.33: the probe is cpuid itself */
        expect_same(&probed, &by_cpuid);
        assert_string_equal(probed.source, "cpuid");
    }
}

/* "x86.cpu_features.features[0x1].active[0x1]=0xf1af0b38" -> the value; -1 if absent. */
static long long diag_value(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; (p = strstr(p, key)) != NULL; p += n)
        if ((p == text || p[-1] == '\n') && p[n] == '=')
            return strtoll(p + n + 1, NULL, 0);
    return -1;
}

static void test_matches_loader_diagnostics(void **state)
{
    (void)state;
    static const char loader[] = "/lib64/ld-linux-x86-64.so.2";
    struct cf_cpu_facts ways[2];
    if (cf_cpu_probe_from(CF_CPU_FROM_CPUID, &ways[0]) != 0 || access(loader, X_OK) != 0) {
        print_message("no x86-64 loader at %s\n", loader);
        skip();
    }
    int n_ways = cf_cpu_probe_from(CF_CPU_FROM_GLIBC, &ways[1]) == 0 ? 2 : 1;
    unsetenv("GLIBC_TUNABLES"); /* the probe reports the CPU before tunables; so must the loader */
    const char *argv[] = { loader, "--list-diagnostics", NULL };
    char *diag = cf_capture(argv, 30);
    if (!diag || diag_value(diag, "x86.cpu_features.basic.kind") < 0) {
        print_message("%s has no --list-diagnostics (glibc before 2.33)\n", loader);
        free(diag);
        skip();
    }
    long long kind = diag_value(diag, "x86.cpu_features.basic.kind");
    long long isa_1 = diag_value(diag, "x86.cpu_features.isa_1");
    /* enum cpu_features_kind (sysdeps/x86/include/cpu-features.h): Hygon was
     * arch_kind_amd until 2.41 made it a kind of its own, before "other"
     * (6b08116b2d) */
    static const enum cf_cpu_vendor kinds_before_2_41[] = { CF_CPU_VENDOR_UNKNOWN, CF_CPU_VENDOR_INTEL, CF_CPU_VENDOR_AMD,
                                                            CF_CPU_VENDOR_ZHAOXIN, CF_CPU_VENDOR_OTHER };
    static const enum cf_cpu_vendor kinds_from_2_41[] = { CF_CPU_VENDOR_UNKNOWN, CF_CPU_VENDOR_INTEL, CF_CPU_VENDOR_AMD,
                                                          CF_CPU_VENDOR_ZHAOXIN, CF_CPU_VENDOR_HYGON, CF_CPU_VENDOR_OTHER };
    struct cf_glibc libc;
    assert_int_equal(cf_glibc_parse(gnu_get_libc_version(), &libc, NULL), 0);
    int own_hygon = cf_glibc_compare(libc, (struct cf_glibc){ 2, 41 }) >= 0;
    const enum cf_cpu_vendor *by_kind = own_hygon ? kinds_from_2_41 : kinds_before_2_41;
    long long n_kinds = own_hygon ? 6 : 5;
    if (kind < 1 || kind >= n_kinds)
        fail_msg("the loader's kind %lld is none glibc %s has", kind, gnu_get_libc_version());
    for (int w = 0; w < n_ways; w++) {
        struct cf_cpu_facts *f = &ways[w];
        cf_ldso_cpu_as_loaded(f, libc, NULL); /* the vendor rules; the loader ran without tunables */
        enum cf_cpu_vendor v = f->vendor == CF_CPU_VENDOR_HYGON && !own_hygon ? CF_CPU_VENDOR_AMD : f->vendor;
        if (v != by_kind[kind])
            fail_msg("%s: vendor %s, the loader's kind %lld", f->source, cf_cpu_vendor_name(f->vendor), kind);
        for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
            char key[96];
            snprintf(key, sizeof key, "x86.cpu_features.features[0x%x].active[0x%x]", where[i].index, where[i].reg);
            long long word = diag_value(diag, key);
            assert_true(word >= 0);
            int active = (int)((unsigned long long)word >> where[i].bit & 1u);
            if (active != cf_cpu_has(f, where[i].feature))
                fail_msg("%s: %s is %s here, %s to the loader", f->source, cf_cpu_feature_name(where[i].feature),
                         cf_cpu_has(f, where[i].feature) ? "usable" : "not usable", active ? "active" : "inactive");
        }
        if (isa_1 >= 0 && (unsigned)isa_1 != cf_cpu_isa_bits(f))
            fail_msg("%s: isa_1 0x%x, the loader's 0x%llx", f->source, cf_cpu_isa_bits(f), isa_1);
    }
    free(diag);
}

/* The first "cpu family" / "model" of /proc/cpuinfo: the kernel's reading of leaf 1. */
static int cpuinfo_number(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; (p = strstr(p, key)) != NULL; p += n)
        if (p == text || p[-1] == '\n') {
            const char *q = p + n;
            while (*q == '\t' || *q == ' ')
                q++;
            if (*q == ':') /* "model\t\t: 143", not "model name" */
                return atoi(q + 1);
        }
    return -1;
}

static void test_family_and_model_as_the_kernel_reads_them(void **state)
{
    (void)state;
    struct cf_cpu_facts ways[2];
    FILE *fp = NULL;
    if (cf_cpu_probe_from(CF_CPU_FROM_CPUID, &ways[0]) != 0 || !(fp = fopen("/proc/cpuinfo", "r"))) {
        print_message("no cpuid or no /proc/cpuinfo\n");
        skip();
    }
    int n_ways = cf_cpu_probe_from(CF_CPU_FROM_GLIBC, &ways[1]) == 0 ? 2 : 1;
    static char info[1 << 16]; /* the first processor's block is enough */
    info[fread(info, 1, sizeof info - 1, fp)] = '\0';
    fclose(fp);
    int family = cpuinfo_number(info, "cpu family"), model = cpuinfo_number(info, "model");
    assert_true(family > 0 && model >= 0);
    for (int w = 0; w < n_ways; w++) {
        if (ways[w].family != (unsigned)family || ways[w].model != (unsigned)model)
            fail_msg("%s: family %u model %u, /proc/cpuinfo %d %d", ways[w].source, ways[w].family, ways[w].model,
                     family, model);
    }
}

/* glibc 2.32+ turns AVX and AVX2 off on exactly four Zhaoxin models. */
static void test_zhaoxin_quirk(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        int changed, level;
    } cases[] = {
        { "zhaoxin,x86-64-v3,family=7,model=0x3b", 1, 2 }, /* KX-7000 (Lujiazui) */
        { "zhaoxin,x86-64-v3,family=7,model=27", 1, 2 },   /* KH-40000 (Wudaokou), decimal */
        { "zhaoxin,x86-64-v3,family=6,model=0x0f", 1, 2 },
        { "zhaoxin,x86-64-v3,family=6,model=0x19", 1, 2 },
        { "zhaoxin,x86-64-v3,family=7,model=0x5b", 0, 3 }, /* Yongfeng: tuning only */
        { "zhaoxin,x86-64-v3,family=6,model=0x1b", 0, 3 },
        { "intel,x86-64-v3,family=7,model=0x3b", 0, 3 },   /* the model alone is not the rule */
        { "zhaoxin,x86-64-v2,family=7,model=0x3b", 0, 2 }, /* no AVX to turn off */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct cf_cpu_facts f;
        assert_int_equal(cf_cpu_parse(cases[i].spec, NULL, &f, NULL), 0);
        int changed = cf_cpu_apply_zhaoxin_quirk(&f);
        if (changed != cases[i].changed || cf_cpu_isa_level(&f) != cases[i].level)
            fail_msg("%s: changed %d, level %d; glibc: %d, %d", cases[i].spec, changed, cf_cpu_isa_level(&f),
                     cases[i].changed, cases[i].level);
        if (changed) { /* after update_active: what needed AVX stays */
            assert_false(cf_cpu_has(&f, CF_CPU_AVX) || cf_cpu_has(&f, CF_CPU_AVX2));
            assert_true(cf_cpu_has(&f, CF_CPU_FMA) && cf_cpu_has(&f, CF_CPU_F16C));
            assert_non_null(strstr(f.source, "Zhaoxin AVX off"));
        }
    }
}

static void test_spec_family_and_model(void **state)
{
    (void)state;
    struct cf_cpu_facts host = { .x86 = 1, .vendor = CF_CPU_VENDOR_AMD, .family = 0x19, .model = 0x11 }, f;
    assert_int_equal(cf_cpu_parse("host", &host, &f, NULL), 0);
    assert_int_equal(f.family, 0x19);
    assert_int_equal(f.model, 0x11);
    assert_int_equal(cf_cpu_parse("amd", &host, &f, NULL), 0); /* a named vendor: no model known */
    assert_int_equal(f.family, 0);
    static const char *const bad[] = { "zhaoxin,model=", "zhaoxin,model=0x", "zhaoxin,model=-1", "zhaoxin,model=0x100",
                                       "zhaoxin,family=0x110", "zhaoxin,model=7b", "zhaoxin,modl=7" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cf_error err = CF_ERROR_INIT;
        if (cf_cpu_parse(bad[i], &host, &f, &err) == 0)
            fail_msg("--cpu %s was taken", bad[i]);
        assert_int_equal(err.kind, CF_ERR_USAGE);
        assert_non_null(strstr(cf_error_message(&err), bad[i] + 8)); /* names the bad part */
        cf_error_clear(&err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ways_agree),
        cmocka_unit_test(test_matches_loader_diagnostics),
        cmocka_unit_test(test_family_and_model_as_the_kernel_reads_them),
        cmocka_unit_test(test_zhaoxin_quirk),
        cmocka_unit_test(test_spec_family_and_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
