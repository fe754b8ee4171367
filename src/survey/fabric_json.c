/* The "fabric" section of a survey: field tables for cclforge/fabric.h, which give
 * its JSON writer, reader and release. */
#include "cclforge/fabric.h"

#include <string.h>

#include "cclforge/json_fields.h"

#define F(t, f, k) CF_JF(t, f, k)

static const struct cf_jf if_fields[] = {
    F(struct cf_net_if, name, CF_JF_STR), F(struct cf_net_if, up, CF_JF_BOOL),
    F(struct cf_net_if, running, CF_JF_BOOL), F(struct cf_net_if, loopback, CF_JF_BOOL),
    F(struct cf_net_if, addrs, CF_JF_STRVEC), F(struct cf_net_if, speed_mbps, CF_JF_INT),
    F(struct cf_net_if, pci, CF_JF_STR),
};
static const struct cf_jf_table if_table = CF_JF_TABLE(struct cf_net_if, if_fields);

static const struct cf_jf gid_fields[] = {
    F(struct cf_ib_gid, index, CF_JF_INT), F(struct cf_ib_gid, gid, CF_JF_STR),
    F(struct cf_ib_gid, type, CF_JF_STR), F(struct cf_ib_gid, ndev, CF_JF_STR),
};
static const struct cf_jf_table gid_table = CF_JF_TABLE(struct cf_ib_gid, gid_fields);

static const struct cf_jf_table *const port_subs[] = { &gid_table };
static const struct cf_jf port_fields[] = {
    F(struct cf_ib_port, port, CF_JF_INT), F(struct cf_ib_port, state, CF_JF_INT),
    F(struct cf_ib_port, state_name, CF_JF_STR), F(struct cf_ib_port, phys_state, CF_JF_INT),
    F(struct cf_ib_port, phys_state_name, CF_JF_STR), F(struct cf_ib_port, rate, CF_JF_STR),
    F(struct cf_ib_port, link_layer, CF_JF_STR), CF_JF_ARR(struct cf_ib_port, gids, n_gids, 0),
    F(struct cf_ib_port, gid_table_len, CF_JF_INT),
};
static const struct cf_jf_table port_table = CF_JF_TABLE_SUBS(struct cf_ib_port, port_fields, port_subs);

static const struct cf_jf_table *const ib_subs[] = { &port_table };
static const struct cf_jf ib_fields[] = {
    F(struct cf_ib_dev, name, CF_JF_STR), F(struct cf_ib_dev, pci, CF_JF_STR), F(struct cf_ib_dev, fw, CF_JF_STR),
    CF_JF_ARR(struct cf_ib_dev, ports, n_ports, 0),
};
static const struct cf_jf_table ib_table = CF_JF_TABLE_SUBS(struct cf_ib_dev, ib_fields, ib_subs);

static const struct cf_jf pci_fields[] = {
    F(struct cf_pci_dev, bdf, CF_JF_STR), F(struct cf_pci_dev, role, CF_JF_STR),
    F(struct cf_pci_dev, vendor_id, CF_JF_STR), F(struct cf_pci_dev, device_id, CF_JF_STR),
    F(struct cf_pci_dev, class_id, CF_JF_STR), F(struct cf_pci_dev, label, CF_JF_STR),
    F(struct cf_pci_dev, numa, CF_JF_INT), F(struct cf_pci_dev, cur_speed, CF_JF_STR),
    F(struct cf_pci_dev, max_speed, CF_JF_STR), F(struct cf_pci_dev, cur_width, CF_JF_INT),
    F(struct cf_pci_dev, max_width, CF_JF_INT), F(struct cf_pci_dev, iommu_type, CF_JF_STR),
    F(struct cf_pci_dev, path, CF_JF_STRVEC),
};
static const struct cf_jf_table pci_table = CF_JF_TABLE(struct cf_pci_dev, pci_fields);

static const struct cf_jf bridge_fields[] = {
    F(struct cf_pci_bridge, bdf, CF_JF_STR), F(struct cf_pci_bridge, acs, CF_JF_INT),
    F(struct cf_pci_bridge, acs_ctrl, CF_JF_INT),
};
static const struct cf_jf_table bridge_table = CF_JF_TABLE(struct cf_pci_bridge, bridge_fields);

static const struct cf_jf pair_fields[] = {
    F(struct cf_topo_pair, a, CF_JF_STR), F(struct cf_topo_pair, b, CF_JF_STR),
    F(struct cf_topo_pair, kind, CF_JF_STR), F(struct cf_topo_pair, cls, CF_JF_STR),
};
static const struct cf_jf_table pair_table = CF_JF_TABLE(struct cf_topo_pair, pair_fields);

static const struct cf_jf peer_fields[] = {
    F(struct cf_nvlink_peer, bdf, CF_JF_STR), F(struct cf_nvlink_peer, type, CF_JF_STR),
    F(struct cf_nvlink_peer, links, CF_JF_INT),
};
static const struct cf_jf_table peer_table = CF_JF_TABLE(struct cf_nvlink_peer, peer_fields);

static const struct cf_jf_table *const nvml_subs[] = { &peer_table };
static const struct cf_jf nvml_fields[] = {
    F(struct cf_nvml_gpu, index, CF_JF_INT), F(struct cf_nvml_gpu, name, CF_JF_STR),
    F(struct cf_nvml_gpu, uuid, CF_JF_STR), F(struct cf_nvml_gpu, bdf, CF_JF_STR),
    F(struct cf_nvml_gpu, nvlinks_active, CF_JF_INT), F(struct cf_nvml_gpu, nvlinks_inactive, CF_JF_INT),
    F(struct cf_nvml_gpu, nvlink_version, CF_JF_INT), CF_JF_ARR(struct cf_nvml_gpu, nvlink_peers, n_nvlink_peers, 0),
    F(struct cf_nvml_gpu, ecc_enabled, CF_JF_INT),
    F(struct cf_nvml_gpu, ecc_uncorrected_volatile, CF_JF_LL),
    F(struct cf_nvml_gpu, ecc_uncorrected_aggregate, CF_JF_LL),
    F(struct cf_nvml_gpu, ecc_corrected_volatile, CF_JF_LL), F(struct cf_nvml_gpu, retired_sbe, CF_JF_LL),
    F(struct cf_nvml_gpu, retired_dbe, CF_JF_LL), F(struct cf_nvml_gpu, retired_pending, CF_JF_INT),
    F(struct cf_nvml_gpu, remapped_corr, CF_JF_LL), F(struct cf_nvml_gpu, remapped_unc, CF_JF_LL),
    F(struct cf_nvml_gpu, remap_pending, CF_JF_INT), F(struct cf_nvml_gpu, remap_failure, CF_JF_INT),
    F(struct cf_nvml_gpu, throttle, CF_JF_U64), F(struct cf_nvml_gpu, throttle_names, CF_JF_STRVEC),
    F(struct cf_nvml_gpu, mig_current, CF_JF_INT), F(struct cf_nvml_gpu, mig_pending, CF_JF_INT),
    F(struct cf_nvml_gpu, errors, CF_JF_STRVEC),
};
static const struct cf_jf_table nvml_table = CF_JF_TABLE_SUBS(struct cf_nvml_gpu, nvml_fields, nvml_subs);

static const struct cf_jf kfd_gpu_fields[] = {
    F(struct cf_kfd_gpu, node, CF_JF_INT), F(struct cf_kfd_gpu, name, CF_JF_STR),
    F(struct cf_kfd_gpu, hive_id, CF_JF_STR), F(struct cf_kfd_gpu, bdf, CF_JF_STR),
};
static const struct cf_jf_table kfd_gpu_table = CF_JF_TABLE(struct cf_kfd_gpu, kfd_gpu_fields);

static const struct cf_jf kfd_link_fields[] = {
    F(struct cf_kfd_link, from, CF_JF_INT), F(struct cf_kfd_link, to, CF_JF_INT),
    F(struct cf_kfd_link, type, CF_JF_STR), F(struct cf_kfd_link, weight, CF_JF_INT),
    F(struct cf_kfd_link, table, CF_JF_STR), F(struct cf_kfd_link, max_bandwidth, CF_JF_INT),
};
static const struct cf_jf_table kfd_link_table = CF_JF_TABLE(struct cf_kfd_link, kfd_link_fields);

static const struct cf_jf limits_fields[] = {
    F(struct cf_fabric_limits, shm_bytes, CF_JF_U64), F(struct cf_fabric_limits, shm_problem, CF_JF_STR),
    F(struct cf_fabric_limits, memlock_soft, CF_JF_U64), F(struct cf_fabric_limits, memlock_hard, CF_JF_U64),
    F(struct cf_fabric_limits, dev_infiniband, CF_JF_BOOL), F(struct cf_fabric_limits, uverbs, CF_JF_INT),
    F(struct cf_fabric_limits, port_lo, CF_JF_INT), F(struct cf_fabric_limits, port_hi, CF_JF_INT),
    F(struct cf_fabric_limits, local_ranks, CF_JF_INT), F(struct cf_fabric_limits, local_ranks_from, CF_JF_STR),
    F(struct cf_fabric_limits, master_port, CF_JF_INT),
};
static const struct cf_jf_table limits_table = CF_JF_TABLE(struct cf_fabric_limits, limits_fields);

/* The limits are a nested object: its fields are read through their own table. */
enum { IFS, IB, PCI, BRIDGES, PAIRS, NVML, KFD_GPUS, KFD_LINKS };
static const struct cf_jf_table *const fabric_subs[] = {
    [IFS] = &if_table, [IB] = &ib_table, [PCI] = &pci_table, [BRIDGES] = &bridge_table, [PAIRS] = &pair_table,
    [NVML] = &nvml_table, [KFD_GPUS] = &kfd_gpu_table, [KFD_LINKS] = &kfd_link_table,
};
static const struct cf_jf fabric_fields[] = {
    CF_JF_ARR(struct cf_fabric, ifs, n_ifs, IFS),
    CF_JF_ARR(struct cf_fabric, ib, n_ib, IB),
    CF_JF_ARR(struct cf_fabric, pci, n_pci, PCI),
    CF_JF_ARR(struct cf_fabric, bridges, n_bridges, BRIDGES),
    CF_JF_ARR(struct cf_fabric, pairs, n_pairs, PAIRS),
    F(struct cf_fabric, iommu, CF_JF_STR),
    F(struct cf_fabric, nvml_ok, CF_JF_BOOL),
    F(struct cf_fabric, nvml_note, CF_JF_STR),
    CF_JF_ARR(struct cf_fabric, nvml, n_nvml, NVML),
    CF_JF_ARR(struct cf_fabric, kfd_gpus, n_kfd_gpus, KFD_GPUS),
    CF_JF_ARR(struct cf_fabric, kfd_links, n_kfd_links, KFD_LINKS),
    F(struct cf_fabric, kernel, CF_JF_STR),
    F(struct cf_fabric, glibc, CF_JF_STR),
};
static const struct cf_jf_table fabric_table = CF_JF_TABLE_SUBS(struct cf_fabric, fabric_fields, fabric_subs);

void *cf_fabric_to_json(const struct cf_fabric *f)
{
    cJSON *o = cf_jf_to_json(&fabric_table, f);
    cJSON_AddItemToObject(o, "limits", cf_jf_to_json(&limits_table, &f->limits));
    return o;
}

int cf_fabric_from_json(const void *json, struct cf_fabric *f, cf_error *err)
{
    memset(f, 0, sizeof *f);
    if (cf_jf_from_json(&fabric_table, json, f, "fabric", err) < 0)
        return -1;
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(json, "limits");
    return l && !cJSON_IsNull(l) ? cf_jf_from_json(&limits_table, l, &f->limits, "fabric.limits", err) : 0;
}

void cf_fabric_release(struct cf_fabric *f)
{
    if (!f)
        return;
    cf_jf_release(&fabric_table, f);
    cf_jf_release(&limits_table, &f->limits);
}
