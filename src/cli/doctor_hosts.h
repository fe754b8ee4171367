/* The parts of `cclforge doctor` that print NCCL's configuration, the fabric and
 * multi-host reports (src/cli/doctor_hosts.c), used by cmd_doctor.c. */
#ifndef CCLFORGE_CLI_DOCTOR_HOSTS_H
#define CCLFORGE_CLI_DOCTOR_HOSTS_H

#include "cclforge/doctor.h"
#include "cclforge/doctor_doc.h"
#include "cclforge/gather.h"
#include "cclforge/survey.h"

#include <cjson/cJSON.h>

void doctor_print_nccl_config(const struct cf_survey *s);
void doctor_print_fabric(const struct cf_survey *s);
/* Silent when nothing is wrong unless verbose; the reason line first otherwise. */
void doctor_print_consolidated(const struct cf_consolidated *c, const char *const *labels, size_t n, int verbose);
/* What each host runs (comm library, torch, GPU archs), hosts alike in one row;
 * surveys[i]: host i's survey, NULL when it sent none. */
void doctor_print_host_table(const struct cf_hosts_view *v, const struct cf_survey *const *surveys);
/* The gather's text report (rank 0): the consolidation, the host table. */
void doctor_print_gather(const struct cf_gather_result *r, int verbose);

/* --report (src/cli/doctor_report_file.c): the topology file to draw, from
 * --topo-file, else NCCL_TOPO_FILE, else NCCL_TOPO_DUMP_FILE when it exists
 * (*why names which; NULL: none, the sysfs facts are drawn); and the reports
 * written atomically, a line on stderr unless quiet. */
const char *doctor_topo_file(const char *given, const char **why);
int doctor_write_topology(const char *path, const struct cf_survey *s, const char *topo_file, int quiet, cf_error *err);
/* The hosts of a gather, side by side. */
int doctor_write_gather(const char *path, const struct cf_gather_result *r, int quiet, cf_error *err);
/* Saved documents (cJSON): one doctor document's topology, several hosts', or a gather's. */
int doctor_write_saved(const char *path, const cJSON *const *docs, size_t n, int quiet, cf_error *err);

#endif
