/* Libraries the host's toolkit provides (DTK's librccl.so.1 in <DTK>/lib, the
 * HIP runtime): declared by --toolkit-lib, and by default the vendor's comm
 * library and device runtime when the plugin's vendor directory does not ship
 * them. Nothing absolute is baked in for them: the bridge finds them as any
 * program on the host does (the loader's LD_LIBRARY_PATH, ld.so.cache, the
 * toolkit's environment), so they are recorded, with the toolkit's version
 * seen here, for `wheel verify` and `doctor` to check on every host. */
#include <stdlib.h>
#include <string.h>

#include "bridge/bridge_internal.h"
#include "cclforge/fs.h"
#include "cclforge/survey.h"
#include "pkg/elf_facts.h"

static int declared(const struct cf_bridge_plan *p, const char *soname)
{
    for (size_t i = 0; i < p->n_toolkit_libs; i++)
        if (!strcmp(p->toolkit_libs[i].value, soname))
            return 1;
    return 0;
}

/* The toolkit's library directory holding soname, NULL when none. */
static char *find_in_toolkit(const struct cf_bridge_plan *p, const char *soname)
{
    if (!p->toolkit_root.value)
        return NULL;
    for (const char *const *d = cf_vendor_get(p->vendor)->lib_dirs; d && *d; d++) {
        char *f = cf_asprintf("%s/%s/%s", p->toolkit_root.value, *d, soname);
        if (cf_path_exists(f))
            return f;
        free(f);
    }
    return NULL;
}

static int in_dir(const char *dir, const char *soname)
{
    if (!dir)
        return 0;
    char *f = cf_path_join(dir, soname);
    int yes = cf_path_exists(f);
    free(f);
    return yes;
}

static void declare(struct cf_bridge_plan *p, const char *soname, const char *why)
{
    if (declared(p, soname))
        return;
    char *at = find_in_toolkit(p, soname);
    char *from = at ? cf_asprintf("%s; here: %s (%s)", why, at, p->toolkit_root.from)
                    : cf_asprintf("%s; not in this machine's toolkit (%s)", why,
                                  p->toolkit_root.value ? p->toolkit_root.value : "no toolkit root");
    cf_bridge_item_push(&p->toolkit_libs, &p->n_toolkit_libs, soname, from);
    free(from);
    free(at);
}

/* The device runtime the vendor's GPU libraries need (libamdhip64.so.6). */
static void runtime_needed(const struct cf_bridge_plan *p, struct strvec *out)
{
    const char *stem = cf_vendor_get(p->vendor)->runtime_stem;
    for (int role = CF_BRIDGE_LINK_C10_GPU; stem && role <= CF_BRIDGE_LINK_COMM; role++) {
        const struct cf_bridge_lib *l = cf_bridge_lib_role(p, role);
        struct elf_facts f;
        cf_error err = CF_ERROR_INIT;
        if (!l || !l->path || cf_elf_facts_read_file(l->path, &f, &err) < 0) {
            cf_error_clear(&err);
            continue;
        }
        for (size_t i = 0; f.is_elf && i < f.needed.n; i++)
            if (cf_starts_with(f.needed.v[i], stem) && !cf_strvec_contains(out, f.needed.v[i]))
                cf_strvec_push(out, f.needed.v[i]);
        cf_elf_facts_release(&f);
    }
}

void cf_bridge_plan_toolkit_libs(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, const struct cf_survey *sv)
{
    for (size_t i = 0; i < o->n_toolkit_libs; i++) {
        const char *s = o->toolkit_libs[i];
        if (!*s || strchr(s, '/') || !strstr(s, ".so"))
            cf_bridge_problem(p, "--toolkit-lib '%s': name a library by its soname (librccl.so.1), not a path", s);
        else
            declare(p, s, "--toolkit-lib");
    }
    /* the defaults: only where the plugin's vendor directory is its own (a
     * pip torch's torch/lib brings its NCCL and runtime along) */
    char *tlib = p->torch_import.value ? cf_path_join(p->torch_import.value, "lib") : NULL;
    char *vreal = p->vendor_libs.value ? cf_realpath(p->vendor_libs.value) : NULL;
    char *treal = tlib ? cf_realpath(tlib) : NULL;
    int own_vendor_dir = vreal && (!treal || strcmp(vreal, treal) != 0);
    if (own_vendor_dir) {
        const struct cf_bridge_lib *comm = cf_bridge_lib_role(p, CF_BRIDGE_LINK_COMM);
        const char *soname = cf_vendor_get(p->vendor)->comm->soname;
        if (comm && comm->path && !in_dir(vreal, soname))
            declare(p, soname, "default: the vendor's comm library, not in the vendor directory");
        struct strvec rt = STRVEC_INIT;
        runtime_needed(p, &rt);
        for (size_t i = 0; i < rt.n; i++)
            if (!in_dir(vreal, rt.v[i]))
                declare(p, rt.v[i], "default: the vendor's device runtime, not in the vendor directory");
        cf_strvec_clear(&rt);
    }
    free(tlib);
    free(vreal);
    free(treal);
    /* the toolkit's version as doctor's survey reads it */
    char *root = p->toolkit_root.value ? cf_realpath(p->toolkit_root.value) : NULL;
    for (size_t i = 0; root && sv && i < sv->n_toolkits && !p->toolkit_version; i++)
        if (sv->toolkits[i].root && !strcmp(sv->toolkits[i].root, root) && sv->toolkits[i].version)
            p->toolkit_version = cf_strdup(sv->toolkits[i].version);
    free(root);
}

int cf_bridge_is_toolkit_lib(const struct cf_bridge_plan *p, const char *soname)
{
    return soname && declared(p, soname);
}

char *cf_bridge_toolkit_search_path(const struct cf_bridge_plan *p)
{
    struct strvec dirs = STRVEC_INIT;
    for (size_t i = 0; i < p->n_toolkit_libs; i++) {
        char *at = find_in_toolkit(p, p->toolkit_libs[i].value);
        char *dir = at ? cf_dirname(at) : NULL;
        if (dir && !cf_strvec_contains(&dirs, dir))
            cf_strvec_push(&dirs, dir);
        free(dir);
        free(at);
    }
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < dirs.n; i++)
        cf_sb_addf(&sb, "%s%s", i ? ":" : "", dirs.v[i]);
    cf_strvec_clear(&dirs);
    return sb.len ? cf_sb_detach(&sb) : (cf_sb_release(&sb), NULL);
}
