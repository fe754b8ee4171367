/* InfiniBand and RoCE HCAs from sysfs (/sys/class/infiniband), as ibv_devinfo
 * would show them: each port's state, physical state, rate, link layer and GID
 * table with the GID types NCCL reads to pick a RoCE GID. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "survey/fabric_internal.h"

/* "4: ACTIVE" -> 4 and "ACTIVE" */
static void numbered(char *text, int *num, char **name)
{
    *num = text ? atoi(text) : 0;
    const char *colon = text ? strchr(text, ':') : NULL;
    *name = colon ? cf_strdup(colon + 1 + (colon[1] == ' ')) : NULL;
    free(text);
}

static int zero_gid(const char *g)
{
    for (; *g; g++)
        if (*g != '0' && *g != ':')
            return 0;
    return 1;
}

static void read_gids(const char *port_dir, struct cf_ib_port *p)
{
    char *gid_dir = cf_path_join(port_dir, "gids");
    struct strvec idx = STRVEC_INIT;
    cf_dir_entries(gid_dir, &idx);
    p->gid_table_len = (int)idx.n;
    for (size_t i = 0; i < idx.n; i++) {
        char *gid = cf_sysfs_line("%s/%s", gid_dir, idx.v[i]);
        if (!gid || zero_gid(gid)) {
            free(gid);
            continue;
        }
        p->gids = cf_xrealloc(p->gids, (p->n_gids + 1) * sizeof *p->gids);
        struct cf_ib_gid *g = &p->gids[p->n_gids++];
        memset(g, 0, sizeof *g);
        g->index = atoi(idx.v[i]);
        g->gid = gid;
        /* unreadable for unmapped entries in containers (EINVAL): NULL */
        g->type = cf_sysfs_line("%s/gid_attrs/types/%s", port_dir, idx.v[i]);
        g->ndev = cf_sysfs_line("%s/gid_attrs/ndevs/%s", port_dir, idx.v[i]);
    }
    /* the table is listed by name: order it by index */
    for (size_t i = 1; i < p->n_gids; i++)
        for (size_t j = i; j > 0 && p->gids[j].index < p->gids[j - 1].index; j--) {
            struct cf_ib_gid t = p->gids[j];
            p->gids[j] = p->gids[j - 1];
            p->gids[j - 1] = t;
        }
    cf_strvec_clear(&idx);
    free(gid_dir);
}

void cf_fabric_probe_ib(const char *root, struct cf_fabric *f)
{
    char *cls = cf_asprintf("%s/sys/class/infiniband", root);
    struct strvec devs = STRVEC_INIT;
    cf_dir_entries(cls, &devs);
    for (size_t d = 0; d < devs.n; d++) {
        f->ib = cf_xrealloc(f->ib, (f->n_ib + 1) * sizeof *f->ib);
        struct cf_ib_dev *dev = &f->ib[f->n_ib++];
        memset(dev, 0, sizeof *dev);
        dev->name = cf_strdup(devs.v[d]);
        char *dir = cf_path_join(cls, devs.v[d]);
        char *link = cf_path_join(dir, "device");
        char *real = cf_realpath(link);
        dev->pci = real ? cf_strdup(cf_basename(real)) : NULL;
        free(real);
        free(link);
        dev->fw = cf_sysfs_line("%s/fw_ver", dir);
        char *ports_dir = cf_path_join(dir, "ports");
        struct strvec ports = STRVEC_INIT;
        cf_dir_entries(ports_dir, &ports);
        for (size_t k = 0; k < ports.n; k++) {
            dev->ports = cf_xrealloc(dev->ports, (dev->n_ports + 1) * sizeof *dev->ports);
            struct cf_ib_port *p = &dev->ports[dev->n_ports++];
            memset(p, 0, sizeof *p);
            p->port = atoi(ports.v[k]);
            char *pd = cf_path_join(ports_dir, ports.v[k]);
            numbered(cf_sysfs_line("%s/state", pd), &p->state, &p->state_name);
            numbered(cf_sysfs_line("%s/phys_state", pd), &p->phys_state, &p->phys_state_name);
            p->rate = cf_sysfs_line("%s/rate", pd);
            p->link_layer = cf_sysfs_line("%s/link_layer", pd);
            read_gids(pd, p);
            free(pd);
        }
        cf_strvec_clear(&ports);
        free(ports_dir);
        free(dir);
    }
    cf_strvec_clear(&devs);
    free(cls);
}
