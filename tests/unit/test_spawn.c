/* spawn's start and wait: a fork that fails leaves no descriptor open (this test
 * links with -Wl,--wrap=fork to make fork fail on demand), an exec failure is
 * reported by start, a started program's output can be read by the caller or
 * go straight into a file, and descriptors in keep_fds reach the program. */
#include "testsupport.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/ranks.h"
#include "cclforge/spawn.h"

static int fail_next_fork;
pid_t __real_fork(void);
pid_t __wrap_fork(void);
pid_t __wrap_fork(void)
{
    if (fail_next_fork) {
        fail_next_fork = 0;
        errno = EAGAIN;
        return -1;
    }
    return __real_fork();
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void test_failed_fork_leaks_nothing(void **state)
{
    char log[] = "/tmp/cclforge-spawn-log-XXXXXX";
    int lfd = mkstemp(log);
    assert_true(lfd >= 0);
    close(lfd);
    const char *argv[] = { "true", NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.capture_stderr = 1;
    o.log_path = log;
    int before = open_fds();
    for (int i = 0; i < 3; i++) {
        struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
        cf_error err = CF_ERROR_INIT;
        fail_next_fork = 1;
        assert_int_equal(cf_spawn_run(argv, &o, &r, &err), -1);
        assert_non_null(strstr(cf_error_message(&err), "fork: Resource temporarily unavailable"));
        cf_error_clear(&err);
        cf_spawn_result_release(&r);
    }
    /* three pipes and the log per attempt were left open before the fix */
    assert_int_equal(open_fds(), before);
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    assert_true(cf_spawn_ok(&r));
    cf_spawn_result_release(&r);
    assert_int_equal(open_fds(), before);
    unlink(log);
}

static void test_start_reports_exec_failure(void **state)
{
    char path[] = "/tmp/cclforge-spawn-noexec-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, "\x7f" "ELF garbage", 12) == 12);
    close(fd);
    chmod(path, 0755);
    const char *argv[] = { path, NULL };
    struct cf_spawn_proc p;
    cf_error err = CF_ERROR_INIT;
    int before = open_fds();
    assert_int_equal(cf_spawn_start(argv, NULL, &p, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "cannot run: Exec format error"));
    assert_int_equal(open_fds(), before);
    cf_error_clear(&err);
    unlink(path);
}

/* the caller reads the output itself (as the smoke supervisor does) and reaps */
static void test_start_then_read_and_reap(void **state)
{
    int keep[2];
    assert_int_equal(pipe2(keep, O_CLOEXEC), 0);
    char script[64];
    snprintf(script, sizeof script, "echo out; echo err >&2; echo kept >&%d", keep[1]);
    const char *argv[] = { "sh", "-c", script, NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.merge_stderr = 1;
    o.keep_fds = &keep[1];
    o.n_keep_fds = 1;
    o.pdeathsig = SIGKILL;
    struct cf_spawn_proc p;
    assert_int_equal(cf_spawn_start(argv, &o, &p, NULL), 0);
    close(keep[1]);
    char buf[256];
    size_t got = 0;
    ssize_t n;
    while ((n = read(p.out_fd, buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = 0;
    assert_string_equal(buf, "out\nerr\n");
    n = read(keep[0], buf, sizeof buf - 1);
    assert_true(n == 5 && !memcmp(buf, "kept\n", 5));
    int status;
    assert_int_equal(waitpid(p.pid, &status, 0), p.pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cf_spawn_proc_release(&p);
    close(keep[0]);
}

/* output_path: stdout and stderr straight into the file (truncated, no pipe
 * left open); a file that cannot be written fails the start, naming it, with
 * nothing started and nothing left open; a symlink is not followed */
static void test_output_into_file(void **state)
{
    char *dir = ts_tmpdir();
    char *path = cf_path_join(dir, "out.log"), *link = cf_path_join(dir, "link.log");
    FILE *f = fopen(path, "w");
    fputs("old content, longer than what follows\n", f);
    fclose(f);
    const char *argv[] = { "sh", "-c", "echo out; echo err >&2", NULL };
    struct cf_spawn_opts o = { 0 };
    o.output_path = path;
    struct cf_spawn_proc p;
    int before = open_fds();
    assert_int_equal(cf_spawn_start(argv, &o, &p, NULL), 0);
    assert_int_equal(p.out_fd, -1);
    assert_int_equal(p.err_fd, -1);
    int status;
    assert_int_equal(waitpid(p.pid, &status, 0), p.pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cf_spawn_proc_release(&p);
    assert_int_equal(open_fds(), before);
    struct strbuf text = STRBUF_INIT;
    assert_int_equal(cf_read_file(path, 4096, &text, NULL), 0);
    assert_string_equal(cf_sb_str(&text), "out\nerr\n");
    cf_sb_release(&text);

    cf_error err = CF_ERROR_INIT;
    char *missing = cf_path_join(dir, "no/such/dir/out.log");
    o.output_path = missing;
    assert_int_equal(cf_spawn_start(argv, &o, &p, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), missing));
    assert_int_equal(open_fds(), before);
    cf_error_clear(&err);

    assert_int_equal(symlink(path, link), 0);
    o.output_path = link;
    assert_int_equal(cf_spawn_start(argv, &o, &p, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), link));
    cf_error_clear(&err);

    /* a FIFO planted there fails the start at once (no reader: it would block) */
    char *fifo = cf_path_join(dir, "fifo.log");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    o.output_path = fifo;
    assert_int_equal(cf_spawn_start(argv, &o, &p, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), fifo));
    assert_int_equal(open_fds(), before);
    cf_error_clear(&err);
    free(fifo);
    free(missing);
    free(link);
    free(path);
}

/* The pid a program wrote to path (0 until it has). */
static int pid_in(const char *path)
{
    struct strbuf t = STRBUF_INIT;
    int pid = cf_read_file(path, 64, &t, NULL) == 0 ? atoi(cf_sb_str(&t)) : 0;
    cf_sb_release(&t);
    return pid;
}

/* Contained (opts.contain): a setsid() daemon the program starts, holding its
 * stdout, is killed when the program ends, counted, and does not hold the
 * wait; the program's own status comes through the keeper unchanged. */
static void test_contained_tree_dies_with_it(void **state)
{
    char dir[] = "/tmp/cf29-contain-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *pidfile = cf_path_join(dir, "daemon.pid");
    char *script = cf_asprintf("setsid sh -c 'echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 300' & "
                               "while [ ! -s %s ]; do sleep 0.01; done; echo started",
                               pidfile, pidfile, pidfile, pidfile);
    const char *argv[] = { "sh", "-c", script, NULL };
    struct cf_spawn_opts o = cf_spawn_probe_opts(60);
    o.contain = 1;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    assert_true(cf_spawn_ok(&r)); /* not held to its 60 s timeout by the daemon's end of the pipe */
    assert_non_null(strstr(cf_sb_str(&r.out), "started"));
    assert_int_equal(r.left_behind, 1);
    int pid = pid_in(pidfile);
    assert_true(pid > 0);
    assert_int_equal(kill(pid, 0), -1); /* gone, reaped: not even a zombie */
    assert_int_equal(errno, ESRCH);
    cf_spawn_result_release(&r);

    /* without contain the same daemon outlives the program (the case the keeper is for) */
    unlink(pidfile);
    o.contain = 0;
    o.capture_stdout = 0;
    o.capture_stderr = 0;
    struct cf_spawn_result r2 = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, &r2, NULL), 0);
    pid = pid_in(pidfile);
    assert_true(pid > 0);
    assert_int_equal(kill(pid, 0), 0);
    kill(pid, SIGKILL);
    cf_spawn_result_release(&r2);

    /* the status: an exit code, a signal, a timeout */
    o.contain = 1;
    const char *exit3[] = { "sh", "-c", "exit 3", NULL };
    struct cf_spawn_result r3 = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(exit3, &o, &r3, NULL), 0);
    assert_true(r3.exited);
    assert_int_equal(r3.exit_code, 3);
    assert_int_equal(r3.left_behind, 0);
    const char *segv[] = { "sh", "-c", "kill -SEGV $$", NULL };
    struct cf_spawn_result r4 = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(segv, &o, &r4, NULL), 0);
    assert_false(r4.exited);
    assert_int_equal(r4.term_signal, SIGSEGV);
    o.timeout_s = 0.5;
    const char *hang[] = { "sleep", "100", NULL };
    struct cf_spawn_result r5 = CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(hang, &o, &r5, NULL), 0);
    assert_true(r5.timed_out);
    assert_false(r5.exited); /* killed, not waited for until it ended */
    cf_spawn_result_release(&r3);
    cf_spawn_result_release(&r4);
    cf_spawn_result_release(&r5);
    unlink(pidfile);
    rmdir(dir);
    free(script);
    free(pidfile);
}

/* The rank supervisor on real processes: a hung rank is killed at the
 * deadline; after one rank fails the others are killed after the grace; a
 * rank that cannot start fails the run at once. */
static void test_ranks_supervised(void **state)
{
    (void)state;
    static const char *const hang_argv[] = { "/bin/sh", "-c", "sleep 1000 & wait", NULL };
    static const char *const fail_argv[] = { "/bin/sh", "-c", "exit 3", NULL };
    static const char *const say_argv[] = { "/bin/sh", "-c", "echo \"said $WORD\"; echo err >&2; exit 0", NULL };
    static const char *const env[] = { "WORD=hello", NULL };
    char *dir = ts_tmpdir();
    char *log = cf_path_join(dir, "rank.log");
    struct cf_rank_spec hung[2] = { { .argv = say_argv, .env_set = env, .cwd = dir, .log = log, .contain = 1 },
                                    { .argv = hang_argv, .cwd = dir, .contain = 1 } };
    struct cf_rank_outcome out[2];
    struct cf_ranks_opts o = { .timeout_s = 1.0, .grace_s = 60.0, .term_wait_s = 3.0 };
    cf_ranks_run(hung, 2, &o, out);
    assert_int_equal(out[0].end, CF_RANK_EXITED);
    assert_int_equal(out[0].code, 0);
    /* its environment set, stdout and stderr straight into its log */
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_read_file(log, 4096, &text, &err), 0);
    assert_string_equal(cf_sb_str(&text), "said hello\nerr\n");
    cf_sb_release(&text);
    assert_int_equal(out[1].end, CF_RANK_KILLED_TIMEOUT);
    char *how = cf_rank_describe(&out[1], 1.0);
    assert_non_null(strstr(how, "hung"));
    free(how);
    struct cf_rank_spec peer[2] = { { .argv = fail_argv, .cwd = dir }, { .argv = hang_argv, .cwd = dir } };
    o = (struct cf_ranks_opts){ .timeout_s = 600.0, .grace_s = 0.5, .term_wait_s = 3.0 };
    cf_ranks_run(peer, 2, &o, out);
    assert_int_equal(out[0].end, CF_RANK_EXITED);
    assert_int_equal(out[0].code, 3);
    assert_int_equal(out[1].end, CF_RANK_KILLED_PEER);
    static const char *const missing_argv[] = { "/nonexistent/cf-python", NULL };
    struct cf_rank_spec gone[2] = { { .argv = missing_argv, .cwd = dir }, { .argv = hang_argv, .cwd = dir } };
    cf_ranks_run(gone, 2, &o, out);
    assert_int_equal(out[0].end, CF_RANK_NOT_STARTED);
    how = cf_rank_describe(&out[0], 600.0);
    assert_non_null(strstr(how, "/nonexistent/cf-python"));
    free(how);
    assert_int_equal(out[1].end, CF_RANK_KILLED_PEER);
    free(log);
}

/* Driven from the caller's loop: each rank's output on a pipe the caller
 * reads, the ranks reaped as they end, the caller stopping the rest; nothing
 * is left behind, not even what a rank started in its process group. */
static void test_ranks_stepped(void **state)
{
    (void)state;
    static const char *const say_argv[] = { "/bin/sh", "-c", "echo \"rank $R\"; exit 0", NULL };
    static const char *const hang_argv[] = { "/bin/sh", "-c", "sleep 1000 & echo $! >&2; wait", NULL };
    static const char *const env0[] = { "R=0", NULL };
    struct cf_rank_spec specs[2] = { { .argv = say_argv, .env_set = env0, .pipe_output = 1 },
                                     { .argv = hang_argv, .pipe_output = 1 } };
    struct cf_ranks_opts o = { .grace_s = -1 }; /* the caller judges */
    cf_error err = CF_ERROR_INIT;
    struct cf_ranks *s = cf_ranks_start(specs, 2, &o, &err);
    assert_int_equal(err.kind, CF_OK);
    int fd0 = cf_ranks_take_output(s, 0), fd1 = cf_ranks_take_output(s, 1);
    assert_true(fd0 >= 0 && fd1 >= 0);
    assert_int_equal(cf_ranks_take_output(s, 0), -1);
    char buf[64] = "";
    ssize_t n = read(fd0, buf, sizeof buf - 1);
    assert_true(n > 0);
    buf[n] = 0;
    assert_string_equal(buf, "rank 0\n");
    char pid_text[32] = "";
    n = read(fd1, pid_text, sizeof pid_text - 1); /* the grandchild's pid: it must die too */
    assert_true(n > 0);
    pid_t grandchild = (pid_t)atoi(pid_text);
    int ended[2], got = 0;
    for (int i = 0; i < 500 && !got; i++) {
        got = cf_ranks_step(s, ended);
        usleep(10000);
    }
    assert_int_equal(got, 1);
    assert_int_equal(ended[0], 0);
    assert_int_equal(cf_ranks_live(s), 1);
    /* the failing peer is not stopped without the caller's word */
    assert_int_equal(cf_ranks_outcome(s, 1)->end, CF_RANK_RUNNING);
    cf_ranks_stop(s, 1);
    for (int i = 0; i < 500 && cf_ranks_live(s); i++) {
        cf_ranks_step(s, ended);
        usleep(10000);
    }
    assert_int_equal(cf_ranks_live(s), 0);
    assert_int_equal(cf_ranks_outcome(s, 1)->end, CF_RANK_KILLED_PEER);
    assert_int_equal(cf_ranks_outcome(s, 1)->code, SIGKILL);
    cf_ranks_free(s);
    close(fd0);
    close(fd1);
    int gone = 0;
    for (int i = 0; i < 500 && !gone; i++) {
        gone = kill(grandchild, 0) < 0 && errno == ESRCH;
        usleep(10000);
    }
    assert_true(gone);
    /* a rank that cannot start: the first error is the caller's */
    static const char *const missing_argv[] = { "/nonexistent/cf-rank", NULL };
    struct cf_rank_spec gone_spec[1] = { { .argv = missing_argv } };
    s = cf_ranks_start(gone_spec, 1, &o, &err);
    assert_int_not_equal(err.kind, CF_OK);
    assert_non_null(strstr(cf_error_message(&err), "/nonexistent/cf-rank"));
    assert_int_equal(cf_ranks_live(s), 0);
    cf_ranks_free(s);
    cf_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_fork_leaks_nothing),
        cmocka_unit_test(test_start_reports_exec_failure),
        cmocka_unit_test(test_start_then_read_and_reap),
        cmocka_unit_test(test_output_into_file),
        cmocka_unit_test(test_contained_tree_dies_with_it),
        cmocka_unit_test(test_ranks_supervised),
        cmocka_unit_test(test_ranks_stepped),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
