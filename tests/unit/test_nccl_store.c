/* The installed-builds store: list, activate, remove, env coverage, the files
 * record and its check (truncated, replaced, re-linked, planted), stale
 * staging cleanup, the default root and the trust rule. Builds are laid out
 * by hand here (NCCL's layout, the manifest recorded by cclforge's own
 * recorder), so no toolkit is needed; the real build path is
 * tests/cli/nccl_build.sh and tests/cli/nccl_hostile.sh. */
#include "testsupport.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/nccl_build.h"
#include "nccl/nccl_internal.h"

/* A build as cclforge installs it: library, its two links, nccl.h, nccl.pc and
 * a manifest whose "files" come from cf_nccl_tree_record. */
static char *fake_build(const char *root, const char *name, const char *sass, const char *ptx)
{
    char *dir = cf_asprintf("%s/nccl/builds/%s", root, name);
    ts_write(dir, "lib/libnccl.so.2.28.9", "not really a library, but 40 bytes long");
    ts_write(dir, "include/nccl.h", "#define NCCL_VERSION_CODE 22809\n");
    ts_write(dir, "lib/pkgconfig/nccl.pc", "Name: nccl\n");
    char *so = cf_path_join(dir, "lib/libnccl.so.2"), *dev = cf_path_join(dir, "lib/libnccl.so");
    assert_int_equal(symlink("libnccl.so.2.28.9", so), 0);
    assert_int_equal(symlink("libnccl.so.2", dev), 0);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    cf_error err = CF_ERROR_INIT;
    cJSON *files = cf_nccl_tree_record(fd, &err);
    assert_non_null(files);
    close(fd);
    char *record = cJSON_PrintUnformatted(files);
    char *manifest = cf_asprintf("{\"schema\":\"cclforge.nccl-manifest/1\",\"name\":\"%s\",\"tag\":\"v2.28.9-1\","
                                 "\"library_kind\":\"nccl\",\"version\":\"2.28.9\",\"version_code\":22809,"
                                 "\"archs\":[%s],\"ptx\":%s,\"cuda_version\":\"13.0\","
                                 "\"library\":\"lib/libnccl.so.2.28.9\",\"sass\":[%s],\"ptx_archs\":[%s],"
                                 "\"build_seconds\":12.5,\"files\":%s}",
                                 name, sass, *ptx ? "true" : "false", sass, ptx, record);
    ts_write(dir, "manifest.json", manifest);
    cJSON_Delete(files);
    free(record);
    free(manifest);
    free(so);
    free(dev);
    return dir;
}

static void test_list_activate_remove(void **state)
{
    char *root = ts_tmpdir();
    struct cf_nccl_install_list l;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_store_list(root, 0, &l, &err), 0); /* no tree yet: empty, not an error */
    assert_int_equal(l.n, 0);
    free(fake_build(root, "v2.28.9-sm90", "\"sm_90\"", "\"compute_90\""));
    free(fake_build(root, "v2.28.9-sm75-sm90", "\"sm_75\",\"sm_90\"", ""));
    char *staging = cf_asprintf("%s/nccl/builds/.staging-v2.28.9-sm80-abc123", root);
    assert_int_equal(cf_mkdir_p(staging, 0755, &err), 0);
    char *broken = cf_asprintf("%s/nccl/builds/v1.0.0-broken", root);
    assert_int_equal(cf_mkdir_p(broken, 0755, &err), 0);
    assert_int_equal(cf_nccl_store_list(root, 1, &l, &err), 0);
    assert_int_equal(l.n, 3); /* staging is not a build; a dir without manifest is a damaged one */
    assert_string_equal(l.v[0].name, "v1.0.0-broken");
    assert_non_null(strstr(l.v[0].damage, "manifest.json is missing"));
    assert_string_equal(l.v[1].name, "v2.28.9-sm75-sm90");
    assert_string_equal(l.v[1].archs, "sm_75;sm_90");
    assert_int_equal(l.v[1].version_code, 22809);
    assert_int_equal(l.v[1].active, 0);
    assert_null(l.v[1].damage);
    assert_null(l.v[2].damage);
    cf_nccl_install_list_release(&l);

    assert_int_equal(cf_nccl_store_activate(root, "v2.28.9-sm90", &err), 0);
    assert_int_equal(cf_nccl_store_list(root, 0, &l, &err), 0);
    assert_int_equal(l.v[2].active, 1);
    cf_nccl_install_list_release(&l);
    assert_int_equal(cf_nccl_store_activate(root, "v9.9.9-sm90", &err), -1);
    assert_int_equal(err.kind, CF_ERR_NOTFOUND);
    cf_error_clear(&err);
    assert_int_equal(cf_nccl_store_activate(root, "../../etc", &err), -1);
    assert_int_equal(err.kind, CF_ERR_USAGE);
    cf_error_clear(&err);
    assert_int_equal(cf_nccl_store_activate(root, "v1\033]0;x", &err), -1);
    assert_int_equal(err.kind, CF_ERR_USAGE);
    cf_error_clear(&err);
    assert_int_equal(cf_nccl_store_activate(root, "v1.0.0-broken", &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "manifest.json is missing"));
    cf_error_clear(&err);

    /* a build without a manifest can be removed (the remedy it names works) */
    assert_int_equal(cf_nccl_store_remove(root, "v1.0.0-broken", &err), 0);
    assert_false(cf_path_exists(broken));
    assert_int_equal(cf_nccl_store_remove(root, "v2.28.9-sm90", &err), 0);
    char *active = cf_asprintf("%s/nccl/active", root);
    char buf[8];
    assert_int_equal(readlink(active, buf, sizeof buf), -1); /* the active link went with it */
    assert_int_equal(cf_nccl_store_list(root, 0, &l, &err), 0);
    assert_int_equal(l.n, 1);
    cf_nccl_install_list_release(&l);
    free(active);
    free(staging);
    free(broken);
    ts_cleanup();
}

/* The damage the cache must never serve, each found by the cheap check or by
 * --verify's full one. */
static const char *damage_after(const char *root, const char *name, int full)
{
    static char why[512];
    struct cf_nccl_install_list l;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_store_list(root, full, &l, &err), 0);
    why[0] = 0;
    for (size_t i = 0; i < l.n; i++)
        if (!strcmp(l.v[i].name, name) && l.v[i].damage)
            snprintf(why, sizeof why, "%s", l.v[i].damage);
    cf_nccl_install_list_release(&l);
    return why;
}

static char *build_file(const char *dir, const char *rel)
{
    return cf_path_join(dir, rel);
}

static void test_damage_is_found(void **state)
{
    char *root = ts_tmpdir();
    const char *lib_rel = "lib/libnccl.so.2.28.9";
    char *a = fake_build(root, "v2.28.9-sm90", "\"sm_90\"", "");
    assert_string_equal(damage_after(root, "v2.28.9-sm90", 1), "");
    /* truncated */
    char *lib = build_file(a, lib_rel);
    assert_int_equal(truncate(lib, 0), 0);
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm90", 0), "has 0 bytes, the manifest says 39"));
    free(lib);
    /* replaced by another file of the same size: the stamp changed, the hash decides */
    char *b = fake_build(root, "v2.28.9-sm80", "\"sm_80\"", "");
    lib = build_file(b, lib_rel);
    unlink(lib);
    ts_write(b, lib_rel, "NOT really a library, but 40 bytes long");
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm80", 0), "was changed after install"));
    free(lib);
    /* the link chain re-pointed at another library */
    char *c = fake_build(root, "v2.28.9-sm86", "\"sm_86\"", "");
    char *so = build_file(c, "lib/libnccl.so.2");
    unlink(so);
    assert_int_equal(symlink("/usr/lib/x86_64-linux-gnu/libc.so.6", so), 0);
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm86", 0), "lib/libnccl.so.2 should be a link to"));
    free(so);
    /* a library planted beside it, where LD_LIBRARY_PATH points */
    char *d = fake_build(root, "v2.28.9-sm89", "\"sm_89\"", "");
    ts_write(d, "lib/libcudart.so.13", "planted");
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm89", 0), "lib/libcudart.so.13 is not part of the build"));
    /* a header removed */
    char *e = fake_build(root, "v2.28.9-sm100", "\"sm_100\"", "");
    char *h = build_file(e, "include/nccl.h");
    unlink(h);
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm100", 0), "include/nccl.h is missing"));
    free(h);
    /* writable by others */
    char *f = fake_build(root, "v2.28.9-sm120", "\"sm_120\"", "");
    lib = build_file(f, lib_rel);
    assert_int_equal(chmod(lib, 0666), 0);
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm120", 0), "writable by everyone"));
    free(lib);
    /* unchanged stamps are trusted by the cheap check; --verify hashes anyway
     * (shown by a manifest whose recorded hash no longer fits) */
    char *g = fake_build(root, "v2.28.9-sm75", "\"sm_75\"", "");
    char *mpath = build_file(g, "manifest.json");
    struct strbuf m = STRBUF_INIT;
    assert_int_equal(cf_read_file(mpath, 1 << 20, &m, NULL), 0);
    char *sha = strstr(m.buf, "\"lib/libnccl.so.2.28.9\"");
    sha = strstr(sha, "\"sha256\":\"") + strlen("\"sha256\":\"");
    sha[0] = sha[0] == '0' ? '1' : '0';
    ts_write(g, "manifest.json", m.buf);
    assert_string_equal(damage_after(root, "v2.28.9-sm75", 0), "");
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm75", 1), "was changed after install"));
    cf_sb_release(&m);
    free(mpath);

    /* env and activate refuse a damaged build */
    struct cf_nccl_env env;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_env_make(root, "v2.28.9-sm120", NULL, &env, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "is damaged"));
    cf_error_clear(&err);
    assert_int_equal(cf_nccl_store_activate(root, "v2.28.9-sm100", &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "is damaged"));
    cf_error_clear(&err);
    free(a), free(b), free(c), free(d), free(e), free(f), free(g);
    ts_cleanup();
}

/* A manifest of an older cclforge (no "files"): the library's hash decides. */
static void test_legacy_manifest(void **state)
{
    char *root = ts_tmpdir();
    char *dir = cf_asprintf("%s/nccl/builds/v2.28.9-sm90", root);
    char *lib = ts_write(dir, "lib/libnccl.so.2.28.9", "old");
    char hex[65];
    assert_int_equal(cf_sha256_file(lib, hex, NULL), 0);
    char *m = cf_asprintf("{\"tag\":\"v2.28.9-1\",\"library\":\"lib/libnccl.so.2.28.9\",\"library_sha256\":\"%s\"}", hex);
    ts_write(dir, "manifest.json", m);
    assert_string_equal(damage_after(root, "v2.28.9-sm90", 0), "");
    ts_write(dir, "lib/libnccl.so.2.28.9", "new");
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm90", 0), "its sha256 differs"));
    ts_write(dir, "manifest.json", "{\"library\":\"../../../../etc/passwd\",\"library_sha256\":\"00\"}");
    assert_non_null(strstr(damage_after(root, "v2.28.9-sm90", 0), "a path outside the build"));
    free(m);
    free(dir);
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
    free(fake_build(root, "v2.28.9-sm75-sm90", "\"sm_75\",\"sm_90\",\"sm_100f\"", "\"compute_90\""));
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
    /* the env document carries the coverage only when host archs were given */
    env_for(root, "v2.28.9-sm75-sm90", "sm_120;sm_86", &e);
    cJSON *doc = cf_nccl_env_json(&e);
    const cJSON *cov = cJSON_GetObjectItemCaseSensitive(doc, "coverage");
    assert_non_null(cov);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cov, "covered")));
    cJSON_Delete(doc);
    cf_nccl_env_release(&e);
    assert_int_equal(cf_nccl_env_make(root, "v2.28.9-sm75-sm90", NULL, &e, &err), 0);
    doc = cf_nccl_env_json(&e);
    assert_string_equal(cf_json_str(doc, "schema"), "cclforge.nccl-env/1");
    assert_null(cJSON_GetObjectItemCaseSensitive(doc, "coverage"));
    cJSON_Delete(doc);
    cf_nccl_env_release(&e);
    /* a root whose path ld.so would split: refused, not printed */
    char *spaced = cf_asprintf("%s/my root", root);
    free(fake_build(spaced, "v2.28.9-sm90", "\"sm_90\"", ""));
    assert_int_equal(cf_nccl_env_make(spaced, "v2.28.9-sm90", NULL, &e, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "contains a space, which ld.so takes as a separator"));
    cf_error_clear(&err);
    free(spaced);
    ts_cleanup();
}

/* Leftovers of dead builds go on any run; a live build's staging stays. */
static void test_clean_stale(void **state)
{
    char *root = ts_tmpdir();
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_root_prepare(root, &err), 0);
    char *dead = ts_write(root, "nccl/staging/v2.28.9-sm75/abc123/include/nccl.h", "x");
    char *live = ts_write(root, "nccl/staging/v2.28.9-sm75-sm90/def456/include/nccl.h", "x");
    char *legacy = ts_write(root, "nccl/builds/.staging-v2.28.9-sm80-Zx9k2Q/lib/x", "x");
    char *legacy_live = ts_write(root, "nccl/builds/.staging-v2.28.9-sm75-sm90-aaaaaa/lib/x", "x");
    char *not_ours = ts_write(root, "nccl/builds/.staging-notes.txt", "x");
    int fd = cf_nccl_lock_open(root, "v2.28.9-sm75-sm90", 1, &err);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0); /* a build of the common-prefix target is running */
    cf_nccl_clean_stale(root, NULL);
    assert_false(cf_path_exists(dead));
    assert_true(cf_path_exists(live));
    assert_false(cf_path_exists(legacy));
    assert_true(cf_path_exists(legacy_live));
    assert_true(cf_path_exists(not_ours));
    close(fd);
    cf_nccl_clean_stale(root, NULL);
    assert_false(cf_path_exists(live));
    ts_cleanup();
}

static void test_default_root_and_trust(void **state)
{
    cf_error err = CF_ERROR_INIT;
    setenv("CCLFORGE_HOME", "/srv/cf", 1);
    char *r = cf_nccl_default_root(&err);
    assert_string_equal(r, "/srv/cf");
    free(r);
    unsetenv("CCLFORGE_HOME");
    setenv("XDG_CACHE_HOME", "/c", 1);
    r = cf_nccl_default_root(&err);
    assert_string_equal(r, "/c/cclforge");
    free(r);
    setenv("XDG_CACHE_HOME", "relative", 1); /* invalid per the XDG spec: ignored */
    setenv("HOME", "/home/u", 1);
    r = cf_nccl_default_root(&err);
    assert_string_equal(r, "/home/u/.cache/cclforge");
    free(r);
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    assert_null(cf_nccl_default_root(&err));
    assert_non_null(strstr(cf_error_message(&err), "set CCLFORGE_HOME or pass --root"));
    cf_error_clear(&err);

    char *root = ts_tmpdir();
    free(fake_build(root, "v2.28.9-sm90", "\"sm_90\"", ""));
    struct cf_nccl_install_list l;
    assert_int_equal(chmod(root, 0777), 0);
    assert_int_equal(cf_nccl_store_list(root, 0, &l, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "writable by everyone (mode 0777)"));
    cf_error_clear(&err);
    assert_int_equal(chmod(root, 0755), 0);
    if (geteuid() == 0) { /* as root the test can give the build away */
        char *dir = cf_asprintf("%s/nccl/builds/v2.28.9-sm90", root);
        assert_int_equal(chown(dir, 65534, 65534), 0);
        struct cf_nccl_install inst;
        assert_int_equal(cf_nccl_store_get(root, "v2.28.9-sm90", &inst, &err), 0);
        assert_non_null(strstr(inst.damage, "owned by uid 65534"));
        cf_nccl_install_release(&inst);
        assert_int_equal(chown(root, 65534, 65534), 0);
        assert_int_equal(cf_nccl_store_list(root, 0, &l, &err), -1);
        assert_non_null(strstr(cf_error_message(&err), "owned by uid 65534"));
        cf_error_clear(&err);
        free(dir);
    }
    ts_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_activate_remove), cmocka_unit_test(test_damage_is_found),
        cmocka_unit_test(test_legacy_manifest),      cmocka_unit_test(test_env_coverage),
        cmocka_unit_test(test_clean_stale),          cmocka_unit_test(test_default_root_and_trust),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
