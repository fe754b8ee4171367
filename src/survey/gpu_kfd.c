/* AMD GPUs and Hygon DCUs: the KFD topology in sysfs, which both drivers expose
 * (/sys/class/kfd/kfd/topology/nodes/N/properties). No ROCm library is needed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "survey/survey_internal.h"

/* PCI vendor ids in the node properties. */
static const struct {
    unsigned vendor_id;
    const char *vendor;
} kfd_vendors[] = {
    { 0x1002, "amd" },
    { 0x1d94, "hygon" },
};

static const char *vendor_name(unsigned id)
{
    for (size_t i = 0; i < sizeof kfd_vendors / sizeof kfd_vendors[0]; i++)
        if (kfd_vendors[i].vendor_id == id)
            return kfd_vendors[i].vendor;
    return "amd"; /* KFD is AMD's interface; an unknown id is still a KFD GPU */
}

/* "key value" lines -> value of key, or dflt. */
static unsigned long long prop(const char *text, const char *key, unsigned long long dflt)
{
    size_t klen = strlen(key);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, key, klen) && p[klen] == ' ')
            return strtoull(p + klen + 1, NULL, 10);
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return dflt;
}

static int node_cmp(const void *a, const void *b)
{
    long x = atol(*(const char *const *)a), y = atol(*(const char *const *)b);
    return x < y ? -1 : x > y;
}

static uint64_t node_memory(const char *node_dir)
{
    char *banks = cf_path_join(node_dir, "mem_banks");
    DIR *d = opendir(banks);
    uint64_t total = 0;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.')
                continue;
            char *pp = cf_asprintf("%s/%s/properties", banks, de->d_name);
            struct strbuf sb = STRBUF_INIT;
            if (cf_read_file(pp, 1 << 16, &sb, NULL) == 0) {
                /* heap_type 1/2: frame buffer (public/private); 0 is system memory */
                unsigned long long heap = prop(sb.buf, "heap_type", 0);
                if (heap == 1 || heap == 2)
                    total += prop(sb.buf, "size_in_bytes", 0);
            }
            cf_sb_release(&sb);
            free(pp);
        }
        closedir(d);
    }
    free(banks);
    return total;
}

void cf_probe_gpus_kfd(const struct cf_survey_opts *opts, struct cf_survey *s)
{
    const char *prefix = opts->sysfs_root ? opts->sysfs_root : "";
    char *kfd = cf_asprintf("%s/sys/class/kfd/kfd/topology/nodes", prefix);
    struct cf_gpu_probe *probe = cf_survey_add_probe(s, "amd", "kfd-sysfs");
    DIR *d = opendir(kfd);
    if (!d) {
        probe->note = cf_asprintf("no KFD (%s absent): no AMD GPU or Hygon DCU driver loaded", kfd);
        free(kfd);
        return;
    }
    struct strvec nodes = STRVEC_INIT;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
            cf_strvec_push(&nodes, de->d_name);
    closedir(d);
    if (nodes.n)
        qsort(nodes.v, nodes.n, sizeof *nodes.v, node_cmp);
    size_t before = s->n_gpus;
    int ordinal = 0, no_target = 0;
    for (size_t i = 0; i < nodes.n; i++) {
        char *dir = cf_path_join(kfd, nodes.v[i]);
        char *pp = cf_path_join(dir, "properties");
        struct strbuf sb = STRBUF_INIT;
        if (cf_read_file(pp, 1 << 16, &sb, NULL) == 0 && prop(sb.buf, "simd_count", 0) > 0) {
            /* A node with SIMDs is a GPU; CPU nodes have none. */
            unsigned gfx = (unsigned)prop(sb.buf, "gfx_target_version", 0);
            struct cf_gpu *g = cf_survey_add_gpu(s);
            g->index = ordinal++;
            g->vendor = cf_strdup(vendor_name((unsigned)prop(sb.buf, "vendor_id", 0x1002)));
            char arch[32];
            cf_gfx_target_name(gfx, arch, sizeof arch);
            if (!gfx)
                no_target++;
            g->arch = cf_strdup(gfx ? arch : "gfx?");
            char *namefile = cf_path_join(dir, "name");
            struct strbuf nm = STRBUF_INIT;
            if (cf_read_file(namefile, 4096, &nm, NULL) == 0) {
                cf_sb_rtrim(&nm);
                if (nm.len)
                    g->name = cf_sb_detach(&nm);
            }
            cf_sb_release(&nm);
            free(namefile);
            if (!g->name)
                g->name = cf_strdup(g->arch);
            g->memory_bytes = node_memory(dir);
            unsigned long long uid = prop(sb.buf, "unique_id", 0);
            if (uid)
                g->uuid = cf_asprintf("GPU-%016llx", uid);
        }
        cf_sb_release(&sb);
        free(pp);
        free(dir);
    }
    cf_strvec_clear(&nodes);
    probe->ok = 1;
    probe->count = ordinal;
    if (no_target)
        probe->note = cf_strdup("some KFD nodes lack gfx_target_version (kernel too old): arch unknown");
    else if (!ordinal)
        probe->note = cf_strdup("KFD present, no GPU nodes");

    /* HIP honours HIP_VISIBLE_DEVICES, then ROCR_VISIBLE_DEVICES (profile order). */
    const struct cf_vendor_profile *p = cf_vendor_profile("rocm");
    const char *visible = NULL;
    for (const char *const *e = p->visible_env; *e && !visible; e++)
        visible = cf_env_get_raw(opts, *e);
    for (size_t k = 0; k < sizeof kfd_vendors / sizeof kfd_vendors[0]; k++)
        cf_apply_visible_devices(s->gpus + before, s->n_gpus - before, kfd_vendors[k].vendor, visible);

    char *drv = cf_asprintf("%s/sys/module/amdgpu/version", prefix);
    struct strbuf sb = STRBUF_INIT;
    if (cf_read_file(drv, 4096, &sb, NULL) == 0) {
        cf_sb_rtrim(&sb);
        if (sb.len)
            s->driver.amd_version = cf_sb_detach(&sb);
    }
    cf_sb_release(&sb);
    free(drv);
    free(kfd);
}
