/* GPU arch parsing, normalization, toolkit tables and NVCC_GENCODE. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/arch.h"
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
    if (!ts_have("/usr/local/cuda/bin/nvcc"))
        skip();
    const char *argv[] = { "/usr/local/cuda/bin/nvcc", "--list-gpu-arch", NULL };
    char *list = cf_capture(argv, 30);
    assert_non_null(list);
    char *msg = NULL;
    int rc61 = check("6.1", "13.0", list, &msg);
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
    assert_int_equal(cf_cuda_version_code("x"), -1);
    assert_int_equal(cf_cuda_version_code(NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms_normalize),      cmocka_unit_test(test_rejects_with_reason),
        cmocka_unit_test(test_toolkit_table),        cmocka_unit_test(test_nvcc_list_is_authority),
        cmocka_unit_test(test_real_nvcc_rejects_pascal), cmocka_unit_test(test_gencode_like_nccl),
        cmocka_unit_test(test_cuda_version_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
