/* The rank supervisor (cclforge/ranks.h): each rank started by cf_spawn_start
 * (its own process group, SIGKILL when cclforge dies), then reaped with
 * waitpid(WNOHANG) from the caller's loop, or every 20 ms in cf_ranks_run (the
 * ranks run for seconds to minutes). */
#include "cclforge/ranks.h"

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

#define POLL_NS 20000000L /* cf_ranks_run's step: 20 ms */
/* The wait status of a rank that another waitpid reaped (ECHILD): nothing is
 * left to wait for, and it did not end well that we know of. */
#define REAPED_ELSEWHERE SIGKILL

struct rank {
    struct cf_spawn_proc sp;
    struct cf_rank_outcome out;
    int live;
    double term_at; /* when it was sent SIGTERM; 0: not yet */
    int killed;     /* sent SIGKILL */
};

struct cf_ranks {
    struct cf_ranks_opts o;
    int n, live;
    double t0, failed_at; /* failed_at: the first failure; 0: none */
    struct rank *r;
};

static int start_one(const struct cf_rank_spec *spec, struct rank *r, cf_error *err)
{
    struct cf_spawn_opts so;
    memset(&so, 0, sizeof so);
    so.cwd = spec->cwd;
    so.env_set = spec->env_set;
    so.null_stdin = 1;
    so.output_path = spec->log;
    so.capture_stdout = spec->pipe_output; /* the caller reads it */
    so.merge_stderr = spec->pipe_output;
    so.pdeathsig = SIGKILL; /* no orphans if cclforge dies */
    so.contain = spec->contain;
    so.keep_fds = spec->keep_fd > 2 ? &spec->keep_fd : NULL;
    so.n_keep_fds = spec->keep_fd > 2;
    return cf_spawn_start(spec->argv, &so, &r->sp, err);
}

struct cf_ranks *cf_ranks_start(const struct cf_rank_spec *specs, int n, const struct cf_ranks_opts *o,
                                cf_error *first_err)
{
    struct cf_ranks *s = cf_xcalloc(1, sizeof *s);
    s->o = *o;
    s->n = n;
    s->r = cf_xcalloc((size_t)(n > 0 ? n : 1), sizeof *s->r);
    s->t0 = cf_now_seconds();
    for (int i = 0; i < n; i++) {
        struct rank *r = &s->r[i];
        r->sp = (struct cf_spawn_proc)CF_SPAWN_PROC_INIT;
        cf_error err = CF_ERROR_INIT;
        if (start_one(&specs[i], r, &err) == 0) {
            r->live = 1;
            s->live++;
        } else {
            r->out.end = CF_RANK_NOT_STARTED;
            snprintf(r->out.why, sizeof r->out.why, "%s", cf_error_message(&err));
            if (!s->failed_at)
                s->failed_at = s->t0; /* the others wait for a peer that never comes */
            if (first_err && first_err->kind == CF_OK)
                cf_error_set(first_err, err.kind, "%s", cf_error_message(&err));
        }
        cf_error_clear(&err);
    }
    return s;
}

int cf_ranks_take_output(struct cf_ranks *s, int i)
{
    int fd = s->r[i].sp.out_fd;
    s->r[i].sp.out_fd = -1;
    return fd;
}

static void signal_rank(const struct cf_ranks *s, const struct rank *r, int sig)
{
    if (r->sp.pid <= 0)
        return;
    if (!s->o.process_only)
        kill(-r->sp.pid, sig);
    kill(r->sp.pid, sig);
}

static void stop_rank(struct cf_ranks *s, struct rank *r, enum cf_rank_end why, int at_once, double now)
{
    if (r->out.end == CF_RANK_RUNNING)
        r->out.end = why;
    if (at_once || s->o.term_wait_s <= 0) {
        if (!r->killed)
            signal_rank(s, r, SIGKILL);
        r->killed = 1;
    } else if (!r->term_at) {
        signal_rank(s, r, SIGTERM);
        r->term_at = now;
    }
}

static int ended(const struct rank *r)
{
    return !r->live;
}

static void note_end(struct cf_ranks *s, struct rank *r, int status, double now)
{
    r->live = 0;
    s->live--;
    r->out.status = status;
    r->out.seconds = now - s->t0;
    int exited = WIFEXITED(status);
    r->out.code = exited ? WEXITSTATUS(status) : WTERMSIG(status);
    if (r->out.end == CF_RANK_RUNNING)
        r->out.end = exited ? CF_RANK_EXITED : CF_RANK_SIGNALLED;
    if (!s->o.process_only)
        kill(-r->sp.pid, SIGKILL); /* whatever it left running in its group */
    if (!s->failed_at && (r->out.end != CF_RANK_EXITED || r->out.code != 0))
        s->failed_at = now;
}

int cf_ranks_step(struct cf_ranks *s, int *ended_out)
{
    double now = cf_now_seconds();
    int k = 0;
    for (int i = 0; i < s->n; i++) {
        struct rank *r = &s->r[i];
        if (ended(r))
            continue;
        int status;
        pid_t w = waitpid(r->sp.pid, &status, WNOHANG);
        if (w == r->sp.pid) {
            note_end(s, r, status, now);
            ended_out[k++] = i;
        } else if (w < 0 && errno == ECHILD) {
            note_end(s, r, REAPED_ELSEWHERE, now);
            ended_out[k++] = i;
        }
    }
    double deadline = s->o.timeout_s > 0 ? s->t0 + s->o.timeout_s : 0;
    int peer = s->o.grace_s >= 0 && s->failed_at && now >= s->failed_at + s->o.grace_s;
    for (int i = 0; i < s->n; i++) {
        struct rank *r = &s->r[i];
        if (ended(r))
            continue;
        if (r->out.end == CF_RANK_RUNNING && ((deadline && now >= deadline) || peer))
            stop_rank(s, r, deadline && now >= deadline ? CF_RANK_KILLED_TIMEOUT : CF_RANK_KILLED_PEER, 0, now);
        else if (r->term_at && !r->killed && now >= r->term_at + s->o.term_wait_s)
            stop_rank(s, r, CF_RANK_KILLED_PEER, 1, now);
    }
    return k;
}

int cf_ranks_live(const struct cf_ranks *s)
{
    return s->live;
}

void cf_ranks_stop(struct cf_ranks *s, int at_once)
{
    double now = cf_now_seconds();
    for (int i = 0; i < s->n; i++)
        if (!ended(&s->r[i]))
            stop_rank(s, &s->r[i], CF_RANK_KILLED_PEER, at_once, now);
}

const struct cf_rank_outcome *cf_ranks_outcome(const struct cf_ranks *s, int i)
{
    return &s->r[i].out;
}

void cf_ranks_free(struct cf_ranks *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        struct rank *r = &s->r[i];
        if (!ended(r)) {
            stop_rank(s, r, CF_RANK_KILLED_PEER, 1, cf_now_seconds());
            int status = REAPED_ELSEWHERE;
            while (waitpid(r->sp.pid, &status, 0) < 0 && errno == EINTR) {
            }
            note_end(s, r, status, cf_now_seconds());
        }
        cf_spawn_proc_release(&r->sp);
    }
    free(s->r);
    free(s);
}

void cf_ranks_run(const struct cf_rank_spec *specs, int n, const struct cf_ranks_opts *o,
                  struct cf_rank_outcome *out)
{
    struct cf_ranks *s = cf_ranks_start(specs, n, o, NULL);
    int *ended_now = cf_xcalloc((size_t)(n > 0 ? n : 1), sizeof *ended_now);
    for (;;) {
        cf_ranks_step(s, ended_now);
        if (!s->live)
            break;
        nanosleep(&(struct timespec){ 0, POLL_NS }, NULL);
    }
    for (int i = 0; i < n; i++)
        out[i] = s->r[i].out;
    free(ended_now);
    cf_ranks_free(s);
}

char *cf_rank_describe(const struct cf_rank_outcome *o, double timeout_s)
{
    switch (o->end) {
    case CF_RANK_RUNNING:
        return cf_strdup("still running");
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
