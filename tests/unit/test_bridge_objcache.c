/* The bridge's object cache (src/bridge/bridge_objcache.c) on real compiles
 * of a tiny C++ source that includes a tiny header: the same compile again is
 * a hit; an edited header, another macro, another compiler are misses; a
 * damaged or truncated entry is a miss, never served. No torch needed. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge/bridge_internal.h"
#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

struct compile {
    const char *dir, *cache, *source, *object;
    const char *compiler; /* the key's compiler identity */
    const char *define;   /* -D... */
    char *entry;          /* the cache entry of the last compile */
};

/* One compile through the cache, as `bridge build` runs one: 1 hit, 0 miss (compiled and stored). */
static int compile(struct compile *c)
{
    struct strvec argv = STRVEC_INIT, files = STRVEC_INIT;
    char *inc = cf_asprintf("-I%s/include", c->dir);
    const char *args[] = { "g++", c->define, inc, "-O2", "-fPIC", "-c", c->source, "-o", c->object };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
        cf_strvec_push(&argv, args[i]);
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_bridge_files_read(&argv, c->source, c->dir, &files, &err), 0);
    assert_string_equal(files.v[0], c->source);
    char *key = cf_bridge_object_key(c->compiler, &argv, c->source, &files);
    assert_non_null(key);
    free(c->entry);
    c->entry = cf_asprintf("%s/%s.o", c->cache, key);
    unlink(c->object);
    int hit = cf_bridge_objcache_get(c->entry, c->object, &err);
    assert_true(hit == 0 || hit == 1);
    if (!hit) {
        ts_run_ok((const char *const *)cf_strvec_argv(&argv));
        assert_int_equal(cf_bridge_objcache_put(c->entry, c->object, &err), 0);
    }
    assert_true(cf_is_file(c->object));
    cf_error_clear(&err);
    free(key);
    free(inc);
    cf_strvec_clear(&argv);
    cf_strvec_clear(&files);
    return hit;
}

static void sha256_of(const char *path, char hex[65])
{
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_sha256_file(path, hex, &err), 0);
}

static void test_hit_and_every_miss(void **state)
{
    (void)state;
    if (!ts_have("g++"))
        skip();
    char *dir = ts_tmpdir();
    ts_write(dir, "include/tiny.h", "#pragma once\nstatic inline int tiny(void) { return 1; }\n");
    char *cache = cf_asprintf("%s/cache", dir);
    char *object = cf_asprintf("%s/options.o", dir);
    struct compile c = { dir, cache, ts_write(dir, "src/options.cpp",
                                              "#include <tiny.h>\nint options() { return tiny() + WHICH; }\n"),
                         object, "/usr/bin/g++ 13.2.0", "-DWHICH=1", NULL };
    assert_int_equal(compile(&c), 0);
    struct stat st;
    assert_int_equal(stat(c.entry, &st), 0);
    assert_int_equal(compile(&c), 1); /* same compiler, command, source and header */
    char *first = cf_strdup(c.entry);

    /* the source's bytes, not its path: a copy elsewhere is the same object */
    char *copy = ts_write(dir, "copy/options.cpp", "#include <tiny.h>\nint options() { return tiny() + WHICH; }\n");
    c.source = copy;
    assert_int_equal(compile(&c), 1);
    assert_string_equal(c.entry, first);

    ts_write(dir, "include/tiny.h", "#pragma once\nstatic inline int tiny(void) { return 2; }\n");
    assert_int_equal(compile(&c), 0); /* a header edited */
    assert_string_not_equal(c.entry, first);
    assert_int_equal(compile(&c), 1);

    c.define = "-DWHICH=2";
    assert_int_equal(compile(&c), 0); /* a macro changed */
    assert_int_equal(compile(&c), 1);

    c.compiler = "/usr/bin/g++ 14.1.0";
    assert_int_equal(compile(&c), 0); /* another compiler */
    assert_int_equal(compile(&c), 1);

    /* a damaged entry (one byte of the object changed) and a truncated one: misses, then whole again */
    char good[65], again[65];
    sha256_of(c.object, good);
    struct strbuf sb = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_read_file(c.entry, 1u << 24, &sb, &err), 0);
    sb.buf[sb.len / 2] ^= 0x20;
    assert_int_equal(cf_write_file_atomic(c.entry, sb.buf, sb.len, &err), 0);
    unlink(c.object);
    assert_int_equal(cf_bridge_objcache_get(c.entry, c.object, &err), 0);
    assert_false(cf_is_file(c.object)); /* never a bad object */
    assert_int_equal(compile(&c), 0);
    assert_int_equal(truncate(c.entry, (off_t)(sb.len - 10)), 0);
    assert_int_equal(compile(&c), 0);
    assert_int_equal(truncate(c.entry, 0), 0);
    assert_int_equal(compile(&c), 0);
    assert_int_equal(compile(&c), 1);
    sha256_of(c.object, again);
    assert_string_equal(again, good);
    cf_sb_release(&sb);
    free(first);
    free(c.entry);
    free(cache);
    free(object);
}

static void test_a_compile_that_cannot_say_what_it_reads(void **state)
{
    (void)state;
    if (!ts_have("g++"))
        skip();
    char *dir = ts_tmpdir();
    char *src = ts_write(dir, "bad.cpp", "#include <no_such_header_anywhere.h>\n");
    struct strvec argv = STRVEC_INIT, files = STRVEC_INIT;
    const char *args[] = { "g++", "-c", src, "-o", "bad.o" };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
        cf_strvec_push(&argv, args[i]);
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_bridge_files_read(&argv, src, dir, &files, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "-M"));
    cf_error_clear(&err);
    assert_int_equal((int)files.n, 0);
    /* a file that cannot be read: no key */
    cf_strvec_push(&files, src);
    cf_strvec_push(&files, "/no/such/header.h");
    assert_null(cf_bridge_object_key("g++ 13", &argv, src, &files));
    cf_strvec_clear(&files);
    assert_null(cf_bridge_object_key("g++ 13", &argv, src, &files));
    cf_strvec_clear(&argv);
}

static void test_dependency_rule(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *files; /* '|'-joined */
        int names;
    } cases[] = {
        { "cclforge-object: a.cpp /usr/include/b.h \\\n /x/c\\ d.h /y/e$$f.h /z/\\#g.h\n",
          "a.cpp|/usr/include/b.h|/x/c d.h|/y/e$f.h|/z/#g.h", 5 },
        { "cclforge-object: a.cpp a.cpp b.h\n\nother: c.h\n", "a.cpp|b.h", 3 }, /* once each; one rule */
        { "cclforge-object:a.cpp\tb.h\r\n", "a.cpp|b.h", 2 },
        { "cclforge-object: a.cpp b.h \\", "a.cpp|b.h|\\", 3 }, /* nothing read past the end */
        { "other: a.cpp\n", "", -1 },
        { "cclforge-obj", "", -1 },
        { "", "", -1 },
        { "cclforge-object:\n", "", 0 },
        { "cclforge-object: a\0b c\n", "ab|c", 2 },
    };
    static const size_t lens[] = { 0, 0, 0, 0, 0, 0, 0, 0, 23 }; /* the last holds a NUL */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct strvec files = STRVEC_INIT;
        assert_int_equal(cf_bridge_read_depfile(cases[i].text, lens[i] ? lens[i] : strlen(cases[i].text), &files),
                         cases[i].names);
        struct strbuf sb = STRBUF_INIT;
        for (size_t j = 0; j < files.n; j++)
            cf_sb_addf(&sb, "%s%s", j ? "|" : "", files.v[j]);
        assert_string_equal(cf_sb_str(&sb), cases[i].files);
        cf_sb_release(&sb);
        cf_strvec_clear(&files);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_and_every_miss),
        cmocka_unit_test(test_a_compile_that_cannot_say_what_it_reads),
        cmocka_unit_test(test_dependency_rule),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
