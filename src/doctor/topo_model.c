/* One host's topology as a tree of NUMA nodes, root complexes, switches, GPUs
 * and NICs with NVLink bonds and the pair classes of `nvidia-smi topo -m`,
 * filled from a survey's fabric or from NCCL's topology XML, and written as the
 * cclforge.doctor-topology/1 model a page embeds
 * (cclforge/doctor_report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_report.h"
#include "cclforge/json.h"
#include "cclforge/ncclconf.h"

enum { MAX_NODES = 512, MAX_LINKS = 4096, MAX_DEPTH = 1024 }; /* the class matrix is MAX_NODES squared */

static int find(const struct cf_topo *t, const char *id)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (!strcasecmp(t->nodes[i].id, id))
            return (int)i;
    return -1;
}

/* the node with this id, added when new; -1 once the model is full */
static int add(struct cf_topo *t, enum cf_topo_kind kind, const char *id, const char *label, int parent, int numa)
{
    int i = find(t, id);
    if (i >= 0)
        return i;
    if (t->n_nodes == MAX_NODES)
        return -1;
    t->nodes = cf_xrealloc(t->nodes, (t->n_nodes + 1) * sizeof *t->nodes);
    struct cf_topo_node *n = &t->nodes[t->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->id = cf_strdup(id);
    n->label = cf_strdup(label);
    n->parent = parent;
    n->numa = numa;
    return (int)t->n_nodes++;
}

/* A bond between two GPUs is listed by both: it is drawn once, as the first side
 * lists it. A GPU's links to NVSwitches are listed once per switch (a DGX A100's
 * six): summed (sum), they are its one bond to the NVSwitch drawn. */
static void add_link(struct cf_topo *t, int a, int b, int count, const char *type, int sum)
{
    if (a < 0 || b < 0 || a == b || t->n_links == MAX_LINKS)
        return;
    for (size_t i = 0; i < t->n_links; i++)
        if ((t->links[i].a == a && t->links[i].b == b) || (t->links[i].a == b && t->links[i].b == a)) {
            if (sum && count > 0 && t->links[i].count <= 4096 - count)
                t->links[i].count += count;
            return;
        }
    t->links = cf_xrealloc(t->links, (t->n_links + 1) * sizeof *t->links);
    t->links[t->n_links++] = (struct cf_topo_link){ a, b, count, cf_strdup(type) };
}

size_t cf_topo_of_kind(const struct cf_topo *t, enum cf_topo_kind k, int *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].kind == k) {
            if (n < cap)
                out[n] = (int)i;
            n++;
        }
    return n;
}

static void set_cls(struct cf_topo *t, int a, int b, const char *cls)
{
    if (a < 0 || b < 0)
        return;
    size_t n = t->n_nodes;
    free(t->cls[(size_t)a * n + (size_t)b]);
    t->cls[(size_t)a * n + (size_t)b] = cf_strdup(cls);
    if (a != b) {
        free(t->cls[(size_t)b * n + (size_t)a]);
        t->cls[(size_t)b * n + (size_t)a] = cf_strdup(cls);
    }
}

static void alloc_cls(struct cf_topo *t)
{
    t->cls = cf_xcalloc(t->n_nodes ? t->n_nodes * t->n_nodes : 1, sizeof *t->cls);
    for (size_t i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].kind == CF_TOPO_GPU)
            set_cls(t, (int)i, (int)i, "X");
}

/* NVLink classes over the PCI ones: a direct bond is NV<count>; two GPUs on the
 * NVSwitch are NV<the fewer links> (nvidia-smi's reading of an NVSwitch system) */
static void nvlink_classes(struct cf_topo *t)
{
    for (size_t i = 0; i < t->n_links; i++) {
        const struct cf_topo_link *l = &t->links[i];
        if (t->nodes[l->a].kind == CF_TOPO_GPU && t->nodes[l->b].kind == CF_TOPO_GPU) {
            char cls[32];
            snprintf(cls, sizeof cls, "%s%d", !strcmp(l->type, "XGMI") ? "XGMI" : "NV", l->count);
            set_cls(t, l->a, l->b, !strcmp(l->type, "XGMI") ? "XGMI" : cls);
        }
        for (size_t j = i + 1; j < t->n_links; j++) {
            const struct cf_topo_link *m = &t->links[j];
            if (l->b == m->b && l->a != m->a && t->nodes[l->b].kind == CF_TOPO_NVSWITCH) {
                char cls[32];
                snprintf(cls, sizeof cls, "NV%d", l->count < m->count ? l->count : m->count);
                set_cls(t, l->a, m->a, cls);
            }
        }
    }
}

/* the drawn GPU of a KFD node: the one at the PCI function the node names; -1 none */
static int kfd_gpu(const struct cf_topo *t, const struct cf_fabric *f, int node)
{
    for (size_t i = 0; i < f->n_kfd_gpus; i++)
        if (f->kfd_gpus[i].node == node && f->kfd_gpus[i].bdf) {
            int k = find(t, f->kfd_gpus[i].bdf);
            return k >= 0 && t->nodes[k].kind == CF_TOPO_GPU ? k : -1;
        }
    return -1;
}

/* NVML's NVLink peers: a bond to a GPU drawn here, else to the NVSwitch when the
 * far end is one (cf_nvlink_end_of, NCCL's rule); anything else is listed.
 * Returns how many GPUs have active NVLinks but no peer NVML could name. */
static int nvml_links(struct cf_topo *t, const struct cf_fabric *f)
{
    int unplaced = 0;
    for (size_t i = 0; i < f->n_nvml; i++) {
        const struct cf_nvml_gpu *g = &f->nvml[i];
        int me = g->bdf ? find(t, g->bdf) : -1;
        if (me < 0 || t->nodes[me].kind != CF_TOPO_GPU)
            continue;
        unplaced += g->nvlinks_active > 0 && !g->n_nvlink_peers;
        for (size_t k = 0; k < g->n_nvlink_peers; k++) {
            const struct cf_nvlink_peer *p = &g->nvlink_peers[k];
            int peer = p->bdf ? find(t, p->bdf) : -1;
            if (peer >= 0 && t->nodes[peer].kind == CF_TOPO_GPU)
                add_link(t, me, peer, p->links, "NVLink", 0);
            else if (cf_nvlink_end_of(f, p) == CF_NVLINK_TO_SWITCH)
                add_link(t, me, add(t, CF_TOPO_NVSWITCH, "nvswitch", "NVSwitch", -1, -1), p->links, "NVLink", 1);
            else
                cf_strvec_pushf(&t->notes, "%s: %d NVLink%s to %s (%s), which is not drawn", t->nodes[me].label,
                                p->links, p->links == 1 ? "" : "s", p->bdf ? p->bdf : "an unnamed device",
                                p->type ? p->type : "a device of unknown type");
        }
    }
    return unplaced;
}

static int by_bdf(const void *a, const void *b)
{
    return strcmp((*(const struct cf_pci_dev *const *)a)->bdf, (*(const struct cf_pci_dev *const *)b)->bdf);
}

/* a saved report may lack any field: a device without its address or role is not drawn */
static int drawable(const struct cf_pci_dev *d)
{
    return d->bdf && d->role && (!strcmp(d->role, "gpu") || !strcmp(d->role, "nic"));
}

static char *link_text(const char *speed, int width)
{
    if (!speed && !width)
        return NULL;
    char gts[32] = "?";
    if (speed)
        snprintf(gts, sizeof gts, "%.*s", (int)strcspn(speed, " "), speed);
    return cf_asprintf("%s GT/s x%d", gts, width);
}

void cf_topo_from_fabric(const struct cf_fabric *f, struct cf_topo *t)
{
    memset(t, 0, sizeof *t);
    const struct cf_pci_dev **devs = cf_xcalloc(f->n_pci ? f->n_pci : 1, sizeof *devs);
    size_t n_devs = 0;
    for (size_t i = 0; i < f->n_pci; i++)
        if (drawable(&f->pci[i]))
            devs[n_devs++] = &f->pci[i];
    qsort(devs, n_devs, sizeof *devs, by_bdf);
    int gpus = 0;
    for (size_t i = 0; i < n_devs; i++) {
        const struct cf_pci_dev *d = devs[i];
        int is_gpu = !strcmp(d->role, "gpu");
        char id[32], label[32];
        snprintf(id, sizeof id, "numa%d", d->numa);
        snprintf(label, sizeof label, d->numa >= 0 ? "NUMA %d" : "NUMA unknown", d->numa);
        int parent = add(t, CF_TOPO_NUMA, id, label, -1, d->numa);
        if (d->path.n > 1 && !cf_pci_is_bdf(d->path.v[0]))
            parent = add(t, CF_TOPO_ROOT, d->path.v[0], "root complex", parent, d->numa);
        const char *chain[32];
        size_t nc = cf_pci_switch_chain(&d->path, chain, 32);
        while (nc > 0)
            parent = add(t, CF_TOPO_SWITCH, chain[--nc], "PCIe switch", parent, d->numa);
        if (is_gpu)
            snprintf(label, sizeof label, "GPU%d", gpus++);
        int me = add(t, is_gpu ? CF_TOPO_GPU : CF_TOPO_NIC, d->bdf, is_gpu ? label : d->label ? d->label : "NIC",
                     parent, d->numa);
        if (me < 0)
            continue;
        char *lt = link_text(d->cur_speed, d->cur_width);
        const char *name = NULL;
        for (size_t k = 0; k < f->n_nvml; k++)
            if (f->nvml[k].bdf && !strcasecmp(f->nvml[k].bdf, d->bdf))
                name = f->nvml[k].name;
        free(t->nodes[me].detail); /* a saved report may list one address twice */
        t->nodes[me].detail = cf_asprintf("%s%s%s", name ? name : "", name && lt ? " · " : "", lt ? lt : "");
        free(lt);
    }
    free(devs);
    if (!n_devs)
        for (size_t i = 0; i < f->n_ifs; i++)
            if (!f->ifs[i].loopback && f->ifs[i].name)
                add(t, CF_TOPO_NETIF, f->ifs[i].name, f->ifs[i].name, -1, -1);
    int unplaced = nvml_links(t, f); /* before the matrix: it may add the NVSwitch */
    alloc_cls(t);
    for (size_t i = 0; i < f->n_pairs; i++)
        if (f->pairs[i].a && f->pairs[i].b && f->pairs[i].cls)
            set_cls(t, find(t, f->pairs[i].a), find(t, f->pairs[i].b), f->pairs[i].cls);
    if (unplaced)
        cf_strvec_pushf(&t->notes,
                        "%d GPU%s active NVLinks whose far ends NVML does not name "
                        "(nvmlDeviceGetNvLinkRemotePciInfo_v2): their pairs show PCIe classes; "
                        "NCCL's topology XML (--topo-file) gives NV#",
                        unplaced, unplaced == 1 ? " has" : "s have");
    /* KFD's XGMI links drawn between the GPUs whose PCI functions their nodes name;
     * the rest (PCIe peer paths through the CPU, nodes of unknown address) listed */
    for (size_t i = 0; i < f->n_kfd_links; i++) {
        const struct cf_kfd_link *l = &f->kfd_links[i];
        int a = kfd_gpu(t, f, l->from), b = kfd_gpu(t, f, l->to);
        if (l->type && !strcmp(l->type, "XGMI") && a >= 0 && b >= 0)
            add_link(t, a, b, 1, "XGMI", 0);
        else
            cf_strvec_pushf(&t->notes, "KFD node%d - node%d: %s, weight %d (%s)", l->from, l->to,
                            l->type ? l->type : "?", l->weight, l->table ? l->table : "?");
    }
    nvlink_classes(t);
}

/* ---- NCCL's XML ---- */

struct pending_nvlink {
    int gpu;
    char target[CF_TOPO_XML_MAX_STR];
    char tclass[CF_TOPO_XML_MAX_STR];
    int count;
};

struct xml_walk {
    struct cf_topo *t;
    int stack[MAX_DEPTH + 1]; /* the model node each open element stands for (or its nearest ancestor's) */
    struct pending_nvlink *nv; size_t n_nv;
    int cpus, gpus;
};

static int has_prefix(const char *s, const char *p)
{
    return s && !strncasecmp(s, p, strlen(p));
}

static void visit(void *ctx, const struct cf_topo_xml_elem *e)
{
    struct xml_walk *w = ctx;
    struct cf_topo *t = w->t;
    size_t d = e->depth < MAX_DEPTH ? e->depth : MAX_DEPTH;
    int parent = d ? w->stack[d - 1] : -1, me = parent;
    const char *cls = cf_topo_xml_attr(e, "class"), *busid = cf_topo_xml_attr(e, "busid");
    if (!strcmp(e->name, "cpu")) {
        const char *numa = cf_topo_xml_attr(e, "numaid");
        char id[300], label[300];
        snprintf(id, sizeof id, "numa%s", numa ? numa : "?");
        snprintf(label, sizeof label, "NUMA %s", numa ? numa : "unknown");
        me = add(t, CF_TOPO_NUMA, id, label, -1, numa ? atoi(numa) : -1);
        if (me >= 0) {
            const char *arch = cf_topo_xml_attr(e, "arch"), *vendor = cf_topo_xml_attr(e, "vendor");
            free(t->nodes[me].detail);
            t->nodes[me].detail = cf_asprintf("%s%s%s", arch ? arch : "", arch && vendor ? " " : "", vendor ? vendor : "");
        }
        w->cpus++;
    } else if (!strcmp(e->name, "pci") && busid) {
        int numa = parent >= 0 ? t->nodes[parent].numa : -1;
        enum cf_topo_kind k = has_prefix(cls, "0x03") || has_prefix(cls, "0x12") ? CF_TOPO_GPU
                              : has_prefix(cls, "0x02")                          ? CF_TOPO_NIC
                              : has_prefix(cls, "0x0680")                        ? CF_TOPO_NVSWITCH
                                                                                 : CF_TOPO_SWITCH;
        const char *label = k == CF_TOPO_GPU ? "GPU" : k == CF_TOPO_NIC ? "NIC" : k == CF_TOPO_NVSWITCH ? "NVSwitch" : "PCIe switch";
        me = add(t, k, busid, label, parent, numa);
        if (me >= 0) {
            const char *speed = cf_topo_xml_attr(e, "link_speed"), *width = cf_topo_xml_attr(e, "link_width");
            free(t->nodes[me].detail);
            t->nodes[me].detail = link_text(speed, width ? atoi(width) : 0);
            if (k == CF_TOPO_GPU) {
                free(t->nodes[me].label);
                t->nodes[me].label = cf_asprintf("GPU%d", w->gpus++);
            }
        }
    } else if (!strcmp(e->name, "gpu") && parent >= 0 && t->nodes[parent].kind == CF_TOPO_GPU) {
        const char *dev = cf_topo_xml_attr(e, "dev"), *sm = cf_topo_xml_attr(e, "sm");
        if (dev) {
            free(t->nodes[parent].label);
            t->nodes[parent].label = cf_asprintf("GPU%s", dev);
        }
        if (sm) {
            char *old = t->nodes[parent].detail;
            t->nodes[parent].detail = cf_asprintf("sm_%s%s%s", sm, old ? " · " : "", old ? old : "");
            free(old);
        }
    } else if (!strcmp(e->name, "net") && parent >= 0 && t->nodes[parent].kind == CF_TOPO_NIC) {
        const char *name = cf_topo_xml_attr(e, "name");
        struct cf_topo_node *n = &t->nodes[parent];
        if (name && strlen(n->label) < 200) {
            char *old = n->label;
            n->label = strcmp(old, "NIC") ? cf_asprintf("%s,%s", old, name) : cf_strdup(name);
            free(old);
        }
    } else if (!strcmp(e->name, "nvlink") && parent >= 0 && t->nodes[parent].kind == CF_TOPO_GPU &&
               w->n_nv < MAX_LINKS) {
        const char *target = cf_topo_xml_attr(e, "target"), *tclass = cf_topo_xml_attr(e, "tclass"),
                   *count = cf_topo_xml_attr(e, "count");
        w->nv = cf_xrealloc(w->nv, (w->n_nv + 1) * sizeof *w->nv);
        struct pending_nvlink *p = &w->nv[w->n_nv++];
        p->gpu = parent;
        snprintf(p->target, sizeof p->target, "%s", target ? target : "");
        snprintf(p->tclass, sizeof p->tclass, "%s", tclass ? tclass : "");
        p->count = count ? atoi(count) : 1;
    }
    w->stack[d] = me;
}

/* classes from the tree: NCCL hangs every root complex of a socket under its
 * CPU, so the XML cannot tell NODE from PHB: it says PHB, as NCCL does */
static const char *tree_class(const struct cf_topo *t, int a, int b)
{
    int up_a[64], na = 0;
    for (int x = t->nodes[a].parent; x >= 0 && na < 64; x = t->nodes[x].parent)
        up_a[na++] = x;
    int depth_b = 0;
    for (int y = t->nodes[b].parent; y >= 0 && depth_b < 64; y = t->nodes[y].parent, depth_b++)
        for (int i = 0; i < na; i++)
            if (up_a[i] == y) {
                if (t->nodes[y].kind == CF_TOPO_NUMA)
                    return "PHB";
                return i == 0 && depth_b == 0 ? "PIX" : "PXB";
            }
    return "SYS";
}

int cf_topo_from_xml(const char *text, size_t len, struct cf_topo *t, cf_error *err)
{
    memset(t, 0, sizeof *t);
    struct xml_walk w;
    memset(&w, 0, sizeof w);
    w.t = t;
    char why[300];
    if (cf_nccl_topo_xml_walk(text, len, visit, &w, why, sizeof why) < 0) {
        free(w.nv);
        cf_topo_release(t); /* what was read before the error */
        return cf_error_set(err, CF_ERR_FORMAT, "%s", why);
    }
    if (t->n_nodes == MAX_NODES)
        cf_strvec_pushf(&t->notes, "only the first %d elements are drawn", MAX_NODES);
    for (size_t i = 0; i < w.n_nv; i++) {
        const struct pending_nvlink *p = &w.nv[i];
        if (has_prefix(p->tclass, "0x0680")) {
            int nvs = add(t, CF_TOPO_NVSWITCH, "nvswitch", "NVSwitch", -1, -1);
            add_link(t, p->gpu, nvs, p->count, "NVLink", 1);
        } else if (has_prefix(p->tclass, "0x03") || has_prefix(p->tclass, "0x12")) {
            int peer = find(t, p->target);
            if (peer >= 0 && t->nodes[peer].kind == CF_TOPO_GPU)
                add_link(t, p->gpu, peer, p->count, "NVLink", 0);
            else
                cf_strvec_pushf(&t->notes, "an NVLink of %s to %s, which the XML does not list as a GPU",
                                t->nodes[p->gpu].label, p->target);
        }
    }
    free(w.nv);
    alloc_cls(t);
    for (size_t a = 0; a < t->n_nodes; a++)
        for (size_t b = 0; b < t->n_nodes; b++) {
            if (a == b || t->nodes[a].kind != CF_TOPO_GPU)
                continue;
            if (t->nodes[b].kind == CF_TOPO_NIC || (t->nodes[b].kind == CF_TOPO_GPU && b > a))
                set_cls(t, (int)a, (int)b, tree_class(t, (int)a, (int)b));
        }
    nvlink_classes(t);
    cf_strvec_push(&t->notes, "NCCL's XML hangs every root complex of a socket under its CPU: a pair across two "
                              "root complexes of one NUMA node reads PHB here (NCCL's own reading), NODE in sysfs");
    if (!w.cpus && t->n_nodes)
        cf_strvec_push(&t->notes, "no <cpu> element: NUMA nodes unknown");
    return 0;
}

void cf_topo_release(struct cf_topo *t)
{
    if (t->cls)
        for (size_t i = 0; i < t->n_nodes * t->n_nodes; i++)
            free(t->cls[i]);
    free(t->cls);
    for (size_t i = 0; i < t->n_nodes; i++) {
        free(t->nodes[i].id);
        free(t->nodes[i].label);
        free(t->nodes[i].detail);
    }
    free(t->nodes);
    for (size_t i = 0; i < t->n_links; i++)
        free(t->links[i].type);
    free(t->links);
    free(t->source);
    cf_strvec_clear(&t->notes);
    memset(t, 0, sizeof *t);
}

static const char *const kind_names[] = { [CF_TOPO_NUMA] = "numa", [CF_TOPO_ROOT] = "root", [CF_TOPO_SWITCH] = "switch",
                                         [CF_TOPO_GPU] = "gpu", [CF_TOPO_NIC] = "nic", [CF_TOPO_NVSWITCH] = "nvswitch",
                                         [CF_TOPO_NETIF] = "netif" };

const char *cf_topo_kind_name(enum cf_topo_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof *kind_names ? kind_names[k] : "?";
}

void *cf_topo_to_json(const struct cf_topo *t, const char *host)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "cclforge.doctor-topology/1");
    cf_json_put_str(o, "host", host);
    cf_json_put_str(o, "source", t->source);
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
    for (size_t i = 0; i < t->n_nodes; i++) {
        const struct cf_topo_node *n = &t->nodes[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "kind", kind_names[n->kind]);
        cJSON_AddStringToObject(x, "id", n->id);
        cJSON_AddStringToObject(x, "label", n->label);
        cf_json_put_str(x, "detail", n->detail);
        if (n->parent >= 0)
            cJSON_AddStringToObject(x, "parent", t->nodes[n->parent].id);
        cJSON_AddNumberToObject(x, "numa", n->numa);
        cJSON_AddItemToArray(nodes, x);
    }
    cJSON *links = cJSON_AddArrayToObject(o, "links");
    for (size_t i = 0; i < t->n_links; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "a", t->nodes[t->links[i].a].id);
        cJSON_AddStringToObject(x, "b", t->nodes[t->links[i].b].id);
        cJSON_AddStringToObject(x, "type", t->links[i].type);
        cJSON_AddNumberToObject(x, "count", t->links[i].count);
        cJSON_AddItemToArray(links, x);
    }
    cJSON *m = cJSON_AddArrayToObject(o, "classes");
    for (size_t a = 0; a < t->n_nodes; a++)
        for (size_t b = 0; b < t->n_nodes; b++)
            if (a != b && t->cls[a * t->n_nodes + b] && t->nodes[a].kind == CF_TOPO_GPU) {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "a", t->nodes[a].label);
                cJSON_AddStringToObject(x, "b", t->nodes[b].label);
                cJSON_AddStringToObject(x, "class", t->cls[a * t->n_nodes + b]);
                cJSON_AddItemToArray(m, x);
            }
    cf_json_put_strvec(o, "notes", &t->notes);
    return o;
}
