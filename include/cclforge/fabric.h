/* The host's fabric and runtime limits, read without privileges and without
 * loading any vendor library except NVML (dlopen'ed, as libcuda is): network
 * interfaces (getifaddrs), InfiniBand/RoCE HCAs and their ports and GID tables
 * (/sys/class/infiniband), the PCI tree between GPUs and NICs (link speed and
 * width, NUMA node, IOMMU group type, ACS on the bridges) and the topology class
 * of every GPU-NIC and GPU-GPU pair as `nvidia-smi topo -m` names it, AMD/DCU
 * links from KFD io_links, container limits (/dev/shm, RLIMIT_MEMLOCK,
 * /dev/infiniband, the local port range), and NVML's health counters.
 * The "fabric" section of a survey (docs/schemas/doctor.md). */
#ifndef CCLFORGE_FABRIC_H
#define CCLFORGE_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_net_if {
    char *name;
    int up, running, loopback; /* IFF_UP, IFF_RUNNING (what NCCL requires), IFF_LOOPBACK */
    struct strvec addrs;       /* "10.0.0.1/24", "fd00::1/64" (IPv4 and IPv6 only) */
    int speed_mbps;            /* line rate, /sys/class/net/NAME/speed (Mb/s); 0 unknown (down, virtual) */
    char *pci;                 /* the PCI function behind it ("0000:17:00.0"); NULL for a virtual one */
};

struct cf_ib_gid {
    int index;
    char *gid;   /* "fe80:0000:0000:0000:0202:c9ff:fe00:0001" as sysfs writes it */
    char *type;  /* "RoCE v2", "IB/RoCE v1"; NULL when unreadable */
    char *ndev;  /* the netdev of a RoCE GID; NULL */
};

struct cf_ib_port {
    int port;
    int state;          /* 4 = ACTIVE (the number in "4: ACTIVE") */
    char *state_name;   /* "ACTIVE", "DOWN", "INIT" */
    int phys_state;     /* 5 = LinkUp */
    char *phys_state_name;
    char *rate;         /* "200 Gb/sec (4X HDR)" */
    char *link_layer;   /* "InfiniBand", "Ethernet" */
    struct cf_ib_gid *gids; size_t n_gids; /* configured (non-zero) entries only */
    int gid_table_len;  /* entries in gids/ (configured or not) */
};

struct cf_ib_dev {
    char *name;         /* "mlx5_0" */
    char *pci;          /* "0000:17:00.0"; NULL */
    char *fw;           /* fw_ver */
    struct cf_ib_port *ports; size_t n_ports;
};

/* A GPU or NIC on the PCI bus, and the bridges above it. */
struct cf_pci_dev {
    char *bdf;          /* "0000:17:00.0" */
    char *role;         /* "gpu", "nic" */
    char *vendor_id, *device_id, *class_id; /* "0x10de", "0x2330", "0x030200" */
    char *label;        /* the IB or net device names it carries ("mlx5_0"); NULL */
    int numa;           /* -1 unknown */
    char *cur_speed, *max_speed; /* "16.0 GT/s PCIe", "32.0 GT/s PCIe"; NULL unknown */
    int cur_width, max_width;    /* lanes; 0 unknown */
    char *iommu_type;   /* the IOMMU group's type: "identity", "DMA", "DMA-FQ"; NULL none */
    struct strvec path; /* the sysfs path from the root complex: "pci0000:16", "0000:16:01.0", ..., the device */
};

/* A PCI bridge between two devices of interest, with its ACS control register. */
struct cf_pci_bridge {
    char *bdf;
    int acs;            /* 1 read, 0 config space beyond 64 bytes unreadable (needs root), -1 no ACS capability */
    int acs_ctrl;       /* the ACS control register (PCIe spec: bit 2 RR, bit 3 CR, bit 4 UF ...) */
};

/* Topology class of a pair, as nvidia-smi topo -m: PIX, PXB, PHB, NODE, SYS; XGMI for KFD links. */
struct cf_topo_pair {
    char *a, *b;        /* BDFs (or "gpuN" for KFD nodes) */
    char *kind;         /* "gpu-nic", "gpu-gpu" */
    char *cls;
};

/* What a GPU's active NVLinks reach, one entry per remote PCI function, as NCCL
 * groups them (nvmlDeviceGetNvLinkRemotePciInfo_v2 per link). */
struct cf_nvlink_peer {
    char *bdf;    /* the remote end as sysfs names it ("0000:07:00.0"); an NVSwitch may be
                   * one no host can see (NVML then names none NCCL can find in sysfs) */
    char *type;   /* nvmlDeviceGetNvLinkRemoteDeviceType: "gpu", "switch", "ibmnpu"; NULL unknown */
    int links;    /* active links to it */
};

/* NVML, per GPU. Counters are -1 when NVML says "not supported". */
struct cf_nvml_gpu {
    int index;
    char *name, *uuid, *bdf;
    int nvlinks_active, nvlinks_inactive; /* links NVML reports (enabled / disabled) */
    int nvlink_version;                   /* nvmlNvlinkVersion_t of its first active link (6: NVLink 4.0);
                                           * 0 unknown */
    struct cf_nvlink_peer *nvlink_peers; size_t n_nvlink_peers;
    int ecc_enabled;                      /* -1 unknown */
    long long ecc_uncorrected_volatile, ecc_uncorrected_aggregate, ecc_corrected_volatile;
    long long retired_sbe, retired_dbe;   /* retired pages (pre-Ampere) */
    int retired_pending;                  /* -1 unknown */
    long long remapped_corr, remapped_unc; /* row remapping (Ampere+) */
    int remap_pending, remap_failure;     /* -1 unknown */
    unsigned long long throttle;          /* clocks event reasons bit mask */
    struct strvec throttle_names;         /* "hw_slowdown", "sw_thermal", ... (bits that matter) */
    int mig_current, mig_pending;         /* -1 unknown / not supported */
    struct strvec errors;                 /* "nvmlDeviceGetTotalEccErrors: Unknown Error" */
};

/* An AMD GPU or Hygon DCU node of the KFD topology. */
struct cf_kfd_gpu {
    int node;           /* KFD node id (/sys/class/kfd/kfd/topology/nodes/N) */
    char *name;         /* the node's name file ("gfx942"); NULL */
    char *hive_id;      /* XGMI hive, the decimal 64-bit id KFD prints; NULL: in none */
    char *bdf;          /* its PCI function from the node's domain and location_id; NULL unknown */
};

/* A link between two GPU nodes, as KFD lists it: io_links holds the direct links
 * (XGMI between the GPUs of one hive; each GPU's PCIe link to its CPU node, not
 * kept here), p2p_links (kernel 6.0+, CONFIG_HSA_AMD_P2P) the peer-to-peer paths
 * between GPUs outside one hive, which go over PCIe through the CPU. */
struct cf_kfd_link {
    int from, to;       /* node ids, from < to */
    char *type;         /* "XGMI", "PCIe" (kfd_sysfs.h IOLINK types 11, 2), "type N" */
    int weight;         /* KFD's weight: lower is nearer */
    char *table;        /* "io_links" or "p2p_links" */
    int max_bandwidth;  /* MB/s one way, as KFD gives it (XGMI: the links between the two GPUs); 0 unknown */
};

struct cf_fabric_limits {
    uint64_t shm_bytes;     /* size of /dev/shm; 0 unknown */
    char *shm_problem;      /* why it is unknown */
    uint64_t memlock_soft, memlock_hard; /* RLIMIT_MEMLOCK; UINT64_MAX unlimited */
    int dev_infiniband;     /* 1 /dev/infiniband holds uverbs devices, 0 absent */
    int uverbs;             /* uverbs* entries there */
    int port_lo, port_hi;   /* /proc/sys/net/ipv4/ip_local_port_range; 0 unknown */
    int local_ranks;        /* ranks of this job on this host (launcher variables), 0 unknown */
    char *local_ranks_from; /* "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE", "LOCAL_WORLD_SIZE" */
    int master_port;        /* MASTER_PORT when set (checked against the port range), 0 */
};

struct cf_fabric {
    struct cf_net_if *ifs;         size_t n_ifs;
    struct cf_ib_dev *ib;          size_t n_ib;
    struct cf_pci_dev *pci;        size_t n_pci;
    struct cf_pci_bridge *bridges; size_t n_bridges;
    struct cf_topo_pair *pairs;    size_t n_pairs;
    char *iommu;                   /* "off", "on" (groups exist); NULL unknown */
    struct cf_fabric_limits limits;
    int nvml_ok;                   /* NVML loaded and initialised */
    char *nvml_note;               /* why not, or its driver version */
    struct cf_nvml_gpu *nvml;      size_t n_nvml;
    struct cf_kfd_gpu *kfd_gpus;   size_t n_kfd_gpus;
    struct cf_kfd_link *kfd_links; size_t n_kfd_links;
    char *kernel;                  /* uname -r */
    char *glibc;                   /* gnu_get_libc_version() of this process */
};

/* The nvidia-smi legend: the PCI path between two devices. path_a and path_b are
 * struct cf_pci_dev.path vectors; numa -1 unknown. Returns "PIX", "PXB", "PHB",
 * "NODE" or "SYS" (static). */
const char *cf_pci_topo_class(const struct strvec *path_a, int numa_a, const struct strvec *path_b, int numa_b);

/* The switches above a device as NCCL's tree has them (a switch's upstream port
 * two levels up in sysfs; the CPU once the root complex is within two levels),
 * nearest first, into chain[cap] (pointers into path); returns how many. */
size_t cf_pci_switch_chain(const struct strvec *path, const char **chain, size_t cap);

/* 1 for "0000:17:00.0" (domain:bus:device.function). */
int cf_pci_is_bdf(const char *s);

/* What an NVLink's far end is, as NCCL's topology decides it (src/graph/xml.cc):
 * NVML's type where it gives one; else a PCI function this host's sysfs does not
 * show is an NVSwitch ("not visible inside this VM. Assume NVSwitch"), one sysfs
 * shows as a GPU is a GPU; anything else (no address, an IBM NPU, a NIC) is other. */
enum cf_nvlink_end { CF_NVLINK_TO_OTHER, CF_NVLINK_TO_GPU, CF_NVLINK_TO_SWITCH };
enum cf_nvlink_end cf_nvlink_end_of(const struct cf_fabric *f, const struct cf_nvlink_peer *p);

/* ACS in a PCI configuration space image (as read from sysfs "config"): walks the
 * extended capability list from offset 0x100. Returns 1 with *ctrl when found, -1
 * when the list has no ACS capability, 0 when len stops before 0x100 (an
 * unprivileged read returns 64 bytes). Bounded: never reads past len, stops on loops. */
int cf_pci_acs_ctrl(const unsigned char *cfg, size_t len, unsigned *ctrl);

/* What the paths out of this host, and between its GPUs, are made of: interfaces,
 * IB/RoCE ports and the PCI tree (GPUs, NICs, their classes); with gpu_links also
 * NVML's NVLinks and KFD's XGMI links. No limits. What a smoke rank records of its
 * links (cclforge/path_capacity.h). Release with cf_fabric_release. */
void cf_fabric_probe_paths(struct cf_fabric *f, int gpu_links);

/* JSON of the "fabric" section (a cJSON object, typed void *). */
void *cf_fabric_to_json(const struct cf_fabric *f);
int cf_fabric_from_json(const void *json, struct cf_fabric *f, cf_error *err);
void cf_fabric_release(struct cf_fabric *f);

#ifdef __cplusplus
}
#endif
#endif
