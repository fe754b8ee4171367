/* The smoke document (schema cclforge.smoke/2): its typed model, its JSON
 * writer and its strict reader, in one home (src/smoke/smoke_doc.c).
 *
 * A live run fills the model from what it computed (cf_smoke_doc_note for each
 * event, cf_smoke_doc_of_run for the report); `cclforge report` fills it from a
 * saved document (cf_smoke_doc_read). The terminal text, the JSON and the HTML
 * page are each rendered from the model (and its host matrix, built once from
 * it); nothing is parsed back from the JSON the same process wrote.
 *
 * The reader never invents a result: a field the document lacks stays unknown
 * (a verdict: NULL, read "unknown"; "ok": -1), and an impossible value (a wrong
 * type, a negative or non-finite size, time or busbw, a busbw over
 * CF_SMOKE_BUSBW_MAX, a size over CF_SMOKE_BYTES_MAX, a rank, host or group
 * that does not exist) is refused with CF_ERR_FORMAT naming its field as a
 * path ("rows[3].bytes"). */
#ifndef CCLFORGE_SMOKE_DOC_H
#define CCLFORGE_SMOKE_DOC_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cclforge/error.h"
#include "cclforge/path_capacity.h"
#include "cclforge/smoke.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_SMOKE_DOC_SCHEMA "cclforge.smoke/2"

/* A busbw no link reaches, GB/s: 1 PB/s, a thousand times the fastest GPU's
 * NVLink; --min-busbw's own upper bound. */
#define CF_SMOKE_BUSBW_MAX 1e6
/* A message size past any buffer a collective is given: a petabyte (2^50 B),
 * the upper bound of -b, -e and -i. */
#define CF_SMOKE_BYTES_MAX (1ull << 50)
/* Ranks a document may hold: past any launcher's world. */
#define CF_SMOKE_RANKS_MAX (1 << 24)

/* "ranks[]": a rank's host, device, process and links */
struct cf_smoke_doc_rank {
    char *hostname;             /* NULL unknown */
    char *device;
    int pid;
    int has_links;              /* "links" present (a run that recorded them, even none) */
    struct cf_rank_link *links;
    size_t nlinks;
};

/* "rank_results[]": one rank's own result of one test */
struct cf_smoke_rank_result {
    int rank, local_rank;
    enum cf_smoke_op op;        /* CF_OP_COUNT: unknown */
    enum cf_smoke_dtype dtype;  /* CF_DT_COUNT: unknown */
    enum cf_smoke_redop redop;  /* CF_RED_COUNT: none */
    int root;
    size_t bytes;
    int in_place, group, pass;
    long wrong;
    double time_us;
    char *reason;               /* NULL: none */
};

/* "rank_failures[]": a rank that failed (stops_the_run) or found a problem */
struct cf_smoke_rank_failure {
    int rank, local_rank;
    char *reason;
    int stops_the_run;
};

/* one fact of "rank_info": a string, or (nccl_warn) a list of them */
struct cf_smoke_info_item {
    char *key;
    char *value;                /* is_list == 0 */
    int is_list;
    struct strvec list;
};

/* "rank_info": one rank's facts, in the order they came */
struct cf_smoke_rank_infos {
    int rank;
    struct cf_smoke_info_item *item;
    size_t n;
};

struct cf_smoke_doc {
    enum cf_smoke_role role;
    char *backend, *launcher;   /* NULL unknown */
    int nranks;
    int rank;                   /* role "rank": this process's rank */
    char *lib_version, *lib_path, *mpi_abi, *mpi_chosen_by;
    int ok;                     /* the run's exit status was 0: 1, 0, or -1 unknown */
    char *verdict;              /* NULL: unknown (never read as passed) */
    int conclusive;
    char *inconclusive_why;
    int bad_hosts_known;        /* "bad_hosts" present: the run's search named them */
    struct strvec bad_hosts;
    long passed, failed, out_of_bounds;
    int aborted, interrupted;
    double avg_busbw;
    char *skipped;
    struct cf_smoke_doc_rank *ranks; /* nlisted entries, by rank (0 or nranks) */
    size_t nlisted;
    struct cf_smoke_row *rows;  /* rank_time_us, rank_of: nranks entries each, owned */
    double *slowest_vs_median;  /* by row: the slowest rank's time over the median, as the run
                                 * divided it (the times themselves are written to 15 digits) */
    size_t nrows;
    struct cf_smoke_group *groups;
    size_t ngroups;
    char *network;
    struct cf_smoke_transport_conn *conns;
    size_t nconns;
    struct cf_smoke_failure *failures, *problems;
    size_t nfailures, nproblems;
    struct cf_smoke_rank_infos *info;
    size_t ninfo;
    struct cf_smoke_rank_result *results;
    size_t nresults;
    struct cf_smoke_rank_failure *rank_failures;
    size_t nrank_failures;
    char *exclude;              /* the bad hosts as a Slurm hostlist; NULL: not written */
};

void cf_smoke_doc_init(struct cf_smoke_doc *d);
void cf_smoke_doc_release(struct cf_smoke_doc *d);

/* A live run: the rank-level records of one event (results, facts, failures). */
void cf_smoke_doc_note(struct cf_smoke_doc *d, const struct cf_smoke_event *ev);

struct cf_pair_matrix;
/* A live run: the model of rep (copied), ok the run's exit status was 0, and its
 * host matrix built once into m (whose hostlist becomes "exclude"). -1 with err
 * when the matrix cannot be built (the model is still complete, "exclude" ""). */
int cf_smoke_doc_of_run(struct cf_smoke_doc *d, const struct cf_smoke_report *rep, int ok,
                        struct cf_pair_matrix *m, cf_error *err);

/* The reader: fills d from a saved document. -1 (CF_ERR_FORMAT, the field
 * named) when json is not a smoke document or holds an impossible value; d is
 * then released. */
int cf_smoke_doc_read(const cJSON *json, struct cf_smoke_doc *d, cf_error *err);

/* A saved document: the reader, then the host matrix built once from the
 * model. -1 with err (CF_ERR_FORMAT: the reader refused it; CF_ERR_FAILED:
 * more than a report draws); nothing is left to release then. */
int cf_smoke_doc_open(const cJSON *json, struct cf_smoke_doc *d, struct cf_pair_matrix *m, cf_error *err);

/* The writer: the document as `cclforge smoke --json` prints it (tabs and
 * newlines); CF_SMOKE_DOC_SLIM: on one line, without the per-test arrays
 * ("rows", "groups", "rank_results", "rank_info", "rank_failures",
 * "transports"), which "left_out_of_report" lists. Caller frees. */
enum { CF_SMOKE_DOC_SLIM = 1 };
char *cf_smoke_doc_json(const struct cf_smoke_doc *d, unsigned flags);

/* Names of a row's op, dtype and redop ("?" unknown, "none" no reduction). */
const char *cf_smoke_doc_op_name(enum cf_smoke_op op);
const char *cf_smoke_doc_dtype_name(enum cf_smoke_dtype dt);
const char *cf_smoke_doc_redop_name(enum cf_smoke_redop r);

#ifdef __cplusplus
}
#endif
#endif
