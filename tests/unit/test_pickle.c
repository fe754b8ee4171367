/* The safe unpickler and the JSON reader of the same values
 * (cclforge/pickle.h): torch's real Flight Recorder dumps and Python's
 * re-pickles of them, made here by tests/fixtures/hang/fr_dumps.py; Python's
 * own pickles of plain values (tests/fixtures/hang/pickle_values.py); and
 * hostile pickles written byte by byte below, each explained where it
 * stands. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cclforge/fs.h"
#include "cclforge/pickle.h"
#include "cclforge/strbuf.h"
#include "testsupport.h"

#define FIXTURES CCLFORGE_SOURCE_DIR "/tests/fixtures/hang"

/* ---- helpers ---- */

static struct strbuf slurp(const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(path, (size_t)1 << 30, &sb, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    return sb;
}

static struct cf_pvdoc *read_ok(const void *data, size_t len, int json)
{
    struct cf_pvdoc *d = NULL;
    cf_error err = CF_ERROR_INIT;
    int rc = json ? cf_pv_from_json(data, len, NULL, &d, &err) : cf_pickle_read(data, len, NULL, &d, &err);
    if (rc != 0)
        fail_msg("read failed: %s", cf_error_message(&err));
    assert_non_null(cf_pvdoc_root(d));
    return d;
}

static struct cf_pvdoc *read_file_ok(const char *dir, const char *name)
{
    char *path = cf_path_join(dir, name);
    struct strbuf sb = slurp(path);
    size_t n = strlen(name);
    struct cf_pvdoc *d = read_ok(sb.buf, sb.len, n > 5 && strcmp(name + n - 5, ".json") == 0);
    cf_sb_release(&sb);
    free(path);
    return d;
}

/* Refused: -1, CF_ERR_FORMAT, no document, and the message holds `want`. */
static void expect_refused_with(const void *data, size_t len, const struct cf_pickle_limits *lim, int json,
                                const char *want)
{
    struct cf_pvdoc *d = (struct cf_pvdoc *)1;
    cf_error err = CF_ERROR_INIT;
    int rc = json ? cf_pv_from_json(data, len, lim, &d, &err) : cf_pickle_read(data, len, lim, &d, &err);
    if (rc != -1 || err.kind != CF_ERR_FORMAT || d != NULL)
        fail_msg("expected a refusal holding \"%s\", got rc %d (%s)", want, rc, cf_error_message(&err));
    if (want && !strstr(cf_error_message(&err), want))
        fail_msg("refusal \"%s\" does not hold \"%s\"", cf_error_message(&err), want);
    cf_error_clear(&err);
}

static void refused(const char *bytes, size_t len, const char *want)
{
    expect_refused_with(bytes, len, NULL, 0, want);
}

/* Structural equality; loose: a TUPLE equals a LIST of the same items (JSON
 * has no tuples). Bounded depth: the documents compared have no cycles. */
static int same(const struct cf_pv *a, const struct cf_pv *b, int loose, int depth)
{
    if (depth > 100)
        return 0;
    if (a == b)
        return 1;
    enum cf_pv_kind ka = a->kind, kb = b->kind;
    if (loose && ka == CF_PV_TUPLE)
        ka = CF_PV_LIST;
    if (loose && kb == CF_PV_TUPLE)
        kb = CF_PV_LIST;
    if (ka != kb)
        return 0;
    switch (ka) {
    case CF_PV_NONE:
        return 1;
    case CF_PV_BOOL:
        return a->u.b == b->u.b;
    case CF_PV_INT:
        return a->u.i == b->u.i;
    case CF_PV_FLOAT:
        return a->u.f == b->u.f || (isnan(a->u.f) && isnan(b->u.f));
    case CF_PV_STR:
    case CF_PV_BYTES:
        return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0 &&
               a->u.str.s[a->u.str.len] == '\0' && b->u.str.s[b->u.str.len] == '\0';
    case CF_PV_LIST:
    case CF_PV_TUPLE:
        if (a->u.seq.n != b->u.seq.n)
            return 0;
        for (size_t i = 0; i < a->u.seq.n; i++)
            if (!same(a->u.seq.v[i], b->u.seq.v[i], loose, depth + 1))
                return 0;
        return 1;
    case CF_PV_DICT:
        if (a->u.dict.n != b->u.dict.n)
            return 0;
        for (size_t i = 0; i < a->u.dict.n; i++)
            if (!same(a->u.dict.k[i], b->u.dict.k[i], loose, depth + 1) ||
                !same(a->u.dict.v[i], b->u.dict.v[i], loose, depth + 1))
                return 0;
        return 1;
    }
    return 0;
}

/* The same, loose, with dicts compared by key (torch's JSON sorts keys). */
static int same_by_key(const struct cf_pv *a, const struct cf_pv *b, int depth)
{
    if (a->kind != CF_PV_DICT || b->kind != CF_PV_DICT)
        return same(a, b, 1, depth);
    if (depth > 100 || a->u.dict.n != b->u.dict.n)
        return 0;
    for (size_t i = 0; i < a->u.dict.n; i++) {
        const struct cf_pv *bv = cf_pv_get(b, cf_pv_str(a->u.dict.k[i]));
        if (!bv || !same_by_key(a->u.dict.v[i], bv, depth + 1))
            return 0;
    }
    return 1;
}

static const char *str_at(const struct cf_pv *dict, const char *key)
{
    const char *s = cf_pv_str(cf_pv_get(dict, key));
    if (!s)
        fail_msg("no string at \"%s\"", key);
    return s;
}

/* Runs a fixture script into a fresh directory: the directory, or NULL when
 * the script (or python3) says its prerequisite is missing. */
static char *make_fixtures(const char *script, const char *why_skipped)
{
    if (!ts_have("python3")) {
        print_message("SKIP: python3 is not installed\n");
        return NULL;
    }
    char *dir = ts_tmpdir();
    const char *argv[] = { "python3", script, dir, NULL };
    int rc = ts_run(argv);
    if (rc == 77) {
        print_message("SKIP: %s\n", why_skipped);
        return NULL;
    }
    assert_int_equal(rc, 0);
    return cf_strdup(dir);
}

static char *fr_dir;      /* torch's dumps, or NULL */
static int fr_made;       /* fr_dir was tried */
static char *values_dir;  /* Python's pickles of plain values, or NULL */
static int values_made;

static const char *fr_dumps(void)
{
    if (!fr_made) {
        fr_made = 1;
        fr_dir = make_fixtures(FIXTURES "/fr_dumps.py", "no torch 2.15 wheel in the cache (bash scripts/torch-cache.sh)");
    }
    if (!fr_dir)
        skip();
    return fr_dir;
}

static const char *plain_values(void)
{
    if (!values_made) {
        values_made = 1;
        values_dir = make_fixtures(FIXTURES "/pickle_values.py", "python3 cannot run the fixture script");
    }
    if (!values_dir)
        skip();
    return values_dir;
}

/* ---- torch's real dumps ---- */

/* What the fixture's ranks did: rank 0 issued six collectives (three
 * all_reduce, one in the subgroup of ranks 0 and 1, a broadcast, the
 * all_reduce rank 1 skipped), rank 1 five. */
static void test_torch_dump_values(void **state)
{
    (void)state;
    const char *dir = fr_dumps();
    struct cf_pvdoc *d0 = read_file_ok(dir, "rank0.pkl"), *d1 = read_file_ok(dir, "rank1.pkl");
    const struct cf_pv *r0 = cf_pvdoc_root(d0), *r1 = cf_pvdoc_root(d1);
    assert_int_equal(r0->kind, CF_PV_DICT);
    assert_string_equal(str_at(r0, "version"), "2.10");
    const struct cf_pv *entries = cf_pv_get(r0, "entries");
    assert_int_equal(cf_pv_len(entries), 6);
    assert_int_equal(cf_pv_len(cf_pv_get(r1, "entries")), 5);
    for (size_t i = 0; i < cf_pv_len(entries); i++) {
        const struct cf_pv *e = cf_pv_at(entries, i);
        int64_t seq = -1, rid = -1;
        assert_int_equal(cf_pv_int(cf_pv_get(e, "collective_seq_id"), &seq), 0);
        assert_int_equal(cf_pv_int(cf_pv_get(e, "record_id"), &rid), 0);
        assert_int_equal(rid, (int64_t)i);
        assert_true(strncmp(str_at(e, "profiling_name"), "gloo:", 5) == 0);
        const struct cf_pv *pg = cf_pv_get(e, "process_group");
        assert_int_equal(pg->kind, CF_PV_TUPLE);
        assert_int_equal(cf_pv_len(pg), 2);
        int64_t created = 0;
        assert_int_equal(cf_pv_int(cf_pv_get(e, "time_created_ns"), &created), 0);
        assert_true(created > (int64_t)1 << 60); /* nanoseconds since 1970, a LONG1 */
        assert_int_equal(cf_pv_get(e, "time_discovered_started_ns")->kind, CF_PV_NONE);
        const struct cf_pv *frames = cf_pv_get(e, "frames");
        assert_true(cf_pv_len(frames) >= 1);
        assert_non_null(cf_pv_str(cf_pv_get(cf_pv_at(frames, 0), "filename")));
    }
    assert_string_equal(str_at(cf_pv_at(entries, 4), "profiling_name"), "gloo:broadcast");
    /* The memo shares: every entry's keys are the one string torch stored
     * once, and the wrong kind gives nothing rather than failing. */
    const struct cf_pv *e0 = cf_pv_at(entries, 0), *e1 = cf_pv_at(entries, 1);
    assert_int_equal(e0->u.dict.n, e1->u.dict.n);
    for (size_t i = 0; i < e0->u.dict.n; i++)
        assert_ptr_equal(e0->u.dict.k[i], e1->u.dict.k[i]);
    assert_null(cf_pv_get(entries, "version"));
    assert_null(cf_pv_at(r0, 0));
    assert_null(cf_pv_str(entries));
    int64_t dummy;
    assert_int_equal(cf_pv_int(entries, &dummy), -1);
    cf_pvdoc_free(d0);
    cf_pvdoc_free(d1);
}

/* Python's re-pickles at protocols 2 to 5 (FRAME, MEMOIZE, SHORT_BINUNICODE
 * at 4 and 5) read to exactly the values of torch's own bytes, and the JSON
 * Python writes of them to the same values but tuples as lists. */
static void test_torch_dump_repickled(void **state)
{
    (void)state;
    const char *dir = fr_dumps();
    for (int rank = 0; rank < 4; rank++) {
        char name[64];
        snprintf(name, sizeof name, "rank%d.pkl", rank);
        struct cf_pvdoc *torch = read_file_ok(dir, name);
        for (int proto = 2; proto <= 5; proto++) {
            snprintf(name, sizeof name, "rank%d.p%d.pkl", rank, proto);
            struct cf_pvdoc *py = read_file_ok(dir, name);
            if (!same(cf_pvdoc_root(torch), cf_pvdoc_root(py), 0, 0))
                fail_msg("%s reads to other values than torch's rank%d.pkl", name, rank);
            cf_pvdoc_free(py);
        }
        snprintf(name, sizeof name, "rank%d.py.json", rank);
        struct cf_pvdoc *json = read_file_ok(dir, name);
        assert_true(same(cf_pvdoc_root(torch), cf_pvdoc_root(json), 1, 0));
        assert_false(same(cf_pvdoc_root(torch), cf_pvdoc_root(json), 0, 0)); /* the tuples */
        cf_pvdoc_free(json);
        cf_pvdoc_free(torch);
    }
}

/* torch's own JSON form: the same as Python's re-dump of it (other spacing,
 * non-ASCII as \u escapes), and the pickle's values where torch writes the
 * same field the same way (the JSON has no frames, 0 for an unknown time,
 * pg_status numbers as strings: torch's choices, kept as they are). The two
 * dumps are taken one after the other, so an entry's live state (retired,
 * state, the discovery times) may move between them. */
static void test_torch_dump_json(void **state)
{
    (void)state;
    const char *dir = fr_dumps();
    for (int rank = 0; rank < 4; rank++) {
        char name[64];
        snprintf(name, sizeof name, "rank%d.json", rank);
        struct cf_pvdoc *tj = read_file_ok(dir, name);
        snprintf(name, sizeof name, "rank%d.redump.json", rank);
        struct cf_pvdoc *pj = read_file_ok(dir, name);
        assert_true(same(cf_pvdoc_root(tj), cf_pvdoc_root(pj), 0, 0));
        snprintf(name, sizeof name, "rank%d.pkl", rank);
        struct cf_pvdoc *pk = read_file_ok(dir, name);
        const struct cf_pv *j = cf_pvdoc_root(tj), *p = cf_pvdoc_root(pk);
        assert_string_equal(str_at(j, "version"), str_at(p, "version"));
        assert_true(same_by_key(cf_pv_get(j, "pg_config"), cf_pv_get(p, "pg_config"), 0));
        const struct cf_pv *je = cf_pv_get(j, "entries"), *pe = cf_pv_get(p, "entries");
        assert_int_equal(cf_pv_len(je), cf_pv_len(pe));
        for (size_t i = 0; i < cf_pv_len(je); i++) {
            const struct cf_pv *a = cf_pv_at(je, i), *b = cf_pv_at(pe, i);
            size_t compared = 0;
            for (size_t k = 0; k < a->u.dict.n; k++) {
                const char *key = cf_pv_str(a->u.dict.k[k]);
                if (strncmp(key, "time_discovered_", 16) == 0 || strcmp(key, "retired") == 0 ||
                    strcmp(key, "state") == 0)
                    continue; /* live state: it moves between the two dumps */
                const struct cf_pv *bv = cf_pv_get(b, key);
                assert_non_null(bv);
                if (!same_by_key(a->u.dict.v[k], bv, 0))
                    fail_msg("rank%d entry %zu: \"%s\" differs between torch's JSON and pickle", rank, i, key);
                compared++;
            }
            assert_true(compared >= 15);
        }
        cf_pvdoc_free(tj);
        cf_pvdoc_free(pj);
        cf_pvdoc_free(pk);
    }
}

/* Every prefix of a real dump is refused with an error, never a crash; so is
 * every prefix of its JSON. */
static void test_truncated_everywhere(void **state)
{
    (void)state;
    const char *dir = fr_dumps();
    static const char *const names[] = { "rank0.pkl", "rank0.p4.pkl", "rank0.json" };
    for (size_t f = 0; f < 3; f++) {
        char *path = cf_path_join(dir, names[f]);
        struct strbuf sb = slurp(path);
        int json = f == 2;
        size_t whole = sb.len; /* a JSON document without its trailing space is still whole */
        while (json && whole && strchr(" \n\r\t", sb.buf[whole - 1]))
            whole--;
        for (size_t n = 0; n < whole; n++) {
            /* a heap copy of exactly n bytes: ASan sees a read past it */
            char *copy = malloc(n ? n : 1);
            memcpy(copy, sb.buf, n);
            expect_refused_with(copy, n, NULL, json, json ? "JSON" : "pickle");
            free(copy);
        }
        cf_sb_release(&sb);
        free(path);
    }
}

/* ---- Python's pickles of plain values ---- */

static void test_python_values(void **state)
{
    (void)state;
    const char *dir = plain_values();
    struct cf_pvdoc *json = read_file_ok(dir, "values.json");
    struct cf_pvdoc *p2 = read_file_ok(dir, "values.p2.pkl");
    for (int proto = 2; proto <= 5; proto++) {
        char name[32];
        snprintf(name, sizeof name, "values.p%d.pkl", proto);
        struct cf_pvdoc *d = read_file_ok(dir, name);
        const struct cf_pv *r = cf_pvdoc_root(d);
        assert_true(same(r, cf_pvdoc_root(json), 1, 0));
        assert_true(same(r, cf_pvdoc_root(p2), 0, 0));
        /* the integer edges, exactly */
        const struct cf_pv *ints = cf_pv_get(r, "ints");
        static const int64_t want[] = { 0, 1, -1, 255, 256, 65535, 65536, 2147483647, -2147483647 - 1,
                                        2147483648, INT64_MAX, INT64_MIN, -129 };
        assert_int_equal(cf_pv_len(ints), 13);
        for (size_t i = 0; i < 13; i++) {
            int64_t v;
            assert_int_equal(cf_pv_int(cf_pv_at(ints, i), &v), 0);
            assert_true(v == want[i]);
        }
        const struct cf_pv *floats = cf_pv_get(r, "floats");
        assert_int_equal(cf_pv_at(floats, 2)->kind, CF_PV_FLOAT);
        assert_true(cf_pv_at(floats, 2)->u.f == 1.5);
        assert_true(signbit(cf_pv_at(floats, 1)->u.f));
        assert_true(cf_pv_at(floats, 5)->u.f == 5e-324);
        assert_string_equal(cf_pv_str(cf_pv_at(cf_pv_get(r, "text"), 2)), "caf\xc3\xa9");
        assert_string_equal(cf_pv_str(cf_pv_at(cf_pv_get(r, "text"), 4)), "\xf0\x9f\x98\x80");
        assert_int_equal(cf_pv_len(cf_pv_get(r, "long_list")), 2500);
        assert_int_equal(cf_pv_len(cf_pv_get(r, "long_dict")), 2100); /* three SETITEMS batches */
        int64_t k2099 = 0;
        assert_int_equal(cf_pv_int(cf_pv_get(cf_pv_get(r, "long_dict"), "k2099"), &k2099), 0);
        assert_int_equal(k2099, 2099);
        /* one dict, fetched three times: one value */
        const struct cf_pv *shared = cf_pv_get(r, "shared");
        assert_ptr_equal(cf_pv_at(shared, 0), cf_pv_at(shared, 2));
        cf_pvdoc_free(d);
    }
    /* and what Python writes for objects, sets and huge integers is refused */
    static const struct {
        const char *name, *want[4];
    } refusals[] = {
        { "object", { "GLOBAL (0x63): refused", "GLOBAL (0x63): refused", "STACK_GLOBAL (0x93): refused",
                      "STACK_GLOBAL (0x93): refused" } },
        { "set", { "GLOBAL (0x63): refused", "GLOBAL (0x63): refused", "EMPTY_SET (0x8f): not read",
                   "EMPTY_SET (0x8f): not read" } },
        { "big_int", { "beyond 64 bits", "beyond 64 bits", "beyond 64 bits", "beyond 64 bits" } },
    };
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
        for (int proto = 2; proto <= 5; proto++) {
            char name[64];
            snprintf(name, sizeof name, "refused-%s.p%d.pkl", refusals[i].name, proto);
            char *path = cf_path_join(dir, name);
            struct strbuf sb = slurp(path);
            expect_refused_with(sb.buf, sb.len, NULL, 0, refusals[i].want[proto - 2]);
            cf_sb_release(&sb);
            free(path);
        }
    cf_pvdoc_free(json);
    cf_pvdoc_free(p2);
}

/* ---- hostile and hand-made pickles ---- */

/* "\x80\x02" is PROTO 2, "}" EMPTY_DICT, "]" EMPTY_LIST, "(" MARK, "." STOP. */
#define P2 "\x80\x02"

/* Every opcode that imports or calls code, and every other one outside the
 * whitelist, is refused by name at its byte offset (3: after PROTO 2 and an
 * EMPTY_DICT), before its argument is looked at. */
static void test_refused_opcodes(void **state)
{
    (void)state;
    static const struct {
        unsigned char byte;
        const char *name;
    } calls[] = { { 'c', "GLOBAL" },  { 0x93, "STACK_GLOBAL" }, { 'R', "REDUCE" },  { 'b', "BUILD" },
                  { 0x81, "NEWOBJ" }, { 0x92, "NEWOBJ_EX" },    { 'i', "INST" },    { 'o', "OBJ" },
                  { 'P', "PERSID" },  { 'Q', "BINPERSID" },     { 0x82, "EXT1" },   { 0x83, "EXT2" },
                  { 0x84, "EXT4" } };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char in[] = P2 "}?\x00\x00\x00\x00.";
        in[3] = (char)calls[i].byte;
        char want[96];
        snprintf(want, sizeof want, "pickle byte 3, %s (0x%02x): refused: it imports or calls code", calls[i].name,
                 calls[i].byte);
        refused(in, sizeof in - 1, want);
    }
    static const struct {
        unsigned char byte;
        const char *name;
    } others[] = { { '0', "POP" },         { '1', "POP_MARK" },     { '2', "DUP" },          { 'F', "FLOAT" },
                   { 'I', "INT" },         { 'L', "LONG" },         { 0x8b, "LONG4" },       { 'S', "STRING" },
                   { 'T', "BINSTRING" },   { 'U', "SHORT_BINSTRING" }, { 'V', "UNICODE" },   { 'd', "DICT" },
                   { 'l', "LIST" },        { 'g', "GET" },          { 'p', "PUT" },          { 0x8f, "EMPTY_SET" },
                   { 0x90, "ADDITEMS" },   { 0x91, "FROZENSET" },   { 0x96, "BYTEARRAY8" },  { 0x97, "NEXT_BUFFER" },
                   { 0x98, "READONLY_BUFFER" } };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        char in[] = P2 "}?\x00\x00\x00\x00.";
        in[3] = (char)others[i].byte;
        char want[96];
        snprintf(want, sizeof want, "pickle byte 3, %s (0x%02x): not read", others[i].name, others[i].byte);
        refused(in, sizeof in - 1, want);
    }
    /* bytes that are no opcode at all */
    static const unsigned char unknown[] = { 0x00, 0x03, 'A', 'Z', 'z', 0x99, 0xfe, 0xff };
    for (size_t i = 0; i < sizeof unknown; i++) {
        char in[] = P2 "}?.";
        in[3] = (char)unknown[i];
        char want[64];
        snprintf(want, sizeof want, "pickle byte 3, opcode (0x%02x): unknown opcode", unknown[i]);
        refused(in, sizeof in - 1, want);
    }
    /* a GLOBAL deep inside a real-looking structure: still its own offset */
    static const char deep[] = P2 "}(X\x01\x00\x00\x00" "a]cos\nsystem\n";
    refused(deep, sizeof deep - 1, "pickle byte 11, GLOBAL (0x63)");
    refused("\x80\x06}.", 4, "protocol 6 is not read");
}

static void test_memo(void **state)
{
    (void)state;
    struct cf_pvdoc *d;
    /* EMPTY_LIST, BINPUT 0, MARK, EMPTY_DICT, BINPUT 1, BINGET 1, BINGET 1,
     * APPENDS, STOP: [d, d, d], one dict */
    d = read_ok(P2 "]q\x00(}q\x01h\x01h\x01" "e.", 15, 0);
    const struct cf_pv *r = cf_pvdoc_root(d);
    assert_int_equal(cf_pv_len(r), 3);
    assert_ptr_equal(cf_pv_at(r, 0), cf_pv_at(r, 1));
    assert_ptr_equal(cf_pv_at(r, 0), cf_pv_at(r, 2));
    cf_pvdoc_free(d);

    /* A dict changed after it was placed in the list is changed in place:
     * EMPTY_LIST BINPUT 0, EMPTY_DICT BINPUT 1, APPEND (list = [d]),
     * BINGET 1, BININT1 7, BININT1 8, SETITEM (d[7] = 8), APPEND, STOP */
    d = read_ok(P2 "]q\x00}q\x01" "ah\x01K\x07K\x08s" "a.", 18, 0);
    r = cf_pvdoc_root(d);
    assert_int_equal(cf_pv_len(r), 2);
    assert_ptr_equal(cf_pv_at(r, 0), cf_pv_at(r, 1));
    assert_int_equal(cf_pv_len(cf_pv_at(r, 0)), 1);
    cf_pvdoc_free(d);

    /* A list holding itself (l = []; l.append(l)): a cycle, read as one */
    d = read_ok(P2 "]q\x00h\x00" "a.", 9, 0);
    r = cf_pvdoc_root(d);
    assert_ptr_equal(cf_pv_at(r, 0), r);
    cf_pvdoc_free(d);

    /* MEMOIZE stores at the memo's size: "a" as 0, "b" as 1; BINGET 1 is "b" */
    d = read_ok(P2 "(\x8c\x01" "a\x94\x8c\x01" "b\x94h\x01t.", 16, 0);
    r = cf_pvdoc_root(d);
    assert_int_equal(r->kind, CF_PV_TUPLE);
    assert_string_equal(cf_pv_str(cf_pv_at(r, 2)), "b");
    cf_pvdoc_free(d);

    /* LONG_BINPUT at 4,294,967,294 costs one slot; LONG_BINGET finds it:
     * EMPTY_LIST, LONG_BINPUT, MARK, LONG_BINGET, APPENDS: l = [l] */
    d = read_ok(P2 "]r\xfe\xff\xff\xff(j\xfe\xff\xff\xff" "e.", 16, 0);
    assert_ptr_equal(cf_pv_at(cf_pvdoc_root(d), 0), cf_pvdoc_root(d));
    cf_pvdoc_free(d);

    refused(P2 "h\x00.", 5, "pickle byte 2, BINGET (0x68): memo index 0 was never stored");
    refused(P2 "]q\x00h\x05.", 7, "byte 5, BINGET (0x68): memo index 5 was never stored");
    refused(P2 "]q\x00j\xff\xff\xff\x7f.", 10, "memo index 2147483647 was never stored");
    refused(P2 "q\x00.", 5, "byte 2, BINPUT (0x71): needs 1 value");
}

/* The bytes before (after the opcode) and the message's offset. */
static void test_malformed(void **state)
{
    (void)state;
    refused("", 0, "ends at byte 0 without STOP");
    refused(P2 "}", 3, "ends at byte 3 without STOP");
    refused(P2 "}}.", 5, "byte 4, STOP (0x2e): 2 values on the stack, one expected");
    refused(P2 ".", 3, "byte 2, STOP (0x2e): 0 values on the stack");
    refused(P2 "(}.", 5, "byte 4, STOP (0x2e): 1 MARK still open");
    refused(P2 "}e.", 5, "byte 3, APPENDS (0x65): no MARK is open");
    refused(P2 "}(K\x01" "e.", 8, "byte 6, APPENDS (0x65): the value below is not a list");
    refused(P2 "](K\x01K\x02u.", 9, "byte 8, SETITEMS (0x75): the value below is not a dict");
    refused(P2 "}(K\x01" "u.", 8, "byte 6, SETITEMS (0x75): an odd number of values (1)");
    refused(P2 "(K\x01" "e.", 7, "byte 5, APPENDS (0x65): no list below the values");
    refused(P2 "a.", 4, "byte 2, APPEND (0x61): needs 2 values");
    /* APPEND may not reach below a MARK: the list is fenced off */
    refused(P2 "](K\x01" "a.", 8, "byte 6, APPEND (0x61): needs 2 values on the stack above the last MARK, finds 1");
    refused(P2 "}]K\x01s.", 8, "byte 6, SETITEM (0x73): a list as a dict key");
    refused(P2 "\x85.", 4, "byte 2, TUPLE1 (0x85): needs 1 value");
    refused(P2 "t.", 4, "byte 2, TUPLE (0x74): no MARK is open");
    /* lengths past the end */
    refused(P2 "X\xff\xff\xff\xff" "abc.", 11, "byte 2, BINUNICODE (0x58): a string of 4294967295 bytes runs past the end (4 left)");
    refused(P2 "\x8d\xff\xff\xff\xff\xff\xff\xff\x7f" "ab.", 14, "BINUNICODE8 (0x8d): a string of 9223372036854775807 bytes");
    refused(P2 "\x8e\x00\x00\x00\x00\x00\x00\x00\x80.", 12, "BINBYTES8 (0x8e): a bytes of 9223372036854775808 bytes");
    refused(P2 "\x8c\x05" "ab", 6, "SHORT_BINUNICODE (0x8c): a string of 5 bytes runs past the end (2 left)");
    refused(P2 "X\x01\x00", 5, "BINUNICODE (0x58): the length of 4 bytes runs past the end (2 left)");
    refused("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff}.", 13, "byte 2, FRAME (0x95): a frame of 18446744073709551615 bytes runs past the end");
    refused(P2 "J\x01\x02", 5, "BININT (0x4a): the integer of 4 bytes runs past the end");
    refused(P2 "G\x00", 4, "BINFLOAT (0x47): the float of 8 bytes runs past the end");
    refused(P2 "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.", 14, "a 9-byte integer beyond 64 bits");
    refused(P2 "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00.", 14, "a 9-byte integer beyond 64 bits");
    refused(P2 "\x8a\x20\x00", 5, "LONG1 (0x8a): the number of 32 bytes runs past the end");

    /* strings must be UTF-8, as Python requires (bytes need not be): a
     * truncated character, an overlong '/', a surrogate, past U+10FFFF */
    refused(P2 "\x8c\x02" "a\xc3.", 7, "byte 2, SHORT_BINUNICODE (0x8c): the string's byte 1 (at byte 5) is not UTF-8");
    refused(P2 "\x8c\x02\xc0\xaf.", 7, "the string's byte 0 (at byte 4) is not UTF-8");
    refused(P2 "\x8c\x03\xed\xa0\x80.", 8, "the string's byte 0 (at byte 4) is not UTF-8");
    refused(P2 "\x8c\x04\xf4\x90\x80\x80.", 9, "is not UTF-8");
    refused(P2 "\x8c\x0a" "abcdefgh\xe4\xb8.", 15, "the string's byte 8 (at byte 12) is not UTF-8");
    expect_refused_with("[\"ok\", \"a\xff\"]", 12, NULL, 1, "JSON byte 9: a string that is not UTF-8");
    struct cf_pvdoc *u8 = read_ok(P2 "\x8c\x04\xf0\x9f\x98\x80.", 9, 0);
    assert_string_equal(cf_pv_str(cf_pvdoc_root(u8)), "\xf0\x9f\x98\x80");
    cf_pvdoc_free(u8);
    u8 = read_ok(P2 "C\x02\xff\xfe.", 7, 0);
    assert_int_equal(cf_pvdoc_root(u8)->kind, CF_PV_BYTES);
    assert_int_equal(cf_pvdoc_root(u8)->u.str.len, 2);
    cf_pvdoc_free(u8);

    /* the number edges LONG1 does read: 9 bytes that only repeat the sign,
     * 2^63-1 in 8 bytes, -1 in 1 byte, 0 in none */
    static const struct {
        const char *in;
        size_t len;
        int64_t want;
    } longs[] = {
        { P2 "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff.", 14, -1 },
        { P2 "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\xff.", 14, INT64_MIN },
        { P2 "\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.", 13, INT64_MAX },
        { P2 "\x8a\x01\xff.", 6, -1 },
        { P2 "\x8a\x00.", 5, 0 },
        { P2 "J\xfe\xff\xff\xff.", 8, -2 },
        { P2 "M\xff\xff.", 6, 65535 },
    };
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
        struct cf_pvdoc *d = read_ok(longs[i].in, longs[i].len, 0);
        int64_t v = 0;
        assert_int_equal(cf_pv_int(cf_pvdoc_root(d), &v), 0);
        assert_true(v == longs[i].want);
        cf_pvdoc_free(d);
    }
    /* a repeated key keeps its first place and its last value; True, 1 and
     * 1.0 are one key, as in Python: {1: 'x', 2: 'y', True: 'z'} -> {1: 'z', 2: 'y'} */
    struct cf_pvdoc *d = read_ok(P2 "}(K\x01X\x01\x00\x00\x00xK\x02X\x01\x00\x00\x00y\x88X\x01\x00\x00\x00zu.", 32, 0);
    const struct cf_pv *r = cf_pvdoc_root(d);
    assert_int_equal(cf_pv_len(r), 2);
    assert_string_equal(cf_pv_str(r->u.dict.v[0]), "z");
    cf_pvdoc_free(d);
    /* trailing bytes after STOP are left alone, as Python does */
    d = read_ok(P2 "N.garbage", 11, 0);
    cf_pvdoc_free(d);
}

/* Deep nesting, a billion MARKs, item and memory limits: refused quickly at
 * the limit, never a crash or unbounded memory. */
static void test_bounds(void **state)
{
    (void)state;
    size_t n = 1000000;
    struct strbuf sb = STRBUF_INIT;
    /* a million MARKs */
    cf_sb_add(&sb, P2, 2);
    for (size_t i = 0; i < n; i++)
        cf_sb_addc(&sb, '(');
    expect_refused_with(sb.buf, sb.len, NULL, 0, "pickle byte 66, MARK (0x28): more than 64 MARKs open");
    /* a million EMPTY_LISTs, then a million APPENDs: each nests one deeper */
    cf_sb_reset(&sb);
    cf_sb_add(&sb, P2, 2);
    for (size_t i = 0; i < n; i++)
        cf_sb_addc(&sb, ']');
    for (size_t i = 0; i < n; i++)
        cf_sb_addc(&sb, 'a');
    cf_sb_addc(&sb, '.');
    char want[96];
    snprintf(want, sizeof want, "pickle byte %zu, APPEND (0x61): values nested deeper than 64", 1 + n + 64);
    expect_refused_with(sb.buf, sb.len, NULL, 0, want);
    /* None, then a million TUPLE1: one value on the stack, nested ever deeper */
    cf_sb_reset(&sb);
    cf_sb_add(&sb, P2 "N", 3);
    for (size_t i = 0; i < n; i++)
        cf_sb_addc(&sb, (char)0x85);
    expect_refused_with(sb.buf, sb.len, NULL, 0, "pickle byte 67, TUPLE1 (0x85): values nested deeper than 64");
    /* the same in JSON: a million '[' */
    cf_sb_reset(&sb);
    for (size_t i = 0; i < n; i++)
        cf_sb_addc(&sb, '[');
    expect_refused_with(sb.buf, sb.len, NULL, 1, "JSON byte 64: values nested deeper than 64");

    /* the limits a caller sets: input size, values, memory, depth */
    struct cf_pickle_limits lim = { 0 };
    lim.max_bytes = 4;
    struct cf_pvdoc *d = NULL;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_pickle_read(P2 "N.", 4, &lim, &d, &err), 0);
    cf_pvdoc_free(d);
    expect_refused_with(P2 "NN.", 5, &lim, 0, "pickle of 5 bytes is over the limit of 4");
    expect_refused_with("[1, 2]", 6, &lim, 1, "JSON of 6 bytes is over the limit of 4");
    lim = (struct cf_pickle_limits){ 0 };
    lim.max_memory = 1; /* less than the document itself */
    expect_refused_with(P2 "N.", 4, &lim, 0, "over the memory limit of 1 bytes");
    expect_refused_with("[]", 2, &lim, 1, "over the memory limit of 1 bytes");
    lim = (struct cf_pickle_limits){ 0 };
    lim.max_items = 3;
    expect_refused_with(P2 "(NNNNt.", 9, &lim, 0, "byte 6, NONE (0x4e): more than 3 values");
    expect_refused_with("[1,2,3]", 7, &lim, 1, "more than 3 values");
    lim = (struct cf_pickle_limits){ 0 };
    lim.max_depth = 2;
    expect_refused_with(P2 "]]]aa.", 8, &lim, 0, "byte 6, APPEND (0x61): values nested deeper than 2");
    expect_refused_with("[[[]]]", 6, &lim, 1, "JSON byte 2: values nested deeper than 2");
    /* 20,000 distinct strings of 100 bytes each in a 1 MB budget */
    cf_sb_reset(&sb);
    cf_sb_add(&sb, P2 "(", 3);
    for (int i = 0; i < 20000; i++) {
        char s[101];
        memset(s, 'a' + i % 26, 100);
        cf_sb_add(&sb, "\x8c\x64", 2);
        cf_sb_add(&sb, s, 100);
    }
    cf_sb_add(&sb, "t.", 2);
    lim = (struct cf_pickle_limits){ 0 };
    lim.max_memory = 1 << 20;
    expect_refused_with(sb.buf, sb.len, &lim, 0, "over the memory limit of 1048576 bytes");
    assert_int_equal(cf_pickle_read(sb.buf, sb.len, NULL, &d, &err), 0); /* the default budget takes it */
    assert_int_equal(cf_pv_len(cf_pvdoc_root(d)), 20000);
    cf_pvdoc_free(d);
    cf_sb_release(&sb);
}

/* Billion laughs: each level a list of ten references to the level below,
 * 60 levels (10^60 strings if copied). Shared, the graph is 61 values. */
static void test_memo_fan_out(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    /* As Python writes nested lists, outermost first: per level EMPTY_LIST,
     * MEMOIZE (level 60 as 0, ..., level 1 as 59), MARK; then SHORT_BINUNICODE
     * "lol", MEMOIZE (as 60); then per level, innermost first, nine BINGETs of
     * the level below (the first item was written inline) and APPENDS. */
    cf_sb_add(&sb, P2, 2);
    for (int level = 60; level >= 1; level--)
        cf_sb_add(&sb, "]\x94(", 3);
    cf_sb_add(&sb, "\x8c\x03lol\x94", 6);
    for (int level = 1; level <= 60; level++) {
        for (int i = 0; i < 9; i++) {
            cf_sb_addc(&sb, 'h');
            cf_sb_addc(&sb, (char)(61 - level));
        }
        cf_sb_addc(&sb, 'e');
    }
    cf_sb_addc(&sb, '.');
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct cf_pickle_limits lim = { 0 };
    lim.max_memory = 256 << 10; /* a quarter megabyte is plenty */
    struct cf_pvdoc *d = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_pickle_read(sb.buf, sb.len, &lim, &d, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 < 1.0);
    const struct cf_pv *v = cf_pvdoc_root(d);
    for (int level = 60; level >= 1; level--) {
        assert_int_equal(cf_pv_len(v), 10);
        for (size_t i = 1; i < 10; i++)
            assert_ptr_equal(cf_pv_at(v, i), cf_pv_at(v, 0));
        v = cf_pv_at(v, 0);
    }
    assert_string_equal(cf_pv_str(v), "lol");
    cf_pvdoc_free(d);
    cf_sb_release(&sb);
}

/* ---- JSON ---- */

static void test_json_values(void **state)
{
    (void)state;
    const char *text = "\xef\xbb\xbf { \"a\" : [ 1 , -9223372036854775808, 9223372036854775807, 9223372036854775808,"
                       " 1.0, 2e3, -0, 1796671299939612423, true, false, null, NaN, -Infinity ],"
                       " \"s\": \"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u4e2d\\ud83d\\ude00\\ud800x\","
                       " \"a\": {}, \"b\": [], \"a\": \"last\" }\n";
    struct cf_pvdoc *d = read_ok(text, strlen(text), 1);
    const struct cf_pv *r = cf_pvdoc_root(d);
    assert_int_equal(cf_pv_len(r), 3); /* "a" three times: one key, first place, last value */
    assert_string_equal(cf_pv_str(r->u.dict.k[0]), "a");
    assert_string_equal(cf_pv_str(r->u.dict.v[0]), "last");
    assert_string_equal(cf_pv_str(cf_pv_get(r, "s")), "q\"\\/\b\f\n\r\t\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\xef\xbf\xbdx");
    cf_pvdoc_free(d);

    const char *arr = "[1, -9223372036854775808, 9223372036854775807, 9223372036854775808, 1.0, 2e3, -0,"
                      " 1796671299939612423, true, false, null, NaN, -Infinity]";
    d = read_ok(arr, strlen(arr), 1);
    const struct cf_pv *a = cf_pvdoc_root(d);
    static const enum cf_pv_kind kinds[] = { CF_PV_INT,   CF_PV_INT,  CF_PV_INT,  CF_PV_FLOAT, CF_PV_FLOAT,
                                             CF_PV_FLOAT, CF_PV_INT,  CF_PV_INT,  CF_PV_BOOL,  CF_PV_BOOL,
                                             CF_PV_NONE,  CF_PV_FLOAT, CF_PV_FLOAT };
    assert_int_equal(cf_pv_len(a), 13);
    for (size_t i = 0; i < 13; i++)
        assert_int_equal(cf_pv_at(a, i)->kind, kinds[i]);
    assert_true(cf_pv_at(a, 1)->u.i == INT64_MIN);
    assert_true(cf_pv_at(a, 2)->u.i == INT64_MAX);
    assert_true(cf_pv_at(a, 7)->u.i == 1796671299939612423LL); /* not rounded through a double */
    assert_true(cf_pv_at(a, 5)->u.f == 2000.0);
    assert_true(isnan(cf_pv_at(a, 11)->u.f));
    cf_pvdoc_free(d);
    /* empty containers alone: nothing on the value stack before them */
    d = read_ok("[]", 2, 1);
    assert_int_equal(cf_pvdoc_root(d)->kind, CF_PV_LIST);
    cf_pvdoc_free(d);
    d = read_ok("{}", 2, 1);
    assert_int_equal(cf_pvdoc_root(d)->kind, CF_PV_DICT);
    cf_pvdoc_free(d);
    d = read_ok(" \"alone\" ", 9, 1);
    assert_string_equal(cf_pv_str(cf_pvdoc_root(d)), "alone");
    cf_pvdoc_free(d);

    static const struct {
        const char *in, *want;
    } bad[] = {
        { "", "JSON byte 0: the text ends where a value should be" },
        { "[1,]", "JSON byte 3: an unexpected character ']'" },
        { "{\"a\":1,}", "JSON byte 7: an object key that is not a string" },
        { "{\"a\" 1}", "JSON byte 5: no ':' after an object key" },
        { "[1 2]", "JSON byte 3: expected ',' or ']'" },
        { "[1", "JSON byte 2: the text ends inside a value" },
        { "\"abc", "JSON byte 0: a string that never ends" },
        { "\"a\x01\"", "JSON byte 2: a control character (0x01) inside a string" },
        { "\"\\x\"", "JSON byte 1: a bad escape" },
        { "\"\\u12g4\"", "JSON byte 1: a bad escape" },
        { "01", "JSON byte 0: a malformed number" },
        { "-", "JSON byte 0: a malformed number" },
        { "1.", "JSON byte 2: a number with no digits after its point" },
        { "1e+", "JSON byte 3: a number with no digits in its exponent" },
        { "[1] x", "JSON byte 4: text after the value" },
        { "tru", "JSON byte 0: an unexpected character 't'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_refused_with(bad[i].in, strlen(bad[i].in), NULL, 1, bad[i].want);
    /* a number too long to copy */
    struct strbuf sb = STRBUF_INIT;
    cf_sb_adds(&sb, "1.");
    for (int i = 0; i < 2000; i++)
        cf_sb_addc(&sb, '5');
    expect_refused_with(sb.buf, sb.len, NULL, 1, "a number of 2002 characters");
    cf_sb_release(&sb);
}

static int teardown(void **state)
{
    (void)state;
    free(fr_dir);
    free(values_dir);
    ts_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_opcodes),   cmocka_unit_test(test_memo),
        cmocka_unit_test(test_malformed),         cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_memo_fan_out),      cmocka_unit_test(test_json_values),
        cmocka_unit_test(test_python_values),     cmocka_unit_test(test_torch_dump_values),
        cmocka_unit_test(test_torch_dump_repickled), cmocka_unit_test(test_torch_dump_json),
        cmocka_unit_test(test_truncated_everywhere),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
