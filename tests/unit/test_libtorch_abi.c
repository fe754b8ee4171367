/* The libtorch ABI reader on libraries g++ builds here from
 * tests/fixtures/libtorch_abi/pg_like.cpp (ProcessGroupNCCL-shaped classes):
 * the sizes it reads from the deleting destructors equal sizeof() as the
 * compiler computed it (asked through dlopen of the same library), at -O2,
 * -O2 -fno-plt and -O0; the NCCL version code the Options constructor embeds;
 * unknown facts say why; wheel verify's abi check against those libraries.
 * The real torch wheel is covered by
 * tests/cli/bridge_torch.sh. */
#include "testsupport.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/libtorch_abi.h"
#include "cclforge/strbuf.h"
#include "cclforge/wheel.h"
#include "pkg/wheel_verify_internal.h"

#define FIXTURE CCLFORGE_SOURCE_DIR "/tests/fixtures/libtorch_abi/pg_like.cpp"

static int teardown(void **state)
{
    (void)state;
    ts_cleanup();
    return 0;
}

/* Builds the fixture with extra flags (NULL-terminated) and returns its path. */
static char *build(const char *dir, const char *name, ...)
{
    char *out = cf_path_join(dir, name);
    struct strvec argv = STRVEC_INIT;
    cf_strvec_push(&argv, getenv("CXX") && *getenv("CXX") ? getenv("CXX") : "g++");
    cf_strvec_push(&argv, "-shared");
    cf_strvec_push(&argv, "-fPIC");
    va_list ap;
    va_start(ap, name);
    for (const char *f; (f = va_arg(ap, const char *)) != NULL;)
        cf_strvec_push(&argv, f);
    va_end(ap);
    cf_strvec_push(&argv, "-o");
    cf_strvec_push(&argv, out);
    cf_strvec_push(&argv, FIXTURE);
    ts_run_ok((const char *const *)cf_strvec_argv(&argv));
    cf_strvec_clear(&argv);
    return out;
}

static void compiler_sizes(const char *lib, size_t *options, size_t *pg)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    void (*sizes)(size_t *, size_t *) = (void (*)(size_t *, size_t *))dlsym(h, "fixture_sizes");
    void (*roundtrip)(void) = (void (*)(void))dlsym(h, "fixture_roundtrip");
    assert_non_null(sizes);
    sizes(options, pg);
    roundtrip(); /* the destructors read below really run */
    dlclose(h);
}

static void expect_sizes(const char *lib)
{
    size_t options, pg;
    compiler_sizes(lib, &options, &pg);
    struct cf_libtorch_abi abi;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_libtorch_abi_read(lib, NULL, &abi, &err), 0);
    if (abi.options_size != (long)options || abi.process_group_size != (long)pg)
        fail_msg("%s: read %ld/%ld (%s; %s), compiler says %zu/%zu", lib, abi.options_size, abi.process_group_size,
                 abi.options_from, abi.process_group_from, options, pg);
    assert_non_null(strstr(abi.options_from, "operator delete(p, "));
    cf_libtorch_abi_release(&abi);
}

static void test_sizes_optimised(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *a = build(dir, "libtorch_o2.so", "-O2", "-DOPT_PAD=136", "-DPG_PAD=1000", NULL);
    char *b = build(dir, "libtorch_o2b.so", "-O2", "-DOPT_PAD=152", "-DPG_PAD=1016", NULL);
    expect_sizes(a);
    expect_sizes(b);
    /* the two differ by 16 bytes each, as a 16-byte-longer ncclConfig_t would make them */
    struct cf_libtorch_abi x, y;
    assert_int_equal(cf_libtorch_abi_read(a, NULL, &x, NULL), 0);
    assert_int_equal(cf_libtorch_abi_read(b, NULL, &y, NULL), 0);
    assert_int_equal(y.options_size - x.options_size, 16);
    cf_libtorch_abi_release(&x);
    cf_libtorch_abi_release(&y);
    free(a);
    free(b);
}

static void test_sizes_no_plt_and_unoptimised(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *a = build(dir, "libtorch_noplt.so", "-O2", "-fno-plt", NULL);
    char *b = build(dir, "libtorch_o0.so", "-O0", NULL);
    expect_sizes(a);
    expect_sizes(b);
    free(a);
    free(b);
}

static void test_nccl_code_from_constructor(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *a = build(dir, "libtorch_23007.so", "-O2", "-DNCCL_CODE=23007", NULL);
    char *b = build(dir, "libtorch_21803.so", "-O0", "-DNCCL_CODE=21803", NULL);
    struct cf_libtorch_abi abi;
    assert_int_equal(cf_libtorch_abi_read(a, NULL, &abi, NULL), 0);
    assert_int_equal(abi.nccl_code, 23007);
    assert_string_equal(abi.nccl_version, "2.30.7");
    assert_non_null(strstr(abi.nccl_from, "ncclConfig_t initializer"));
    cf_libtorch_abi_release(&abi);
    assert_int_equal(cf_libtorch_abi_read(b, NULL, &abi, NULL), 0);
    assert_int_equal(abi.nccl_code, 21803);
    assert_string_equal(abi.nccl_version, "2.18.3");
    cf_libtorch_abi_release(&abi);
    free(a);
    free(b);
}

/* wheel verify's abi check: the ABI facts' header sizes and NCCL versions
 * against the libtorch file named (its sizes read from its machine code); any
 * difference fails, naming both numbers. */
static const struct cf_wheel_check *abi_check(const char *lib, long opt, long pg, const char *nh, const char *nr,
                                              struct cf_wheel_verify_result *res)
{
    memset(res, 0, sizeof *res);
    cJSON *abi = cJSON_CreateObject();
    cJSON_AddNumberToObject(abi, "options_size_headers", (double)opt);
    cJSON_AddNumberToObject(abi, "process_group_size_headers", (double)pg);
    cJSON_AddStringToObject(abi, "libtorch_file", lib);
    cJSON_AddStringToObject(abi, "nccl_header", nh);
    cJSON_AddStringToObject(abi, "nccl_runtime", nr);
    cf_wheel_bridge_abi_check(res, opt < 0 ? NULL : abi);
    cJSON_Delete(abi);
    assert_int_equal(res->n_checks, 1);
    assert_string_equal(res->checks[0].name, "abi");
    return &res->checks[0];
}

static void test_wheel_abi_check_fails_on_any_difference(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *lib = build(dir, "libtorch_cuda.so", "-O2", NULL);
    size_t opt, pg;
    compiler_sizes(lib, &opt, &pg);
    struct cf_wheel_verify_result res;
    const struct cf_wheel_check *c = abi_check(lib, (long)opt, (long)pg, "2.30.7", "2.30.7", &res);
    assert_int_equal(c->ok, 1);
    cf_wheel_verify_result_release(&res);
    /* 2.28.9's ncclConfig_t is 16 bytes shorter: the bug this check exists for */
    c = abi_check(lib, (long)opt - 16, (long)pg, "2.28.9", "2.30.7", &res);
    assert_int_equal(c->ok, 0);
    char *want = cf_asprintf("ProcessGroupNCCL::Options is %zu bytes in the bridge's headers but %zu in", opt - 16, opt);
    assert_non_null(strstr(c->detail, want));
    assert_non_null(strstr(c->detail, "nccl.h was NCCL 2.28.9 but the library loaded is 2.30.7"));
    assert_non_null(strstr(c->detail, "loaded libtorch's ProcessGroupNCCL was compiled with 2.30.7"));
    free(want);
    cf_wheel_verify_result_release(&res);
    c = abi_check(lib, (long)opt, (long)pg + 8, "2.30.7", "2.30.7", &res);
    assert_int_equal(c->ok, 0);
    assert_non_null(strstr(c->detail, "ProcessGroupNCCL is "));
    cf_wheel_verify_result_release(&res);
    /* a plugin's bridge not built by cclforge: a warning that says what is unknown, never "older cclforge" */
    c = abi_check(lib, -1, -1, "2.30.7", "2.30.7", &res);
    assert_int_equal(c->ok, -1);
    assert_int_equal(res.failed, 0);
    assert_non_null(strstr(c->detail, "warning: no ABI facts (the module has no cclforge_abi_info symbol"));
    assert_non_null(strstr(c->detail, "a mismatch would corrupt memory at run time"));
    assert_null(strstr(c->detail, "older cclforge"));
    cf_wheel_verify_result_release(&res);
    free(lib);
}

/* A libtorch with a static NCCL older than ncclConfig_t: the copy's banner
 * names the version, and wins over the dist-info pin beside it. */
static void test_static_banner(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *lib = build(dir, "libtorch_static.so", "-O2", "-DSTATIC_NCCL=\"2.10.3+cuda11.3\"", NULL);
    ts_write(dir, "site/torch/version.py", "__version__ = '1.11.0'\n");
    ts_write(dir, "site/torch-1.11.0.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: torch\nVersion: 1.11.0\nRequires-Dist: nvidia-nccl-cu11==2.99.9\n\n");
    char *torch = cf_path_join(dir, "site/torch");
    struct cf_libtorch_abi abi;
    assert_int_equal(cf_libtorch_abi_read(lib, torch, &abi, NULL), 0);
    assert_int_equal(abi.nccl_code, 21003);
    assert_string_equal(abi.nccl_version, "2.10.3");
    assert_non_null(strstr(abi.nccl_from, "NCCL banner embedded in libtorch_static.so"));
    assert_true(abi.options_size > 0);
    cf_libtorch_abi_release(&abi);
    free(torch);
    free(lib);
}

/* A library without ProcessGroupNCCL: every fact unknown, each saying why; the
 * dist-info pin next to a torch directory is the version's last source. */
static void test_unknown_and_pin(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    const char *lib = ts_cc(dir, "libplain.so", "int f(void) { return 1; }\n", "-shared", "-fPIC", NULL);
    ts_write(dir, "site/torch/version.py", "__version__ = '2.15.0'\n");
    ts_write(dir, "site/torch-2.15.0.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0\n"
             "Requires-Dist: nvidia-nccl-cu13==2.30.7; platform_system == \"Linux\"\n\n");
    char *torch = cf_path_join(dir, "site/torch");
    struct cf_libtorch_abi abi;
    assert_int_equal(cf_libtorch_abi_read(lib, NULL, &abi, NULL), 0);
    assert_int_equal(abi.options_size, -1);
    assert_int_equal(abi.process_group_size, -1);
    assert_non_null(strstr(abi.options_from, "exports no _ZTVN4c10d16ProcessGroupNCCL7OptionsE"));
    assert_int_equal(abi.nccl_code, 0);
    assert_null(abi.nccl_version);
    assert_non_null(strstr(abi.nccl_from, "Options::Options(bool)"));
    cf_libtorch_abi_release(&abi);
    assert_int_equal(cf_libtorch_abi_read(lib, torch, &abi, NULL), 0);
    assert_string_equal(abi.nccl_version, "2.30.7");
    assert_int_equal(abi.nccl_code, 23007);
    assert_non_null(strstr(abi.nccl_from, "pin"));
    cf_libtorch_abi_release(&abi);
    cf_error err = CF_ERROR_INIT;
    char *missing = cf_path_join(dir, "nope.so");
    assert_int_equal(cf_libtorch_abi_read(missing, NULL, &abi, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "nope.so"));
    cf_error_clear(&err);
    free(missing);
    free(torch);
}

static void test_code_version_text(void **state)
{
    (void)state;
    char *v = cf_nccl_code_version(23007);
    assert_string_equal(v, "2.30.7");
    free(v);
    v = cf_nccl_code_version(2804);
    assert_string_equal(v, "2.8.4");
    free(v);
    assert_int_equal(cf_nccl_version_code(2, 28, 9), 22809);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sizes_optimised, teardown),
        cmocka_unit_test_teardown(test_sizes_no_plt_and_unoptimised, teardown),
        cmocka_unit_test_teardown(test_nccl_code_from_constructor, teardown),
        cmocka_unit_test_teardown(test_static_banner, teardown),
        cmocka_unit_test_teardown(test_wheel_abi_check_fails_on_any_difference, teardown),
        cmocka_unit_test_teardown(test_unknown_and_pin, teardown),
        cmocka_unit_test_teardown(test_code_version_text, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
