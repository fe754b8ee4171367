/* The HTML pages (src/report/), each a renderer of one document's model, all
 * in the frame of cclforge/html.h; the CLI picks which to write. */
#ifndef CCLFORGE_REPORT_H
#define CCLFORGE_REPORT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_doc.h"
#include "cclforge/error.h"
#include "cclforge/fabric.h"
#include "cclforge/hang.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hosts x facts and findings (src/report/hosts_page.c): hosts alike
 * (cf_hosts_alike) in one row, each fact that differs with the hosts that have
 * each value (a Slurm hostlist), the minority values marked, findings by
 * severity, the view embedded as cclforge.doctor-hosts/1. Appends to out. */
void cf_doctor_hosts_html(const struct cf_hosts_view *v, struct strbuf *out);

/* One host's topology (src/report/topology_page.c): NUMA nodes, root
 * complexes, PCIe switches, GPUs, NICs and NVLink, drawn as SVG, with the GPU x
 * GPU and GPU x NIC matrix of `nvidia-smi topo -m` classes. The host's fabric
 * (host: its name; NULL "this host") is drawn unless topo_xml_path (NCCL's
 * topology file, NCCL_TOPO_FILE's format) is given, which then is. -1 when the
 * XML cannot be read (err names the file and the byte) or there is no fabric
 * (CF_ERR_FORMAT: a --quick report). */
int cf_doctor_topology_html(const struct cf_fabric *fabric, const char *host, const char *topo_xml_path,
                            struct strbuf *out, cf_error *err);

/* doctor's page from saved documents (src/report/doctor_saved.c, for
 * `cclforge report`): each read by its strict reader, then drawn as the run
 * that wrote it draws it -- one cclforge.doctor/1 document: its topology;
 * several: the hosts side by side, consolidated as a gather is; one
 * cclforge.doctor-gather/1: its hosts. -1 (CF_ERR_FORMAT) naming the document
 * and the field refused. */
int cf_doctor_saved_html(const struct cJSON *const *docs, size_t n, struct strbuf *out, cf_error *err);

/* The self-contained HTML report of a smoke document, from its model d and
 * its matrix m (built from d): verdict ("unknown" when d has none), bad hosts
 * and their hostlist, the matrix (an overview by host blocks with a drill-down
 * past CF_PAIR_FULL_MAX hosts), each pair against the capacity of its path
 * (else the median pair), the run's facts and json_text (d as written)
 * embedded; past 2 MB, d's slim form instead. Appends to out. */
#define CF_PAIR_FULL_MAX 64
void cf_smoke_report_html(const struct cf_smoke_doc *d, const struct cf_pair_matrix *m, const char *json_text,
                          struct strbuf *out);

/* The hang page (src/report/hang_page.c): the verdict, the groups and every
 * divergence, one lane per rank grouped by host (hosts without an odd rank
 * folded past 64 ranks) with its last collectives, hover titles for sizes,
 * dtypes and stack; json_text (cclforge.hang/1) embedded. Appends to out. */
void cf_hang_report_html(const struct cf_hang_result *r, const char *json_text, struct strbuf *out);

#ifdef __cplusplus
}
#endif
#endif
