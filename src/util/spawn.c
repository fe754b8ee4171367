/* Running programs with an argv vector, never a shell: start (fork, exec, report an
 * exec failure), then wait (capture, log, timeout, reap). */
#include "cclforge/spawn.h"

#include "cclforge/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "util/spawn_keeper.h"

extern char **environ;


char *cf_which(const char *name)
{
    if (!name || !*name)
        return NULL;
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? cf_strdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    struct strvec dirs = STRVEC_INIT;
    cf_strvec_split(&dirs, path, ":", 0);
    char *found = NULL;
    for (size_t i = 0; i < dirs.n && !found; i++) {
        char *cand = cf_asprintf("%s/%s", dirs.v[i], name);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            found = cand;
        else
            free(cand);
    }
    cf_strvec_clear(&dirs);
    return found;
}

/* Keeps at most `limit` bytes: when over, the oldest half is dropped so the tail survives. */
static void keep_tail(struct strbuf *sb, const char *data, size_t n, size_t limit)
{
    cf_sb_add(sb, data, n);
    if (sb->len > limit) {
        size_t drop = sb->len - limit / 2;
        memmove(sb->buf, sb->buf + drop, sb->len - drop);
        cf_sb_setlen(sb, sb->len - drop);
    }
}

struct line_splitter {
    struct strbuf partial;
    cf_line_fn fn;
    void *ctx;
};

static void split_lines(struct line_splitter *ls, const char *data, size_t n)
{
    if (!ls->fn)
        return;
    for (size_t i = 0; i < n; i++) {
        if (data[i] == '\n' || data[i] == '\r') {
            if (ls->partial.len)
                ls->fn(ls->ctx, cf_sb_str(&ls->partial));
            cf_sb_reset(&ls->partial);
        } else if (ls->partial.len < 65536) {
            cf_sb_addc(&ls->partial, data[i]);
        }
    }
}

static void child_apply_env(const char *const *env_set)
{
    for (; env_set && *env_set; env_set++) {
        const char *eq = strchr(*env_set, '=');
        if (!eq) {
            unsetenv(*env_set);
            continue;
        }
        char *key = cf_strndup(*env_set, (size_t)(eq - *env_set));
        setenv(key, eq + 1, 1);
        free(key);
    }
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

void cf_spawn_proc_release(struct cf_spawn_proc *p)
{
    close_fd(&p->out_fd);
    close_fd(&p->err_fd);
    close_fd(&p->log_fd);
    close_fd(&p->report_fd);
    free(p->prog);
    p->prog = NULL;
}

/* In the child, between fork and exec: only async-signal-safe calls, and any
 * failure is reported through exec_fd before _exit. */
static void child_exec(const char *prog, const char *const *argv, const struct cf_spawn_opts *opts, pid_t parent,
                       int want_out, int want_err, const int out_pipe[2], const int err_pipe[2], int file_fd,
                       int exec_fd)
{
    setpgid(0, 0); /* its own group, so a timeout can kill what it started */
    /* Its own group also keeps a terminal's Ctrl-C from reaching it: have it
     * stopped when cclforge dies instead (make passes SIGTERM on to its jobs). */
    prctl(PR_SET_PDEATHSIG, opts->pdeathsig ? opts->pdeathsig : SIGTERM);
    if (getppid() != parent)
        _exit(127);
    if (opts->null_stdin) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd >= 0)
            dup2(fd, 0);
    }
    if (file_fd >= 0) {
        dup2(file_fd, 1);
        dup2(file_fd, 2);
    }
    if (want_out)
        dup2(out_pipe[1], 1);
    if (opts->merge_stderr)
        dup2(want_out ? out_pipe[1] : 1, 2);
    else if (want_err)
        dup2(err_pipe[1], 2);
    for (size_t i = 0; i < opts->n_keep_fds; i++) {
        int fd = opts->keep_fds[i];
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
    }
    int e = 0;
    if (opts->cwd && chdir(opts->cwd) != 0) {
        e = errno;
    } else {
        child_apply_env(opts->env_set);
        signal(SIGPIPE, SIG_DFL);
        execv(prog, (char *const *)argv);
        e = errno;
    }
    if (write(exec_fd, &e, sizeof e) < 0) {}
    _exit(127);
}

/* The keeper of a contained program (util/spawn_keeper.h), in the forked
 * child: it forks the program, lets go of every descriptor the program
 * writes to (so only the program's tree holds them), and watches it. */
__attribute__((noreturn)) static void keeper(const char *prog, const char *const *argv,
                                             const struct cf_spawn_opts *opts, pid_t parent, int want_out,
                                             int want_err, int out_pipe[2], int err_pipe[2], int file_fd, int exec_fd,
                                             int report_pipe[2])
{
    sigset_t orig;
    cf_keeper_begin(parent, &orig);
    pid_t self = getpid(), pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &orig, NULL);
        close(report_pipe[1]);
        child_exec(prog, argv, opts, self, want_out, want_err, out_pipe, err_pipe, file_fd, exec_fd);
    }
    int *mine[] = { &out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1], &file_fd, &exec_fd, &report_pipe[0] };
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        close_fd(mine[i]);
    for (size_t i = 0; i < opts->n_keep_fds; i++)
        close(opts->keep_fds[i]);
    if (pid < 0) {
        struct cf_keeper_report none = { 0, 0 };
        if (write(report_pipe[1], &none, sizeof none) < 0) {
        }
        _exit(127);
    }
    cf_keeper_run(pid, opts->timeout_s, report_pipe[1]);
}

int cf_spawn_start(const char *const *argv, const struct cf_spawn_opts *opts, struct cf_spawn_proc *p,
                   cf_error *err)
{
    static const struct cf_spawn_opts defaults;
    struct cf_spawn_proc fresh = CF_SPAWN_PROC_INIT;
    *p = fresh;
    if (!opts)
        opts = &defaults;
    if (!argv || !argv[0])
        return cf_error_set(err, CF_ERR_INTERNAL, "spawn: empty argv");
    p->prog = cf_which(argv[0]);
    if (!p->prog)
        return cf_error_set(err, CF_ERR_NOTFOUND, "%s: not found on PATH or not executable", argv[0]);

    int to_file = opts->output_path != NULL;
    int want_out = !to_file && (opts->capture_stdout || opts->log_path || opts->on_line);
    int want_err = !to_file && opts->capture_stderr && !opts->merge_stderr;
    int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 }, exec_pipe[2] = { -1, -1 }, file_fd = -1;
    int report_pipe[2] = { -1, -1 };
    int rc = 0;
    if (to_file) {
        /* As cf_open_log opens a log: never through a link, and O_NONBLOCK so a
         * FIFO planted there fails at once; then only a regular file (or a
         * device such as /dev/null) is written. */
        file_fd = open(opts->output_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
        struct stat st;
        if (file_fd < 0)
            rc = cf_error_set(err, CF_ERR_IO, "%s: cannot write the output of %s: %s", opts->output_path, p->prog,
                              strerror(errno));
        else if (fstat(file_fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
            rc = cf_error_set(err, CF_ERR_IO, "%s: cannot write the output of %s: not a regular file",
                              opts->output_path, p->prog);
        else if (fcntl(file_fd, F_SETFL, 0) != 0 || (S_ISREG(st.st_mode) && ftruncate(file_fd, 0) != 0))
            rc = cf_error_set(err, CF_ERR_IO, "%s: cannot write the output of %s: %s", opts->output_path, p->prog,
                              strerror(errno));
    }
    if (rc == 0 && opts->log_path && !to_file) {
        p->log_fd = cf_open_log(opts->log_path, 1, err);
        if (p->log_fd < 0)
            rc = -1;
    }
    if (rc == 0 && ((want_out && pipe2(out_pipe, O_CLOEXEC)) || (want_err && pipe2(err_pipe, O_CLOEXEC)) ||
                    pipe2(exec_pipe, O_CLOEXEC) || (opts->contain && pipe2(report_pipe, O_CLOEXEC))))
        rc = cf_error_set(err, CF_ERR_INTERNAL, "pipe: %s", strerror(errno));
    pid_t pid = -1;
    if (rc == 0) {
        p->start = cf_now_seconds();
        pid_t parent = getpid();
        pid = fork();
        if (pid == 0 && opts->contain)
            keeper(p->prog, argv, opts, parent, want_out, want_err, out_pipe, err_pipe, file_fd, exec_pipe[1],
                   report_pipe);
        if (pid == 0)
            child_exec(p->prog, argv, opts, parent, want_out, want_err, out_pipe, err_pipe, file_fd, exec_pipe[1]);
        if (pid < 0)
            rc = cf_error_set(err, CF_ERR_INTERNAL, "cannot start %s: fork: %s", p->prog, strerror(errno));
    }
    /* the child's ends, and everything when it did not start */
    close_fd(&out_pipe[1]);
    close_fd(&err_pipe[1]);
    close_fd(&exec_pipe[1]);
    close_fd(&file_fd);
    close_fd(&report_pipe[1]);
    if (rc == 0) {
        /* the exec pipe closes on a successful exec, or carries errno */
        int exec_errno = 0;
        ssize_t got;
        while ((got = read(exec_pipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
        }
        if (got == (ssize_t)sizeof exec_errno) {
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
            }
            rc = cf_error_set(err, CF_ERR_NOTFOUND, "%s: cannot run: %s", p->prog, strerror(exec_errno));
        }
    }
    close_fd(&exec_pipe[0]);
    if (rc < 0) {
        close_fd(&out_pipe[0]);
        close_fd(&err_pipe[0]);
        close_fd(&report_pipe[0]);
        cf_spawn_proc_release(p);
        return -1;
    }
    p->pid = pid;
    p->report_fd = report_pipe[0];
    p->out_fd = out_pipe[0];
    p->err_fd = err_pipe[0];
    return 0;
}

/* Reads what it writes (capture, log, on_line), enforces opts->timeout_s (counted
 * from the start) and reaps it; releases proc. Returns 0. */
static int spawn_wait(struct cf_spawn_proc *p, const struct cf_spawn_opts *opts, struct cf_spawn_result *res)
{
    static const struct cf_spawn_opts defaults;
    if (!opts)
        opts = &defaults;
    size_t limit = opts->capture_limit ? opts->capture_limit : (16u << 20);
    pid_t pid = p->pid;
    /* contained, the keeper holds the deadline; this one only in case it cannot */
    double timeout_s = opts->timeout_s > 0 && p->report_fd >= 0 ? opts->timeout_s + 10 : opts->timeout_s;
    double start = p->start;
    struct line_splitter ls = { STRBUF_INIT, opts->on_line, opts->line_ctx };
    struct pollfd pfd[2];
    int nfd = 0, idx_out = -1, idx_err = -1;
    if (p->out_fd >= 0)
        idx_out = nfd, pfd[nfd++] = (struct pollfd){ p->out_fd, POLLIN, 0 };
    if (p->err_fd >= 0)
        idx_err = nfd, pfd[nfd++] = (struct pollfd){ p->err_fd, POLLIN, 0 };
    int open_fds = nfd;
    char buf[65536];
    res->timed_out = 0;
    while (open_fds > 0) {
        int wait_ms = -1;
        if (timeout_s > 0) {
            double left = timeout_s - (cf_now_seconds() - start);
            if (left <= 0) {
                res->timed_out = 1;
                break;
            }
            wait_ms = (int)(left * 1000) + 1;
        }
        int pr = poll(pfd, (nfds_t)nfd, wait_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            break;
        for (int i = 0; i < nfd; i++) {
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(pfd[i].fd, buf, sizeof buf);
            if (n <= 0) {
                pfd[i].fd = -1;
                open_fds--;
                continue;
            }
            if (i == idx_out) {
                if (opts->capture_stdout)
                    keep_tail(&res->out, buf, (size_t)n, limit);
                if (p->log_fd >= 0 && write(p->log_fd, buf, (size_t)n) < 0) {}
                split_lines(&ls, buf, (size_t)n);
            } else if (i == idx_err) {
                keep_tail(&res->err, buf, (size_t)n, limit);
            }
        }
    }
    /* Without pipes, or after a timeout, the wait below still honours the deadline. */
    int status = 0;
    for (;;) {
        if (!res->timed_out && timeout_s > 0 && cf_now_seconds() - start >= timeout_s)
            res->timed_out = 1;
        if (res->timed_out) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            break;
        }
        pid_t w = waitpid(pid, &status, timeout_s > 0 ? WNOHANG : 0);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (w == 0) {
            struct timespec ts = { 0, 2000000 };
            nanosleep(&ts, NULL);
        }
    }
    if (ls.partial.len && ls.fn)
        ls.fn(ls.ctx, cf_sb_str(&ls.partial));
    cf_sb_release(&ls.partial);
    res->seconds = cf_now_seconds() - start;
    res->exited = WIFEXITED(status);
    res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    res->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    struct cf_keeper_report rep;
    if (p->report_fd >= 0 && read(p->report_fd, &rep, sizeof rep) == (ssize_t)sizeof rep) {
        res->left_behind = rep.left_behind;
        res->timed_out |= rep.timed_out;
    }
    cf_spawn_proc_release(p);
    return 0;
}

int cf_spawn_run(const char *const *argv, const struct cf_spawn_opts *opts,
                 struct cf_spawn_result *res, cf_error *err)
{
    struct cf_spawn_proc p;
    if (cf_spawn_start(argv, opts, &p, err) < 0)
        return -1;
    return spawn_wait(&p, opts, res);
}

void cf_spawn_result_release(struct cf_spawn_result *res)
{
    cf_sb_release(&res->out);
    cf_sb_release(&res->err);
}

int cf_spawn_ok(const struct cf_spawn_result *res)
{
    return res->exited && res->exit_code == 0 && !res->timed_out;
}

char *cf_spawn_describe(const struct cf_spawn_result *res)
{
    if (res->timed_out)
        return cf_asprintf("timed out after %.0fs", res->seconds);
    if (res->exited)
        return cf_asprintf("exit %d", res->exit_code);
    return cf_asprintf("killed by signal %d (%s)", res->term_signal, strsignal(res->term_signal));
}

struct cf_spawn_opts cf_spawn_probe_opts(double timeout_s)
{
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.capture_stderr = 1;
    o.null_stdin = 1;
    o.timeout_s = timeout_s;
    return o;
}

char *cf_capture(const char *const *argv, double timeout_s)
{
    struct cf_spawn_opts o = cf_spawn_probe_opts(timeout_s > 0 ? timeout_s : 10);
    o.capture_limit = 1 << 20;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    char *out = NULL;
    if (cf_spawn_run(argv, &o, &r, NULL) == 0 && cf_spawn_ok(&r)) {
        cf_sb_rtrim(&r.out);
        out = cf_sb_detach(&r.out);
    }
    cf_spawn_result_release(&r);
    return out;
}
