/* Conclusions from a survey (cclforge/survey.h): findings with a severity, one
 * line of why and a remedy. The checks are a table (src/doctor/doctor_checks.c);
 * each finding id is documented in docs/doctor.md. */
#ifndef CCLFORGE_DOCTOR_H
#define CCLFORGE_DOCTOR_H

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/survey.h"

#ifdef __cplusplus
extern "C" {
#endif

/* info: worth knowing, nothing to fix (e.g. no GPU on a dev box);
 * warning: works now but is fragile or limits what you can do;
 * error: something that will fail (missing kernels, ranks that cannot talk). */
enum cf_severity { CF_SEV_INFO = 0, CF_SEV_WARNING, CF_SEV_ERROR };

struct cf_finding {
    enum cf_severity severity;
    char *id;       /* stable id: "gpu-arch-not-covered", "nccl-mismatch", ... */
    char *subject;  /* what it is about: a file, a GPU, a host */
    char *why;      /* one line */
    char *remedy;   /* a command where one exists, else advice; NULL when nothing to do */
};

struct cf_findings {
    struct cf_finding *v;
    size_t n;
};
#define CF_FINDINGS_INIT { 0, 0 }

void cf_findings_add(struct cf_findings *f, enum cf_severity sev, const char *id, const char *subject,
                     const char *remedy, const char *why_fmt, ...) __attribute__((format(printf, 6, 7)));
void cf_findings_release(struct cf_findings *f);
/* The worst severity present; CF_SEV_INFO when empty. */
enum cf_severity cf_findings_worst(const struct cf_findings *f);
size_t cf_findings_count(const struct cf_findings *f, enum cf_severity sev);
const char *cf_severity_name(enum cf_severity sev); /* "info", "warning", "error" */
int cf_severity_parse(const char *name, enum cf_severity *out); /* the inverse; -1: not a severity's name */
/* A cJSON array (typed void *) of {severity, id, subject, why, remedy}. */
void *cf_findings_to_json(const struct cf_findings *f);
/* The strict reader of such an array (where: its name in errors, "findings"):
 * appends the findings as written, -1 (CF_ERR_FORMAT) naming the first field
 * that is missing or not what the writer writes. */
int cf_findings_from_json(const void *array, const char *where, struct cf_findings *out, cf_error *err);

/* Runs every single-host check over s and appends findings, errors first. */
void cf_doctor_diagnose(const struct cf_survey *s, struct cf_findings *out);

/* Cross-host checks over several surveys (labels name the hosts in findings):
 * errors for what stops ranks from talking (NCCL version code, NCCL vs RCCL,
 * torch version), warnings for GPU archs one host's library lacks. */
void cf_doctor_compare(const struct cf_survey *hosts, const char *const *labels, size_t n,
                       struct cf_findings *out);

/* ---- across hosts: what they share and where they differ (src/doctor/facts.c,
 * src/doctor/consolidate.c) ---- */

/* One fact of a host, as compared: "NCCL" -> "2.28.9 (22809)". */
struct cf_host_fact {
    char *label;
    char *value;             /* "(none)" when absent */
    enum cf_severity sev;    /* of a difference */
};
/* Every compared fact of a survey, in a fixed order (the table in facts.c): the
 * NCCL/RCCL version code, library path and archs, driver and CUDA/HIP runtime,
 * toolkit, torch and its C++11 ABI, glibc, each NCCL variable, the net plugin,
 * IB ports and states, GPU models/archs/counts, kernel, /dev/shm and memlock. */
void cf_host_facts(const struct cf_survey *s, struct cf_host_fact **out, size_t *n);
void cf_host_facts_release(struct cf_host_fact *f, size_t n);

struct cf_host_group {
    char *value;
    struct strvec hosts;
};
struct cf_fact_diff {
    char *label;
    enum cf_severity sev;
    struct cf_host_group *groups; size_t n_groups; /* largest first */
    char *summary;           /* "7 hosts NCCL 2.27.5, node-b 2.26.2" */
    int judged;              /* counted by a cross-host finding of its own (sev is that one's), not as hosts-differ */
};
struct cf_consolidated {
    size_t n_hosts;
    struct cf_host_fact *shared; size_t n_shared; /* the same on every host (sev unused) */
    struct cf_fact_diff *diffs; size_t n_diffs;   /* errors first */
    struct cf_findings findings; /* cross-host, then each host's own ("host: subject"), errors first */
    char *reason;            /* one line for a prolog; NULL when nothing is wrong */
};
/* per_host: each host's own findings (NULL: none). */
void cf_doctor_consolidate(const struct cf_survey *hosts, const char *const *labels,
                           const struct cf_findings *per_host, size_t n, struct cf_consolidated *out);
void cf_consolidated_release(struct cf_consolidated *c);
/* Adds "shared", "differences", "findings", "summary" and "reason" to a cJSON object (void *). */
void cf_consolidated_to_json(const struct cf_consolidated *c, void *obj);
/* Reads them back strictly from obj (cJSON): every key the writer writes, each
 * difference's hosts among labels (the document's hosts), summary.hosts at most
 * n_labels and the other counts what the document holds. -1 (CF_ERR_FORMAT)
 * names the field; release out either way. */
int cf_consolidated_from_json(const void *obj, const char *const *labels, size_t n_labels, struct cf_consolidated *out,
                              cf_error *err);

/* The same finding on many hosts, once (src/doctor/finding_groups.c), for every
 * report of several hosts. A finding whose subject starts with a host's label
 * ("node07: ...") joins the others with the same severity, id, rest of the
 * subject, why and remedy; a finding about no one host stands alone. Groups come
 * in the order of their first finding (so errors first, as consolidated). */
struct cf_finding_group {
    const struct cf_finding *f;     /* the first: severity, id, why and remedy of all */
    const char *subject;            /* inside f->subject: what follows the host's label */
    size_t *hosts; size_t n_hosts;  /* indices into labels, ascending; none: about no one host */
};
struct cf_finding_groups {
    struct cf_finding_group *v;
    size_t n;
};
/* out points into f, which must outlive it. */
void cf_findings_group(const struct cf_findings *f, const char *const *labels, size_t n_labels,
                       struct cf_finding_groups *out);
void cf_finding_groups_release(struct cf_finding_groups *g);

/* ---- across ranks (src/doctor/rank_env.c) ---- */

/* One rank's NCCL configuration as it reported it under doctor --gather. */
struct cf_rank_env {
    int rank;
    const char *host;                      /* its host's label */
    const struct cf_nccl_config *config;   /* NULL: the rank sent none */
};
/* NCCL variables whose value differs between the ranks of one host (a variable
 * set in one rank's environment that the launcher did not pass to the others):
 * one warning per variable and host, the ranks grouped by value. A variable
 * that differs only between hosts is the host comparison's (hosts-differ). */
void cf_doctor_compare_ranks(const struct cf_rank_env *ranks, size_t n, struct cf_findings *out);


/* Minimum Linux driver for a CUDA major.minor (CUDA release notes, table 3), as
 * "580.65.06"; and the newest CUDA a driver version supports (13000 style, 0 unknown). */
const char *cf_cuda_min_driver(int cuda_major, int cuda_minor);
int cf_driver_max_cuda(const char *nvidia_driver_version);

#ifdef __cplusplus
}
#endif
#endif
