/* The GPU arch module: parsing, order, the coverage rule (checked against
 * nvcc's own compatibility checks), toolkit tables and NVCC_GENCODE. */
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/arch.h"
#include "cclforge/fs.h"
#include "cclforge/spawn.h"

static char *parse_joined(const char *text, int *ptx)
{
    struct cf_arch_list l = CF_ARCH_LIST_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_arch_list_parse(&l, text, &err) < 0) {
        cf_error_clear(&err);
        cf_arch_list_release(&l);
        return NULL;
    }
    struct strbuf sb = STRBUF_INIT;
    cf_arch_list_join(&l, ";", &sb);
    if (ptx)
        *ptx = l.ptx_requested;
    cf_arch_list_release(&l);
    return cf_sb_detach(&sb);
}

static void test_forms_normalize(void **state)
{
    static const struct {
        const char *in, *out;
        int ptx;
    } rows[] = {
        { "6.1;12.0", "sm_61;sm_120", 0 },
        { "sm_61,sm_120", "sm_61;sm_120", 0 },
        { "SM_120 sm_61", "sm_61;sm_120", 0 },       /* sorted, case-folded */
        { "8.6+PTX", "sm_86", 1 },
        { "compute_90;sm90;90", "sm_90", 0 },         /* duplicates collapse */
        { "10.0;10.3;11.0;12.1", "sm_100;sm_103;sm_110;sm_121", 0 },
        { "gfx942;gfx90a", "gfx90a;gfx942", 0 },
        { "gfx90a:xnack-", "gfx90a", 0 },
        { "Ampere", "sm_80;sm_86", 1 },               /* TORCH_CUDA_ARCH_LIST family names */
        { " 7.5 ; 9.0 ", "sm_75;sm_90", 0 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int ptx = -1;
        char *got = parse_joined(rows[i].in, &ptx);
        if (!got)
            fail_msg("'%s' was rejected", rows[i].in);
        assert_string_equal(got, rows[i].out);
        assert_int_equal(ptx, rows[i].ptx);
        free(got);
    }
}

static void test_rejects_with_reason(void **state)
{
    static const struct {
        const char *in, *needle;
    } rows[] = {
        { "6.15", "unknown GPU arch" },  { "sm_65", "unknown GPU arch" },   { "gfx9999", "unknown GPU arch" },
        { "banana", "sm_61,sm_120" },    { "", "no GPU archs" },            { "sm_75;gfx90a", "mixes NVIDIA and AMD" },
        { "gfx90a+PTX", "NVIDIA archs only" }, { "1.0", "unknown GPU arch" },
        { "sm_90a", "give the plain arch (sm_90)" }, { "lto_90", "unknown GPU arch" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct cf_arch_list l = CF_ARCH_LIST_INIT;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(cf_arch_list_parse(&l, rows[i].in, &err), -1);
        assert_int_equal(err.kind, CF_ERR_USAGE);
        if (!strstr(cf_error_message(&err), rows[i].needle))
            fail_msg("'%s': message '%s' lacks '%s'", rows[i].in, cf_error_message(&err), rows[i].needle);
        cf_error_clear(&err);
        cf_arch_list_release(&l);
    }
}

static int check(const char *archs, const char *cuda, const char *nvcc_list, char **msg)
{
    struct cf_arch_list l = CF_ARCH_LIST_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_arch_list_parse(&l, archs, &err), 0);
    int rc = cf_arch_check_cuda(&l, cuda, nvcc_list, &err);
    *msg = rc < 0 ? cf_strdup(cf_error_message(&err)) : NULL;
    cf_error_clear(&err);
    cf_arch_list_release(&l);
    return rc;
}

static void test_toolkit_table(void **state)
{
    static const struct {
        const char *archs, *cuda;
        int ok;
        const char *needle;
    } rows[] = {
        { "6.1;12.0", "13.0", 0, "before sm_75" }, /* CUDA 13 dropped Pascal */
        { "6.1;12.0", "12.8", 1, NULL },
        { "12.0", "12.6", 0, "needs CUDA 12.8" },
        { "10.1", "13.0", 0, "renamed sm_101 to sm_110" },
        { "11.0", "12.9", 0, "needs CUDA 13.0" },
        { "7.5;9.0", "13.0", 1, NULL },
        { "3.5", "12.0", 0, "removed in CUDA 12.0" },
        { "7.0", "11.8", 1, NULL },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *msg = NULL;
        int rc = check(rows[i].archs, rows[i].cuda, NULL, &msg);
        if ((rc == 0) != rows[i].ok)
            fail_msg("%s with CUDA %s: expected %s, got %s", rows[i].archs, rows[i].cuda, rows[i].ok ? "ok" : "reject",
                     msg ? msg : "ok");
        if (rows[i].needle && !strstr(msg, rows[i].needle))
            fail_msg("%s with CUDA %s: '%s' lacks '%s'", rows[i].archs, rows[i].cuda, msg, rows[i].needle);
        free(msg);
    }
}

static void test_nvcc_list_is_authority(void **state)
{
    char *msg = NULL;
    /* the list a CUDA 13.0 nvcc prints */
    const char *list = "compute_75 compute_80 compute_86 compute_87 compute_88 compute_89 compute_90 compute_100 "
                       "compute_110 compute_103 compute_120 compute_121";
    assert_int_equal(check("7.5;12.1", "13.0", list, &msg), 0);
    assert_int_equal(check("6.1", "13.0", list, &msg), -1);
    assert_non_null(strstr(msg, "lacks compute_61"));
    free(msg);
    /* the list wins over the table: an nvcc that lists compute_61 can build it */
    assert_int_equal(check("6.1", "13.0", "compute_61 compute_75", &msg), 0);
}

static void test_real_nvcc_rejects_pascal(void **state)
{
    const char *nvcc = ts_cuda_tool("nvcc");
    long v = ts_cuda_version();
    if (!nvcc || v <= 0)
        skip();
    const char *argv[] = { nvcc, "--list-gpu-arch", NULL };
    char *list = cf_capture(argv, 30);
    assert_non_null(list);
    char *msg = NULL;
    char version[32];
    snprintf(version, sizeof version, "%ld.%ld", v / 1000, v % 1000 / 10);
    int rc61 = check("6.1", version, list, &msg);
    free(msg);
    msg = NULL;
    /* whatever the installed CUDA, sm_90 is in its list and compute_61 is not in CUDA 13 */
    assert_int_equal(check("9.0", NULL, list, &msg), 0);
    if (strstr(list, "compute_61") == NULL)
        assert_int_equal(rc61, -1);
    free(list);
}

static void test_gencode_like_nccl(void **state)
{
    struct cf_arch_list l = CF_ARCH_LIST_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_arch_list_parse(&l, "12.0;6.1", &err), 0);
    struct strbuf g = STRBUF_INIT;
    cf_arch_nvcc_gencode(&l, 1, &g);
    assert_string_equal(cf_sb_str(&g), "-gencode=arch=compute_61,code=sm_61 -gencode=arch=compute_120,code=sm_120 "
                                    "-gencode=arch=compute_120,code=compute_120");
    cf_sb_reset(&g);
    cf_arch_nvcc_gencode(&l, 0, &g);
    assert_string_equal(cf_sb_str(&g), "-gencode=arch=compute_61,code=sm_61 -gencode=arch=compute_120,code=sm_120");
    cf_sb_reset(&g);
    cf_arch_list_dirname(&l, &g);
    assert_string_equal(cf_sb_str(&g), "sm61-sm120");
    cf_sb_release(&g);
    cf_arch_list_release(&l);
    assert_int_equal(cf_arch_list_parse(&l, "gfx942,gfx90a", &err), 0);
    cf_arch_list_dirname(&l, &g);
    assert_string_equal(cf_sb_str(&g), "gfx90a-gfx942");
    cf_sb_release(&g);
    cf_arch_list_release(&l);
}

static void test_cuda_version_code(void **state)
{
    assert_int_equal(cf_cuda_version_code("13.0"), 13000);
    assert_int_equal(cf_cuda_version_code("12.8"), 12080);
    assert_int_equal(cf_cuda_version_code("11"), 11000);
    assert_int_equal(cf_cuda_version_code("12.4.1"), 12040);
    assert_int_equal(cf_cuda_version_code("x"), 0);
    assert_int_equal(cf_cuda_version_code(NULL), 0);
}

/* Every form names one arch; the canonical name, family, code kind, number and
 * variant come out the same whoever wrote it. */
static void test_parse_every_form(void **state)
{
    static const struct {
        const char *in, *name;
        enum cf_arch_family family;
        enum cf_arch_code code;
        unsigned number;
        char variant;
    } rows[] = {
        { "6.1", "sm_61", CF_ARCH_NVIDIA, CF_CODE_SASS, 61, 0 },
        { "12.0", "sm_120", CF_ARCH_NVIDIA, CF_CODE_SASS, 120, 0 },
        { "61", "sm_61", CF_ARCH_NVIDIA, CF_CODE_SASS, 61, 0 },
        { "SM_90A", "sm_90a", CF_ARCH_NVIDIA, CF_CODE_SASS, 90, 'a' },
        { "sm90", "sm_90", CF_ARCH_NVIDIA, CF_CODE_SASS, 90, 0 },
        { "compute_120f", "compute_120f", CF_ARCH_NVIDIA, CF_CODE_PTX, 120, 'f' },
        { "lto_90", "lto_90", CF_ARCH_NVIDIA, CF_CODE_LTOIR, 90, 0 },
        { "sm_130", "sm_130", CF_ARCH_NVIDIA, CF_CODE_SASS, 130, 0 }, /* unknown to the tables, still an arch */
        { " gfx90a:xnack- ", "gfx90a", CF_ARCH_AMD, CF_CODE_SASS, 0x90a, 0 },
        { "gfx1100", "gfx1100", CF_ARCH_AMD, CF_CODE_SASS, 0xb00, 0 },
        { "gfx9-generic", "gfx9-generic", CF_ARCH_AMD, CF_CODE_SASS, 0, 0 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct cf_arch a;
        cf_error err = CF_ERROR_INIT;
        if (cf_arch_parse(rows[i].in, &a, &err) < 0)
            fail_msg("'%s' rejected: %s", rows[i].in, cf_error_message(&err));
        assert_string_equal(a.name, rows[i].name);
        assert_int_equal(a.family, rows[i].family);
        assert_int_equal(a.code, rows[i].code);
        assert_int_equal(rows[i].family == CF_ARCH_AMD ? a.gfx : a.sm, rows[i].number);
        assert_int_equal(a.variant, rows[i].variant);
    }
    static const char *const bad[] = { "", "sm_", "sm_9", "sm_90b", "90a", "6.15", "compute_x", "gfxzz", "gfx90a1x",
                                       "banana", "sm_123456" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct cf_arch a;
        cf_error err = CF_ERROR_INIT;
        if (cf_arch_parse(bad[i], &a, &err) == 0)
            fail_msg("'%s' parsed as %s", bad[i], a.name);
        assert_int_equal(err.kind, CF_ERR_USAGE);
        assert_non_null(strstr(cf_error_message(&err), "unknown GPU arch"));
        cf_error_clear(&err);
    }
}

static int cmp_names(const void *pa, const void *pb)
{
    struct cf_arch a, b;
    assert_int_equal(cf_arch_parse(*(const char *const *)pa, &a, NULL), 0);
    assert_int_equal(cf_arch_parse(*(const char *const *)pb, &b, NULL), 0);
    return cf_arch_cmp(&a, &b);
}

static void test_one_order(void **state)
{
    const char *v[] = { "gfx1100", "sm_90a", "compute_90", "sm_120", "gfx90a", "sm_61", "sm_90", "gfx906", "sm_100f",
                        "lto_90", "gfx942" };
    const char *want[] = { "sm_61", "sm_90", "compute_90", "lto_90", "sm_90a", "sm_100f", "sm_120",
                           "gfx906", "gfx90a", "gfx942", "gfx1100" };
    qsort(v, sizeof v / sizeof v[0], sizeof v[0], cmp_names);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        assert_string_equal(v[i], want[i]);
}

/* The coverage rule, case by case (CUDA Programming Guide; docs/gpucode.md). */
static void test_fit_rule(void **state)
{
    static const struct {
        const char *code, *gpu;
        enum cf_arch_fit fit;
    } rows[] = {
        { "sm_80", "sm_86", CF_FIT_NATIVE },    /* same major, minor not below */
        { "sm_86", "sm_80", CF_FIT_NONE },      /* never backwards */
        { "sm_86", "sm_89", CF_FIT_NATIVE },
        { "sm_80", "sm_90", CF_FIT_NONE },      /* never across majors */
        { "sm_120", "sm_121", CF_FIT_NATIVE },
        { "sm_121", "sm_120", CF_FIT_NONE },
        { "sm_90a", "sm_90", CF_FIT_NATIVE },   /* arch-specific: that arch only */
        { "sm_100a", "sm_103", CF_FIT_NONE },
        { "sm_100f", "sm_100", CF_FIT_NATIVE }, /* family: same major, minor not below */
        { "sm_100f", "sm_103", CF_FIT_NATIVE },
        { "sm_103f", "sm_100", CF_FIT_NONE },
        { "sm_100f", "sm_110", CF_FIT_NONE },
        { "sm_120f", "sm_121", CF_FIT_NATIVE },
        { "compute_90", "sm_120", CF_FIT_JIT }, /* PTX: every GPU at or above */
        { "compute_80", "sm_86", CF_FIT_JIT },
        { "compute_90", "sm_86", CF_FIT_NONE },
        { "compute_90a", "sm_90", CF_FIT_JIT },
        { "compute_90a", "sm_100", CF_FIT_NONE },
        { "compute_100f", "sm_103", CF_FIT_JIT },
        { "compute_100f", "sm_110", CF_FIT_NONE },
        { "compute_120f", "sm_121", CF_FIT_JIT },
        { "lto_90", "sm_90", CF_FIT_NONE },     /* nvJitLink's input, not the driver's */
        { "gfx90a:xnack-", "gfx90a", CF_FIT_NATIVE },
        { "gfx90a", "gfx942", CF_FIT_NONE },
        { "sm_90", "gfx90a", CF_FIT_NONE },
        { "gfx906", "sm_61", CF_FIT_NONE },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct cf_arch c, g;
        assert_int_equal(cf_arch_parse(rows[i].code, &c, NULL), 0);
        assert_int_equal(cf_arch_parse(rows[i].gpu, &g, NULL), 0);
        if (cf_arch_fit(&c, &g) != rows[i].fit)
            fail_msg("%s on %s: fit %d, expected %d", rows[i].code, rows[i].gpu, cf_arch_fit(&c, &g), rows[i].fit);
    }
    struct strvec code = STRVEC_INIT;
    cf_strvec_push(&code, "sm_80");
    cf_strvec_push(&code, "compute_90");
    cf_strvec_push(&code, "not-an-arch");
    assert_int_equal(cf_arch_best_fit(&code, "sm_86"), CF_FIT_NATIVE);
    assert_int_equal(cf_arch_best_fit(&code, "sm_120"), CF_FIT_JIT);
    assert_int_equal(cf_arch_best_fit(&code, "sm_75"), CF_FIT_NONE);
    assert_int_equal(cf_arch_covered(&code, "sm_75"), 0);
    assert_int_equal(cf_arch_covered(&code, "banana"), 0);
    cf_strvec_clear(&code);
}

/* The PTX half of the rule against an independent oracle: nvcc refuses to
 * compile PTX of one arch into machine code for a GPU it cannot serve
 * ("Incompatible code generation requested"). Plain and family PTX only: nvcc
 * also assembles compute_90a for sm_100a, which the Programming Guide rules out
 * for running ('a' code runs on that arch alone). */
static void test_real_nvcc_agrees_on_ptx(void **state)
{
    const char *nvcc = ts_cuda_tool("nvcc");
    if (!nvcc)
        skip();
    char *dir = ts_tmpdir();
    char *src = cf_path_join(dir, "k.cu");
    ts_write(dir, "k.cu", "__global__ void k(void) {}\n");
    static const char *const gpus[] = { "75", "80", "86", "89", "90", "100", "103", "110", "120", "121" };
    static const char *const ptx[] = { "compute_75", "compute_86", "compute_90", "compute_100", "compute_100f",
                                       "compute_103f", "compute_110f", "compute_120", "compute_120f", "compute_121f" };
    size_t checked = 0;
    for (size_t p = 0; p < sizeof ptx / sizeof ptx[0]; p++)
        for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
            char *gencode = cf_asprintf("arch=%s,code=sm_%s", ptx[p], gpus[g]);
            const char *argv[] = { nvcc, "--dryrun", "-c", src, "-o", "/dev/null", "-gencode", gencode, NULL };
            struct cf_spawn_opts o = cf_spawn_probe_opts(30);
            struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
            assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
            int nvcc_ok = cf_spawn_ok(&r);
            int unknown = strstr(cf_sb_str(&r.err), "Unsupported gpu architecture") != NULL;
            cf_spawn_result_release(&r);
            free(gencode);
            if (unknown)
                continue; /* an older nvcc: not this arch */
            struct cf_arch c, gpu;
            char gname[16];
            snprintf(gname, sizeof gname, "sm_%s", gpus[g]);
            assert_int_equal(cf_arch_parse(ptx[p], &c, NULL), 0);
            assert_int_equal(cf_arch_parse(gname, &gpu, NULL), 0);
            int ours = cf_arch_fit(&c, &gpu) == CF_FIT_JIT;
            if (ours != nvcc_ok)
                fail_msg("%s for %s: nvcc %s it, cclforge says %s", ptx[p], gname, nvcc_ok ? "accepts" : "refuses",
                         ours ? "it runs (JIT)" : "it cannot run");
            checked++;
        }
    assert_true(checked > 50);
    free(src);
    ts_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms_normalize),      cmocka_unit_test(test_rejects_with_reason),
        cmocka_unit_test(test_toolkit_table),        cmocka_unit_test(test_nvcc_list_is_authority),
        cmocka_unit_test(test_real_nvcc_rejects_pascal), cmocka_unit_test(test_gencode_like_nccl),
        cmocka_unit_test(test_cuda_version_code),    cmocka_unit_test(test_parse_every_form),
        cmocka_unit_test(test_one_order),            cmocka_unit_test(test_fit_rule),
        cmocka_unit_test(test_real_nvcc_agrees_on_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
