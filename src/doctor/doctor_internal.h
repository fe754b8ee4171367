/* Private interface between the doctor's files (src/doctor/). */
#ifndef CCLFORGE_DOCTOR_INTERNAL_H
#define CCLFORGE_DOCTOR_INTERNAL_H

#include "cclforge/doctor.h"
#include "cclforge/strbuf.h"
#include "cclforge/survey.h"

/* The `cclforge nccl build` command that rebuilds comm library `c` for `archs`. */
void cf_nccl_build_command(const struct cf_survey *s, const struct cf_comm_lib *c, const struct strvec *archs,
                        struct strbuf *out);
/* Orders findings errors first, keeping check order within a severity. */
void cf_sort_findings(struct cf_findings *out);

/* The worst severity cf_doctor_compare gave the findings that judge the
 * host fact `label` ("NCCL", "torch": consolidate.c shows that fact's
 * difference as what it is counted as); -1 when none of them was raised. */
int cf_doctor_compare_severity(const struct cf_findings *f, const char *label);

/* The checks of NCCL's configuration (checks_config.c) and of the fabric and
 * limits (checks_fabric.c), run from the table in doctor_checks.c. */
void cf_check_nccl_config(const struct cf_survey *s, struct cf_findings *out);
void cf_check_fabric(const struct cf_survey *s, struct cf_findings *out);

#endif
