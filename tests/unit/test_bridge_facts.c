/* The ABI facts reader (cclforge/bridge_facts.h) on shared libraries the
 * compiler builds here with a cclforge_abi_info of the guard's layout, of
 * another size, of another magic, and without one. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/bridge_facts.h"
#include "cclforge/fs.h"

static const char layout[] =
    "#include <stdint.h>\n"
    "struct f { char magic[16]; int64_t s[4]; int32_t code, r; char nl[16], tg[64], cl[64], v[16], tv[32], tl[256]; "
    "EXTRA };\n"
    "__attribute__((visibility(\"default\"))) const struct f cclforge_abi_info = {\n"
    "    MAGIC, { 288, 280, 1184, -1 }, 23007, 0, \"2.30.7\", \"libtorch_hip.so\", \"librccl.so.1\", \"dtk\",\n"
    "    \"24.04.1\", \"librccl.so.1 libamdhip64.so.6\" };\n";

static char *lib(const char *dir, const char *name, const char *magic, const char *extra)
{
    char *src = cf_asprintf("#define MAGIC %s\n#define EXTRA %s\n%s", magic, extra, layout);
    char *out = cf_path_join(dir, name);
    ts_cc(dir, out, src, "-shared", "-fPIC", "-O2", NULL);
    free(src);
    return out;
}

static void test_facts_read_from_the_file(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *ok = lib(dir, "ok.so", "\"cclforge-abi/1\"", "");
    struct cf_bridge_facts f;
    const char *why = "unset";
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_bridge_facts_read_file(ok, &f, &why, &err), 0);
    assert_true(f.found);
    assert_null(why);
    assert_int_equal(f.options_size_headers, 288);
    assert_int_equal(f.options_size_libtorch, 280);
    assert_int_equal(f.process_group_size_headers, 1184);
    assert_int_equal(f.process_group_size_libtorch, -1);
    assert_int_equal(f.nccl_header_code, 23007);
    assert_string_equal(f.nccl_libtorch, "2.30.7");
    assert_string_equal(f.torch_gpu_lib, "libtorch_hip.so");
    assert_string_equal(f.comm_lib, "librccl.so.1");
    assert_string_equal(f.vendor, "dtk");
    assert_string_equal(f.toolkit_version, "24.04.1");
    assert_string_equal(f.toolkit_libs, "librccl.so.1 libamdhip64.so.6");

    char *size = lib(dir, "size.so", "\"cclforge-abi/1\"", "char extra[8];");
    assert_int_equal(cf_bridge_facts_read_file(size, &f, &why, &err), 0);
    assert_false(f.found);
    assert_non_null(strstr(why, "another size"));
    char *magic = lib(dir, "magic.so", "\"cclforge-abi/9\"", "");
    assert_int_equal(cf_bridge_facts_read_file(magic, &f, &why, &err), 0);
    assert_false(f.found);
    assert_non_null(strstr(why, "another magic"));
    char *none = cf_path_join(dir, "none.so");
    ts_cc(dir, none, "int plugin_helper(void) { return 1; }\n", "-shared", "-fPIC", NULL);
    assert_int_equal(cf_bridge_facts_read_file(none, &f, &why, &err), 0);
    assert_false(f.found);
    assert_non_null(strstr(why, "no cclforge_abi_info symbol"));
    char *junk = ts_write(dir, "junk.so", "not an ELF file at all");
    assert_int_equal(cf_bridge_facts_read_file(junk, &f, &why, &err), -1);
    cf_error_clear(&err);
    free(ok);
    free(size);
    free(magic);
    free(none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts_read_from_the_file),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
