/* GPUs and NICs on the PCI bus from sysfs: link speed and width (current vs
 * max), NUMA node, IOMMU group type, the bridges above them with their ACS
 * control, and the topology class of every GPU-NIC and GPU-GPU pair. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "survey/fabric_internal.h"

static const char *const gpu_vendors[] = { "0x10de", "0x1002", "0x1d94" }; /* NVIDIA, AMD, Hygon */

static const char *role_of(const char *cls, const char *vendor, int has_net)
{
    if (!cls || !vendor)
        return NULL;
    if (cf_starts_with(cls, "0x03") || cf_starts_with(cls, "0x12")) /* display / processing accelerator */
        for (size_t i = 0; i < sizeof gpu_vendors / sizeof gpu_vendors[0]; i++)
            if (!strcmp(vendor, gpu_vendors[i]))
                return "gpu";
    if (cf_starts_with(cls, "0x02") && has_net) /* a network controller that carries a netdev or an HCA */
        return "nic";
    return NULL;
}

static int int_or(const char *s, int dflt)
{
    return s && *s ? atoi(s) : dflt;
}

static void labels(const char *dev_dir, const char *bdf, const struct cf_fabric *f, struct strbuf *out)
{
    for (size_t i = 0; i < f->n_ib; i++)
        if (f->ib[i].pci && !strcmp(f->ib[i].pci, bdf))
            cf_sb_addf(out, "%s%s", out->len ? "," : "", f->ib[i].name);
    char *net = cf_path_join(dev_dir, "net");
    struct strvec names = STRVEC_INIT;
    cf_dir_entries(net, &names);
    for (size_t i = 0; i < names.n; i++)
        cf_sb_addf(out, "%s%s", out->len ? "," : "", names.v[i]);
    cf_strvec_clear(&names);
    free(net);
}

static void read_device(const char *root, const char *devices_real, const char *bdf, struct cf_fabric *f)
{
    char *dir = cf_asprintf("%s/sys/bus/pci/devices/%s", root, bdf);
    char *cls = cf_sysfs_line("%s/class", dir);
    char *vendor = cf_sysfs_line("%s/vendor", dir);
    struct strbuf label = STRBUF_INIT;
    labels(dir, bdf, f, &label);
    const char *role = role_of(cls, vendor, label.len > 0);
    char *real = role ? cf_realpath(dir) : NULL;
    size_t plen = devices_real ? strlen(devices_real) : 0;
    if (!real || !devices_real || strncmp(real, devices_real, plen) || real[plen] != '/') {
        free(real);
        free(cls);
        free(vendor);
        free(dir);
        cf_sb_release(&label);
        return; /* not a device of interest, or not below /sys/devices */
    }
    f->pci = cf_xrealloc(f->pci, (f->n_pci + 1) * sizeof *f->pci);
    struct cf_pci_dev *d = &f->pci[f->n_pci++];
    memset(d, 0, sizeof *d);
    d->bdf = cf_strdup(bdf);
    d->role = cf_strdup(role);
    d->class_id = cls;
    d->vendor_id = vendor;
    d->device_id = cf_sysfs_line("%s/device", dir);
    d->label = label.len ? cf_sb_detach(&label) : NULL;
    char *numa = cf_sysfs_line("%s/numa_node", dir);
    d->numa = int_or(numa, -1);
    free(numa);
    d->cur_speed = cf_sysfs_line("%s/current_link_speed", dir);
    d->max_speed = cf_sysfs_line("%s/max_link_speed", dir);
    char *w = cf_sysfs_line("%s/current_link_width", dir);
    d->cur_width = int_or(w, 0);
    free(w);
    w = cf_sysfs_line("%s/max_link_width", dir);
    d->max_width = int_or(w, 0);
    free(w);
    char *group = cf_asprintf("%s/iommu_group", dir);
    char *group_real = cf_realpath(group);
    d->iommu_type = group_real ? cf_sysfs_line("%s/type", group_real) : NULL;
    free(group_real);
    free(group);
    cf_strvec_split(&d->path, real + plen + 1, "/", 0);
    free(real);
    free(dir);
    cf_sb_release(&label);
}

/* The first 4 KiB of a bridge's configuration space; root reads all of it,
 * others the 64-byte header. */
static void read_bridge(const char *root, const char *bdf, struct cf_fabric *f)
{
    for (size_t i = 0; i < f->n_bridges; i++)
        if (!strcmp(f->bridges[i].bdf, bdf))
            return;
    f->bridges = cf_xrealloc(f->bridges, (f->n_bridges + 1) * sizeof *f->bridges);
    struct cf_pci_bridge *b = &f->bridges[f->n_bridges++];
    memset(b, 0, sizeof *b);
    b->bdf = cf_strdup(bdf);
    b->acs = 0;
    char *path = cf_asprintf("%s/sys/bus/pci/devices/%s/config", root, bdf);
    unsigned char cfg[4096];
    size_t got = 0;
    int fd = cf_is_file(path) ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
    while (fd >= 0 && got < sizeof cfg) {
        ssize_t n = pread(fd, cfg + got, sizeof cfg - got, (off_t)got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (fd >= 0)
        close(fd);
    free(path);
    unsigned ctrl = 0;
    b->acs = cf_pci_acs_ctrl(cfg, got, &ctrl);
    b->acs_ctrl = (int)ctrl;
}

static void add_pair(struct cf_fabric *f, const struct cf_pci_dev *a, const struct cf_pci_dev *b, const char *kind)
{
    f->pairs = cf_xrealloc(f->pairs, (f->n_pairs + 1) * sizeof *f->pairs);
    struct cf_topo_pair *p = &f->pairs[f->n_pairs++];
    p->a = cf_strdup(a->bdf);
    p->b = cf_strdup(b->bdf);
    p->kind = cf_strdup(kind);
    p->cls = cf_strdup(cf_pci_topo_class(&a->path, a->numa, &b->path, b->numa));
}

void cf_fabric_probe_pci(const char *root, struct cf_fabric *f)
{
    char *bus = cf_asprintf("%s/sys/bus/pci/devices", root);
    char *devices = cf_asprintf("%s/sys/devices", root);
    char *devices_real = cf_realpath(devices);
    struct strvec bdfs = STRVEC_INIT;
    cf_dir_entries(bus, &bdfs);
    for (size_t i = 0; i < bdfs.n; i++)
        read_device(root, devices_real, bdfs.v[i], f);
    cf_strvec_clear(&bdfs);
    for (size_t i = 0; i < f->n_pci; i++)
        for (size_t k = 1; k + 1 < f->pci[i].path.n; k++)
            if (cf_pci_is_bdf(f->pci[i].path.v[k]))
                read_bridge(root, f->pci[i].path.v[k], f);
    for (size_t i = 0; i < f->n_pci; i++)
        for (size_t j = 0; j < f->n_pci; j++) {
            const struct cf_pci_dev *a = &f->pci[i], *b = &f->pci[j];
            if (strcmp(a->role, "gpu"))
                continue;
            if (!strcmp(b->role, "nic"))
                add_pair(f, a, b, "gpu-nic");
            else if (j > i)
                add_pair(f, a, b, "gpu-gpu");
        }
    char *iommu = cf_asprintf("%s/sys/class/iommu", root);
    struct strvec units = STRVEC_INIT;
    cf_dir_entries(iommu, &units);
    f->iommu = cf_strdup(units.n ? "on" : "off");
    cf_strvec_clear(&units);
    free(iommu);
    free(devices_real);
    free(devices);
    free(bus);
}
