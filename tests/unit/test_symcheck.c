/* Symbol and version check on fixtures built here, each compared with
 * `ldd -r` on the same files: a library replaced by an older one that lacks a
 * version, one that lacks a symbol, weak references, and real libraries. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cclforge/fs.h"
#include "cclforge/ldso.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"
#include "cclforge/symcheck.h"

#define NO_AS_NEEDED "-Wl,--no-as-needed"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(const char *path, struct cf_ldso_result *r, struct cf_symcheck_result *s)
{
    struct cf_ldso_opts o = { 0 };
    o.ignore_ld_library_path = 1;
    cf_error err = CF_ERROR_INIT;
    if (cf_ldso_resolve(path, &o, r, &err) != 0 || cf_symcheck_run(r, s, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
}

/* The problem lines of `ldd -r` (all on stdout). Returns seconds taken. */
static double ldd_r_problems(const char *path, struct strvec *out)
{
    const char *argv[] = { "ldd", "-r", path, NULL };
    const char *env[] = { "LD_LIBRARY_PATH", NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.merge_stderr = 1;
    o.null_stdin = 1;
    o.timeout_s = 120;
    o.env_set = env;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    double t0 = now();
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    double t = now() - t0;
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&r.out), "\n", 0);
    for (size_t i = 0; i < lines.n; i++)
        if (strstr(lines.v[i], "undefined symbol: ") || strstr(lines.v[i], ": version `"))
            cf_strvec_push(out, lines.v[i]);
    cf_strvec_clear(&lines);
    cf_spawn_result_release(&r);
    return t;
}

/* Our messages equal ldd's, as sets (ldd's order within an object follows the
 * relocation table); ldd prefixes version lines with the program name. */
static void assert_same_as_ldd_r(const char *path, const struct cf_symcheck_result *s)
{
    if (!ts_have("ldd")) {
        print_message("SKIP: ldd is not installed: the comparison with ldd -r cannot run\n");
        skip();
    }
    struct strvec theirs = STRVEC_INIT;
    ldd_r_problems(path, &theirs);
    struct strbuf why = STRBUF_INIT;
    for (size_t i = 0; i < theirs.n; i++) {
        int found = 0;
        for (size_t k = 0; k < s->n_problems && !found; k++)
            found = cf_ends_with(theirs.v[i], s->problems[k].message);
        if (!found)
            cf_sb_addf(&why, "ldd reports, cclforge does not: %s\n", theirs.v[i]);
    }
    if (theirs.n != s->n_problems || why.len) {
        for (size_t k = 0; k < s->n_problems; k++)
            cf_sb_addf(&why, "cclforge: %s\n", s->problems[k].message);
        fail_msg("%s: %zu problems from ldd -r, %zu from cclforge\n%s", path, theirs.n, s->n_problems, cf_sb_str(&why));
    }
    cf_sb_release(&why);
    cf_strvec_clear(&theirs);
}

static const char *lib_v2_src = "int foo(void){return 1;}\nint bar(void){return 2;}\nint baz(void){return 3;}\n";
static const char *lib_v1_src = "int foo(void){return 1;}\n";
static const char *app_src = "int foo(void); int bar(void); int baz(void);\nint main(void){return foo()+bar()+baz();}\n";

/* Linked against v2 of libv (versions V1 and V2), run against v1 (V1 only). */
static void test_missing_version(void **state)
{
    char *t = ts_tmpdir();
    char *map2 = ts_write(t, "v2.map", "V1 { global: foo; local: *; };\nV2 { global: bar; baz; } V1;\n");
    char *map1 = ts_write(t, "v1.map", "V1 { global: foo; local: *; };\n");
    char *lib = cf_path_join(t, "libv_fx.so");
    char *vs2 = cf_asprintf("-Wl,--version-script,%s", map2), *vs1 = cf_asprintf("-Wl,--version-script,%s", map1);
    ts_cc(t, lib, lib_v2_src, "-shared", "-fPIC", "-Wl,-soname,libv_fx.so", vs2, NULL);
    char *app = cf_path_join(t, "app");
    char *L = cf_asprintf("-L%s", t), *rp = cf_asprintf("-Wl,-rpath,%s", t);
    ts_cc(t, app, app_src, NO_AS_NEEDED, L, "-lv_fx", rp, NULL);

    struct cf_ldso_result r;
    struct cf_symcheck_result s;
    check(app, &r, &s);
    assert_int_equal(s.n_problems, 0);
    assert_true(s.n_references > 3);
    cf_symcheck_result_release(&s);
    cf_ldso_result_release(&r);

    ts_cc(t, lib, lib_v1_src, "-shared", "-fPIC", "-Wl,-soname,libv_fx.so", vs1, NULL);
    check(app, &r, &s);
    assert_int_equal(s.n_versions, 1);
    assert_int_equal(s.n_undefined, 2); /* bar@V2 and baz@V2 no longer bind */
    assert_int_equal(s.problems[0].kind, CF_SYMCHECK_VERSION_NOT_FOUND);
    char *want = cf_asprintf("%s: version `V2' not found (required by %s)", lib, app);
    assert_string_equal(s.problems[0].message, want);
    free(want);
    for (size_t i = 1; i < s.n_problems; i++) {
        assert_int_equal(s.problems[i].kind, CF_SYMCHECK_UNDEFINED);
        assert_string_equal(s.problems[i].version, "V2");
    }
    assert_same_as_ldd_r(app, &s);
    cf_symcheck_result_release(&s);
    cf_ldso_result_release(&r);
    free(lib); free(vs1); free(vs2); free(app); free(L); free(rp);
}

/* Linked against a libu with foo and bar, run against one with foo only. A weak
 * reference to a symbol nobody defines is fine. */
static void test_undefined_symbol(void **state)
{
    char *t = ts_tmpdir();
    char *lib = cf_path_join(t, "libu_fx.so");
    ts_cc(t, lib, "int foo(void){return 1;}\nint bar(void){return 2;}\n", "-shared", "-fPIC", "-Wl,-soname,libu_fx.so", NULL);
    char *app = cf_path_join(t, "app");
    char *L = cf_asprintf("-L%s", t), *rp = cf_asprintf("-Wl,-rpath,%s", t);
    ts_cc(t, app,
          "int foo(void); int bar(void);\nextern int nowhere(void) __attribute__((weak));\n"
          "int main(void){return foo()+bar()+(nowhere ? nowhere() : 0);}\n",
          NO_AS_NEEDED, L, "-lu_fx", rp, NULL);
    struct cf_ldso_result r;
    struct cf_symcheck_result s;
    check(app, &r, &s);
    assert_int_equal(s.n_problems, 0);
    assert_same_as_ldd_r(app, &s);
    cf_symcheck_result_release(&s);
    cf_ldso_result_release(&r);

    ts_cc(t, lib, "int foo(void){return 1;}\n", "-shared", "-fPIC", "-Wl,-soname,libu_fx.so", NULL);
    check(app, &r, &s);
    assert_int_equal(s.n_problems, 1);
    assert_int_equal(s.problems[0].kind, CF_SYMCHECK_UNDEFINED);
    assert_string_equal(s.problems[0].symbol, "bar");
    assert_null(s.problems[0].version);
    char *want = cf_asprintf("undefined symbol: bar\t(%s)", app);
    assert_string_equal(s.problems[0].message, want);
    free(want);
    assert_same_as_ldd_r(app, &s);
    cf_symcheck_result_release(&s);
    cf_ldso_result_release(&r);
    free(lib); free(app); free(L); free(rp);
}

/* Definitions' hashes come from each object's .gnu.hash when it has one and
 * are computed otherwise: the same answers with either table, or both, and
 * the same as ldd -r. Forty symbols spread over several buckets. */
static void test_hash_styles(void **state)
{
    static const char *const styles[] = { "gnu", "sysv", "both" };
    char *t = ts_tmpdir();
    struct strbuf lib_all = STRBUF_INIT, lib_less = STRBUF_INIT, main_src = STRBUF_INIT;
    cf_sb_adds(&main_src, "int main(void){ int s = 0;\n");
    for (int i = 0; i < 40; i++) {
        cf_sb_addf(&lib_all, "int sym_%d(void){return %d;}\n", i, i);
        if (i != 17)
            cf_sb_addf(&lib_less, "int sym_%d(void){return %d;}\n", i, i);
        cf_sb_addf(&main_src, "  extern int sym_%d(void); s += sym_%d();\n", i, i);
    }
    cf_sb_adds(&main_src, "  return s; }\n");
    char *lib = cf_path_join(t, "libh_fx.so"), *app = cf_path_join(t, "app");
    char *L = cf_asprintf("-L%s", t), *rp = cf_asprintf("-Wl,-rpath,%s", t);
    for (size_t k = 0; k < sizeof styles / sizeof styles[0]; k++) {
        char *style = cf_asprintf("-Wl,--hash-style=%s", styles[k]);
        ts_cc(t, lib, lib_all.buf, "-shared", "-fPIC", "-Wl,-soname,libh_fx.so", style, NULL);
        ts_cc(t, app, main_src.buf, NO_AS_NEEDED, L, "-lh_fx", rp, style, NULL);
        struct cf_ldso_result r;
        struct cf_symcheck_result s;
        check(app, &r, &s);
        assert_int_equal(s.n_problems, 0);
        assert_true(s.n_references >= 40);
        cf_symcheck_result_release(&s);
        cf_ldso_result_release(&r);

        ts_cc(t, lib, lib_less.buf, "-shared", "-fPIC", "-Wl,-soname,libh_fx.so", style, NULL);
        check(app, &r, &s);
        assert_int_equal(s.n_problems, 1);
        assert_string_equal(s.problems[0].symbol, "sym_17");
        assert_same_as_ldd_r(app, &s);
        cf_symcheck_result_release(&s);
        cf_ldso_result_release(&r);
        free(style);
    }
    cf_sb_release(&lib_all); cf_sb_release(&lib_less); cf_sb_release(&main_src);
    free(lib); free(app); free(L); free(rp);
}

/* A reference to foo@V1 binds to a non-default (hidden, '@') definition: the
 * compatibility-symbol case every glibc upgrade relies on. */
static void test_versioned_reference_binds_to_compat_symbol(void **state)
{
    char *t = ts_tmpdir();
    char *map = ts_write(t, "c.map", "V1 { global: foo; local: *; };\nV2 { global: foo; } V1;\n");
    char *map1 = ts_write(t, "c1.map", "V1 { global: foo; local: *; };\n");
    char *lib = cf_path_join(t, "libc_compat_fx.so");
    char *vs = cf_asprintf("-Wl,--version-script,%s", map), *vs1 = cf_asprintf("-Wl,--version-script,%s", map1);
    /* Link the app against the V1-only library, so it needs foo@V1 ... */
    ts_cc(t, lib, "int foo(void){return 1;}\n", "-shared", "-fPIC", "-Wl,-soname,libc_compat_fx.so", vs1, NULL);
    char *app = cf_path_join(t, "app");
    char *L = cf_asprintf("-L%s", t), *rp = cf_asprintf("-Wl,-rpath,%s", t);
    ts_cc(t, app, "int foo(void);\nint main(void){return foo();}\n", NO_AS_NEEDED, L, "-lc_compat_fx", rp, NULL);
    /* ... then run it against a library where foo@V1 is the old, hidden one. */
    ts_cc(t, lib,
          "int foo_old(void){return 1;}\nint foo_new(void){return 2;}\n"
          "__asm__(\".symver foo_old,foo@V1\");\n__asm__(\".symver foo_new,foo@@V2\");\n",
          "-shared", "-fPIC", "-Wl,-soname,libc_compat_fx.so", vs, NULL);
    struct cf_ldso_result r;
    struct cf_symcheck_result s;
    check(app, &r, &s);
    assert_int_equal(s.n_problems, 0);
    assert_same_as_ldd_r(app, &s);
    cf_symcheck_result_release(&s);
    cf_ldso_result_release(&r);
    free(lib); free(vs); free(vs1); free(app); free(L); free(rp);
}

/* Real libraries: the machine's NCCL, libcrypto and libcjson, clean, and timed against ldd -r. */
/* Problem messages as a set (ldd -r reports a symbol once per relocation
 * table that names it; we report it once). */
static void push_unique(struct strvec *v, const char *s)
{
    if (!cf_strvec_contains(v, s))
        cf_strvec_push(v, s);
}

static void problem_set(const struct cf_symcheck_result *s, struct strvec *out)
{
    for (size_t k = 0; k < s->n_problems; k++)
        push_unique(out, s->problems[k].message);
}

/* An undefined dynamic symbol that no dynamic relocation names (here, only a
 * non-allocated note refers to it) is never looked up by glibc: not an
 * "undefined symbol", while one a GOT relocation names is. */
static char *build_noreloc_library(const char *t)
{
    char *s = ts_write(t, "ref.s",
                       "\t.text\n\t.globl cfx_uses\n\t.type cfx_uses, @function\ncfx_uses:\n"
                       "\tmovq cfx_real_ref@GOTPCREL(%rip), %rax\n\tret\n"
                       "\t.section .note.cfx,\"\",@note\n\t.quad cfx_nonalloc_ref\n"
                       "\t.section .note.GNU-stack,\"\",@progbits\n");
    char *lib = cf_path_join(t, "libnoreloc_fx.so");
    const char *cc = getenv("CC");
    const char *argv[] = { cc && *cc ? cc : "cc", "-shared", "-o", lib, s, NO_AS_NEEDED, "-lc", NULL };
    ts_run_ok(argv);
    return lib;
}

/* The library above has one undefined reference glibc looks up: cfx_real_ref. */
static void expect_only_the_relocated_reference(const char *lib)
{
    struct cf_ldso_result r;
    struct cf_symcheck_result sc;
    check(lib, &r, &sc);
    assert_int_equal(sc.n_undefined, 1);
    assert_string_equal(sc.problems[0].symbol, "cfx_real_ref");
    assert_same_as_ldd_r(lib, &sc);
    cf_symcheck_result_release(&sc);
    cf_ldso_result_release(&r);
}

static void test_only_relocated_symbols_count(void **state)
{
    char *t = ts_tmpdir();
    char *lib = build_noreloc_library(t);
    expect_only_the_relocated_reference(lib);
    free(lib);
    struct cf_ldso_result r;
    struct cf_symcheck_result sc;

    /* With no dynamic relocation at all (no DT_RELA, no .rela.dyn) nothing
     * is looked up: the strong undefined symbol is no problem either. */
    char *s = ts_write(t, "none.s",
                       "\t.text\n\t.globl cfx_uses\n\t.type cfx_uses, @function\ncfx_uses:\n\tret\n"
                       "\t.section .note.cfx,\"\",@note\n\t.quad cfx_nonalloc_ref\n"
                       "\t.section .note.GNU-stack,\"\",@progbits\n");
    lib = cf_path_join(t, "libnone_fx.so");
    const char *cc = getenv("CC");
    const char *argv[] = { cc && *cc ? cc : "cc", "-shared", "-nostdlib", "-o", lib, s, NO_AS_NEEDED, "-lc", NULL };
    ts_run_ok(argv);
    check(lib, &r, &sc);
    assert_int_equal(sc.n_problems, 0);
    assert_same_as_ldd_r(lib, &sc);
    cf_symcheck_result_release(&sc);
    cf_ldso_result_release(&r);
    free(lib);
}

/* Objects whose section headers are stripped (sstrip, objcopy
 * --strip-section-headers) load as before, since glibc reads only the
 * dynamic tags: the same problems as with their headers, and as ldd -r, with
 * each hash style (DT_HASH's count; GNU hash's chains), the version
 * requirement read through DT_VERNEED and the relocations through
 * DT_RELA and DT_JMPREL (an undefined symbol no relocation names is still
 * not looked up). */
static void test_without_section_headers_like_ldd_r(void **state)
{
    static const char *const styles[] = { "gnu", "sysv" };
    char *t = ts_tmpdir();
    char *map2 = ts_write(t, "v2.map", "V1 { global: foo; local: *; };\nV2 { global: bar; baz; } V1;\n");
    char *map1 = ts_write(t, "v1.map", "V1 { global: foo; local: *; };\n");
    char *vs2 = cf_asprintf("-Wl,--version-script,%s", map2), *vs1 = cf_asprintf("-Wl,--version-script,%s", map1);
    char *lib = cf_path_join(t, "libv_fx.so"), *app = cf_path_join(t, "app");
    char *L = cf_asprintf("-L%s", t), *rp = cf_asprintf("-Wl,-rpath,%s", t);
    for (size_t k = 0; k < sizeof styles / sizeof styles[0]; k++) {
        char *style = cf_asprintf("-Wl,--hash-style=%s", styles[k]);
        ts_cc(t, lib, lib_v2_src, "-shared", "-fPIC", "-Wl,-soname,libv_fx.so", vs2, style, NULL);
        ts_cc(t, app, app_src, NO_AS_NEEDED, L, "-lv_fx", rp, style, NULL);
        ts_cc(t, lib, lib_v1_src, "-shared", "-fPIC", "-Wl,-soname,libv_fx.so", vs1, style, NULL);
        struct cf_ldso_result r;
        struct cf_symcheck_result with, without;
        check(app, &r, &with);
        cf_ldso_result_release(&r);
        ts_strip_section_headers(lib);
        ts_strip_section_headers(app);
        check(app, &r, &without);
        assert_int_equal(without.n_versions, 1);
        assert_int_equal(without.n_undefined, 2);
        assert_int_equal(without.n_references, with.n_references);
        struct strvec a = STRVEC_INIT, b = STRVEC_INIT;
        problem_set(&with, &a);
        problem_set(&without, &b);
        assert_int_equal(a.n, b.n);
        for (size_t i = 0; i < a.n; i++)
            assert_true(cf_strvec_contains(&b, a.v[i]));
        assert_same_as_ldd_r(app, &without);
        cf_strvec_clear(&a);
        cf_strvec_clear(&b);
        cf_symcheck_result_release(&with);
        cf_symcheck_result_release(&without);
        cf_ldso_result_release(&r);
        free(style);
    }
    free(vs1); free(vs2); free(lib); free(app); free(L); free(rp);

    char *noreloc = build_noreloc_library(t);
    ts_strip_section_headers(noreloc);
    expect_only_the_relocated_reference(noreloc);
    free(noreloc);
}

/* torch 2.15's libtorch_python.so and _C: PyExc_FutureWarning is in .dynsym
 * but no relocation names it, so ldd -r does not report it (no false
 * "undefined symbol"); the rest are the interpreter's symbols, the same set. */
static void test_torch_python_like_ldd_r(void **state)
{
    const char *home = getenv("HOME");
    char *site = cf_asprintf("%s/.cache/cclforge/torch/site-2.15.0-cp311/torch", home ? home : "/root");
    char *lib = cf_path_join(site, "lib/libtorch_python.so");
    if (!cf_is_file(lib) || !ts_have("ldd")) {
        print_message("SKIP: %s\n", !ts_have("ldd") ? "ldd is not installed"
                                                     : "no torch 2.15 wheel in the cache (bash scripts/torch-cache.sh)");
        free(site);
        free(lib);
        skip();
    }
    char *libdir = cf_path_join(site, "lib");
    const char *cuda = ts_cuda_root(); /* the toolkit's libraries (cuBLAS, ...) for torch's closure */
    char *llp = cuda ? cf_asprintf("%s:%s/lib64", libdir, cuda) : cf_strdup(libdir);
    setenv("LD_LIBRARY_PATH", llp, 1);
    struct cf_ldso_opts o = { 0 };
    struct cf_ldso_result r;
    struct cf_symcheck_result s;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldso_resolve(lib, &o, &r, &err), 0);
    assert_int_equal(cf_symcheck_run(&r, &s, &err), 0);
    for (size_t i = 0; i < s.n_problems; i++)
        if (s.problems[i].symbol && strcmp(s.problems[i].symbol, "PyExc_FutureWarning") == 0)
            fail_msg("PyExc_FutureWarning reported undefined; no relocation names it");
    assert_true(s.n_undefined > 100); /* the interpreter's symbols */
    /* ldd -r with the same LD_LIBRARY_PATH (the helper clears it: call ldd directly). */
    const char *argv[] = { "ldd", "-r", lib, NULL };
    struct cf_spawn_opts so = { 0 };
    so.capture_stdout = 1;
    so.merge_stderr = 1;
    so.null_stdin = 1;
    so.timeout_s = 300;
    struct cf_spawn_result sr = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &so, &sr, NULL), 0);
    struct strvec theirs = STRVEC_INIT, ours = STRVEC_INIT;
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&sr.out), "\n", 0);
    for (size_t i = 0; i < lines.n; i++)
        if (strstr(lines.v[i], "undefined symbol: "))
            push_unique(&theirs, strstr(lines.v[i], "undefined symbol: "));
    problem_set(&s, &ours);
    assert_int_equal(theirs.n, ours.n);
    for (size_t k = 0; k < ours.n; k++)
        assert_true(cf_strvec_contains(&theirs, ours.v[k]));
    print_message("libtorch_python.so: %zu undefined symbols, the same set as ldd -r\n", ours.n);
    cf_strvec_clear(&lines);
    cf_strvec_clear(&theirs);
    cf_strvec_clear(&ours);
    cf_spawn_result_release(&sr);
    cf_symcheck_result_release(&s);
    cf_ldso_result_release(&r);
    unsetenv("LD_LIBRARY_PATH");
    free(site); free(lib); free(libdir); free(llp);
}

static void test_real_libraries(void **state)
{
    struct ts_nccl nccl;
    const char *candidates[] = { ts_find_nccl(&nccl) == 0 ? nccl.lib : NULL, "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
                                 "/usr/lib/x86_64-linux-gnu/libcjson.so.1" };
    size_t done = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (!candidates[i] || !cf_is_file(candidates[i])) {
            print_message("note: %s not present, skipped\n", candidates[i] ? candidates[i] : "libnccl.so.2");
            continue;
        }
        struct cf_ldso_result r;
        struct cf_symcheck_result s;
        double t0 = now();
        check(candidates[i], &r, &s);
        double ours = now() - t0;
        struct strvec theirs = STRVEC_INIT;
        double ldd = ts_have("ldd") ? ldd_r_problems(candidates[i], &theirs) : 0;
        print_message("%s: %zu objects, %zu references, %zu definitions, %zu problems; cclforge %.3fs, ldd -r %.3fs\n",
                      candidates[i], r.n_objects, s.n_references, s.n_definitions, s.n_problems, ours, ldd);
        assert_true(s.n_references > 0);
        assert_same_as_ldd_r(candidates[i], &s);
        cf_strvec_clear(&theirs);
        cf_symcheck_result_release(&s);
        cf_ldso_result_release(&r);
        done++;
    }
    if (!done)
        skip();
}

static int teardown(void **state)
{
    ts_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_missing_version, teardown),
        cmocka_unit_test_teardown(test_undefined_symbol, teardown),
        cmocka_unit_test_teardown(test_hash_styles, teardown),
        cmocka_unit_test_teardown(test_versioned_reference_binds_to_compat_symbol, teardown),
        cmocka_unit_test_teardown(test_real_libraries, teardown),
        cmocka_unit_test_teardown(test_only_relocated_symbols_count, teardown),
        cmocka_unit_test_teardown(test_torch_python_like_ldd_r, teardown),
        cmocka_unit_test_teardown(test_without_section_headers_like_ldd_r, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
