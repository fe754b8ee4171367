/* The one supervisor of a job's local processes: smoke's ranks (or the mpirun
 * that starts them), wheel verify's torch.distributed ranks. Each is started
 * from an argv, never a shell, with its own environment, leads its own process
 * group and is killed when cclforge dies. All share a deadline; once one fails
 * the others get a grace period to end on their own (a peer's death leaves them
 * waiting for ever), then are stopped: SIGTERM, then SIGKILL. Every process
 * started is reaped, and how each one ended is kept. Driven by polling
 * (cf_ranks_step), so that a caller can read the ranks' output in its own loop,
 * or blocking (cf_ranks_run). */
#ifndef CCLFORGE_RANKS_H
#define CCLFORGE_RANKS_H

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_rank_spec {
    const char *const *argv;    /* argv[0] a path, or a name found on PATH */
    const char *const *env_set; /* "KEY=VALUE" or "KEY" (unset) over cclforge's environment */
    const char *cwd;            /* NULL: inherited */
    const char *log;            /* stdout and stderr into this file, truncated */
    int pipe_output;            /* else stdout and stderr on one pipe (cf_ranks_take_output);
                                   neither: inherited */
    int keep_fd;                /* > 2: inherited at the same number (a listening socket) */
    int contain;                /* what it starts ends with it (cf_spawn_opts.contain) */
};

struct cf_ranks_opts {
    double timeout_s;   /* the deadline of every rank; 0: none */
    double grace_s;     /* once one rank failed (ended other than exit 0, or did not start), how
                           long the others may still run; < 0: the caller judges failure and
                           calls cf_ranks_stop */
    double term_wait_s; /* a stopped rank's time between SIGTERM and SIGKILL; 0: SIGKILL at once */
    int process_only;   /* signal each process, not its group: a launcher (mpirun) takes its own
                           ranks down on SIGTERM, and they follow it on SIGKILL */
};

enum cf_rank_end {
    CF_RANK_RUNNING,
    CF_RANK_EXITED,         /* code: its exit status */
    CF_RANK_SIGNALLED,      /* code: the signal (a crash) */
    CF_RANK_NOT_STARTED,    /* why: the reason (not found, log not writable) */
    CF_RANK_KILLED_TIMEOUT, /* still running at the deadline */
    CF_RANK_KILLED_PEER,    /* still running when another failed, or the caller stopped the run */
};

struct cf_rank_outcome {
    enum cf_rank_end end;
    int code;       /* exit status or signal, as it ended (the killed ones too) */
    int status;     /* the wait status */
    double seconds; /* from the start to its end */
    char why[256];
};

struct cf_ranks;

/* Starts the n ranks in order. One that cannot start is CF_RANK_NOT_STARTED and
 * counts as failed; first_err (when not NULL) gets the first such error. */
struct cf_ranks *cf_ranks_start(const struct cf_rank_spec *specs, int n, const struct cf_ranks_opts *o,
                                cf_error *first_err);
/* The read end of rank i's output (pipe_output), from now on the caller's to read
 * and close; -1 when none. */
int cf_ranks_take_output(struct cf_ranks *s, int i);
/* Reaps without blocking and enforces the deadline, the grace period and
 * SIGTERM's wait. ended[] (room for n) gets the ranks reaped by this call;
 * returns how many. */
int cf_ranks_step(struct cf_ranks *s, int *ended);
/* The ranks still running. */
int cf_ranks_live(const struct cf_ranks *s);
/* Stops every rank still running (CF_RANK_KILLED_PEER): SIGTERM then, after
 * term_wait_s, SIGKILL; or SIGKILL now when at_once. */
void cf_ranks_stop(struct cf_ranks *s, int at_once);
const struct cf_rank_outcome *cf_ranks_outcome(const struct cf_ranks *s, int i);
/* Kills (SIGKILL) and reaps whatever still runs, then frees s. */
void cf_ranks_free(struct cf_ranks *s);

/* Starts the n ranks, waits until every one has ended (at most timeout_s, plus
 * term_wait_s to kill), and writes how each ended into out[n]. */
void cf_ranks_run(const struct cf_rank_spec *specs, int n, const struct cf_ranks_opts *o,
                  struct cf_rank_outcome *out);
/* "exit 1 after 2.0 s", "killed by signal 11 (a crash)", "hung: killed at the
 * 600 s deadline", ... Caller frees. */
char *cf_rank_describe(const struct cf_rank_outcome *o, double timeout_s);

#ifdef __cplusplus
}
#endif
#endif
