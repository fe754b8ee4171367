/* `cclforge doctor --gather`: one process per rank under srun, mpirun or torchrun
 * (one process per rank); each host's local rank 0 surveys its host, every
 * rank reports its NCCL configuration, rank 0 collects what arrives by the
 * deadline over the authenticated TCP channel of cclforge/launch.h, names the
 * ranks and hosts that did not answer, and consolidates (cclforge/doctor.h).
 * Every rank then gets rank 0's verdict, so each exits 0 or 1 alike. */
#ifndef CCLFORGE_GATHER_H
#define CCLFORGE_GATHER_H

#include <stddef.h>

#include "cclforge/doctor.h"
#include "cclforge/error.h"
#include "cclforge/launch.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_GATHER_TAG "doctor"

struct cf_gather_opts {
    char *const *envp;        /* the environment (launcher variables) */
    double timeout_s;         /* for every rank to answer; then rank 0 reports who did not */
    /* What this rank sends: a `doctor --json` report when host_leader (local rank 0),
     * else a report of its NCCL configuration only. The CLI builds it. */
    int (*make_blob)(void *ctx, int host_leader, struct strbuf *out, cf_error *err);
    void *ctx;
};

struct cf_gather_host {
    char *label;              /* host name */
    struct strvec ranks;      /* ranks heard from on it */
    int surveyed;             /* its local rank 0 answered with a survey */
};

/* One rank heard from, with the NCCL configuration it reported. */
struct cf_gather_rank {
    int rank;
    size_t host;                     /* index into hosts */
    struct cf_nccl_config *config;   /* NULL: none in its report */
};

struct cf_gather_result {
    int is_rank0;
    const char *launcher;     /* static */
    int rank, world;
    char where[512];          /* rank 0's address and how it was found */
    /* rank 0 only */
    struct cf_gather_host *hosts; size_t n_hosts;
    struct cf_survey *surveys; /* [n_hosts]: empty for a host whose local rank 0 did not answer */
    struct cf_findings *per_host;
    struct strvec missing;    /* "rank 2" / "rank 2 (host node-c)" */
    struct cf_gather_rank *ranks; size_t n_ranks; /* every rank heard, in rank order */
    struct cf_launch_strays strays; /* connections to rank 0's port that never became a rank */
    struct cf_consolidated report;
    /* other ranks: rank 0's verdict */
    int verdict;              /* 0 fine, 1 problems; -1 rank 0 did not answer */
    char *reason;
};

/* 0 when the gather ran (problems are in the result), -1 when it could not start
 * (no launcher, malformed variables, rank 0's port in use). */
int cf_doctor_gather(const struct cf_gather_opts *o, struct cf_gather_result *out, cf_error *err);
void cf_gather_result_release(struct cf_gather_result *r);

/* ---- its document, cclforge.doctor-gather/1 (src/doctor/gather_doc.c) ---- */

/* What rank 0 prints with --json (cJSON, typed void *). */
void *cf_gather_doc_to_json(const struct cf_gather_result *r);
/* The strict reader (json: cJSON) into r as rank 0 held it (no rank's NCCL
 * configuration: the document has none): -1 (CF_ERR_FORMAT) naming the field;
 * release r either way. */
int cf_gather_doc_from_json(const void *json, struct cf_gather_result *r, cf_error *err);
/* Every host's label, in order (free the array, not the labels). */
const char **cf_gather_labels(const struct cf_gather_result *r);

#ifdef __cplusplus
}
#endif
#endif
