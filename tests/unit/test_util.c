/* strbuf, strvec, spawn and fs: the ground everything else stands on. */
#include "testsupport.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <stdint.h>
#include <signal.h>
#include <dirent.h>
#include <fcntl.h>

#include "cclforge/atomic_file.h"
#include "cclforge/depcache.h"
#include "cclforge/envp.h"
#include "cclforge/fnv1a.h"
#include "cclforge/fs.h"
#include "cclforge/host.h"
#include "cclforge/json.h"
#include "cclforge/json_fields.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"
#include "cclforge/trust.h"

static void test_strbuf_grows_and_formats(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    assert_string_equal(cf_sb_str(&sb), "");
    for (int i = 0; i < 1000; i++)
        cf_sb_addf(&sb, "%d,", i);
    assert_true(sb.len > 3000);
    assert_memory_equal(sb.buf, "0,1,2,", 6);
    cf_sb_adds(&sb, "  \n");
    cf_sb_rtrim(&sb);
    assert_int_equal(sb.buf[sb.len - 1], ',');
    char *s = cf_sb_detach(&sb);
    assert_int_equal(sb.len, 0);
    free(s);
}

/* cf_self_exe: the running test, by the name realpath gives it */
static void test_self_exe(void **state)
{
    char *exe = cf_self_exe();
    char *real = cf_realpath("/proc/self/exe");
    assert_non_null(exe);
    assert_string_equal(exe, real);
    free(exe);
    free(real);
}

/* Writes one hand-made dependency cache entry (the on-disk form of
 * src/util/dep_cache.c) in place of the only entry under dir. */
static void rewrite_entry(const char *dir, const char *text)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char *path = NULL;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            assert_null(path); /* one entry */
            path = cf_path_join(dir, e->d_name);
        }
    closedir(d);
    assert_non_null(path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
}

/* The stored form is read without scanf: every number bounded, a time
 * before 1970 read as negative, and anything but the exact form a miss. */
/* The published FNV-1a test vectors; the other values are an independent
 * oracle's, Python's:
 *   def fnv(b, h=14695981039346656037):
 *       for c in b: h = ((h ^ c) * 0x100000001b3) % 2**64
 *       return h */
static void test_fnv1a_vectors(void **state)
{
    (void)state;
    assert_true(cf_fnv1a64("", 0) == 0xcbf29ce484222325ull);
    assert_true(cf_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(cf_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
    assert_true(cf_fnv1a64_more(cf_fnv1a64_more(CF_FNV1A64_BASIS, "foo", 3), "bar", 3) == 0x85944171f73967e8ull);
    assert_true(cf_fnv1a32_str("") == 0x811c9dc5u);
    assert_true(cf_fnv1a32_str("a") == 0xe40c292cu);
    assert_true(cf_fnv1a32_str("foobar") == 0xbf9cf968u);
    assert_true(cf_fnv1a64("cclforge", 8) == 0x2ce3324538a8dc88ull); /* fnv(b"cclforge") */
    /* a number's bytes least significant first, whatever the host's byte order */
    const unsigned char le[16] = { 0x01, 0x08, 0, 0, 0, 0, 0, 0, 0x87, 0xd6, 0x12, 0, 0, 0, 0, 0 };
    uint64_t h = cf_fnv1a64_u64(cf_fnv1a64_u64(CF_FNV1A64_BASIS, 2049), 1234567);
    assert_true(h == cf_fnv1a64_more(CF_FNV1A64_BASIS, le, sizeof le));
    /* fnv((2049).to_bytes(8, "little") + (1234567).to_bytes(8, "little")) */
    assert_true(h == 0xaf9307bb4b5079dfull);
}

static void test_depcache_entry_parse(void **state)
{
    char *root = ts_tmpdir();
    char *home = cf_path_join(root, "home");
    char *dep = ts_write(root, "dep", "x");
    struct timespec old[2] = { { -5, 250 }, { -5, 250 } }; /* 1969 */
    assert_int_equal(utimensat(AT_FDCWD, dep, old, 0), 0);
    struct stat st;
    assert_int_equal(stat(dep, &st), 0);
    setenv("CCLFORGE_HOME", home, 1);
    const char *absent[] = { "?/nonexistent/cclforge-test", NULL };
    cf_depcache_put("t", "k", 1, "answer", 6, absent);
    struct strbuf v = STRBUF_INIT;
    assert_int_equal(cf_depcache_get("t", "k", 1, &v), 1);
    assert_string_equal(v.buf, "answer");
    assert_int_equal(cf_depcache_get("t", "j", 1, &v), 0); /* another key */
    char *dir = cf_path_join(home, "t-v2");
    char *entry = cf_path_join(dir, "af63e64c8601fd8a"); /* the key's name: fnv(b"k") */
    assert_true(cf_is_file(entry));
    free(entry);
    char ident[160];
    snprintf(ident, sizeof ident, "%llu %llu %llu %lld %lld", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
             (long long)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
             (long long)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec);
    assert_true(st.st_mtim.tv_sec < 0);
    struct {
        const char *dep_line; /* the identity as stored */
        const char *tail;     /* after the last dependency */
        int hit;
    } cases[] = {
        { ident, "", 1 },
        { "1 2 3 4 5", "", 0 },                 /* another file */
        { ident, "x", 0 },                      /* trailing bytes */
        { "0 0 0 0 0", "", 0 },                 /* recorded absent, present now */
        { "99999999999999999999 0 0 0 0", "", 0 }, /* over 64 bits */
        { "+1 0 0 0 0", "", 0 },
        { "1  2 3 4 5", "", 0 },
        { "1 2 3 4", "", 0 },
        { "1 2 3 4 -", "", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct strbuf e = STRBUF_INIT;
        cf_sb_addf(&e, "CFDEP1\n1\nk\n6\nanswer\n1\n%zu\n%s\n%s\n%s", strlen(dep), dep, cases[i].dep_line,
                   cases[i].tail);
        rewrite_entry(dir, e.buf);
        cf_sb_reset(&v);
        assert_int_equal(cf_depcache_get("t", "k", 1, &v), cases[i].hit);
        if (cases[i].hit)
            assert_string_equal(v.buf, "answer");
        cf_sb_release(&e);
    }
    /* a length past the end, a count past the bound */
    rewrite_entry(dir, "CFDEP1\n1\nk\n600\nanswer\n0\n");
    assert_int_equal(cf_depcache_get("t", "k", 1, &v), 0);
    rewrite_entry(dir, "CFDEP1\n1\nk\n6\nanswer\n99999\n");
    assert_int_equal(cf_depcache_get("t", "k", 1, &v), 0);
    rewrite_entry(dir, "CFDEP1\n1\nk\n6\nanswer\n0\n");
    cf_sb_reset(&v);
    assert_int_equal(cf_depcache_get("t", "k", 1, &v), 1);
    unsetenv("CCLFORGE_HOME");
    cf_sb_release(&v);
    free(dir);
    free(home);
    ts_cleanup();
}

static void test_strvec_split(void **state)
{
    struct strvec sv = STRVEC_INIT;
    cf_strvec_split(&sv, "a::b:c", ":", 0);
    assert_int_equal(sv.n, 3);
    assert_string_equal(sv.v[2], "c");
    assert_null(sv.v[3]);
    cf_strvec_clear(&sv);
    cf_strvec_split(&sv, "a::b", ":", 1);
    assert_int_equal(sv.n, 3);
    assert_string_equal(sv.v[1], "");
    cf_strvec_clear(&sv);
}

/* set's keys replace the inherited ones, keys that only share a prefix stay */
static void test_envp_with_overrides(void **state)
{
    char *envp[] = { "PATH=/bin", "CCLFORGE_RANK=9", "CCLFORGE_RANKS=x", "HOME=/h", NULL };
    const char *set[] = { "CCLFORGE_RANK=1", "NEW=v", NULL };
    struct strvec out = STRVEC_INIT;
    cf_envp_with(envp, set, &out);
    assert_int_equal(out.n, 5);
    assert_string_equal(out.v[0], "PATH=/bin");
    assert_string_equal(out.v[1], "CCLFORGE_RANKS=x");
    assert_string_equal(out.v[2], "HOME=/h");
    assert_string_equal(out.v[3], "CCLFORGE_RANK=1");
    assert_string_equal(out.v[4], "NEW=v");
    assert_string_equal(cf_envp_get(out.v, "CCLFORGE_RANK"), "1");
    cf_strvec_clear(&out);
    cf_envp_with(NULL, set, &out);
    assert_int_equal(out.n, 2);
    cf_strvec_clear(&out);
}

static void test_spawn_captures_and_reports(void **state)
{
    const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = o.capture_stderr = 1;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    assert_string_equal(cf_sb_str(&r.out), "out\n");
    assert_string_equal(cf_sb_str(&r.err), "err\n");
    cf_spawn_result_release(&r);
}

static void test_spawn_missing_program(void **state)
{
    const char *argv[] = { "cclforge-no-such-program", NULL };
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_spawn_run(argv, NULL, &r, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "cclforge-no-such-program"));
    cf_error_clear(&err);
}

static int open_fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* A pipe() that fails half-way (too many open files) closes the log and the
 * pipes it had already opened. Run in a child: it lowers its own fd limit. */
static void test_spawn_setup_failure_closes_fds(void **state)
{
    char *dir = ts_tmpdir();
    char *log = cf_path_join(dir, "spawn.log");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int before = open_fd_count(); /* includes the directory's own descriptor */
        struct rlimit rl;
        getrlimit(RLIMIT_NOFILE, &rl);
        /* room for exactly three more descriptors: the log and the stdout
         * pipe, not the stderr pipe (new descriptors take the lowest free numbers) */
        int limit = 0, free_below = 0;
        while (free_below < 3 && limit < 4096)
            free_below += fcntl(limit++, F_GETFD) < 0;
        rl.rlim_cur = (rlim_t)limit;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            _exit(3);
        const char *argv[] = { "true", NULL };
        struct cf_spawn_opts o = { 0 };
        o.capture_stdout = o.capture_stderr = 1;
        o.log_path = log;
        struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
        cf_error err = CF_ERROR_INIT;
        int rc = cf_spawn_run(argv, &o, &r, &err);
        int failed_in_pipe = rc < 0 && strstr(cf_error_message(&err), "pipe") != NULL;
        int after = open_fd_count();
        _exit(!failed_in_pipe ? 4 : after != before ? 5 : 0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 5)
        fail_msg("cf_spawn_run left descriptors open after pipe() failed");
    assert_int_equal(WEXITSTATUS(status), 0);
    free(log);
    ts_cleanup();
}

/* The typed getters: 1 with the value, 0 for absent or null, -1 for another type. */
static void test_json_typed_getters(void **state)
{
    cJSON *o = cJSON_Parse("{\"s\":\"x\",\"n\":4.5,\"b\":true,\"z\":null,\"a\":[\"p\",\"q\"],"
                           "\"mixed\":[\"p\",3]}");
    assert_non_null(o);
    const char *s = "unset";
    double d = -1;
    int b = -1;
    assert_int_equal(cf_json_get_str(o, "s", &s), 1);
    assert_string_equal(s, "x");
    assert_int_equal(cf_json_get_str(o, "missing", &s), 0);
    assert_int_equal(cf_json_get_str(o, "z", &s), 0);
    assert_int_equal(cf_json_get_str(o, "n", &s), -1);
    assert_string_equal(s, "x"); /* untouched on 0 and -1 */
    assert_int_equal(cf_json_get_num(o, "n", &d), 1);
    assert_true(d == 4.5);
    assert_int_equal(cf_json_get_num(o, "s", &d), -1);
    assert_int_equal(cf_json_get_bool(o, "b", &b), 1);
    assert_int_equal(b, 1);
    assert_int_equal(cf_json_get_bool(o, "n", &b), -1);
    struct strvec sv = STRVEC_INIT;
    assert_int_equal(cf_json_get_strvec(o, "a", &sv), 1);
    assert_int_equal(sv.n, 2);
    assert_int_equal(cf_json_get_strvec(o, "mixed", &sv), -1);
    assert_int_equal(sv.n, 2); /* nothing appended from a mixed array */
    assert_int_equal(cf_json_get_strvec(o, "s", &sv), -1);
    assert_int_equal(cf_json_get_strvec(o, "missing", &sv), 0);
    cf_strvec_clear(&sv);
    assert_null(cf_json_str(o, "n"));
    assert_true(cf_json_num(o, "s", 7) == 7);
    assert_null(cf_json_str(NULL, "s"));
    assert_int_equal(cf_json_get_str(cJSON_GetObjectItemCaseSensitive(o, "a"), "s", &s), 0); /* an array is no object */
    cJSON_Delete(o);
}

/* A table writes what the hand-written cJSON_Add* calls wrote: an int and a size
 * print as cJSON_AddNumberToObject prints them, a NULL string is null, left out
 * (OMIT_NULL) or "" (EMPTY_IF_NULL), and cf_jf_array_to_json is an ARRAY field's array. */
struct jf_row {
    int n;
    size_t size;
    char *name, *gone, *empty;
};
static const struct cf_jf jf_row_fields[] = {
    CF_JF(struct jf_row, n, CF_JF_INT), CF_JF(struct jf_row, size, CF_JF_SIZE), CF_JF(struct jf_row, name, CF_JF_STR),
    CF_JF_AS(struct jf_row, "gone", gone, CF_JF_STR, .flags = CF_JF_OMIT_NULL),
    CF_JF_AS(struct jf_row, "empty", empty, CF_JF_STR, .flags = CF_JF_EMPTY_IF_NULL),
};
static const struct cf_jf_table jf_row_table = CF_JF_TABLE(struct jf_row, jf_row_fields);

static void test_json_fields_write_as_by_hand(void **state)
{
    struct jf_row rows[] = { { -7, 123456789012, "a", "g", "e" }, { 2147483647, 0, NULL, NULL, NULL } };
    cJSON *a = cf_jf_array_to_json(&jf_row_table, rows, 2), *hand = cJSON_CreateArray();
    for (size_t i = 0; i < 2; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "n", rows[i].n);
        cJSON_AddNumberToObject(o, "size", (double)rows[i].size);
        cf_json_put_str(o, "name", rows[i].name);
        cJSON_AddStringToObject(o, "gone", rows[i].gone); /* NULL: not added */
        cJSON_AddStringToObject(o, "empty", rows[i].empty ? rows[i].empty : "");
        cJSON_AddItemToArray(hand, o);
    }
    char *got = cJSON_Print(a), *want = cJSON_Print(hand);
    assert_string_equal(got, want);
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, 1), "gone"));
    free(got);
    free(want);
    cJSON_Delete(a);
    cJSON_Delete(hand);
    a = cf_jf_array_to_json(&jf_row_table, NULL, 0);
    got = cJSON_PrintUnformatted(a);
    assert_string_equal(got, "[]");
    free(got);
    cJSON_Delete(a);
}

static void test_spawn_timeout_kills_group(void **state)
{
    /* the background child would say "late" into the captured stdout were it left alive */
    const char *argv[] = { "sh", "-c", "(sleep 2; echo late) & sleep 30", NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.timeout_s = 0.3;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    assert_true(r.timed_out);
    assert_null(strstr(cf_sb_str(&r.out), "late"));
    cf_spawn_result_release(&r);
}

static void count_line(void *ctx, const char *line)
{
    struct strbuf *seen = ctx;
    cf_sb_adds(seen, line);
    cf_sb_addc(seen, '|');
}

static void test_spawn_line_callback(void **state)
{
    const char *argv[] = { "printf", "a\nb\r\nc", NULL };
    struct strbuf seen = STRBUF_INIT;
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.on_line = count_line;
    o.line_ctx = &seen;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    assert_string_equal(cf_sb_str(&r.out), "a\nb\r\nc");
    assert_string_equal(cf_sb_str(&seen), "a|b|c|");
    cf_spawn_result_release(&r);
    cf_sb_release(&seen);
}

static void test_path_normalize(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
        int escaped;
    } cases[] = {
        { "/a/./b//../c/", "/a/c", 0 }, { "/", "/", 0 }, { "/a/..", "/", 0 },
        { "/a/../..", "/", 1 },         { "/../x", "/x", 1 }, { "//a///b", "/a/b", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int escaped = -1;
        char *got = cf_path_normalize(cases[i].in, &escaped);
        assert_string_equal(got, cases[i].out);
        assert_int_equal(escaped, cases[i].escaped);
        free(got);
    }
}

/* A spawned program is in its own process group (a terminal's Ctrl-C does not
 * reach it), so it must die with the process that spawned it. */
static void test_spawn_child_dies_with_parent(void **state)
{
    char *d = ts_tmpdir();
    char *pidfile = cf_path_join(d, "pid");
    char *script = cf_asprintf("echo $$ > %s; exec sleep 30", pidfile);
    pid_t middle = fork();
    assert_true(middle >= 0);
    if (middle == 0) {
        const char *argv[] = { "sh", "-c", script, NULL };
        struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
        cf_spawn_run(argv, NULL, &r, NULL);
        _exit(0);
    }
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < 500 && (cf_sb_reset(&sb), cf_read_file(pidfile, 64, &sb, NULL) != 0 || sb.len < 2); i++)
        usleep(10000);
    long child = strtol(cf_sb_str(&sb), NULL, 10);
    assert_true(child > 0);
    kill(middle, SIGKILL);
    waitpid(middle, NULL, 0);
    /* Gone, or a zombie waiting for whoever adopted it: either way not sleeping on. */
    int alive = 1;
    for (int i = 0; i < 300 && alive; i++) {
        char *stat_path = cf_asprintf("/proc/%ld/stat", child);
        struct strbuf st = STRBUF_INIT;
        alive = cf_read_file(stat_path, 4096, &st, NULL) == 0 && !strstr(cf_sb_str(&st), ") Z ");
        cf_sb_release(&st);
        free(stat_path);
        if (alive)
            usleep(10000);
    }
    if (alive)
        kill((pid_t)child, SIGKILL);
    assert_false(alive);
    cf_sb_release(&sb);
    free(pidfile);
    free(script);
    ts_cleanup();
}

/* One file of `size` bytes aged `age` seconds, in dir. */
static void aged_file(const char *dir, const char *name, size_t size, int age)
{
    char *text = cf_xcalloc(1, size + 1);
    memset(text, 'x', size);
    char *path = ts_write(dir, name, text);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age;
    t[1] = t[0];
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
    free(text);
}

/* A cache directory is bounded by count and by bytes, the oldest files go
 * first, files two levels down count with depth 2, and dot files (stamps,
 * temporaries being written) stay. */
static void test_cache_prune_oldest_first(void **state)
{
    (void)state;
    char *d = ts_tmpdir();
    aged_file(d, "old", 10, 300);
    aged_file(d, "mid", 10, 200);
    aged_file(d, "new", 10, 100);
    aged_file(d, ".stamp", 10, 900);
    assert_int_equal(cf_cache_prune(d, 1, 2, UINT64_MAX), 1);
    char *old = cf_path_join(d, "old"), *mid = cf_path_join(d, "mid"), *stamp = cf_path_join(d, ".stamp");
    assert_false(cf_is_file(old));
    assert_true(cf_is_file(mid));
    assert_true(cf_is_file(stamp));
    assert_int_equal(cf_cache_prune(d, 1, SIZE_MAX, 10), 1); /* 20 bytes left, bound 10 */
    assert_false(cf_is_file(mid));
    assert_int_equal(cf_cache_prune(d, 1, SIZE_MAX, 10), 0);

    char *sub = cf_path_join(d, "ab");
    assert_int_equal(cf_mkdir_p(sub, 0700, NULL), 0);
    aged_file(sub, "e1", 100, 50);
    aged_file(sub, "e2", 100, 40);
    assert_int_equal(cf_cache_prune(d, 2, SIZE_MAX, 150), 1); /* "new" is not an entry at depth 2 */
    char *e1 = cf_path_join(sub, "e1"), *e2 = cf_path_join(sub, "e2"), *newer = cf_path_join(d, "new");
    assert_false(cf_is_file(e1));
    assert_true(cf_is_file(e2));
    assert_true(cf_is_file(newer));
    free(old);
    free(mid);
    free(stamp);
    free(sub);
    free(e1);
    free(e2);
    free(newer);
    ts_cleanup();
}

/* A mapped file truncated under us: reading past its new end yields zeros and
 * marks the mapping, instead of SIGBUS. */
static void test_mmap_survives_truncation(void **state)
{
    char *d = ts_tmpdir();
    char *p = cf_path_join(d, "shrinks.bin");
    size_t len = 1u << 20;
    char *bytes = cf_xmalloc(len);
    memset(bytes, 0x5a, len);
    assert_int_equal(cf_write_file_atomic(p, bytes, len, NULL), 0);
    struct cf_mmap map;
    cf_mmap_guard_reinstall(); /* cmocka sets its own SIGBUS handler for every test */
    assert_int_equal(cf_mmap_file(p, &map, NULL), 0);
    assert_int_equal(map.data[len - 1], 0x5a);
    assert_false(cf_mmap_faulted(&map));
    assert_int_equal(truncate(p, 4096), 0);
    assert_int_equal(map.data[100], 0x5a);          /* still backed */
    assert_false(cf_mmap_faulted(&map));
    volatile uint8_t past = map.data[len / 2];       /* no longer backed: SIGBUS without the guard */
    assert_int_equal(past, 0);
    assert_true(cf_mmap_faulted(&map));
    cf_munmap(&map);
    assert_false(cf_mmap_faulted(&map));

    free(bytes);
    free(p);
}

/* Whether [p, p+len) is still mapped: mincore fails with ENOMEM on a range
 * with unmapped pages. */
static int range_mapped(const void *p, size_t len)
{
    unsigned char vec[4];
    return mincore((void *)p, len < 4 * 4096 ? len : 4 * 4096, vec) == 0;
}

static const uint8_t *map_and_release(const char *path, size_t *len)
{
    struct cf_mmap map;
    assert_int_equal(cf_mmap_file(path, &map, NULL), 0);
    const uint8_t *at = map.data;
    *len = map.len;
    cf_munmap(&map);
    assert_null(map.data);
    assert_int_equal(map.guard, -1);
    return at;
}

/* cf_munmap gives the address range back, small files and large alike. */
static void test_munmap_releases(void **state)
{
    char *d = ts_tmpdir();
    char *small = cf_path_join(d, "small.bin"), *big = cf_path_join(d, "big.bin");
    char bytes[3 * 4096];
    memset(bytes, 1, sizeof bytes);
    assert_int_equal(cf_write_file_atomic(small, bytes, sizeof bytes, NULL), 0);
    int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)9 << 20), 0); /* sparse, 9 MB */
    close(fd);
    size_t len;
    const uint8_t *at = map_and_release(small, &len);
    assert_false(range_mapped(at, len));
    at = map_and_release(big, &len);
    assert_false(range_mapped(at, len));
    free(small);
    free(big);
}

/* Symlinks inside a root resolve there, as in a chroot: an absolute target
 * starts again at the root (bullseye's /lib64/ld-linux-x86-64.so.2 ->
 * /lib/x86_64-linux-gnu/ld-2.31.so), ".." stops at it, a loop fails. */
static void test_path_in_root(void **state)
{
    char *root = ts_tmpdir();
    char *lib = cf_path_join(root, "lib/x86_64-linux-gnu");
    assert_int_equal(cf_mkdir_p(lib, 0755, NULL), 0);
    char *ld = ts_write(lib, "ld-2.31.so", "x");
    char *lib64 = cf_path_join(root, "lib64");
    assert_int_equal(cf_mkdir_p(lib64, 0755, NULL), 0);
    char *abs_link = cf_path_join(lib64, "ld-linux-x86-64.so.2");
    assert_int_equal(symlink("/lib/x86_64-linux-gnu/ld-2.31.so", abs_link), 0);
    char *usr = cf_path_join(root, "usr");
    assert_int_equal(cf_mkdir_p(usr, 0755, NULL), 0);
    char *rel_dir = cf_path_join(usr, "lib");
    assert_int_equal(symlink("../lib", rel_dir), 0);
    char *up = cf_path_join(root, "up");
    assert_int_equal(symlink("../../../../../lib", up), 0);
    char *loop = cf_path_join(root, "loop");
    assert_int_equal(symlink("/loop", loop), 0);

    char *p = cf_path_in_root(root, "/lib64/ld-linux-x86-64.so.2");
    assert_string_equal(p, ld);
    free(p);
    p = cf_path_in_root(root, "/usr/lib/x86_64-linux-gnu/ld-2.31.so");
    assert_string_equal(p, ld);
    free(p);
    p = cf_path_in_root(root, "/up/x86_64-linux-gnu/ld-2.31.so"); /* ".." never leaves the root */
    assert_string_equal(p, ld);
    free(p);
    p = cf_path_in_root(root, "/lib/missing/libx.so");
    char *want = cf_path_join(root, "lib/missing/libx.so");
    assert_string_equal(p, want);
    free(p);
    free(want);
    assert_null(cf_path_in_root(root, "/loop/x"));
    free(lib); free(lib64); free(abs_link); free(usr); free(rel_dir); free(up); free(loop);
    ts_cleanup();
}

/* cf_same_path: what two spellings name, not how they are spelled */
static void test_same_path(void **state)
{
    char *root = ts_tmpdir();
    char *inc = cf_path_join(root, "nvidia/nccl/include");
    assert_int_equal(cf_mkdir_p(inc, 0755, NULL), 0);
    char *torch = cf_path_join(root, "torch");
    assert_int_equal(cf_mkdir_p(torch, 0755, NULL), 0);
    char *dotted = cf_path_join(root, "torch/../nvidia/nccl/include");
    char *link = cf_path_join(root, "nccl-link");
    assert_int_equal(symlink("nvidia/nccl", link), 0);
    char *via_link = cf_path_join(link, "include");
    char *missing = cf_path_join(root, "nowhere");
    assert_true(cf_same_path(inc, dotted));
    assert_true(cf_same_path(via_link, inc));
    assert_false(cf_same_path(inc, torch));
    assert_false(cf_same_path(missing, missing)); /* nothing there: not the same anything */
    assert_false(cf_same_path(inc, NULL));
    free(inc); free(torch); free(dotted); free(link); free(via_link); free(missing);
    ts_cleanup();
}

/* cf_write_all: everything through a pipe's short writes; a full device and
 * a closed descriptor are errors with errno, never a silent partial file */
static void test_write_all(void **state)
{
    enum { N = 1 << 20 };
    char *data = malloc(N);
    for (size_t i = 0; i < N; i++)
        data[i] = (char)(i * 131u);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t child = fork();
    if (child == 0) { /* the reader: exits 0 only when every byte arrived in order */
        close(p[1]);
        size_t got = 0;
        char buf[4096];
        ssize_t n;
        while ((n = read(p[0], buf, sizeof buf)) > 0)
            for (ssize_t i = 0; i < n; i++, got++)
                if (buf[i] != (char)(got * 131u))
                    _exit(2);
        _exit(got == N ? 0 : 1);
    }
    close(p[0]);
    assert_int_equal(cf_write_all(p[1], data, N), 0); /* a 64 KiB pipe: many short writes */
    close(p[1]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (full >= 0) {
        errno = 0;
        assert_int_equal(cf_write_all(full, data, 10), -1);
        assert_int_equal(errno, ENOSPC);
        close(full);
    }
    assert_int_equal(cf_write_all(p[1], data, 1), -1); /* closed above */
    assert_int_equal(errno, EBADF);
    assert_int_equal(cf_write_all(p[1], data, 0), 0);  /* nothing to write: nothing asked of fd */
    free(data);
}

/* cf_host_name: the kernel's nodename, always terminated, one fallback */
static void test_host_name(void **state)
{
    struct utsname u;
    assert_int_equal(uname(&u), 0);
    char buf[256];
    assert_int_equal(cf_host_name(buf, sizeof buf), 0);
    assert_string_equal(buf, u.nodename);
    char tiny[2] = "x";
    if (strlen(u.nodename) >= sizeof tiny) {
        assert_int_equal(cf_host_name(tiny, sizeof tiny), -1); /* does not fit: no half name */
        assert_string_equal(tiny, "u");
    }
    assert_int_equal(cf_host_name(NULL, 8), -1);
    assert_int_equal(cf_host_name(buf, 0), -1);
}

static void test_fs_atomic_write_and_rm(void **state)
{
    char *d = ts_tmpdir();
    char *sub = cf_path_join(d, "x/y/z");
    assert_int_equal(cf_mkdir_p(sub, 0755, NULL), 0);
    char *f = cf_path_join(sub, "f.txt");
    assert_int_equal(cf_write_file_atomic(f, "hello", 5, NULL), 0);
    struct strbuf sb = STRBUF_INIT;
    assert_int_equal(cf_read_file(f, 100, &sb, NULL), 0);
    assert_string_equal(cf_sb_str(&sb), "hello");
    cf_sb_reset(&sb);
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_read_file(f, 3, &sb, &err), -1);
    cf_error_clear(&err);
    char hex[65];
    assert_int_equal(cf_sha256_file(f, hex, NULL), 0);
    assert_string_equal(hex, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    /* FIPS 180-2's vectors for the one-shot digest and the hex encoder */
    unsigned char md[32];
    cf_sha256("abc", 3, md);
    cf_hex_encode(md, sizeof md, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    cf_sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    char *x = cf_path_join(d, "x");
    assert_int_equal(cf_rm_rf(x, NULL), 0);
    assert_false(cf_path_exists(x));
    cf_sb_release(&sb);
    free(sub), free(f), free(x);
    ts_cleanup();
}

/* The safe writer: a planted link at the final name is refused (its target
 * untouched), the temporary is never a known name, nothing is left behind,
 * the mode is honoured, a link is replaced atomically. */
static void test_atomic_writer_refuses_planted_links(void **state)
{
    char *d = ts_tmpdir();
    char *victim = ts_write(d, "victim.txt", "precious");
    char *out = cf_path_join(d, "out.json");
    assert_int_equal(symlink(victim, out), 0);
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_write_file_atomic(out, "evil", 4, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "is a symbolic link"));
    cf_error_clear(&err);
    struct strbuf sb = STRBUF_INIT;
    assert_int_equal(cf_read_file(victim, 100, &sb, NULL), 0);
    assert_string_equal(cf_sb_str(&sb), "precious");
    cf_sb_reset(&sb);
    /* the old predictable temporary name is not followed either */
    char *old_tmp = cf_asprintf("%s.tmp.%ld", out, (long)getpid());
    unlink(out);
    assert_int_equal(symlink(victim, old_tmp), 0);
    assert_int_equal(cf_write_file_at(AT_FDCWD, out, "new", 3, 0600, &err), 0);
    assert_int_equal(cf_read_file(victim, 100, &sb, NULL), 0);
    assert_string_equal(cf_sb_str(&sb), "precious");
    struct stat st;
    assert_int_equal(lstat(out, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    /* only victim, out and the planted link: no temporary left */
    DIR *dir = opendir(d);
    int entries = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        entries += e->d_name[0] != '.' || strstr(e->d_name, ".tmp-") != NULL;
    closedir(dir);
    assert_int_equal(entries, 3);
    /* links are swapped by rename, never written through */
    char *link = cf_path_join(d, "active");
    assert_int_equal(cf_symlink_atomic("victim.txt", link, NULL), 0);
    assert_int_equal(cf_symlink_atomic("out.json", link, NULL), 0);
    char target[64] = "";
    assert_int_equal(readlink(link, target, sizeof target - 1), 8);
    assert_string_equal(target, "out.json");
    /* a log is never opened through a link, nor a FIFO */
    assert_int_equal(cf_open_log(old_tmp, 1, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "symbolic link"));
    cf_error_clear(&err);
    char *fifo = cf_path_join(d, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(cf_open_log(fifo, 1, &err), -1);
    cf_error_clear(&err);
    cf_sb_release(&sb);
    free(out), free(old_tmp), free(link), free(fifo);
    ts_cleanup();
}

/* SHA-256 through the low-level digest calls (FIPS 180-2's "abc" vector). */
static void test_sha256_known_vector(void **state)
{
    (void)state;
    unsigned char md[32];
    char hex[65];
    cf_sha256("abc", 3, md);
    cf_hex_encode(md, sizeof md, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* cf_dir_trusted on real directories: "" when trusted, else the message. */
static char *dir_verdict(const char *path)
{
    cf_error err = CF_ERROR_INIT;
    char *msg = cf_strdup(cf_dir_trusted(path, &err) == 0 ? "" : cf_error_message(&err));
    cf_error_clear(&err);
    return msg;
}

static char *mkdir_mode(const char *base, const char *name, mode_t mode)
{
    char *p = cf_path_join(base, name);
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(chmod(p, mode), 0); /* past the umask */
    return p;
}

#define ASSERT_TRUSTED(p) do { char *m_ = dir_verdict(p); assert_string_equal(m_, ""); free(m_); } while (0)
#define ASSERT_REFUSED(p, want) do { char *m_ = dir_verdict(p); \
        if (!strstr(m_, want)) { fail_msg("%s: wanted /%s/, got '%s'", p, want, m_); } \
        free(m_); } while (0)

/* The mode rule, for any user: a 0777 parent that is not sticky is refused
 * (naming it), a 1777 sticky one is fine, the directory itself must not be
 * writable by others even when sticky, and links are checked where they lie
 * and where they lead. */
static void test_dir_trusted_modes(void **state)
{
    (void)state;
    char *base = ts_tmpdir();
    char *mine = mkdir_mode(base, "mine", 0755);
    char *open = mkdir_mode(base, "open", 0777);
    char *sticky = mkdir_mode(base, "sticky", 01777);
    char *under_open = mkdir_mode(open, "root", 0755);
    char *under_sticky = mkdir_mode(sticky, "root", 0755);
    ASSERT_TRUSTED(mine);
    char *later = cf_path_join(mine, "not/yet");
    ASSERT_TRUSTED(later); /* what does not exist is created by cclforge */
    ASSERT_REFUSED(under_open, "a directory above");
    char *want = cf_asprintf("%s, a directory above %s, is writable by everyone (mode 0777) and not sticky", open,
                             under_open);
    ASSERT_REFUSED(under_open, want);
    ASSERT_REFUSED(under_open, "chmod go-w");
    char *open_later = cf_path_join(open, "not/yet");
    ASSERT_REFUSED(open_later, "not sticky");
    ASSERT_TRUSTED(under_sticky);
    ASSERT_REFUSED(sticky, "writable by everyone (mode 1777)"); /* the directory itself: anyone could add to it */
    ASSERT_REFUSED(open, "writable by everyone (mode 0777)");
    /* a link in the open directory: refused where it lies, though it leads somewhere fine */
    char *link_in_open = cf_path_join(open, "link");
    assert_int_equal(symlink(mine, link_in_open), 0);
    ASSERT_REFUSED(link_in_open, "not sticky");
    /* a link from a fine place into the open directory: refused where it leads */
    char *link_to_open = cf_path_join(mine, "link");
    assert_int_equal(symlink(under_open, link_to_open), 0);
    ASSERT_REFUSED(link_to_open, "not sticky");
    /* a path through ".." as well */
    char *dotdot = cf_asprintf("%s/../open/root", mine);
    ASSERT_REFUSED(dotdot, "not sticky");
    free(dotdot);
    free(link_to_open);
    free(link_in_open);
    free(open_later);
    free(want);
    free(later);
    free(under_sticky);
    free(under_open);
    free(sticky);
    free(open);
    free(mine);
    ts_cleanup();
}

/* The owner and group rules need other users: root makes them with chown,
 * and checks the rule from a non-root user's side too (a child that became
 * nobody). */
static void test_dir_trusted_owners(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        printf("# SKIP: not root: no directory of another user can be made here\n");
        skip();
    }
    const uid_t nobody = 65534, daemon_uid = 1;
    char *base = ts_tmpdir();
    assert_int_equal(chmod(base, 0755), 0); /* nobody must be able to look in */
    char *theirs = mkdir_mode(base, "theirs", 0755);
    assert_int_equal(chown(theirs, nobody, nobody), 0);
    char *under_theirs = mkdir_mode(theirs, "root", 0755);
    char *want = cf_asprintf("%s, a directory above %s, is owned by uid 65534, not by you (uid 0) or root", theirs,
                             under_theirs);
    ASSERT_REFUSED(under_theirs, want);
    ASSERT_REFUSED(theirs, "is owned by uid 65534");
    /* group-writable, the group not the user's private one (nogroup) */
    char *grp = mkdir_mode(base, "group", 0775);
    assert_int_equal(chown(grp, 0, nobody), 0);
    char *under_grp = mkdir_mode(grp, "root", 0755);
    ASSERT_REFUSED(under_grp, "is writable by its group (mode 0775) and not sticky");
    char *grp_sticky = mkdir_mode(base, "group-sticky", 01775);
    assert_int_equal(chown(grp_sticky, 0, nobody), 0);
    char *under_grp_sticky = mkdir_mode(grp_sticky, "root", 0755);
    ASSERT_TRUSTED(under_grp_sticky);

    /* as nobody: root's directories are fine, nobody's own are, daemon's are not */
    char *of_root = mkdir_mode(base, "of-root", 0755);
    char *of_nobody = mkdir_mode(base, "of-nobody", 0755);
    assert_int_equal(chown(of_nobody, nobody, nobody), 0);
    char *of_daemon = mkdir_mode(base, "of-daemon", 0755);
    assert_int_equal(chown(of_daemon, daemon_uid, daemon_uid), 0);
    char *in_daemon = mkdir_mode(of_daemon, "root", 0755);
    assert_int_equal(chown(in_daemon, nobody, nobody), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(nobody) != 0 || setuid(nobody) != 0)
            _exit(100);
        cf_error err = CF_ERROR_INIT;
        int bad = 0;
        bad |= (cf_dir_trusted(of_root, NULL) != 0) << 0;
        bad |= (cf_dir_trusted(of_nobody, NULL) != 0) << 1;
        bad |= (cf_dir_trusted(of_daemon, &err) == 0 || !strstr(cf_error_message(&err), "owned by uid 1, not by you (uid 65534)")) << 2;
        cf_error_clear(&err);
        bad |= (cf_dir_trusted(in_daemon, &err) == 0 || !strstr(cf_error_message(&err), "a directory above")) << 3;
        cf_error_clear(&err);
        _exit(bad);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    free(in_daemon);
    free(of_daemon);
    free(of_nobody);
    free(of_root);
    free(under_grp_sticky);
    free(grp_sticky);
    free(under_grp);
    free(grp);
    free(want);
    free(under_theirs);
    free(theirs);
    ts_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strbuf_grows_and_formats),
        cmocka_unit_test(test_strvec_split),
        cmocka_unit_test(test_envp_with_overrides),
        cmocka_unit_test(test_spawn_captures_and_reports),
        cmocka_unit_test(test_spawn_missing_program),
        cmocka_unit_test(test_spawn_setup_failure_closes_fds),
        cmocka_unit_test(test_json_typed_getters),
        cmocka_unit_test(test_json_fields_write_as_by_hand),
        cmocka_unit_test(test_spawn_timeout_kills_group),
        cmocka_unit_test(test_spawn_line_callback),
        cmocka_unit_test(test_spawn_child_dies_with_parent),
        cmocka_unit_test(test_fs_atomic_write_and_rm),
        cmocka_unit_test(test_mmap_survives_truncation),
        cmocka_unit_test(test_munmap_releases),
        cmocka_unit_test(test_path_in_root),
        cmocka_unit_test(test_same_path),
        cmocka_unit_test(test_write_all),
        cmocka_unit_test(test_host_name),
        cmocka_unit_test(test_atomic_writer_refuses_planted_links),
        cmocka_unit_test(test_path_normalize),
        cmocka_unit_test(test_cache_prune_oldest_first),
        cmocka_unit_test(test_sha256_known_vector),
        cmocka_unit_test(test_dir_trusted_modes),
        cmocka_unit_test(test_dir_trusted_owners),
        cmocka_unit_test(test_self_exe),
        cmocka_unit_test(test_depcache_entry_parse),
        cmocka_unit_test(test_fnv1a_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
