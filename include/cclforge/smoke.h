/* `cclforge smoke`: a multi-rank collective smoke and bandwidth test for any library
 * with the NCCL C API (NCCL, RCCL) and for MPI on host memory.
 *
 * One entry point, cf_smoke_run(), plays one of three roles:
 *  - local supervisor (`-n N`, no launcher around): forks N ranks (or, for MPI, runs
 *    mpirun with argv), watches them with a per-operation timeout, kills them all when
 *    one dies, hangs or fails, and merges what they report;
 *  - one rank under an external launcher (mpirun, srun, torchrun): runs the sweep and
 *    reports its own results (rank 0 reports the agreed table);
 *  - one rank under the local supervisor: reports machine-readable records to it.
 * The library never prints: events go to a callback, the summary into a report. */
#ifndef CCLFORGE_SMOKE_H
#define CCLFORGE_SMOKE_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/launch.h"
#include "cclforge/smoke_backend.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cf_smoke_backend_kind { CF_BACKEND_NCCL, CF_BACKEND_RCCL, CF_BACKEND_MPI };

/* ---- data tables (exposed for the CLI and the tests) ---- */

struct cf_smoke_op_info {
    enum cf_smoke_op op;
    const char *name;        /* "all_reduce" */
    const char *nccl_tests;  /* the nccl-tests binary it matches: "all_reduce_perf" */
    double (*busbw_factor)(int nranks); /* nccl-tests' algbw -> busbw factor */
    int has_in_place;        /* sendrecv has no in-place form */
};
const struct cf_smoke_op_info *cf_smoke_op_info(enum cf_smoke_op op);
int cf_smoke_op_parse(const char *name, enum cf_smoke_op *out);

struct cf_smoke_dtype_info {
    enum cf_smoke_dtype dtype;
    const char *name;      /* nccl-tests spelling: "float", "half", "bfloat16", "int32" */
    const char *alias;     /* another accepted spelling: "fp32", "fp16", "bf16" */
    size_t size;
    int nccl_type;         /* ncclDataType_t value */
    int64_t exact_limit;   /* every integer in [0, exact_limit] is exactly representable */
};
const struct cf_smoke_dtype_info *cf_smoke_dtype_info(enum cf_smoke_dtype dt);
int cf_smoke_dtype_parse(const char *name, enum cf_smoke_dtype *out);

/* Value of element i of an input as a double (handles fp16/bf16 bit patterns). */
double cf_smoke_load(enum cf_smoke_dtype dt, const void *buf, size_t i);
/* Stores an integer-valued v into element i. */
void cf_smoke_store(enum cf_smoke_dtype dt, void *buf, size_t i, double v);

/* The predictable input: an integer in [0, m) with m chosen per dtype and rank count
 * so that any sum over nranks stays exactly representable (as nccl-tests does). */
int64_t cf_smoke_pattern(enum cf_smoke_dtype dt, int nranks, int rank, size_t i, uint32_t seed);

/* ---- the size sweep, as nccl-tests' -b/-e/-f/-i ---- */
struct cf_smoke_sweep {
    size_t min_bytes, max_bytes;
    double step_factor; /* > 1 multiplies; used when step_bytes is 0 */
    size_t step_bytes;  /* > 0 adds */
};
/* Parses "8", "1K", "128M", "1G" (powers of 1024). */
int cf_smoke_parse_size(const char *s, size_t *out, cf_error *err);
/* Element count for op at `bytes` bytes: rounded down so all_gather / reduce_scatter
 * split evenly over nranks (nccl-tests' rule). 0 means "skip this size". */
size_t cf_smoke_count_for(enum cf_smoke_op op, size_t bytes, size_t elem_size, int nranks);

/* ---- options ---- */
enum { CF_PLACE_OUT = 1, CF_PLACE_IN = 2 };

/* Fault injection for tests (CCLFORGE_SMOKE_FAULT="RANK:ACTION:OP"): on rank RANK,
 * at the first size of OP, "abort" raises SIGABRT, "hang" sleeps forever, "exit"
 * exits 3, "corrupt" bumps one input element so the results come out wrong. OP
 * "init" fires before the backend starts (op == CF_OP_COUNT). */
enum cf_smoke_fault_action { CF_FAULT_NONE, CF_FAULT_ABORT, CF_FAULT_HANG, CF_FAULT_EXIT, CF_FAULT_CORRUPT };
struct cf_smoke_fault {
    enum cf_smoke_fault_action action;
    int rank;
    enum cf_smoke_op op;
};
int cf_smoke_fault_parse(const char *spec, struct cf_smoke_fault *out, cf_error *err);

struct cf_smoke_opts {
    enum cf_smoke_backend_kind backend;
    const char *lib_path;      /* comm library; NULL: what the loader picks */
    const char *runtime_path;  /* device runtime; NULL: searched */
    int nranks;                /* local ranks to start; 0: one rank, or the external launcher's */
    unsigned ops;              /* bit (1u << cf_smoke_op) */
    unsigned dtypes;           /* bit (1u << cf_smoke_dtype) */
    unsigned places;           /* CF_PLACE_* */
    struct cf_smoke_sweep sweep;
    int warmup_iters;
    int iters;
    int check;                 /* verify results (nccl-tests -c) */
    double op_timeout_s;       /* a rank silent this long is declared hung */
    double connect_timeout_s;  /* rendezvous: how long to wait for peers */
    struct cf_smoke_fault fault;
    const char *mpirun;        /* mpirun program for `-n N --backend mpi` (default "mpirun") */
    const char *self_exe;      /* this program, re-run by mpirun as the ranks */
    char *const *self_argv;    /* its arguments after the program name (NULL-terminated) */
    char *const *envp;         /* the environment to read launchers from */
};
void cf_smoke_opts_defaults(struct cf_smoke_opts *o);

/* ---- events and report ---- */
enum cf_smoke_event_kind {
    CF_EV_RESULT,  /* one rank finished one (op, dtype, size, place) */
    CF_EV_INFO,    /* rank-level facts: key/value (library version, unique-id hash, ...) */
    CF_EV_LOG,     /* a line a rank printed (library warnings, MPI messages) */
    CF_EV_FAIL     /* a rank failed as a whole (init, death, hang) */
};

struct cf_smoke_row {
    enum cf_smoke_op op;
    enum cf_smoke_dtype dtype;
    int in_place;
    size_t bytes;
    size_t count;
    double time_us;  /* averaged over ranks */
    double algbw;    /* GB/s */
    double busbw;    /* GB/s */
    long wrong;      /* wrong elements, summed over ranks */
    int ok;
};

struct cf_smoke_event {
    enum cf_smoke_event_kind kind;
    int rank;        /* -1: the supervisor itself */
    int local_rank;
    struct cf_smoke_row row;      /* CF_EV_RESULT: this rank's view (row.wrong: its own) */
    long wrong_all_ranks;         /* CF_EV_RESULT: wrong elements summed over every rank */
    double t;                     /* when the rank sent it (CLOCK_MONOTONIC seconds) */
    const char *key, *value;      /* CF_EV_INFO */
    const char *text;             /* CF_EV_LOG line, CF_EV_RESULT / CF_EV_FAIL reason */
    int fatal;                    /* CF_EV_FAIL from a rank's watchdog: the rank is stuck in a
                                   * call the library cannot unwind; the caller must end the
                                   * process (the launcher then stops the other ranks) */
};
typedef void (*cf_smoke_event_fn)(void *ctx, const struct cf_smoke_event *ev);

enum cf_smoke_role { CF_ROLE_SUPERVISOR, CF_ROLE_RANK, CF_ROLE_SUPERVISED_RANK };

struct cf_smoke_failure {
    int rank;        /* -1 when not one rank's */
    char *doing;     /* what it was doing: "all_reduce float 4096 bytes in-place", "comm init" */
    char *reason;
};

struct cf_smoke_report {
    enum cf_smoke_role role;
    const char *launcher;   /* "local", "mpirun", "srun", "torchrun", ... (static) */
    const char *backend;    /* static */
    int nranks;
    int rank;               /* this process's rank (CF_ROLE_RANK) */
    char *lib_version;      /* "NCCL 2.28.9 (22809)", "Open MPI v4.1.4" */
    char *lib_path;
    struct cf_smoke_row *rows; /* the agreed table (rank 0's view), in run order */
    size_t nrows;
    struct cf_smoke_failure *failures;
    size_t nfailures;
    long passed, failed;       /* table rows passed / failed */
    int aborted;               /* the run stopped early (a failure above) */
};
void cf_smoke_report_release(struct cf_smoke_report *r);

/* Runs the smoke test in whatever role the environment calls for. Returns 0 when it
 * ran to a verdict (check report->failed and ->aborted), -1 on a usage or setup error. */
int cf_smoke_run(const struct cf_smoke_opts *opts, cf_smoke_event_fn on_event, void *ctx,
                 struct cf_smoke_report *report, cf_error *err);

/* Where the MPI plugin is looked for, in order; exposed for `--help` and the tests. */
#define CF_SMOKE_MPI_PLUGIN_NAME "cclforge_smoke_mpi.so"
void cf_smoke_plugin_candidates(char *const *envp, struct strvec *out);

/* FNV-1a 64 of bytes, as printed for the NCCL unique id each rank received. */
uint64_t cf_smoke_fnv1a(const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
