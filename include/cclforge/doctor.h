/* Conclusions from a survey (cclforge/survey.h): findings with a severity, one
 * line of why and a remedy. The checks are a table (src/doctor/doctor_checks.c);
 * each finding id is documented in docs/doctor.md. */
#ifndef CCLFORGE_DOCTOR_H
#define CCLFORGE_DOCTOR_H

#include <stddef.h>

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
/* A cJSON array (typed void *) of {severity, id, subject, why, remedy}. */
void *cf_findings_to_json(const struct cf_findings *f);

/* Runs every single-host check over s and appends findings, errors first. */
void cf_doctor_diagnose(const struct cf_survey *s, struct cf_findings *out);

/* Cross-host checks over several surveys (labels name the hosts in findings):
 * errors for what stops ranks from talking (NCCL version code, NCCL vs RCCL,
 * torch version), warnings for GPU archs one host's library lacks. */
void cf_doctor_compare(const struct cf_survey *hosts, const char *const *labels, size_t n,
                       struct cf_findings *out);

/* The comm library ranks of this host would use: libtorch's (embedded copy, else
 * the loaded one), else the system one the loader finds, else the toolkit's. */
const struct cf_comm_lib *cf_doctor_active_comm(const struct cf_survey *s);

/* Minimum Linux driver for a CUDA major.minor (CUDA release notes, table 3), as
 * "580.65.06"; and the newest CUDA a driver version supports (13000 style, 0 unknown). */
const char *cf_cuda_min_driver(int cuda_major, int cuda_minor);
int cf_driver_max_cuda(const char *nvidia_driver_version);

#ifdef __cplusplus
}
#endif
#endif
