/* The bridge's installed layout: site-packages/<a/b/c>/<name><EXT_SUFFIX>,
 * its RPATH entries ($ORIGIN-relative only, each landing inside the package
 * tree or elsewhere in site-packages), the torch imported beside it, and the
 * sonames both the vendor directory and that torch provide, with the copy the
 * loader uses at import: `import torch` maps torch's first (emulated with the
 * loader emulation, cclforge/ldso.h), and a later DT_NEEDED of the same soname
 * reuses it. The stage built here for a check is a directory of links that
 * mirrors the installed tree, so $ORIGIN expands as it will there. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge/bridge_internal.h"
#include "cclforge/fs.h"
#include "cclforge/ldso.h"
#include "pkg/elf_facts.h"

/* The number of package components ("a.b.c" -> 3): how many ".." reach site-packages. */
static size_t bridge_package_depth(const char *package)
{
    size_t n = 1;
    for (const char *c = package; *c; c++)
        n += *c == '.';
    return n;
}

/* "$ORIGIN/../../lib_dcu" from site-packages/a/b/c -> "a/lib_dcu"; NULL (with
 * *why) when it is not $ORIGIN-relative or climbs out of site-packages. */
static char *site_relative(const char *package_dir, const char *entry, const char **why)
{
    const char *rest = NULL;
    if (cf_starts_with(entry, "${ORIGIN}"))
        rest = entry + strlen("${ORIGIN}");
    else if (cf_starts_with(entry, "$ORIGIN"))
        rest = entry + strlen("$ORIGIN");
    if (!rest || (*rest && *rest != '/')) {
        *why = "only $ORIGIN-relative entries are relocatable; an absolute or plain path names the build machine";
        return NULL;
    }
    if (strchr(rest, '$') || strchr(rest, ':')) {
        *why = "one $ORIGIN-relative directory per --rpath, without other tokens";
        return NULL;
    }
    char *abs = cf_asprintf("/%s%s", package_dir, rest);
    int escaped = 0;
    char *norm = cf_path_normalize(abs, &escaped);
    free(abs);
    if (escaped || !strcmp(norm, "/")) {
        free(norm);
        *why = "it climbs out of site-packages, where nothing of the installed wheel lives";
        return NULL;
    }
    char *rel = cf_strdup(norm + 1);
    free(norm);
    return rel;
}

static char *origin_entry(size_t depth, const char *site_rel)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_adds(&sb, "$ORIGIN/");
    for (size_t i = 0; i < depth; i++)
        cf_sb_adds(&sb, "../");
    cf_sb_adds(&sb, site_rel);
    return cf_sb_detach(&sb);
}

static int rpath_reaches(const struct cf_bridge_plan *p, const char *site_rel)
{
    for (size_t i = 0; i < p->n_rpath; i++) {
        const char *why;
        char *rel = site_relative(p->package_dir, p->rpath[i].value, &why);
        int same = rel && !strcmp(rel, site_rel);
        free(rel);
        if (same)
            return 1;
    }
    return 0;
}

static char *top_component(const char *package_dir)
{
    return cf_strndup(package_dir, strcspn(package_dir, "/"));
}

/* What an RPATH entry reaches, in words. */
static char *describe(const struct cf_bridge_plan *p, const char *rel, const char *what)
{
    char *top = top_component(p->package_dir);
    size_t tl = strlen(top);
    int own = !strncmp(rel, top, tl) && (rel[tl] == '/' || !rel[tl]);
    free(top);
    return cf_asprintf("%s: site-packages/%s (%s)", what, rel, own ? "inside the package tree" : "beside it in site-packages");
}

/* The first directory under --into that an RPATH entry of the package tree
 * reaches: the vendor libraries the source tree ships (pkg/lib_vendor). */
static char *into_vendor_dir(const struct cf_bridge_plan *p)
{
    for (size_t i = 0; p->into && i < p->n_rpath; i++) {
        const char *why;
        char *rel = site_relative(p->package_dir, p->rpath[i].value, &why);
        char *dir = rel ? cf_path_join(p->into, rel) : NULL;
        free(rel);
        if (dir && cf_is_dir(dir) && strstr(dir, "/torch/lib") == NULL)
            return dir;
        free(dir);
    }
    return NULL;
}

void cf_bridge_plan_user_rpath(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    size_t depth = bridge_package_depth(p->package);
    for (size_t i = 0; i < o->n_rpath; i++) {
        const char *why = NULL;
        char *rel = site_relative(p->package_dir, o->rpath[i], &why);
        if (!rel) {
            cf_bridge_problem(p, "--rpath '%s': %s. Write it relative to the extension, e.g. '$ORIGIN/%slib_vendor' "
                                 "for site-packages/<top package>/lib_vendor",
                              o->rpath[i], why, depth > 1 ? "../" : "");
            continue;
        }
        char *from = describe(p, rel, "--rpath");
        cf_bridge_item_push(&p->rpath, &p->n_rpath, o->rpath[i], from);
        free(from);
        free(rel);
    }
    /* --into with no --vendor-libs: the package's own vendor directory */
    if (!p->vendor_libs.value && !o->vendor_libs && !o->libtorch) {
        char *v = into_vendor_dir(p);
        if (v)
            cf_bridge_item_set(&p->vendor_libs, v, "--into: the package directory its --rpath reaches");
        free(v);
    }
}

static void plan_rpath(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, const struct cf_bridge_comm_source *cs)
{
    size_t depth = bridge_package_depth(p->package);
    if (o->n_bundle_libs)
        cf_bridge_item_push(&p->rpath, &p->n_rpath, "$ORIGIN/lib",
                            "the package's bundled vendor libraries (--bundle, in <package>/lib)");
    if (!rpath_reaches(p, "torch/lib")) {
        char *e = origin_entry(depth, "torch/lib");
        cf_bridge_item_push(&p->rpath, &p->n_rpath, e, "torch's libraries: site-packages/torch/lib (the torch imported)");
        free(e);
    }
    if (cs->site_rel && !rpath_reaches(p, cs->site_rel)) {
        char *e = origin_entry(depth, cs->site_rel);
        char *from = cf_asprintf("the NCCL wheel beside torch: site-packages/%s", cs->site_rel);
        cf_bridge_item_push(&p->rpath, &p->n_rpath, e, from);
        free(from);
        free(e);
    }
    for (size_t i = 0; i < o->n_bundle_libs; i++) {
        const char *b = o->bundle_libs[i];
        if (cf_elf_is_gpu_driver_lib(cf_basename(b))) {
            cf_bridge_problem(p, "--bundle %s: the GPU driver library comes with the driver on each host and is "
                                 "never bundled",
                              b);
            continue;
        }
        if (!cf_is_file(b)) {
            cf_bridge_problem(p, "--bundle %s: no such file", b);
            continue;
        }
        char *abs = cf_realpath(b);
        cf_strvec_push(&p->bundle_libs, abs);
        free(abs);
    }
}

/* The objects `import torch` maps (its _C extension's closure), from the
 * Python executable as the program. */
static void torch_import_closure(const struct cf_bridge_plan *p, struct cf_ldso_result *r, int *ok)
{
    *ok = 0;
    if (!p->python_exe || !p->torch_import.value)
        return;
    char *c_ext = NULL;
    DIR *d = opendir(p->torch_import.value);
    struct dirent *de;
    while (d && (de = readdir(d)) && !c_ext)
        if (cf_starts_with(de->d_name, "_C.") && cf_ends_with(de->d_name, ".so"))
            c_ext = cf_path_join(p->torch_import.value, de->d_name);
    if (d)
        closedir(d);
    if (!c_ext)
        return;
    const char *pre[] = { c_ext, NULL };
    struct cf_ldso_opts lo = { 0 };
    lo.dlopen = pre;
    cf_error err = CF_ERROR_INIT;
    *ok = cf_ldso_resolve(p->python_exe, &lo, r, &err) == 0;
    cf_error_clear(&err);
    free(c_ext);
}

static const struct cf_ldso_object *loaded_by_soname(const struct cf_ldso_result *r, const char *soname)
{
    for (size_t i = 0; i < r->n_objects; i++)
        if ((r->objects[i].soname && !strcmp(r->objects[i].soname, soname)) ||
            !strcmp(cf_basename(r->objects[i].path), soname))
            return &r->objects[i];
    return NULL;
}

static void plan_duplicates(struct cf_bridge_plan *p)
{
    if (!p->vendor_libs.value || !p->torch_import.value)
        return;
    char *tlib = cf_path_join(p->torch_import.value, "lib");
    char *vreal = cf_realpath(p->vendor_libs.value), *treal = cf_realpath(tlib);
    if (vreal && treal && strcmp(vreal, treal) != 0) {
        struct strvec vs = STRVEC_INIT, vp = STRVEC_INIT, ts = STRVEC_INIT, tp = STRVEC_INIT;
        cf_bridge_sonames_in(vreal, &vs, &vp);
        cf_bridge_sonames_in(treal, &ts, &tp);
        struct cf_ldso_result imp;
        int have_imp;
        memset(&imp, 0, sizeof imp);
        torch_import_closure(p, &imp, &have_imp);
        for (size_t i = 0; i < vs.n; i++) {
            long t = -1;
            for (size_t k = 0; k < ts.n && t < 0; k++)
                if (!strcmp(vs.v[i], ts.v[k]))
                    t = (long)k;
            if (t < 0)
                continue;
            p->duplicates = cf_xrealloc(p->duplicates, (p->n_duplicates + 1) * sizeof *p->duplicates);
            struct cf_bridge_duplicate *d = &p->duplicates[p->n_duplicates++];
            memset(d, 0, sizeof *d);
            d->soname = cf_strdup(vs.v[i]);
            d->vendor_path = cf_strdup(vp.v[i]);
            d->torch_path = cf_strdup(tp.v[t]);
            const struct cf_ldso_object *o = have_imp ? loaded_by_soname(&imp, vs.v[i]) : NULL;
            if (o) {
                d->used = cf_strdup(o->path);
                d->why = cf_strdup("`import torch` maps it first (torch/_C's closure, loader emulation); the "
                                   "extension's DT_NEEDED of the same soname reuses it");
            } else {
                d->why = cf_strdup(have_imp ? "`import torch` does not map it: the extension's RPATH order decides "
                                              "(bridge build emulates it)"
                                            : "not emulated: no Python executable or torch/_C to start from");
            }
        }
        cf_ldso_result_release(&imp);
        cf_strvec_clear(&vs);
        cf_strvec_clear(&vp);
        cf_strvec_clear(&ts);
        cf_strvec_clear(&tp);
    }
    free(tlib);
    free(vreal);
    free(treal);
}

void cf_bridge_plan_layout(const struct cf_bridge_opts *o, struct cf_bridge_plan *p,
                           const struct cf_bridge_comm_source *cs)
{
    plan_rpath(o, p, cs);
    plan_duplicates(p);
}

static int link_to(const char *target, const char *link, cf_error *err)
{
    char *dir = cf_dirname(link);
    int rc = cf_mkdir_p(dir, 0755, err);
    free(dir);
    if (rc < 0)
        return -1;
    unlink(link);
    if (symlink(target, link) != 0)
        return cf_error_set(err, CF_ERR_IO, "cannot link %s -> %s", link, target);
    return 0;
}

enum link_depth { TOP_FILES, WHOLE_TREE };

/* dir's entries linked into to/: TOP_FILES, its files but the hidden ones;
 * WHOLE_TREE, every entry, directories made and walked, files (and links) linked. */
static int link_entries(const char *dir, const char *to, enum link_depth depth, cf_error *err)
{
    if (depth == WHOLE_TREE && cf_mkdir_p(to, 0755, err) < 0)
        return -1;
    DIR *d = opendir(dir);
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && d && (de = readdir(d))) {
        if (depth == WHOLE_TREE ? !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") : de->d_name[0] == '.')
            continue;
        char *from = cf_path_join(dir, de->d_name), *link = cf_path_join(to, de->d_name);
        struct stat st;
        if (depth == TOP_FILES)
            rc = cf_is_file(from) ? link_to(from, link, err) : 0;
        else if (lstat(from, &st) == 0 && S_ISDIR(st.st_mode))
            rc = link_entries(from, link, WHOLE_TREE, err);
        else
            rc = link_to(from, link, err);
        free(from);
        free(link);
    }
    if (d)
        closedir(d);
    return rc;
}

/* The build's new files at their installed places in the stage. */
static int overlay_new_files(const struct cf_bridge_plan *p, const char *output, const char *ext, const char *stage,
                             cf_error *err)
{
    int rc = link_to(output, ext, err);
    char *libdir = cf_asprintf("%s/%s/lib", stage, p->package_dir);
    for (size_t i = 0; rc == 0 && i < p->bundle_libs.n; i++) {
        char *link = cf_path_join(libdir, cf_basename(p->bundle_libs.v[i]));
        rc = link_to(p->bundle_libs.v[i], link, err);
        free(link);
    }
    free(libdir);
    return rc;
}

char *cf_bridge_stage_layout(const struct cf_bridge_plan *p, const char *output, const char *stage, cf_error *err)
{
    cf_error rerr = CF_ERROR_INIT;
    cf_rm_rf(stage, &rerr);
    cf_error_clear(&rerr);
    if (cf_mkdir_p(stage, 0755, err) < 0)
        return NULL;
    char *top = top_component(p->package_dir);
    char *ext = cf_asprintf("%s/%s/%s", stage, p->package_dir, cf_basename(output));
    int rc = 0;
    if (p->into) {
        /* the tree the package will be built from holds everything of its own;
         * mirrored (links), with the new extension and bundled libraries laid
         * over it, so the tree itself is written only once the check passes */
        char *from = cf_path_join(p->into, top), *to = cf_path_join(stage, top);
        rc = cf_is_dir(from) ? link_entries(from, to, WHOLE_TREE, err) : 0;
        free(from);
        free(to);
        if (rc == 0)
            rc = overlay_new_files(p, output, ext, stage, err);
    } else {
        rc = overlay_new_files(p, output, ext, stage, err);
        /* the package's own RPATH directories hold what --vendor-libs holds
         * now: the libraries the package will ship there */
        for (size_t i = 0; rc == 0 && i < p->n_rpath && p->vendor_libs.value; i++) {
            const char *why;
            char *rel = site_relative(p->package_dir, p->rpath[i].value, &why);
            size_t tl = strlen(top);
            if (rel && !strncmp(rel, top, tl) && rel[tl] == '/' && strcmp(p->rpath[i].value, "$ORIGIN/lib") != 0) {
                char *dir = cf_path_join(stage, rel);
                rc = link_entries(p->vendor_libs.value, dir, TOP_FILES, err);
                free(dir);
            }
            free(rel);
        }
    }
    /* what lives beside the package in site-packages: the importing torch and its neighbours */
    if (rc == 0 && p->torch_import.value) {
        char *site = cf_dirname(p->torch_import.value);
        char *link = cf_path_join(stage, "torch");
        rc = link_to(p->torch_import.value, link, err);
        free(link);
        for (size_t i = 0; rc == 0 && i < p->n_rpath; i++) {
            const char *why;
            char *rel = site_relative(p->package_dir, p->rpath[i].value, &why);
            char *first = rel ? top_component(rel) : NULL;
            char *there = first ? cf_path_join(site, first) : NULL, *here = first ? cf_path_join(stage, first) : NULL;
            if (first && strcmp(first, top) != 0 && strcmp(first, "torch") != 0 && cf_is_dir(there) &&
                !cf_path_exists(here))
                rc = link_to(there, here, err);
            free(rel);
            free(first);
            free(there);
            free(here);
        }
        free(site);
    }
    free(top);
    if (rc < 0) {
        free(ext);
        return NULL;
    }
    return ext;
}
