/* Which links a rank's traffic to other hosts can leave by, from its host's
 * fabric facts, each with its capacity (cclforge/path_capacity.h). NCCL's own
 * choice is the model: IB/RoCE ports first, the ones nearest the GPU
 * (graph/search.cc keeps the best path type), then sockets on interfaces that
 * NCCL_SOCKET_IFNAME allows, never loopback or docker* unless named; and before
 * them the GPU's own link to the host's other GPUs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cclforge/ncclconf.h"
#include "cclforge/path_capacity.h"

/* nvidia-smi's classes, nearest first */
static const char *const class_order[] = { "PIX", "PXB", "PHB", "NODE", "SYS" };

static int class_rank(const char *cls)
{
    for (size_t i = 0; cls && i < sizeof class_order / sizeof class_order[0]; i++)
        if (!strcmp(cls, class_order[i]))
            return (int)i;
    return (int)(sizeof class_order / sizeof class_order[0]);
}

static const struct cf_pci_dev *pci_dev(const struct cf_fabric *f, const char *bdf)
{
    for (size_t i = 0; bdf && i < f->n_pci; i++)
        if (!strcasecmp(f->pci[i].bdf, bdf))
            return &f->pci[i];
    return NULL;
}

static double pci_gbps(const struct cf_fabric *f, const char *bdf)
{
    const struct cf_pci_dev *d = pci_dev(f, bdf);
    return d ? cf_pcie_gbps(d->cur_speed, d->cur_width) : 0;
}

/* the class between the rank's GPU and a NIC; past the last class when unknown */
static int nic_class(const struct cf_fabric *f, const char *gpu, const char *nic)
{
    for (size_t i = 0; gpu && nic && i < f->n_pairs; i++)
        if (!strcasecmp(f->pairs[i].a, gpu) && !strcasecmp(f->pairs[i].b, nic))
            return class_rank(f->pairs[i].cls);
    return (int)(sizeof class_order / sizeof class_order[0]);
}

/* the link's capacity: the slowest of its line and the PCIe links on the way */
static void cap(struct cf_rank_link *l, double line_gbps, double nic_pcie, double gpu_pcie)
{
    l->gbps = line_gbps;
    l->limit = CF_LIMIT_LINE;
    if (nic_pcie > 0 && nic_pcie < l->gbps) {
        l->gbps = nic_pcie;
        l->limit = CF_LIMIT_NIC_PCIE;
    }
    if (gpu_pcie > 0 && gpu_pcie < l->gbps) {
        l->gbps = gpu_pcie;
        l->limit = CF_LIMIT_GPU_PCIE;
    }
}

static size_t pick_ib(const struct cf_fabric *f, const struct cf_link_use *use, double gpu_pcie,
                      struct cf_rank_link *out, size_t max)
{
    struct cf_nccl_if_list hca;
    cf_nccl_if_list_parse(use->ib_hca, CF_NCCL_IF_MAX, &hca);
    int best = 1 << 20;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        for (size_t d = 0; d < f->n_ib; d++) {
            const struct cf_ib_dev *dev = &f->ib[d];
            int cls = use->gpu_bdf ? nic_class(f, use->gpu_bdf, dev->pci) : 0;
            for (size_t p = 0; p < dev->n_ports; p++) {
                const struct cf_ib_port *port = &dev->ports[p];
                double g = cf_ib_rate_gbit(port->rate);
                if (port->state != 4 || g <= 0 || !cf_nccl_if_list_match(&hca, dev->name, port->port))
                    continue;
                if (pass == 0) {
                    best = cls < best ? cls : best;
                    continue;
                }
                if (cls != best || n == max)
                    continue;
                struct cf_rank_link *l = &out[n];
                memset(l, 0, sizeof *l);
                if ((size_t)snprintf(l->name, sizeof l->name, "%s:%d", dev->name, port->port) >= sizeof l->name)
                    continue;
                l->kind = port->link_layer && !strcmp(port->link_layer, "Ethernet") ? CF_LINK_ROCE : CF_LINK_IB;
                l->line_gbit = g;
                cap(l, g / 8, pci_gbps(f, dev->pci), gpu_pcie);
                n++;
            }
        }
        if (pass == 1)
            return n;
    }
    return 0;
}

/* the first IPv4 address of an interface */
static int first_v4(const struct cf_net_if *x, struct cf_rank_link *l)
{
    for (size_t i = 0; i < x->addrs.n; i++)
        if (cf_rank_link_set_net(l, x->addrs.v[i]))
            return 1;
    return 0;
}

static size_t pick_eth(const struct cf_fabric *f, const struct cf_link_use *use, double gpu_pcie,
                       struct cf_rank_link *out, size_t max)
{
    struct cf_nccl_if_list allow;
    const char *names = use->device_memory ? use->socket_ifname : NULL;
    cf_nccl_if_list_parse(names ? names : "^docker,lo", CF_NCCL_IF_MAX, &allow);
    size_t n = 0;
    for (size_t i = 0; i < f->n_ifs && n < max; i++) {
        const struct cf_net_if *x = &f->ifs[i];
        struct cf_rank_link *l = &out[n];
        memset(l, 0, sizeof *l);
        if (!x->up || !x->running || (x->loopback && !names) || x->speed_mbps <= 0 ||
            !cf_nccl_if_list_match(&allow, x->name, -1) || strlen(x->name) >= sizeof l->name || !first_v4(x, l))
            continue;
        snprintf(l->name, sizeof l->name, "%s", x->name);
        l->kind = CF_LINK_ETH;
        l->line_gbit = x->speed_mbps / 1000.0;
        cap(l, l->line_gbit / 8, pci_gbps(f, x->pci), gpu_pcie);
        n++;
    }
    return n;
}

/* the GPU's link to the host's other GPUs: its NVLinks, else its XGMI links, else
 * its PCIe link when it has neither (a GPU whose NVLink or XGMI rate is unknown has
 * none: its PCIe link would understate it) */
static size_t pick_gpu(const struct cf_fabric *f, const struct cf_link_use *use, double gpu_pcie,
                       struct cf_rank_link *out, size_t max)
{
    if (!use->device_memory || !use->gpu_bdf || !max)
        return 0;
    struct cf_rank_link *l = &out[0];
    memset(l, 0, sizeof *l);
    const struct cf_pci_dev *d = pci_dev(f, use->gpu_bdf);
    snprintf(l->name, sizeof l->name, "%s", d ? d->bdf : use->gpu_bdf);
    int nvlinks = 0, xgmi = 0;
    for (size_t i = 0; i < f->n_nvml; i++)
        if (f->nvml[i].bdf && !strcasecmp(f->nvml[i].bdf, use->gpu_bdf) && f->nvml[i].nvlinks_active > 0) {
            nvlinks = 1;
            l->kind = CF_LINK_NVLINK;
            l->gbps = f->nvml[i].nvlinks_active * cf_nvlink_gbps(f->nvml[i].nvlink_version);
        }
    for (size_t i = 0; !nvlinks && i < f->n_kfd_gpus; i++) {
        if (!f->kfd_gpus[i].bdf || strcasecmp(f->kfd_gpus[i].bdf, use->gpu_bdf))
            continue;
        double mbs = 0;
        int unknown = 0; /* one link of unknown rate: the sum is unknown */
        for (size_t k = 0; k < f->n_kfd_links; k++) {
            const struct cf_kfd_link *kl = &f->kfd_links[k];
            if (!kl->type || strcmp(kl->type, "XGMI") ||
                (kl->from != f->kfd_gpus[i].node && kl->to != f->kfd_gpus[i].node))
                continue;
            xgmi = 1;
            unknown |= kl->max_bandwidth <= 0;
            mbs += kl->max_bandwidth;
        }
        l->kind = CF_LINK_XGMI;
        l->gbps = unknown ? 0 : mbs / 1000;
    }
    if (!nvlinks && !xgmi) {
        l->kind = CF_LINK_PCIE;
        l->gbps = gpu_pcie;
    }
    l->line_gbit = l->gbps * 8;
    l->limit = CF_LIMIT_LINE;
    return l->gbps > 0 && strlen(l->name) < sizeof l->name - 1 && cf_pci_is_bdf(l->name);
}

/* one link of the GPU to a peer: added to the one already listed for that peer */
static size_t add_peer(struct cf_rank_link *out, size_t n, size_t max, const char *gpu, enum cf_link_kind kind,
                       const char *peer, double gbps, int *lost)
{
    if (!(gbps > 0)) { /* a link of unknown rate: what the peer gets, unknown */
        *lost = 1;
        return n;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(out[i].peer, peer)) {
            out[i].gbps += gbps;
            out[i].line_gbit = out[i].gbps * 8;
            return n;
        }
    if (n == max || strlen(peer) >= sizeof out->peer) {
        *lost = 1;
        return n;
    }
    struct cf_rank_link *l = &out[n];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", gpu);
    snprintf(l->peer, sizeof l->peer, "%s", peer);
    l->kind = kind;
    l->gbps = gbps;
    l->line_gbit = gbps * 8;
    l->limit = CF_LIMIT_LINE;
    return n + 1;
}

/* The GPU's links to each GPU it reaches directly, and to NVSwitches ("*"), after
 * gpu (its total link, out[-1] of this table): NVML's far ends (cf_nvlink_end_of),
 * each active link counted once; KFD's XGMI links to the nodes of other GPUs. All
 * or none: a GPU with only some of its peers listed would read slower than it is. */
static size_t pick_peers(const struct cf_fabric *f, const struct cf_rank_link *gpu, struct cf_rank_link *out,
                         size_t max)
{
    size_t n = 0;
    int lost = 0, unknown = 0;
    if (gpu->kind == CF_LINK_NVLINK) {
        const struct cf_nvml_gpu *g = NULL;
        for (size_t i = 0; i < f->n_nvml && !g; i++)
            if (f->nvml[i].bdf && !strcasecmp(f->nvml[i].bdf, gpu->name))
                g = &f->nvml[i];
        double rate = g ? cf_nvlink_gbps(g->nvlink_version) : 0;
        for (size_t k = 0; g && k < g->n_nvlink_peers; k++) {
            const struct cf_nvlink_peer *p = &g->nvlink_peers[k];
            enum cf_nvlink_end end = cf_nvlink_end_of(f, p);
            if (end == CF_NVLINK_TO_SWITCH)
                n = add_peer(out, n, max, gpu->name, gpu->kind, "*", p->links * rate, &lost);
            else if (end == CF_NVLINK_TO_GPU && cf_pci_is_bdf(p->bdf))
                n = add_peer(out, n, max, gpu->name, gpu->kind, p->bdf, p->links * rate, &lost);
            else
                unknown |= !p->type; /* an end of no type that is no GPU and no NVSwitch: what it is, unknown */
        }
    } else if (gpu->kind == CF_LINK_XGMI) {
        int node = -1;
        for (size_t i = 0; i < f->n_kfd_gpus && node < 0; i++)
            if (f->kfd_gpus[i].bdf && !strcasecmp(f->kfd_gpus[i].bdf, gpu->name))
                node = f->kfd_gpus[i].node;
        for (size_t k = 0; node >= 0 && k < f->n_kfd_links; k++) {
            const struct cf_kfd_link *kl = &f->kfd_links[k];
            if (!kl->type || strcmp(kl->type, "XGMI") || (kl->from != node && kl->to != node))
                continue;
            int other = kl->from == node ? kl->to : kl->from;
            const char *bdf = NULL;
            for (size_t i = 0; i < f->n_kfd_gpus && !bdf; i++)
                if (f->kfd_gpus[i].node == other)
                    bdf = f->kfd_gpus[i].bdf;
            if (bdf && cf_pci_is_bdf(bdf))
                n = add_peer(out, n, max, gpu->name, gpu->kind, bdf, kl->max_bandwidth / 1000.0, &lost);
            else
                unknown = 1;
        }
    }
    return lost || unknown ? 0 : n;
}

size_t cf_rank_links_pick(const struct cf_fabric *f, const struct cf_link_use *use, struct cf_rank_link *out,
                          size_t max)
{
    double gpu_pcie = use->device_memory ? pci_gbps(f, use->gpu_bdf) : 0;
    size_t gpu = pick_gpu(f, use, gpu_pcie, out, max), n = gpu;
    n += use->ib_disabled ? 0 : pick_ib(f, use, gpu_pcie, out + n, max - n);
    n += pick_eth(f, use, gpu_pcie, out + n, max - n);
    if (gpu && (out[0].kind == CF_LINK_NVLINK || out[0].kind == CF_LINK_XGMI))
        n += pick_peers(f, &out[0], out + n, max - n);
    return n;
}
