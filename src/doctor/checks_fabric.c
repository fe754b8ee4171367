/* Checks of the host's fabric and limits (the survey's fabric section): PCIe links
 * trained below their maximum, GPUs far from every NIC, ACS redirecting P2P, an
 * IOMMU translating DMA, a small /dev/shm, locked memory, missing verbs devices,
 * the port range, and NVML's health counters. Ids in docs/doctor.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fabric.h"
#include "doctor/doctor_internal.h"

/* NCCL's SHM transport maps one segment per connection: sizeof(ncclSendMem) plus
 * the LL (512 KiB), LL128 (4.7 MiB) and Simple (4 MiB) buffers = 9637888 bytes,
 * the size in its "Error while creating shared memory segment" message. A rank
 * sends on a ring and a tree connection in each of at least 2 channels. */
#define SHM_SEGMENT 9637888ull
#define SHM_SEGMENTS_PER_RANK 4ull

static double gib(uint64_t b)
{
    return (double)b / (1024.0 * 1024 * 1024);
}

static double speed_of(const char *s)
{
    return s ? atof(s) : 0; /* "16.0 GT/s PCIe" */
}

/* a saved report's fields may be null: null equals nothing */
static int is(const char *s, const char *v)
{
    return s && v && !strcmp(s, v);
}

static void check_pcie(const struct cf_fabric *f, struct cf_findings *out)
{
    for (size_t i = 0; i < f->n_pci; i++) {
        const struct cf_pci_dev *d = &f->pci[i];
        char subject[128];
        snprintf(subject, sizeof subject, "%s %s%s%s", d->role ? d->role : "device", d->bdf ? d->bdf : "?",
                 d->label ? " " : "", d->label ? d->label : "");
        if (d->cur_width && d->max_width && d->cur_width < d->max_width)
            cf_findings_add(out, CF_SEV_WARNING, "pcie-width-downtrained", subject,
                            "reseat the card or check the slot and riser; compare with lspci -vv (LnkSta)",
                            "the PCIe link runs x%d of x%d lanes: at most %d%% of its bandwidth", d->cur_width,
                            d->max_width, 100 * d->cur_width / d->max_width);
        double cur = speed_of(d->cur_speed), max = speed_of(d->max_speed);
        if (cur > 0 && max > 0 && cur < max) {
            int gpu = is(d->role, "gpu");
            /* GPUs lower their link speed when idle: only a NIC's slow link is a fault at rest */
            cf_findings_add(out, gpu ? CF_SEV_INFO : CF_SEV_WARNING, "pcie-speed-downtrained", subject,
                            gpu ? "check again under load (GPUs slow their link when idle)"
                                : "check the slot, BIOS PCIe generation setting and cabling",
                            "the PCIe link runs at %s of %s", d->cur_speed, d->max_speed);
        }
        if (d->iommu_type && (!strcmp(d->iommu_type, "DMA") || !strcmp(d->iommu_type, "DMA-FQ")))
            cf_findings_add(out, CF_SEV_WARNING, "iommu-translating", subject,
                            "boot with iommu=pt (with intel_iommu=on or amd_iommu=on) so devices bypass translation",
                            "its IOMMU group translates DMA (%s): GPU peer-to-peer and GPUDirect RDMA slow down or fail",
                            d->iommu_type);
    }
}

static const struct cf_pci_dev *dev_by_bdf(const struct cf_fabric *f, const char *bdf)
{
    for (size_t i = 0; i < f->n_pci; i++)
        if (is(f->pci[i].bdf, bdf))
            return &f->pci[i];
    return NULL;
}

/* Classes from near to far, as NCCL orders its path types. */
static int class_rank(const char *cls)
{
    static const char *const order[] = { "PIX", "PXB", "PHB", "NODE", "SYS" };
    for (int i = 0; i < 5; i++)
        if (is(cls, order[i]))
            return i;
    return 5;
}

static void check_topology(const struct cf_fabric *f, struct cf_findings *out)
{
    for (size_t i = 0; i < f->n_pci; i++) {
        const struct cf_pci_dev *g = &f->pci[i];
        if (!is(g->role, "gpu") || !g->bdf)
            continue;
        const char *best = NULL;
        const char *best_nic = NULL;
        for (size_t k = 0; k < f->n_pairs; k++) {
            const struct cf_topo_pair *p = &f->pairs[k];
            if (!is(p->kind, "gpu-nic") || !is(p->a, g->bdf))
                continue;
            const struct cf_pci_dev *nic = dev_by_bdf(f, p->b);
            if (!nic || !nic->label)
                continue;
            if (!best || class_rank(p->cls) < class_rank(best)) {
                best = p->cls;
                best_nic = nic->label;
            }
        }
        if (best && class_rank(best) > class_rank("PXB"))
            cf_findings_add(out, CF_SEV_INFO, "gpu-nic-far", g->bdf,
                            "expected on hosts without a NIC per PCIe switch; NCCL_NET_GDR_LEVEL raises the limit",
                            "the nearest NIC (%s) is %s from this GPU: NCCL does not use GPUDirect RDMA beyond PXB "
                            "by default, so its traffic is staged through host memory",
                            best_nic, best);
    }
}

/* ACS request/completion redirect on a bridge below the common switch of a pair
 * sends their P2P traffic up to the root complex. */
static void check_acs(const struct cf_fabric *f, struct cf_findings *out)
{
    enum { ACS_RR = 1 << 2, ACS_CR = 1 << 3 };
    for (size_t i = 0; i < f->n_bridges; i++) {
        const struct cf_pci_bridge *b = &f->bridges[i];
        if (!b->bdf)
            continue;
        int on_p2p_path = 0;
        for (size_t k = 0; k < f->n_pairs && !on_p2p_path; k++) {
            const struct cf_topo_pair *p = &f->pairs[k];
            if (class_rank(p->cls) > class_rank("PXB"))
                continue;
            const struct cf_pci_dev *a = dev_by_bdf(f, p->a), *c = dev_by_bdf(f, p->b);
            on_p2p_path = (a && cf_strvec_contains(&a->path, b->bdf)) || (c && cf_strvec_contains(&c->path, b->bdf));
        }
        if (!on_p2p_path)
            continue;
        if (b->acs == 0)
            cf_findings_add(out, CF_SEV_INFO, "acs-unreadable", b->bdf, "run cclforge doctor as root to read it",
                            "ACS on this bridge between GPUs/NICs is in PCI configuration space beyond 64 bytes: "
                            "needs root");
        else if (b->acs == 1 && (b->acs_ctrl & (ACS_RR | ACS_CR)))
            cf_findings_add(out, CF_SEV_WARNING, "acs-redirect", b->bdf,
                            "disable ACS redirection on PCIe switches (setpci -s BDF ECAP_ACS+6.w=0000, or the BIOS)",
                            "ACS control 0x%04x has P2P request/completion redirect on: GPU peer-to-peer and "
                            "GPUDirect RDMA through this switch go via the root complex (slow, or hangs)",
                            (unsigned)b->acs_ctrl);
    }
}

static int active_ib(const struct cf_fabric *f)
{
    for (size_t i = 0; i < f->n_ib; i++)
        for (size_t k = 0; k < f->ib[i].n_ports; k++)
            if (f->ib[i].ports[k].state == 4)
                return 1;
    return 0;
}

static void check_limits(const struct cf_survey *s, const struct cf_fabric *f, struct cf_findings *out)
{
    const struct cf_fabric_limits *l = &f->limits;
    int ranks = l->local_ranks;
    const char *from = l->local_ranks_from;
    if (!ranks) {
        for (size_t i = 0; i < s->n_gpus; i++)
            ranks += s->gpus[i].visible;
        from = "one per visible GPU";
    }
    if (ranks > 1 || l->local_ranks) {
        uint64_t need = (uint64_t)(ranks > 0 ? ranks : 1) * SHM_SEGMENTS_PER_RANK * SHM_SEGMENT;
        if (!l->shm_bytes && l->shm_problem)
            cf_findings_add(out, CF_SEV_ERROR, "shm-missing", "/dev/shm", "mount a tmpfs on /dev/shm (docker: --ipc=host)",
                            "%s: NCCL's shared-memory transport cannot work", l->shm_problem);
        else if (l->shm_bytes && l->shm_bytes < need)
            cf_findings_add(out, CF_SEV_WARNING, "shm-small", "/dev/shm",
                            "docker run --ipc=host or --shm-size=1g; Kubernetes: an emptyDir of medium Memory on /dev/shm",
                            "/dev/shm holds %.2f GiB; %d local ranks (%s) need about %.2f GiB for NCCL's SHM transport "
                            "(\"Error while creating shared memory segment\")",
                            gib(l->shm_bytes), ranks, from, gib(need));
    }
    if (f->n_ib && !l->dev_infiniband)
        cf_findings_add(out, CF_SEV_ERROR, "no-uverbs", "/dev/infiniband",
                        "docker run --device=/dev/infiniband (or load ib_uverbs)",
                        "%zu HCA%s in sysfs but no verbs device nodes: NCCL cannot open them and falls back to sockets",
                        f->n_ib, f->n_ib == 1 ? "" : "s");
    if (active_ib(f) && l->memlock_soft != UINT64_MAX)
        cf_findings_add(out, CF_SEV_WARNING, "memlock-limited", "RLIMIT_MEMLOCK",
                        "ulimit -l unlimited (limits.conf memlock, docker --ulimit memlock=-1, Slurm PropagateResourceLimits)",
                        "locked memory is limited to %llu KiB: InfiniBand memory registration fails under load",
                        (unsigned long long)(l->memlock_soft / 1024));
    if (l->port_lo && l->port_hi) {
        if (l->master_port >= l->port_lo && l->master_port <= l->port_hi)
            cf_findings_add(out, CF_SEV_WARNING, "master-port-ephemeral", "MASTER_PORT",
                            "pick a MASTER_PORT below the ephemeral range",
                            "MASTER_PORT=%d lies in the local port range %d-%d: an outgoing connection may hold it "
                            "when rank 0 binds it",
                            l->master_port, l->port_lo, l->port_hi);
        if (l->port_hi - l->port_lo < 1024)
            cf_findings_add(out, CF_SEV_WARNING, "port-range-small", "net.ipv4.ip_local_port_range",
                            "sysctl -w net.ipv4.ip_local_port_range=\"32768 60999\"",
                            "only %d ephemeral ports (%d-%d): NCCL opens several sockets per peer", l->port_hi - l->port_lo + 1,
                            l->port_lo, l->port_hi);
    }
}

static void check_nvml(const struct cf_survey *s, const struct cf_fabric *f, struct cf_findings *out)
{
    int nvidia = 0;
    /* GPUs injected from another host's survey say nothing about NVML here */
    int same_host = !s->injected[CF_SEC_GPUS] || s->injected[CF_SEC_FABRIC];
    for (size_t i = 0; same_host && i < s->n_gpus; i++)
        nvidia += s->gpus[i].vendor && !strcmp(s->gpus[i].vendor, "nvidia");
    if (!f->nvml_ok) {
        if (nvidia)
            cf_findings_add(out, CF_SEV_ERROR, "nvml-unavailable", "NVML",
                            "install the driver's libnvidia-ml.so.1 (it ships with the driver)",
                            "%d NVIDIA GPU%s but NVML cannot be used (%s): ECC, NVLink and throttling are unchecked",
                            nvidia, nvidia == 1 ? "" : "s", f->nvml_note ? f->nvml_note : "unknown");
        return;
    }
    for (size_t i = 0; i < f->n_nvml; i++) {
        const struct cf_nvml_gpu *g = &f->nvml[i];
        char subject[192];
        snprintf(subject, sizeof subject, "GPU %d%s%s%s%s%s", g->index, g->name ? " " : "", g->name ? g->name : "",
                 g->bdf ? " (" : "", g->bdf ? g->bdf : "", g->bdf ? ")" : "");
        for (size_t k = 0; k < g->errors.n; k++)
            cf_findings_add(out, CF_SEV_ERROR, "nvml-error", subject, "nvidia-smi -q -i N; a reset or reboot may be needed",
                            "%s", g->errors.v[k]);
        if (g->ecc_uncorrected_volatile > 0)
            cf_findings_add(out, CF_SEV_ERROR, "gpu-ecc-uncorrected", subject, "drain the node and reset the GPU",
                            "%lld uncorrected ECC errors since the driver loaded", g->ecc_uncorrected_volatile);
        if (g->remap_failure == 1 || g->retired_pending == 1 || g->remap_pending == 1) {
            /* only the counters this GPU has: row remapping (Ampere+) or page retirement (older) */
            struct strbuf counts = STRBUF_INIT;
            if (g->remapped_corr >= 0)
                cf_sb_addf(&counts, "; remapped rows: %lld correctable, %lld uncorrectable", g->remapped_corr,
                           g->remapped_unc);
            if (g->retired_sbe >= 0)
                cf_sb_addf(&counts, "; retired pages: %lld single-bit, %lld double-bit", g->retired_sbe, g->retired_dbe);
            cf_findings_add(out, g->remap_failure == 1 ? CF_SEV_ERROR : CF_SEV_WARNING, "gpu-memory-repair", subject,
                            g->remap_failure == 1 ? "replace the GPU (row remapping failed)"
                                                  : "reset the GPU (nvidia-smi -r) to apply the pending repair",
                            "%s%s", g->remap_failure == 1 ? "row remapping failed" : "a memory repair is pending",
                            cf_sb_str(&counts));
            cf_sb_release(&counts);
        }
        if (g->throttle_names.n) {
            struct strbuf names = STRBUF_INIT;
            for (size_t k = 0; k < g->throttle_names.n; k++)
                cf_sb_addf(&names, "%s%s", k ? ", " : "", g->throttle_names.v[k]);
            cf_findings_add(out, CF_SEV_WARNING, "gpu-throttled", subject,
                            "check cooling and power (nvidia-smi -q -d PERFORMANCE)",
                            "clocks are held down: %s (reasons 0x%llx): the slowest GPU sets the pace of every collective",
                            cf_sb_str(&names), g->throttle);
            cf_sb_release(&names);
        }
        if (g->nvlinks_inactive > 0 && g->nvlinks_active > 0)
            cf_findings_add(out, CF_SEV_WARNING, "nvlink-down", subject, "nvidia-smi nvlink -s; reseat or service the GPU",
                            "%d of %d NVLinks are inactive", g->nvlinks_inactive, g->nvlinks_active + g->nvlinks_inactive);
        if (g->mig_current == 1)
            cf_findings_add(out, CF_SEV_WARNING, "gpu-mig-enabled", subject, "nvidia-smi -mig 0 for NCCL jobs",
                            "MIG is enabled: NCCL cannot use peer-to-peer or NVLink between MIG instances");
        if (g->mig_pending >= 0 && g->mig_current >= 0 && g->mig_pending != g->mig_current)
            cf_findings_add(out, CF_SEV_WARNING, "gpu-mig-pending", subject, "reset the GPU to apply it",
                            "a MIG mode change is pending (current %d, after reset %d)", g->mig_current, g->mig_pending);
    }
}

static int has_xgmi(const struct cf_fabric *f, int node)
{
    for (size_t i = 0; i < f->n_kfd_links; i++)
        if ((f->kfd_links[i].from == node || f->kfd_links[i].to == node) && is(f->kfd_links[i].type, "XGMI"))
            return 1;
    return 0;
}

/* Where the GPUs of a host form an XGMI hive, a GPU with no XGMI link reaches the
 * others over PCIe through the CPU: its bridge or link is missing or down, and
 * every RCCL ring through it runs at PCIe speed. */
static void check_kfd_links(const struct cf_fabric *f, struct cf_findings *out)
{
    struct strbuf hive = STRBUF_INIT;
    size_t in_hive = 0;
    for (size_t i = 0; i < f->n_kfd_gpus; i++)
        if (has_xgmi(f, f->kfd_gpus[i].node))
            cf_sb_addf(&hive, "%snode%d", in_hive++ ? ", " : "", f->kfd_gpus[i].node);
    for (size_t i = 0; in_hive >= 2 && i < f->n_kfd_gpus; i++) {
        const struct cf_kfd_gpu *g = &f->kfd_gpus[i];
        if (has_xgmi(f, g->node))
            continue;
        struct strbuf paths = STRBUF_INIT;
        for (size_t k = 0; k < f->n_kfd_links; k++) {
            const struct cf_kfd_link *l = &f->kfd_links[k];
            if (l->from == g->node || l->to == g->node)
                cf_sb_addf(&paths, "%snode%d over %s (weight %d, %s)", paths.len ? ", " : "",
                           l->from == g->node ? l->to : l->from, l->type, l->weight, l->table);
        }
        char subject[96];
        snprintf(subject, sizeof subject, "KFD node%d%s%s", g->node, g->name ? " " : "", g->name ? g->name : "");
        cf_findings_add(out, CF_SEV_WARNING, "kfd-xgmi-missing", subject,
                        "check this GPU's XGMI bridge or links (rocm-smi --showtopo, dmesg | grep -i xgmi)",
                        "%s are joined by XGMI but node%d has no XGMI link%s; it reaches %s: every RCCL ring "
                        "through it runs at PCIe speed",
                        cf_sb_str(&hive), g->node, g->hive_id ? "" : " and is in no hive",
                        paths.len ? cf_sb_str(&paths) : "the others only through the CPU (KFD lists no peer-to-peer path)");
        cf_sb_release(&paths);
    }
    cf_sb_release(&hive);
}

void cf_check_fabric(const struct cf_survey *s, struct cf_findings *out)
{
    const struct cf_fabric *f = s->fabric;
    if (!f)
        return;
    check_pcie(f, out);
    check_topology(f, out);
    check_acs(f, out);
    check_limits(s, f, out);
    check_nvml(s, f, out);
    check_kfd_links(f, out);
}
