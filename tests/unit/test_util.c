/* strbuf, strvec, spawn and fs: the ground everything else stands on. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <signal.h>
#include <dirent.h>
#include <fcntl.h>

#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"

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

static void test_spawn_timeout_kills_group(void **state)
{
    const char *argv[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.timeout_s = 0.3;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    assert_true(r.timed_out);
    assert_true(r.seconds < 5);
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
    char *x = cf_path_join(d, "x");
    assert_int_equal(cf_rm_rf(x, NULL), 0);
    assert_false(cf_path_exists(x));
    cf_sb_release(&sb);
    free(sub), free(f), free(x);
    ts_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strbuf_grows_and_formats),
        cmocka_unit_test(test_strvec_split),
        cmocka_unit_test(test_spawn_captures_and_reports),
        cmocka_unit_test(test_spawn_missing_program),
        cmocka_unit_test(test_spawn_setup_failure_closes_fds),
        cmocka_unit_test(test_json_typed_getters),
        cmocka_unit_test(test_spawn_timeout_kills_group),
        cmocka_unit_test(test_spawn_line_callback),
        cmocka_unit_test(test_spawn_child_dies_with_parent),
        cmocka_unit_test(test_fs_atomic_write_and_rm),
        cmocka_unit_test(test_path_normalize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
