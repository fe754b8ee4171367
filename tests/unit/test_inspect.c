/* cf_ldso_locate (a default program's search) and cf_inspect_run on compiled
 * fixtures: the result struct the CLI prints, without the CLI. */
#include "testsupport.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/inspect.h"
#include "cclforge/json.h"
#include "cclforge/ldcache.h"
#include "cclforge/ldso.h"
#include "cclforge/strbuf.h"

static const char *const no_hwcaps[] = { NULL };

/* libc.so.6 comes from ld.so.cache exactly where the cache says. */
static void test_locate_from_cache(void **state)
{
    (void)state;
    struct cf_ldcache *cache;
    if (cf_ldcache_open("/etc/ld.so.cache", &cache, NULL) != 0)
        skip();
    struct cf_ldcache_abi abi;
    assert_int_equal(cf_ldcache_abi_for(EM_X86_64, 64, &abi, NULL), 0);
    struct cf_ldcache_query q = { .abi = abi, .isa_1 = 1, .hwcap = ~0ull };
    const char *want = cf_ldcache_lookup(cache, "libc.so.6", &q);
    assert_non_null(want);

    struct cf_ldso_opts opts = { .ignore_ld_library_path = 1, .hwcaps = no_hwcaps, .no_legacy_hwcaps = 1 };
    struct cf_ldso_node n;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldso_locate("libc.so.6", EM_X86_64, 64, 0, &opts, &n, &err), 0);
    assert_non_null(n.path);
    assert_string_equal(n.path, want);
    assert_int_equal(n.reason, CF_LDSO_LDCACHE);
    assert_int_equal(n.parent, -1);
    cf_ldso_node_release(&n);
    cf_ldcache_free(cache);
}

/* A name nobody has: the cache (no entry), then every default directory, in order. */
static void test_locate_missing_lists_defaults(void **state)
{
    (void)state;
    struct cf_ldso_opts opts = { .ignore_ld_library_path = 1, .hwcaps = no_hwcaps, .no_legacy_hwcaps = 1 };
    struct cf_ldso_node n;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldso_locate("libcclforge-none.so.7", EM_X86_64, 64, 0, &opts, &n, &err), 0);
    assert_null(n.path);
    assert_int_equal(n.reason, CF_LDSO_NOT_FOUND);
    struct cf_ldso_platform plat;
    assert_int_equal(cf_ldso_platform_for(EM_X86_64, 64, NULL, &plat, &err), 0);
    size_t k = 0;
    /* the cache is consulted first and has no entry */
    if (n.n_considered && n.considered[0].source == CF_LDSO_LDCACHE) {
        assert_int_equal(n.considered[0].reject, CF_LDSO_REJ_NOT_FOUND);
        k = 1;
    }
    for (char **d = plat.system_dirs; *d; d++, k++) {
        assert_true(k < n.n_considered);
        char *want = cf_asprintf("%s/libcclforge-none.so.7", *d);
        assert_string_equal(n.considered[k].path, want);
        assert_int_equal(n.considered[k].source, CF_LDSO_DEFAULT_DIRS);
        free(want);
    }
    assert_int_equal(k, n.n_considered);
    cf_ldso_platform_release(&plat);
    cf_ldso_node_release(&n);
}

/* LD_LIBRARY_PATH comes before the cache for a default program too. */
static void test_locate_ld_library_path(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *lib = cf_path_join(dir, "libz.so.1");
    ts_cc(dir, lib, "int z_fn(void) { return 1; }\n", "-shared", "-fPIC", "-Wl,-soname,libz.so.1", NULL);
    struct cf_ldso_opts opts = { .ld_library_path = dir, .hwcaps = no_hwcaps, .no_legacy_hwcaps = 1 };
    struct cf_ldso_node n;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldso_locate("libz.so.1", EM_X86_64, 64, 0, &opts, &n, &err), 0);
    assert_non_null(n.path);
    assert_string_equal(n.path, lib);
    assert_int_equal(n.reason, CF_LDSO_LD_LIBRARY_PATH);
    cf_ldso_node_release(&n);
    free(lib);
    ts_cleanup();
}

/* A name with a dynamic string token keeps its expansion in the node; releasing
 * the node frees it (LeakSanitizer in the sanitizer run checks). */
static void test_locate_expanded_name_released(void **state)
{
    (void)state;
    struct cf_ldso_opts opts = { .ignore_ld_library_path = 1, .hwcaps = no_hwcaps, .no_legacy_hwcaps = 1 };
    struct cf_ldso_node n;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldso_locate("/cclforge-none/$LIB/libz.so.1", EM_X86_64, 64, 0, &opts, &n, &err), 0);
    assert_non_null(n.expanded);
    assert_true(strncmp(n.expanded, "/cclforge-none/", 15) == 0 && !strstr(n.expanded, "$LIB"));
    assert_int_equal(n.reason, CF_LDSO_NOT_FOUND);
    cf_ldso_node_release(&n);
    assert_null(n.expanded);
}

/* A program with a missing library, a relative RPATH entry and an undefined
 * symbol: each problem once, with its severity; the loader's $LIB reported. */
static void test_inspect_problems(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *gone_dir = cf_path_join(dir, "gone");
    cf_mkdir_p(gone_dir, 0755, NULL);
    char *gone = cf_path_join(gone_dir, "libgone.so");
    ts_cc(dir, gone, "int gone_fn(void) { return 1; }\n", "-shared", "-fPIC", "-Wl,-soname,libgone.so", NULL);
    char *app = cf_path_join(dir, "app");
    char *ldir = cf_asprintf("-L%s", gone_dir);
    ts_cc(dir, app, "int gone_fn(void); int main(void) { return gone_fn(); }\n", ldir, "-lgone",
          "-Wl,--disable-new-dtags,-rpath,relative/dir", NULL);
    const char *files[] = { app };
    struct cf_inspect_opts opts = { .files = files, .n_files = 1, .ignore_ld_library_path = 1, .undefined = 1 };
    struct cf_inspect_result r;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_inspect_run(&opts, &r, &err), 0);
    assert_int_equal(r.n_targets, 1);
    const struct cf_inspect_target *t = &r.targets[0];
    assert_null(t->error);
    assert_int_equal(cf_inspect_count(t, CF_INSPECT_MISSING), 1);
    assert_int_equal(cf_inspect_count(t, CF_INSPECT_LINT), 1);
    assert_int_equal(cf_inspect_count(t, CF_INSPECT_UNDEFINED_SYMBOL), 1);
    assert_int_equal(t->n_errors, 3);
    assert_true(t->symcheck_done);
    assert_non_null(t->closure.dst_lib);
    assert_non_null(t->closure.dst_platform);
    assert_int_equal(r.n_errors, 3);
    /* the missing library keeps the paths considered, starting with the RPATH entry */
    const struct cf_ldso_node *missing = NULL;
    for (size_t i = 0; i < t->closure.n_nodes; i++)
        if (!t->closure.nodes[i].path)
            missing = &t->closure.nodes[i];
    assert_non_null(missing);
    assert_string_equal(missing->needed, "libgone.so");
    assert_true(missing->n_considered > 0);
    assert_int_equal(missing->considered[0].source, CF_LDSO_RPATH);
    /* the document says the same: its summaries are the result's counts */
    cJSON *doc = cf_inspect_json(&opts, &r);
    assert_string_equal(cf_json_str(doc, "schema"), "cclforge.inspect/1");
    const cJSON *target = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "targets"), 0);
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(target, "summary");
    assert_int_equal((int)cf_json_num(sum, "missing", -1), 1);
    assert_int_equal((int)cf_json_num(sum, "errors", -1), 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(target, "problems")), (int)t->n_problems);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "summary"), "ok")));
    cJSON_Delete(doc);
    cf_inspect_result_release(&r);
    free(app);
    free(gone);
    free(gone_dir);
    free(ldir);
    ts_cleanup();
}

/* One file in several targets is scanned for banners once per run; what
 * depends on the name it is loaded under is still per object: the same
 * inode as libemb.so embeds a copy, as libnccl.so.2 (a hard link) it is NCCL. */
static void test_banner_scan_shared_across_targets(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *emb = cf_path_join(dir, "libemb.so");
    ts_cc(dir, emb, "const char b[] = \"NCCL version 2.21.5+cuda12.4\";\nconst char *f(void) { return b; }\n",
          "-shared", "-fPIC", NULL);
    char *sub = cf_path_join(dir, "n");
    cf_mkdir_p(sub, 0755, NULL);
    char *nccl = cf_path_join(sub, "libnccl.so.2");
    assert_int_equal(link(emb, nccl), 0);
    const char *files[] = { emb, nccl, emb };
    struct cf_inspect_opts opts = { .files = files, .n_files = 3, .ignore_ld_library_path = 1, .no_gpu = 1 };
    struct cf_inspect_result r;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_inspect_run(&opts, &r, &err), 0);
    assert_int_equal(r.n_targets, 3);
    for (size_t i = 0; i < 3; i++) {
        const struct cf_inspect_object *o = &r.targets[i].objects[0];
        assert_true(o->commlib_scanned);
        assert_true(o->commlib.found);
        assert_string_equal(o->commlib.banner.text, "NCCL version 2.21.5+cuda12.4");
        assert_true(o->commlib.bytes_scanned > 0);
        assert_int_equal(o->commlib.library, i == 1 ? CF_COMMLIB_NCCL : CF_COMMLIB_NONE);
        assert_int_equal(o->commlib.embeds_copy, i != 1);
    }
    cf_inspect_result_release(&r);
    free(emb);
    free(sub);
    free(nccl);
    ts_cleanup();
}

/* Bad inputs are targets with an error, not a failed call; bad options are usage errors. */
static void test_inspect_bad_inputs(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *text = ts_write(dir, "notes.txt", "not an ELF file\n");
    const char *files[] = { text, "/nonexistent/libx.so", dir };
    struct cf_inspect_opts opts = { .files = files, .n_files = 3 };
    struct cf_inspect_result r;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_inspect_run(&opts, &r, &err), 0);
    assert_int_equal(r.n_targets, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_non_null(r.targets[i].error);
        assert_non_null(strstr(r.targets[i].error, files[i]));
        assert_int_equal(r.targets[i].problems[0].kind, CF_INSPECT_BAD_INPUT);
    }
    assert_int_equal(r.n_errors, 3);
    cf_inspect_result_release(&r);

    struct cf_inspect_opts bad = { .files = files, .n_files = 1, .within = "/nonexistent/tree" };
    assert_int_equal(cf_inspect_run(&bad, &r, &err), -1);
    assert_int_equal(err.kind, CF_ERR_USAGE);
    cf_error_clear(&err);
    ts_cleanup();
}

static void test_describe_banner(void **state)
{
    (void)state;
    struct cf_commlib_banner b;
    const char *s = "NCCL version 2.28.9+cuda13.0";
    assert_int_equal(cf_banner_parse(s, strlen(s) + 1, &b), 0);
    char *d = cf_inspect_describe_banner(&b);
    assert_string_equal(d, "NCCL 2.28.9+cuda13.0 (code 22809)");
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locate_from_cache),
        cmocka_unit_test(test_locate_missing_lists_defaults),
        cmocka_unit_test(test_locate_ld_library_path),
        cmocka_unit_test(test_locate_expanded_name_released),
        cmocka_unit_test(test_inspect_problems),
        cmocka_unit_test(test_inspect_bad_inputs),
        cmocka_unit_test(test_banner_scan_shared_across_targets),
        cmocka_unit_test(test_describe_banner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
