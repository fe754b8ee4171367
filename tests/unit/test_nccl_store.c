/* The installed-builds store: list, activate, remove, env coverage. Builds are
 * laid out by hand here (manifest + lib), so no toolkit is needed; the real
 * build path is tests/cli/nccl_build.sh. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/nccl_build.h"

static void fake_build(const char *root, const char *name, const char *sass, const char *ptx)
{
    char *dir = cf_asprintf("%s/nccl/builds/%s", root, name);
    char *manifest = cf_asprintf("{\"schema\":\"cclforge.nccl-manifest/1\",\"name\":\"%s\",\"tag\":\"v2.28.9-1\","
                                 "\"version\":\"2.28.9\",\"version_code\":22809,\"archs\":[%s],\"ptx\":%s,"
                                 "\"cuda_version\":\"13.0\",\"library\":\"lib/libnccl.so.2.28.9\",\"sass\":[%s],"
                                 "\"ptx_archs\":[%s],\"build_seconds\":12.5}",
                                 name, sass, *ptx ? "true" : "false", sass, ptx);
    ts_write(dir, "manifest.json", manifest);
    ts_write(dir, "lib/libnccl.so.2.28.9", "not really a library");
    free(manifest);
    free(dir);
}

static void test_list_activate_remove(void **state)
{
    char *root = ts_tmpdir();
    struct cf_nccl_install_list l;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_store_list(root, &l, &err), 0); /* no tree yet: empty, not an error */
    assert_int_equal(l.n, 0);
    fake_build(root, "v2.28.9-sm90", "\"sm_90\"", "\"compute_90\"");
    fake_build(root, "v2.28.9-sm75-sm90", "\"sm_75\",\"sm_90\"", "");
    char *staging = cf_asprintf("%s/nccl/builds/.staging-v2.28.9-sm80-abc123", root);
    assert_int_equal(cf_mkdir_p(staging, 0755, &err), 0);
    char *broken = cf_asprintf("%s/nccl/builds/v1.0.0-broken", root);
    assert_int_equal(cf_mkdir_p(broken, 0755, &err), 0);
    assert_int_equal(cf_nccl_store_list(root, &l, &err), 0);
    assert_int_equal(l.n, 2); /* staging and manifest-less dirs are not builds */
    assert_string_equal(l.v[0].name, "v2.28.9-sm75-sm90");
    assert_string_equal(l.v[0].archs, "sm_75;sm_90");
    assert_int_equal(l.v[0].version_code, 22809);
    assert_int_equal(l.v[0].active, 0);
    cf_nccl_install_list_release(&l);

    assert_int_equal(cf_nccl_store_activate(root, "v2.28.9-sm90", &err), 0);
    assert_int_equal(cf_nccl_store_list(root, &l, &err), 0);
    assert_int_equal(l.v[1].active, 1);
    cf_nccl_install_list_release(&l);
    assert_int_equal(cf_nccl_store_activate(root, "v9.9.9-sm90", &err), -1);
    assert_int_equal(err.kind, CF_ERR_NOTFOUND);
    cf_error_clear(&err);
    assert_int_equal(cf_nccl_store_activate(root, "../../etc", &err), -1);
    assert_int_equal(err.kind, CF_ERR_USAGE);
    cf_error_clear(&err);
    assert_int_equal(cf_nccl_store_activate(root, "v1.0.0-broken", &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "manifest.json is missing"));
    cf_error_clear(&err);

    assert_int_equal(cf_nccl_store_remove(root, "v2.28.9-sm90", &err), 0);
    char *active = cf_asprintf("%s/nccl/active", root);
    char buf[8];
    assert_int_equal(readlink(active, buf, sizeof buf), -1); /* the active link went with it */
    assert_int_equal(cf_nccl_store_list(root, &l, &err), 0);
    assert_int_equal(l.n, 1);
    cf_nccl_install_list_release(&l);
    free(active);
    free(staging);
    free(broken);
    ts_cleanup();
}

static void env_for(const char *root, const char *name, const char *host, struct cf_nccl_env *e)
{
    struct cf_arch_list archs = CF_ARCH_LIST_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_arch_list_parse(&archs, host, &err), 0);
    assert_int_equal(cf_nccl_env_make(root, name, &archs, e, &err), 0);
    cf_arch_list_release(&archs);
}

static void test_env_coverage(void **state)
{
    char *root = ts_tmpdir();
    fake_build(root, "v2.28.9-sm75-sm90", "\"sm_75\",\"sm_90\",\"sm_100f\"", "\"compute_90\"");
    struct cf_nccl_env e;
    env_for(root, "v2.28.9-sm75-sm90", "sm_75;sm_90", &e);
    assert_int_equal(e.uncovered.n, 0);
    assert_int_equal(e.jit_only.n, 0);
    char *want = cf_asprintf("%s/nccl/builds/v2.28.9-sm75-sm90/lib/libnccl.so.2", root);
    assert_string_equal(e.ld_preload, want);
    free(want);
    cf_nccl_env_release(&e);
    env_for(root, "v2.28.9-sm75-sm90", "sm_120;sm_86;sm_100;sm_103", &e);
    /* sm_100f machine code runs on sm_100 and sm_103 (same family, minor not
     * below); compute_90 JITs for sm_120; sm_86 is older than the PTX and no
     * SASS of major 8 is there (the whole rule: tests/cli/arch_coverage.sh). */
    assert_int_equal(e.jit_only.n, 1);
    assert_string_equal(e.jit_only.v[0], "sm_120");
    assert_string_equal(e.uncovered.v[0], "sm_86");
    assert_int_equal(e.uncovered.n, 1);
    cf_nccl_env_release(&e);
    env_for(root, "v2.28.9-sm75-sm90", "gfx90a", &e);
    assert_int_equal(e.uncovered.n, 1);
    cf_nccl_env_release(&e);
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_env_make(root, NULL, NULL, &e, &err), -1); /* nothing active */
    assert_non_null(strstr(cf_error_message(&err), "no active NCCL build"));
    cf_error_clear(&err);
    ts_cleanup();
}

static void test_default_root(void **state)
{
    setenv("CCLFORGE_HOME", "/srv/cf", 1);
    char *r = cf_nccl_default_root();
    assert_string_equal(r, "/srv/cf");
    free(r);
    unsetenv("CCLFORGE_HOME");
    setenv("XDG_CACHE_HOME", "/c", 1);
    r = cf_nccl_default_root();
    assert_string_equal(r, "/c/cclforge");
    free(r);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    r = cf_nccl_default_root();
    assert_string_equal(r, "/home/u/.cache/cclforge");
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_activate_remove),
        cmocka_unit_test(test_env_coverage),
        cmocka_unit_test(test_default_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
