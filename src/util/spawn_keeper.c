/* The keeper (spawn_keeper.h). A program's descendants cannot slip past a
 * subreaper: when any of them dies, its children are reparented to the
 * nearest subreaper above, so every process the program started and that is
 * still alive is, at the end, a child of the keeper, which kills and reaps
 * them (cf_reap_orphans) until none is left; the rounds stop after a few
 * seconds whatever happens. */
#include "util/spawn_keeper.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/orphans.h"

#define KILL_ROUNDS_S 5.0 /* the most the keeper spends killing */

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
    struct cf_orphans_end end;
    cf_reap_orphans(prog, 0, KILL_ROUNDS_S, &end);
    rep.left_behind = end.killed;
    if (end.watched_reaped) {
        status = end.watched_status;
        have = 1;
    }
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
