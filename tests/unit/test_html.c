/* The reports' shared frame: escaping that no host name or value survives as
 * markup, JSON that cannot end its element, and a colour scale whose
 * lightness rises (readable in greyscale). */
#include "testsupport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/html.h"

static char *text_of(const char *in)
{
    struct strbuf sb = STRBUF_INIT;
    cf_html_text(&sb, in);
    return cf_sb_detach(&sb);
}

static void test_escaping(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } cases[] = {
        { "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;" },
        { "a&b \"q\" 'x'", "a&amp;b &quot;q&quot; &#39;x&#39;" },
        { "n\x01" "x\x7f", "n\xef\xbf\xbdx\xef\xbf\xbd" },
        { "caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93" },      /* valid UTF-8 kept */
        { "\xc0\xaf\xff\xed\xa0\x80z", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz" },
        { "cut\xe2\x9c", "cut\xef\xbf\xbd\xef\xbf\xbd" },
        { "tab\tnl\n", "tab\tnl\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = text_of(cases[i].in);
        if (strcmp(got, cases[i].out))
            fail_msg("case %zu: got \"%s\"", i, got);
        free(got);
    }
}

static void test_document(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    cf_html_begin(&sb, "hosts <b>", ".x{}");
    cf_html_json(&sb, "doc", "{\"host\":\"</script><script>alert(1)</script>\"}");
    cf_html_end(&sb);
    const char *s = cf_sb_str(&sb);
    assert_non_null(strstr(s, "default-src 'none'"));
    assert_non_null(strstr(s, "<title>hosts &lt;b&gt;</title>"));
    assert_non_null(strstr(s, "\\u003c/script>\\u003cscript>"));
    assert_null(strstr(s, "<script>alert"));
    assert_non_null(strstr(s, ".x{}"));
    cf_sb_release(&sb);
}

static double lightness(const char hex[8])
{
    unsigned r, g, b;
    assert_int_equal(sscanf(hex, "#%02x%02x%02x", &r, &g, &b), 3);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

static void test_scale(void **state)
{
    (void)state;
    char hex[8], prev_hex[8];
    cf_html_scale(-1, prev_hex);
    cf_html_scale(0, hex);
    assert_string_equal(hex, prev_hex);
    for (int i = 1; i <= 100; i++) {
        cf_html_scale(i / 100.0, hex);
        assert_true(lightness(hex) >= lightness(prev_hex));
        memcpy(prev_hex, hex, sizeof hex);
    }
    cf_html_scale(2, hex);
    assert_string_equal(hex, prev_hex);
    cf_html_scale(NAN, hex);
    cf_html_scale(0, prev_hex);
    assert_string_equal(hex, prev_hex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_document),
        cmocka_unit_test(test_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
