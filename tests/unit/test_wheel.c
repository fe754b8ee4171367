/* Wheels: RECORD/METADATA parsing, the reproducible writer, and the verifier on
 * real ELF fixtures (a CPython extension compiled here) and on broken wheels. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"
#include "cclforge/wheel.h"
#include "pkg/elf_facts.h"

/* The $ORIGIN test that wheel verify and the bridge's output check share. */
static void test_rpath_origin_relative(void **state)
{
    (void)state;
    static const struct {
        const char *entry;
        int yes;
    } cases[] = {
        { "$ORIGIN", 1 },      { "${ORIGIN}", 1 },    { "$ORIGIN/../torch/lib", 1 }, { "${ORIGIN}/lib", 1 },
        { "$ORIGINAL/lib", 0 }, { "lib/$ORIGIN", 0 }, { "/opt/x/lib", 0 },            { "lib", 0 },
        { "$LIB/x", 0 },       { "", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cf_elf_rpath_is_origin_relative(cases[i].entry) != cases[i].yes)
            fail_msg("%s: expected %d", cases[i].entry, cases[i].yes);
}

static void test_b64_and_sha256(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    cf_wheel_sha256_b64("", 0, &sb);
    assert_string_equal(sb.buf, "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    cf_sb_reset(&sb);
    cf_b64_urlsafe_nopad((const unsigned char *)"\xfb\xff", 2, &sb);
    assert_string_equal(sb.buf, "-_8");
    cf_sb_release(&sb);
}

static void test_record_parse(void **state)
{
    const char *text = "pkg/a.py,sha256=abc,12\r\n\"odd,name.py\",sha256=d_e-f,0\n\npkg-1.0.dist-info/RECORD,,\n";
    struct cf_record rec;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_record_parse(text, strlen(text), &rec, &err), 0);
    assert_int_equal(rec.n, 3);
    assert_string_equal(rec.entries[1].path, "odd,name.py");
    assert_string_equal(rec.entries[1].digest, "d_e-f");
    assert_int_equal(rec.entries[0].size, 12);
    assert_null(rec.entries[2].algo);
    assert_int_equal(rec.entries[2].size, -1);
    cf_record_release(&rec);

    static const char *const bad[] = { "a,sha256=x\n", "ok,sha256=x,1\nb,sha256=y,-3\n", "\"open,sha256=x,1\n",
                                       "c,nodigest,1\n", ",sha256=x,1\n", "d,sha256=x,1,extra\n" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cf_record_parse(bad[i], strlen(bad[i]), &rec, &err), -1);
        assert_non_null(strstr(cf_error_message(&err), "RECORD line"));
        cf_error_clear(&err);
    }
    struct strbuf sb = STRBUF_INIT;
    cf_record_format_line(&sb, "we\"ird,x", "h", 3);
    assert_string_equal(sb.buf, "\"we\"\"ird,x\",sha256=h,3\n");
    assert_int_equal(cf_record_parse(sb.buf, sb.len, &rec, &err), 0);
    assert_string_equal(rec.entries[0].path, "we\"ird,x");
    cf_record_release(&rec);
    cf_sb_release(&sb);
}

static void test_kv_and_names(void **state)
{
    const char *meta = "Metadata-Version: 2.1\nName: x\nSummary: one\n  two\n\nbody: not a header\n";
    struct cf_kv kv;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_kv_parse(meta, strlen(meta), &kv, &err), 0);
    assert_int_equal(kv.n, 3);
    assert_string_equal(cf_kv_get(&kv, "name"), "x");
    assert_string_equal(cf_kv_get(&kv, "Summary"), "one\n  two");
    assert_null(cf_kv_get(&kv, "body"));
    cf_kv_release(&kv);
    assert_int_equal(cf_kv_parse("no colon here\n", 14, &kv, &err), -1);
    cf_error_clear(&err);

    struct cf_wheel_name wn;
    assert_int_equal(cf_wheel_name_parse("/d/pkg_x-1.0-1-cp311-cp311-manylinux_2_28_x86_64.whl", &wn, &err), 0);
    assert_string_equal(wn.dist, "pkg_x");
    assert_string_equal(wn.build, "1");
    assert_string_equal(wn.platform_tag, "manylinux_2_28_x86_64");
    cf_wheel_name_release(&wn);
    assert_int_equal(cf_wheel_name_parse("pkg-1.0-cp311.whl", &wn, &err), -1);
    cf_error_clear(&err);
    assert_int_equal(cf_platform_glibc_ceiling("manylinux_2_28_x86_64"), 2028);
    assert_int_equal(cf_platform_glibc_ceiling("manylinux2014_x86_64"), 2017);
    assert_int_equal(cf_platform_glibc_ceiling("manylinux_2_17_x86_64.manylinux_2_28_x86_64"), 2017);
    assert_int_equal(cf_platform_glibc_ceiling("linux_x86_64"), 0);
}

/* ---- fixtures: a real CPython extension with a bundled library ---- */

struct fixture {
    char *dir;
    char *ext;      /* demo.<EXT_SUFFIX> linked with rpath $ORIGIN/lib */
    char *ext_name; /* its file name */
    char *helper;   /* libcfhelper.so */
};

static char *python_query(const char *code)
{
    const char *argv[] = { "python3", "-c", code, NULL };
    return cf_capture(argv, 30);
}

static void make_fixture(struct fixture *fx, const char *rpath)
{
    fx->dir = ts_tmpdir();
    char *inc = python_query("import sysconfig; print(sysconfig.get_paths()['include'])");
    char *suffix = python_query("import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))");
    assert_non_null(inc);
    assert_non_null(suffix);
    fx->helper = cf_asprintf("%s/libcfhelper.so", fx->dir);
    ts_cc(fx->dir, fx->helper, "int cf_helper(void) { return 42; }\n", "-shared", "-fPIC",
          "-Wl,-soname,libcfhelper.so", NULL);
    fx->ext_name = cf_asprintf("demo%s", suffix);
    fx->ext = cf_asprintf("%s/%s", fx->dir, fx->ext_name);
    char *incflag = cf_asprintf("-I%s", inc), *lflag = cf_asprintf("-L%s", fx->dir),
         *rflag = cf_asprintf("-Wl,-rpath,%s", rpath);
    ts_cc(fx->dir, fx->ext,
          "#include <Python.h>\n"
          "int cf_helper(void);\n"
          "static PyObject *answer(PyObject *s, PyObject *a) { return PyLong_FromLong(cf_helper()); }\n"
          "static PyMethodDef methods[] = { {\"answer\", answer, METH_NOARGS, 0}, {0} };\n"
          "static struct PyModuleDef def = { PyModuleDef_HEAD_INIT, \"demo\", 0, -1, methods };\n"
          "PyMODINIT_FUNC PyInit_demo(void) { return PyModule_Create(&def); }\n",
          "-shared", "-fPIC", incflag, lflag, "-lcfhelper", rflag, NULL);
    free(incflag);
    free(lflag);
    free(rflag);
    free(inc);
    free(suffix);
}

static void free_fixture(struct fixture *fx)
{
    free(fx->ext);
    free(fx->ext_name);
    free(fx->helper);
}

static char *write_demo_wheel(const struct fixture *fx, const char *out_dir, int bundle)
{
    char *ext_member = cf_asprintf("cfdemo/%s", fx->ext_name);
    struct cf_wheel_member members[3] = {
        { "cfdemo/__init__.py", NULL, "", 0 },
        { ext_member, fx->ext, NULL, 0 },
        { "cfdemo/lib/libcfhelper.so", fx->helper, NULL, 0 },
    };
    char *tag = python_query("import sys; print('cp%d%d' % sys.version_info[:2])");
    struct cf_wheel_spec spec = { 0 };
    spec.dist_name = "cf-demo";
    spec.version = "1.0";
    spec.python_tag = tag;
    spec.members = members;
    spec.n_members = bundle ? 3 : 2;
    char *path = NULL, *used = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_wheel_write(&spec, out_dir, &path, &used, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    free(ext_member);
    free(tag);
    free(used);
    return path;
}

static const struct cf_wheel_check *find_check(const struct cf_wheel_verify_result *r, const char *name, int ok)
{
    for (size_t i = 0; i < r->n_checks; i++)
        if (!strcmp(r->checks[i].name, name) && r->checks[i].ok == ok)
            return &r->checks[i];
    return NULL;
}

static void verify(const char *wheel, int install, struct cf_wheel_verify_result *r)
{
    struct cf_wheel_verify_opts o = { 0 };
    o.wheel = wheel;
    o.install = install;
    cf_error err = CF_ERROR_INIT;
    if (cf_wheel_verify(&o, r, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
}

static void dump(const struct cf_wheel_verify_result *r)
{
    for (size_t i = 0; i < r->n_checks; i++)
        print_message("  %d %s: %s\n", r->checks[i].ok, r->checks[i].name, r->checks[i].detail);
}

static void test_writer_is_reproducible_and_verifies(void **state)
{
    struct fixture fx;
    make_fixture(&fx, "$ORIGIN/lib");
    char *a_dir = cf_path_join(fx.dir, "a"), *b_dir = cf_path_join(fx.dir, "b");
    char *a = write_demo_wheel(&fx, a_dir, 1);
    sleep(1); /* a different wall clock must not change the bytes */
    char *b = write_demo_wheel(&fx, b_dir, 1);
    assert_true(cf_ends_with(a, ".whl"));
    assert_non_null(strstr(a, "-manylinux_2_"));
    struct strbuf da = STRBUF_INIT, db = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_read_file(a, 1 << 26, &da, &err), 0);
    assert_int_equal(cf_read_file(b, 1 << 26, &db, &err), 0);
    assert_int_equal(da.len, db.len);
    assert_memory_equal(da.buf, db.buf, da.len);

    struct cf_wheel_verify_result r;
    verify(a, 0, &r);
    if (r.failed)
        dump(&r);
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.extensions.n, 1);
    assert_non_null(find_check(&r, "record", 1));
    assert_non_null(find_check(&r, "glibc", 1));
    cf_wheel_verify_result_release(&r);

    /* RECORD is the last entry and .dist-info comes after the package */
    zip_t *za = zip_open(a, ZIP_RDONLY, NULL);
    assert_non_null(za);
    zip_int64_t n = zip_get_num_entries(za, 0);
    assert_string_equal(zip_get_name(za, (zip_uint64_t)n - 1, 0), "cf_demo-1.0.dist-info/RECORD");
    assert_string_equal(zip_get_name(za, 0, 0), "cfdemo/__init__.py");
    zip_discard(za);

    cf_sb_release(&da);
    cf_sb_release(&db);
    free(a);
    free(b);
    free(a_dir);
    free(b_dir);
    free_fixture(&fx);
}

static void test_install_and_import_from_venv(void **state)
{
    if (!ts_have("python3"))
        skip();
    struct fixture fx;
    make_fixture(&fx, "$ORIGIN/lib");
    char *out = cf_path_join(fx.dir, "dist");
    char *w = write_demo_wheel(&fx, out, 1);
    struct cf_wheel_verify_result r;
    verify(w, 1, &r);
    if (r.failed)
        dump(&r);
    assert_int_equal(r.failed, 0);
    assert_non_null(find_check(&r, "install", 1));
    assert_non_null(find_check(&r, "import", 1));
    assert_string_equal(r.module, "cfdemo.demo");
    assert_non_null(strstr(r.module_file, "/venv/"));
    cf_wheel_verify_result_release(&r);
    free(w);
    free(out);
    free_fixture(&fx);
}

/* A zip written member by member, RECORD included as given: defects on purpose. */
static char *raw_wheel(const char *dir, const char *file, const char *const *names, const char *const *paths,
                       const char *const *texts, size_t n, const char *record, unsigned symlink_index)
{
    char *path = cf_path_join(dir, file);
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, NULL);
    assert_non_null(za);
    struct strbuf *bufs = calloc(n + 1, sizeof *bufs);
    cf_error err = CF_ERROR_INIT;
    for (size_t i = 0; i <= n; i++) {
        const char *name = i < n ? names[i] : "x-1.0.dist-info/RECORD";
        if (i == n)
            cf_sb_adds(&bufs[i], record);
        else if (paths && paths[i])
            assert_int_equal(cf_read_file(paths[i], 1 << 26, &bufs[i], &err), 0);
        else
            cf_sb_adds(&bufs[i], texts[i]);
        zip_source_t *src = zip_source_buffer(za, bufs[i].buf ? bufs[i].buf : "", bufs[i].len, 0);
        zip_int64_t idx = zip_file_add(za, name, src, 0);
        assert_true(idx >= 0);
        if (i == symlink_index)
            zip_file_set_external_attributes(za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX, 0120777u << 16);
    }
    assert_int_equal(zip_close(za), 0);
    for (size_t i = 0; i <= n; i++)
        cf_sb_release(&bufs[i]);
    free(bufs);
    return path;
}

static char *record_for(const char *const *names, const char *const *paths, const char *const *texts, size_t n)
{
    struct strbuf rec = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    for (size_t i = 0; i < n; i++) {
        struct strbuf data = STRBUF_INIT, b64 = STRBUF_INIT;
        if (paths && paths[i])
            assert_int_equal(cf_read_file(paths[i], 1 << 26, &data, &err), 0);
        else
            cf_sb_adds(&data, texts[i]);
        cf_wheel_sha256_b64(data.buf ? data.buf : "", data.len, &b64);
        cf_record_format_line(&rec, names[i], b64.buf, (long long)data.len);
        cf_sb_release(&data);
        cf_sb_release(&b64);
    }
    cf_record_format_line(&rec, "x-1.0.dist-info/RECORD", NULL, 0);
    return cf_sb_detach(&rec);
}

static const char wheel_text[] = "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n";

static void test_verify_rejects_tampered_record(void **state)
{
    char *dir = ts_tmpdir();
    const char *names[] = { "x/__init__.py", "x-1.0.dist-info/WHEEL" };
    const char *texts[] = { "print('hello')\n", wheel_text };
    char *rec = record_for(names, NULL, texts, 2);
    const char *tampered[] = { "print('owned')\n", wheel_text };
    char *w = raw_wheel(dir, "x-1.0-cp311-cp311-linux_x86_64.whl", names, NULL, tampered, 2, rec, 99);
    struct cf_wheel_verify_result r;
    verify(w, 0, &r);
    const struct cf_wheel_check *c = find_check(&r, "record", 0);
    assert_non_null(c);
    assert_non_null(strstr(c->detail, "x/__init__.py': sha256 is"));
    assert_non_null(strstr(c->detail, "tampered"));
    assert_non_null(find_check(&r, "extension", 0)); /* no native code at all */
    cf_wheel_verify_result_release(&r);
    free(rec);
    free(w);
}

static void test_verify_rejects_zip_slip_and_escaping_symlink(void **state)
{
    char *dir = ts_tmpdir();
    const char *names[] = { "../evil.py", "x/link", "x-1.0.dist-info/WHEEL" };
    const char *texts[] = { "boom\n", "/etc/passwd", wheel_text };
    char *rec = record_for(names, NULL, texts, 3);
    char *w = raw_wheel(dir, "x-1.0-cp311-cp311-linux_x86_64.whl", names, NULL, texts, 3, rec, 1);
    struct cf_wheel_verify_result r;
    verify(w, 0, &r);
    const struct cf_wheel_check *c = find_check(&r, "zip", 0);
    assert_non_null(c);
    assert_non_null(strstr(c->detail, "'../evil.py': '..' component (zip slip)"));
    assert_non_null(strstr(c->detail, "'x/link': symlink to '/etc/passwd' reaches an absolute path"));
    cf_wheel_verify_result_release(&r);
    free(rec);
    free(w);
}

static void test_verify_rejects_absolute_rpath(void **state)
{
    struct fixture fx;
    make_fixture(&fx, "/opt/private/build/lib");
    char *member = cf_asprintf("x/%s", fx.ext_name);
    const char *names[] = { member, "x/lib/libcfhelper.so", "x-1.0.dist-info/WHEEL" };
    const char *paths[] = { fx.ext, fx.helper, NULL };
    const char *texts[] = { NULL, NULL, wheel_text };
    char *rec = record_for(names, paths, texts, 3);
    char *w = raw_wheel(fx.dir, "x-1.0-cp311-cp311-linux_x86_64.whl", names, paths, texts, 3, rec, 99);
    struct cf_wheel_verify_result r;
    verify(w, 0, &r);
    const struct cf_wheel_check *c = find_check(&r, "rpath", 0);
    assert_non_null(c);
    assert_non_null(strstr(c->detail, "'/opt/private/build/lib', an absolute path of the build machine"));
    /* and with nothing on a usable RPATH, the library counts as missing */
    assert_non_null(find_check(&r, "needed", 0));
    cf_wheel_verify_result_release(&r);
    free(rec);
    free(w);
    free(member);
    free_fixture(&fx);
}

static void test_verify_rejects_missing_library(void **state)
{
    struct fixture fx;
    make_fixture(&fx, "$ORIGIN/lib");
    char *out = cf_path_join(fx.dir, "dist");
    char *w = write_demo_wheel(&fx, out, 0); /* libcfhelper.so left out */
    assert_non_null(strstr(w, "linux_x86_64") ? w : NULL);
    struct cf_wheel_verify_result r;
    verify(w, 0, &r);
    const struct cf_wheel_check *c = find_check(&r, "needed", 0);
    assert_non_null(c);
    assert_non_null(strstr(c->detail, "needs libcfhelper.so, which is missing"));
    /* $ORIGIN/lib is not in the wheel either */
    assert_non_null(find_check(&r, "rpath", 0));
    cf_wheel_verify_result_release(&r);
    free(w);
    free(out);
    free_fixture(&fx);
}

static void test_platform_tag_linux_when_not_covered(void **state)
{
    struct fixture fx;
    make_fixture(&fx, "$ORIGIN/lib");
    const char *paths[] = { fx.ext };
    const char *names[] = { "p/demo.so" };
    char *tag = NULL;
    struct strbuf why = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_wheel_platform_tag(paths, names, 1, NULL, 0, &tag, &why, &err), 0);
    assert_string_equal(tag, "linux_x86_64");
    assert_non_null(strstr(why.buf, "libcfhelper.so"));
    free(tag);
    cf_sb_release(&why);
    free_fixture(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_b64_and_sha256),
        cmocka_unit_test(test_rpath_origin_relative),
        cmocka_unit_test(test_record_parse),
        cmocka_unit_test(test_kv_and_names),
        cmocka_unit_test(test_writer_is_reproducible_and_verifies),
        cmocka_unit_test(test_install_and_import_from_venv),
        cmocka_unit_test(test_verify_rejects_tampered_record),
        cmocka_unit_test(test_verify_rejects_zip_slip_and_escaping_symlink),
        cmocka_unit_test(test_verify_rejects_absolute_rpath),
        cmocka_unit_test(test_verify_rejects_missing_library),
        cmocka_unit_test(test_platform_tag_linux_when_not_covered),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
