/* The keeper (spawn_keeper.h). A program's descendants cannot slip past a
 * subreaper: when any of them dies, its children are reparented to the
 * nearest subreaper above, so every process the program started and that is
 * still alive is, at the end, a child of the keeper, which lists its children
 * (/proc/self/task/<tid>/children, or a scan of /proc for its pid as parent)
 * and kills them until none is left. A process cannot fork once SIGKILL is
 * pending, so each round leaves fewer; the rounds stop after a few seconds
 * whatever happens (a process stuck in the kernel cannot die sooner). */
#include "util/spawn_keeper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/clock.h"

#define KILL_ROUNDS_S 5.0 /* the most the keeper spends killing */
#define MAX_LISTED 1024   /* children killed per round; more wait for the next */
#define MAX_COUNTED 4096  /* distinct pids counted (the count saturates there) */

static void wait_signals(sigset_t *s)
{
    sigemptyset(s);
    sigaddset(s, SIGCHLD);
    sigaddset(s, SIGTERM);
    sigaddset(s, SIGINT);
    sigaddset(s, SIGHUP);
}

void cf_keeper_begin(pid_t parent, sigset_t *orig)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(127);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* a caller that does not read the report (it closed its end) must not end the keeper */
    signal(SIGPIPE, SIG_IGN);
    sigset_t s;
    wait_signals(&s);
    sigprocmask(SIG_BLOCK, &s, orig);
}

/* A decimal pid at p (advanced past it), 0 when none. */
static pid_t read_pid(const char **p, const char *end)
{
    while (*p < end && (**p < '0' || **p > '9'))
        (*p)++;
    long v = 0;
    while (*p < end && **p >= '0' && **p <= '9' && v < 1 << 22)
        v = v * 10 + (*(*p)++ - '0');
    return (pid_t)v;
}

/* The keeper's children, from the kernel's list when it has one. */
static size_t children_listed(pid_t self, pid_t *out, size_t cap, int *have_list)
{
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)self, (int)self);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *have_list = fd >= 0;
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    size_t k = 0;
    for (const char *p = buf, *end = buf + (n > 0 ? n : 0); p < end && k < cap;) {
        pid_t pid = read_pid(&p, end);
        if (pid > 0)
            out[k++] = pid;
    }
    return k;
}

/* Without the kernel's list (CONFIG_PROC_CHILDREN off): every /proc/<pid>/stat
 * whose parent field is the keeper. */
static size_t children_scanned(pid_t self, pid_t *out, size_t cap)
{
    DIR *d = opendir("/proc");
    size_t k = 0;
    for (struct dirent *e; d && k < cap && (e = readdir(d));) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        const char *paren = strrchr(buf, ')'); /* the command name may hold anything */
        if (!paren || paren + 4 > buf + n)
            continue;
        const char *p = paren + 4; /* ") S " */
        if (read_pid(&p, buf + n) == self) {
            const char *q = e->d_name;
            out[k++] = read_pid(&q, q + strlen(q));
        }
    }
    if (d)
        closedir(d);
    return k;
}

/* Kills and reaps every descendant; the program's status when it is among
 * the reaped. Returns how many others there were. */
static int kill_tree(pid_t prog, int *status, int *have)
{
    pid_t self = getpid(), kids[MAX_LISTED], counted[MAX_COUNTED];
    size_t n_counted = 0;
    double until = cf_now_seconds() + KILL_ROUNDS_S;
    for (;;) {
        int st;
        pid_t w;
        while ((w = waitpid(-1, &st, WNOHANG)) > 0)
            if (w == prog) {
                *status = st;
                *have = 1;
            }
        if (w < 0 && errno == ECHILD)
            break; /* no child left at all */
        if (cf_now_seconds() > until)
            break;
        int have_list;
        size_t n = children_listed(self, kids, MAX_LISTED, &have_list);
        if (!have_list)
            n = children_scanned(self, kids, MAX_LISTED);
        for (size_t i = 0; i < n; i++) {
            kill(kids[i], SIGKILL);
            int seen = kids[i] == prog;
            for (size_t j = 0; j < n_counted && !seen; j++)
                seen = counted[j] == kids[i];
            if (!seen && n_counted < MAX_COUNTED)
                counted[n_counted++] = kids[i];
        }
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    return (int)n_counted;
}

void cf_keeper_run(pid_t prog, double timeout_s, int report_fd)
{
    double start = cf_now_seconds();
    int status = 0, have = 0;
    struct cf_keeper_report rep = { 0, 0 };
    sigset_t s;
    wait_signals(&s);
    for (;;) {
        int st;
        pid_t w;
        /* the program, and orphans that died on their own meanwhile */
        while ((w = waitpid(-1, &st, WNOHANG)) > 0)
            if (w == prog) {
                status = st;
                have = 1;
            }
        if (have)
            break;
        double left = timeout_s > 0 ? timeout_s - (cf_now_seconds() - start) : 1.0;
        if (left <= 0) {
            rep.timed_out = 1;
            break;
        }
        if (left > 1.0)
            left = 1.0;
        struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
        int sig = sigtimedwait(&s, NULL, &ts);
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
            break; /* cclforge is stopping it, or is gone */
    }
    if (!have) {
        kill(-prog, SIGKILL);
        kill(prog, SIGKILL);
    }
    rep.left_behind = kill_tree(prog, &status, &have);
    if (write(report_fd, &rep, sizeof rep) < 0) {
    }
    close(report_fd);
    if (have && WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    /* ended by a signal: the same one, without a core of the keeper */
    int sig = have && WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    struct rlimit none = { 0, 0 };
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    kill(getpid(), sig);
    _exit(128 + sig);
}
