/* The capacity of the path between two hosts, and between the GPUs of one, from
 * their own fabric facts: the links each rank's traffic to other hosts can leave
 * by (an InfiniBand/RoCE port near its GPU, or an interface with an address), each
 * capped by the slowest of its line rate and the PCIe links on the way (the NIC's;
 * the GPU's when the data lives in device memory), and its GPU's link to the
 * host's other GPUs (NVLink, XGMI, else its PCIe link). smoke records each rank's
 * links in its document ("ranks[].links"); a report compares each pair's or
 * group's busbw with the capacity of its path (docs/smoke.md, "Is this normal?"). */
#ifndef CCLFORGE_PATH_CAPACITY_H
#define CCLFORGE_PATH_CAPACITY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cclforge/fabric.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* to other hosts: ETH, IB, ROCE; to the host's other GPUs: NVLINK, XGMI, PCIE */
enum cf_link_kind {
    CF_LINK_ETH, CF_LINK_IB, CF_LINK_ROCE, CF_LINK_NVLINK, CF_LINK_XGMI, CF_LINK_PCIE, CF_LINK_KIND_COUNT
};
/* what sets a link's capacity: its line rate, the NIC's PCIe link, the GPU's */
enum cf_link_limit { CF_LIMIT_LINE, CF_LIMIT_NIC_PCIE, CF_LIMIT_GPU_PCIE, CF_LIMIT_COUNT };

struct cf_rank_link {
    char name[32];       /* "eth0", "mlx5_0:1"; a GPU link: the GPU's PCI function ("0000:03:00.0") */
    enum cf_link_kind kind;
    double line_gbit;    /* the line rate, Gb/s (IB: the data rate, 8b/10b taken off SDR to QDR) */
    double gbps;         /* capacity one way, GB/s (10^9 bytes), the busbw unit; > 0 */
    enum cf_link_limit limit;
    char net[48];        /* eth: its IPv4 address and prefix ("10.0.0.1/24"); "" otherwise */
    char peer[16];       /* nvlink, xgmi: the one GPU this link leads to ("0000:07:00.0"), or "*" for its
                          * NVLinks to NVSwitches (every GPU on them); "": the GPU's links to all the
                          * host's other GPUs together */
    uint32_t v4, v4mask; /* net, parsed (host order); 0, 0 when none */
};

#define CF_RANK_LINKS_MAX 24 /* a GPU link, one per peer GPU (7 on an 8-GPU XGMI mesh), ports, interfaces */

/* "eth", "ib", "roce", "nvlink", "xgmi", "pcie" / "line", "nic-pcie", "gpu-pcie" */
const char *cf_link_kind_name(enum cf_link_kind k);
const char *cf_link_limit_name(enum cf_link_limit l);

/* One direction of a PCIe link, GB/s: the per-lane rate of its generation (from
 * sysfs's "16.0 GT/s PCIe") less its encoding, times the width; 0 unknown. */
double cf_pcie_gbps(const char *speed, int width);
/* The data rate of an IB port, Gb/s, from sysfs's rate ("200 Gb/sec (4X HDR)",
 * "40 Gb/sec (4X QDR)": 32); 0 unknown. */
double cf_ib_rate_gbit(const char *rate);

/* How the rank moves data, for the choice of links. */
struct cf_link_use {
    int device_memory;        /* the buffers are on the GPU (the nccl backend) */
    const char *gpu_bdf;      /* its GPU ("0000:1b:00.0"); NULL unknown */
    const char *socket_ifname; /* NCCL_SOCKET_IFNAME (device backend only) */
    const char *ib_hca;       /* NCCL_IB_HCA */
    int ib_disabled;          /* NCCL_IB_DISABLE=1 */
};

/* This rank's links, from its host's fabric (cf_fabric_probe_paths): with device
 * memory and a known GPU, first its link to the host's other GPUs (its active
 * NVLinks times their rate, else its XGMI links' bandwidth summed, else its PCIe
 * link); the active IB/RoCE ports nearest its GPU (every active port when the GPU
 * is unknown), as NCCL_IB_HCA allows; then the interfaces that are up and running
 * with an IPv4 address, not loopback, not docker*, as NCCL_SOCKET_IFNAME allows,
 * with a known line rate; last, where its GPU's far ends are known (NVML's NVLink
 * peers, KFD's XGMI links), one link to each GPU they reach directly and one for
 * its NVLinks to NVSwitches, with peer set: all of them or none. Returns how many
 * (at most max). */
size_t cf_rank_links_pick(const struct cf_fabric *f, const struct cf_link_use *use, struct cf_rank_link *out,
                          size_t max);

/* Sets l's net from "10.0.0.1/24" (IPv4 only); 0, with net empty, otherwise. */
int cf_rank_link_set_net(struct cf_rank_link *l, const char *cidr);

/* The one-line form ranks exchange and report ("eth0 eth 10 1.25 line 10.0.0.1/24;..."),
 * and back: malformed entries are skipped, names that would not survive the form
 * are never written. The last field is where the link leads: an interface's
 * network, a GPU link's peer, else "-". Parse returns how many (at most max). */
void cf_rank_links_format(const struct cf_rank_link *l, size_t n, struct strbuf *out);
size_t cf_rank_links_parse(const char *text, struct cf_rank_link *out, size_t max);

/* "links" of a rank in a smoke document: an array of {name, kind, line_gbit,
 * capacity_gbps, limit, net or peer}, and back (entries of a wrong shape skipped). */
cJSON *cf_rank_links_to_json(const struct cf_rank_link *l, size_t n);
size_t cf_rank_links_from_json(const cJSON *arr, struct cf_rank_link *out, size_t max);

/* One direction of an NVLink of an nvmlNvlinkVersion_t (1: 1.0 ... 7: 5.0), GB/s;
 * 0 unknown. */
double cf_nvlink_gbps(int version);

/* The capacity of the GPUs' own links within one host, GB/s, for the GPUs named by
 * the GPU links among l (a group's ranks on that host): the slowest GPU's. A GPU
 * whose peers are listed counts its links to the others of these GPUs and to
 * NVSwitches; one whose peers are not listed, its total (NVLink, XGMI, PCIe).
 * 0 when none, or when a GPU reaches none of the others directly. words as below. */
double cf_gpu_capacity(const struct cf_rank_link *l, size_t n, struct strbuf *words);

/* The capacity of the path between hosts A and B, GB/s, from the links of each
 * one's ranks: when both have IB/RoCE ports, the smaller of their sums (NCCL
 * spreads its channels over the ports its ranks use); otherwise the fastest pair
 * of interfaces on one IPv4 network. 0 when nothing tells. words (may be NULL)
 * gets what it rests on ("10 Gb/s line of e0 on both"). */
double cf_path_capacity(const struct cf_rank_link *a, size_t na, const struct cf_rank_link *b, size_t nb,
                        struct strbuf *words);

#ifdef __cplusplus
}
#endif
#endif
