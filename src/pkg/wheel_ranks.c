/* A small supervisor: each rank started by cf_spawn_start (its own process
 * group, SIGKILL when cclforge dies, output straight into its log), then a
 * polling wait with deadlines (waitpid with WNOHANG every 20 ms: the ranks run
 * for seconds to minutes). */
#include "pkg/wheel_ranks.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cclforge/clock.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"

#define POLL_NS 20000000L   /* 20 ms */
#define TERM_WAIT_S 3.0     /* after SIGTERM, before SIGKILL */

static pid_t start_rank(const struct cf_rank_spec *r, struct cf_rank_outcome *o)
{
    struct cf_spawn_opts so = { 0 };
    so.cwd = r->cwd;
    so.env_set = r->env_set;
    so.null_stdin = 1;
    so.output_path = r->log;
    so.pdeathsig = SIGKILL;
    so.contain = 1; /* what a rank starts (the wheel's code runs in it) ends with it */
    struct cf_spawn_proc proc = CF_SPAWN_PROC_INIT;
    cf_error err = CF_ERROR_INIT;
    pid_t pid = -1;
    if (cf_spawn_start(r->argv, &so, &proc, &err) == 0)
        pid = proc.pid;
    else
        snprintf(o->why, sizeof o->why, "%s", cf_error_message(&err));
    cf_error_clear(&err);
    cf_spawn_proc_release(&proc);
    return pid;
}

static void stop(pid_t pid, int sig)
{
    if (pid > 0) {
        kill(-pid, sig);
        kill(pid, sig);
    }
}

void cf_wheel_run_ranks(const struct cf_rank_spec *ranks, int n, double timeout_s, double grace_s,
                        struct cf_rank_outcome *out)
{
    pid_t *pids = cf_xcalloc((size_t)n, sizeof *pids);
    double *term_at = cf_xcalloc((size_t)n, sizeof *term_at);
    double t0 = cf_now_seconds(), deadline = t0 + timeout_s, failed_at = 0;
    int live = 0;
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        pids[i] = start_rank(&ranks[i], &out[i]);
        if (pids[i] < 0) {
            out[i].end = CF_RANK_NOT_STARTED;
            failed_at = t0; /* the others wait for a peer that never comes */
        } else {
            live++;
        }
    }
    while (live > 0) {
        double now = cf_now_seconds();
        for (int i = 0; i < n; i++) {
            int st;
            if (pids[i] <= 0)
                continue;
            pid_t w = waitpid(pids[i], &st, WNOHANG);
            if (w == 0 || (w < 0 && errno == EINTR))
                continue;
            if (w > 0 && WIFEXITED(st)) {
                if (!term_at[i])
                    out[i].end = CF_RANK_EXITED;
                out[i].code = WEXITSTATUS(st);
            } else if (w > 0 && WIFSIGNALED(st)) {
                if (!term_at[i])
                    out[i].end = CF_RANK_SIGNALLED;
                out[i].code = WTERMSIG(st);
            }
            stop(pids[i], SIGKILL); /* whatever the rank left running in its group */
            out[i].seconds = now - t0;
            pids[i] = 0;
            live--;
            if (!failed_at && (out[i].end != CF_RANK_EXITED || out[i].code != 0))
                failed_at = now;
        }
        for (int i = 0; i < n; i++) {
            if (pids[i] <= 0)
                continue;
            int over = now >= deadline, peer = failed_at && now >= failed_at + grace_s;
            if (!term_at[i] && (over || peer)) {
                out[i].end = over ? CF_RANK_KILLED_TIMEOUT : CF_RANK_KILLED_PEER;
                term_at[i] = now;
                stop(pids[i], SIGTERM);
            } else if (term_at[i] && now >= term_at[i] + TERM_WAIT_S) {
                stop(pids[i], SIGKILL);
            }
        }
        if (live > 0)
            nanosleep(&(struct timespec){ 0, POLL_NS }, NULL);
    }
    free(pids);
    free(term_at);
}

char *cf_rank_describe(const struct cf_rank_outcome *o, double timeout_s)
{
    switch (o->end) {
    case CF_RANK_EXITED:
        return cf_asprintf("exit %d after %.1f s", o->code, o->seconds);
    case CF_RANK_SIGNALLED:
        return cf_asprintf("killed by signal %d (a crash) after %.1f s", o->code, o->seconds);
    case CF_RANK_NOT_STARTED:
        return cf_asprintf("could not be started: %s", o->why[0] ? o->why : "?");
    case CF_RANK_KILLED_TIMEOUT:
        return cf_asprintf("hung: killed at the %.0f s deadline", timeout_s);
    case CF_RANK_KILLED_PEER:
        return cf_asprintf("still running after another rank failed: killed at %.1f s", o->seconds);
    }
    return cf_strdup("?");
}
