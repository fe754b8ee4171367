/* One host's topology as HTML (cclforge/report.h): the tree drawn in
 * SVG, the GPU x GPU and GPU x NIC classes as `nvidia-smi topo -m` names them,
 * and the model embedded as JSON. Every element carries data attributes so a
 * test (or a tool) reads the picture back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_report.h"
#include "cclforge/report.h"
#include "cclforge/fs.h"
#include "cclforge/html.h"
#include "report/assets.h"

enum { BW = 116, BH = 46, SLOT = 128, ROW = 86, MARGIN = 20, MAX_XML = 16 << 20 };

/* the legend of `nvidia-smi topo -m`, nearest first; t places each on the colour scale */
static const struct {
    const char *cls, *meaning;
    double t;
} classes[] = {
    { "NV#", "a bonded set of # NVLinks (XGMI: AMD's GPU links)", 1.0 },
    { "PIX", "at most a single PCIe bridge", 0.8 },
    { "PXB", "multiple PCIe bridges, without the PCIe host bridge", 0.6 },
    { "PHB", "PCIe and a PCIe host bridge (typically the CPU)", 0.4 },
    { "NODE", "PCIe and the interconnect between host bridges within a NUMA node", 0.2 },
    { "SYS", "PCIe and the SMP interconnect between NUMA nodes (QPI/UPI, Infinity Fabric)", 0.0 },
};

static double class_t(const char *cls)
{
    if (!strncmp(cls, "NV", 2) || !strcmp(cls, "XGMI"))
        return 1.0;
    for (size_t i = 1; i < sizeof classes / sizeof *classes; i++)
        if (!strcmp(cls, classes[i].cls))
            return classes[i].t;
    return -1;
}

/* A cell's style attribute: its computed background and ink, the two values
 * the stylesheet cannot know (an unknown class is light grey). */
static void class_style(struct strbuf *out, const char *cls)
{
    double t = class_t(cls);
    char hex[8] = "#eeeeee";
    if (t >= 0)
        cf_html_scale(t, hex);
    cf_sb_addf(out, "background:%s;" "color:%s", hex, t >= 0 && t < 0.5 ? "#ffffff" : "#1b1b1b");
}

/* per node kind: fill, stroke, text colour (lightness apart, so greyscale keeps them apart) */
static void kind_colours(enum cf_topo_kind k, const char **fill, const char **stroke, const char **ink)
{
    static const char *const v[][3] = {
        [CF_TOPO_NUMA] = { "#f2f2f2", "#5b5b5b", "#1b1b1b" },  [CF_TOPO_ROOT] = { "#dcdcdc", "#5b5b5b", "#1b1b1b" },
        [CF_TOPO_SWITCH] = { "#ffffff", "#5b5b5b", "#1b1b1b" }, [CF_TOPO_GPU] = { "#dac95f", "#4a4c6b", "#1b1b1b" },
        [CF_TOPO_NIC] = { "#1f366d", "#00224e", "#ffffff" },   [CF_TOPO_NVSWITCH] = { "#7f7c75", "#3b3b3b", "#ffffff" },
        [CF_TOPO_NETIF] = { "#1f366d", "#00224e", "#ffffff" },
    };
    *fill = v[k][0];
    *stroke = v[k][1];
    *ink = v[k][2];
}

struct layout {
    double *x;
    int *depth;
    int max_depth;
    double next_slot;
};

static void place(const struct cf_topo *t, struct layout *L, int node, int depth)
{
    L->depth[node] = depth;
    if (depth > L->max_depth)
        L->max_depth = depth;
    double sum = 0;
    int kids = 0;
    for (size_t c = 0; c < t->n_nodes; c++)
        if (t->nodes[c].parent == node && t->nodes[c].kind != CF_TOPO_NVSWITCH && depth < 60) {
            place(t, L, (int)c, depth + 1);
            sum += L->x[c];
            kids++;
        }
    if (kids)
        L->x[node] = sum / kids;
    else
        L->x[node] = MARGIN + BW / 2.0 + SLOT * L->next_slot++;
}

static void node_box(struct strbuf *out, const struct cf_topo *t, const struct layout *L, int i)
{
    const struct cf_topo_node *n = &t->nodes[i];
    const char *fill, *stroke, *ink;
    kind_colours(n->kind, &fill, &stroke, &ink);
    double x = L->x[i] - BW / 2.0, y = MARGIN + L->depth[i] * ROW;
    cf_sb_addf(out, "<g data-kind=\"%s\" data-id=\"", cf_topo_kind_name(n->kind));
    cf_html_text(out, n->id);
    cf_sb_adds(out, "\" data-label=\"");
    cf_html_text(out, n->label);
    cf_sb_addf(out, "\" data-numa=\"%d\"><title>", n->numa);
    cf_html_text(out, n->label);
    cf_sb_adds(out, " ");
    cf_html_text(out, n->id);
    if (n->detail && *n->detail) {
        cf_sb_adds(out, ": ");
        cf_html_text(out, n->detail);
    }
    cf_sb_addf(out, "</title><rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" rx=\"5\" fill=\"%s\" stroke=\"%s\"/>",
               x, y, BW, BH, fill, stroke);
    cf_sb_addf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"%s\">", L->x[i], y + 18, ink);
    cf_html_text(out, n->label);
    cf_sb_addf(out, "</text><text class=\"detail\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"%s\">",
               L->x[i], y + 34, ink);
    const char *sub = n->kind == CF_TOPO_GPU || n->kind == CF_TOPO_NIC || n->kind == CF_TOPO_SWITCH ||
                              n->kind == CF_TOPO_ROOT
                          ? n->id
                      : n->detail                                                                      ? n->detail
                                                                                                       : "";
    char cut[24];
    snprintf(cut, sizeof cut, "%s", sub); /* the whole text is in the title */
    cf_html_text(out, cut);
    cf_sb_adds(out, "</text></g>\n");
}

static void draw(struct strbuf *out, const struct cf_topo *t)
{
    struct layout L = { cf_xcalloc(t->n_nodes + 1, sizeof *L.x), cf_xcalloc(t->n_nodes + 1, sizeof *L.depth), 0, 0 };
    for (size_t i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].parent < 0 && t->nodes[i].kind != CF_TOPO_NVSWITCH)
            place(t, &L, (int)i, 0);
    int has_nvs = 0, gpu_links = 0;
    for (size_t i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].kind == CF_TOPO_NVSWITCH) {
            has_nvs = 1;
            L.depth[i] = L.max_depth + 2;
            L.x[i] = MARGIN + BW / 2.0 + SLOT * (L.next_slot > 1 ? (L.next_slot - 1) / 2.0 : 0);
        }
    for (size_t i = 0; i < t->n_links; i++)
        gpu_links += t->nodes[t->links[i].b].kind == CF_TOPO_GPU;
    double width = MARGIN * 2 + SLOT * (L.next_slot > 0 ? L.next_slot : 1);
    double height = MARGIN * 2 + ROW * (L.max_depth + (has_nvs ? 3 : 1)) + (gpu_links ? 90 : 0);
    cf_sb_addf(out, "<svg class=\"topo\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                    "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"topology\">\n",
               width, height, width, height);
    /* the SMP interconnect between NUMA nodes, then the PCIe tree */
    int prev = -1;
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (t->nodes[i].kind != CF_TOPO_NUMA || t->nodes[i].parent >= 0)
            continue;
        if (prev >= 0)
            cf_sb_addf(out, "<line data-link=\"smp\" x1=\"%.0f\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" stroke=\"#5b5b5b\" "
                            "stroke-width=\"3\" stroke-dasharray=\"8 5\"><title>SMP interconnect</title></line>\n",
                       L.x[prev] + BW / 2.0, MARGIN + BH / 2, L.x[i] - BW / 2.0, MARGIN + BH / 2);
        prev = (int)i;
    }
    for (size_t i = 0; i < t->n_nodes; i++) {
        int p = t->nodes[i].parent;
        if (p < 0)
            continue;
        cf_sb_addf(out, "<line data-link=\"pcie\" x1=\"%.0f\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" stroke=\"#5b5b5b\"/>\n",
                   L.x[p], MARGIN + L.depth[p] * ROW + BH, L.x[i], MARGIN + L.depth[i] * ROW);
    }
    for (size_t i = 0; i < t->n_links; i++) {
        const struct cf_topo_link *l = &t->links[i];
        double xa = L.x[l->a], xb = L.x[l->b];
        double ya = MARGIN + L.depth[l->a] * ROW + BH, yb = MARGIN + L.depth[l->b] * ROW;
        cf_sb_adds(out, "<g data-link=\"nvlink\" data-a=\"");
        cf_html_text(out, t->nodes[l->a].id);
        cf_sb_adds(out, "\" data-b=\"");
        cf_html_text(out, t->nodes[l->b].id);
        cf_sb_addf(out, "\" data-count=\"%d\" data-type=\"", l->count);
        cf_html_text(out, l->type);
        cf_sb_adds(out, "\"><title>");
        cf_html_textf(out, "%s - %s: %d %s", t->nodes[l->a].label, t->nodes[l->b].label, l->count, l->type);
        cf_sb_adds(out, "</title>");
        if (t->nodes[l->b].kind == CF_TOPO_GPU) {
            /* an arc below the two GPUs, from each one's own bottom (they may sit at
             * different depths), deeper the further apart, its link count at its lowest */
            double yb_bottom = yb + BH, low = ya > yb_bottom ? ya : yb_bottom;
            double dip = 24 + 8 * (xb > xa ? xb - xa : xa - xb) / SLOT, cy = low + (dip > 85 ? 85 : dip) * 2;
            cf_sb_addf(out, "<path d=\"M%.0f %.0f Q%.0f %.0f %.0f %.0f\" fill=\"none\" stroke=\"#b08f00\" "
                            "stroke-width=\"2\"/><text x=\"%.0f\" y=\"%.0f\" class=\"detail\">%d</text>",
                       xa, ya, (xa + xb) / 2, cy, xb, yb_bottom, (xa + xb) / 2 + 3,
                       0.25 * ya + 0.5 * cy + 0.25 * yb_bottom + 12, l->count);
        } else {
            cf_sb_addf(out, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#b08f00\" stroke-width=\"2\"/>"
                            "<text x=\"%.0f\" y=\"%.0f\" class=\"detail\">%d</text>",
                       xa, ya, xb, yb, xa + 3, ya + 14, l->count);
        }
        cf_sb_adds(out, "</g>\n");
    }
    for (size_t i = 0; i < t->n_nodes; i++)
        node_box(out, t, &L, (int)i);
    cf_sb_adds(out, "</svg>\n");
    free(L.x);
    free(L.depth);
}

static void matrix(struct strbuf *out, const struct cf_topo *t)
{
    int gpus[512], nics[512];
    size_t ng = cf_topo_of_kind(t, CF_TOPO_GPU, gpus, 512), nn = cf_topo_of_kind(t, CF_TOPO_NIC, nics, 512);
    ng = ng > 512 ? 512 : ng;
    nn = nn > 512 ? 512 : nn;
    if (!ng)
        return;
    cf_sb_adds(out, "<h2>Link classes</h2>\n<table class=\"matrix\" id=\"matrix\"><tr><th></th>");
    for (size_t k = 0; k < ng + nn; k++) {
        cf_sb_adds(out, "<th>");
        cf_html_text(out, t->nodes[k < ng ? gpus[k] : nics[k - ng]].label);
        cf_sb_adds(out, "</th>");
    }
    cf_sb_adds(out, "</tr>\n");
    for (size_t r = 0; r < ng; r++) {
        const struct cf_topo_node *a = &t->nodes[gpus[r]];
        cf_sb_adds(out, "<tr><th>");
        cf_html_text(out, a->label);
        cf_sb_adds(out, "</th>");
        for (size_t k = 0; k < ng + nn; k++) {
            int b = k < ng ? gpus[k] : nics[k - ng];
            const char *cls = t->cls[(size_t)gpus[r] * t->n_nodes + (size_t)b];
            cls = cls ? cls : "?";
            cf_sb_adds(out, "<td data-a=\"");
            cf_html_text(out, a->label);
            cf_sb_adds(out, "\" data-b=\"");
            cf_html_text(out, t->nodes[b].label);
            cf_sb_adds(out, "\" data-cls=\"");
            cf_html_text(out, cls);
            cf_sb_adds(out, "\" style=\"");
            class_style(out, cls);
            cf_sb_adds(out, "\" title=\"");
            cf_html_textf(out, "%s (%s) - %s (%s): %s", a->label, a->id, t->nodes[b].label, t->nodes[b].id, cls);
            cf_sb_adds(out, "\">");
            cf_html_text(out, cls);
            cf_sb_adds(out, "</td>");
        }
        cf_sb_adds(out, "</tr>\n");
    }
    cf_sb_adds(out, "</table>\n<p class=\"muted\">Nearest first; the colour is lighter the nearer the pair:</p>\n"
                    "<table id=\"legend\"><tr><th>class</th><th>the path between the two</th></tr>\n");
    for (size_t i = 0; i < sizeof classes / sizeof *classes; i++) {
        cf_sb_adds(out, "<tr><td><span class=\"swatch\" style=\"");
        class_style(out, i == 0 ? "NV1" : classes[i].cls);
        cf_sb_addf(out, "\">%s</span></td><td>%s</td></tr>\n", classes[i].cls, classes[i].meaning);
    }
    cf_sb_adds(out, "<tr><td><span class=\"swatch\" style=\"background:#eeeeee\">X</span></td><td>the device "
                    "itself</td></tr></table>\n");
}

static void devices(struct strbuf *out, const struct cf_topo *t)
{
    cf_sb_adds(out, "<h2>Devices</h2>\n<table id=\"devices\"><tr><th>device</th><th>kind</th><th>id</th><th>NUMA</th>"
                    "<th>detail</th></tr>\n");
    for (size_t i = 0; i < t->n_nodes; i++) {
        const struct cf_topo_node *n = &t->nodes[i];
        if (n->kind == CF_TOPO_NUMA || n->kind == CF_TOPO_ROOT)
            continue;
        cf_sb_addf(out, "<tr data-kind=\"%s\"><td>", cf_topo_kind_name(n->kind));
        cf_html_text(out, n->label);
        cf_sb_addf(out, "</td><td>%s</td><td class=\"mono\">", cf_topo_kind_name(n->kind));
        cf_html_text(out, n->id);
        cf_sb_addf(out, n->numa >= 0 ? "</td><td>%d</td><td>" : "</td><td>?</td><td>", n->numa);
        cf_html_text(out, n->detail);
        cf_sb_adds(out, "</td></tr>\n");
    }
    cf_sb_adds(out, "</table>\n");
}

int cf_doctor_topology_html(const struct cf_fabric *fabric, const char *host, const char *topo_xml_path,
                            struct strbuf *out, cf_error *err)
{
    struct cf_topo t;
    if (topo_xml_path) {
        struct strbuf text = STRBUF_INIT;
        if (cf_read_file(topo_xml_path, MAX_XML, &text, err) < 0 ||
            cf_topo_from_xml(cf_sb_str(&text), text.len, &t, err) < 0) {
            cf_sb_release(&text);
            return cf_error_prefix(err, "NCCL topology %s", topo_xml_path);
        }
        cf_sb_release(&text);
        t.source = cf_asprintf("NCCL's topology XML %s", topo_xml_path);
    } else {
        if (!fabric)
            return cf_error_set(err, CF_ERR_FORMAT, "the report has no fabric section: run cclforge doctor without "
                                "--quick, or give NCCL's topology XML");
        cf_topo_from_fabric(fabric, &t);
        t.source = cf_asprintf("the sysfs of %s (PCI devices, NUMA nodes, NVML)", host ? host : "this host");
    }
    struct strbuf title = STRBUF_INIT;
    cf_sb_addf(&title, "cclforge doctor: topology of %s", host ? host : "this host");
    cf_html_begin(out, cf_sb_str(&title), cf_report_topology_css);
    cf_sb_release(&title);
    int idx[1];
    size_t gpus = cf_topo_of_kind(&t, CF_TOPO_GPU, idx, 0), nics = cf_topo_of_kind(&t, CF_TOPO_NIC, idx, 0),
           numa = cf_topo_of_kind(&t, CF_TOPO_NUMA, idx, 0), sw = cf_topo_of_kind(&t, CF_TOPO_SWITCH, idx, 0),
           roots = cf_topo_of_kind(&t, CF_TOPO_ROOT, idx, 0);
    cf_sb_addf(out, "<p id=\"counts\" data-gpus=\"%zu\" data-nics=\"%zu\" data-numa=\"%zu\" data-switches=\"%zu\" "
                    "data-roots=\"%zu\" data-nvlinks=\"%zu\">%zu GPU%s, %zu NIC%s, %zu NUMA node%s, %zu PCIe switch%s, "
                    "%zu root complex%s, %zu NVLink bond%s. From ",
               gpus, nics, numa, sw, roots, t.n_links, gpus, gpus == 1 ? "" : "s", nics, nics == 1 ? "" : "s", numa,
               numa == 1 ? "" : "s", sw, sw == 1 ? "" : "es", roots, roots == 1 ? "" : "es", t.n_links,
               t.n_links == 1 ? "" : "s");
    cf_html_text(out, t.source);
    cf_sb_adds(out, ".</p>\n");
    if (!gpus)
        cf_sb_adds(out, "<p class=\"nogpu\" id=\"nogpu\">This host has no GPUs: drawn is what it has.</p>\n");
    for (size_t i = 0; i < t.notes.n; i++) {
        cf_sb_adds(out, "<p class=\"muted note\">");
        cf_html_text(out, t.notes.v[i]);
        cf_sb_adds(out, "</p>\n");
    }
    if (t.n_nodes)
        draw(out, &t);
    else
        cf_sb_adds(out, "<p id=\"empty\">Nothing to draw: no GPU, NIC or network interface was found.</p>\n");
    matrix(out, &t);
    devices(out, &t);
    cJSON *m = cf_topo_to_json(&t, host);
    char *text = cJSON_PrintUnformatted(m);
    cJSON_Delete(m);
    cf_html_json(out, "cclforge-topology", text);
    free(text);
    cf_html_end(out);
    cf_topo_release(&t);
    return 0;
}
