/* Running other programs: always with an argv vector, never through a shell. */
#ifndef CCLFORGE_SPAWN_H
#define CCLFORGE_SPAWN_H

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*cf_line_fn)(void *ctx, const char *line);

struct cf_spawn_opts {
    const char *cwd;               /* NULL: inherit */
    const char *const *env_set;    /* "KEY=VALUE" or "KEY" (unset) applied in the child */
    int capture_stdout;            /* keep stdout in result.out */
    int capture_stderr;            /* keep stderr in result.err */
    int merge_stderr;              /* stderr goes where stdout goes */
    int null_stdin;                /* stdin from /dev/null (default inherits) */
    const char *log_path;          /* also append stdout (and merged stderr) to this file */
    const char *output_path;       /* stdout and stderr straight into this file (created or
                                      truncated, never a symlink), no pipe: for long runs nobody
                                      reads live; capture, log_path and on_line then see nothing */
    size_t capture_limit;          /* bytes kept per stream, the tail wins; 0 = 16 MiB */
    double timeout_s;              /* 0 = none; on expiry the process group is killed */
    cf_line_fn on_line;            /* called for each stdout line (progress parsing) */
    void *line_ctx;
    const int *keep_fds;           /* descriptors the program inherits at the same numbers */
    size_t n_keep_fds;
    int pdeathsig;                 /* sent to it when cclforge dies; 0 = SIGTERM */
    int contain;                   /* every process it starts ends with it: a keeper process
                                      between cclforge and the program is the subreaper of
                                      its descendants (a setsid() daemon included) and kills
                                      what is left when the program ends, times out or
                                      cclforge goes; result.left_behind counts them, and a
                                      pipe an orphan held open never delays the wait */
};

struct cf_spawn_result {
    int exited;      /* 1 if it exited normally */
    int exit_code;   /* valid when exited */
    int term_signal; /* valid when !exited */
    int timed_out;
    double seconds;
    struct strbuf out;
    struct strbuf err;
    int left_behind; /* opts.contain: processes still running when it ended, killed */
};

#define CF_SPAWN_RESULT_INIT { 0, 0, 0, 0, 0.0, STRBUF_INIT, STRBUF_INIT, 0 }

/* The options of a probe or helper run: stdout and stderr captured, stdin from
 * /dev/null, the process group killed after timeout_s. Adjust fields after. */
struct cf_spawn_opts cf_spawn_probe_opts(double timeout_s);

/* A started program. It leads its own process group (a timeout kills the
 * group). Contained (opts.contain), pid is its keeper's, which ends as the
 * program ended: waitpid on it reads the same status. */
struct cf_spawn_proc {
    int pid;
    int out_fd;    /* read end of its stdout (and merged stderr) when piped, else -1 */
    int err_fd;    /* read end of its stderr when captured apart, else -1 */
    int log_fd;    /* opts->log_path, appended to while cf_spawn_run waits */
    double start;  /* cf_now_seconds() when it started */
    char *prog;    /* the program's full path */
    int report_fd; /* contained: the keeper's report (read by cf_spawn_run), else -1 */
};
#define CF_SPAWN_PROC_INIT { -1, -1, -1, -1, 0.0, NULL, -1 }

/* Starts argv[0] (searched on PATH when it has no '/') and returns once it has
 * exec'd. Returns 0, or -1 when it could not be started (not found, not
 * executable, fork failed), with err naming the program and nothing left open.
 * The caller reads proc->out_fd / err_fd itself and reaps the program. */
int cf_spawn_start(const char *const *argv, const struct cf_spawn_opts *opts, struct cf_spawn_proc *proc,
                   cf_error *err);
/* Closes what proc holds open (not the process: reap it with waitpid). */
void cf_spawn_proc_release(struct cf_spawn_proc *proc);

/* cf_spawn_start, then reads what it writes (capture, log, on_line), enforces
 * opts->timeout_s (counted from the start) and reaps it. Returns 0 when the program ran (check
 * result->exited/exit_code), -1 when it could not be started. */
int cf_spawn_run(const char *const *argv, const struct cf_spawn_opts *opts,
                 struct cf_spawn_result *result, cf_error *err);
void cf_spawn_result_release(struct cf_spawn_result *result);
/* 1 when the program ran, exited and returned 0. */
int cf_spawn_ok(const struct cf_spawn_result *result);
/* A one-line description of how it ended: "exit 2", "killed by signal 9", "timed out after 5s". */
char *cf_spawn_describe(const struct cf_spawn_result *result);

/* The full path of an executable found on PATH (or name itself if it has a '/'
 * and is executable), or NULL. Caller frees. */
char *cf_which(const char *name);

/* Runs a program and returns its trimmed stdout (first `max` bytes), or NULL if it
 * could not run or failed. Convenience for version probes. */
char *cf_capture(const char *const *argv, double timeout_s);

#ifdef __cplusplus
}
#endif
#endif
