/* Internals of the smoke module shared between its files (not a public header).
 * Who calls whom (no circle): smoke.c -> rank.c -> one_test.c, groups.c, the backends;
 * smoke.c -> supervise.c -> records.c; everyone -> report.c and records.c's sinks,
 * which call nothing of smoke's. */
#ifndef CCLFORGE_SMOKE_INTERNAL_H
#define CCLFORGE_SMOKE_INTERNAL_H

#include <stdint.h>

#include "cclforge/launch.h"
#include "cclforge/smoke.h"
#include "cclforge/strbuf.h"

/* Where a rank's progress and results go: the CLI's callback (a rank under an
 * external launcher) or records written to the supervisor (a supervised rank). */
struct smoke_sink {
    /* waits: the step needs the other ranks (a collective, a rendezvous, comm init),
     * so a rank silent in it may be waiting for a peer rather than stuck itself */
    void (*begin)(struct smoke_sink *s, const char *doing, int waits);
    void (*event)(struct smoke_sink *s, const struct cf_smoke_event *ev);
    /* an operation completed: the rank is alive and moving */
    void (*progress)(struct smoke_sink *s);
    void *ctx;
    int rank, local_rank;
    double last_progress; /* progress marks are sent at most every SMOKE_PROGRESS_S */
};
#define SMOKE_PROGRESS_S 0.1
void cf_smoke_sink_begin(struct smoke_sink *s, int waits, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cf_smoke_sink_info(struct smoke_sink *s, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cf_smoke_sink_text(struct smoke_sink *s, enum cf_smoke_event_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Rate-limited progress mark (the backend's progress callback lands here). */
void cf_smoke_sink_progress(void *sink);

/* How rank 0 hands the NCCL unique id to the others. */
enum smoke_id_transport { SMOKE_ID_NONE, SMOKE_ID_TCP, SMOKE_ID_MPI };
struct smoke_rendezvous {
    enum smoke_id_transport transport;
    char addr[256];
    int port;
    int listen_fd;   /* rank 0 of a local run: the supervisor's listening socket, else -1 */
    double timeout_s;
    struct cf_launch_secret secret; /* every rendezvous connection proves it knows it */
};
#define SMOKE_RDV_TAG "smoke"
/* rank 0's fact when a search could not decide: why (cf_smoke_report.inconclusive) */
#define SMOKE_INCONCLUSIVE_KEY "inconclusive"
/* rank 0: one host the search named bad (one such fact per host) */
#define SMOKE_BAD_HOST_KEY "bad_host"
#define SMOKE_RECORDS_TAG "smoke-records"

/* What one rank needs to run. */
struct smoke_rank_setup {
    const struct cf_smoke_opts *opts;
    struct cf_smoke_rank_ctx ctx;
    struct smoke_rendezvous rdv;
    const char *hostname;
};

/* ---- records: the line protocol between supervised ranks and the supervisor ---- */
#define SMOKE_RECORD_PREFIX "@cclforge-smoke\t"
enum smoke_record_type {
    REC_BEGIN = 'B', REC_RESULT = 'R', REC_INFO = 'I', REC_FAIL = 'F', REC_DONE = 'D', REC_PROGRESS = 'H',
    REC_PROBLEM = 'P', REC_TRANSPORT = 'T', REC_GROUP = 'G', REC_VERDICT = 'V', REC_LOG = 'L'
};
struct smoke_record {
    enum smoke_record_type type;
    struct cf_smoke_event ev; /* pointers into the members below */
    int waits;                /* BEGIN: the step waits for peers */
    struct strbuf text, key, value;
    double *times;            /* RESULT: per-rank times (row.nranks of them) */
    int *ranks;
    size_t ntimes, nranks_list;
};
void cf_smoke_record_encode(struct strbuf *line, enum smoke_record_type type, const struct cf_smoke_event *ev,
                            int waits);
/* Parses one line (without newline). Returns 1 for a record, 0 for a plain line, -1 malformed. */
int cf_smoke_record_decode(const char *line, struct smoke_record *rec);
void cf_smoke_record_release(struct smoke_record *rec);
/* The record type that carries an event of this kind. */
enum smoke_record_type cf_smoke_record_type_for(enum cf_smoke_event_kind kind);
/* A sink writing records to fd. */
void cf_smoke_record_sink(struct smoke_sink *s, int *fd, int rank, int local_rank);

/* ---- backends ---- */
int cf_smoke_nccl_backend_open(struct cf_smoke_backend *b, const struct smoke_rank_setup *setup,
                               struct smoke_sink *sink, cf_error *err);
/* The MPI backend (backend_mpi.c) over the libmpi mpi_api.c chooses and loads. What
 * was loaded is borrowed from the backend's state: valid until its finalize. */
struct smoke_mpi_info {
    const char *path;      /* the libmpi file */
    const char *abi;       /* "Open MPI", "MPICH" */
    const char *soname;    /* the ABI's soname: "libmpi.so.40", "libmpi.so.12" */
    const char *chosen_by; /* "--mpi-lib", "the launcher's PMI_RANK", ... */
};
int cf_smoke_mpi_backend_open(struct cf_smoke_backend *b, const struct cf_smoke_opts *o, struct smoke_mpi_info *info,
                              cf_error *err);
/* The nccl backend: which transports NCCL used, from its own log (and whether they
 * are the --expect-transport ones when the run got through), as events. */
void cf_smoke_nccl_report_transport(struct cf_smoke_backend *b, int run_ok);

/* ---- a rank's life: backend init, the groups and their sweeps, finalize ---- */
/* The fault switch's abort, exit and hang: each ends (or stops) the process here. */
void cf_smoke_fault_fire(enum cf_smoke_fault_action action);

int cf_smoke_rank_main(const struct smoke_rank_setup *setup, struct smoke_sink *sink, struct cf_smoke_report *rep,
                       cf_error *err);

/* ---- the watchdog of a rank under an external launcher ---- */
struct smoke_watchdog;
/* NULL when timeout_s <= 0. */
struct smoke_watchdog *cf_smoke_watchdog_start(double timeout_s, cf_smoke_event_fn fn, void *ctx, int rank,
                                               int local_rank);
void cf_smoke_watchdog_progress(struct smoke_watchdog *w, const char *doing);
void cf_smoke_watchdog_stop(struct smoke_watchdog *w);

/* ---- the local supervisor ---- */
int cf_smoke_supervise(const struct cf_smoke_opts *o, cf_smoke_event_fn on_event, void *ctx,
                       struct cf_smoke_report *rep, cf_error *err);

/* ---- the report ---- */
/* A one-line description of one test: "all_reduce float sum 4096 B out-of-place". */
char *cf_smoke_describe(const struct cf_smoke_row *row);
void cf_smoke_report_add_failure(struct cf_smoke_report *rep, int rank, const char *doing, const char *reason);
void cf_smoke_report_add_problem(struct cf_smoke_report *rep, int rank, const char *reason);
void cf_smoke_report_set_host(struct cf_smoke_report *rep, int rank, const char *key, const char *value);
/* Takes in what an event says (rows of group leaders, facts, connections, groups,
 * the verdict): one place for the supervisor and a rank under a launcher alike. */
void cf_smoke_report_take(struct cf_smoke_report *rep, const struct cf_smoke_event *ev);
/* Counts verdicts, the footer's average busbw and out-of-bounds values. */
void cf_smoke_report_finish(struct cf_smoke_report *rep);
/* Finishes the report and writes its verdict line (verdict.c); --min-busbw adds a problem. */
void cf_smoke_verdict(struct cf_smoke_report *rep, const struct cf_smoke_opts *o);

#define SMOKE_SUPERVISED_ENV "CCLFORGE_SMOKE_SUPERVISED"
/* "127.0.0.1:PORT": where supervised ranks send their records (one connection per
 * rank, so records are never interleaved by mpirun's output merging) */
#define SMOKE_SUPERVISOR_ENV "CCLFORGE_SMOKE_SUPERVISOR"
/* rank 0 of a local run: the descriptor of the rendezvous socket the supervisor opened */
#define SMOKE_LISTEN_FD_ENV "CCLFORGE_SMOKE_LISTEN_FD"
/* a directory of the run for the ranks' files (NCCL's logs); the supervisor removes it,
 * whatever became of the ranks */
#define SMOKE_TMPDIR_ENV "CCLFORGE_SMOKE_TMPDIR"

#endif
