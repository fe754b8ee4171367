/* Names sorted for look-up: exact matches only (node1 is not node10), names
 * found within a longer string, NULL names left out, equal names kept in the
 * order of their positions, and a caller's order for display. */
#include "testsupport.h"

#include <string.h>

#include "cclforge/hostlist.h"
#include "cclforge/sorted_names.h"

static void test_find(void **state)
{
    (void)state;
    const char *names[] = { "node10", "node1", NULL, "node0", "n", "node1" };
    struct cf_sorted_names x;
    cf_sorted_names_build(&x, names, 6, NULL);
    assert_int_equal(x.n, 5);
    assert_int_equal(cf_sorted_names_find(&x, "node1", 5), 1); /* the first of two */
    assert_int_equal(cf_sorted_names_find(&x, "node10", 6), 0);
    assert_int_equal(cf_sorted_names_find(&x, "node0: a finding", 5), 3);
    assert_int_equal(cf_sorted_names_find(&x, "n", 1), 4);
    assert_int_equal(cf_sorted_names_find(&x, "node", 4), -1);
    assert_int_equal(cf_sorted_names_find(&x, "node2", 5), -1);
    assert_int_equal(cf_sorted_names_find(&x, "", 0), -1);
    for (size_t i = 1; i < x.n; i++) {
        int c = strcmp(x.v[i - 1].name, x.v[i].name);
        assert_true(c < 0 || (c == 0 && x.v[i - 1].ix < x.v[i].ix));
    }
    cf_sorted_names_release(&x);
    assert_null(x.v);

    struct cf_sorted_names empty;
    cf_sorted_names_build(&empty, names, 0, NULL);
    assert_int_equal(empty.n, 0);
    assert_int_equal(cf_sorted_names_find(&empty, "node1", 5), -1);
    cf_sorted_names_release(&empty);
}

static void test_natural_order(void **state)
{
    (void)state;
    const char *names[] = { "n10", "n9", "m1", "n9" };
    struct cf_sorted_names x;
    cf_sorted_names_build(&x, names, 4, cf_hostname_natural_cmp);
    static const size_t want[] = { 2, 1, 3, 0 };
    assert_int_equal(x.n, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(x.v[i].ix, want[i]);
    cf_sorted_names_release(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_natural_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
