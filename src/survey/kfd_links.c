/* AMD GPU and Hygon DCU links from the KFD topology: every io_link between two
 * GPU nodes, with its type (XGMI or PCIe) and weight, as rocm-smi --showtopo
 * reads them. */
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

static long long prop(const char *text, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, key, klen) && p[klen] == ' ')
            return atoll(p + klen + 1);
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return -1;
}

static int is_gpu_node(const char *nodes, long long node)
{
    char *text = cf_sysfs_line("%s/%lld/gpu_id", nodes, node);
    int gpu = text && atoll(text) != 0;
    free(text);
    return gpu;
}

void cf_fabric_probe_kfd_links(const char *root, struct cf_fabric *f)
{
    char *nodes = cf_asprintf("%s/sys/class/kfd/kfd/topology/nodes", root);
    struct strvec ids = STRVEC_INIT;
    cf_dir_entries(nodes, &ids);
    for (size_t i = 0; i < ids.n; i++) {
        long long from = atoll(ids.v[i]);
        if (!is_gpu_node(nodes, from))
            continue;
        char *links = cf_asprintf("%s/%s/io_links", nodes, ids.v[i]);
        struct strvec ls = STRVEC_INIT;
        cf_dir_entries(links, &ls);
        for (size_t k = 0; k < ls.n; k++) {
            char *pp = cf_asprintf("%s/%s/properties", links, ls.v[k]);
            struct strbuf sb = STRBUF_INIT;
            if (cf_is_file(pp))
                cf_read_file(pp, 1 << 16, &sb, NULL);
            char *text = cf_sb_detach(&sb);
            long long to = prop(text, "node_to"), type = prop(text, "type"), weight = prop(text, "weight");
            if (to > from && is_gpu_node(nodes, to)) {
                const char *name = "other";
                for (size_t t = 0; t < sizeof link_types / sizeof link_types[0]; t++)
                    if (link_types[t].type == type)
                        name = link_types[t].name;
                cf_strvec_pushf(&f->kfd_links, "node%lld-node%lld %s weight %lld", from, to, name, weight);
            }
            free(text);
            free(pp);
        }
        cf_strvec_clear(&ls);
        free(links);
    }
    cf_strvec_clear(&ids);
    free(nodes);
}
