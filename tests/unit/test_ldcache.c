/* ld.so.cache: the real /etc/ld.so.cache against `ldconfig -p`, and hand-built
 * caches in each format, with glibc-hwcaps entries, wrong-ABI entries, and
 * truncated or corrupt images. */
#include "testsupport.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/ldcache.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"

#define X64 (CF_LDCACHE_FLAG_X8664_LIB64 | CF_LDCACHE_FLAG_ELF_LIBC6)
#define I386 CF_LDCACHE_FLAG_ELF_LIBC6

struct fake_entry {
    const char *key, *value;
    int32_t flags;
    int hwcaps_index; /* -1: plain entry */
    unsigned isa_level;
    uint64_t legacy_hwcap; /* a plain entry's hwcap word (ldconfig before 2.37 wrote these) */
};

static void put32(struct strbuf *sb, size_t off, uint32_t v)
{
    memcpy(sb->buf + off, &v, 4); /* the test machine is little-endian, as the cache is */
}

static void add32(struct strbuf *sb, uint32_t v) { cf_sb_add(sb, &v, 4); }

/* Writes a glibc-ld.so.cache1.1 table at the end of sb (string offsets relative
 * to its header), optionally with a glibc-hwcaps extension. */
static void build_new_table(struct strbuf *sb, const struct fake_entry *e, size_t n,
                            const char *const *hwcaps, size_t n_hwcaps)
{
    size_t base = sb->len;
    cf_sb_add(sb, "glibc-ld.so.cache1.1", 20);
    add32(sb, (uint32_t)n);
    add32(sb, 0);                  /* len_strings, patched below */
    uint32_t flags_word = 2;       /* little endian */
    add32(sb, flags_word);
    add32(sb, 0);                  /* extension_offset, patched below */
    add32(sb, 0); add32(sb, 0); add32(sb, 0);
    size_t entries_at = sb->len;
    for (size_t i = 0; i < n; i++)
        cf_sb_add(sb, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
    size_t strings_at = sb->len;
    for (size_t i = 0; i < n; i++) {
        size_t at = entries_at + i * 24;
        put32(sb, at, (uint32_t)e[i].flags);
        put32(sb, at + 4, (uint32_t)(sb->len - base));
        cf_sb_add(sb, e[i].key, strlen(e[i].key) + 1);
        put32(sb, at + 8, (uint32_t)(sb->len - base));
        cf_sb_add(sb, e[i].value, strlen(e[i].value) + 1);
        uint64_t hwcap = e[i].legacy_hwcap;
        if (e[i].hwcaps_index >= 0)
            hwcap = CF_LDCACHE_HWCAP_EXTENSION | (uint64_t)e[i].isa_level << 32 | (uint32_t)e[i].hwcaps_index;
        memcpy(sb->buf + at + 16, &hwcap, 8);
    }
    uint32_t hwcaps_names[8];
    for (size_t i = 0; i < n_hwcaps; i++) {
        hwcaps_names[i] = (uint32_t)sb->len; /* offsets from the start of the file */
        cf_sb_add(sb, hwcaps[i], strlen(hwcaps[i]) + 1);
    }
    put32(sb, base + 24, (uint32_t)(sb->len - strings_at));
    while (sb->len % 4)
        cf_sb_addc(sb, '\0');
    if (n_hwcaps) {
        size_t ext = sb->len;
        put32(sb, base + 32, (uint32_t)ext);
        add32(sb, 0xeaa42174u);
        add32(sb, 2);
        size_t dir = sb->len;
        for (int i = 0; i < 8; i++)
            add32(sb, 0);
        const char gen[] = "ldconfig (test) 9.99";
        put32(sb, dir, 0);
        put32(sb, dir + 8, (uint32_t)sb->len);
        put32(sb, dir + 12, sizeof gen - 1);
        cf_sb_add(sb, gen, sizeof gen - 1);
        while (sb->len % 4)
            cf_sb_addc(sb, '\0');
        put32(sb, dir + 16, 1);
        put32(sb, dir + 24, (uint32_t)sb->len);
        put32(sb, dir + 28, (uint32_t)(n_hwcaps * 4));
        for (size_t i = 0; i < n_hwcaps; i++)
            add32(sb, hwcaps_names[i]);
    }
}

static struct cf_ldcache_query x86_64_query(const char *const *hwcaps, size_t n, uint32_t isa_1)
{
    struct cf_ldcache_query q;
    memset(&q, 0, sizeof q);
    assert_int_equal(cf_ldcache_abi_for(EM_X86_64, 64, &q.abi, NULL), 0);
    q.hwcaps = hwcaps;
    q.n_hwcaps = n;
    q.isa_1 = isa_1;
    return q;
}

/* Entries sorted as ldconfig sorts them: descending _dl_cache_libcmp, hwcaps first
 * within equal keys. */
static const struct fake_entry sample[] = {
    { "libzz.so.1", "/lib64/libzz.so.1", X64, -1, 0, 0 },
    { "libfoo.so.10", "/opt/foo10/libfoo.so.10", X64, -1, 0, 0 },
    { "libfoo.so.2", "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.2", X64, 1, 0, 0 },
    { "libfoo.so.2", "/usr/lib/glibc-hwcaps/x86-64-v2/libfoo.so.2", X64, 0, 0, 0 },
    { "libfoo.so.2", "/usr/lib32/libfoo.so.2", I386, -1, 0, 0 },
    { "libfoo.so.2", "/usr/lib/libfoo.so.2", X64, -1, 0, 0 },
    { "libbar.so.1", "/usr/lib32/libbar.so.1", I386, -1, 0, 0 },
    { "liba.so.1", "/lib/liba.so.1", X64, -1, 0, 0 },
};
static const char *const sample_hwcaps[] = { "x86-64-v2", "x86-64-v3" };

static struct cf_ldcache *parse_ok(const struct strbuf *sb)
{
    struct cf_ldcache *c = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_ldcache_parse(sb->buf, sb->len, "test-cache", &c, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    return c;
}

static void test_new_format_lookup_and_hwcaps(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    build_new_table(&sb, sample, 8, sample_hwcaps, 2);
    struct cf_ldcache *c = parse_ok(&sb);
    assert_int_equal(cf_ldcache_get_format(c), CF_LDCACHE_NEW);
    assert_int_equal(cf_ldcache_count(c), 8);
    assert_string_equal(cf_ldcache_generator(c), "ldconfig (test) 9.99");
    assert_string_equal(cf_ldcache_entry_at(c, 2)->hwcaps_subdir, "x86-64-v3");

    /* A CPU with v3: the v3 entry wins over v2 and the plain one. */
    const char *v3[] = { "x86-64-v3", "x86-64-v2" };
    struct cf_ldcache_query q = x86_64_query(v3, 2, 1 | 2 | 4);
    assert_string_equal(cf_ldcache_lookup(c, "libfoo.so.2", &q), "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.2");
    /* Only v2 active. */
    struct cf_ldcache_query q2 = x86_64_query(v3 + 1, 1, 1 | 2);
    assert_string_equal(cf_ldcache_lookup(c, "libfoo.so.2", &q2), "/usr/lib/glibc-hwcaps/x86-64-v2/libfoo.so.2");
    /* No hwcaps: the i386 entry in between is skipped, the x86-64 one found. */
    struct cf_ldcache_query q0 = x86_64_query(NULL, 0, 1);
    assert_string_equal(cf_ldcache_lookup(c, "libfoo.so.2", &q0), "/usr/lib/libfoo.so.2");
    /* Numeric comparison: libfoo.so.10 sorts above libfoo.so.2 and is found. */
    assert_string_equal(cf_ldcache_lookup(c, "libfoo.so.10", &q0), "/opt/foo10/libfoo.so.10");
    assert_string_equal(cf_ldcache_lookup(c, "libzz.so.1", &q0), "/lib64/libzz.so.1");
    assert_string_equal(cf_ldcache_lookup(c, "liba.so.1", &q0), "/lib/liba.so.1");
    /* Entries for another ABI only. */
    assert_null(cf_ldcache_lookup(c, "libbar.so.1", &q0));
    assert_null(cf_ldcache_lookup(c, "libnope.so.1", &q0));
    struct cf_ldcache_query q32;
    memset(&q32, 0, sizeof q32);
    assert_int_equal(cf_ldcache_abi_for(EM_386, 32, &q32.abi, NULL), 0);
    q32.isa_1 = 1;
    assert_string_equal(cf_ldcache_lookup(c, "libbar.so.1", &q32), "/usr/lib32/libbar.so.1");
    assert_string_equal(cf_ldcache_lookup(c, "libfoo.so.2", &q32), "/usr/lib32/libfoo.so.2");

    char *d = cf_ldcache_describe(cf_ldcache_entry_at(c, 2));
    assert_string_equal(d, "libc6,x86-64, hwcap: \"x86-64-v3\"");
    free(d);
    d = cf_ldcache_describe(cf_ldcache_entry_at(c, 4));
    assert_string_equal(d, "libc6");
    free(d);
    cf_ldcache_free(c);
    cf_sb_release(&sb);
}

static void test_isa_level_bits_gate_hwcaps_entries(void **state)
{
    /* An x86-64-v3 entry also marked ISA level 3 is unusable on a v2-only CPU
     * even if the caller (wrongly) lists x86-64-v3 as active. */
    const struct fake_entry e[] = {
        { "libq.so.1", "/h/v3/libq.so.1", X64, 0, 3, 0 },
        { "libq.so.1", "/plain/libq.so.1", X64, -1, 0, 0 },
    };
    const char *names[] = { "x86-64-v3" };
    struct strbuf sb = STRBUF_INIT;
    build_new_table(&sb, e, 2, names, 1);
    struct cf_ldcache *c = parse_ok(&sb);
    struct cf_ldcache_query q = x86_64_query(names, 1, 1 | 2);
    assert_string_equal(cf_ldcache_lookup(c, "libq.so.1", &q), "/plain/libq.so.1");
    q.isa_1 = 1 | 2 | 4 | 8;
    assert_string_equal(cf_ldcache_lookup(c, "libq.so.1", &q), "/h/v3/libq.so.1");
    cf_ldcache_free(c);
    cf_sb_release(&sb);
}

/* search_cache as each release has it (glibc.h rules). The hwcap words are
 * what ldconfig wrote for /usr/lib/<subdir>: haswell = platform bit 50,
 * x86_64 = hwcap bit 1, tls = bit 63. */
static void test_lookup_follows_the_release(void **state)
{
    const uint64_t haswell = 1ULL << 50, x86_64 = 1ULL << 1, tls = 1ULL << 63;
    const struct fake_entry e[] = {
        { "libv.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libv.so.1", X64, 0, 0, 0 },
        { "libv.so.1", "/usr/lib/libv.so.1", X64, -1, 0, 0 },
        { "libl.so.1", "/usr/lib/tls/haswell/x86_64/libl.so.1", X64, -1, 0, tls | haswell | x86_64 },
        { "libl.so.1", "/usr/lib/haswell/libl.so.1", X64, -1, 0, haswell },
        { "libl.so.1", "/usr/lib/x86_64/libl.so.1", X64, -1, 0, x86_64 },
        { "libl.so.1", "/usr/lib/libl.so.1", X64, -1, 0, 0 },
    };
    const char *names[] = { "x86-64-v3" };
    struct strbuf sb = STRBUF_INIT;
    build_new_table(&sb, e, 6, names, 1);
    struct cf_ldcache *c = parse_ok(&sb);
    struct cf_ldcache_query q = x86_64_query(names, 1, 1 | 2 | 4);
    /* An Intel Haswell under 2.36: glibc-hwcaps first, then the best legacy entry. */
    q.glibc = (struct cf_glibc){ 2, 36 };
    q.hwcap = x86_64;
    q.platform_mask = 0xfULL << 48;
    q.platform = haswell;
    assert_string_equal(cf_ldcache_lookup(c, "libv.so.1", &q), "/usr/lib/glibc-hwcaps/x86-64-v3/libv.so.1");
    assert_string_equal(cf_ldcache_lookup(c, "libl.so.1", &q), "/usr/lib/tls/haswell/x86_64/libl.so.1");
    /* An AMD CPU names no platform: haswell entries are not for it. */
    q.platform = ~0ULL;
    assert_string_equal(cf_ldcache_lookup(c, "libl.so.1", &q), "/usr/lib/x86_64/libl.so.1");
    /* 2.32: no named hwcaps yet (bit 62 is an unknown bit), legacy entries as before. */
    q.glibc = (struct cf_glibc){ 2, 32 };
    q.platform = haswell;
    assert_string_equal(cf_ldcache_lookup(c, "libv.so.1", &q), "/usr/lib/libv.so.1");
    assert_string_equal(cf_ldcache_lookup(c, "libl.so.1", &q), "/usr/lib/tls/haswell/x86_64/libl.so.1");
    /* 2.39 still takes legacy entries; 2.40 skips every entry with hwcap bits. */
    q.glibc = (struct cf_glibc){ 2, 39 };
    assert_string_equal(cf_ldcache_lookup(c, "libl.so.1", &q), "/usr/lib/tls/haswell/x86_64/libl.so.1");
    q.glibc = (struct cf_glibc){ 2, 40 };
    assert_string_equal(cf_ldcache_lookup(c, "libl.so.1", &q), "/usr/lib/libl.so.1");
    assert_string_equal(cf_ldcache_lookup(c, "libv.so.1", &q), "/usr/lib/glibc-hwcaps/x86-64-v3/libv.so.1");
    cf_ldcache_free(c);
    cf_sb_release(&sb);

    /* i386 accepts flags 1 (ELF) and 3 (libc6, the default). Before the BZ
     * 27046 rewrite (2.33) a later default-flags entry replaces the first
     * one; after it the first acceptable plain entry is kept. */
    const struct fake_entry f[] = {
        { "libi.so.1", "/a/libi.so.1", CF_LDCACHE_FLAG_ELF, -1, 0, 0 },
        { "libi.so.1", "/b/libi.so.1", I386, -1, 0, 0 },
    };
    build_new_table(&sb, f, 2, NULL, 0);
    c = parse_ok(&sb);
    struct cf_ldcache_query q32;
    memset(&q32, 0, sizeof q32);
    assert_int_equal(cf_ldcache_abi_for(EM_386, 32, &q32.abi, NULL), 0);
    q32.glibc = (struct cf_glibc){ 2, 31 };
    assert_string_equal(cf_ldcache_lookup(c, "libi.so.1", &q32), "/b/libi.so.1");
    q32.glibc = (struct cf_glibc){ 2, 36 };
    assert_string_equal(cf_ldcache_lookup(c, "libi.so.1", &q32), "/a/libi.so.1");
    cf_ldcache_free(c);
    cf_sb_release(&sb);
}

/* The old format with the new one embedded after it, and the old format alone. */
static void test_old_formats(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_add(&sb, "ld.so-1.7.0\0", 12);
    add32(&sb, 2);
    size_t e0 = sb.len;
    for (int i = 0; i < 6; i++)
        add32(&sb, 0);
    size_t strings = sb.len;
    /* Old entries point into the old string table (starts right after them). */
    put32(&sb, e0, I386);
    put32(&sb, e0 + 4, (uint32_t)(sb.len - strings));
    cf_sb_add(&sb, "libold.so.1", 12);
    put32(&sb, e0 + 8, (uint32_t)(sb.len - strings));
    cf_sb_add(&sb, "/old/libold.so.1", 17);
    put32(&sb, e0 + 12, I386);
    put32(&sb, e0 + 16, 0);
    put32(&sb, e0 + 20, 12);
    struct cf_ldcache_query q32;
    memset(&q32, 0, sizeof q32);
    assert_int_equal(cf_ldcache_abi_for(EM_386, 32, &q32.abi, NULL), 0);

    /* Old alone: the image ends after the strings. */
    struct cf_ldcache *c = parse_ok(&sb);
    assert_int_equal(cf_ldcache_get_format(c), CF_LDCACHE_OLD);
    assert_int_equal(cf_ldcache_count(c), 2);
    assert_string_equal(cf_ldcache_lookup(c, "libold.so.1", &q32), "/old/libold.so.1");
    cf_ldcache_free(c);

    /* Old + new: the new table starts 8-byte aligned after the old entries and
     * overlays the old string table, as ldconfig writes it. */
    struct strbuf both = STRBUF_INIT;
    cf_sb_add(&both, sb.buf, strings);
    while (both.len % 8)
        cf_sb_addc(&both, '\0');
    build_new_table(&both, sample, 8, NULL, 0);
    c = parse_ok(&both);
    assert_int_equal(cf_ldcache_get_format(c), CF_LDCACHE_OLD_WITH_NEW);
    assert_int_equal(cf_ldcache_count(c), 8);
    struct cf_ldcache_query q = x86_64_query(NULL, 0, 1);
    assert_string_equal(cf_ldcache_lookup(c, "libfoo.so.2", &q), "/usr/lib/libfoo.so.2");
    cf_ldcache_free(c);
    cf_sb_release(&both);
    cf_sb_release(&sb);
}

static void expect_corrupt(const void *data, size_t len)
{
    struct cf_ldcache *c = NULL;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldcache_parse(data, len, "bad-cache", &c, &err), -1);
    assert_null(c);
    assert_int_equal(err.kind, CF_ERR_FORMAT);
    assert_non_null(strstr(cf_error_message(&err), "bad-cache"));
    cf_error_clear(&err);
}

static void test_truncated_and_corrupt(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    build_new_table(&sb, sample, 8, sample_hwcaps, 2);
    /* Every truncation either parses consistently or fails cleanly (ASan checks the reads). */
    for (size_t cut = 0; cut < sb.len; cut++) {
        struct cf_ldcache *c = NULL;
        if (cf_ldcache_parse(sb.buf, cut, "cut", &c, NULL) == 0) {
            for (size_t i = 0; i < cf_ldcache_count(c); i++)
                assert_non_null(cf_ldcache_entry_at(c, i)->value);
            cf_ldcache_free(c);
        }
    }
    /* Cut inside the entries: too many entries for the file. */
    expect_corrupt(sb.buf, 48 + 24 * 3);
    /* A key offset far outside the string table. */
    struct strbuf bad = STRBUF_INIT;
    cf_sb_add(&bad, sb.buf, sb.len);
    put32(&bad, 48 + 4, 0x7fffffff);
    expect_corrupt(bad.buf, bad.len);
    /* Endianness flag says "invalid". */
    cf_sb_reset(&bad);
    cf_sb_add(&bad, sb.buf, sb.len);
    bad.buf[28] = 1;
    expect_corrupt(bad.buf, bad.len);
    /* No magic at all. */
    expect_corrupt("hello world, this is not a cache at all.........", 48);
    /* An extension directory pointing past the end is ignored, as glibc does. */
    cf_sb_reset(&bad);
    cf_sb_add(&bad, sb.buf, sb.len);
    put32(&bad, 32, 0x7ffffff0);
    struct cf_ldcache *c = parse_ok(&bad);
    assert_null(cf_ldcache_generator(c));
    assert_null(cf_ldcache_entry_at(c, 2)->hwcaps_subdir);
    cf_ldcache_free(c);
    cf_sb_release(&bad);
    cf_sb_release(&sb);
}

static void test_libcmp_orders_numbers(void **state)
{
    assert_true(cf_ldcache_libcmp("libfoo.so.10", "libfoo.so.9") > 0);
    assert_true(cf_ldcache_libcmp("libfoo.so.9", "libfoo.so.10") < 0);
    assert_int_equal(cf_ldcache_libcmp("libc.so.6", "libc.so.6"), 0);
    assert_true(cf_ldcache_libcmp("libc.so", "libc.so.6") < 0);
    assert_true(cf_ldcache_libcmp("lib1", "liba") > 0); /* a digit sorts above a letter */
}

/* The real cache against ldconfig -p: same count, same entries, same order, and
 * every x86-64 soname looks up to the first x86-64 path ldconfig lists. */
static void test_real_cache_matches_ldconfig(void **state)
{
    const char *path = "/etc/ld.so.cache";
    if (!cf_is_file(path))
        skip();
    char *ldconfig = cf_which("ldconfig");
    if (!ldconfig && cf_is_file("/sbin/ldconfig"))
        ldconfig = cf_strdup("/sbin/ldconfig");
    if (!ldconfig) {
        print_message("skipped: ldconfig not found\n");
        skip();
    }
    struct cf_ldcache *c = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_ldcache_open(path, &c, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    const char *argv[] = { ldconfig, "-p", NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.null_stdin = 1;
    o.timeout_s = 60;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    assert_true(cf_spawn_ok(&r));
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&r.out), "\n", 0);
    assert_true(lines.n >= 2);
    /* "783 libs found in cache `/etc/ld.so.cache'" */
    assert_int_equal(strtoul(lines.v[0], NULL, 10), cf_ldcache_count(c));
    /* ldconfig ends with "Cache generated by: <generator>" when the cache says. */
    size_t n_lines = lines.n - 1;
    if (cf_ldcache_generator(c)) {
        char *gen = cf_asprintf("Cache generated by: %s", cf_ldcache_generator(c));
        assert_string_equal(lines.v[lines.n - 1], gen);
        free(gen);
        n_lines--;
    }
    assert_int_equal(n_lines, cf_ldcache_count(c));
    struct cf_ldcache_query q = x86_64_query(NULL, 0, 1);
    size_t looked_up = 0;
    for (size_t i = 0; i < cf_ldcache_count(c); i++) {
        const struct cf_ldcache_entry *e = cf_ldcache_entry_at(c, i);
        char *desc = cf_ldcache_describe(e);
        char *want = cf_asprintf("\t%s (%s) => %s", e->key, desc, e->value);
        assert_string_equal(lines.v[i + 1], want);
        /* The first plain x86-64 entry of a run of equal keys is what a lookup returns. */
        if (e->flags == X64 && !e->hwcaps_subdir &&
            (i == 0 || strcmp(cf_ldcache_entry_at(c, i - 1)->key, e->key) != 0)) {
            assert_string_equal(cf_ldcache_lookup(c, e->key, &q), e->value);
            looked_up++;
        }
        free(want);
        free(desc);
    }
    print_message("ld.so.cache: %zu entries equal to ldconfig -p, %zu looked up\n", cf_ldcache_count(c), looked_up);
    assert_true(looked_up > 0);
    cf_strvec_clear(&lines);
    cf_spawn_result_release(&r);
    cf_ldcache_free(c);
    free(ldconfig);
}

/* The loader emulation's lookup-only open (entries decoded when a lookup
 * meets them) answers as the whole-table parse does, for every key of the
 * sample and of the real cache, under several queries; and on every
 * truncation and a corrupt entry it never reads outside the image. */
static void expect_same_lookups(const char *path, const char *const *keys, size_t n_keys)
{
    struct cf_ldcache *whole = NULL, *lazy = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_ldcache_open(path, &whole, &err) != 0 || cf_ldcache_open_lookup(path, &lazy, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    static const char *const v3[] = { "x86-64-v3", "x86-64-v2" };
    struct cf_ldcache_query qs[4] = { x86_64_query(v3, 2, 1 | 2 | 4), x86_64_query(v3 + 1, 1, 1 | 2),
                                      x86_64_query(NULL, 0, 1), x86_64_query(v3, 2, 1 | 2 | 4) };
    qs[3].glibc = (struct cf_glibc){ 2, 31 };
    for (size_t k = 0; k < n_keys; k++)
        for (size_t q = 0; q < 4; q++) {
            const char *a = cf_ldcache_lookup(whole, keys[k], &qs[q]);
            const char *b = cf_ldcache_lookup(lazy, keys[k], &qs[q]);
            if (a == NULL || b == NULL)
                assert_ptr_equal(a, b);
            else
                assert_string_equal(a, b);
        }
    assert_int_equal(cf_ldcache_count(whole), cf_ldcache_count(lazy));
    assert_null(cf_ldcache_entry_at(lazy, 0));
    cf_ldcache_free(whole);
    cf_ldcache_free(lazy);
}

static void test_lookup_only_open_agrees(void **state)
{
    char *dir = ts_tmpdir();
    char *path = cf_path_join(dir, "ld.so.cache");
    struct strbuf sb = STRBUF_INIT;
    build_new_table(&sb, sample, 8, sample_hwcaps, 2);
    assert_int_equal(cf_write_file_atomic(path, sb.buf, sb.len, NULL), 0);
    const char *keys[] = { "libzz.so.1", "libfoo.so.10", "libfoo.so.2", "libbar.so.1", "liba.so.1", "libnone.so",
                           "libfoo.so.3", "" };
    expect_same_lookups(path, keys, sizeof keys / sizeof keys[0]);
    /* Truncations and a corrupt key offset: no crash, no read outside (ASan). */
    for (size_t cut = 0; cut <= sb.len; cut++) {
        assert_int_equal(cf_write_file_atomic(path, sb.buf, cut, NULL), 0);
        struct cf_ldcache *c = NULL;
        if (cf_ldcache_open_lookup(path, &c, NULL) == 0) {
            struct cf_ldcache_query q = x86_64_query(sample_hwcaps, 2, 1 | 2 | 4);
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                (void)cf_ldcache_lookup(c, keys[k], &q);
            cf_ldcache_free(c);
        }
    }
    put32(&sb, 48 + 24 * 3 + 4, 0x7fffffff); /* entry 3's key: the middle of the table */
    assert_int_equal(cf_write_file_atomic(path, sb.buf, sb.len, NULL), 0);
    struct cf_ldcache *c = NULL;
    assert_int_equal(cf_ldcache_open_lookup(path, &c, NULL), 0);
    struct cf_ldcache_query q = x86_64_query(NULL, 0, 1);
    assert_null(cf_ldcache_lookup(c, "libfoo.so.2", &q)); /* meets the corrupt entry: the cache is not used */
    cf_ldcache_free(c);
    cf_sb_release(&sb);
    /* The real cache, every key. */
    if (cf_is_file("/etc/ld.so.cache")) {
        struct cf_ldcache *real = NULL;
        if (cf_ldcache_open("/etc/ld.so.cache", &real, NULL) == 0) {
            size_t n = cf_ldcache_count(real);
            const char **all = cf_xcalloc(n + 1, sizeof *all);
            for (size_t i = 0; i < n; i++)
                all[i] = cf_ldcache_entry_at(real, i)->key;
            all[n] = "libcf-not-there.so.1";
            expect_same_lookups("/etc/ld.so.cache", all, n + 1);
            print_message("lookup-only open: %zu keys of /etc/ld.so.cache agree\n", n);
            free(all);
            cf_ldcache_free(real);
        }
    }
    free(path);
}

/* A cache truncated in place while it is mapped (the loader emulation maps
 * it): a lookup that meets the lost pages neither crashes (SIGBUS) nor
 * passes quietly: cf_ldcache_check_intact names the file. */
static void test_truncated_while_mapped(void **state)
{
    enum { N = 2000 }; /* ~60 KB: a lookup's binary search starts pages past the cut */
    struct fake_entry *e = cf_xcalloc(N, sizeof *e);
    char (*keys)[24] = cf_xcalloc(N, sizeof *keys);
    for (size_t i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "libt.so.%zu", N - i); /* descending, as ldconfig sorts */
        e[i] = (struct fake_entry){ keys[i], "/usr/lib/libt.so", X64, -1, 0, 0 };
    }
    struct strbuf sb = STRBUF_INIT;
    build_new_table(&sb, e, N, NULL, 0);
    char *path = cf_path_join(ts_tmpdir(), "shrinking.cache");
    assert_int_equal(cf_write_file_atomic(path, sb.buf, sb.len, NULL), 0);
    cf_mmap_guard_reinstall(); /* cmocka sets its own SIGBUS handler for every test */
    struct cf_ldcache *c = NULL;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldcache_open_lookup(path, &c, &err), 0);
    struct cf_ldcache_query q = x86_64_query(NULL, 0, 1);
    assert_string_equal(cf_ldcache_lookup(c, "libt.so.1000", &q), "/usr/lib/libt.so");
    assert_int_equal(cf_ldcache_check_intact(c, &err), 0);
    assert_int_equal(truncate(path, 4096), 0);
    (void)cf_ldcache_lookup(c, "libt.so.7", &q); /* reads zeros past 4 KB: must not crash */
    assert_int_equal(cf_ldcache_check_intact(c, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "shrinking.cache"));
    assert_non_null(strstr(cf_error_message(&err), "truncated while it was read"));
    cf_error_clear(&err);
    cf_ldcache_free(c);
    /* An image parsed from memory is a copy: never "truncated". */
    assert_int_equal(cf_ldcache_parse_lookup(sb.buf, sb.len, "copy", &c, NULL), 0);
    assert_int_equal(cf_ldcache_check_intact(c, NULL), 0);
    cf_ldcache_free(c);
    cf_sb_release(&sb);
    free(path);
    free(keys);
    free(e);
}

static void test_missing_cache_is_notfound(void **state)
{
    struct cf_ldcache *c = NULL;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_ldcache_open("/nonexistent/ld.so.cache", &c, &err), -1);
    assert_int_equal(err.kind, CF_ERR_NOTFOUND);
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
        cmocka_unit_test_teardown(test_new_format_lookup_and_hwcaps, teardown),
        cmocka_unit_test_teardown(test_isa_level_bits_gate_hwcaps_entries, teardown),
        cmocka_unit_test_teardown(test_lookup_follows_the_release, teardown),
        cmocka_unit_test_teardown(test_old_formats, teardown),
        cmocka_unit_test_teardown(test_truncated_and_corrupt, teardown),
        cmocka_unit_test_teardown(test_libcmp_orders_numbers, teardown),
        cmocka_unit_test_teardown(test_real_cache_matches_ldconfig, teardown),
        cmocka_unit_test_teardown(test_lookup_only_open_agrees, teardown),
        cmocka_unit_test_teardown(test_truncated_while_mapped, teardown),
        cmocka_unit_test_teardown(test_missing_cache_is_notfound, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
