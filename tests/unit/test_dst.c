/* $ORIGIN / $LIB / $PLATFORM expansion, case by case as glibc's loader does it. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/dst.h"

static void test_expansion_table(void **state)
{
    static const struct {
        const char *entry;
        const char *expected; /* NULL: the entry is dropped */
    } cases[] = {
        { "$ORIGIN", "/pkg/lib" },
        { "${ORIGIN}", "/pkg/lib" },
        { "$ORIGIN/../lib64", "/pkg/lib/../lib64" },
        { "${ORIGIN}/x:y", "/pkg/lib/x:y" },
        { "/usr/$LIB/nccl", "/usr/lib/x86_64-linux-gnu/nccl" },
        { "/usr/${LIB}", "/usr/lib/x86_64-linux-gnu" },
        { "/opt/$PLATFORM/lib", "/opt/haswell/lib" },
        { "$ORIGIN/$LIB/$PLATFORM", "/pkg/lib/lib/x86_64-linux-gnu/haswell" },
        { "$ORIGINAL/x", "$ORIGINAL/x" },   /* runs on into an identifier: literal */
        { "$ORIGIN_x", "$ORIGIN_x" },
        { "$LIBS", "$LIBS" },
        { "${ORIGIN", "${ORIGIN" },           /* unclosed brace: literal */
        { "$FOO/bar", "$FOO/bar" },           /* unknown token: literal */
        { "$", "$" },
        { "a$$ORIGIN", "a$/pkg/lib" },
        { "/plain/dir", "/plain/dir" },
        { "", "" },
        { "$ORIGIN.d", "/pkg/lib.d" },        /* '.' ends the name */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = cf_dst_expand(cases[i].entry, "/pkg/lib", "lib/x86_64-linux-gnu", "haswell");
        if (!got || strcmp(got, cases[i].expected) != 0)
            fail_msg("%s: expected %s, got %s", cases[i].entry, cases[i].expected, got ? got : "(dropped)");
        free(got);
    }
}

static void test_unknown_values_drop_the_entry(void **state)
{
    assert_null(cf_dst_expand("$ORIGIN/lib", NULL, "lib", "x86_64"));
    assert_null(cf_dst_expand("/opt/$PLATFORM", "/o", "lib", NULL));
    assert_null(cf_dst_expand("${LIB}", "/o", NULL, "x86_64"));
    /* A value that is not used may be unknown. */
    char *s = cf_dst_expand("/usr/$LIB", NULL, "lib64", NULL);
    assert_string_equal(s, "/usr/lib64");
    free(s);
}

static void test_has_token(void **state)
{
    assert_true(cf_dst_has_token("$ORIGIN/../lib"));
    assert_true(cf_dst_has_token("/a:${PLATFORM}"));
    assert_true(cf_dst_has_token("x$$LIB"));
    assert_false(cf_dst_has_token("$ORIGINAL"));
    assert_false(cf_dst_has_token("/usr/lib"));
    assert_false(cf_dst_has_token("$HOME/lib"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expansion_table),
        cmocka_unit_test(test_unknown_values_drop_the_entry),
        cmocka_unit_test(test_has_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
