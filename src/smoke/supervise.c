/* The local supervisor: starts the ranks (N copies of cclforge for nccl/rccl, or
 * mpirun for mpi, both through the rank supervisor, cclforge/ranks.h), reads
 * their records over authenticated loopback connections, enforces the
 * per-operation timeout, and when one rank dies, hangs or fails, names it and
 * what it was doing, stops the others and reaps everyone (ranks that mpirun
 * leaves behind too: it is their subreaper meanwhile). */
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
#include <time.h>
#include <unistd.h>

#include "cclforge/host.h"
#include "cclforge/clock.h"
#include "cclforge/envp.h"
#include "cclforge/fs.h"
#include "cclforge/orphans.h"
#include "cclforge/ranks.h"
#include "cclforge/spawn.h"
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
/* A connection to the record port must prove it is one of the run's ranks this fast. */
#define HANDSHAKE_S 0.5
/* Every rank has its verdict: MPI_Finalize and mpirun's teardown may take this long
 * (seconds for a big job, and more under a sanitizer's exit-time scan) before the
 * processes still alive are killed and the run fails "finishing". */
#define FINISH_WAIT_S 20.0
/* Ranks left behind by a killed mpirun: how long to wait for them to go. */
#define ORPHAN_WAIT_S 5.0
#define MAX_LINE (1 << 20)

struct rank_slot {
    int in_op;               /* the last record was BEGIN: it is inside that step */
    int waiting;             /* ... and that step waits for the other ranks */
    unsigned long steps;     /* BEGINs so far: every rank walks the same steps */
    int done, failed;
    double last_rx;          /* when the supervisor last heard from it */
    double last_t;           /* the rank's own clock at its last record */
    struct strbuf doing;     /* the last BEGIN */
    struct strbuf last_done; /* the last finished test */
};

struct stream {
    int fd;
    int is_log;              /* a process's own output: plain lines only */
    int rank;                /* the rank it belongs to; -1: mpirun */
    struct strbuf partial;
};

struct supervisor {
    const struct cf_smoke_opts *o;
    cf_smoke_event_fn on_event;
    void *ctx;
    struct cf_smoke_report *rep;
    int nranks;
    int mpirun;
    struct rank_slot *ranks;
    struct cf_ranks *procs;  /* the ranks, or mpirun alone */
    int nprocs;
    struct stream *streams;
    int nstreams, max_streams;
    int listen_fd;           /* where the ranks' record connections arrive */
    struct cf_launch_secret secret;
    char *tmpdir;            /* the run's directory for the ranks' files */
    int mpirun_dead_rank;    /* parsed from mpirun's "process rank N ... exited" */
    double first_failure;
    int first_failed_rank;
    int hung;                /* a hang was detected: nobody is going to say more */
    int stopping;
    int killed_finishing;    /* still running FINISH_WAIT_S after the last verdict */
    struct strbuf finishing; /* ... and which of this host's ranks were still alive then */
};

static void forward(struct supervisor *sv, const struct cf_smoke_event *ev)
{
    if (sv->on_event)
        sv->on_event(sv->ctx, ev);
}

static void say(struct supervisor *sv, const char *text)
{
    struct cf_smoke_event ev = { .kind = CF_EV_LOG, .rank = -1, .local_rank = -1, .text = text };
    forward(sv, &ev);
}

static char *state_of(const struct rank_slot *s)
{
    if (s->in_op)
        return cf_strdup(cf_sb_str(&s->doing));
    if (s->last_done.len)
        return cf_asprintf("between tests, after %s", cf_sb_str(&s->last_done));
    return cf_strdup(s->doing.len ? cf_sb_str(&s->doing) : "starting");
}

static void note_failure(struct supervisor *sv, int rank)
{
    if (sv->first_failure == 0) {
        sv->first_failure = cf_now_seconds();
        sv->first_failed_rank = rank;
    }
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
    note_failure(sv, rank);
}

/* Every rank gets a verdict: the ones stopped because another failed are named too. */
static void mark_stopped(struct supervisor *sv)
{
    if (!sv->first_failure)
        return;
    for (int r = 0; r < sv->nranks; r++) {
        if (sv->ranks[r].done || sv->ranks[r].failed)
            continue;
        char why[128];
        if (sv->first_failed_rank >= 0)
            snprintf(why, sizeof why, "stopped after rank %d failed", sv->first_failed_rank);
        else
            snprintf(why, sizeof why, "stopped: %s", sv->rep->interrupted ? "interrupted" : "the run failed");
        fail_rank(sv, r, why);
    }
}

static void handle_record(struct supervisor *sv, struct stream *st, struct smoke_record *rec)
{
    int r = rec->ev.rank;
    if (st->is_log || r < 0 || r >= sv->nranks || r != st->rank) {
        say(sv, "(a record with a bad rank was ignored)");
        return;
    }
    struct rank_slot *s = &sv->ranks[r];
    s->last_rx = cf_now_seconds();
    s->last_t = rec->ev.t;
    switch (rec->type) {
    case REC_BEGIN:
        s->in_op = 1;
        s->waiting = rec->waits;
        s->steps++;
        cf_sb_reset(&s->doing);
        cf_sb_adds(&s->doing, rec->text.len ? cf_sb_str(&rec->text) : "?");
        return;
    case REC_PROGRESS:
        return;
    case REC_RESULT: {
        s->in_op = 0;
        s->waiting = 0;
        char *what = cf_smoke_describe(&rec->ev.row);
        cf_sb_reset(&s->last_done);
        cf_sb_adds(&s->last_done, what);
        free(what);
        break;
    }
    case REC_FAIL:
        s->in_op = 1; /* the failure belongs to what it was doing */
        fail_rank(sv, r, rec->text.len ? cf_sb_str(&rec->text) : "failed");
        return;
    case REC_DONE:
        s->in_op = 0;
        s->done = 1;
        return;
    default:
        break;
    }
    cf_smoke_report_take(sv->rep, &rec->ev);
    forward(sv, &rec->ev);
}

static void handle_line(struct supervisor *sv, struct stream *st, const char *line)
{
    struct smoke_record rec;
    memset(&rec, 0, sizeof rec);
    int rc = st->is_log ? 0 : cf_smoke_record_decode(line, &rec);
    if (rc == 1) {
        handle_record(sv, st, &rec);
    } else if (rc < 0) {
        say(sv, "(a malformed record was ignored)");
    } else {
        if (sv->mpirun && st->rank < 0) {
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
    char buf[65536];
    ssize_t n = read(st->fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        if (st->partial.len)
            handle_line(sv, st, cf_sb_str(&st->partial));
        cf_sb_reset(&st->partial);
        close(st->fd);
        st->fd = -1;
        /* a rank connection that ends without DONE or FAIL: the rank died (a rank we
         * started ourselves is judged by its exit status instead, which says how) */
        if (sv->mpirun && !st->is_log && st->rank >= 0 && !sv->stopping && !sv->first_failure) {
            char why[160];
            snprintf(why, sizeof why, "rank %d died: its connection to the supervisor closed before it finished",
                     st->rank);
            fail_rank(sv, st->rank, why);
        }
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            handle_line(sv, st, cf_sb_str(&st->partial));
            cf_sb_reset(&st->partial);
        } else if (st->partial.len < MAX_LINE) {
            cf_sb_addc(&st->partial, buf[i]);
        }
    }
}

/* The rank a started process is: mpirun is none of them. */
static int rank_of_proc(const struct supervisor *sv, int i)
{
    return sv->mpirun ? -1 : i;
}

static struct stream *stream_of_proc(struct supervisor *sv, int rank)
{
    for (int i = 0; i < sv->nstreams; i++)
        if (sv->streams[i].is_log && sv->streams[i].rank == rank && sv->streams[i].fd >= 0)
            return &sv->streams[i];
    return NULL;
}

static void drain(struct supervisor *sv, struct stream *st)
{
    /* what it wrote before it ended is still in the pipe or socket: read it before judging */
    while (st && st->fd >= 0) {
        struct pollfd pfd = { st->fd, POLLIN, 0 };
        if (poll(&pfd, 1, 1000) <= 0)
            break;
        read_stream(sv, st);
    }
}

static void describe_end(struct strbuf *sb, const struct cf_rank_outcome *o)
{
    if (WIFEXITED(o->status))
        cf_sb_addf(sb, "exited with status %d", o->code);
    else
        cf_sb_addf(sb, "was killed by signal %d (%s)", o->code, strsignal(o->code));
}

/* The processes that ended since the last call: what they wrote is read
 * first, then a rank that ended without a verdict is failed by how it ended. */
static void reap(struct supervisor *sv)
{
    int *ended = cf_xcalloc((size_t)sv->nprocs, sizeof *ended);
    int n = cf_ranks_step(sv->procs, ended);
    for (int k = 0; k < n; k++) {
        int rank = rank_of_proc(sv, ended[k]);
        drain(sv, stream_of_proc(sv, rank));
        if (rank >= 0) /* its record connection too */
            for (int i = 0; i < sv->nstreams; i++)
                if (!sv->streams[i].is_log && sv->streams[i].rank == rank)
                    drain(sv, &sv->streams[i]);
        if (sv->stopping || rank < 0)
            continue;
        struct rank_slot *s = &sv->ranks[rank];
        if (!s->done && !s->failed) {
            const struct cf_rank_outcome *o = cf_ranks_outcome(sv->procs, ended[k]);
            struct strbuf why = STRBUF_INIT;
            cf_sb_addf(&why, "rank %d ", rank);
            describe_end(&why, o);
            if (o->end == CF_RANK_EXITED && o->code == 0)
                cf_sb_adds(&why, " without finishing");
            fail_rank(sv, rank, cf_sb_str(&why));
            cf_sb_release(&why);
        }
    }
    free(ended);
}

/* Whether rank slot a holds the others up more plainly than b: stuck outside a
 * step that waits for peers (they wait in one for it), else behind in the steps
 * every rank walks (a hung peer stops the others later in the sequence, and under
 * load a root that ran ahead can be the one silent the longest), else silent longer. */
static int holds_up_more(const struct rank_slot *a, const struct rank_slot *b)
{
    if (a->waiting != b->waiting)
        return !a->waiting;
    if (a->steps != b->steps)
        return a->steps < b->steps;
    return a->last_rx < b->last_rx;
}

static int hung_culprit(struct supervisor *sv)
{
    int best = -1;
    for (int r = 0; r < sv->nranks; r++) {
        struct rank_slot *s = &sv->ranks[r];
        if (s->done || s->failed)
            continue;
        if (best < 0 || holds_up_more(s, &sv->ranks[best]))
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
    if (sv->hung || sv->rep->interrupted || since >= GRACE_MAX_S)
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

static struct stream *add_stream(struct supervisor *sv, int fd, int is_log, int rank)
{
    if (sv->nstreams >= sv->max_streams)
        return NULL;
    struct stream *st = &sv->streams[sv->nstreams++];
    memset(st, 0, sizeof *st);
    st->fd = fd;
    st->is_log = is_log;
    st->rank = rank;
    return st;
}

/* A connection counts only once it proved it is one of this run's ranks (the secret
 * in its environment) and is not a rank already connected: every handshake is
 * pending at once, each for at most HANDSHAKE_S, so a stray costs no rank any
 * time and never takes a rank's place (src/launch/acceptor.c). */
static void take_ranks(struct supervisor *sv, struct cf_launch_acceptor *a)
{
    struct cf_launch_event ev;
    while (cf_launch_acceptor_next(a, &ev)) {
        if (ev.refused == CF_REFUSAL_NONE && add_stream(sv, ev.peer.fd, 0, ev.peer.rank))
            continue;
        struct strbuf why = STRBUF_INIT;
        if (ev.refused == CF_REFUSAL_NONE) {
            close(ev.peer.fd);
            cf_sb_addf(&why, "rank %d (%s): too many connections", ev.peer.rank, ev.peer.addr);
        } else {
            cf_launch_event_describe(&ev, sv->nranks, &why);
        }
        char *text = cf_asprintf("refused a connection to the record port: %s", cf_sb_str(&why));
        say(sv, text);
        free(text);
        cf_sb_release(&why);
    }
}

/* Said once, at the end: how many never became a rank, why, and from where. */
static void say_strays(struct supervisor *sv, const struct cf_launch_strays *strays)
{
    if (!strays->count)
        return;
    struct strbuf text = STRBUF_INIT;
    cf_sb_adds(&text, "ignored connections to the record port: ");
    cf_launch_strays_describe(strays, &text);
    say(sv, cf_sb_str(&text));
    cf_sb_release(&text);
}

/* The ranks on this host still alive (their reported pid, on our hostname): named when
 * the run's end is stuck, never signalled by that pid (it may be reused). */
static void name_lingering_ranks(struct supervisor *sv)
{
    char self[256] = "";
    cf_host_name(self, sizeof self);
    for (int r = 0; sv->rep->hosts && r < sv->nranks; r++) {
        const struct cf_smoke_host *h = &sv->rep->hosts[r];
        if (h->pid <= 0 || !h->hostname || strcmp(h->hostname, self) || (kill(h->pid, 0) < 0 && errno == ESRCH))
            continue;
        cf_sb_addf(&sv->finishing, "%srank %d (pid %d)", sv->finishing.len ? ", " : "", r, h->pid);
    }
}

static void interrupt(struct supervisor *sv)
{
    if (sv->rep->interrupted)
        return;
    sv->rep->interrupted = 1;
    char why[96];
    snprintf(why, sizeof why, "interrupted by signal %d: the ranks were stopped", (int)*sv->o->stop);
    cf_smoke_report_add_failure(sv->rep, -1, "", why);
    if (sv->first_failure == 0) {
        sv->first_failure = cf_now_seconds();
        sv->first_failed_rank = -1;
    }
}

static int settled(const struct supervisor *sv)
{
    for (int r = 0; r < sv->nranks; r++)
        if (!sv->ranks[r].done && !sv->ranks[r].failed)
            return 0;
    return 1;
}

static void supervise_loop(struct supervisor *sv)
{
    struct pollfd *pfds = cf_xcalloc((size_t)sv->max_streams + 1, sizeof *pfds);
    struct cf_launch_acceptor_opts ao = { sv->listen_fd, &sv->secret, SMOKE_RECORDS_TAG, sv->nranks, HANDSHAKE_S, 0 };
    struct cf_launch_acceptor *acc = cf_launch_acceptor_new(&ao);
    double settled_at = 0;
    for (;;) {
        int nfds = sv->nstreams;
        for (int i = 0; i < sv->nstreams; i++)
            pfds[i] = (struct pollfd){ sv->streams[i].fd, POLLIN, 0 };
        /* once stopping, nobody joins any more */
        int r = sv->stopping ? poll(pfds, (nfds_t)nfds, 200) : cf_launch_acceptor_poll(acc, pfds, nfds, 200);
        if (r < 0 && errno != EINTR)
            break;
        for (int i = 0; r > 0 && i < nfds; i++)
            if (pfds[i].revents && sv->streams[i].fd >= 0)
                read_stream(sv, &sv->streams[i]);
        take_ranks(sv, acc);
        reap(sv);
        double now = cf_now_seconds();
        if (sv->o->stop && *sv->o->stop)
            interrupt(sv);
        check_timeouts(sv, now);
        if (should_stop(sv, now)) {
            sv->stopping = 1;
            sv->rep->aborted = 1;
            cf_ranks_stop(sv->procs, 0); /* mpirun: SIGTERM, then SIGKILL (its ranks follow: PDEATHSIG) */
        }
        if (!cf_ranks_live(sv->procs)) {
            /* every process is gone: what they wrote last is still to be read */
            for (int i = 0; i < sv->nstreams; i++)
                drain(sv, &sv->streams[i]);
            break;
        }
        /* every rank has its verdict but a process lingers (mpirun tearing down): not for ever */
        if (settled(sv) && !settled_at)
            settled_at = now;
        if (settled_at && now - settled_at > FINISH_WAIT_S && !sv->killed_finishing) {
            name_lingering_ranks(sv);
            cf_ranks_stop(sv->procs, 1);
            sv->killed_finishing = 1;
        }
    }
    free(pfds);
    struct cf_launch_strays strays;
    cf_launch_acceptor_free(acc, &strays);
    say_strays(sv, &strays);
    while (cf_ranks_live(sv->procs)) { /* the poll failed: the rest is still ours to reap */
        reap(sv);
        nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
    }
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
    cf_ranks_free(sv->procs);
    if (sv->listen_fd >= 0)
        close(sv->listen_fd);
    free(sv->ranks);
    free(sv->streams);
    cf_sb_release(&sv->finishing);
}

/* the environment of a started process: our variables, and Open MPI kept on one box */
static void rank_env(struct supervisor *sv, struct strvec *env, int rank, int rdv_port, int listen_fd,
                     const char *secret_hex, int rec_port)
{
    cf_strvec_pushf(env, "%s=1", SMOKE_SUPERVISED_ENV);
    if (sv->tmpdir)
        cf_strvec_pushf(env, "%s=%s", SMOKE_TMPDIR_ENV, sv->tmpdir);
    cf_strvec_pushf(env, "%s=127.0.0.1:%d", SMOKE_SUPERVISOR_ENV, rec_port);
    cf_strvec_pushf(env, "%s=%s", CF_LAUNCH_SECRET_ENV, secret_hex);
    if (sv->mpirun) {
        static const char *const mca[][2] = {
            /* one box, loopback only: shared memory between ranks, TCP only on lo */
            { "OMPI_MCA_btl", "self,vader" },
            { "OMPI_MCA_btl_vader_single_copy_mechanism", "none" }, /* containers forbid CMA */
            { "OMPI_MCA_oob_tcp_if_include", "lo" },
            { "OMPI_MCA_btl_tcp_if_include", "lo" },
            { "OMPI_MCA_rmaps_base_oversubscribe", "1" },
        };
        for (size_t i = 0; i < sizeof mca / sizeof mca[0]; i++)
            if (!cf_envp_get(sv->o->envp, mca[i][0]))
                cf_strvec_pushf(env, "%s=%s", mca[i][0], mca[i][1]);
        return;
    }
    cf_strvec_pushf(env, "%s=%d", CF_LAUNCH_RANK_ENV, rank);
    cf_strvec_pushf(env, "%s=%d", CF_LAUNCH_WORLD_ENV, sv->nranks);
    cf_strvec_pushf(env, "%s=%d", CF_LAUNCH_LOCAL_RANK_ENV, rank);
    cf_strvec_pushf(env, "%s=127.0.0.1", CF_LAUNCH_ADDR_ENV);
    cf_strvec_pushf(env, "%s=%d", CF_LAUNCH_PORT_ENV, rdv_port);
    if (rank == 0 && listen_fd >= 0)
        cf_strvec_pushf(env, "%s=%d", SMOKE_LISTEN_FD_ENV, listen_fd);
}

/* mpirun [--allow-run-as-root] --oversubscribe --bind-to none -n N -x ... cclforge smoke ARGS */
static int mpirun_argv(const struct cf_smoke_opts *o, int n, struct strvec *argv, cf_error *err)
{
    char *mpirun = cf_which(o->mpirun ? o->mpirun : "mpirun");
    if (!mpirun)
        return cf_error_set(err, CF_ERR_NOTFOUND,
                            "%s: not found on PATH; the mpi backend needs Open MPI's mpirun (apt-get install "
                            "openmpi-bin) or give --mpirun PATH",
                            o->mpirun ? o->mpirun : "mpirun");
    cf_strvec_push_nodup(argv, mpirun);
    if (geteuid() == 0)
        cf_strvec_push(argv, "--allow-run-as-root");
    cf_strvec_push(argv, "--oversubscribe"); /* more ranks than cores is the point on a small box */
    cf_strvec_push(argv, "--bind-to");
    cf_strvec_push(argv, "none");
    cf_strvec_push(argv, "-n");
    cf_strvec_pushf(argv, "%d", n);
    static const char *const passed[] = { SMOKE_SUPERVISED_ENV, SMOKE_SUPERVISOR_ENV, CF_LAUNCH_SECRET_ENV,
                                          SMOKE_TMPDIR_ENV };
    for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++) {
        cf_strvec_push(argv, "-x");
        cf_strvec_push(argv, passed[i]);
    }
    return 0;
}

/* Starts the processes (their output read as the ranks' own lines); -1 when
 * one could not start (err says which), the others then stopped at the end. */
static int start_procs(struct supervisor *sv, struct strvec *argv, struct strvec *env, int n, int keep_fd,
                       cf_error *err)
{
    struct cf_rank_spec *specs = cf_xcalloc((size_t)n, sizeof *specs);
    for (int i = 0; i < n; i++)
        specs[i] = (struct cf_rank_spec){ .argv = (const char *const *)cf_strvec_argv(&argv[i]),
                                          .env_set = (const char *const *)cf_strvec_argv(&env[i]),
                                          .pipe_output = 1,
                                          .keep_fd = i == 0 ? keep_fd : -1 };
    /* the supervisor judges failure; mpirun takes its own ranks down on SIGTERM, a
     * forked rank is killed at once with its process group */
    struct cf_ranks_opts ro = { .grace_s = -1, .term_wait_s = sv->mpirun ? TERM_WAIT_S : 0,
                                .process_only = sv->mpirun };
    cf_error first = CF_ERROR_INIT;
    sv->procs = cf_ranks_start(specs, n, &ro, &first);
    sv->nprocs = n;
    free(specs);
    for (int i = 0; i < n; i++)
        add_stream(sv, cf_ranks_take_output(sv->procs, i), 1, rank_of_proc(sv, i));
    if (first.kind == CF_OK)
        return 0;
    cf_error_set(err, first.kind, "%s", cf_error_message(&first));
    cf_error_clear(&first);
    return -1;
}

static int start_ranks(struct supervisor *sv, int rec_port, const char *secret_hex, cf_error *err)
{
    const struct cf_smoke_opts *o = sv->o;
    int n = sv->mpirun ? 1 : sv->nranks, rc = 0;
    struct strvec *argv = cf_xcalloc((size_t)n, sizeof *argv), *env = cf_xcalloc((size_t)n, sizeof *env);
    /* rank 0 inherits an already listening rendezvous socket: no port race, no retry storm */
    int rdv_port = 0, rdv_fd = -1;
    if (sv->mpirun)
        rc = mpirun_argv(o, sv->nranks, &argv[0], err);
    else if (sv->nranks > 1 && (rdv_fd = cf_launch_listen(0, 1, &rdv_port, NULL, 0, err)) < 0)
        rc = -1;
    for (int i = 0; i < n && rc == 0; i++) {
        cf_strvec_push(&argv[i], o->self_exe);
        for (char *const *a = o->self_argv; a && *a; a++)
            cf_strvec_push(&argv[i], *a);
        rank_env(sv, &env[i], rank_of_proc(sv, i), rdv_port, rdv_fd, secret_hex, rec_port);
    }
    if (rc == 0)
        rc = start_procs(sv, argv, env, n, rdv_fd, err);
    for (int i = 0; i < n; i++) {
        cf_strvec_clear(&argv[i]);
        cf_strvec_clear(&env[i]);
    }
    free(argv);
    free(env);
    if (rdv_fd >= 0)
        close(rdv_fd);
    return rc;
}

int cf_smoke_supervise(const struct cf_smoke_opts *o, cf_smoke_event_fn on_event, void *ctx,
                       struct cf_smoke_report *rep, cf_error *err)
{
    if (!o->self_exe)
        return cf_error_set(err, CF_ERR_INTERNAL, "cannot start the ranks: cclforge's own path is unknown");
    struct supervisor sv;
    memset(&sv, 0, sizeof sv);
    sv.o = o;
    sv.on_event = on_event;
    sv.ctx = ctx;
    sv.rep = rep;
    sv.nranks = o->nranks > 0 ? o->nranks : 1;
    sv.mpirun = o->backend == CF_BACKEND_MPI;
    sv.listen_fd = -1;
    sv.mpirun_dead_rank = -1;
    sv.max_streams = 2 * sv.nranks + 1;
    sv.ranks = cf_xcalloc((size_t)sv.nranks, sizeof *sv.ranks);
    sv.streams = cf_xcalloc((size_t)sv.max_streams, sizeof *sv.streams);
    rep->role = CF_ROLE_SUPERVISOR;
    rep->nranks = sv.nranks;
    rep->launcher = sv.mpirun ? "mpirun" : "local";
    double start = cf_now_seconds();
    for (int r = 0; r < sv.nranks; r++)
        sv.ranks[r].last_rx = start;

    char secret_hex[65];
    int rec_port = 0;
    int rc = cf_launch_secret_random(&sv.secret, secret_hex, err);
    if (rc == 0 && !(sv.tmpdir = cf_mkdtemp(NULL, "cclforge-smoke-", err)))
        rc = -1;
    if (rc == 0 && (sv.listen_fd = cf_launch_listen(0, 1, &rec_port, NULL, 0, err)) < 0)
        rc = -1;
    /* ranks that mpirun leaves behind become ours to reap, not PID 1's */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    fflush(stdout);
    fflush(stderr);
    if (rc == 0)
        rc = start_ranks(&sv, rec_port, secret_hex, err);
    if (rc < 0) {
        if (sv.procs)
            cf_ranks_stop(sv.procs, 1); /* reaped in supervisor_release */
    } else {
        supervise_loop(&sv);
        if (sv.mpirun && !sv.stopping) {
            /* ranks that neither finished nor said why: mpirun stopped them, or one died */
            const struct cf_rank_outcome *end = cf_ranks_outcome(sv.procs, 0);
            struct strbuf why = STRBUF_INIT;
            cf_sb_adds(&why, "mpirun ");
            if (sv.killed_finishing && sv.finishing.len)
                cf_sb_addf(&why, "was still running %.0f s after every rank's verdict and was killed: %s "
                                 "had not exited (stuck in MPI_Finalize?)", FINISH_WAIT_S, cf_sb_str(&sv.finishing));
            else if (sv.killed_finishing)
                cf_sb_addf(&why, "was still running %.0f s after every rank's verdict, in its own teardown "
                                 "(no rank on this host was left), and was killed", FINISH_WAIT_S);
            else
                describe_end(&why, end);
            int dead = sv.first_failure ? -2 : sv.mpirun_dead_rank; /* -2: already explained */
            if (dead >= 0 && dead < sv.nranks && !sv.ranks[dead].done && !sv.ranks[dead].failed) {
                char *w = cf_asprintf("rank %d died (see mpirun's message above); %s", dead, cf_sb_str(&why));
                fail_rank(&sv, dead, w);
                free(w);
            }
            for (int r = 0; r < sv.nranks; r++)
                if (!sv.ranks[r].done && !sv.ranks[r].failed && dead == -1)
                    fail_rank(&sv, r, cf_sb_str(&why));
            if (!sv.first_failure && !(end->end == CF_RANK_EXITED && end->code == 0)) {
                cf_smoke_report_add_failure(rep, -1, "finishing", cf_sb_str(&why));
                note_failure(&sv, -1);
            }
            cf_sb_release(&why);
        }
        if (sv.first_failure)
            rep->aborted = 1;
        mark_stopped(&sv);
    }
    /* our adopted children (ranks mpirun left behind): a while to end, then killed */
    struct cf_orphans_end orphans;
    cf_reap_orphans(0, ORPHAN_WAIT_S, ORPHAN_WAIT_S, &orphans);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    if (sv.tmpdir)
        cf_rm_rf(sv.tmpdir, NULL);
    free(sv.tmpdir);
    supervisor_release(&sv);
    return rc;
}
