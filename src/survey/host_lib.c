/* Where this host's loader finds a library that a toolkit provides (a
 * bridge's --toolkit-lib, e.g. DTK's librccl.so.1): the loader's own order
 * (LD_LIBRARY_PATH, ld.so.cache, the default directories; the loader
 * emulation, nothing loaded), and when that fails, whether the toolkit the
 * environment names (ROCM_PATH, DTK_HOME, CUDA_HOME: the vendor table's root
 * variables) has it all the same, which is a different fix: its lib dir is
 * not on the loader's path. Shared by `wheel verify` and `doctor`. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/ldso.h"
#include "cclforge/survey.h"
#include "cclforge/vendor.h"

#if defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#else
#define HOST_MACHINE EM_X86_64
#endif

/* The first root variable of a vendor profile whose root has soname in a lib dir. */
static void in_toolkit(const struct cf_vendor_profile *vp, const char *soname, struct cf_host_lib *out)
{
    for (const char *const *e = vp->root_env; *e && !out->in_toolkit; e++) {
        const char *root = getenv(*e);
        for (const char *const *d = vp->lib_dirs; root && *root && d && *d && !out->in_toolkit; d++) {
            char *f = cf_asprintf("%s/%s/%s", root, *d, soname);
            if (cf_path_exists(f)) {
                out->in_toolkit = f;
                out->toolkit_var = cf_strdup(*e);
            } else {
                free(f);
            }
        }
    }
}

int cf_host_lib_locate(const char *soname, const char *vendor_word, struct cf_host_lib *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    struct cf_ldso_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.explain = 1;
    struct cf_ldso_node node;
    if (cf_ldso_locate(soname, HOST_MACHINE, 64, 0, &lo, &node, err) < 0)
        return -1;
    if (node.path) {
        out->path = cf_strdup(node.path);
        out->how = cf_ldso_describe_reason(&node);
    }
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < node.n_considered && i < 6; i++)
        cf_sb_addf(&sb, "%s%s", i ? ", " : "", node.considered[i].path);
    out->considered = cf_sb_detach(&sb);
    cf_ldso_node_release(&node);
    if (!out->path) {
        /* every vendor when the word is unknown: the toolkit is the host's */
        const struct cf_vendor_profile *vp = vendor_word ? cf_vendor_by_word(vendor_word) : NULL;
        size_t n;
        const struct cf_vendor_profile *all = cf_vendor_profiles(&n);
        for (size_t i = 0; i < n && !out->in_toolkit; i++)
            if (!vp || all[i].vendor == vp->vendor)
                in_toolkit(&all[i], soname, out);
    }
    return 0;
}

void cf_host_lib_release(struct cf_host_lib *h)
{
    free(h->path);
    free(h->how);
    free(h->considered);
    free(h->in_toolkit);
    free(h->toolkit_var);
    memset(h, 0, sizeof *h);
}
