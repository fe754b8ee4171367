/* The capacity of a path between hosts: link rates as sysfs words them, which
 * links a rank picks (a fabric shaped like tests/cli/doctor_report.sh's
 * two-socket host: a GPU with a NIC under its own switch and others across the
 * sockets), the forms links travel in, and a pair's capacity from two hosts'
 * links. Figures are the PCIe and IB specifications' (PCIe 4.0 x16: 16 GT/s x
 * 128/130 / 8 x 16 = 31.5 GB/s one way). */
#include "testsupport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/path_capacity.h"

#define near(x, y) assert_true(fabs((x) - (y)) < 0.01)

static void test_rates(void **state)
{
    (void)state;
    near(cf_pcie_gbps("16.0 GT/s PCIe", 16), 31.51);
    near(cf_pcie_gbps("8 GT/s", 8), 7.88); /* older kernels drop the ".0" and "PCIe" */
    near(cf_pcie_gbps("2.5 GT/s PCIe", 1), 0.25);
    near(cf_pcie_gbps("5.0 GT/s PCIe", 4), 2.0);
    near(cf_pcie_gbps("32.0 GT/s PCIe", 16), 63.02);
    near(cf_pcie_gbps("64.0 GT/s PCIe", 16), 121.0);
    assert_true(cf_pcie_gbps("Unknown", 16) == 0);
    assert_true(cf_pcie_gbps("16.0 GT/s PCIe", 0) == 0);
    assert_true(cf_pcie_gbps("12.0 GT/s PCIe", 16) == 0); /* no such generation */
    assert_true(cf_pcie_gbps(NULL, 16) == 0);
    near(cf_ib_rate_gbit("400 Gb/sec (4X NDR)"), 400);
    near(cf_ib_rate_gbit("200 Gb/sec (4X HDR)"), 200);
    near(cf_ib_rate_gbit("40 Gb/sec (4X QDR)"), 32); /* 8b/10b */
    near(cf_ib_rate_gbit("10 Gb/sec (4X SDR)"), 8);
    near(cf_ib_rate_gbit("56 Gb/sec (4X FDR)"), 56);
    assert_true(cf_ib_rate_gbit("fast") == 0);
    assert_true(cf_ib_rate_gbit("-5 Gb/sec (4X HDR)") == 0);
    assert_true(cf_ib_rate_gbit(NULL) == 0);
}

/* socket 0: GPU 03 and NIC mlx5_0 (05) under one switch (PIX); socket 1: mlx5_2 (85), SYS from the GPU */
struct fx {
    struct cf_fabric f;
    struct cf_pci_dev pci[3];
    struct cf_ib_dev ib[2];
    struct cf_ib_port port[2];
    struct cf_topo_pair pairs[2];
    struct cf_net_if ifs[4];
};

static void fx_init(struct fx *x, const char *gpu_speed, int gpu_width)
{
    memset(x, 0, sizeof *x);
    x->pci[0] = (struct cf_pci_dev){ .bdf = "0000:03:00.0", .role = "gpu", .cur_speed = (char *)gpu_speed,
                                     .cur_width = gpu_width };
    x->pci[1] = (struct cf_pci_dev){ .bdf = "0000:05:00.0", .role = "nic", .cur_speed = "32.0 GT/s PCIe",
                                     .cur_width = 16 };
    x->pci[2] = (struct cf_pci_dev){ .bdf = "0000:85:00.0", .role = "nic", .cur_speed = "8.0 GT/s PCIe",
                                     .cur_width = 8 };
    for (int i = 0; i < 2; i++)
        x->port[i] = (struct cf_ib_port){ .port = 1, .state = 4, .rate = "400 Gb/sec (4X NDR)",
                                          .link_layer = "InfiniBand" };
    x->ib[0] = (struct cf_ib_dev){ .name = "mlx5_0", .pci = "0000:05:00.0", .ports = &x->port[0], .n_ports = 1 };
    x->ib[1] = (struct cf_ib_dev){ .name = "mlx5_2", .pci = "0000:85:00.0", .ports = &x->port[1], .n_ports = 1 };
    x->pairs[0] = (struct cf_topo_pair){ .a = "0000:03:00.0", .b = "0000:05:00.0", .kind = "gpu-nic", .cls = "PIX" };
    x->pairs[1] = (struct cf_topo_pair){ .a = "0000:03:00.0", .b = "0000:85:00.0", .kind = "gpu-nic", .cls = "SYS" };
    static char *lo_addr[] = { "127.0.0.1/8", NULL }, *e0_addr[] = { "fe80::1/64", "10.0.0.2/24", NULL },
                *dk_addr[] = { "172.17.0.1/16", NULL }, *e1_addr[] = { "192.168.1.5/24", NULL };
    x->ifs[0] = (struct cf_net_if){ .name = "lo", .up = 1, .running = 1, .loopback = 1,
                                    .addrs = { lo_addr, 1, 0 }, .speed_mbps = 0 };
    x->ifs[1] = (struct cf_net_if){ .name = "e0", .up = 1, .running = 1, .addrs = { e0_addr, 2, 0 },
                                    .speed_mbps = 100000, .pci = "0000:85:00.0" };
    x->ifs[2] = (struct cf_net_if){ .name = "docker0", .up = 1, .running = 1, .addrs = { dk_addr, 1, 0 },
                                    .speed_mbps = 10000 };
    x->ifs[3] = (struct cf_net_if){ .name = "e1", .up = 1, .running = 0, .addrs = { e1_addr, 1, 0 },
                                    .speed_mbps = 1000 };
    x->f = (struct cf_fabric){ .ifs = x->ifs, .n_ifs = 4, .ib = x->ib, .n_ib = 2, .pci = x->pci, .n_pci = 3,
                               .pairs = x->pairs, .n_pairs = 2 };
}

/* the fabric's KFD GPU nodes and links, NVML's GPUs gone */
static void with_kfd(struct fx *x, struct cf_kfd_gpu *kg, size_t ng, struct cf_kfd_link *kl, size_t nl)
{
    x->f.n_nvml = 0;
    x->f.kfd_gpus = kg;
    x->f.n_kfd_gpus = ng;
    x->f.kfd_links = kl;
    x->f.n_kfd_links = nl;
}

static void test_pick(void **state)
{
    (void)state;
    struct fx x;
    struct cf_rank_link l[CF_RANK_LINKS_MAX];
    fx_init(&x, "32.0 GT/s PCIe", 16);
    /* after the GPU's own link (test_gpu_links), the GPU's nearest port (PIX), not the one across the
     * sockets; then e0 (not lo, docker0, a link not running) */
    struct cf_link_use gpu = { .device_memory = 1, .gpu_bdf = "0000:03:00.0" };
    size_t n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    assert_int_equal(n, 3);
    assert_int_equal(l[0].kind, CF_LINK_PCIE);
    assert_string_equal(l[1].name, "mlx5_0:1");
    assert_int_equal(l[1].kind, CF_LINK_IB);
    near(l[1].gbps, 50.0);
    assert_int_equal(l[1].limit, CF_LIMIT_LINE);
    assert_string_equal(l[2].name, "e0");
    assert_string_equal(l[2].net, "10.0.0.2/24");
    near(l[2].gbps, 7.88); /* 100 Gb/s behind a PCIe 3.0 x8 NIC */
    assert_int_equal(l[2].limit, CF_LIMIT_NIC_PCIE);
    /* the GPU's own link on the way: PCIe 4.0 x8 under a 400 Gb/s port */
    fx_init(&x, "16.0 GT/s PCIe", 8);
    n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    near(l[1].gbps, 15.75);
    assert_int_equal(l[1].limit, CF_LIMIT_GPU_PCIE);
    /* host memory: no GPU on the way, every active port */
    struct cf_link_use host = { 0 };
    n = cf_rank_links_pick(&x.f, &host, l, CF_RANK_LINKS_MAX);
    assert_int_equal(n, 3);
    near(l[0].gbps, 50.0);
    near(l[1].gbps, 7.88); /* mlx5_2 behind its PCIe 3.0 x8 */
    /* NCCL_IB_HCA and NCCL_IB_DISABLE, NCCL_SOCKET_IFNAME */
    struct cf_link_use hca = { .device_memory = 1, .gpu_bdf = "0000:03:00.0", .ib_hca = "=mlx5_2" };
    n = cf_rank_links_pick(&x.f, &hca, l, CF_RANK_LINKS_MAX);
    assert_string_equal(l[1].name, "mlx5_2:1");
    struct cf_link_use sock = { .device_memory = 1, .ib_disabled = 1, .socket_ifname = "docker" };
    n = cf_rank_links_pick(&x.f, &sock, l, CF_RANK_LINKS_MAX);
    assert_int_equal(n, 1);
    assert_string_equal(l[0].name, "docker0");
    /* a full table stops at max */
    n = cf_rank_links_pick(&x.f, &host, l, 1);
    assert_int_equal(n, 1);
}

static void test_forms(void **state)
{
    (void)state;
    struct fx x;
    struct cf_rank_link l[CF_RANK_LINKS_MAX], back[CF_RANK_LINKS_MAX];
    fx_init(&x, "32.0 GT/s PCIe", 16);
    struct cf_link_use host = { 0 };
    size_t n = cf_rank_links_pick(&x.f, &host, l, CF_RANK_LINKS_MAX);
    struct strbuf sb = STRBUF_INIT;
    cf_rank_links_format(l, n, &sb);
    assert_string_equal(cf_sb_str(&sb), "mlx5_0:1 ib 400 50 line -;mlx5_2:1 ib 400 7.87692 nic-pcie -;"
                                        "e0 eth 100 7.87692 nic-pcie 10.0.0.2/24");
    assert_int_equal(cf_rank_links_parse(cf_sb_str(&sb), back, CF_RANK_LINKS_MAX), n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(back[i].name, l[i].name);
        assert_int_equal(back[i].kind, l[i].kind);
        near(back[i].gbps, l[i].gbps);
        assert_int_equal(back[i].v4, l[i].v4);
    }
    cJSON *j = cf_rank_links_to_json(l, n);
    assert_int_equal(cf_rank_links_from_json(j, back, CF_RANK_LINKS_MAX), n);
    assert_int_equal(back[2].v4mask, 0xffffff00u);
    cJSON_Delete(j);
    cf_sb_release(&sb);
    /* malformed entries are dropped, whole ones kept; never more than max */
    static const char *const bad[] = { "", ";;;", "x eth 1 1 line", "x eth 1 1 line 10.0.0.1", "x wifi 1 1 line -",
                                       "x ib 1 -1 line -", "x ib 1 nan line -", "x ib 1 1 fast -",
                                       "x eth 1 1 line 10.0.0.1/33", "x ib 1 1 line 10.0.0.1/8",
                                       "x ib 1 1 line - extra" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cf_rank_links_parse(bad[i], back, CF_RANK_LINKS_MAX), 0);
    assert_int_equal(cf_rank_links_parse("a ib 1 1 line -;junk;b ib 2 2 line -", back, CF_RANK_LINKS_MAX), 2);
    assert_int_equal(cf_rank_links_parse("a ib 1 1 line -;b ib 2 2 line -", back, 1), 1);
    cJSON *odd = cJSON_Parse("[1, {\"name\":\"a\"}, {\"name\":\"b\",\"kind\":\"ib\",\"line_gbit\":200,"
                             "\"capacity_gbps\":25,\"limit\":\"line\"}, {\"name\":3}]");
    assert_int_equal(cf_rank_links_from_json(odd, back, CF_RANK_LINKS_MAX), 1);
    assert_string_equal(back[0].name, "b");
    cJSON_Delete(odd);
    /* a name the line form cannot carry is left out of it */
    struct cf_rank_link sp = l[0];
    snprintf(sp.name, sizeof sp.name, "a b");
    cf_sb_reset(&sb);
    cf_rank_links_format(&sp, 1, &sb);
    assert_string_equal(cf_sb_str(&sb), "");
    cf_sb_release(&sb);
}

/* the GPU's own link to the host's other GPUs: NVLink (NVML), XGMI (KFD), else PCIe */
static void test_gpu_links(void **state)
{
    (void)state;
    struct fx x;
    struct cf_rank_link l[CF_RANK_LINKS_MAX];
    struct cf_link_use gpu = { .device_memory = 1, .gpu_bdf = "0000:03:00.0" }, host = { 0 };
    fx_init(&x, "32.0 GT/s PCIe", 16);
    /* neither NVLink nor XGMI: its PCIe link (5.0 x16) */
    size_t n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    assert_int_equal(n, 3);
    assert_string_equal(l[0].name, "0000:03:00.0");
    assert_int_equal(l[0].kind, CF_LINK_PCIE);
    near(l[0].gbps, 63.02);
    assert_string_equal(l[1].name, "mlx5_0:1"); /* the host's links follow */
    /* host memory: no GPU link */
    n = cf_rank_links_pick(&x.f, &host, l, CF_RANK_LINKS_MAX);
    assert_int_equal(l[0].kind, CF_LINK_IB);
    /* 16 active NVLinks of version 4.0 (nvmlNvlinkVersion_t 6): 16 x 25 GB/s; NVML's bdf in lower case */
    struct cf_nvml_gpu nv = { .bdf = "0000:03:00.0", .nvlinks_active = 16, .nvlink_version = 6 };
    x.f.nvml = &nv;
    x.f.n_nvml = 1;
    struct cf_link_use upper = { .device_memory = 1, .gpu_bdf = "0000:03:00.0" };
    n = cf_rank_links_pick(&x.f, &upper, l, CF_RANK_LINKS_MAX);
    assert_int_equal(l[0].kind, CF_LINK_NVLINK);
    near(l[0].gbps, 400);
    nv.nvlink_version = 7; /* 5.0: 50 GB/s a link */
    n = cf_rank_links_pick(&x.f, &upper, l, CF_RANK_LINKS_MAX);
    near(l[0].gbps, 800);
    /* NVLinks of an unknown version: no GPU link at all, rather than PCIe's understatement */
    nv.nvlink_version = 0;
    n = cf_rank_links_pick(&x.f, &upper, l, CF_RANK_LINKS_MAX);
    assert_int_equal(l[0].kind, CF_LINK_IB);
    /* XGMI: the KFD node of that PCI function, its links' bandwidth summed (MB/s) */
    struct cf_kfd_gpu kg[2] = { { .node = 1, .bdf = "0000:03:00.0" }, { .node = 2, .bdf = "0000:83:00.0" } };
    struct cf_kfd_link kl[3] = { { .from = 1, .to = 2, .type = "XGMI", .max_bandwidth = 64000 },
                                 { .from = 0, .to = 1, .type = "XGMI", .max_bandwidth = 64000 },
                                 { .from = 1, .to = 3, .type = "PCIe", .max_bandwidth = 32000 } };
    with_kfd(&x, kg, 2, kl, 3);
    n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    assert_int_equal(l[0].kind, CF_LINK_XGMI);
    near(l[0].gbps, 128);
    kl[1].max_bandwidth = 0; /* one XGMI link of unknown bandwidth: unknown */
    n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    assert_int_equal(l[0].kind, CF_LINK_IB);
    /* the form carries GPU links; the host's GPU capacity is its slowest GPU's */
    struct cf_rank_link back[CF_RANK_LINKS_MAX];
    size_t k = cf_rank_links_parse("0000:03:00.0 nvlink 3200 400 line -;0000:04:00.0 pcie 252 31.5 line -;"
                                   "mlx5_0:1 ib 400 50 line -", back, CF_RANK_LINKS_MAX);
    assert_int_equal(k, 3);
    struct strbuf w = STRBUF_INIT;
    near(cf_gpu_capacity(back, k, &w), 31.5);
    assert_string_equal(cf_sb_str(&w), "pcie of GPU 0000:04:00.0, 31.5 GB/s, the slowest of 2 GPUs' links");
    cf_sb_release(&w);
    assert_true(cf_gpu_capacity(back + 2, 1, NULL) == 0);
    /* and a GPU link never counts between hosts */
    assert_true(cf_path_capacity(back, 2, back, 2, NULL) == 0);
    near(cf_nvlink_gbps(1), 20);
    assert_true(cf_nvlink_gbps(8) == 0 && cf_nvlink_gbps(-1) == 0);
}

/* a GPU's links to each peer: a DGX-1V's hybrid cube mesh (GPU0: NV1 to GPU1 and GPU2,
 * NV2 to GPU3 and GPU4, none to the other three), an HGX's NVSwitches, an XGMI mesh;
 * a group of GPUs counts each one's links to the others, not its total */
static void test_gpu_peers(void **state)
{
    (void)state;
    struct fx x;
    struct cf_rank_link l[CF_RANK_LINKS_MAX], back[CF_RANK_LINKS_MAX];
    struct cf_link_use gpu = { .device_memory = 1, .gpu_bdf = "0000:03:00.0" };
    fx_init(&x, "16.0 GT/s PCIe", 16);
    struct cf_nvlink_peer peers[5] = { { "0000:07:00.0", "gpu", 1 }, { "0000:0a:00.0", "gpu", 1 },
                                       { "0000:0b:00.0", "gpu", 2 }, { "0000:89:00.0", "gpu", 1 },
                                       { "0000:89:00.0", "gpu", 1 } }; /* NVML lists each link: summed */
    struct cf_nvml_gpu nv = { .bdf = "0000:03:00.0", .nvlinks_active = 6, .nvlink_version = 2,
                              .nvlink_peers = peers, .n_nvlink_peers = 5 };
    x.f.nvml = &nv;
    x.f.n_nvml = 1;
    size_t n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    assert_int_equal(n, 7); /* its total, mlx5_0:1, e0, then 4 peers */
    assert_int_equal(l[0].kind, CF_LINK_NVLINK);
    assert_string_equal(l[0].peer, "");
    near(l[0].gbps, 150);
    assert_string_equal(l[1].name, "mlx5_0:1");
    static const char *const want_peer[] = { "0000:07:00.0", "0000:0a:00.0", "0000:0b:00.0", "0000:89:00.0" };
    static const double want_gbps[] = { 25, 25, 50, 50 };
    for (int i = 0; i < 4; i++) {
        assert_string_equal(l[3 + i].name, "0000:03:00.0");
        assert_string_equal(l[3 + i].peer, want_peer[i]);
        near(l[3 + i].gbps, want_gbps[i]);
    }
    /* both forms carry the peers */
    struct strbuf sb = STRBUF_INIT;
    cf_rank_links_format(l, n, &sb);
    assert_non_null(strstr(cf_sb_str(&sb), ";0000:03:00.0 nvlink 400 50 line 0000:0b:00.0;"));
    assert_int_equal(cf_rank_links_parse(cf_sb_str(&sb), back, CF_RANK_LINKS_MAX), n);
    assert_string_equal(back[5].peer, "0000:0b:00.0");
    cJSON *j = cf_rank_links_to_json(l, n);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 6), "peer")), "0000:89:00.0");
    assert_int_equal(cf_rank_links_from_json(j, back, CF_RANK_LINKS_MAX), n);
    assert_string_equal(back[6].peer, "0000:89:00.0");
    cJSON_Delete(j);
    cf_sb_release(&sb);
    /* a peer only a GPU link may have, written as sysfs names a PCI function or "*" */
    static const char *const bad[] = { "0000:03:00.0 nvlink 200 25 line 10.0.0.1/24", "mlx5_0:1 ib 400 50 line 0000:07:00.0",
                                       "0000:03:00.0 pcie 252 31.5 line 0000:07:00.0", "0000:03:00.0 xgmi 512 64 line gpu7" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cf_rank_links_parse(bad[i], back, CF_RANK_LINKS_MAX), 0);
    cJSON *both = cJSON_Parse("[{\"name\":\"0000:03:00.0\",\"kind\":\"nvlink\",\"line_gbit\":200,\"capacity_gbps\":25,"
                              "\"limit\":\"line\",\"net\":\"10.0.0.1/24\",\"peer\":\"0000:07:00.0\"}]");
    assert_int_equal(cf_rank_links_from_json(both, back, CF_RANK_LINKS_MAX), 0);
    cJSON_Delete(both);
    /* far ends NVML gives no type: an end sysfs does not show is an NVSwitch (NCCL's rule), one it shows
     * as a GPU a GPU; a NIC at the far end is unknown, and then no GPU's peer is listed */
    struct cf_pci_dev pci[4] = { x.pci[0], x.pci[1], x.pci[2], { .bdf = "0000:07:00.0", .role = "gpu" } };
    x.f.pci = pci;
    x.f.n_pci = 4;
    struct cf_nvlink_peer untyped[2] = { { "0000:07:00.0", NULL, 2 }, { "0000:c0:00.0", NULL, 4 } };
    nv.nvlink_peers = untyped;
    nv.n_nvlink_peers = 2;
    n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    assert_int_equal(n, 5);
    assert_string_equal(l[3].peer, "0000:07:00.0");
    near(l[3].gbps, 50);
    assert_string_equal(l[4].peer, "*");
    near(l[4].gbps, 100);
    untyped[1].bdf = "0000:05:00.0"; /* mlx5_0 */
    assert_int_equal(cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX), 3);
    /* a table too small for every peer lists none of them */
    untyped[1].bdf = "0000:c0:00.0";
    assert_int_equal(cf_rank_links_pick(&x.f, &gpu, l, 4), 3);

    /* a group of GPUs: each one's links to the others of the group */
    struct strbuf w = STRBUF_INIT;
    const char *mesh = "0000:03:00.0 nvlink 1200 150 line -;0000:03:00.0 nvlink 200 25 line 0000:07:00.0;"
                       "0000:03:00.0 nvlink 400 50 line 0000:0b:00.0;0000:07:00.0 nvlink 1200 150 line -;"
                       "0000:07:00.0 nvlink 200 25 line 0000:03:00.0;0000:07:00.0 nvlink 200 25 line 0000:0b:00.0;"
                       "0000:0b:00.0 nvlink 1200 150 line -;"
                       "0000:0b:00.0 nvlink 400 50 line 0000:03:00.0;0000:0b:00.0 nvlink 200 25 line 0000:07:00.0";
    size_t k = cf_rank_links_parse(mesh, back, CF_RANK_LINKS_MAX);
    assert_int_equal(k, 9);
    near(cf_gpu_capacity(back, 5, &w), 25); /* GPU0 and GPU1: one link */
    assert_string_equal(cf_sb_str(&w), "nvlink of GPU 0000:03:00.0 to the others, 25 GB/s, the slowest of 2 GPUs' links");
    near(cf_gpu_capacity(back, k, NULL), 50); /* GPU0, GPU1, GPU3: GPU1 has 25 + 25 */
    size_t two = cf_rank_links_parse("0000:03:00.0 nvlink 1200 150 line -;0000:03:00.0 nvlink 400 50 line 0000:0b:00.0;"
                                     "0000:0b:00.0 nvlink 1200 150 line -;0000:0b:00.0 nvlink 400 50 line 0000:03:00.0",
                                     back, CF_RANK_LINKS_MAX);
    near(cf_gpu_capacity(back, two, NULL), 50); /* GPU0 and GPU3: NV2 */
    two = cf_rank_links_parse("0000:03:00.0 nvlink 1200 150 line -;0000:03:00.0 nvlink 400 50 line 0000:0b:00.0;"
                              "0000:8a:00.0 nvlink 1200 150 line -;0000:8a:00.0 nvlink 400 50 line 0000:0b:00.0",
                              back, CF_RANK_LINKS_MAX);
    assert_true(cf_gpu_capacity(back, two, NULL) == 0); /* no NVLink between them: over PCIe, rate not recorded */
    two = cf_rank_links_parse("0000:03:00.0 nvlink 1200 150 line -;0000:07:00.0 nvlink 1200 150 line -", back,
                              CF_RANK_LINKS_MAX);
    near(cf_gpu_capacity(back, two, NULL), 150); /* peers not listed (an older document): each one's total */
    two = cf_rank_links_parse("0000:03:00.0 nvlink 3600 450 line -;0000:03:00.0 nvlink 3600 450 line *;"
                              "0000:07:00.0 nvlink 3400 425 line -;0000:07:00.0 nvlink 3400 425 line *",
                              back, CF_RANK_LINKS_MAX);
    near(cf_gpu_capacity(back, two, NULL), 425); /* NVSwitches: every link counts; one GPU has a link down */
    cf_sb_release(&w);

    /* XGMI: each peer's links as KFD gives them (an 8-GPU mesh has one link to each of 7) */
    struct cf_kfd_gpu kg[3] = { { .node = 2, .bdf = "0000:03:00.0" }, { .node = 3, .bdf = "0000:07:00.0" },
                                { .node = 4, .bdf = "0000:0b:00.0" } };
    struct cf_kfd_link kl[3] = { { .from = 2, .to = 3, .type = "XGMI", .max_bandwidth = 64000 },
                                 { .from = 2, .to = 4, .type = "XGMI", .max_bandwidth = 64000 },
                                 { .from = 3, .to = 4, .type = "XGMI", .max_bandwidth = 64000 } };
    with_kfd(&x, kg, 3, kl, 3);
    n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    assert_int_equal(n, 5);
    assert_int_equal(l[0].kind, CF_LINK_XGMI);
    near(l[0].gbps, 128);
    assert_string_equal(l[3].peer, "0000:07:00.0");
    near(l[3].gbps, 64);
    assert_string_equal(l[4].peer, "0000:0b:00.0");
    kl[2].from = 1; /* a link to a node that is no GPU here: no peer listed, its total stands */
    kl[0].to = 1;
    n = cf_rank_links_pick(&x.f, &gpu, l, CF_RANK_LINKS_MAX);
    assert_int_equal(n, 3);
    near(l[0].gbps, 128);
}

/* what an NVLink's far end is: NVML's type, else NCCL's rule over this host's sysfs */
static void test_nvlink_end(void **state)
{
    (void)state;
    struct fx x;
    fx_init(&x, "16.0 GT/s PCIe", 16); /* sysfs shows GPU 0000:03:00.0 and NICs 05, 85 */
    static const struct {
        struct cf_nvlink_peer p;
        enum cf_nvlink_end want;
    } cases[] = {
        { { "0000:07:00.0", "gpu", 1 }, CF_NVLINK_TO_GPU },       { { "0000:07:00.0", "switch", 1 }, CF_NVLINK_TO_SWITCH },
        { { "0000:07:00.0", "ibmnpu", 1 }, CF_NVLINK_TO_OTHER },  { { "0000:c0:00.0", NULL, 1 }, CF_NVLINK_TO_SWITCH },
        { { "0000:03:00.0", NULL, 1 }, CF_NVLINK_TO_GPU },        { { "0000:05:00.0", NULL, 1 }, CF_NVLINK_TO_OTHER },
        { { NULL, NULL, 1 }, CF_NVLINK_TO_OTHER },                { { NULL, "switch", 1 }, CF_NVLINK_TO_OTHER },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(cf_nvlink_end_of(&x.f, &cases[i].p), cases[i].want);
}

static size_t parse(const char *text, struct cf_rank_link *l)
{
    return cf_rank_links_parse(text, l, CF_RANK_LINKS_MAX);
}

static void test_pair(void **state)
{
    (void)state;
    struct cf_rank_link a[CF_RANK_LINKS_MAX], b[CF_RANK_LINKS_MAX];
    struct strbuf w = STRBUF_INIT;
    /* one network: its slower end */
    size_t na = parse("e0 eth 10 1.25 line 10.0.0.1/24", a), nb = parse("e0 eth 1 0.125 line 10.0.0.2/24", b);
    near(cf_path_capacity(a, na, b, nb, &w), 0.125);
    assert_non_null(strstr(cf_sb_str(&w), "on the network 10.0.0.0/24"));
    /* no shared network: unknown */
    nb = parse("e0 eth 10 1.25 line 10.0.1.2/24", b);
    assert_true(cf_path_capacity(a, na, b, nb, NULL) == 0);
    /* two shared networks: the fastest pair */
    na = parse("m0 eth 1 0.125 line 192.168.0.1/24;d0 eth 100 12.5 line 10.1.0.1/16", a);
    nb = parse("m0 eth 1 0.125 line 192.168.0.2/24;d0 eth 100 12.5 line 10.1.7.9/16", b);
    near(cf_path_capacity(a, na, b, nb, NULL), 12.5);
    /* IB on both: the smaller host's sum over its distinct ports (a port named by two ranks counts once) */
    na = parse("mlx5_0:1 ib 400 50 line -;mlx5_1:1 ib 400 50 line -;mlx5_0:1 ib 400 50 line -", a);
    nb = parse("mlx5_0:1 ib 400 50 line -;e0 eth 100 12.5 line 10.0.0.2/24", b);
    cf_sb_reset(&w);
    near(cf_path_capacity(a, na, b, nb, &w), 50);
    assert_non_null(strstr(cf_sb_str(&w), "IB/RoCE ports: 1 on one host"));
    /* IB on one end only: the interfaces decide */
    na = parse("mlx5_0:1 ib 400 50 line -;e0 eth 100 12.5 line 10.0.0.1/24", a);
    nb = parse("e0 eth 25 3.125 line 10.0.0.2/24", b);
    near(cf_path_capacity(a, na, b, nb, NULL), 3.125);
    /* nothing known */
    assert_true(cf_path_capacity(a, 0, b, nb, NULL) == 0);
    cf_sb_release(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_gpu_links),
        cmocka_unit_test(test_gpu_peers),
        cmocka_unit_test(test_nvlink_end),
        cmocka_unit_test(test_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
