/* doctor's HTML reports: Slurm hostlists, NCCL's topology XML read into the
 * model with the classes nvidia-smi would print, and the hosts report from
 * saved documents -- odd hosts marked, hosts alike collapsed, names escaped,
 * and 1,024 hosts under 5 MB. CCLFORGE_REPORT_OUT=DIR keeps the pages for the
 * browser checks of tests/cli/doctor_report.sh. */
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/doctor_doc.h"
#include "cclforge/gather.h"
#include "cclforge/launch.h"
#include "cclforge/report.h"
#include "cclforge/doctor_report.h"
#include "cclforge/hostlist.h"
#include "cclforge/fs.h"
#include "cclforge/launch_collect.h"
#include "cclforge/survey.h"

static void test_hostlist(void **state)
{
    (void)state;
    /* what it writes, Slurm's expansion reads back */
    const char *names[300];
    char buf[300][16];
    for (int i = 0; i < 300; i++) {
        snprintf(buf[i], sizeof buf[i], i % 7 ? "gpu%03d" : "cpu%d", i * 3 % 512);
        names[i] = buf[i];
    }
    char *hl = cf_hostlist_compress(names, 300);
    struct strvec back = STRVEC_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_slurm_hostlist_expand(hl, 1000, &back, &err), 0);
    assert_int_equal(back.n, 300);
    for (int i = 0; i < 300; i++)
        if (!cf_strvec_contains(&back, names[i]))
            fail_msg("%s lost in %s", names[i], hl);
    cf_strvec_clear(&back);
    free(hl);
}

static const char xml[] =
    "<system version=\"1\">\n"
    "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\">\n"
    "    <pci busid=\"0000:01:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <pci busid=\"0000:03:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "        <gpu dev=\"0\" sm=\"90\"><nvlink target=\"0000:04:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu>\n"
    "      </pci>\n"
    "      <pci busid=\"0000:04:00.0\" class=\"0x030200\"><gpu dev=\"1\" sm=\"90\">"
    "<nvlink target=\"0000:03:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu></pci>\n"
    "      <pci busid=\"0000:02:00.0\" class=\"0x060400\"><pci busid=\"0000:05:00.0\" class=\"0x020700\">"
    "<nic><net name=\"mlx5_0\" dev=\"0\"/></nic></pci></pci>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:11:00.0\" class=\"0x030000\"><gpu dev=\"2\" sm=\"80\"/></pci>\n"
    "  </cpu>\n"
    "  <cpu numaid=\"1\"><pci busid=\"0000:81:00.0\" class=\"0x020000\"><nic><net name=\"eth9\"/></nic></pci></cpu>\n"
    "</system>\n";

static const char *cls(const struct cf_topo *t, const char *a, const char *b)
{
    int ia = -1, ib = -1;
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (!strcmp(t->nodes[i].label, a))
            ia = (int)i;
        if (!strcmp(t->nodes[i].label, b))
            ib = (int)i;
    }
    if (ia < 0 || ib < 0)
        fail_msg("no %s or %s in the model", a, b);
    const char *c = t->cls[(size_t)ia * t->n_nodes + (size_t)ib];
    return c ? c : "(none)";
}

static void test_topology_xml(void **state)
{
    (void)state;
    struct cf_topo t;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_topo_from_xml(xml, sizeof xml - 1, &t, &err), 0);
    int idx[8];
    assert_int_equal(cf_topo_of_kind(&t, CF_TOPO_GPU, idx, 8), 3);
    assert_int_equal(cf_topo_of_kind(&t, CF_TOPO_NIC, idx, 8), 2);
    assert_int_equal(cf_topo_of_kind(&t, CF_TOPO_NUMA, idx, 8), 2);
    assert_int_equal(cf_topo_of_kind(&t, CF_TOPO_SWITCH, idx, 8), 2);
    assert_int_equal(t.n_links, 1); /* each bond once, though both GPUs list it */
    assert_string_equal(cls(&t, "GPU0", "GPU1"), "NV4");
    assert_string_equal(cls(&t, "GPU0", "GPU0"), "X");
    assert_string_equal(cls(&t, "GPU0", "mlx5_0"), "PXB");
    assert_string_equal(cls(&t, "GPU0", "GPU2"), "PHB");
    assert_string_equal(cls(&t, "GPU2", "eth9"), "SYS");
    assert_string_equal(cls(&t, "GPU2", "mlx5_0"), "PHB");
    cf_topo_release(&t);
    static const char *const bad[] = {
        "<system>\n\t<cpu/>\n</system>\n",
        "<system><cpu numaid=0/></system>",
        "<system><cpu></system>",
        "<system><pci busid=\"0000:01:00.0\"",
        "<?xml version=\"1.0\"?><system/>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(cf_topo_from_xml(bad[i], strlen(bad[i]), &t, &err), -1);
        assert_non_null(strstr(cf_error_message(&err), "byte"));
        cf_error_clear(&err);
    }
}

/* an AMD host from sysfs facts: three GPUs on two root complexes; KFD joins GPU0 and
 * GPU1 by XGMI and gives GPU2 only a PCIe peer path (tests/fixtures/kfd_fixtures.sh's
 * shape, with the PCI functions its nodes' location_ids name) */
static void test_topology_kfd(void **state)
{
    (void)state;
    static char *p0[] = { "pci0000:00", "0000:00:01.0", "0000:0c:00.0", NULL },
                *p1[] = { "pci0000:00", "0000:00:02.0", "0000:22:00.0", NULL },
                *p2[] = { "pci0000:30", "0000:30:01.0", "0000:38:00.0", NULL };
    struct cf_pci_dev pci[3] = {
        { .bdf = "0000:0c:00.0", .role = "gpu", .numa = 0, .path = { p0, 3, 0 } },
        { .bdf = "0000:22:00.0", .role = "gpu", .numa = 0, .path = { p1, 3, 0 } },
        { .bdf = "0000:38:00.0", .role = "gpu", .numa = 1, .path = { p2, 3, 0 } },
    };
    struct cf_topo_pair pairs[3] = {
        { .a = "0000:0c:00.0", .b = "0000:22:00.0", .kind = "gpu-gpu", .cls = "PHB" },
        { .a = "0000:0c:00.0", .b = "0000:38:00.0", .kind = "gpu-gpu", .cls = "SYS" },
        { .a = "0000:22:00.0", .b = "0000:38:00.0", .kind = "gpu-gpu", .cls = "SYS" },
    };
    struct cf_kfd_gpu kg[3] = { { .node = 1, .name = "gfx942", .bdf = "0000:0c:00.0" },
                                { .node = 2, .name = "gfx942", .bdf = "0000:22:00.0" },
                                { .node = 3, .name = "gfx942", .bdf = "0000:38:00.0" } };
    struct cf_kfd_link kl[2] = { { .from = 1, .to = 2, .type = "XGMI", .weight = 15, .table = "io_links" },
                                 { .from = 1, .to = 3, .type = "PCIe", .weight = 40, .table = "p2p_links" } };
    struct cf_fabric f = { .pci = pci, .n_pci = 3, .pairs = pairs, .n_pairs = 3, .kfd_gpus = kg, .n_kfd_gpus = 3,
                           .kfd_links = kl, .n_kfd_links = 2 };
    struct cf_topo t;
    cf_topo_from_fabric(&f, &t);
    assert_int_equal(t.n_links, 1);
    assert_string_equal(t.links[0].type, "XGMI");
    assert_string_equal(cls(&t, "GPU0", "GPU1"), "XGMI"); /* over the PCI class it would have */
    assert_string_equal(cls(&t, "GPU0", "GPU2"), "SYS");
    int listed = 0;
    for (size_t i = 0; i < t.notes.n; i++)
        listed += strstr(t.notes.v[i], "KFD node1 - node3: PCIe, weight 40 (p2p_links)") != NULL;
    assert_int_equal(listed, 1); /* the PCIe peer path is listed, not drawn */
    cf_topo_release(&t);
    /* a node whose PCI function is unknown (an older kernel's report) is listed, not drawn */
    kg[1].bdf = NULL;
    cf_topo_from_fabric(&f, &t);
    assert_int_equal(t.n_links, 0);
    assert_string_equal(cls(&t, "GPU0", "GPU1"), "PHB");
    cf_topo_release(&t);
}

/* A DGX A100 as NCCL dumps it: each GPU's 12 NVLinks go to six NVSwitches, one
 * <nvlink> per switch with 2 links each; nvidia-smi topo -m says NV12. */
static void test_topology_xml_switches(void **state)
{
    (void)state;
    struct strbuf x = STRBUF_INIT;
    cf_sb_adds(&x, "<system version=\"1\"><cpu numaid=\"0\" arch=\"x86_64\">\n");
    for (int g = 0; g < 2; g++) {
        cf_sb_addf(&x, "<pci busid=\"0000:%02x:00.0\" class=\"0x030200\"><gpu dev=\"%d\" sm=\"80\">\n", 7 + g, g);
        for (int sw = 0; sw < 6; sw++)
            cf_sb_addf(&x, "<nvlink target=\"0000:c%d:00.0\" count=\"2\" tclass=\"0x068000\"/>\n", 4 + sw);
        cf_sb_adds(&x, "</gpu></pci>\n");
    }
    cf_sb_adds(&x, "</cpu></system>\n");
    struct cf_topo t;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_topo_from_xml(x.buf, x.len, &t, &err), 0);
    int idx[4];
    assert_int_equal(cf_topo_of_kind(&t, CF_TOPO_NVSWITCH, idx, 4), 1);
    assert_int_equal(t.n_links, 2); /* one bond per GPU to the NVSwitch drawn, its six listings summed */
    assert_int_equal(t.links[0].count, 12);
    assert_int_equal(t.links[1].count, 12);
    assert_string_equal(cls(&t, "GPU0", "GPU1"), "NV12");
    assert_string_equal(cls(&t, "GPU0", "GPU0"), "X");
    cf_topo_release(&t);
    cf_sb_release(&x);
}

static int has_note(const struct cf_topo *t, const char *text)
{
    for (size_t i = 0; i < t->notes.n; i++)
        if (strstr(t->notes.v[i], text))
            return 1;
    return 0;
}

/* NVLink peers from NVML (nvmlDeviceGetNvLinkRemotePciInfo_v2), NCCL's rules:
 * GPU0 and GPU1 bonded directly (both list it), GPU2 and GPU3 on NVSwitches (one
 * that NVML calls a switch; one of no type that sysfs does not show, which NCCL
 * takes for an NVSwitch), a far end that is a NIC the host shows, and an IBM NPU */
static void test_topology_nvml_peers(void **state)
{
    (void)state;
    static char *p0[] = { "pci0000:00", "0000:00:01.0", "0000:03:00.0", NULL },
                *p1[] = { "pci0000:00", "0000:00:01.0", "0000:04:00.0", NULL },
                *p2[] = { "pci0000:80", "0000:80:01.0", "0000:83:00.0", NULL },
                *p3[] = { "pci0000:80", "0000:80:01.0", "0000:84:00.0", NULL },
                *p4[] = { "pci0000:80", "0000:80:02.0", "0000:0a:00.0", NULL };
    struct cf_pci_dev pci[5] = {
        { .bdf = "0000:03:00.0", .role = "gpu", .numa = 0, .path = { p0, 3, 0 } },
        { .bdf = "0000:04:00.0", .role = "gpu", .numa = 0, .path = { p1, 3, 0 } },
        { .bdf = "0000:83:00.0", .role = "gpu", .numa = 1, .path = { p2, 3, 0 } },
        { .bdf = "0000:84:00.0", .role = "gpu", .numa = 1, .path = { p3, 3, 0 } },
        { .bdf = "0000:0a:00.0", .role = "nic", .label = "mlx5_0", .numa = 1, .path = { p4, 3, 0 } },
    };
    struct cf_topo_pair pairs[] = {
        { .a = "0000:03:00.0", .b = "0000:04:00.0", .kind = "gpu-gpu", .cls = "PHB" },
        { .a = "0000:83:00.0", .b = "0000:84:00.0", .kind = "gpu-gpu", .cls = "PHB" },
        { .a = "0000:03:00.0", .b = "0000:83:00.0", .kind = "gpu-gpu", .cls = "SYS" },
    };
    struct cf_nvlink_peer n0[] = { { .bdf = "0000:04:00.0", .type = "gpu", .links = 2 } },
                          n1[] = { { .bdf = "0000:03:00.0", .type = "gpu", .links = 2 },
                                   { .bdf = "0000:0a:00.0", .links = 1 } },
                          n2[] = { { .bdf = "0000:c4:00.0", .type = "switch", .links = 4 },
                                   { .bdf = "0000:c5:00.0", .links = 2 } },
                          n3[] = { { .bdf = "0000:c4:00.0", .type = "switch", .links = 3 },
                                   { .bdf = "0000:99:00.0", .type = "ibmnpu", .links = 1 } };
    struct cf_nvml_gpu g[4] = {
        { .bdf = "0000:03:00.0", .nvlinks_active = 2, .nvlink_peers = n0, .n_nvlink_peers = 1 },
        { .bdf = "0000:04:00.0", .nvlinks_active = 3, .nvlink_peers = n1, .n_nvlink_peers = 2 },
        { .bdf = "0000:83:00.0", .nvlinks_active = 6, .nvlink_peers = n2, .n_nvlink_peers = 2 },
        { .bdf = "0000:84:00.0", .nvlinks_active = 4, .nvlink_peers = n3, .n_nvlink_peers = 2 },
    };
    struct cf_fabric f = { .pci = pci, .n_pci = 5, .pairs = pairs, .n_pairs = 3, .nvml = g, .n_nvml = 4 };
    struct cf_topo t;
    cf_topo_from_fabric(&f, &t);
    int idx[4];
    assert_int_equal(cf_topo_of_kind(&t, CF_TOPO_NVSWITCH, idx, 4), 1);
    assert_int_equal(t.n_links, 3); /* GPU0-GPU1 once, GPU2 and GPU3 to the NVSwitch */
    assert_string_equal(cls(&t, "GPU0", "GPU1"), "NV2");
    assert_string_equal(cls(&t, "GPU2", "GPU3"), "NV3"); /* the fewer of 4+2 and 3 */
    assert_string_equal(cls(&t, "GPU0", "GPU2"), "SYS");
    for (size_t i = 0; i < t.n_links; i++)
        if (t.nodes[t.links[i].a].kind == CF_TOPO_GPU && !strcmp(t.nodes[t.links[i].a].label, "GPU2"))
            assert_int_equal(t.links[i].count, 6); /* both of GPU2's switches summed */
    assert_true(has_note(&t, "GPU1: 1 NVLink to 0000:0a:00.0 (a device of unknown type), which is not drawn"));
    assert_true(has_note(&t, "GPU3: 1 NVLink to 0000:99:00.0 (ibmnpu), which is not drawn"));
    assert_false(has_note(&t, "far ends"));
    cf_topo_release(&t);
    /* an NVML that names no far end (no nvmlDeviceGetNvLinkRemotePciInfo_v2): PCIe classes, said so */
    g[2].n_nvlink_peers = g[3].n_nvlink_peers = 0;
    cf_topo_from_fabric(&f, &t);
    assert_int_equal(t.n_links, 1);
    assert_string_equal(cls(&t, "GPU2", "GPU3"), "PHB");
    assert_true(has_note(&t, "2 GPUs have active NVLinks whose far ends NVML does not name"));
    cf_topo_release(&t);
}

/* A gather's document as rank 0 writes it (cf_gather_doc_to_json): each host
 * one rank, surveyed, its findings, the consolidation over them. */
static cJSON *gather_doc(cJSON **docs, size_t n)
{
    struct cf_gather_result r;
    memset(&r, 0, sizeof r);
    r.is_rank0 = 1;
    r.launcher = cf_launch_name("mpirun");
    r.world = (int)n;
    snprintf(r.where, sizeof r.where, "10.0.0.1:29500 (MASTER_ADDR)");
    r.n_hosts = n;
    r.hosts = cf_xcalloc(n, sizeof *r.hosts);
    r.surveys = cf_xcalloc(n, sizeof *r.surveys);
    r.per_host = cf_xcalloc(n, sizeof *r.per_host);
    cf_error err = CF_ERROR_INIT;
    for (size_t i = 0; i < n; i++) {
        struct cf_doctor_doc d;
        if (cf_doctor_doc_from_json(docs[i], "host", &d, &err) < 0)
            fail_msg("%s", cf_error_message(&err));
        r.surveys[i] = d.survey;
        r.per_host[i] = d.findings;
        r.hosts[i].label = cf_strdup(d.survey.hostname);
        r.hosts[i].surveyed = 1;
        cf_strvec_pushf(&r.hosts[i].ranks, "%zu", i);
    }
    const char **labels = cf_gather_labels(&r);
    cf_doctor_consolidate(r.surveys, labels, r.per_host, n, &r.report);
    free(labels);
    cJSON *g = cf_gather_doc_to_json(&r);
    cf_gather_result_release(&r);
    return g;
}

/* a doctor --json document as a host writes it: its name, NCCL, GPUs and findings */
static cJSON *host_doc(const char *name, const char *nccl, int code, const char *arch)
{
    char *text = cf_asprintf(
        "{\"schema\":\"cclforge.doctor/1\",\"host\":{\"hostname\":\"%s\",\"injected_from\":null,"
        "\"injected_sections\":[],\"survey_seconds\":0.5},"
        "\"toolkits\":[],\"driver\":{},\"libtorch\":[],"
        "\"comm_libraries\":[{\"kind\":\"nccl\",\"path\":\"/usr/lib/libnccl.so.2\",\"how\":\"loaded\","
        "\"version\":\"%s\",\"version_code\":%d,\"archs\":[\"sm_80\",\"sm_90\"]}],"
        "\"gpus\":[{\"vendor\":\"nvidia\",\"arch\":\"%s\"},{\"vendor\":\"nvidia\",\"arch\":\"%s\"}],"
        "\"findings\":[{\"severity\":\"warning\",\"id\":\"memlock-limited\",\"subject\":\"RLIMIT_MEMLOCK\","
        "\"why\":\"locked memory is limited to 8192 KiB\",\"remedy\":\"ulimit -l unlimited\"}],"
        "\"summary\":{\"errors\":0,\"warnings\":1,\"info\":0}}",
        name, nccl, code, arch, arch);
    cJSON *doc = cJSON_Parse(text);
    if (!doc)
        fail_msg("test JSON does not parse: %s", text);
    free(text);
    return doc;
}

static void keep(const char *name, const struct strbuf *html)
{
    const char *dir = getenv("CCLFORGE_REPORT_OUT");
    if (!dir)
        return;
    char *path = cf_asprintf("%s/%s", dir, name);
    cf_error err = CF_ERROR_INIT;
    if (cf_write_file_atomic(path, html->buf, html->len, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    free(path);
}

static char *between(const char *s, const char *from, const char *to)
{
    const char *a = strstr(s, from), *b = a ? strstr(a, to) : NULL;
    return a && b ? cf_strndup(a, (size_t)(b - a)) : cf_strdup("");
}

static void test_hosts_escaped_and_marked(void **state)
{
    (void)state;
    cJSON *docs[4] = {
        host_doc("node1", "2.28.9", 22809, "sm_90"),
        host_doc("node2", "2.28.9", 22809, "sm_90"),
        host_doc("<script>alert(1)</script>", "2.27.5", 22705, "sm_90"),
        host_doc("node3", "2.28.9", 22809, "sm_90"),
    };
    struct strbuf html = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_doctor_saved_html((const cJSON *const *)docs, 4, &html, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    const char *s = cf_sb_str(&html);
    keep("hosts-escape.html", &html);
    assert_null(strstr(s, "<script>alert"));
    assert_non_null(strstr(s, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(s, "3 hosts alike"));
    assert_non_null(strstr(s, "data-hosts=\"node[1-3]\""));
    /* the odd host's NCCL is marked, in the row of that host alone */
    char *row = between(s, "<tr class=\"hostgroup\" data-count=\"1\" data-odd=\"1\"", "</tr>");
    assert_non_null(strstr(row, "<td class=\"odd\" data-diff=\"NCCL\" data-value=\"NCCL 2.27.5 (22705)\""));
    free(row);
    /* the warning every host has is one row naming them all */
    assert_non_null(strstr(s, "data-id=\"memlock-limited\" data-hosts=\"&lt;script&gt;alert(1)&lt;/script&gt;,node[1-3]\""));

    /* the gather's own document, written and read back, gives the same table */
    cJSON *g = gather_doc(docs, 4);
    struct strbuf html2 = STRBUF_INIT;
    const cJSON *one = g;
    assert_int_equal(cf_doctor_saved_html(&one, 1, &html2, &err), 0);
    char *t1 = between(s, "<table id=\"alike\"", "</table>"), *t2 = between(cf_sb_str(&html2), "<table id=\"alike\"", "</table>");
    assert_true(strlen(t1) > 100);
    assert_string_equal(t1, t2);
    free(t1);
    free(t2);
    cf_sb_release(&html2);
    cJSON_Delete(g);

    /* a document of another kind is named */
    cJSON *odd = cJSON_Parse("{\"schema\":\"cclforge.smoke/1\"}");
    const cJSON *mixed[2] = { docs[0], odd };
    cf_sb_reset(&html);
    assert_int_equal(cf_doctor_saved_html(mixed, 2, &html, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "report 2 is of schema cclforge.smoke/1"));
    cf_error_clear(&err);
    cJSON_Delete(odd);
    for (int i = 0; i < 4; i++)
        cJSON_Delete(docs[i]);
    cf_sb_release(&html);
}

static void test_hosts_at_scale(void **state)
{
    (void)state;
    enum { N = 1024 };
    cJSON **docs = cf_xcalloc(N, sizeof *docs);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "node%04d", i + 1);
        docs[i] = host_doc(name, i == 2 ? "2.27.5" : "2.28.9", i == 2 ? 22705 : 22809, i == 516 ? "sm_100" : "sm_90");
    }
    const cJSON *g = gather_doc(docs, N);
    struct strbuf html = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_doctor_saved_html(&g, 1, &html, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    const char *s = cf_sb_str(&html);
    keep("hosts-1024.html", &html);
    print_message("1024 hosts: %zu bytes (its time: bench/reports.sh)\n", html.len);
    assert_true(html.len < 5u << 20);
    assert_non_null(strstr(s, "1022 hosts alike"));
    assert_non_null(strstr(s, "data-hosts=\"node[0001-0002,0004-0516,0518-1024]\""));
    assert_non_null(strstr(s, "data-diff=\"NCCL\" data-odd=\"1\" data-hosts=\"node0003\""));
    assert_non_null(strstr(s, "data-odd=\"1\" data-hosts=\"node0517\""));
    assert_non_null(strstr(s, "data-id=\"memlock-limited\" data-hosts=\"node[0001-1024]\""));
    /* no host's NCCL has sm_100 code: node0517's own GPUs are uncovered (an error), and
     * every other host's NCCL lacks it; the same finding on 1,022 hosts is one row, and
     * node0003's, about its other NCCL version, another */
    assert_non_null(strstr(s, "data-id=\"gpu-arch-not-covered\" data-hosts=\"node0517\""));
    assert_non_null(strstr(s, "data-id=\"host-lib-lacks-arch\" data-hosts=\"node[0001-0002,0004-0516,0518-1024]\""));
    assert_non_null(strstr(s, "data-id=\"host-lib-lacks-arch\" data-hosts=\"node0003\""));
    cJSON_Delete((cJSON *)g);
    for (int i = 0; i < N; i++)
        cJSON_Delete(docs[i]);
    free(docs);
    cf_sb_release(&html);
}

/* a gather's document with strays (unformatted, as cf_gather_doc_to_json writes) */
static const char *saved_gather_with_strays(void)
{
    return "{\"schema\":\"cclforge.doctor-gather/1\",\"launcher\":\"torchrun\",\"world\":1,\"rank0\":\"n1:29501\","
           "\"hosts\":[{\"label\":\"n1\",\"ranks\":[0],\"surveyed\":false}],\"missing\":[],"
           "\"strays\":{\"count\":5,\"kinds\":{\"silent\":2,\"bad_mac\":3},\"addresses\":[{\"addr\":\"10.0.0.8\","
           "\"count\":4},{\"addr\":\"10.0.0.9\",\"count\":1}],\"unlisted\":0},\"shared\":[],\"differences\":[],"
           "\"findings\":[],\"summary\":{\"hosts\":0,\"errors\":0,\"warnings\":0,\"differences\":0},\"reason\":null}";
}

/* a saved document's text, as the unchanged product wrote it */
static char *saved(const char *name)
{
    char *path = cf_asprintf("%s/tests/fixtures/documents/%s", CCLFORGE_SOURCE_DIR, name);
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(path, 1u << 24, &text, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    free(path);
    return cf_sb_detach(&text);
}

/* what --json prints: cJSON_Print and a newline */
static char *printed(void *doc)
{
    char *s = cJSON_Print(doc);
    char *line = cf_asprintf("%s\n", s);
    free(s);
    cJSON_Delete(doc);
    return line;
}

/* Each document's reader then its writer gives the saved bytes back. */
static void test_documents_round_trip(void **state)
{
    (void)state;
    static const char *const hosts[] = { "doctor-vm.json", "doctor-topology.json" };
    cf_error err = CF_ERROR_INIT;
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
        char *text = saved(hosts[i]);
        cJSON *doc = cJSON_Parse(text);
        struct cf_doctor_doc d;
        if (cf_doctor_doc_from_json(doc, hosts[i], &d, &err) < 0)
            fail_msg("%s", cf_error_message(&err));
        char *again = printed(cf_doctor_doc_to_json(&d.survey, &d.findings));
        assert_string_equal(again, text);
        free(again);
        cf_doctor_doc_release(&d);
        cJSON_Delete(doc);
        free(text);
    }
    static const char *const gathers[] = { "doctor-gather.json", "doctor-gather-hosts.json" };
    for (size_t i = 0; i < sizeof gathers / sizeof *gathers; i++) {
        char *text = saved(gathers[i]);
        cJSON *doc = cJSON_Parse(text);
        struct cf_gather_result r;
        if (cf_gather_doc_from_json(doc, &r, &err) < 0)
            fail_msg("%s: %s", gathers[i], cf_error_message(&err));
        char *again = printed(cf_gather_doc_to_json(&r));
        assert_string_equal(again, text);
        free(again);
        cf_gather_result_release(&r);
        cJSON_Delete(doc);
        free(text);
    }
    /* strays, which no saved gather met: written, read, written again */
    struct cf_gather_result r;
    cJSON *doc = cJSON_Parse(saved_gather_with_strays());
    assert_non_null(doc);
    if (cf_gather_doc_from_json(doc, &r, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    assert_int_equal(r.strays.count, 5);
    assert_int_equal(r.strays.kind[CF_STRAY_BAD_MAC], 3);
    assert_string_equal(r.strays.addrs[1].addr, "10.0.0.9");
    cJSON *again = cf_gather_doc_to_json(&r);
    char *a = cJSON_PrintUnformatted(doc), *b = cJSON_PrintUnformatted(again);
    cJSON_Delete(again);
    assert_string_equal(a, b);
    free(a);
    free(b);
    cf_gather_result_release(&r);
    cJSON_Delete(doc);
}

/* Refused, naming the field: what a writer never writes. */
static void test_documents_refused(void **state)
{
    (void)state;
    char *vm = saved("doctor-vm.json"), *gather = saved("doctor-gather-hosts.json");
    static const struct {
        int gather;
        const char *from, *to, *named;
    } cases[] = {
        { 0, "\"summary\":", "\"summery\":", "\"summary\" is missing" },
        { 0, "\"info\":\t2", "\"info\":\t7", "\"summary.info\" is 7, but the document holds 2" },
        { 0, "\"severity\":\t\"info\"", "\"severity\":\t\"fatal\"", "findings[0].severity is 'fatal'" },
        { 0, "\"findings\":", "\"findinx\":", "findings is missing, not an array" },
        { 0, "\"survey_seconds\":\t", "\"survey_seconds\":\t-", "\"host.survey_seconds\" is -0.00140058, out of range" },
        { 0, "\"schema\":\t\"cclforge.doctor/1\"", "\"schema\":\t\"cclforge.survey/1\"", "report 1 is of schema cclforge.survey/1" },
        { 1, "\"world\":\t3", "\"world\":\t-1", "\"world\" is -1, out of range" },
        { 1, "\"ranks\":\t[0]", "\"ranks\":\t[99999999]", "\"hosts[0].ranks\" holds a value that is no rank" },
        { 1, "\"launcher\":\t\"srun\"", "\"launcher\":\t\"qsub\"", "\"launcher\" is 'qsub'" },
        { 1, "\"errors\":\t3,\n\t\t\"warnings\":\t1,\n\t\t\"differences\"", "\"errors\":\t0,\n\t\t\"warnings\":\t1,\n\t\t\"differences\"",
          "\"summary.errors\" is 0, but the document holds 3" },
        { 1, "\"hosts\":\t2", "\"hosts\":\t99999999", "\"summary.hosts\" is 99999999, more than the 2 hosts it names" },
        { 1, "\"hosts\":\t[\"cfdd-h1\"]", "\"hosts\":\t[\"cfdd-h7\"]", "names 'cfdd-h7', no host of the document" },
        { 1, "\"strays\":", "\"strayz\":", "\"strays\" is missing" },
        { 1, "\"reason\":", "\"raison\":", "\"reason\" is missing" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *base = cases[i].gather ? gather : vm;
        const char *at = strstr(base, cases[i].from);
        if (!at)
            fail_msg("case %zu: '%s' is not in the saved document", i, cases[i].from);
        char *text = cf_asprintf("%.*s%s%s", (int)(at - base), base, cases[i].to, at + strlen(cases[i].from));
        cJSON *doc = cJSON_Parse(text);
        assert_non_null(doc);
        cf_error err = CF_ERROR_INIT;
        struct strbuf html = STRBUF_INIT;
        const cJSON *one = doc;
        assert_int_equal(cf_doctor_saved_html(&one, 1, &html, &err), -1);
        assert_int_equal(err.kind, CF_ERR_FORMAT);
        if (!strstr(cf_error_message(&err), cases[i].named))
            fail_msg("case %zu: '%s' does not name '%s'", i, cf_error_message(&err), cases[i].named);
        assert_int_equal(html.len, 0);
        cf_error_clear(&err);
        cf_sb_release(&html);
        cJSON_Delete(doc);
        free(text);
    }
    free(vm);
    free(gather);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostlist),
        cmocka_unit_test(test_topology_xml),
        cmocka_unit_test(test_topology_kfd),
        cmocka_unit_test(test_topology_xml_switches),
        cmocka_unit_test(test_topology_nvml_peers),
        cmocka_unit_test(test_hosts_escaped_and_marked),
        cmocka_unit_test(test_hosts_at_scale),
        cmocka_unit_test(test_documents_round_trip),
        cmocka_unit_test(test_documents_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
