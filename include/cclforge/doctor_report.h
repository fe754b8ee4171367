/* The topology model of one host (src/doctor/topo_model.c), filled from the
 * survey's fabric or from NCCL's topology XML; src/report draws it. */
#ifndef CCLFORGE_DOCTOR_REPORT_H
#define CCLFORGE_DOCTOR_REPORT_H

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/fabric.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cJSON;

/* ---- the topology model both sources fill (src/doctor/topo_model.c) ---- */

enum cf_topo_kind { CF_TOPO_NUMA, CF_TOPO_ROOT, CF_TOPO_SWITCH, CF_TOPO_GPU, CF_TOPO_NIC, CF_TOPO_NVSWITCH, CF_TOPO_NETIF };

struct cf_topo_node {
    enum cf_topo_kind kind;
    char *id;       /* "numa0", "pci0000:00", a BDF, "nvswitch", an interface */
    char *label;    /* "GPU0", "mlx5_0,ens1f0", "NUMA 0" */
    char *detail;   /* "H100 · 32.0 GT/s x16"; NULL */
    int parent;     /* index into nodes; -1 at the top */
    int numa;       /* -1 unknown */
};

struct cf_topo_link { /* an NVLink bond (or XGMI): a GPU to a GPU or to the NVSwitch */
    int a, b;
    int count;
    char *type;     /* "NVLink", "XGMI" */
};

struct cf_topo {
    struct cf_topo_node *nodes; size_t n_nodes;
    struct cf_topo_link *links; size_t n_links;
    char **cls;     /* [n_nodes * n_nodes]: the class between two GPUs or a GPU and a NIC; NULL elsewhere */
    char *source;   /* "sysfs of HOST" or "NCCL topology XML FILE" */
    struct strvec notes; /* what the source cannot say */
};

/* From a survey's fabric: every GPU and NIC with the bridges above it (NCCL's
 * switch rule, cf_pci_switch_chain), classes from the fabric's own pairs. */
void cf_topo_from_fabric(const struct cf_fabric *f, struct cf_topo *t);
/* From NCCL's topology XML (bounded, as cf_nccl_topo_xml_walk reads it). */
int cf_topo_from_xml(const char *text, size_t len, struct cf_topo *t, cf_error *err);
void cf_topo_release(struct cf_topo *t);
/* A kind's name in the model's JSON and the page's data attributes ("gpu", "nvswitch"). */
const char *cf_topo_kind_name(enum cf_topo_kind k);
/* cclforge.doctor-topology/1, the model a topology page embeds for tools
 * (cJSON, typed void *): host, source, nodes, NVLink bonds, GPU classes, notes. */
void *cf_topo_to_json(const struct cf_topo *t, const char *host);
/* Indices of the nodes of one kind, in order (GPU order is bus order). */
size_t cf_topo_of_kind(const struct cf_topo *t, enum cf_topo_kind k, int *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
