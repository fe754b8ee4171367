/* doctor's documents, each with its model, JSON writer and strict reader in one
 * file of src/doctor/: a host's report (cclforge.doctor/1, doctor_doc.c), what
 * doctor compare reads and writes (cclforge.doctor-compare/1, compare_doc.c),
 * and the hosts of a report side by side with the one rule for hosts alike
 * (hosts_alike.c). The gather's document is in cclforge/gather.h. */
#ifndef CCLFORGE_DOCTOR_DOC_H
#define CCLFORGE_DOCTOR_DOC_H

#include <stddef.h>

#include "cclforge/doctor.h"
#include "cclforge/error.h"
#include "cclforge/strbuf.h"
#include "cclforge/survey.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- cclforge.doctor/1: one host's survey and its findings ---- */

struct cf_doctor_doc {
    struct cf_survey survey;
    struct cf_findings findings;
};

/* The document `cclforge doctor --json` prints (cJSON, typed void *): the
 * schema, the survey's sections, "findings" and "summary". */
void *cf_doctor_doc_to_json(const struct cf_survey *s, const struct cf_findings *f);
/* The strict reader (json: cJSON): every section a host's survey has (else
 * "NAME is not a host's survey: it lacks ..."), the schema, the findings and a
 * summary that counts them. The survey's host facts are read as written (its
 * survey time, what was injected), so the writer gives the same bytes back.
 * -1 (CF_ERR_FORMAT) naming the field; release d either way. */
int cf_doctor_doc_from_json(const void *json, const char *name, struct cf_doctor_doc *d, cf_error *err);
/* The same from a file (name: the path); -1 with CF_ERR_IO when unreadable.
 * survey_too: a survey `doctor --save` wrote (cclforge.survey/1) is read too,
 * as its survey and no findings (doctor compare reads only the survey). */
int cf_doctor_doc_load(const char *path, int survey_too, struct cf_doctor_doc *d, cf_error *err);
void cf_doctor_doc_release(struct cf_doctor_doc *d);

/* Several hosts' documents consolidated as the gather does (each host's own
 * findings included): labels[n] receives each host's name, made unique with
 * "#2", "#3" (free each); out as cf_doctor_consolidate. */
void cf_doctor_docs_consolidate(const struct cf_doctor_doc *docs, size_t n, char **labels,
                                struct cf_consolidated *out);

/* ---- doctor compare: several saved documents ---- */

struct cf_compare {
    struct cf_doctor_doc *docs; size_t n;
    const char **labels;       /* each host's name; the file's path where two share one */
    char *const *files;        /* the paths given (borrowed) */
    struct cf_consolidated cons;
};
/* Loads every document strictly (a doctor report, or a survey --save wrote) and compares them (cf_doctor_consolidate;
 * cross-host findings only). -1 naming the file that is no host's report. */
int cf_compare_run(char *const *files, size_t n, struct cf_compare *out, cf_error *err);
void cf_compare_release(struct cf_compare *c);
/* cclforge.doctor-compare/1 (cJSON, typed void *). */
void *cf_compare_to_json(const struct cf_compare *c);
/* A host's row of compare's table: "NCCL 2.28.9 (22809)", the torch version,
 * the GPU archs ("none" where a host has none), as the writer names them. */
void cf_compare_host_row(const struct cf_survey *s, struct strbuf *comm, struct strbuf *torch, struct strbuf *archs);

/* ---- hosts side by side (src/doctor/hosts_alike.c) ---- */

/* What the hosts page and the terminal tables draw: every host of a report, the
 * consolidation over them, and the ranks and hosts not heard from (NULL: the
 * documents of several hosts, no gather). Borrowed. */
struct cf_hosts_view {
    const char *const *labels; size_t n;
    const struct cf_consolidated *cons;
    const struct strvec *missing;
};

/* Hosts alike: the hosts with the same value for every fact that differs, one
 * row each, the most common combination first (group 0 of a difference is
 * its largest). A host no group names (not surveyed) has group -1 there. */
struct cf_alike_row {
    size_t *hosts; size_t n_hosts; /* indices into labels, ascending */
    const int *groups;             /* [cons->n_diffs] */
    int odd;                       /* a group other than the most common one */
};
struct cf_alike_rows {
    struct cf_alike_row *v; size_t n;
    int *groups;                   /* storage of every row's groups */
    size_t *hosts;                 /* storage of every row's hosts */
};
void cf_hosts_alike(const struct cf_hosts_view *v, struct cf_alike_rows *out);
void cf_alike_rows_release(struct cf_alike_rows *r);

/* cclforge.doctor-hosts/1, the model a hosts page embeds for tools (cJSON,
 * typed void *): the hosts, the consolidation, and "missing" after a gather. */
void *cf_hosts_view_to_json(const struct cf_hosts_view *v);

#ifdef __cplusplus
}
#endif
#endif
