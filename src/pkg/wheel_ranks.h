/* `wheel verify --smoke`: N rank processes started together and waited for
 * with a deadline, as `cclforge smoke` supervises its ranks: a rank that
 * hangs (a bridge stuck in a collective) is killed at the deadline, and once
 * one rank has failed the others get a grace period to fail on their own,
 * then are killed (a peer's death leaves them waiting forever). Each rank is
 * its own process group, killed whole, and dies with cclforge. Internal to
 * src/pkg. */
#ifndef CCLFORGE_PKG_WHEEL_RANKS_H
#define CCLFORGE_PKG_WHEEL_RANKS_H

struct cf_rank_spec {
    const char *const *argv;    /* argv[0] a path, or a name found on PATH */
    const char *const *env_set; /* "KEY=VALUE" or "KEY" (unset) over cclforge's environment */
    const char *cwd;
    const char *log;            /* stdout and stderr, truncated; NULL: inherited */
};

enum cf_rank_end { CF_RANK_EXITED, CF_RANK_SIGNALLED, CF_RANK_NOT_STARTED, CF_RANK_KILLED_TIMEOUT, CF_RANK_KILLED_PEER };

struct cf_rank_outcome {
    enum cf_rank_end end;
    int code;                 /* exit code or signal */
    double seconds;
    char why[256];            /* CF_RANK_NOT_STARTED: the reason (not found, log not writable) */
};

/* Runs the n ranks; returns when every one has ended (at most timeout_s plus
 * a few seconds to kill). */
void cf_wheel_run_ranks(const struct cf_rank_spec *ranks, int n, double timeout_s, double grace_s,
                        struct cf_rank_outcome *out);
/* "exit 1", "killed by signal 11", "hung: killed after 600 s", ... Caller frees. */
char *cf_rank_describe(const struct cf_rank_outcome *o, double timeout_s);

#endif
