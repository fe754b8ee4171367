/* NEEDED, resolved by the project's own loader emulation (cclforge/ldso.h,
 * glibc's search order) in the installed layout: RPATH inherited down the
 * chain of loaders (scipy's libgfortran finds libquadmath through _fblas's
 * RPATH), RUNPATH, $ORIGIN, already-loaded sonames, as glibc does it after
 * `pip install`. The host's own libraries are out of the picture: no
 * LD_LIBRARY_PATH, no ld.so.cache, no system directories (absolute entries
 * land in an empty sysroot). What is left unresolved is a system library of
 * the manylinux (or, for a musllinux tag, musllinux) policy, the GPU driver's,
 * or missing. A declared external
 * only adds a place to look: it is looked up under each --site directory. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/ldso.h"
#include "cclforge/vendor.h"
#include "pkg/manylinux_policy.h"
#include "pkg/wheel_verify_internal.h"

static const char *const no_dirs[] = { NULL };

/* The member a layout path is, or NULL (a library of a --site directory).
 * The loader names an object by search directory and name
 * (".../scipy/linalg/../../scipy.libs/libx.so"); the layout holds no links of
 * the wheel's, so the lexical form is the file. */
static struct vmember *member_at(struct verify_ctx *c, const char *path)
{
    if (!path)
        return NULL;
    char *norm = cf_path_normalize(path, NULL);
    size_t i;
    int hit = cf_name_index_find(&c->placed, norm, strlen(norm), &i);
    free(norm);
    return hit ? &c->m[i] : NULL;
}

static const char *shown_name(struct verify_ctx *c, const char *path)
{
    const struct vmember *m = member_at(c, path);
    return m ? m->shown : path;
}

/* "site-packages/a/lib, site-packages/b" of the directories the loader tried. */
static void tried_dirs(struct verify_ctx *c, const struct cf_ldso_node *n, struct strbuf *out)
{
    size_t plen = strlen(c->prefix), shown = 0;
    for (size_t k = 0; k < n->n_considered && shown < 4; k++) {
        const char *p = n->considered[k].path;
        if (strncmp(p, c->prefix, plen) || p[plen] != '/')
            continue;
        char *dir = cf_dirname(p + plen + 1);
        char *where = cf_wheel_layout_display(dir);
        if (!strstr(cf_sb_str(out), where)) {
            cf_sb_addf(out, "%s%s", shown++ ? ", " : "", where);
        }
        free(where);
        free(dir);
    }
}

static void note_system_lib(struct verify_ctx *c, const char *lib, const char *user)
{
    if (!cf_name_index_find(&c->syslib_ix, lib, strlen(lib), NULL)) {
        cf_strvec_push(&c->syslibs, lib);
        cf_strvec_push(&c->syslib_users, user);
        const char *key = c->syslibs.v[c->syslibs.n - 1];
        cf_name_index_add(&c->syslib_ix, key, strlen(key), c->syslibs.n - 1, NULL);
    }
}

/* A library the GPU stack provides (cclforge/vendor.h's tables: the
 * communication library, the toolkit's runtime, torch's own libraries): what
 * it is, and how a wheel gets it onto a host; NULL for any other library. */
static const char *vendor_lib_fix(const char *lib, struct strbuf *what)
{
    const enum cf_commlib comms[] = { CF_COMMLIB_NCCL, CF_COMMLIB_RCCL };
    for (size_t k = 0; k < sizeof comms / sizeof comms[0]; k++) {
        const struct cf_comm_profile *p = cf_comm_profile(comms[k]);
        if (cf_starts_with(lib, p->stem)) {
            cf_sb_addf(what, "the %s library", p->display);
            return "depend on the wheel that ships it (a Requires-Dist such as nvidia-nccl-cu12, with a RUNPATH "
                   "$ORIGIN-relative into its directory, nvidia/nccl/lib), bundle it, or, where the host's toolkit "
                   "provides it, declare it the host's at build (--toolkit-lib, recorded in the wheel)";
        }
    }
    if (cf_starts_with(lib, "libtorch") || cf_starts_with(lib, "libc10")) {
        cf_sb_adds(what, "torch's library");
        return "a Requires-Dist on torch and a RUNPATH $ORIGIN-relative into torch/lib (then give --site where torch "
               "is installed, or --external torch/lib)";
    }
    size_t n;
    const struct cf_vendor_profile *v = cf_vendor_profiles(&n);
    for (size_t i = 0; i < n; i++)
        if (v[i].runtime_stem && cf_starts_with(lib, v[i].runtime_stem)) {
            cf_sb_addf(what, "the %s runtime", v[i].display);
            return "declare it the host's toolkit library at build (--toolkit-lib, recorded in the wheel), or "
                   "depend on the wheel that ships it (a Requires-Dist, with a RUNPATH into its directory)";
        }
    return NULL;
}

struct tally {
    struct cf_wheel_problems bad;
    struct cf_name_index reported; /* "user\nlib" once each */
    struct strvec keys;
    struct cf_name_index outside; /* objects loaded from declared externals, once each */
    struct strvec outside_paths;
    size_t roots;
};

static void resolve_root(struct verify_ctx *c, struct vmember *root, const struct cf_ldso_opts *lo, struct tally *t)
{
    struct cf_ldso_result res;
    cf_error err = CF_ERROR_INIT;
    t->roots++;
    if (cf_ldso_resolve(root->placed, lo, &res, &err) < 0) {
        cf_wheel_problem(&t->bad, "%s: %s", root->shown, cf_error_message(&err));
        cf_error_clear(&err);
        return;
    }
    size_t site_len = strlen(c->prefix);
    for (size_t i = 0; i < res.n_objects; i++) {
        struct vmember *m = member_at(c, res.objects[i].path);
        if (m && m != root)
            m->reached = 1;
        const char *p = res.objects[i].path;
        if (!m && i > 0 && !strncmp(p, c->prefix, site_len) && !cf_name_index_find(&t->outside, p, strlen(p), NULL)) {
            cf_strvec_push(&t->outside_paths, p);
            const char *key = t->outside_paths.v[t->outside_paths.n - 1];
            cf_name_index_add(&t->outside, key, strlen(key), 0, NULL);
        }
    }
    for (size_t k = 0; k < res.n_nodes; k++) {
        const struct cf_ldso_node *n = &res.nodes[k];
        if (n->reason != CF_LDSO_NOT_FOUND)
            continue;
        const char *lib = n->expanded ? n->expanded : n->needed;
        /* a library of a declared external needing what it needs is that package's business */
        if (n->parent > 0 && !member_at(c, res.objects[n->parent].path))
            continue;
        const char *user = n->parent >= 0 ? shown_name(c, res.objects[n->parent].path) : root->shown;
        if (!n->error && (c->musl ? cf_policy_musl_lib(lib) : cf_policy_lib_minor(lib) > 0)) {
            note_system_lib(c, lib, user);
            continue;
        }
        if (!n->error && cf_elf_is_gpu_driver_lib(lib))
            continue; /* the host's driver provides it */
        if (!n->error && cf_strvec_contains(&c->wf.toolkit_libs, lib))
            continue; /* the host's toolkit provides it: the host check's */
        char *key = cf_asprintf("%s\n%s", user, lib);
        if (!cf_name_index_find(&t->reported, key, strlen(key), NULL)) {
            cf_strvec_push_nodup(&t->keys, key);
            cf_name_index_add(&t->reported, key, strlen(key), 0, NULL);
            struct strbuf dirs = STRBUF_INIT;
            tried_dirs(c, n, &dirs);
            struct strbuf what = STRBUF_INIT;
            const char *fix = n->error ? NULL : vendor_lib_fix(lib, &what);
            if (n->error)
                cf_wheel_problem(&t->bad, "%s needs %s: the loader stops at %s", user, lib, n->error);
            else if (fix)
                cf_wheel_problem(&t->bad,
                                 "vendor-lib: %s needs %s (%s), which nothing the wheel says provides: not in the "
                                 "wheel, not on a declared external, not a toolkit library it names (the loader "
                                 "looked in: %s); a host without it cannot import the module; %s",
                                 user, lib, what.buf,
                                 dirs.len ? dirs.buf : "no RPATH or RUNPATH of its own or its loaders", fix);
            else
                cf_wheel_problem(&t->bad,
                                 "%s needs %s, which is missing: not a system library of the %s policy, not in "
                                 "the wheel where the loader looks (%s)",
                                 user, lib, c->musl ? "musllinux" : "manylinux",
                                 dirs.len ? dirs.buf : "no RPATH or RUNPATH of its own or its loaders");
            cf_sb_release(&dirs);
            cf_sb_release(&what);
        } else {
            free(key);
        }
    }
    cf_ldso_result_release(&res);
}

void cf_wheel_check_needed(struct verify_ctx *c)
{
    cf_wheel_toolkit_libs_from_facts(c);
    struct strvec linked = STRVEC_INIT;
    cf_wheel_layout_link_externals(c, &linked);
    struct strbuf hint = STRBUF_INIT;
    if (c->externals.n && linked.n < c->externals.n)
        cf_sb_addf(&hint, "%zu declared external(s) not found under any --site directory, so not looked in",
                   c->externals.n - linked.n);
    struct cf_ldso_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.root = c->sysroot;
    lo.ignore_ld_library_path = 1;
    lo.ignore_ldcache = 1;
    lo.system_dirs = no_dirs;
    lo.hwcaps = no_dirs;
    lo.no_legacy_hwcaps = 1;
    struct cf_ldso_facts facts; /* glibc and the CPU worked out once for all roots (the same sysroot) */
    memset(&facts, 0, sizeof facts);
    lo.facts_cache = &facts;
    struct tally t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        if (m->elf && cf_elf_is_gpu_driver_lib(cf_basename(m->z->name)))
            cf_wheel_problem(&t.bad, "%s is the GPU driver's library: it must come from the host's driver, not a wheel",
                             m->shown);
    }
    /* extension modules are what Python loads; then any library nothing loaded
     * yet, on its own (a library-only wheel's, loaded by another package) */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->n; i++) {
            struct vmember *m = &c->m[i];
            if (m->elf && m->is_extension == !pass && !m->reached)
                resolve_root(c, m, &lo, &t);
        }
    cf_wheel_problems_finish(&t.bad);
    if (t.bad.n && hint.len)
        cf_sb_addf(&t.bad.text, "%s%s", cf_ends_with(cf_sb_str(&t.bad.text), "; ") ? "" : "; ", hint.buf);
    if (t.bad.n)
        cf_wheel_add_check(c->res, "needed", 0, "%s", t.bad.text.buf);
    else if (!c->n_elf)
        cf_wheel_add_check(c->res, "needed", -1, "no native code");
    else {
        struct strbuf ext = STRBUF_INIT;
        for (size_t i = 0; i < linked.n; i++)
            cf_sb_addf(&ext, "%s%s", i ? ", " : "; declared externals looked in: ", linked.v[i]);
        cf_wheel_add_check(c->res, "needed", 1,
                           "every NEEDED of %zu ELF file(s) resolves in the installed layout (loader emulation from %zu "
                           "root(s), RPATH inheritance included) or is one of %zu system libraries; %zu object(s) "
                           "from outside the wheel%s",
                           c->n_elf, t.roots, c->syslibs.n, t.outside_paths.n, cf_sb_str(&ext));
        cf_sb_release(&ext);
    }
    cf_sb_release(&t.bad.text);
    cf_name_index_release(&t.reported);
    cf_strvec_clear(&t.keys);
    cf_name_index_release(&t.outside);
    cf_strvec_clear(&t.outside_paths);
    cf_strvec_clear(&linked);
    cf_sb_release(&hint);
}
