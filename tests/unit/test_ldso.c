/* Loader emulation on fixtures compiled here with the exact linker flags each
 * case needs; each case is also checked against ldd on the same files. */
#include "testsupport.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/ldso.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"
#include "ts_ldd.h"

#define OLD_DTAGS "-Wl,--disable-new-dtags"
#define NEW_DTAGS "-Wl,--enable-new-dtags"
/* Some toolchains default to --as-needed, which would drop our fixtures' NEEDED. */
#define NO_AS_NEEDED "-Wl,--no-as-needed"

static const char *const no_hwcaps[] = { NULL };

static char *sub(const char *dir, const char *name)
{
    char *p = cf_path_join(dir, name);
    cf_mkdir_p(p, 0755, NULL);
    return p;
}

/* A shared library exporting `fn`, with a soname equal to its file name. */
static void make_lib(const char *dir, const char *file, const char *fn, ...)
{
    char *out = cf_path_join(dir, file);
    char *src = cf_asprintf("int %s(void) { return 1; }\n", fn);
    char *soname = cf_asprintf("-Wl,-soname,%s", file);
    struct strvec argv = STRVEC_INIT;
    const char *cc = getenv("CC");
    cf_strvec_push(&argv, cc && *cc ? cc : "cc");
    cf_strvec_push(&argv, "-shared");
    cf_strvec_push(&argv, "-fPIC");
    cf_strvec_push(&argv, NO_AS_NEEDED);
    cf_strvec_push(&argv, "-o");
    cf_strvec_push(&argv, out);
    char *cname = cf_asprintf("%s.c", file);
    cf_strvec_push(&argv, ts_write(dir, cname, src));
    free(cname);
    cf_strvec_push(&argv, soname);
    va_list ap;
    va_start(ap, fn);
    for (const char *f; (f = va_arg(ap, const char *)) != NULL;)
        cf_strvec_push(&argv, f);
    va_end(ap);
    ts_run_ok((const char *const *)cf_strvec_argv(&argv));
    cf_strvec_clear(&argv);
    free(soname);
    free(src);
    free(out);
}

static void resolve(const char *path, const char *llp, struct cf_ldso_opts *o, struct cf_ldso_result *r)
{
    o->ld_library_path = llp;
    o->ignore_ld_library_path = llp == NULL;
    o->explain = 1;
    cf_error err = CF_ERROR_INIT;
    if (cf_ldso_resolve(path, o, r, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
}

static const struct cf_ldso_node *node_for(const struct cf_ldso_result *r, const char *needed)
{
    for (size_t i = 0; i < r->n_nodes; i++)
        if (strcmp(r->nodes[i].needed, needed) == 0)
            return &r->nodes[i];
    fail_msg("no node for %s", needed);
    return NULL;
}

/* The resolution equals what ldd prints for the same file and LD_LIBRARY_PATH. */
static void assert_same_as_ldd(const struct cf_ldso_result *r, const char *path, const char *llp)
{
    if (!ts_have("ldd")) {
        print_message("SKIP: ldd is not installed: the comparison with it cannot run\n");
        skip();
    }
    struct ts_ldd l;
    assert_int_equal(ts_ldd_run(path, llp, &l), 0);
    char *diff = ts_ldd_compare(r, &l);
    if (diff)
        fail_msg("differs from ldd for %s:\n%s\nraw ldd:\n%s", path, diff, l.raw);
    ts_ldd_release(&l);
}

static const char *main_src = "int main(void) { return 0; }\n";

/* A links B via its RPATH (dirB:dirC); B has none and needs C. With DT_RPATH,
 * C is found through A's RPATH (inherited down the chain); with DT_RUNPATH on A
 * it is not (RUNPATH applies to A's own NEEDED only). */
static void rpath_chain_case(const char *dtags, int expect_found)
{
    char *t = ts_tmpdir();
    char *da = sub(t, "a"), *db = sub(t, "b"), *dc = sub(t, "c"), *dm = sub(t, "m");
    make_lib(dc, "libc_fx.so", "c_fn", NULL);
    char *lc = cf_asprintf("-L%s", dc), *lb = cf_asprintf("-L%s", db);
    make_lib(db, "libb_fx.so", "b_fn", lc, "-lc_fx", NULL);
    char *rp = cf_asprintf("-Wl,-rpath,%s:%s", db, dc);
    char *rl = cf_asprintf("-Wl,-rpath-link,%s", dc);
    make_lib(da, "liba_fx.so", "a_fn", lb, "-lb_fx", rp, rl, dtags, NULL);
    char *app = cf_path_join(dm, "app");
    char *la = cf_asprintf("-L%s", da);
    char *rl2 = cf_asprintf("-Wl,-rpath-link,%s:%s", db, dc);
    ts_cc(dm, app, main_src, NO_AS_NEEDED, la, "-la_fx", rl2, NULL);

    struct cf_ldso_opts o = { 0 };
    o.hwcaps = no_hwcaps;
    struct cf_ldso_result r;
    resolve(app, da, &o, &r);
    const struct cf_ldso_node *a = node_for(&r, "liba_fx.so");
    assert_int_equal(a->reason, CF_LDSO_LD_LIBRARY_PATH);
    const struct cf_ldso_node *b = node_for(&r, "libb_fx.so");
    assert_int_equal(b->reason, expect_found ? CF_LDSO_RPATH : CF_LDSO_RUNPATH);
    const struct cf_ldso_node *c = node_for(&r, "libc_fx.so");
    if (expect_found) {
        assert_int_equal(c->reason, CF_LDSO_RPATH);
        assert_non_null(strstr(c->via, "liba_fx.so"));
        char *want = cf_path_join(dc, "libc_fx.so");
        assert_string_equal(c->path, want);
        free(want);
        assert_int_equal(r.n_missing, 0);
    } else {
        assert_int_equal(c->reason, CF_LDSO_NOT_FOUND);
        assert_null(c->path);
        assert_int_equal(r.n_missing, 1);
        /* A's RUNPATH dir is not among the places tried for B's dependency. */
        for (size_t i = 0; i < c->n_considered; i++)
            assert_null(strstr(c->considered[i].path, "/c/libc_fx.so"));
    }
    assert_same_as_ldd(&r, app, da);
    cf_ldso_result_release(&r);
    free(da); free(db); free(dc); free(dm); free(lc); free(lb); free(rp); free(rl); free(app); free(la); free(rl2);
}

static void test_rpath_is_inherited(void **state) { rpath_chain_case(OLD_DTAGS, 1); }
static void test_runpath_is_not_inherited(void **state) { rpath_chain_case(NEW_DTAGS, 0); }

/* $ORIGIN in RUNPATH, and LD_LIBRARY_PATH ranking between RPATH and RUNPATH. */
static void test_origin_and_ld_library_path_precedence(void **state)
{
    char *t = ts_tmpdir();
    char *dm = sub(t, "m"), *dlib = sub(t, "m/lib"), *dllp = sub(t, "llp");
    make_lib(dlib, "libp_fx.so", "p_fn", NULL);
    make_lib(dllp, "libp_fx.so", "p_fn", NULL);
    char *L = cf_asprintf("-L%s", dlib);
    char *run = cf_path_join(dm, "app_runpath");
    char *rpa = cf_path_join(dm, "app_rpath");
    ts_cc(dm, run, main_src, NO_AS_NEEDED, L, "-lp_fx", "-Wl,-rpath,$ORIGIN/lib", NEW_DTAGS, NULL);
    ts_cc(dm, rpa, main_src, NO_AS_NEEDED, L, "-lp_fx", "-Wl,-rpath,$ORIGIN/lib", OLD_DTAGS, NULL);
    struct cf_ldso_opts o = { 0 };
    o.hwcaps = no_hwcaps;
    struct cf_ldso_result r;

    /* Without LD_LIBRARY_PATH, $ORIGIN/lib via RUNPATH. */
    resolve(run, NULL, &o, &r);
    const struct cf_ldso_node *n = node_for(&r, "libp_fx.so");
    assert_int_equal(n->reason, CF_LDSO_RUNPATH);
    char *want = cf_path_join(dlib, "libp_fx.so");
    assert_string_equal(n->path, want);
    assert_same_as_ldd(&r, run, NULL);
    cf_ldso_result_release(&r);

    /* LD_LIBRARY_PATH beats RUNPATH ... */
    resolve(run, dllp, &o, &r);
    n = node_for(&r, "libp_fx.so");
    assert_int_equal(n->reason, CF_LDSO_LD_LIBRARY_PATH);
    assert_non_null(strstr(n->path, "/llp/"));
    assert_same_as_ldd(&r, run, dllp);
    cf_ldso_result_release(&r);

    /* ... but not RPATH. */
    resolve(rpa, dllp, &o, &r);
    n = node_for(&r, "libp_fx.so");
    assert_int_equal(n->reason, CF_LDSO_RPATH);
    assert_string_equal(n->path, want);
    assert_same_as_ldd(&r, rpa, dllp);
    cf_ldso_result_release(&r);

    /* An empty LD_LIBRARY_PATH element is the current directory. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dllp), 0);
    char *llp = cf_asprintf("/nonexistent-dir:");
    resolve(run, llp, &o, &r);
    assert_int_equal(chdir(cwd), 0);
    n = node_for(&r, "libp_fx.so");
    assert_int_equal(n->reason, CF_LDSO_LD_LIBRARY_PATH);
    assert_string_equal(n->path, "libp_fx.so");
    cf_ldso_result_release(&r);
    free(llp);
    free(want); free(dm); free(dlib); free(dllp); free(L); free(run); free(rpa);
}

/* -z nodefaultlib (DF_1_NODEFLIB; GNU ld ignores it for executables): for that library's
 * dependencies, ld.so.cache entries in system directories and the default
 * directories are off limits, so its libz.so.1 is not found, while libc.so.6,
 * already loaded for the executable, still is. */
static void nodeflib_case(int nodeflib)
{
    char *t = ts_tmpdir();
    char *d = sub(t, "l");
    make_lib(d, "libnd_fx.so", "n_fn", "-l:libz.so.1", nodeflib ? "-Wl,-z,nodefaultlib" : "-Wl,-z,defs", NULL);
    char *L = cf_asprintf("-L%s", d), *rp = cf_asprintf("-Wl,-rpath,%s", d);
    char *app = cf_path_join(t, "app");
    ts_cc(t, app, main_src, NO_AS_NEEDED, L, "-lnd_fx", rp, NULL);
    struct cf_ldso_opts o = { 0 };
    o.hwcaps = no_hwcaps;
    struct cf_ldso_result r;
    resolve(app, NULL, &o, &r);
    const struct cf_ldso_node *nd = node_for(&r, "libnd_fx.so");
    assert_int_equal(!!(r.objects[nd->object].flags_1 & DF_1_NODEFLIB), nodeflib);
    const struct cf_ldso_node *z = node_for(&r, "libz.so.1");
    if (nodeflib) {
        assert_int_equal(z->reason, CF_LDSO_NOT_FOUND);
        int saw_nodeflib = 0;
        for (size_t i = 0; i < z->n_considered; i++)
            saw_nodeflib |= z->considered[i].reject == CF_LDSO_REJ_NODEFLIB;
        assert_true(saw_nodeflib);
        assert_int_equal(r.n_missing, 1);
    } else {
        assert_int_equal(z->reason, CF_LDSO_LDCACHE);
        assert_int_equal(r.n_missing, 0);
    }
    assert_same_as_ldd(&r, app, NULL);
    cf_ldso_result_release(&r);
    free(d); free(L); free(rp); free(app);
}

static void test_nodeflib(void **state)
{
    nodeflib_case(0);
    nodeflib_case(1);
}

/* A library without SONAME linked by path: NEEDED holds the path itself. */
static void test_needed_with_slash(void **state)
{
    char *t = ts_tmpdir();
    char *dl = sub(t, "l");
    char *lib = cf_path_join(dl, "libpath_fx.so");
    ts_cc(dl, lib, "int q(void){return 2;}\n", "-shared", "-fPIC", NULL);
    char *app = cf_path_join(t, "app");
    ts_cc(t, app, main_src, NO_AS_NEEDED, lib, NULL);
    struct cf_ldso_opts o = { 0 };
    o.hwcaps = no_hwcaps;
    struct cf_ldso_result r;
    resolve(app, NULL, &o, &r);
    const struct cf_ldso_node *n = node_for(&r, lib);
    assert_int_equal(n->reason, CF_LDSO_DIRECT_PATH);
    assert_string_equal(n->path, lib);
    assert_same_as_ldd(&r, app, NULL);
    cf_ldso_result_release(&r);
    free(dl); free(lib); free(app);
}

/* A library that disappeared after linking: not found, with every path tried in
 * glibc's order (LD_LIBRARY_PATH, RUNPATH, cache, default dirs). */
static void test_missing_library_explained(void **state)
{
    char *t = ts_tmpdir();
    char *dl = sub(t, "gone"), *dllp = sub(t, "llp");
    make_lib(dl, "libgone_fx.so", "g_fn", NULL);
    char *lib = cf_path_join(dl, "libgone_fx.so");
    char *L = cf_asprintf("-L%s", dl), *rp = cf_asprintf("-Wl,-rpath,%s", dl);
    char *app = cf_path_join(t, "app");
    ts_cc(t, app, main_src, NO_AS_NEEDED, L, "-lgone_fx", rp, NEW_DTAGS, NULL);
    assert_int_equal(unlink(lib), 0);
    struct cf_ldso_opts o = { 0 };
    o.hwcaps = no_hwcaps;
    o.explain = 0; /* the list is kept for missing nodes regardless */
    struct cf_ldso_result r;
    o.ld_library_path = dllp;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldso_resolve(app, &o, &r, &err), 0);
    const struct cf_ldso_node *n = node_for(&r, "libgone_fx.so");
    assert_null(n->path);
    assert_int_equal(r.n_missing, 1);
    assert_true(n->n_considered >= 3);
    /* In order: LD_LIBRARY_PATH, then RUNPATH, then the default directories. */
    char *p0 = cf_path_join(dllp, "libgone_fx.so"), *p1 = cf_path_join(dl, "libgone_fx.so");
    size_t i_llp = (size_t)-1, i_run = (size_t)-1, i_def = (size_t)-1, i_cache = (size_t)-1;
    for (size_t i = 0; i < n->n_considered; i++) {
        const struct cf_ldso_candidate *k = &n->considered[i];
        if (strcmp(k->path, p0) == 0 && k->source == CF_LDSO_LD_LIBRARY_PATH)
            i_llp = i;
        if (strcmp(k->path, p1) == 0 && k->source == CF_LDSO_RUNPATH)
            i_run = i;
        if (k->source == CF_LDSO_DEFAULT_DIRS && i_def == (size_t)-1)
            i_def = i;
        if (k->source == CF_LDSO_LDCACHE)
            i_cache = i; /* the cache step: "no entry" */
        assert_int_not_equal(k->reject, CF_LDSO_REJ_NONE);
    }
    assert_true(i_llp < i_run);
    assert_true(i_run < i_cache);
    assert_true(i_cache < i_def);
    assert_string_equal(n->considered[i_cache].path, "/etc/ld.so.cache");
    assert_int_equal(n->considered[i_run].reject, CF_LDSO_REJ_NOT_FOUND);
    assert_same_as_ldd(&r, app, dllp);
    cf_ldso_result_release(&r);
    free(dl); free(dllp); free(lib); free(L); free(rp); free(app); free(p0); free(p1);
}

/* libA needs libB needs libA: the walk ends, each is loaded once. */
static void test_cycle_terminates(void **state)
{
    char *t = ts_tmpdir();
    char *d = sub(t, "l");
    char *L = cf_asprintf("-L%s", d), *rp = cf_asprintf("-Wl,-rpath,%s", d);
    make_lib(d, "libcyca_fx.so", "a_fn", NULL);
    make_lib(d, "libcycb_fx.so", "b_fn", L, "-lcyca_fx", rp, NULL);
    make_lib(d, "libcyca_fx.so", "a_fn", L, "-lcycb_fx", rp, NULL);
    char *app = cf_path_join(t, "app");
    ts_cc(t, app, main_src, NO_AS_NEEDED, L, "-lcyca_fx", rp, NULL);
    struct cf_ldso_opts o = { 0 };
    o.hwcaps = no_hwcaps;
    struct cf_ldso_result r;
    resolve(app, NULL, &o, &r);
    size_t count_a = 0;
    for (size_t i = 0; i < r.n_objects; i++)
        count_a += strstr(r.objects[i].path, "libcyca_fx.so") != NULL;
    assert_int_equal(count_a, 1);
    int back_edge = 0;
    for (size_t i = 0; i < r.n_nodes; i++)
        if (strcmp(r.nodes[i].needed, "libcyca_fx.so") == 0 && r.nodes[i].reason == CF_LDSO_ALREADY_LOADED)
            back_edge = 1;
    assert_true(back_edge);
    assert_same_as_ldd(&r, app, NULL);
    cf_ldso_result_release(&r);
    free(d); free(L); free(rp); free(app);
}

/* An ELF32 library of the same name earlier on the path is skipped. */
static void test_wrong_class_skipped(void **state)
{
    char *t = ts_tmpdir();
    char *d32 = sub(t, "l32"), *d64 = sub(t, "l64");
    char *probe = cf_path_join(d32, "probe");
    const char *cc = getenv("CC");
    const char *argv[] = { cc && *cc ? cc : "cc", "-m32", "-shared", "-fPIC", "-x", "c", "/dev/null", "-o", probe, NULL };
    if (ts_run(argv) != 0) {
        print_message("skipped: this compiler cannot build -m32 (install gcc-multilib)\n");
        free(d32); free(d64); free(probe);
        skip();
    }
    make_lib(d32, "libwc_fx.so", "w_fn", "-m32", NULL);
    make_lib(d64, "libwc_fx.so", "w_fn", NULL);
    char *L = cf_asprintf("-L%s", d64);
    char *app = cf_path_join(t, "app");
    ts_cc(t, app, main_src, NO_AS_NEEDED, L, "-lwc_fx", NULL);
    char *llp = cf_asprintf("%s:%s", d32, d64);
    struct cf_ldso_opts o = { 0 };
    o.hwcaps = no_hwcaps;
    struct cf_ldso_result r;
    resolve(app, llp, &o, &r);
    const struct cf_ldso_node *n = node_for(&r, "libwc_fx.so");
    assert_int_equal(n->reason, CF_LDSO_LD_LIBRARY_PATH);
    assert_non_null(strstr(n->path, "/l64/"));
    int saw = 0;
    for (size_t i = 0; i < n->n_considered; i++)
        if (strstr(n->considered[i].path, "/l32/libwc_fx.so")) {
            assert_int_equal(n->considered[i].reject, CF_LDSO_REJ_WRONG_CLASS);
            saw = 1;
        }
    assert_true(saw);
    assert_same_as_ldd(&r, app, llp);
    cf_ldso_result_release(&r);

    /* A 32-bit program resolves with the 32-bit loader's directories and cache entries,
     * and the 64-bit library first on the path is the one skipped now. */
    char *app32 = cf_path_join(t, "app32");
    char *L32 = cf_asprintf("-L%s", d32);
    ts_cc(t, app32, main_src, "-m32", NO_AS_NEEDED, L32, "-lwc_fx", NULL);
    char *llp2 = cf_asprintf("%s:%s", d64, d32);
    resolve(app32, llp2, &o, &r);
    assert_int_equal(r.elf_class, 32);
    n = node_for(&r, "libwc_fx.so");
    assert_non_null(strstr(n->path, "/l32/"));
    assert_int_equal(n->considered[0].reject, CF_LDSO_REJ_WRONG_CLASS);
    assert_same_as_ldd(&r, app32, llp2);
    cf_ldso_result_release(&r);
    free(app32); free(L32); free(llp2);
    free(d32); free(d64); free(probe); free(L); free(app); free(llp);
}

/* A glibc-hwcaps subdirectory wins over its parent when the level is active,
 * and is ignored when it is not. */
static void test_glibc_hwcaps_subdirectory(void **state)
{
    char *t = ts_tmpdir();
    char *d = sub(t, "l"), *dv2 = sub(t, "l/glibc-hwcaps/x86-64-v2");
    make_lib(d, "libhw_fx.so", "h_fn", NULL);
    make_lib(dv2, "libhw_fx.so", "h_fn", NULL);
    char *L = cf_asprintf("-L%s", d), *rp = cf_asprintf("-Wl,-rpath,%s", d);
    char *app = cf_path_join(t, "app");
    ts_cc(t, app, main_src, NO_AS_NEEDED, L, "-lhw_fx", rp, NULL);
    struct cf_ldso_opts o = { 0 };
    const char *v2[] = { "x86-64-v2", NULL };
    o.hwcaps = v2;
    struct cf_ldso_result r;
    resolve(app, NULL, &o, &r);
    assert_non_null(strstr(node_for(&r, "libhw_fx.so")->path, "/glibc-hwcaps/x86-64-v2/libhw_fx.so"));
    cf_ldso_result_release(&r);
    o.hwcaps = no_hwcaps;
    resolve(app, NULL, &o, &r);
    assert_null(strstr(node_for(&r, "libhw_fx.so")->path, "glibc-hwcaps"));
    cf_ldso_result_release(&r);
    /* Auto-detection: this CPU's levels, as the system loader would use them. */
    o.hwcaps = NULL;
    resolve(app, NULL, &o, &r);
    assert_same_as_ldd(&r, app, NULL);
    cf_ldso_result_release(&r);
    /* Planned for other CPUs: a v2-only Intel takes the v2 copy, a baseline AMD the plain one. */
    o.glibc = "2.36";
    o.cpu = "intel,x86-64-v2";
    resolve(app, NULL, &o, &r);
    assert_non_null(strstr(node_for(&r, "libhw_fx.so")->path, "/glibc-hwcaps/x86-64-v2/libhw_fx.so"));
    assert_int_equal(r.facts.cpu.vendor, CF_CPU_VENDOR_INTEL);
    assert_int_equal(cf_cpu_isa_level(&r.facts.cpu), 2);
    cf_ldso_result_release(&r);
    o.cpu = "amd,x86-64-v1";
    resolve(app, NULL, &o, &r);
    assert_null(strstr(node_for(&r, "libhw_fx.so")->path, "glibc-hwcaps"));
    cf_ldso_result_release(&r);
    /* A facts cache: filled by the first resolve, reused (not re-probed) by the next. */
    o.glibc = NULL;
    o.cpu = NULL;
    struct cf_ldso_facts facts = { 0 };
    o.facts_cache = &facts;
    resolve(app, NULL, &o, &r);
    assert_true(facts.filled);
    cf_ldso_result_release(&r);
    facts.cpu.usable = 0; /* a pretend baseline CPU: the cache is what the next resolve uses */
    resolve(app, NULL, &o, &r);
    assert_null(strstr(node_for(&r, "libhw_fx.so")->path, "glibc-hwcaps"));
    cf_ldso_result_release(&r);
    o.facts_cache = NULL;
    free(d); free(dv2); free(L); free(rp); free(app);
}

/* Every subdirectory any glibc from 2.17 to 2.42 may try, on any x86-64 CPU:
 * the glibc-hwcaps levels and the legacy power sets of (x86_64, avx512_1,
 * a platform, tls) for each platform glibc names. */
static void subdirectory_set(struct strvec *out)
{
    static const char *const platforms[] = { "haswell", "x86_64", "xeon_phi" };
    for (int lv = 4; lv >= 2; lv--)
        cf_strvec_pushf(out, "glibc-hwcaps/x86-64-v%d", lv);
    for (size_t p = 0; p < 3; p++) {
        const char *names[] = { "x86_64", "avx512_1", platforms[p], "tls" };
        for (unsigned m = 15; m > 0; m--) {
            struct strbuf sb = STRBUF_INIT;
            for (int k = 3; k >= 0; k--)
                if (m & (1u << k))
                    cf_sb_addf(&sb, "%s%s", sb.len ? "/" : "", names[k]);
            cf_strvec_push_nodup(out, cf_sb_detach(&sb));
        }
    }
}

/* The subdirectory (relative to base, "" for base itself) a path is in. */
static const char *subdir_of(const char *path, const char *base)
{
    size_t n = strlen(base);
    assert_true(strncmp(path, base, n) == 0 && path[n] == '/');
    static char buf[256];
    snprintf(buf, sizeof buf, "%s", path + n + 1);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    else
        buf[0] = '\0';
    return buf;
}

struct hw_fixture {
    char *dir, *app;
    struct strvec subdirs;
};

/* libhw_fx.so in every subdirectory of the set (and in the directory itself),
 * and a program that finds it through its RPATH. */
static void hw_fixture_make(struct hw_fixture *fx)
{
    char *t = ts_tmpdir();
    fx->dir = sub(t, "l");
    memset(&fx->subdirs, 0, sizeof fx->subdirs);
    subdirectory_set(&fx->subdirs);
    make_lib(fx->dir, "libhw_fx.so", "h_fn", NULL);
    char *lib = cf_path_join(fx->dir, "libhw_fx.so");
    for (size_t i = 0; i < fx->subdirs.n; i++) {
        char *sd = sub(fx->dir, fx->subdirs.v[i]);
        char *copy = cf_path_join(sd, "libhw_fx.so");
        const char *cp[] = { "cp", lib, copy, NULL };
        ts_run_ok(cp);
        free(copy);
        free(sd);
    }
    free(lib);
    char *L = cf_asprintf("-L%s", fx->dir), *rp = cf_asprintf("-Wl,-rpath,%s", fx->dir);
    fx->app = cf_path_join(t, "app");
    ts_cc(t, fx->app, main_src, NO_AS_NEEDED, L, "-lhw_fx", rp, NULL);
    free(L);
    free(rp);
}

static void hw_fixture_release(struct hw_fixture *fx)
{
    free(fx->dir);
    free(fx->app);
    cf_strvec_clear(&fx->subdirs);
}

/* The subdirectory the loader picks under opts. */
static const char *hw_pick(const struct hw_fixture *fx, struct cf_ldso_opts *o)
{
    struct cf_ldso_result r;
    resolve(fx->app, NULL, o, &r);
    static char pick[256];
    snprintf(pick, sizeof pick, "%s", subdir_of(node_for(&r, "libhw_fx.so")->path, fx->dir));
    cf_ldso_result_release(&r);
    return pick;
}

/* Against the real loader: the library in every subdirectory, and after each
 * pick that copy removed, until the directory itself; every pick is ldd's.
 * Run as the CPU is and, with the host's glibc 2.33 or newer, again with AVX2
 * and AVX-512 masked by GLIBC_TUNABLES, which makes an Intel CPU name no
 * platform (the kernel's "x86_64", as on AMD) and lowers its level: both
 * CPU paths of glibc's rules are checked against ldd on any x86-64 host. */
static void every_subdirectory_case(const char *tunables)
{
    struct hw_fixture fx;
    hw_fixture_make(&fx);
    struct cf_ldso_opts o = { 0 };
    size_t picks = 0;
    for (;;) {
        const char *pick = hw_pick(&fx, &o);
        struct cf_ldso_result r;
        resolve(fx.app, NULL, &o, &r);
        assert_same_as_ldd(&r, fx.app, NULL);
        cf_ldso_result_release(&r);
        picks++;
        if (!*pick)
            break;
        char *sd = cf_path_join(fx.dir, pick);
        char *lib = cf_path_join(sd, "libhw_fx.so");
        assert_int_equal(unlink(lib), 0);
        free(lib);
        free(sd);
    }
    print_message("%s: %zu picks, each the same as ldd's\n", tunables ? tunables : "this CPU as it is", picks);
    hw_fixture_release(&fx);
}

static void test_every_subdirectory_like_ldd(void **state)
{
#if !defined(__x86_64__)
    skip();
#endif
    every_subdirectory_case(NULL);
    struct cf_ldso_facts f;
    struct cf_ldso_opts o = { 0 };
    assert_int_equal(cf_ldso_facts_get(EM_X86_64, 64, &o, &f, NULL), 0);
    if (!cf_glibc_follows(f.glibc, CF_GLIBC_TUNABLE_HWCAPS)) {
        print_message("note: this glibc (%u.%u) predates the modelled tunables; masked run skipped\n", f.glibc.major,
                      f.glibc.minor);
        return;
    }
    const char *mask = "glibc.cpu.hwcaps=-AVX2,-AVX512F";
    setenv("GLIBC_TUNABLES", mask, 1);
    every_subdirectory_case(mask);
    unsetenv("GLIBC_TUNABLES");
}

/* Each versioned rule with planned-for facts (--glibc, --cpu): the first
 * subdirectory each release takes, worked out from its source (docs/ldso.md). */
static void test_versioned_rules(void **state)
{
    static const struct {
        const char *glibc, *cpu, *pick, *platform, *legacy;
    } cases[] = {
        /* 2.17-2.25: no x86 procinfo; AT_PLATFORM x86_64 and tls */
        { "2.17", "intel,x86-64-v4", "tls/x86_64", "x86_64", "x86_64 tls" },
        /* 2.26: the Intel names, AT_PLATFORM cleared on others, no x86_64 hwcap */
        { "2.26", "intel,x86-64-v4", "tls/haswell/avx512_1", "haswell", "avx512_1 haswell tls" },
        { "2.26", "amd,x86-64-v4", "tls", NULL, "tls" },
        /* 2.27-2.32: x86_64 hwcap; AMD keeps AT_PLATFORM x86_64 (twice in the set) */
        { "2.31", "intel,x86-64-v4", "tls/haswell/avx512_1/x86_64", "haswell", "x86_64 avx512_1 haswell tls" },
        { "2.31", "intel,x86-64-v2", "tls/x86_64/x86_64", "x86_64", "x86_64 x86_64 tls" },
        { "2.31", "intel,xeon-phi", "tls/xeon_phi/x86_64", "xeon_phi", "x86_64 xeon_phi tls" },
        { "2.31", "amd,x86-64-v4", "tls/x86_64/x86_64", "x86_64", "x86_64 x86_64 tls" },
        { "2.31", "hygon,x86-64-v3", "tls/x86_64/x86_64", "x86_64", "x86_64 x86_64 tls" },
        /* 2.33-2.36: glibc-hwcaps first, then the legacy set */
        { "2.33", "amd,x86-64-v3", "glibc-hwcaps/x86-64-v3", "x86_64", "x86_64 x86_64 tls" },
        { "2.36", "intel,x86-64-v4", "glibc-hwcaps/x86-64-v4", "haswell", "x86_64 avx512_1 haswell tls" },
        { "2.36", "amd,x86-64-v1", "tls/x86_64/x86_64", "x86_64", "x86_64 x86_64 tls" },
        /* 2.37-: glibc-hwcaps only */
        { "2.37", "intel,x86-64-v4", "glibc-hwcaps/x86-64-v4", "haswell", "" },
        { "2.37", "amd,x86-64-v2", "glibc-hwcaps/x86-64-v2", "x86_64", "" },
        { "2.41", "intel,x86-64-v1", "", "x86_64", "" },
        { "2.41", "amd,x86-64-v1", "", "x86_64", "" },
        /* 2.32-: AVX and AVX2 off on four Zhaoxin models (x86-64-v2 to the
         * loader), which matters from 2.33's glibc-hwcaps on */
        { "2.31", "zhaoxin,x86-64-v3,family=7,model=0x3b", "tls/x86_64/x86_64", "x86_64", "x86_64 x86_64 tls" },
        { "2.36", "zhaoxin,x86-64-v3,family=7,model=0x3b", "glibc-hwcaps/x86-64-v2", "x86_64", "x86_64 x86_64 tls" },
        { "2.36", "zhaoxin,x86-64-v3,family=7,model=0x5b", "glibc-hwcaps/x86-64-v3", "x86_64", "x86_64 x86_64 tls" },
        { "2.41", "zhaoxin,x86-64-v4,family=6,model=0x19", "glibc-hwcaps/x86-64-v2", "x86_64", "" },
    };
    struct hw_fixture fx;
    hw_fixture_make(&fx);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct cf_ldso_opts o = { .glibc = cases[i].glibc, .cpu = cases[i].cpu, .tunables = "" };
        const char *pick = hw_pick(&fx, &o);
        if (strcmp(pick, cases[i].pick) != 0)
            fail_msg("glibc %s, --cpu %s: picked '%s', glibc picks '%s'", cases[i].glibc, cases[i].cpu, pick,
                     cases[i].pick);
        struct cf_ldso_result r;
        resolve(fx.app, NULL, &o, &r);
        if (cases[i].platform)
            assert_string_equal(r.dst_platform, cases[i].platform);
        else
            assert_null(r.dst_platform);
        struct strbuf names = STRBUF_INIT;
        for (size_t k = 0; k < r.legacy_hwcaps.n; k++)
            cf_sb_addf(&names, "%s%s", k ? " " : "", r.legacy_hwcaps.v[k]);
        assert_string_equal(cf_sb_str(&names), cases[i].legacy);
        cf_sb_release(&names);
        assert_true(cf_starts_with(r.facts.glibc_source, "--glibc "));
        cf_ldso_result_release(&r);
    }
    hw_fixture_release(&fx);
}

/* ld.so PROG (as ldd runs it) took $ORIGIN from the path as given until 2.41;
 * 2.42 takes the program's real path, as running it does. The host's ldd
 * settles the older rule. */
static void test_origin_of_a_symlinked_program(void **state)
{
    char *t = ts_tmpdir();
    char *real = sub(t, "real"), *lib = sub(t, "real/lib"), *bin = sub(t, "bin");
    make_lib(lib, "liborig_fx.so", "o_fn", NULL);
    char *L = cf_asprintf("-L%s", lib);
    char *app = cf_path_join(real, "app");
    ts_cc(real, app, main_src, NO_AS_NEEDED, L, "-lorig_fx", "-Wl,-rpath,$ORIGIN/lib", NULL);
    char *link = cf_path_join(bin, "app");
    assert_int_equal(symlink(app, link), 0);
    struct cf_ldso_opts o = { .hwcaps = no_hwcaps };
    struct cf_ldso_result r;
    o.glibc = "2.41";
    resolve(link, NULL, &o, &r);
    assert_null(node_for(&r, "liborig_fx.so")->path);
    cf_ldso_result_release(&r);
    o.glibc = "2.42";
    resolve(link, NULL, &o, &r);
    char *want = cf_path_join(lib, "liborig_fx.so");
    assert_string_equal(node_for(&r, "liborig_fx.so")->path, want);
    free(want);
    cf_ldso_result_release(&r);
    o.glibc = NULL;
    resolve(link, NULL, &o, &r);
    if (!cf_glibc_follows(r.facts.glibc, CF_GLIBC_MAIN_REALPATH))
        assert_same_as_ldd(&r, link, NULL);
    cf_ldso_result_release(&r);
    free(real); free(lib); free(bin); free(L); free(app); free(link);
}

/* The glibc the resolution followed is the host's own (what ldd --version says). */
static void test_glibc_read_from_the_loader(void **state)
{
    const char *argv[] = { "ldd", "--version", NULL };
    char *out = ts_have("ldd") ? cf_capture(argv, 10) : NULL;
    if (!out) {
        print_message("SKIP: no ldd to ask for the glibc version\n");
        skip();
    }
    const char *nl = strchr(out, '\n');
    const char *sp = nl ? nl : out + strlen(out);
    while (sp > out && sp[-1] != ' ')
        sp--;
    struct cf_glibc want;
    assert_int_equal(cf_glibc_parse(sp, &want, NULL), 0);
    struct cf_ldso_facts f;
    struct cf_ldso_opts o = { 0 };
    assert_int_equal(cf_ldso_facts_get(EM_X86_64, 64, &o, &f, NULL), 0);
    assert_int_equal(f.glibc.major, want.major);
    assert_int_equal(f.glibc.minor, want.minor);
    assert_non_null(strstr(f.glibc_source, "ld-linux-x86-64.so.2"));
    o.glibc = "2.31";
    assert_int_equal(cf_ldso_facts_get(EM_X86_64, 64, &o, &f, NULL), 0);
    assert_int_equal(f.glibc.minor, 31);
    cf_error err = CF_ERROR_INIT;
    o.glibc = "3.x";
    assert_int_equal(cf_ldso_facts_get(EM_X86_64, 64, &o, &f, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "3.x"));
    cf_error_clear(&err);
    o.glibc = NULL;
    o.cpu = "via";
    assert_int_equal(cf_ldso_facts_get(EM_X86_64, 64, &o, &f, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "via"));
    cf_error_clear(&err);
    free(out);
}

/* $LIB and ${PLATFORM} in RUNPATH, and a NEEDED entry that itself holds $ORIGIN
 * (a library whose SONAME is "$ORIGIN/libdx_fx.so"). The token values are the
 * machine's, so the check is ldd's pick. */
static void test_lib_platform_and_needed_tokens(void **state)
{
    char *t = ts_tmpdir();
    struct cf_ldso_platform p;
    assert_int_equal(cf_ldso_platform_for(EM_X86_64, 64, NULL, &p, NULL), 0);
    char *dlib = cf_path_join(t, p.lib);
    cf_mkdir_p(dlib, 0755, NULL);
    cf_ldso_platform_release(&p);
    const char *platforms[] = { "haswell", "x86_64" };
    for (size_t i = 0; i < 2; i++) {
        char *dp = sub(t, platforms[i]);
        make_lib(dp, "libtp_fx.so", "p_fn", NULL);
        free(dp);
    }
    make_lib(dlib, "libtk_fx.so", "k_fn", NULL);
    char *dx = cf_path_join(t, "libdx_fx.so");
    ts_cc(t, dx, "int x(void){return 4;}\n", "-shared", "-fPIC", "-Wl,-soname,$ORIGIN/libdx_fx.so", NULL);
    char *L1 = cf_asprintf("-L%s", dlib), *L2 = cf_asprintf("-L%s/x86_64", t);
    char *rp = cf_asprintf("-Wl,-rpath,%s/$LIB:%s/${PLATFORM}", t, t);
    char *app = cf_path_join(t, "app");
    ts_cc(t, app, main_src, NO_AS_NEEDED, L1, "-ltk_fx", L2, "-ltp_fx", dx, rp, NULL);
    struct cf_ldso_opts o = { 0 };
    struct cf_ldso_result r;
    resolve(app, NULL, &o, &r);
    assert_int_equal(node_for(&r, "libtk_fx.so")->reason, CF_LDSO_RUNPATH);
    assert_int_equal(node_for(&r, "libtp_fx.so")->reason, CF_LDSO_RUNPATH);
    const struct cf_ldso_node *n = node_for(&r, "$ORIGIN/libdx_fx.so");
    assert_int_equal(n->reason, CF_LDSO_DIRECT_PATH);
    assert_string_equal(n->path, dx);
    assert_same_as_ldd(&r, app, NULL);
    cf_ldso_result_release(&r);
    free(dlib); free(dx); free(L1); free(L2); free(rp); free(app);
}

/* --root: search dirs and the cache path move under the sysroot. */
static void test_sysroot(void **state)
{
    char *t = ts_tmpdir();
    char *sysroot = sub(t, "sysroot");
    char *libdir = cf_path_join(sysroot, "usr/lib64");
    cf_mkdir_p(libdir, 0755, NULL);
    make_lib(libdir, "libroot_fx.so.1", "r_fn", NULL);
    char *L = cf_asprintf("-L%s", libdir);
    char *app = cf_path_join(t, "app");
    ts_cc(t, app, main_src, NO_AS_NEEDED, L, "-l:libroot_fx.so.1", "-Wl,-rpath,/opt/rt/lib", OLD_DTAGS, NULL);
    char *optlib = cf_path_join(sysroot, "opt/rt/lib");
    cf_mkdir_p(optlib, 0755, NULL);
    make_lib(optlib, "libroot_fx.so.1", "r_fn", NULL);
    struct cf_ldso_opts o = { 0 };
    o.hwcaps = no_hwcaps;
    o.root = sysroot;
    struct cf_ldso_result r;
    resolve(app, NULL, &o, &r);
    /* The absolute RPATH /opt/rt/lib is looked up inside the root. */
    const struct cf_ldso_node *n = node_for(&r, "libroot_fx.so.1");
    assert_int_equal(n->reason, CF_LDSO_RPATH);
    char *want = cf_path_join(optlib, "libroot_fx.so.1");
    assert_string_equal(n->path, want);
    /* The sysroot has no libc and no cache: libc.so.6 is missing, and the explain
     * list names paths inside the root only. */
    const struct cf_ldso_node *c = node_for(&r, "libc.so.6");
    assert_null(c->path);
    for (size_t i = 0; i < c->n_considered; i++)
        assert_true(cf_starts_with(c->considered[i].path, sysroot));
    cf_ldso_result_release(&r);
    free(want); free(sysroot); free(libdir); free(L); free(app); free(optlib);
}

/* The platform table: this machine's system directories are what ld.so --help lists. */
static void test_platform_dirs_match_ld_so(void **state)
{
    struct cf_ldso_platform p;
    assert_int_equal(cf_ldso_platform_for(EM_X86_64, 64, NULL, &p, NULL), 0);
    const char *ldso = "/lib64/ld-linux-x86-64.so.2";
    if (cf_is_file(ldso)) {
        const char *argv[] = { ldso, "--help", NULL };
        char *out = cf_capture(argv, 10);
        if (out && strstr(out, "(system search path)")) {
            struct strbuf want = STRBUF_INIT;
            for (char **d = p.system_dirs; *d; d++)
                cf_sb_addf(&want, "  %s (system search path)\n", *d);
            assert_non_null(strstr(out, cf_sb_str(&want)));
            cf_sb_release(&want);
        }
        free(out);
    }
    cf_ldso_platform_release(&p);
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldso_platform_for(EM_SPARC, 32, NULL, &p, &err), -1);
    cf_error_clear(&err);
}

static void test_not_elf_root_is_error(void **state)
{
    char *t = ts_tmpdir();
    char *f = ts_write(t, "x.so", "not an elf file at all");
    struct cf_ldso_result r;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldso_resolve(f, NULL, &r, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "x.so"));
    cf_error_clear(&err);
}

static int teardown(void **state)
{
    ts_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_rpath_is_inherited, teardown),
        cmocka_unit_test_teardown(test_runpath_is_not_inherited, teardown),
        cmocka_unit_test_teardown(test_origin_and_ld_library_path_precedence, teardown),
        cmocka_unit_test_teardown(test_nodeflib, teardown),
        cmocka_unit_test_teardown(test_needed_with_slash, teardown),
        cmocka_unit_test_teardown(test_missing_library_explained, teardown),
        cmocka_unit_test_teardown(test_cycle_terminates, teardown),
        cmocka_unit_test_teardown(test_wrong_class_skipped, teardown),
        cmocka_unit_test_teardown(test_glibc_hwcaps_subdirectory, teardown),
        cmocka_unit_test_teardown(test_every_subdirectory_like_ldd, teardown),
        cmocka_unit_test_teardown(test_versioned_rules, teardown),
        cmocka_unit_test_teardown(test_origin_of_a_symlinked_program, teardown),
        cmocka_unit_test_teardown(test_glibc_read_from_the_loader, teardown),
        cmocka_unit_test_teardown(test_lib_platform_and_needed_tokens, teardown),
        cmocka_unit_test_teardown(test_sysroot, teardown),
        cmocka_unit_test_teardown(test_platform_dirs_match_ld_so, teardown),
        cmocka_unit_test_teardown(test_not_elf_root_is_error, teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* ldd is the oracle of most cases: without it the few that need none ran,
     * but the binary did not do its job, and says so (CTest: Skipped) */
    if (failed == 0 && !ts_have("ldd")) {
        printf("SKIP: ldd is not installed: the cases compared with it did not run: exit 77\n");
        return 77;
    }
    return failed;
}
