/* `cclforge smoke`: a multi-rank collective smoke and bandwidth test for any library
 * with the NCCL C API (NCCL, RCCL) and for MPI on host memory, with nccl-tests'
 * semantics, that names the slow or failing rank, host and link.
 *
 * One entry point, cf_smoke_run(), plays one of three roles:
 *  - local supervisor (`-n N`, no launcher around): starts N ranks (cclforge again,
 *    or mpirun for MPI), watches them with a per-operation timeout, stops them all
 *    when one dies, hangs or fails, and merges what they report;
 *  - one rank under an external launcher (mpirun, srun, torchrun): runs the sweep and
 *    reports its own results (rank 0 reports the agreed table);
 *  - one rank under the local supervisor: reports machine-readable records to it.
 * The library never prints: events go to a callback, the summary into a report. */
#ifndef CCLFORGE_SMOKE_H
#define CCLFORGE_SMOKE_H

#include <signal.h>
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

/* How a collective's buffers relate to the per-rank share nccl-tests rounds to 16 bytes. */
enum cf_smoke_share {
    CF_SHARE_NONE, /* send = recv = count (all_reduce, broadcast, reduce, sendrecv) */
    CF_SHARE_SEND, /* send = share, recv = share x n (all_gather, gather) */
    CF_SHARE_RECV, /* send = share x n, recv = share (reduce_scatter, scatter) */
    CF_SHARE_BOTH  /* send = recv = share x n (alltoall) */
};

/* nccl-tests' algbw -> busbw factor for n ranks (cf_smoke_busbw_factor). */
enum cf_smoke_busbw {
    CF_BUSBW_ONE,          /* 1 */
    CF_BUSBW_SHARE,        /* (n - 1) / n */
    CF_BUSBW_TWICE_SHARE   /* 2 (n - 1) / n */
};

/* One collective: its names, and its bus-bandwidth factor as data. */
struct cf_smoke_op_info {
    enum cf_smoke_op op;
    const char *name;        /* "all_reduce" */
    const char *nccl_tests;  /* the nccl-tests binary it matches: "all_reduce_perf" */
    enum cf_smoke_busbw busbw;
    enum cf_smoke_share share;
    int reduces;             /* takes -o */
    int rooted;              /* takes -r */
    int checks_in_place;     /* 0: nccl-tests runs the in-place form but does not check it */
};
const struct cf_smoke_op_info *cf_smoke_op_info(enum cf_smoke_op op);
int cf_smoke_op_parse(const char *name, enum cf_smoke_op *out);
double cf_smoke_busbw_factor(const struct cf_smoke_op_info *info, int nranks);

struct cf_smoke_redop_info {
    enum cf_smoke_redop redop;
    const char *name; /* nccl-tests' -o word */
};
const struct cf_smoke_redop_info *cf_smoke_redop_info(enum cf_smoke_redop r);
int cf_smoke_redop_parse(const char *name, enum cf_smoke_redop *out);

struct cf_smoke_dtype_info {
    enum cf_smoke_dtype dtype;
    const char *name;      /* nccl-tests spelling: "float", "half", "bfloat16", "int32" */
    const char *alias;     /* another accepted spelling: "fp32", "fp16", "bf16" */
    size_t size;
    int is_float;
    int64_t exact_limit;   /* every integer in [0, exact_limit] is exactly representable */
    int max_pow2;          /* the largest e with 2^e representable (products of powers of two) */
};
const struct cf_smoke_dtype_info *cf_smoke_dtype_info(enum cf_smoke_dtype dt);
int cf_smoke_dtype_parse(const char *name, enum cf_smoke_dtype *out);

/* Value of element i of a buffer as a double (handles fp16/bf16 bit patterns). */
double cf_smoke_load(enum cf_smoke_dtype dt, const void *buf, size_t i);
/* Stores v (an exactly representable value) into element i. */
void cf_smoke_store(enum cf_smoke_dtype dt, void *buf, size_t i, double v);

/* ---- the data: inputs that never repeat, results known exactly ---- */
struct cf_smoke_data {
    enum cf_smoke_dtype dtype;
    enum cf_smoke_redop redop; /* CF_RED_COUNT for collectives that only move data */
    int nranks;
    uint64_t seed;             /* differs per test: a stale result cannot pass */
};
/* Input of `rank` at index `i` of its send buffer (a 64-bit hash of seed, rank and i,
 * mapped to a range where every reduction over nranks is exact in any order). */
double cf_smoke_input(const struct cf_smoke_data *d, int rank, size_t i);
/* The reduction over every rank of their inputs at index i. */
double cf_smoke_reduced(const struct cf_smoke_data *d, size_t i);
/* How far a correct result may be from cf_smoke_reduced: 0 (exact) except avg of a
 * floating type (NCCL premultiplies by 1/n in a precision that varies by device, as
 * nccl-tests allows: 2 units in the last place of the type). */
double cf_smoke_tolerance(const struct cf_smoke_data *d, double expected);

/* ---- the size sweep, as nccl-tests' -b/-e/-f/-i ---- */
struct cf_smoke_sweep {
    size_t min_bytes, max_bytes;
    size_t step_factor; /* > 1: multiply (nccl-tests: -f wins over -i) */
    size_t step_bytes;  /* added when step_factor <= 1 */
};
/* The size after `bytes`, or 0 when the sweep ends (past max, or not growing). */
size_t cf_smoke_next_size(const struct cf_smoke_sweep *sw, size_t bytes);

/* The buffers of one test as nccl-tests lays them out (its GetCollByteCount). */
struct cf_smoke_layout {
    size_t count;        /* what the call takes (nccl-tests' count column: per rank) */
    size_t send_elems, recv_elems;
    size_t send_offset, recv_offset; /* in-place: where this rank's send / recv sit in the one buffer */
    size_t bytes;        /* nccl-tests' size column: max(send, recv) x element size */
};
/* 0 elements means "nothing to run at this size" (the share rounds to 0). */
void cf_smoke_layout_for(enum cf_smoke_op op, size_t bytes, enum cf_smoke_dtype dt, int nranks, int rank,
                         struct cf_smoke_layout *l);

/* ---- options ---- */
enum { CF_PLACE_OUT = 1, CF_PLACE_IN = 2 };
/* -a: what the time of a test is, over the ranks (nccl-tests' numbering) */
enum cf_smoke_average { CF_AVG_RANK0, CF_AVG_MEAN, CF_AVG_MIN, CF_AVG_MAX };
/* --pattern: how the hosts of the world are grouped */
enum cf_smoke_pattern { CF_PATTERN_ALL, CF_PATTERN_INTRA, CF_PATTERN_INTER, CF_PATTERN_PAIRWISE, CF_PATTERN_BISECT };
int cf_smoke_pattern_parse(const char *name, enum cf_smoke_pattern *out);
const char *cf_smoke_pattern_name(enum cf_smoke_pattern p); /* NULL past the last */
/* --expect-transport: what every NCCL connection of its kind must use */
enum cf_smoke_transport { CF_TRANSPORT_ANY, CF_TRANSPORT_IB, CF_TRANSPORT_SOCKET, CF_TRANSPORT_P2P, CF_TRANSPORT_SHM };
int cf_smoke_transport_parse(const char *name, enum cf_smoke_transport *out);
const char *cf_smoke_transport_name(enum cf_smoke_transport t); /* "any" for CF_TRANSPORT_ANY */

/* Fault injection for tests (CCLFORGE_SMOKE_FAULT="RANK:ACTION:OP"): on rank RANK,
 * at the first size of OP, "abort" raises SIGABRT, "hang" sleeps forever, "exit"
 * exits 3; "corrupt" makes one element of this rank's result wrong in every test of
 * OP (its input when it contributes one, else what it received); "slow" sleeps 300 ms
 * in every iteration of OP. OP "init" fires before the backend starts; "finalize"
 * after the rank's verdict is out, where MPI_Finalize runs (abort, hang, exit). */
enum cf_smoke_fault_action {
    CF_FAULT_NONE, CF_FAULT_ABORT, CF_FAULT_HANG, CF_FAULT_EXIT, CF_FAULT_CORRUPT, CF_FAULT_SLOW
};
struct cf_smoke_fault {
    enum cf_smoke_fault_action action;
    int rank;
    enum cf_smoke_op op; /* CF_OP_COUNT: init or finalize */
    int at_finalize;
};
int cf_smoke_fault_parse(const char *spec, struct cf_smoke_fault *out, cf_error *err);

struct cf_smoke_opts {
    enum cf_smoke_backend_kind backend;
    const char *lib_path;      /* comm library; NULL: what the loader picks */
    const char *runtime_path;  /* device runtime; NULL: searched */
    int nranks;                /* local ranks to start; 0: one rank, or the external launcher's */
    unsigned ops;              /* bit (1u << cf_smoke_op) */
    unsigned dtypes;           /* bit (1u << cf_smoke_dtype) */
    unsigned redops;           /* bit (1u << cf_smoke_redop), for the collectives that reduce */
    unsigned places;           /* CF_PLACE_* */
    int root;                  /* rooted collectives: this rank, or -1 for every rank in turn */
    struct cf_smoke_sweep sweep;
    int warmup_iters;
    int iters;
    int check;                 /* check iterations per test (nccl-tests -c); 0: none */
    enum cf_smoke_average average;
    int blocking;              /* -z: wait for each collective before the next (device backends) */
    int graph_launches;        /* -G: capture the iterations in a graph, launch it this often */
    int registration;          /* -R: register the buffers with the communicator */
    double op_timeout_s;       /* a rank without progress this long is declared hung */
    double connect_timeout_s;  /* rendezvous: how long to wait for peers */
    double min_busbw;          /* GB/s; > 0: a run whose average busbw is lower fails */
    enum cf_smoke_transport expect_transport;
    enum cf_smoke_pattern pattern;
    struct cf_smoke_fault fault;
    const char *mpirun;        /* mpirun program for `-n N --backend mpi` (default "mpirun") */
    const char *mpi_lib;       /* --mpi-lib: the libmpi; NULL: CCLFORGE_MPI_LIB, then by launcher */
    const char *self_exe;      /* this program, started again as the ranks */
    char *const *self_argv;    /* its arguments after the program name (NULL-terminated) */
    char *const *envp;         /* the environment to read launchers from */
    const volatile sig_atomic_t *stop; /* the supervisor stops the ranks and reports once *stop
                                        * is set (the CLI's SIGINT/SIGTERM handler) */
};
void cf_smoke_opts_defaults(struct cf_smoke_opts *o);

/* ---- events and report ---- */
enum cf_smoke_event_kind {
    CF_EV_RESULT,   /* one rank finished one test */
    CF_EV_INFO,     /* rank-level facts: key/value (library version, host, device, ...) */
    CF_EV_LOG,      /* a line a rank printed (library warnings, MPI messages) */
    CF_EV_FAIL,     /* a rank failed as a whole (init, death, hang): the run stops */
    CF_EV_PROBLEM,  /* a rank found something wrong that fails the run without stopping it */
    CF_EV_TRANSPORT,/* one connection NCCL made, from its own log */
    CF_EV_GROUP,    /* rank 0: one group of a --pattern search */
    CF_EV_VERDICT   /* rank 0: the run's verdict, one line */
};

struct cf_smoke_row {
    enum cf_smoke_op op;
    enum cf_smoke_dtype dtype;
    enum cf_smoke_redop redop; /* CF_RED_COUNT when the collective does not reduce */
    int root;                  /* -1 when the collective has none */
    int in_place;
    size_t bytes;              /* nccl-tests' size column */
    size_t count;              /* nccl-tests' count column (per rank) */
    double time_us;            /* the run's time (per -a over the ranks) */
    double algbw, busbw;       /* GB/s */
    long wrong;                /* wrong elements, summed over ranks; -1: not checked */
    int ok;
    int group;                 /* the --pattern group it ran in (0: the world) */
    int nranks;                /* ranks in that group */
    /* attribution */
    int slowest_rank;          /* world rank */
    double slowest_us, median_us;
    double *rank_time_us;      /* nranks entries, group rank order (owned by the report) */
    int *rank_of;              /* nranks entries: the world rank of each */
    /* robustness: the timed calls cut into samples (docs/smoke.md, "How a figure is measured") */
    int iters;                 /* timed calls */
    int samples;               /* samples they were cut into */
    double busbw_median;       /* GB/s, from the median time of a call over the samples */
    double busbw_spread;       /* (fastest - slowest sample's busbw, k-th of each end) / median; < 0: unknown */
};

struct cf_smoke_transport_conn {
    int rank, peer;       /* world ranks (from NCCL's own numbering within the communicator) */
    char kind[32];        /* "P2P", "SHM", "NET" */
    char via[64];         /* NCCL's words after "via": "P2P/IPC", "NET/IB/0/GDRDMA", "NET/Socket/1" */
    int channels;         /* how many channels used it */
};

struct cf_smoke_group {
    int id;               /* 1.. in the order they ran */
    int round;            /* groups of one round ran at the same time */
    char label[256];      /* "node-a+node-c", "local rank 0 ring" */
    int nranks, nhosts;
    double avg_busbw;     /* mean busbw over its tests */
    double busbw_median;  /* median over its tests of each test's median busbw: what is judged */
    double busbw_spread;  /* median over its tests of each test's spread; < 0: unknown */
    long tests, failed;
    int bad;              /* judged bad (failed, under --min-busbw, or slow against the others) */
    int conclusive;       /* 0: its numbers could not tell whether it is bad (why says why) */
    char why[256];
};

struct cf_smoke_event {
    enum cf_smoke_event_kind kind;
    int rank;        /* -1: the supervisor itself */
    int local_rank;
    struct cf_smoke_row row;      /* CF_EV_RESULT: the agreed row (row.wrong: all ranks); see own_* */
    long own_wrong;               /* CF_EV_RESULT: this rank's wrong elements */
    double own_time_us;           /* CF_EV_RESULT: this rank's time */
    int leader;                   /* CF_EV_RESULT: this rank reports its group's row */
    struct cf_smoke_transport_conn conn; /* CF_EV_TRANSPORT */
    struct cf_smoke_group group;  /* CF_EV_GROUP */
    double t;                     /* when the rank sent it (CLOCK_MONOTONIC seconds) */
    const char *key, *value;      /* CF_EV_INFO */
    const char *text;             /* CF_EV_LOG line, CF_EV_RESULT / FAIL / PROBLEM reason, CF_EV_VERDICT */
    int fatal;                    /* CF_EV_FAIL from a rank's watchdog: the rank is stuck in a
                                   * call the library cannot unwind; the caller must end the
                                   * process (the launcher then stops the other ranks) */
};
typedef void (*cf_smoke_event_fn)(void *ctx, const struct cf_smoke_event *ev);

enum cf_smoke_role { CF_ROLE_SUPERVISOR, CF_ROLE_RANK, CF_ROLE_SUPERVISED_RANK };
/* The role cf_smoke_run will play in this environment (the CLI handles Ctrl-C only
 * where it supervises); -1 on malformed launcher variables. */
int cf_smoke_role_for(const struct cf_smoke_opts *o, cf_error *err);

struct cf_smoke_failure {
    int rank;        /* -1 when not one rank's */
    char *doing;     /* what it was doing: "all_reduce float 4096 B in-place", "comm init" */
    char *reason;
};

struct cf_smoke_host {
    char *hostname;
    char *device;    /* "0000:1B:00.0 sm_90", "host memory" */
    int pid;
    char *links;     /* the links it can reach other hosts by, in cf_rank_links_format's form; NULL unknown */
};

struct cf_smoke_report {
    enum cf_smoke_role role;
    const char *launcher;   /* "local", "mpirun", "srun", "torchrun", ... (static) */
    const char *backend;    /* static */
    int nranks;
    int rank;               /* this process's rank (CF_ROLE_RANK) */
    char *lib_version;      /* "NCCL 2.28.9 (22809)", "Open MPI v4.1.4" */
    char *lib_path;
    char *mpi_abi;          /* the mpi backend: the loaded libmpi's ABI, "Open MPI" or "MPICH" */
    char *mpi_chosen_by;    /* ... and the rule that chose that library */
    int (*finalize_later)(void); /* a rank's MPI_Finalize, run by cf_smoke_report_release: print first */
    int leave_by_exit;      /* a rank must end by exit(), not _exit() (smoke_backend.h) */
    enum cf_smoke_fault_action finalize_fault; /* the fault switch's "finalize", fired there */
    struct cf_smoke_host *hosts;   /* nranks entries, by world rank (NULL fields when unknown) */
    struct cf_smoke_row *rows;     /* the agreed table, in run order */
    size_t nrows;
    struct cf_smoke_failure *failures; /* ranks that failed as a whole: the run stopped */
    size_t nfailures;
    struct cf_smoke_failure *problems; /* what failed the run without stopping it */
    size_t nproblems;
    struct cf_smoke_transport_conn *conns;
    size_t nconns;
    char *net_plugin;              /* "IB", "Socket", a plugin's name; NULL: none seen */
    struct cf_smoke_group *groups;
    size_t ngroups;
    char *verdict;                 /* one line naming the bad host, rank or link, or that all is well */
    char *inconclusive;            /* NULL: the verdict stands on its numbers; else why it could not
                                    * (the verdict then names no host and the run fails) */
    struct strvec bad_hosts;       /* the hosts the search named bad (its one rule, groups.c);
                                    * none when it named nobody or could not tell */
    char *skipped;                 /* why sizes were skipped (NULL: none) */
    long passed, failed;           /* tests passed / failed (rank-level failures and problems count as failed) */
    long out_of_bounds;            /* wrong elements over every test (nccl-tests' footer) */
    double avg_busbw;              /* mean busbw over every test (nccl-tests' footer) */
    int aborted;                   /* the run stopped early (a failure above) */
    int interrupted;               /* ... because the supervisor was told to stop (Ctrl-C) */
};
void cf_smoke_report_release(struct cf_smoke_report *r);

/* Runs the smoke test in whatever role the environment calls for. Returns 0 when it
 * ran to a verdict (check report->failed and ->aborted), -1 on a usage or setup error. */
int cf_smoke_run(const struct cf_smoke_opts *opts, cf_smoke_event_fn on_event, void *ctx,
                 struct cf_smoke_report *report, cf_error *err);

/* ---- NCCL's own log: which transport each connection used ---- */
struct cf_smoke_nccl_log {
    struct cf_smoke_transport_conn *conns;
    size_t nconns;
    char *net;          /* "Using network IB" -> "IB" */
    char *plugin;       /* "NET/Plugin: Loaded net plugin X" -> "X" */
    struct strvec warnings; /* NCCL WARN lines, and NET/IB's "No device found." */
};
/* Parses NCCL_DEBUG=INFO output (NCCL_DEBUG_SUBSYS=INIT,NET) of the formats of NCCL
 * 2.12 to 2.28; lines it does not know are ignored. */
void cf_smoke_nccl_log_parse(const char *text, size_t len, struct cf_smoke_nccl_log *out);
void cf_smoke_nccl_log_release(struct cf_smoke_nccl_log *log);
/* Whether conn is of the class expect constrains (NET for ib/socket, the rest for
 * p2p/shm), and if so whether it matches it. */
int cf_smoke_transport_applies(enum cf_smoke_transport expect, const struct cf_smoke_transport_conn *c);
int cf_smoke_transport_matches(enum cf_smoke_transport expect, const struct cf_smoke_transport_conn *c);

#ifdef __cplusplus
}
#endif
#endif
