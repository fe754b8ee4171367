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
#include "pkg/inflate_engine.h"
#include "pkg/manylinux_policy.h"
#include "pkg/member_name.h"
#include "pkg/name_index.h"
#include "pkg/zip_read.h"
#include "pkg/zip_scan.h"
#include "ts_inflate.h"

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
    /* what packaging.utils.parse_wheel_filename refuses (checked against it) */
    static const char *const refused[] = { "p\x1b-1.0-py3-none-any.whl", "p q-1.0-py3-none-any.whl",
                                           "p-1.0-x1-py3-none-any.whl", "p--1.0-py3-none-any.whl" };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(cf_wheel_name_parse(refused[i], &wn, &err), -1);
        cf_error_clear(&err);
    }
    assert_int_equal(cf_wheel_name_parse("p-1.0-1x-py3-none-any.whl", &wn, &err), 0);
    cf_wheel_name_release(&wn);
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

/* glibc 2.32 needed (sigabbrev_np is GLIBC_2.32): there is no manylinux_2_32
 * policy, so the tag is the one the verifier then holds the wheel to,
 * manylinux_2_34, never a tag the policy line contradicts. */
static void test_platform_tag_is_the_policy_the_verifier_uses(void **state)
{
    (void)state;
    assert_int_equal(cf_policy_oldest_from(32, "x86_64"), 34);
    assert_int_equal(cf_policy_oldest_from(17, "x86_64"), 17);
    assert_int_equal(cf_policy_oldest_from(29, "x86_64"), 31);
    assert_int_equal(cf_policy_oldest_from(99, "x86_64"), 0);
    char *dir = ts_tmpdir();
    char *so_path = cf_path_join(dir, "needs232.so");
    const char *so = ts_cc(dir, so_path,
                           "#define _GNU_SOURCE\n#include <string.h>\nconst char *f(int s) { return sigabbrev_np(s); }\n",
                           "-shared", "-fPIC", NULL);
    const char *paths[] = { so };
    const char *names[] = { "p/needs232.so" };
    char *tag = NULL;
    struct strbuf why = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_wheel_platform_tag(paths, names, 1, NULL, 0, &tag, &why, &err), 0);
    assert_string_equal(tag, "manylinux_2_34_x86_64");
    assert_non_null(strstr(why.buf, "glibc 2.32"));
    free(tag);
    free(so_path);
    cf_sb_release(&why);
}

/* ---- the zip reader, on archives written by libzip (an independent writer) ---- */

static char *libzip_archive(const char *dir, const char *file, const char *const *names, const char *const *texts,
                            size_t n, int store)
{
    char *path = cf_path_join(dir, file);
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, NULL);
    assert_non_null(za);
    for (size_t i = 0; i < n; i++) {
        zip_source_t *src = zip_source_buffer(za, texts[i], strlen(texts[i]), 0);
        zip_int64_t idx = zip_file_add(za, names[i], src, 0);
        assert_true(idx >= 0);
        zip_set_file_compression(za, (zip_uint64_t)idx, store ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 9);
    }
    assert_int_equal(zip_close(za), 0);
    return path;
}

/* Reads member e of the archive in sb whole, in reads of `piece` bytes
 * (small ones: the chunking must not matter); -1 (err set) on a fault. */
static int read_pieces(const struct cf_inflate_engine *engine, struct strbuf *sb, const struct cf_zip_entry *e,
                       size_t piece, struct strbuf *out, cf_error *err)
{
    struct cf_zip_member *m = malloc(sizeof *m);
    int rc = cf_zip_member_open(m, engine, ts_read_strbuf, sb, e, err);
    unsigned char *buf = malloc(piece);
    ssize_t got;
    while (rc == 0 && (got = cf_zip_member_read(m, buf, piece, err)) != 0) {
        if (got < 0) {
            rc = -1;
            break;
        }
        cf_sb_add(out, buf, (size_t)got);
    }
    cf_zip_member_close(m);
    free(buf);
    free(m);
    return rc;
}

static int read_whole(const struct cf_inflate_engine *engine, struct strbuf *sb, const struct cf_zip_entry *e,
                      struct strbuf *out, cf_error *err)
{
    return read_pieces(engine, sb, e, 7, out, err);
}

static void zip_scan_and_read_with(const struct cf_inflate_engine *engine)
{
    char *dir = ts_tmpdir();
    const char *names[] = { "a/one.txt", "a/two.txt" };
    const char *texts[] = { "the first member, long enough to be deflated: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
                            "second\n" };
    cf_error err = CF_ERROR_INIT;
    for (int store = 0; store < 2; store++) {
        char *path = libzip_archive(dir, store ? "s.zip" : "d.zip", names, texts, 2, store);
        struct strbuf sb = STRBUF_INIT;
        assert_int_equal(cf_read_file(path, 1 << 20, &sb, &err), 0);
        struct cf_zip_limits lim = { 100, 1 << 20, 10 };
        struct cf_zip_scan scan;
        assert_int_equal(cf_zip_scan(ts_read_strbuf, &sb, sb.len, &lim, &scan, &err), 0);
        assert_int_equal(scan.n, 2);
        assert_int_equal(scan.n_faults, 0);
        assert_string_equal(scan.entries[1].name, "a/two.txt");
        for (size_t i = 0; i < 2; i++) {
            struct strbuf out = STRBUF_INIT;
            assert_int_equal(read_whole(engine, &sb, &scan.entries[i], &out, &err), 0);
            assert_string_equal(out.buf, texts[i]);
            cf_sb_release(&out);
        }
        /* a flipped data byte: the CRC says so */
        sb.buf[scan.entries[1].data_offset] ^= 0x01;
        struct strbuf out = STRBUF_INIT;
        assert_int_equal(read_whole(engine, &sb, &scan.entries[1], &out, &err), -1);
        if (store)
            assert_non_null(strstr(cf_error_message(&err), "CRC-32 is"));
        cf_error_clear(&err);
        cf_sb_release(&out);
        /* a member declaring more than it holds */
        struct cf_zip_entry lying = scan.entries[0];
        lying.usize += 1000;
        if (!store) {
            assert_int_equal(read_whole(engine, &sb, &lying, &out, &err), -1);
            assert_non_null(strstr(cf_error_message(&err), "the data ends after"));
            cf_error_clear(&err);
        }
        cf_sb_release(&out);
        /* ... or less: never more than declared comes out */
        lying = scan.entries[0];
        lying.usize -= 10;
        if (!store) {
            assert_int_equal(read_whole(engine, &sb, &lying, &out, &err), -1);
            assert_non_null(strstr(cf_error_message(&err), "more data than"));
            assert_true(out.len <= lying.usize);
            cf_error_clear(&err);
        }
        cf_sb_release(&out);
        cf_zip_scan_release(&scan);
        /* cut short: no end record */
        assert_int_equal(cf_zip_scan(ts_read_strbuf, &sb, sb.len - 30, &lim, &scan, &err), -1);
        assert_non_null(strstr(cf_error_message(&err), "end of central directory"));
        cf_error_clear(&err);
        cf_sb_release(&sb);
        free(path);
    }
}

static void test_zip_scan_and_read(void **state)
{
    struct cf_inflate_engine engines[2];
    size_t n = ts_inflate_engines(engines);
    for (size_t k = 0; k < n; k++)
        zip_scan_and_read_with(&engines[k]);
}

static void test_name_index(void **state)
{
    struct cf_name_index ix = CF_NAME_INDEX_INIT;
    struct strvec keys = STRVEC_INIT;
    for (size_t i = 0; i < 100000; i++)
        cf_strvec_pushf(&keys, "pkg/sub/m%06zu.py", i);
    for (size_t i = 0; i < keys.n; i++)
        assert_int_equal(cf_name_index_add(&ix, keys.v[i], strlen(keys.v[i]), i, NULL), 1);
    size_t v, first;
    for (size_t i = 0; i < keys.n; i += 997) {
        assert_int_equal(cf_name_index_find(&ix, keys.v[i], strlen(keys.v[i]), &v), 1);
        assert_int_equal(v, i);
    }
    assert_int_equal(cf_name_index_add(&ix, keys.v[5], strlen(keys.v[5]), 99, &first), 0);
    assert_int_equal(first, 5);
    assert_int_equal(cf_name_index_find(&ix, "pkg/sub", 7, NULL), 0);
    /* prefixes by the incremental hash find what whole-key hashing added */
    uint64_t raw = cf_fnv1a64_more(cf_name_hash_start(&ix), "pkg/sub/", 8);
    raw = cf_fnv1a64_more(raw, "m000042.py", 10);
    assert_int_equal(cf_name_index_find_raw(&ix, keys.v[42], strlen(keys.v[42]), raw, &v), 1);
    assert_int_equal(v, 42);
    cf_name_index_release(&ix);
    cf_strvec_clear(&keys);
}

/* The policy table against facts read off auditwheel's manylinux-policy.json by hand. */
static void test_manylinux_policy(void **state)
{
    assert_int_equal(cf_policy_version_minor("x86_64", "GLIBCXX_3.4.21"), 24);
    assert_int_equal(cf_policy_version_minor("x86_64", "GLIBCXX_3.4.23"), 27);
    assert_int_equal(cf_policy_version_minor("aarch64", "GLIBCXX_3.4.23"), 26);
    assert_int_equal(cf_policy_version_minor("x86_64", "CXXABI_1.3.9"), 24);
    assert_int_equal(cf_policy_version_minor("x86_64", "GCC_7.0.0"), 27);
    assert_int_equal(cf_policy_version_minor("x86_64", "GLIBC_2.2.5"), 5);
    assert_int_equal(cf_policy_version_minor("x86_64", "GLIBC_PRIVATE"), 0);
    assert_int_equal(cf_policy_version_minor("x86_64", "GLIBCXX_3.4.99"), 0);
    assert_int_equal(cf_policy_version_minor("x86_64", "GFORTRAN_8"), -1);
    assert_int_equal(cf_policy_lib_minor("libmvec.so.1"), 24);
    assert_int_equal(cf_policy_lib_minor("libexpat.so.1"), 12);
    assert_int_equal(cf_policy_lib_minor("libc.so.6"), 5);
    assert_int_equal(cf_policy_lib_minor("ld-linux-x86-64.so.2"), 5);
    assert_int_equal(cf_policy_lib_minor("libcrypt.so.1"), 0);
    assert_int_equal(cf_policy_for_tag(29, "x86_64"), 28);
    assert_int_equal(cf_policy_for_tag(17, "aarch64"), 17);
    assert_int_equal(cf_policy_for_tag(12, "aarch64"), 0);
    assert_int_equal(cf_policy_for_tag(30, "riscv64"), 0);
}

static void test_tags_and_arch(void **state)
{
    struct cf_wheel_name wn;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(
        cf_wheel_name_parse("x-1.0-cp311.cp312-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", &wn, &err), 0);
    struct strvec tags = STRVEC_INIT;
    assert_int_equal(cf_wheel_tags_expand(&wn, 100, &tags), 0);
    assert_int_equal(tags.n, 4);
    assert_string_equal(tags.v[0], "cp311-abi3-manylinux_2_17_x86_64");
    assert_string_equal(tags.v[3], "cp312-abi3-manylinux2014_x86_64");
    cf_strvec_clear(&tags);
    assert_int_equal(cf_wheel_tags_expand(&wn, 3, &tags), -1);
    cf_wheel_name_release(&wn);
    static const struct {
        const char *tag, *arch;
    } archs[] = { { "manylinux_2_17_x86_64", "x86_64" }, { "manylinux2014_aarch64.manylinux_2_17_aarch64", "aarch64" },
                  { "linux_x86_64", "x86_64" },          { "musllinux_1_2_x86_64", "x86_64" },
                  { "any", NULL },                       { "manylinux_2_28_ppc64le", "ppc64le" } };
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        char *a = cf_platform_arch(archs[i].tag);
        if (archs[i].arch)
            assert_string_equal(a, archs[i].arch);
        else
            assert_null(a);
        free(a);
    }
    char *canon = cf_dist_canonical("Foo__Bar.baz-Qux");
    assert_string_equal(canon, "foo-bar-baz-qux");
    free(canon);
}

/* Continuation lines and the path normaliser on input shaped to be quadratic. */
static void test_linear_parsers(void **state)
{
    struct strbuf text = STRBUF_INIT;
    cf_sb_adds(&text, "Wheel-Version: 1.0\nGenerator: x\n");
    for (int i = 0; i < 200000; i++)
        cf_sb_adds(&text, " y\n");
    cf_sb_adds(&text, "Tag: py3-none-any\n");
    struct cf_kv kv;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_kv_parse(text.buf, text.len, &kv, &err), 0);
    assert_int_equal(kv.n, 3);
    assert_int_equal(strlen(cf_kv_get(&kv, "Generator")), 1 + 200000 * 3);
    assert_string_equal(cf_kv_get(&kv, "Tag"), "py3-none-any");
    cf_kv_release(&kv);
    cf_sb_reset(&text);
    cf_sb_adds(&text, "/x/");
    for (int i = 0; i < 400000; i++)
        cf_sb_adds(&text, "a/../");
    cf_sb_adds(&text, "../../b");
    int escaped = 0;
    char *norm = cf_path_normalize(text.buf, &escaped);
    assert_string_equal(norm, "/b");
    assert_int_equal(escaped, 1);
    free(norm);
    cf_sb_release(&text);
}

static char *normal_of(const char *n)
{
    struct strbuf sb = STRBUF_INIT;
    cf_member_name_normalize(n, strlen(n), &sb);
    return cf_sb_detach(&sb);
}

static char *fold_of(const char *n)
{
    struct strbuf sb = STRBUF_INIT;
    cf_member_name_fold(n, strlen(n), &sb);
    return cf_sb_detach(&sb);
}

/* The member-name normaliser: problems, normal forms, fold keys, the set and
 * the reason it gives (tests/cli/wheel_names.sh checks the fold against CPython). */
static void test_member_names(void **state)
{
    static const struct {
        const char *name, *problem;
    } problems[] = {
        { "", "empty" },           { "/etc/x", "absolute" }, { "a\\b", "backslash" }, { "C:/x", "drive" },
        { "a/../b", "zip slip" }, { "./..", "zip slip" },   { "./", "no name" },     { ".//.", "no name" },
        { "hw/x.py", NULL },       { "./hw//x.py/.", NULL },
    };
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; i++) {
        const char *why = cf_member_name_problem(problems[i].name, strlen(problems[i].name));
        if (problems[i].problem)
            assert_non_null(why && strstr(why, problems[i].problem));
        else
            assert_null(why);
    }
    static const char *const aliases[] = { "./hw/__init__.py", "hw/./__init__.py", "hw//__init__.py",
                                           "hw/__init__.py/.", "hw/__init__.py" };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        char *n = normal_of(aliases[i]);
        assert_string_equal(n, "hw/__init__.py");
        free(n);
    }
    assert_true(cf_member_name_ok("hw/x.py"));
    assert_false(cf_member_name_ok("hw//x.py"));
    assert_false(cf_member_name_ok("hw/x.py/"));
    /* U+00C0 -> a U+0300, U+00C6 -> U+00E6, U+0130 -> i U+0307, U+0344 -> U+0308 U+0301, U+00DF and U+017F kept */
    static const struct {
        const char *in, *out;
    } folds[] = { { "HW/\xc3\x80", "hw/a\xcc\x80" }, { "\xc3\x86", "\xc3\xa6" }, { "\xc4\xb0", "i\xcc\x87" },
                  { "\xcd\x84", "\xcc\x88\xcc\x81" }, { "\xc3\x9f", "\xc3\x9f" }, { "\xc5\xbf", "\xc5\xbf" },
                  { "\xc3", "\xc3" }, { "\xe2\x84\xaa", "\xe2\x84\xaa" } };
    for (size_t i = 0; i < sizeof folds / sizeof folds[0]; i++) {
        char *f = fold_of(folds[i].in);
        assert_string_equal(f, folds[i].out);
        free(f);
    }
    assert_int_equal(cf_member_name_control("ab\rc", 4), 2);
    assert_int_equal(cf_member_name_control("a\xc2\x9b", 3), 1);
    assert_int_equal(cf_member_name_control("caf\xc3\xa9\t", 6), 5);
    assert_int_equal(cf_member_name_control("caf\xc3\xa9", 5), -1);
    struct cf_member_set set = CF_MEMBER_SET_INIT;
    static const struct {
        const char *name;
        long twin;
        const char *says;
    } adds[] = {
        { "hw/__init__.py", -1, NULL },
        { "./hw/__init__.py", 0, "both install to W: pip writes one over the other" },
        { "hw/Util.py", -1, NULL },
        { "hw/util.py", 2, "differ only in case" },
        { "hw/caf\xc3\xa9.py", -1, NULL },
        { "hw/cafe\xcc\x81.py", 4, "(bytes c3 a9 in the first, 65 cc 81 in the second)" },
        { "HW/CAF\xc3\x89.PY", 4, "Unicode-normalised (NFC/NFD) and lower-cased" },
        { "hw/stra\xc3\x9f" "e.py", -1, NULL },
        { "hw/strasse.py", -1, NULL },
    };
    for (size_t i = 0; i < sizeof adds / sizeof adds[0]; i++) {
        long got = cf_member_set_add(&set, adds[i].name, strlen(adds[i].name), i);
        assert_int_equal(got, adds[i].twin);
        if (got < 0)
            continue;
        struct strbuf why = STRBUF_INIT;
        cf_member_alias_describe(&why, adds[got].name, adds[got].name, adds[i].name, adds[i].name, "W");
        assert_non_null(strstr(cf_sb_str(&why), adds[i].says));
        assert_true(cf_starts_with(cf_sb_str(&why), "'"));
        cf_sb_release(&why);
    }
    cf_member_set_release(&set);
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
        cmocka_unit_test(test_platform_tag_is_the_policy_the_verifier_uses),
        cmocka_unit_test(test_zip_scan_and_read),
        cmocka_unit_test(test_name_index),
        cmocka_unit_test(test_manylinux_policy),
        cmocka_unit_test(test_tags_and_arch),
        cmocka_unit_test(test_linear_parsers),
        cmocka_unit_test(test_member_names),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
