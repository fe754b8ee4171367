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

/* Forks the starter, which starts ranks 1..o->local_ranks-1 (this program
 * again with cclforge's launcher variables, rank 0 at 127.0.0.1:port) one
 * after another and then waits for them, while this process (rank 0)
 * accepts them. listen_fd is closed in the starter. */
int cf_local_ranks_start(const struct cf_gather_opts *o, int listen_fd, int port, const char *secret_hex,
                         struct local_ranks *lr, cf_error *err);
/* For cf_launch_collect_watching on lr->fd: the starter's report read;
 * -1 (err: which rank could not start, and why) when it failed. */
int cf_local_ranks_ready(void *lr, cf_error *err);
/* Waits (at most 5 s) for the starter and the ranks; then kills the starter,
 * whose ranks get SIGTERM (their parent-death signal). */
void cf_local_ranks_reap(struct local_ranks *lr);

#endif
