/* The local ranks of `doctor --gather -n N`, started by a process of their
 * own. Rank 0 used to start all N-1 itself before it accepted any: every
 * fork copied rank 0's page tables and its table of descriptors, and every
 * start waited for that rank's exec, so starting and accepting were serial
 * (issue 30: 1,024 ranks, 2 cores). The starter is forked once, before rank
 * 0 has accepted anything or surveyed (few descriptors, a small heap): it
 * forks the ranks one after another on one core while rank 0 accepts,
 * authenticates and reads those already started on the other. */
#include "doctor/local_ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/envp.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/launch.h"
#include "cclforge/strbuf.h"

#define REAP_S 5.0 /* how long rank 0 waits for the ranks after its reply */

/* Rank r, in a child forked from the starter: the environment an exec'd
 * rank would get (the caller's, with cclforge's launcher variables set:
 * cf_launch_detect and the secret read as under any launcher), stdin and
 * output on /dev/null (only rank 0 reports), then the rank's side of the
 * gather. No exec: a fresh image costs each rank an exec, the loader and
 * its relocations, ~1 ms of CPU, as much as all the rest of what it does. */
__attribute__((noreturn)) static void rank_child(const struct cf_gather_opts *o, int r, int port,
                                                 const char *secret_hex, cf_local_rank_fn *run)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* the starter gone: this rank too */
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2)
            close(null);
    }
    struct strvec ours = STRVEC_INIT, env = STRVEC_INIT;
    cf_strvec_pushf(&ours, "%s=%d", CF_LAUNCH_RANK_ENV, r);
    cf_strvec_pushf(&ours, "%s=%d", CF_LAUNCH_WORLD_ENV, o->local_ranks);
    cf_strvec_pushf(&ours, "%s=%d", CF_LAUNCH_LOCAL_RANK_ENV, r);
    cf_strvec_pushf(&ours, "%s=127.0.0.1", CF_LAUNCH_ADDR_ENV);
    cf_strvec_pushf(&ours, "%s=%d", CF_LAUNCH_PORT_ENV, port);
    cf_strvec_pushf(&ours, "%s=%s", CF_LAUNCH_SECRET_ENV, secret_hex);
    cf_envp_with(o->envp, (const char *const *)cf_strvec_argv(&ours), &env);
    struct cf_gather_opts ro = *o;
    ro.envp = cf_strvec_argv(&env);
    ro.local_ranks = 0;
    _exit(run(&ro) == 0 ? 0 : 1);
}

/* The starter: never returns. Its report on fd is empty when every rank
 * started, else the first failure's words. */
__attribute__((noreturn)) static void starter(const struct cf_gather_opts *o, int port, const char *secret_hex,
                                              cf_local_rank_fn *run, int fd)
{
    /* rank 0 gone (killed, or its reap gave up): stop; the ranks follow (their own PDEATHSIG) */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    pid_t *pids = cf_xcalloc((size_t)o->local_ranks, sizeof *pids);
    int failed = 0;
    for (int r = 1; r < o->local_ranks && !failed; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            close(fd);
            rank_child(o, r, port, secret_hex, run);
        }
        if (pids[r] < 0) {
            char *why = cf_asprintf("cannot start local rank %d of %d: fork: %s", r, o->local_ranks, strerror(errno));
            if (write(fd, why, strlen(why)) < 0) {
            }
            free(why);
            failed = 1;
        }
    }
    close(fd); /* rank 0 sees the end of the report */
    for (int r = 1; r < o->local_ranks; r++)
        while (pids[r] > 0 && waitpid(pids[r], NULL, 0) < 0 && errno == EINTR) {
        }
    _exit(failed);
}

int cf_local_ranks_start(const struct cf_gather_opts *o, int listen_fd, int port, const char *secret_hex,
                         cf_local_rank_fn *run, struct local_ranks *lr, cf_error *err)
{
    memset(lr, 0, sizeof *lr);
    lr->starter = -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        lr->fd = -1;
        return cf_error_set(err, CF_ERR_INTERNAL, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        close(listen_fd); /* rank 0's port is rank 0's alone: the ranks must not queue on a copy */
        starter(o, port, secret_hex, run, p[1]);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        lr->fd = -1;
        return cf_error_set(err, CF_ERR_INTERNAL, "cannot start the local ranks: fork: %s", strerror(errno));
    }
    lr->starter = pid;
    lr->fd = p[0];
    return 0;
}

int cf_local_ranks_ready(void *ctx, cf_error *err)
{
    struct local_ranks *lr = ctx;
    char buf[512];
    ssize_t n;
    while ((n = read(lr->fd, buf, sizeof buf - 1)) < 0 && errno == EINTR) {
    }
    if (n > 0) {
        buf[n] = 0;
        lr->failed = 1;
        return cf_error_set(err, CF_ERR_FAILED, "%s", buf);
    }
    return 0; /* the end: every rank started (or the pipe failed: the missing are named) */
}

void cf_local_ranks_reap(struct local_ranks *lr)
{
    if (lr->fd >= 0)
        close(lr->fd);
    lr->fd = -1;
    if (lr->starter <= 0)
        return;
    double until = cf_now_seconds() + REAP_S;
    while (waitpid(lr->starter, NULL, WNOHANG) == 0) {
        if (cf_now_seconds() > until) {
            kill(lr->starter, SIGKILL);
            waitpid(lr->starter, NULL, 0);
            break;
        }
        usleep(10000);
    }
    lr->starter = -1;
}
