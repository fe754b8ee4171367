/* The local ranks of `doctor --gather -n N` (local_ranks.c). */
#ifndef CCLFORGE_DOCTOR_LOCAL_RANKS_H
#define CCLFORGE_DOCTOR_LOCAL_RANKS_H

#include <sys/types.h>

#include "cclforge/error.h"
#include "cclforge/gather.h"

struct local_ranks {
    pid_t starter; /* the process that starts ranks 1..N-1; -1: none */
    int fd;        /* its report: closed when every rank started, or the reason one did not */
    int failed;    /* fd said why a rank did not start */
};

/* A rank's side of the gather, given the options it would have as a rank
 * started by a launcher (gather.c's; a pointer, so that the two files do
 * not call each other). */
typedef int cf_local_rank_fn(const struct cf_gather_opts *o);
/* Forks the starter, which forks ranks 1..o->local_ranks-1 one after
 * another (each runs `run` with cclforge's launcher variables in its
 * environment, rank 0 at 127.0.0.1:port) and then waits for them, while this
 * process (rank 0) accepts them. listen_fd is closed in the starter. */
int cf_local_ranks_start(const struct cf_gather_opts *o, int listen_fd, int port, const char *secret_hex,
                         cf_local_rank_fn *run, struct local_ranks *lr, cf_error *err);
/* For cf_launch_collect_watching on lr->fd: the starter's report read;
 * -1 (err: which rank could not start, and why) when it failed. */
int cf_local_ranks_ready(void *lr, cf_error *err);
/* Waits (at most 5 s) for the starter and the ranks; then kills the starter,
 * whose ranks get SIGTERM (their parent-death signal). */
void cf_local_ranks_reap(struct local_ranks *lr);

#endif
