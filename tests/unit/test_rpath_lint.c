/* RPATH lint against libraries linked here with the exact entries each finding
 * needs, inside a small package tree:
 *   T/pkg/lib/  the libraries     T/pkg/deps/  exists     T/outside/  exists */
#include "testsupport.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/rpath_lint.h"
#include "cclforge/strbuf.h"

static const char lib_src[] = "int lintme(void) { return 1; }\n";

struct tree {
    char *top, *pkg, *lib, *deps, *sysroot;
};

static struct tree make_tree(void)
{
    struct tree t;
    t.top = ts_tmpdir();
    t.pkg = cf_path_join(t.top, "pkg");
    t.lib = cf_path_join(t.pkg, "lib");
    t.deps = cf_path_join(t.pkg, "deps");
    t.sysroot = cf_path_join(t.top, "sysroot");
    char *outside = cf_path_join(t.top, "outside");
    char *rooted = cf_path_join(t.sysroot, "usr/lib/cfroot");
    const char *dirs[] = { t.lib, t.deps, outside, rooted };
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(cf_mkdir_p(dirs[i], 0755, NULL), 0);
    free(outside);
    free(rooted);
    return t;
}

static void free_tree(struct tree *t)
{
    free(t->pkg);
    free(t->lib);
    free(t->deps);
    free(t->sysroot);
}

/* Links lib<name>.so into t->lib with one rpath flag ("-Wl,..."), or none. */
static char *link_lib(const struct tree *t, const char *name, const char *rpath_flag)
{
    char *file = cf_asprintf("lib%s.so", name);
    char *out = cf_path_join(t->lib, file);
    free(file);
    if (rpath_flag)
        ts_cc(t->lib, out, lib_src, "-shared", "-fPIC", rpath_flag, NULL);
    else
        ts_cc(t->lib, out, lib_src, "-shared", "-fPIC", NULL);
    return out;
}

/* Lints path and checks the kinds found, in order. */
static struct cf_rpath_lint lint_kinds(const char *path, const struct cf_rpath_lint_opts *opts,
                                       const enum cf_rpath_finding_kind *expected, size_t n_expected)
{
    struct cf_elf *elf;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open(path, &elf, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    struct cf_rpath_lint lint;
    if (cf_rpath_lint(elf, opts, &lint, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    cf_elf_close(elf);
    int same = lint.n == n_expected;
    for (size_t i = 0; same && i < n_expected; i++)
        same = lint.findings[i].kind == expected[i];
    if (!same) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < lint.n; i++)
            cf_sb_addf(&sb, "\n  %s: %s", cf_rpath_kind_name(lint.findings[i].kind), lint.findings[i].message);
        fail_msg("%s: expected %zu finding(s), got %zu:%s", path, n_expected, lint.n, cf_sb_str(&sb));
    }
    for (size_t i = 0; i < lint.n; i++) {
        assert_int_equal(lint.findings[i].severity, cf_rpath_kind_severity(lint.findings[i].kind));
        assert_non_null(strstr(lint.findings[i].message, lint.findings[i].tag));
        assert_non_null(strstr(lint.findings[i].message, lint.findings[i].entry));
    }
    return lint;
}

#define KINDS(...) ((const enum cf_rpath_finding_kind[]){ __VA_ARGS__ })
#define NKINDS(...) (sizeof(KINDS(__VA_ARGS__)) / sizeof(enum cf_rpath_finding_kind))
#define EXPECT(path, opts, ...)                                                                           \
    do {                                                                                                  \
        struct cf_rpath_lint l_ = lint_kinds(path, opts, KINDS(__VA_ARGS__), NKINDS(__VA_ARGS__));        \
        cf_rpath_lint_release(&l_);                                                                       \
    } while (0)
#define EXPECT_NONE(path, opts)                                                                           \
    do {                                                                                                  \
        struct cf_rpath_lint l_ = lint_kinds(path, opts, NULL, 0);                                        \
        cf_rpath_lint_release(&l_);                                                                       \
    } while (0)

static void test_clean_library_is_silent(void **state)
{
    struct tree t = make_tree();
    struct cf_rpath_lint_opts within = { .within = t.pkg };
    char *clean = link_lib(&t, "clean", "-Wl,--enable-new-dtags,-rpath,$ORIGIN:$ORIGIN/../deps/");
    EXPECT_NONE(clean, NULL);
    EXPECT_NONE(clean, &within);
    char *bare = link_lib(&t, "bare", NULL);
    EXPECT_NONE(bare, &within);
    free(clean);
    free(bare);
    free_tree(&t);
}

static void test_absolute_entries(void **state)
{
    struct tree t = make_tree();
    char *flag = cf_asprintf("-Wl,--disable-new-dtags,-rpath,%s", t.deps);
    char *abs = link_lib(&t, "abs", flag);
    EXPECT(abs, NULL, CF_RPATH_ABSOLUTE);
    struct cf_rpath_lint_opts within = { .within = t.pkg };
    EXPECT(abs, &within, CF_RPATH_ABSOLUTE); /* absolute, but inside the tree */

    /* An absolute entry that does not exist here but does under a sysroot. */
    char *rooted = link_lib(&t, "rooted", "-Wl,-rpath,/usr/lib/cfroot");
    EXPECT(rooted, NULL, CF_RPATH_ABSOLUTE, CF_RPATH_MISSING_DIR);
    struct cf_rpath_lint_opts root = { .root = t.sysroot };
    EXPECT(rooted, &root, CF_RPATH_ABSOLUTE);
    free(flag);
    free(abs);
    free(rooted);
    free_tree(&t);
}

static void test_relative_and_empty_entries(void **state)
{
    struct tree t = make_tree();
    char *rel = link_lib(&t, "rel", "-Wl,-rpath,lib/rel");
    EXPECT(rel, NULL, CF_RPATH_RELATIVE);
    char *rel_lib = link_lib(&t, "rellib", "-Wl,-rpath,$LIB/x");
    EXPECT(rel_lib, NULL, CF_RPATH_RELATIVE); /* $LIB expands to a relative path */
    char *trailing = link_lib(&t, "trailing", "-Wl,-rpath,$ORIGIN:");
    EXPECT(trailing, NULL, CF_RPATH_EMPTY);
    char *middle = link_lib(&t, "middle", "-Wl,--disable-new-dtags,-rpath,$ORIGIN::${ORIGIN}/../deps");
    struct cf_rpath_lint l = lint_kinds(middle, NULL, KINDS(CF_RPATH_EMPTY), 1);
    assert_string_equal(l.findings[0].tag, "RPATH");
    assert_string_equal(l.findings[0].entry, "");
    assert_int_equal(l.findings[0].severity, CF_LINT_ERROR);
    cf_rpath_lint_release(&l);
    free(rel);
    free(rel_lib);
    free(trailing);
    free(middle);
    free_tree(&t);
}

static void test_missing_directories(void **state)
{
    struct tree t = make_tree();
    char *missing = link_lib(&t, "missing", "-Wl,-rpath,$ORIGIN/nonexistent:$ORIGIN");
    struct cf_rpath_lint l = lint_kinds(missing, NULL, KINDS(CF_RPATH_MISSING_DIR), 1);
    char *want = cf_path_join(t.lib, "nonexistent");
    assert_string_equal(l.findings[0].expanded, want);
    assert_string_equal(l.findings[0].entry, "$ORIGIN/nonexistent");
    cf_rpath_lint_release(&l);

    /* $LIB and $PLATFORM take the caller's values. */
    char *tokens = link_lib(&t, "tokens", "-Wl,-rpath,$ORIGIN/../$LIB:${ORIGIN}/../$PLATFORM");
    struct cf_rpath_lint_opts found = { .lib = "deps", .platform = "lib" };
    EXPECT_NONE(tokens, &found);
    struct cf_rpath_lint_opts not_found = { .lib = "lib64", .platform = "haswell" };
    EXPECT(tokens, &not_found, CF_RPATH_MISSING_DIR, CF_RPATH_MISSING_DIR);

    /* $ORIGIN is the caller's when given (e.g. the directory inside an unpacked wheel). */
    struct cf_rpath_lint_opts origin = { .origin_dir = t.top };
    l = lint_kinds(missing, &origin, KINDS(CF_RPATH_MISSING_DIR), 1);
    char *want_top = cf_path_join(t.top, "nonexistent");
    assert_string_equal(l.findings[0].expanded, want_top);
    free(want_top);
    cf_rpath_lint_release(&l);
    free(want);
    free(missing);
    free(tokens);
    free_tree(&t);
}

/* No linker here writes both tags, so a real RUNPATH library gets a DT_RPATH in
 * one of the spare DT_NULL slots GNU ld leaves, pointing at the same string. */
static void test_rpath_and_runpath(void **state)
{
    struct tree t = make_tree();
    char *runpath = link_lib(&t, "runpath", "-Wl,--enable-new-dtags,-rpath,$ORIGIN");
    struct strbuf bytes = STRBUF_INIT;
    assert_int_equal(cf_read_file(runpath, 1 << 24, &bytes, NULL), 0);
    struct cf_elf *elf;
    assert_int_equal(cf_elf_open(runpath, &elf, NULL), 0);
    const struct cf_elf_section *dyn = cf_elf_section_by_name(elf, ".dynamic");
    assert_non_null(dyn);
    Elf64_Dyn *d = (Elf64_Dyn *)(void *)(bytes.buf + dyn->offset);
    size_t n = dyn->size / sizeof *d, runpath_at = n, spare = n;
    for (size_t i = 0; i < n; i++) {
        if (d[i].d_tag == DT_RUNPATH)
            runpath_at = i;
        if (d[i].d_tag == DT_NULL && i + 1 < n && spare == n)
            spare = i;
    }
    cf_elf_close(elf);
    if (runpath_at == n || spare == n)
        fail_msg("%s: no DT_RUNPATH or no spare DT_NULL to patch", runpath);
    d[spare].d_tag = DT_RPATH;
    d[spare].d_un.d_val = d[runpath_at].d_un.d_val;
    char *both = cf_path_join(t.lib, "libboth.so");
    assert_int_equal(cf_write_file_atomic(both, bytes.buf, bytes.len, NULL), 0);
    cf_sb_release(&bytes);

    assert_int_equal(cf_elf_open(both, &elf, NULL), 0);
    assert_string_equal(cf_elf_get_dynamic(elf)->rpath, "$ORIGIN");
    assert_string_equal(cf_elf_get_dynamic(elf)->runpath, "$ORIGIN");
    cf_elf_close(elf);
    struct cf_rpath_lint l = lint_kinds(both, NULL, KINDS(CF_RPATH_BOTH_TAGS), 1);
    assert_non_null(strstr(l.findings[0].message, "RUNPATH"));
    assert_int_equal(l.findings[0].severity, CF_LINT_WARNING);
    cf_rpath_lint_release(&l);
    free(runpath);
    free(both);
    free_tree(&t);
}

static void test_entries_outside_the_tree(void **state)
{
    struct tree t = make_tree();
    struct cf_rpath_lint_opts within = { .within = t.pkg };
    char *out = link_lib(&t, "out", "-Wl,-rpath,$ORIGIN/../../outside");
    EXPECT_NONE(out, NULL);
    EXPECT(out, &within, CF_RPATH_OUTSIDE_TREE);
    char *sneaky = link_lib(&t, "sneaky", "-Wl,-rpath,$ORIGIN/../deps/../../outside/../pkg/deps");
    EXPECT_NONE(sneaky, &within); /* leaves and comes back: fine */
    char *gone = link_lib(&t, "gone", "-Wl,-rpath,$ORIGIN/../../nowhere/x");
    EXPECT(gone, &within, CF_RPATH_MISSING_DIR, CF_RPATH_OUTSIDE_TREE);
    char *sys = link_lib(&t, "sys", "-Wl,-rpath,/usr/lib");
    EXPECT(sys, &within, CF_RPATH_ABSOLUTE, CF_RPATH_OUTSIDE_TREE);

    /* within given relative to the CWD works the same. */
    char *cwd = getcwd(NULL, 0);
    assert_int_equal(chdir(t.top), 0);
    struct cf_rpath_lint_opts rel_within = { .within = "pkg" };
    EXPECT(out, &rel_within, CF_RPATH_OUTSIDE_TREE);
    EXPECT_NONE(sneaky, &rel_within);
    assert_int_equal(chdir(cwd), 0);
    free(cwd);

    struct cf_elf *elf;
    assert_int_equal(cf_elf_open(out, &elf, NULL), 0);
    struct cf_rpath_lint lint;
    cf_error err = CF_ERROR_INIT;
    struct cf_rpath_lint_opts bad = { .within = "/no/such/tree" };
    assert_int_equal(cf_rpath_lint(elf, &bad, &lint, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "/no/such/tree"));
    cf_error_clear(&err);
    cf_elf_close(elf);
    free(out);
    free(sneaky);
    free(gone);
    free(sys);
    free_tree(&t);
}

static void test_kind_table(void **state)
{
    static const char *const names[] = { "absolute", "relative", "empty", "missing-dir", "rpath-and-runpath",
                                         "outside-tree" };
    for (int k = 0; k < CF_RPATH_KIND_COUNT; k++)
        assert_string_equal(cf_rpath_kind_name((enum cf_rpath_finding_kind)k), names[k]);
    assert_string_equal(cf_lint_severity_name(cf_rpath_kind_severity(CF_RPATH_RELATIVE)), "error");
    assert_string_equal(cf_lint_severity_name(cf_rpath_kind_severity(CF_RPATH_ABSOLUTE)), "warning");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_library_is_silent),
        cmocka_unit_test(test_absolute_entries),
        cmocka_unit_test(test_relative_and_empty_entries),
        cmocka_unit_test(test_missing_directories),
        cmocka_unit_test(test_rpath_and_runpath),
        cmocka_unit_test(test_entries_outside_the_tree),
        cmocka_unit_test(test_kind_table),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
