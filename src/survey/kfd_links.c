/* AMD GPU and Hygon DCU links from the KFD topology, as rocm-smi --showtopo reads
 * them: the GPU nodes (a node with SIMDs, the rule gpu_kfd.c applies) with their
 * XGMI hive, and every link between two GPU nodes in io_links (direct: XGMI within
 * a hive) and p2p_links (kernel 6.0+: peer-to-peer over PCIe through the CPU),
 * with its type, weight and maximum bandwidth; each GPU's PCI function from its
 * node's domain and location_id. Both directions are listed by KFD; one is kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "survey/fabric_internal.h"

/* KFD's IOLINK_TYPE values (include/uapi/linux/kfd_sysfs.h) */
static const struct {
    int type;
    const char *name;
} link_types[] = {
    { 2, "PCIe" }, { 11, "XGMI" },
};

static const char *const link_tables[] = { "io_links", "p2p_links" };

/* The value of a "key value" line of a KFD properties file; NULL when absent. */
static char *prop_text(const char *text, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, key, klen) && p[klen] == ' ')
            return cf_strndup(p + klen + 1, strcspn(p + klen + 1, " \n"));
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return NULL;
}

/* A small number from a properties file; -1 when absent or not one. */
static long long prop(const char *text, const char *key)
{
    char *v = prop_text(text, key), *end = NULL;
    long long n = v ? strtoll(v, &end, 10) : -1;
    if (v && (end == v || *end || n < 0 || n > (1ll << 40)))
        n = -1;
    free(v);
    return n;
}

static char *read_props(const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    if (!cf_is_file(path) || cf_read_file(path, 1 << 16, &sb, NULL) < 0) {
        cf_sb_release(&sb);
        return NULL;
    }
    return cf_sb_detach(&sb);
}

static const struct cf_kfd_gpu *gpu_node(const struct cf_fabric *f, long long node)
{
    for (size_t i = 0; i < f->n_kfd_gpus; i++)
        if (f->kfd_gpus[i].node == node)
            return &f->kfd_gpus[i];
    return NULL;
}

static void add_link(struct cf_fabric *f, long long a, long long b, long long type, long long weight,
                     long long bandwidth, const char *table)
{
    int from = (int)(a < b ? a : b), to = (int)(a < b ? b : a);
    char tname[32];
    snprintf(tname, sizeof tname, "type %lld", type);
    for (size_t t = 0; t < sizeof link_types / sizeof link_types[0]; t++)
        if (link_types[t].type == type)
            snprintf(tname, sizeof tname, "%s", link_types[t].name);
    for (size_t i = 0; i < f->n_kfd_links; i++)
        if (f->kfd_links[i].from == from && f->kfd_links[i].to == to && !strcmp(f->kfd_links[i].type, tname))
            return;
    f->kfd_links = cf_xrealloc(f->kfd_links, (f->n_kfd_links + 1) * sizeof *f->kfd_links);
    struct cf_kfd_link *l = &f->kfd_links[f->n_kfd_links++];
    l->from = from;
    l->to = to;
    l->type = cf_strdup(tname);
    l->weight = weight >= 0 && weight < 1 << 30 ? (int)weight : -1;
    l->max_bandwidth = bandwidth > 0 && bandwidth < 1 << 30 ? (int)bandwidth : 0;
    l->table = cf_strdup(table);
}

void cf_fabric_probe_kfd_links(const char *root, struct cf_fabric *f)
{
    char *nodes = cf_asprintf("%s/sys/class/kfd/kfd/topology/nodes", root);
    struct strvec ids = STRVEC_INIT;
    cf_dir_entries(nodes, &ids);
    for (size_t i = 0; i < ids.n; i++) {
        char *pp = cf_asprintf("%s/%s/properties", nodes, ids.v[i]);
        char *text = read_props(pp);
        if (text && prop(text, "simd_count") > 0) {
            f->kfd_gpus = cf_xrealloc(f->kfd_gpus, (f->n_kfd_gpus + 1) * sizeof *f->kfd_gpus);
            struct cf_kfd_gpu *g = &f->kfd_gpus[f->n_kfd_gpus++];
            g->node = atoi(ids.v[i]);
            g->name = cf_sysfs_line("%s/%s/name", nodes, ids.v[i]);
            /* a 64-bit id, printed with %llu: kept as text (JSON numbers are doubles) */
            g->hive_id = prop_text(text, "hive_id");
            if (g->hive_id && !strcmp(g->hive_id, "0")) {
                free(g->hive_id);
                g->hive_id = NULL;
            }
            /* location_id is PCI_DEVID(bus, devfn) (kfd_topology.c); a GPU at 00:00.0 is none */
            long long loc = prop(text, "location_id"), dom = prop(text, "domain");
            g->bdf = loc > 0 && loc <= 0xffff && dom >= 0 && dom <= 0xffff
                         ? cf_asprintf("%04llx:%02llx:%02llx.%llx", dom, loc >> 8, (loc >> 3) & 0x1f, loc & 7)
                         : NULL;
        }
        free(text);
        free(pp);
    }
    for (size_t i = 0; i < f->n_kfd_gpus; i++)
        for (size_t t = 0; t < sizeof link_tables / sizeof link_tables[0]; t++) {
            char *dir = cf_asprintf("%s/%d/%s", nodes, f->kfd_gpus[i].node, link_tables[t]);
            struct strvec ls = STRVEC_INIT;
            cf_dir_entries(dir, &ls);
            for (size_t k = 0; k < ls.n; k++) {
                char *lp = cf_asprintf("%s/%s/properties", dir, ls.v[k]);
                char *text = read_props(lp);
                long long from = prop(text, "node_from"), to = prop(text, "node_to");
                if (from == f->kfd_gpus[i].node && to != from && gpu_node(f, to))
                    add_link(f, from, to, prop(text, "type"), prop(text, "weight"), prop(text, "max_bandwidth"),
                             link_tables[t]);
                free(text);
                free(lp);
            }
            cf_strvec_clear(&ls);
            free(dir);
        }
    cf_strvec_clear(&ids);
    free(nodes);
}
