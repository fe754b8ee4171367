/* The local supervisor: starts N ranks (forked, or through mpirun for MPI), reads
 * their records, enforces the per-operation timeout, and when one rank dies, hangs
 * or fails, names it and what it was doing, stops the others and reaps everyone. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cclforge/spawn.h"
#include "cclforge/clock.h"
#include "smoke/smoke_internal.h"

/* After the first failure the others may still report their own (an init failure
 * hits every rank, some later than others on a loaded box): a rank is stopped once it
 * has been silent this long, and all are stopped GRACE_MAX_S after the failure. */
#define GRACE_S 2.0
#define GRACE_MAX_S 15.0
/* mpirun gets this long after SIGTERM to take its ranks down before SIGKILL. */
#define TERM_WAIT_S 3.0
/* mpirun aborts the job by itself when a rank dies or fails; a SIGTERM in the middle
 * of that crashes it (Open MPI 4.1), so it gets this long before being told. */
#define MPIRUN_GRACE_S 5.0

struct rank_slot {
    int in_op;          /* the last record was BEGIN: it is inside that step */
    int waiting;        /* ... and that step waits for the other ranks */
    int done, failed;
    double last_rx;     /* when the supervisor last heard from it */
    double last_t;      /* the rank's own clock at its last record */
    struct strbuf doing;     /* the last BEGIN */
    struct strbuf last_done; /* the last finished test */
};

struct stream {
    int fd;
    int is_log;         /* mpirun's own output: plain lines only */
    int rank;           /* its rank; -1 until a rank's connection says who it is */
    pid_t pid;          /* the process to reap */
    int reaped, status;
    struct strbuf partial;
};

struct supervisor {
    const struct cf_smoke_opts *o;
    cf_smoke_event_fn on_event;
    void *ctx;
    struct cf_smoke_report *rep;
    int nranks;
    struct rank_slot *ranks;
    struct stream *streams;
    int nstreams, max_streams;
    int listen_fd;       /* mpirun mode: where the ranks connect, else -1 */
    struct cf_launch_secret secret; /* what a rank's connection must prove it knows */
    int mpirun;          /* streams[0] is mpirun's output */
    int mpirun_dead_rank; /* parsed from mpirun's "process rank N ... exited" */
    double first_failure;
    int first_failed_rank;
    int hung;            /* a hang was detected: nobody is going to say more */
    int stopping;
    double start;
};

static void forward(struct supervisor *sv, const struct cf_smoke_event *ev)
{
    if (sv->on_event)
        sv->on_event(sv->ctx, ev);
}

static char *state_of(const struct rank_slot *s)
{
    if (s->in_op)
        return cf_strdup(cf_sb_str(&s->doing));
    if (s->last_done.len)
        return cf_asprintf("between tests, after %s", cf_sb_str(&s->last_done));
    return cf_strdup(s->doing.len ? cf_sb_str(&s->doing) : "starting");
}

static void fail_rank(struct supervisor *sv, int rank, const char *reason)
{
    struct rank_slot *s = &sv->ranks[rank];
    if (s->failed || s->done)
        return;
    s->failed = 1;
    char *doing = state_of(s);
    cf_smoke_report_add_failure(sv->rep, rank, doing, reason);
    struct cf_smoke_event ev = { .kind = CF_EV_FAIL, .rank = rank, .local_rank = rank };
    struct strbuf text = STRBUF_INIT;
    cf_sb_addf(&text, "%s (while %s)", reason, doing);
    ev.text = cf_sb_str(&text);
    forward(sv, &ev);
    cf_sb_release(&text);
    free(doing);
    if (sv->first_failure == 0) {
        sv->first_failure = cf_now_seconds();
        sv->first_failed_rank = rank;
    }
}

/* Every rank gets a verdict: the ones stopped because another failed are named too. */
static void mark_stopped(struct supervisor *sv)
{
    if (!sv->first_failure)
        return;
    int first = sv->first_failed_rank;
    for (int r = 0; r < sv->nranks; r++) {
        if (sv->ranks[r].done || sv->ranks[r].failed)
            continue;
        char why[128];
        snprintf(why, sizeof why, "stopped after rank %d failed", first);
        fail_rank(sv, r, why);
    }
}

static void handle_record(struct supervisor *sv, struct stream *st, struct smoke_record *rec)
{
    int r = rec->ev.rank;
    if (st->rank < 0 && !st->is_log && r >= 0 && r < sv->nranks)
        st->rank = r; /* a rank's connection introduces itself with its first record */
    if (st->is_log || r < 0 || r >= sv->nranks || r != st->rank) {
        struct cf_smoke_event ev = { .kind = CF_EV_LOG, .rank = st->rank, .text = "(a record with a bad rank)" };
        forward(sv, &ev);
        return;
    }
    struct rank_slot *s = &sv->ranks[r];
    s->last_rx = cf_now_seconds();
    s->last_t = rec->ev.t;
    switch (rec->type) {
    case REC_BEGIN:
        s->in_op = 1;
        s->waiting = rec->waits;
        cf_sb_reset(&s->doing);
        cf_sb_adds(&s->doing, rec->text.len ? cf_sb_str(&rec->text) : "?");
        break;
    case REC_RESULT: {
        s->in_op = 0;
        s->waiting = 0;
        const struct cf_smoke_row *row = &rec->ev.row;
        char *what = cf_smoke_describe(row->op, row->dtype, row->bytes, row->in_place);
        cf_sb_reset(&s->last_done);
        cf_sb_adds(&s->last_done, what);
        free(what);
        forward(sv, &rec->ev);
        if (r == 0) { /* rank 0's rows carry the agreed time and the all-rank verdict */
            struct cf_smoke_row agreed = *row;
            agreed.wrong = rec->ev.wrong_all_ranks;
            agreed.ok = agreed.wrong == 0;
            cf_smoke_report_add_row(sv->rep, &agreed);
        }
        break;
    }
    case REC_INFO:
        forward(sv, &rec->ev);
        if (rec->ev.key && rec->ev.value && r == 0) {
            if (!strcmp(rec->ev.key, "lib_version") && !sv->rep->lib_version)
                sv->rep->lib_version = cf_strdup(rec->ev.value);
            if ((!strcmp(rec->ev.key, "lib_path") || !strcmp(rec->ev.key, "plugin_path")) && !sv->rep->lib_path)
                sv->rep->lib_path = cf_strdup(rec->ev.value);
        }
        break;
    case REC_FAIL:
        s->in_op = 1; /* the failure belongs to what it was doing */
        fail_rank(sv, r, rec->text.len ? cf_sb_str(&rec->text) : "failed");
        break;
    case REC_DONE:
        s->in_op = 0;
        s->done = 1;
        break;
    }
}

static void handle_line(struct supervisor *sv, struct stream *st, const char *line)
{
    struct smoke_record rec = { 0 };
    int rc = cf_smoke_record_decode(line, &rec);
    if (rc == 1) {
        handle_record(sv, st, &rec);
    } else {
        if (sv->mpirun) {
            const char *p = strstr(line, "process rank ");
            if (p)
                sv->mpirun_dead_rank = atoi(p + strlen("process rank "));
        }
        struct cf_smoke_event ev = { .kind = CF_EV_LOG, .rank = st->rank, .local_rank = st->rank, .text = line };
        forward(sv, &ev);
    }
    cf_smoke_record_release(&rec);
}

static void read_stream(struct supervisor *sv, struct stream *st)
{
    char buf[8192];
    ssize_t n = read(st->fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        if (st->partial.len)
            handle_line(sv, st, cf_sb_str(&st->partial));
        cf_sb_reset(&st->partial);
        close(st->fd);
        st->fd = -1;
        /* a rank connection that ends without DONE or FAIL: the rank died */
        if (sv->mpirun && !st->is_log && st->rank >= 0 && !sv->stopping && !sv->first_failure) {
            struct strbuf why = STRBUF_INIT;
            cf_sb_addf(&why, "rank %d died: its connection to the supervisor closed before it finished", st->rank);
            fail_rank(sv, st->rank, cf_sb_str(&why));
            cf_sb_release(&why);
        }
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            handle_line(sv, st, cf_sb_str(&st->partial));
            cf_sb_reset(&st->partial);
        } else if (st->partial.len < 65536) {
            cf_sb_addc(&st->partial, buf[i]);
        }
    }
}

static void describe_status(struct strbuf *sb, int status)
{
    if (WIFEXITED(status))
        cf_sb_addf(sb, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        cf_sb_addf(sb, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        cf_sb_adds(sb, "stopped");
}

static void stop_all(struct supervisor *sv, int sig)
{
    for (int i = 0; i < sv->nstreams; i++) {
        struct stream *st = &sv->streams[i];
        if (st->reaped || st->pid <= 0)
            continue;
        if (sv->mpirun) {
            kill(st->pid, sig); /* mpirun stops its own ranks on SIGTERM */
        } else {
            kill(-st->pid, sig); /* each forked rank leads its own process group */
            kill(st->pid, sig);
        }
    }
}

static void reap(struct supervisor *sv, int block)
{
    for (int i = 0; i < sv->nstreams; i++) {
        struct stream *st = &sv->streams[i];
        if (st->reaped || st->pid <= 0)
            continue;
        int status;
        pid_t p = waitpid(st->pid, &status, block ? 0 : WNOHANG);
        if (p != st->pid)
            continue;
        st->reaped = 1;
        st->status = status;
        /* what it wrote before it ended is still in the pipe: read it before judging */
        while (st->fd >= 0) {
            struct pollfd pfd = { st->fd, POLLIN, 0 };
            if (poll(&pfd, 1, 1000) <= 0)
                break;
            read_stream(sv, st);
        }
        if (sv->stopping)
            continue;
        if (!sv->mpirun) {
            struct rank_slot *s = &sv->ranks[st->rank];
            int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (!s->done && !s->failed) {
                struct strbuf why = STRBUF_INIT;
                cf_sb_addf(&why, "rank %d ", st->rank);
                describe_status(&why, status);
                if (clean)
                    cf_sb_adds(&why, " without finishing");
                fail_rank(sv, st->rank, cf_sb_str(&why));
                cf_sb_release(&why);
            }
        }
    }
}

/* Picks the rank that holds the others up: one that is not in a step that waits for
 * peers (the others wait in one for it), else the one silent the longest. */
static int hung_culprit(struct supervisor *sv)
{
    int best = -1;
    for (int r = 0; r < sv->nranks; r++) {
        struct rank_slot *s = &sv->ranks[r];
        if (s->done || s->failed)
            continue;
        if (best < 0 || (!s->waiting && sv->ranks[best].waiting) ||
            (s->waiting == sv->ranks[best].waiting && s->last_t < sv->ranks[best].last_t))
            best = r;
    }
    return best;
}

static void check_timeouts(struct supervisor *sv, double now)
{
    if (sv->first_failure || sv->o->op_timeout_s <= 0)
        return;
    int late = 0;
    for (int r = 0; r < sv->nranks; r++) {
        struct rank_slot *s = &sv->ranks[r];
        if (!s->done && !s->failed && now - s->last_rx > sv->o->op_timeout_s)
            late = 1;
    }
    if (!late)
        return;
    int culprit = hung_culprit(sv);
    struct strbuf why = STRBUF_INIT;
    cf_sb_addf(&why, "rank %d hung: no progress for %.1f s (per-operation timeout --timeout %g)", culprit,
            now - sv->ranks[culprit].last_rx, sv->o->op_timeout_s);
    for (int r = 0; r < sv->nranks; r++) {
        struct rank_slot *s = &sv->ranks[r];
        if (r == culprit || s->done || s->failed)
            continue;
        char *st = state_of(s);
        cf_sb_addf(&why, "; rank %d was %s%s", r, s->waiting ? "waiting in " : "", st);
        free(st);
    }
    fail_rank(sv, culprit, cf_sb_str(&why));
    cf_sb_release(&why);
    sv->hung = 1; /* nothing to wait for: the others are stuck too */
}

static int should_stop(struct supervisor *sv, double now)
{
    if (!sv->first_failure || sv->stopping)
        return 0;
    double since = now - sv->first_failure;
    if (sv->hung || since >= GRACE_MAX_S)
        return 1;
    if (since < (sv->mpirun ? MPIRUN_GRACE_S : GRACE_S))
        return 0;
    for (int r = 0; r < sv->nranks; r++) {
        const struct rank_slot *s = &sv->ranks[r];
        if (!s->done && !s->failed && now - s->last_rx < GRACE_S)
            return 0; /* still talking: let it say what went wrong for it */
    }
    return 1;
}

static int all_closed(struct supervisor *sv)
{
    for (int i = 0; i < sv->nstreams; i++)
        if (sv->streams[i].fd >= 0)
            return 0;
    return 1;
}

/* A connection counts only once it proved it is one of this run's ranks (the secret
 * in its environment) and is not a rank already connected: a stray costs at most
 * HANDSHAKE_S and never takes a rank's place. */
#define HANDSHAKE_S 0.5
static void accept_rank(struct supervisor *sv)
{
    int c = accept4(sv->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0)
        return;
    unsigned char *taken = cf_xcalloc((size_t)sv->nranks, 1);
    for (int i = 0; i < sv->nstreams; i++)
        if (!sv->streams[i].is_log && sv->streams[i].rank >= 0)
            taken[sv->streams[i].rank] = 1;
    struct cf_launch_peer peer;
    cf_error err = CF_ERROR_INIT;
    int ok = sv->nstreams < sv->max_streams &&
             cf_launch_accept_handshake(c, &sv->secret, SMOKE_RECORDS_TAG, sv->nranks, taken,
                                        cf_now_seconds() + HANDSHAKE_S, &peer, &err) == 0;
    free(taken);
    if (!ok) {
        struct cf_smoke_event ev = { .kind = CF_EV_LOG, .rank = -1 };
        char *text = cf_asprintf("ignored a connection to the record port: %s",
                                 err.message ? cf_error_message(&err) : "too many connections");
        ev.text = text;
        forward(sv, &ev);
        free(text);
        cf_error_clear(&err);
        close(c);
        return;
    }
    struct stream *st = &sv->streams[sv->nstreams++];
    memset(st, 0, sizeof *st);
    st->fd = c;
    st->rank = peer.rank;
}

static void supervise_loop(struct supervisor *sv)
{
    struct pollfd *pfds = cf_xcalloc((size_t)sv->max_streams + 1, sizeof *pfds);
    double term_sent = 0;
    while (!all_closed(sv)) {
        double now;
        int wait_ms = 200;
        int nfds = sv->nstreams;
        for (int i = 0; i < sv->nstreams; i++) {
            pfds[i].fd = sv->streams[i].fd;
            pfds[i].events = POLLIN;
            pfds[i].revents = 0;
        }
        if (sv->listen_fd >= 0) {
            pfds[nfds].fd = sv->listen_fd;
            pfds[nfds].events = POLLIN;
            pfds[nfds].revents = 0;
            nfds++;
        }
        int r = poll(pfds, (nfds_t)nfds, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        int listening = sv->listen_fd >= 0 && r > 0 && pfds[nfds - 1].revents;
        for (int i = 0; r > 0 && i < sv->nstreams; i++)
            if (pfds[i].revents && sv->streams[i].fd >= 0)
                read_stream(sv, &sv->streams[i]);
        if (listening)
            accept_rank(sv);
        reap(sv, 0);
        now = cf_now_seconds();
        check_timeouts(sv, now);
        if (should_stop(sv, now)) {
            sv->stopping = 1;
            sv->rep->aborted = 1;
            stop_all(sv, sv->mpirun ? SIGTERM : SIGKILL);
            term_sent = now;
        }
        if (sv->stopping && sv->mpirun && term_sent && now - term_sent > TERM_WAIT_S) {
            stop_all(sv, SIGKILL); /* its ranks follow through PR_SET_PDEATHSIG */
            term_sent = 0;
        }
    }
    free(pfds);
    if (!sv->stopping && sv->mpirun) {
        /* mpirun closed its output: it is exiting; give it a moment, then make sure */
        double until = cf_now_seconds() + TERM_WAIT_S;
        while (!sv->streams[0].reaped && cf_now_seconds() < until) {
            reap(sv, 0);
            usleep(10000);
        }
        if (!sv->streams[0].reaped)
            stop_all(sv, SIGKILL);
    }
    reap(sv, 1);
}

static void supervisor_init(struct supervisor *sv, const struct cf_smoke_opts *o, cf_smoke_event_fn on_event,
                            void *ctx, struct cf_smoke_report *rep, int nranks, int nstreams, int max_streams)
{
    memset(sv, 0, sizeof *sv);
    sv->o = o;
    sv->on_event = on_event;
    sv->ctx = ctx;
    sv->rep = rep;
    sv->nranks = nranks;
    sv->nstreams = nstreams;
    sv->max_streams = max_streams;
    sv->listen_fd = -1;
    sv->ranks = cf_xcalloc((size_t)nranks, sizeof *sv->ranks);
    sv->streams = cf_xcalloc((size_t)max_streams, sizeof *sv->streams);
    sv->start = cf_now_seconds();
    sv->mpirun_dead_rank = -1;
    for (int r = 0; r < nranks; r++)
        sv->ranks[r].last_rx = sv->start;
    for (int i = 0; i < max_streams; i++)
        sv->streams[i].fd = -1;
    rep->role = CF_ROLE_SUPERVISOR;
    rep->nranks = nranks;
}

static void supervisor_release(struct supervisor *sv)
{
    for (int r = 0; r < sv->nranks; r++) {
        cf_sb_release(&sv->ranks[r].doing);
        cf_sb_release(&sv->ranks[r].last_done);
    }
    for (int i = 0; i < sv->nstreams; i++) {
        if (sv->streams[i].fd >= 0)
            close(sv->streams[i].fd);
        cf_sb_release(&sv->streams[i].partial);
    }
    if (sv->listen_fd >= 0)
        close(sv->listen_fd);
    free(sv->ranks);
    free(sv->streams);
}

/* ---- forked ranks (nccl, rccl) ---- */

static void run_forked_rank(const struct cf_smoke_opts *o, int rank, int nranks, int port, int listen_fd,
                            const struct cf_launch_secret *secret)
{
    int one = 1;
    struct smoke_rank_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.opts = o;
    setup.ctx.rank = rank;
    setup.ctx.nranks = nranks;
    setup.ctx.local_rank = rank;
    setup.rdv.transport = SMOKE_ID_TCP;
    snprintf(setup.rdv.addr, sizeof setup.rdv.addr, "127.0.0.1");
    setup.rdv.port = port;
    setup.rdv.listen_fd = rank == 0 ? listen_fd : -1;
    setup.rdv.timeout_s = o->connect_timeout_s;
    setup.rdv.secret = *secret;
    if (rank != 0 && listen_fd >= 0)
        close(listen_fd);
    struct smoke_sink sink;
    cf_smoke_record_sink(&sink, &one, rank, rank);
    struct cf_smoke_report rep = { 0 };
    cf_error err = CF_ERROR_INIT;
    int rc = cf_smoke_rank_main(&setup, &sink, &rep, &err);
    struct cf_smoke_event ev = { .kind = rc < 0 ? CF_EV_FAIL : CF_EV_INFO, .rank = rank, .local_rank = rank };
    ev.text = rc < 0 ? cf_error_message(&err) : NULL;
    struct strbuf line = STRBUF_INIT;
    cf_smoke_record_encode(&line, rc < 0 ? REC_FAIL : REC_DONE, &ev, NULL, 0);
    fflush(stdout);
    fflush(stderr);
    cf_smoke_write_all(1, line.buf, line.len);
    /* _exit: the supervisor's atexit handlers and stdio buffers are not the rank's */
    _exit(rc < 0 ? 1 : 0);
}

int cf_smoke_supervise_fork(const struct cf_smoke_opts *o, cf_smoke_event_fn on_event, void *ctx,
                         struct cf_smoke_report *rep, cf_error *err)
{
    int n = o->nranks > 0 ? o->nranks : 1;
    int port = 0;
    /* rank 0 inherits an already listening socket: no port race, no retry storm */
    struct cf_launch_secret secret;
    if (cf_launch_secret_random(&secret, NULL, err) < 0)
        return -1;
    int listen_fd = n > 1 ? cf_launch_listen(0, 1, &port, NULL, 0, err) : -1;
    if (n > 1 && listen_fd < 0)
        return -1;
    struct supervisor sv;
    supervisor_init(&sv, o, on_event, ctx, rep, n, n, n);
    rep->launcher = "local";
    pid_t me = getpid();
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < n; r++) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
            cf_error_set(err, CF_ERR_INTERNAL, "pipe: %s", strerror(errno));
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            close(p[0]);
            close(p[1]);
            cf_error_set(err, CF_ERR_INTERNAL, "fork: %s", strerror(errno));
            break;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphans if the supervisor dies */
            if (getppid() != me)
                _exit(1);
            setpgid(0, 0);
            for (int i = 0; i < r; i++)
                close(sv.streams[i].fd);
            close(p[0]);
            int devnull = open("/dev/null", O_RDONLY);
            if (devnull >= 0)
                dup2(devnull, 0);
            dup2(p[1], 1);
            dup2(p[1], 2);
            setvbuf(stdout, NULL, _IOLBF, 0);
            run_forked_rank(o, r, n, port, listen_fd, &secret);
        }
        setpgid(pid, pid);
        close(p[1]);
        sv.streams[r].fd = p[0];
        sv.streams[r].rank = r;
        sv.streams[r].pid = pid;
    }
    if (listen_fd >= 0)
        close(listen_fd);
    int started = 0;
    for (int r = 0; r < n; r++)
        started += sv.streams[r].pid > 0;
    if (started < n) {
        sv.first_failure = 1; /* stop what did start */
        sv.stopping = 1;
        stop_all(&sv, SIGKILL);
        reap(&sv, 1);
        supervisor_release(&sv);
        return -1;
    }
    supervise_loop(&sv);
    mark_stopped(&sv);
    supervisor_release(&sv);
    return 0;
}

/* ---- mpirun (the MPI backend) ---- */

static void set_default_env(const char *key, const char *value)
{
    if (!getenv(key))
        setenv(key, value, 1);
}

int cf_smoke_supervise_mpirun(const struct cf_smoke_opts *o, cf_smoke_event_fn on_event, void *ctx,
                           struct cf_smoke_report *rep, cf_error *err)
{
    int n = o->nranks > 0 ? o->nranks : 1;
    char *mpirun = cf_which(o->mpirun ? o->mpirun : "mpirun");
    if (!mpirun)
        return cf_error_set(err, CF_ERR_NOTFOUND,
                            "%s: not found on PATH; the mpi backend needs Open MPI's mpirun (apt-get install "
                            "openmpi-bin) or give --mpirun PATH",
                            o->mpirun ? o->mpirun : "mpirun");
    if (!o->self_exe) {
        free(mpirun);
        return cf_error_set(err, CF_ERR_INTERNAL, "cannot re-run cclforge under mpirun: its path is unknown");
    }
    struct strvec argv = STRVEC_INIT;
    cf_strvec_push(&argv, mpirun);
    if (geteuid() == 0)
        cf_strvec_push(&argv, "--allow-run-as-root");
    cf_strvec_push(&argv, "--oversubscribe"); /* more ranks than cores is the point on a small box */
    cf_strvec_push(&argv, "--bind-to");
    cf_strvec_push(&argv, "none");
    cf_strvec_push(&argv, "-n");
    cf_strvec_pushf(&argv, "%d", n);
    cf_strvec_push(&argv, "-x");
    cf_strvec_push(&argv, SMOKE_SUPERVISED_ENV);
    cf_strvec_push(&argv, "-x");
    cf_strvec_push(&argv, SMOKE_SUPERVISOR_ENV);
    cf_strvec_push(&argv, "-x");
    cf_strvec_push(&argv, CF_LAUNCH_SECRET_ENV);
    cf_strvec_push(&argv, o->self_exe);
    for (char *const *a = o->self_argv; a && *a; a++)
        cf_strvec_push(&argv, *a);

    int port = 0;
    struct cf_launch_secret secret;
    char secret_hex[65];
    int listen_fd = cf_launch_secret_random(&secret, secret_hex, err) < 0 ? -1
                                                                          : cf_launch_listen(0, 1, &port, NULL, 0, err);
    if (listen_fd < 0) {
        cf_strvec_clear(&argv);
        free(mpirun);
        return -1;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        close(listen_fd);
        cf_strvec_clear(&argv);
        free(mpirun);
        return cf_error_set(err, CF_ERR_INTERNAL, "pipe: %s", strerror(errno));
    }
    int exec_pipe[2];
    if (pipe2(exec_pipe, O_CLOEXEC) < 0) {
        close(listen_fd);
        close(p[0]);
        close(p[1]);
        cf_strvec_clear(&argv);
        free(mpirun);
        return cf_error_set(err, CF_ERR_INTERNAL, "pipe: %s", strerror(errno));
    }
    pid_t me = getpid();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != me)
            _exit(1);
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(p[1], 1);
        dup2(p[1], 2);
        setenv(SMOKE_SUPERVISED_ENV, "1", 1);
        char where[64];
        snprintf(where, sizeof where, "127.0.0.1:%d", port);
        setenv(SMOKE_SUPERVISOR_ENV, where, 1);
        setenv(CF_LAUNCH_SECRET_ENV, secret_hex, 1);
        /* one box, loopback only: shared memory between ranks, TCP only on lo */
        set_default_env("OMPI_MCA_btl", "self,vader");
        set_default_env("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
        set_default_env("OMPI_MCA_oob_tcp_if_include", "lo");
        set_default_env("OMPI_MCA_btl_tcp_if_include", "lo");
        set_default_env("OMPI_MCA_rmaps_base_oversubscribe", "1");
        execv(mpirun, cf_strvec_argv(&argv));
        int e = errno;
        if (write(exec_pipe[1], &e, sizeof e) < 0) {
        }
        _exit(127);
    }
    close(p[1]);
    close(exec_pipe[1]);
    int exec_errno = 0;
    ssize_t got = pid > 0 ? read(exec_pipe[0], &exec_errno, sizeof exec_errno) : 0;
    close(exec_pipe[0]);
    if (pid < 0 || got == (ssize_t)sizeof exec_errno) {
        int e = pid < 0 ? errno : exec_errno;
        close(listen_fd);
        close(p[0]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        cf_error_set(err, CF_ERR_FAILED, "cannot start %s: %s", mpirun, strerror(e));
        cf_strvec_clear(&argv);
        free(mpirun);
        return -1;
    }
    cf_strvec_clear(&argv);
    free(mpirun);

    struct supervisor sv;
    supervisor_init(&sv, o, on_event, ctx, rep, n, 1, n + 1);
    rep->launcher = "mpirun";
    sv.mpirun = 1;
    sv.listen_fd = listen_fd;
    sv.secret = secret;
    sv.streams[0].fd = p[0];
    sv.streams[0].is_log = 1;
    sv.streams[0].rank = -1;
    sv.streams[0].pid = pid;
    supervise_loop(&sv);

    /* ranks that neither finished nor said why: mpirun stopped them, or one died */
    int status = sv.streams[0].status;
    if (!sv.stopping) {
        struct strbuf why = STRBUF_INIT;
        cf_sb_adds(&why, "mpirun ");
        describe_status(&why, status);
        int dead = sv.first_failure ? -2 : sv.mpirun_dead_rank; /* -2: already explained */
        if (dead >= 0 && dead < n && !sv.ranks[dead].done && !sv.ranks[dead].failed) {
            struct strbuf w = STRBUF_INIT;
            cf_sb_addf(&w, "rank %d died (see mpirun's message above); %s", dead, cf_sb_str(&why));
            fail_rank(&sv, dead, cf_sb_str(&w));
            cf_sb_release(&w);
        }
        for (int r = 0; r < n; r++)
            if (!sv.ranks[r].done && !sv.ranks[r].failed && dead == -1)
                fail_rank(&sv, r, cf_sb_str(&why));
        if (sv.first_failure)
            rep->aborted = 1;
        else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
            cf_smoke_report_add_failure(rep, -1, "finishing", cf_sb_str(&why));
            rep->aborted = 1;
        }
        cf_sb_release(&why);
    }
    mark_stopped(&sv);
    supervisor_release(&sv);
    return 0;
}
