/* Pure rules over the PCI tree: the topology class of a device pair as
 * `nvidia-smi topo -m` names it, and ACS in a configuration space image. */
#include <string.h>

#include "cclforge/fabric.h"

int cf_pci_is_bdf(const char *s)
{
    /* "0000:17:00.0": domain:bus:device.function */
    return strlen(s) == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

/* NCCL's tree (graph/xml.cc): a device hangs below the bridge two levels up in
 * sysfs (a switch's upstream port, skipping the downstream port), or below the
 * CPU once the walk reaches the root complex. Fills the chain of switches above
 * the device, nearest first; returns its length. */
size_t cf_pci_switch_chain(const struct strvec *path, const char **chain, size_t cap)
{
    size_t n = 0;
    if (path->n < 2)
        return 0;
    size_t k = path->n - 1; /* the device */
    for (;;) {
        if (k < 2 || !cf_pci_is_bdf(path->v[k - 1]) || !cf_pci_is_bdf(path->v[k - 2]))
            return n; /* the root complex is within two levels: the CPU */
        k -= 2;
        if (n < cap)
            chain[n++] = path->v[k];
    }
}

const char *cf_pci_topo_class(const struct strvec *a, int numa_a, const struct strvec *b, int numa_b)
{
    if (!a->n || !b->n || strcmp(a->v[0], b->v[0])) {
        /* different root complexes (host bridges) */
        return numa_a >= 0 && numa_a == numa_b ? "NODE" : "SYS";
    }
    const char *ca[32], *cb[32];
    size_t na = cf_pci_switch_chain(a, ca, 32), nb = cf_pci_switch_chain(b, cb, 32);
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            if (!strcmp(ca[i], cb[j]))
                return i == 0 && j == 0 ? "PIX" : "PXB";
    return "PHB";
}

static unsigned le32(const unsigned char *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
}

int cf_pci_acs_ctrl(const unsigned char *cfg, size_t len, unsigned *ctrl)
{
    enum { EXT_START = 0x100, EXT_END = 0x1000, ACS_ID = 0x000d, MAX_CAPS = (EXT_END - EXT_START) / 4 };
    if (len < EXT_START + 4)
        return 0;
    size_t off = EXT_START;
    for (int hops = 0; hops < MAX_CAPS; hops++) {
        if (off < EXT_START || off + 8 > len || off % 4)
            return -1;
        unsigned h = le32(cfg + off);
        if (h == 0 || h == 0xffffffffu)
            return -1;
        if ((h & 0xffff) == ACS_ID) {
            *ctrl = (unsigned)cfg[off + 6] | (unsigned)cfg[off + 7] << 8;
            return 1;
        }
        size_t next = h >> 20;
        if (!next)
            return -1;
        off = next;
    }
    return -1;
}
