/* The built extension checked in the layout it will be installed into, never
 * loaded: its RPATH and PyInit_<name>; then the loader emulation (cclforge/
 * ldso.h) from the Python executable with torch/_C and the staged extension
 * preloaded (torch is imported first), which says where every NEEDED comes
 * from at import; the project's symbol check (cclforge/symcheck.h, what
 * `inspect --undefined` reports) over that closure, failing on any undefined
 * symbol of the extension and the libraries it brings; each vendor symbol
 * defined by the library expected to define it; the GLIBC ceiling. */
#include <stdlib.h>
#include <string.h>

#include "bridge/bridge_internal.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/ldso.h"
#include "cclforge/symcheck.h"
#include "pkg/elf_facts.h"

/* Which planned library must define a symbol, by its mangled prefix. */
static const struct {
    const char *prefix;
    int role;
    const char *what;
} expected_provider[] = {
    { "_ZN3c104cuda", CF_BRIDGE_LINK_C10_GPU, "c10::cuda::" },
    { "_ZN3c103hip", CF_BRIDGE_LINK_C10_GPU, "c10::hip::" },
    { "_ZN4c10d16ProcessGroupNCCL", CF_BRIDGE_LINK_TORCH_GPU, "c10d::ProcessGroupNCCL" },
    { "nccl", CF_BRIDGE_LINK_COMM, "the NCCL API" },
};

static int provider_role(const char *symbol)
{
    for (size_t i = 0; i < sizeof expected_provider / sizeof expected_provider[0]; i++)
        if (cf_starts_with(symbol, expected_provider[i].prefix))
            return (int)i;
    return -1;
}

static char *soname_of(const char *path)
{
    struct cf_elf *elf;
    cf_error err = CF_ERROR_INIT;
    char *s = NULL;
    if (path && cf_elf_open(path, &elf, &err) == 0) {
        const char *so = cf_elf_get_dynamic(elf)->soname;
        s = cf_strdup(so ? so : cf_basename(path));
        cf_elf_close(elf);
    }
    cf_error_clear(&err);
    return s;
}

/* A path as it will be installed: "site-packages/a/lib_dcu/libx.so" for the stage. */
static const char *shown(const char *path, const char *stage, struct strbuf *sb)
{
    cf_sb_reset(sb);
    size_t n = strlen(stage);
    char *norm = path[0] == '/' ? cf_path_normalize(path, NULL) : cf_strdup(path);
    if (!strncmp(norm, stage, n) && norm[n] == '/')
        cf_sb_addf(sb, "site-packages%s", norm + n);
    else
        cf_sb_adds(sb, norm);
    free(norm);
    return cf_sb_str(sb);
}

static int has(const struct strvec *v, const char *needle)
{
    for (size_t i = 0; i < v->n; i++)
        if (strstr(v->v[i], needle))
            return 1;
    return 0;
}

static int in_subtree(const struct cf_ldso_result *r, long obj, long root)
{
    for (long i = obj, guard = 0; i >= 0 && guard < (long)r->n_objects + 1; i = r->objects[i].loader, guard++)
        if (i == root)
            return 1;
    return 0;
}

static long node_object(const struct cf_ldso_result *r, const char *needed)
{
    for (size_t i = 0; i < r->n_nodes; i++)
        if (r->nodes[i].needed && !strcmp(r->nodes[i].needed, needed))
            return r->nodes[i].object;
    return -1;
}

static void check_needed(const struct cf_bridge_plan *p, const struct cf_ldso_result *r, long ext, long torch_c,
                         const char *stage, struct cf_bridge_build_result *res)
{
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    for (size_t i = 0; i < r->n_nodes; i++) {
        const struct cf_ldso_node *n = &r->nodes[i];
        if (n->parent != ext)
            continue;
        if (cf_bridge_is_toolkit_lib(p, n->needed)) {
            /* the host's toolkit provides it: found here the way the host's loader finds it */
            if (n->path)
                cf_strvec_pushf(&res->checks, "ok: NEEDED %s -> %s (the host's toolkit provides it: found here "
                                              "through the toolkit's lib dir; recorded for wheel verify and doctor)",
                                n->needed, n->path);
            else
                cf_strvec_pushf(&res->problems, "NEEDED %s is declared toolkit-provided but this machine's toolkit "
                                                "(%s) has no %s: set ROCM_PATH/DTK_HOME/CUDA_HOME or --toolkit to "
                                                "the toolkit the bridge is built for",
                                n->needed, p->toolkit_root.value ? p->toolkit_root.value : "none", n->needed);
            continue;
        }
        if (!n->path) {
            struct strbuf tried = STRBUF_INIT;
            for (size_t k = 0; k < n->n_considered && k < 8; k++)
                cf_sb_addf(&tried, "%s%s", k ? ", " : "", shown(n->considered[k].path, stage, &a));
            cf_strvec_pushf(&res->problems, "NEEDED %s is not in the installed layout (considered: %s). Ship it "
                                            "where an --rpath entry points, --bundle it, or declare it "
                                            "--toolkit-lib when the host's toolkit provides it",
                            n->needed, tried.len ? tried.buf : "no directory");
            cf_sb_release(&tried);
            continue;
        }
        int torch_loaded = n->reason == CF_LDSO_ALREADY_LOADED && torch_c >= 0 && n->object >= 0 &&
                           in_subtree(r, n->object, torch_c);
        int system = cf_elf_is_manylinux_system_lib(n->needed);
        int in_layout = n->reason == CF_LDSO_RPATH || n->reason == CF_LDSO_RUNPATH || torch_loaded;
        char *why = cf_ldso_describe_reason(n);
        if (in_layout || system || n->reason == CF_LDSO_ALREADY_LOADED)
            cf_strvec_pushf(&res->checks, "ok: NEEDED %s -> %s (%s)", n->needed, shown(n->path, stage, &a),
                            torch_loaded ? "already mapped by `import torch`" : shown(why, stage, &b));
        else
            cf_strvec_pushf(&res->problems, "NEEDED %s is not in the installed layout: it resolves only through %s on "
                                            "this machine (%s); ship it where an --rpath entry points",
                            n->needed, why, n->path);
        free(why);
    }
    (void)p;
    cf_sb_release(&a);
    cf_sb_release(&b);
}

static void check_duplicates(const struct cf_bridge_plan *p, const struct cf_ldso_result *r, const char *stage,
                             struct cf_bridge_build_result *res)
{
    struct strbuf a = STRBUF_INIT;
    res->duplicates = cf_xcalloc(p->n_duplicates ? p->n_duplicates : 1, sizeof *res->duplicates);
    for (size_t i = 0; i < p->n_duplicates; i++) {
        const struct cf_bridge_duplicate *d = &p->duplicates[i];
        struct cf_bridge_duplicate *o = &res->duplicates[res->n_duplicates++];
        o->soname = cf_strdup(d->soname);
        o->vendor_path = cf_strdup(d->vendor_path);
        o->torch_path = cf_strdup(d->torch_path);
        for (size_t k = 0; k < r->n_objects && !o->used; k++)
            if (r->objects[k].soname && !strcmp(r->objects[k].soname, d->soname)) {
                o->used = cf_strdup(shown(r->objects[k].path, stage, &a));
                o->why = cf_strdup(strstr(o->used, "site-packages/torch/") ? "the importing torch's copy: mapped by "
                                                                             "`import torch` first"
                                                                           : "the vendor copy, through the extension's RPATH");
            }
        if (!o->used)
            o->why = cf_strdup("not mapped at import");
        cf_strvec_pushf(&res->checks, "ok: %s is in both %s and %s; at import the loader uses %s (%s)", d->soname,
                        d->vendor_path, d->torch_path, o->used ? o->used : "neither", o->why);
    }
    cf_sb_release(&a);
}

/* The extension's symbol lookup scope, as glibc builds it for a dlopen with
 * RTLD_LOCAL: the program's own closure (the global scope: everything mapped
 * before the first dlopen), then the extension and its dependencies breadth
 * first, already-loaded ones included. Returns the count of indices in *out. */
static size_t lookup_scope(const struct cf_ldso_result *r, long ext, long first_dlopen, long **out)
{
    long *v = cf_xcalloc(r->n_objects ? r->n_objects : 1, sizeof *v);
    char *seen = cf_xcalloc(r->n_objects ? r->n_objects : 1, 1);
    size_t n = 0;
    for (long i = 0; i < first_dlopen && (size_t)i < r->n_objects; i++) {
        v[n++] = i;
        seen[i] = 1;
    }
    size_t head = n;
    if (!seen[ext]) {
        v[n++] = ext;
        seen[ext] = 1;
    }
    for (; head < n; head++)
        for (size_t k = 0; k < r->n_nodes; k++) {
            long o = r->nodes[k].object;
            if (r->nodes[k].parent == v[head] && o >= 0 && !seen[o]) {
                v[n++] = o;
                seen[o] = 1;
            }
        }
    free(seen);
    *out = v;
    return n;
}

/* The first object of the scope that defines `name`; NULL if none. */
static const char *definer(const struct cf_ldso_result *r, struct cf_elf **elves, const long *scope, size_t n_scope,
                           const char *name)
{
    for (size_t s = 0; s < n_scope; s++) {
        long i = scope[s];
        if (!elves[i])
            continue;
        const struct cf_elf_symbol *syms;
        size_t n;
        cf_error err = CF_ERROR_INIT;
        if (cf_elf_dynsyms(elves[i], &syms, &n, &err) == 0)
            for (size_t k = 0; k < n; k++)
                if (syms[k].defined && syms[k].bind != CF_BIND_LOCAL && !strcmp(syms[k].name, name))
                    return r->objects[i].path;
        cf_error_clear(&err);
    }
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void check_own_references(const struct cf_bridge_plan *p, const struct cf_ldso_result *r, struct cf_elf **elves,
                                 const long *scope, size_t n_scope, struct cf_elf *self, const char *stage,
                                 struct cf_bridge_build_result *res);

/* Where a symbol nothing defines was expected from. */
static char *expected_from(const struct cf_bridge_plan *p, const char *symbol)
{
    int row = provider_role(symbol);
    if (row >= 0) {
        const struct cf_bridge_lib *l = cf_bridge_lib_role(p, expected_provider[row].role);
        return cf_asprintf("%s belongs to lib%s (%s)", expected_provider[row].what, l ? l->name : "?",
                           l && l->path ? l->path : "not found");
    }
    for (size_t i = 0; i < p->n_libs; i++) {
        if (!p->libs[i].path)
            continue;
        cf_error err = CF_ERROR_INIT;
        int has = cf_elf_file_defines_symbol(p->libs[i].path, symbol, 1, &err);
        cf_error_clear(&err);
        if (has == 1)
            return cf_asprintf("at link time %s defined it, but the installed layout maps another copy",
                               p->libs[i].path);
    }
    return cf_strdup("no library of the plan defines it");
}

/* Every strong undefined symbol of `self` (the extension or a library its
 * dlopen mapped) defined somewhere in the extension's lookup scope: one pass
 * over each scope object's symbols against the sorted list of what self asks for. */
static void check_own_references(const struct cf_bridge_plan *p, const struct cf_ldso_result *r, struct cf_elf **elves,
                                 const long *scope, size_t n_scope, struct cf_elf *self, const char *stage,
                                 struct cf_bridge_build_result *res)
{
    const struct cf_elf_symbol *syms;
    size_t n;
    cf_error err = CF_ERROR_INIT;
    if (!self || cf_elf_dynsyms(self, &syms, &n, &err) != 0) {
        cf_error_clear(&err);
        return;
    }
    struct strvec want = STRVEC_INIT;
    for (size_t k = 0; k < n; k++)
        if (!syms[k].defined && syms[k].bind != CF_BIND_WEAK && syms[k].name[0])
            cf_strvec_push(&want, syms[k].name);
    if (!want.n) {
        cf_strvec_clear(&want);
        return;
    }
    qsort(want.v, want.n, sizeof *want.v, cmp_str);
    char *found = cf_xcalloc(want.n, 1);
    for (size_t s = 0; s < n_scope; s++) {
        struct cf_elf *e = elves[scope[s]];
        const struct cf_elf_symbol *ds;
        size_t dn;
        if (!e || e == self || cf_elf_dynsyms(e, &ds, &dn, &err) != 0) {
            cf_error_clear(&err);
            continue;
        }
        for (size_t k = 0; k < dn; k++) {
            if (!ds[k].defined || ds[k].bind == CF_BIND_LOCAL)
                continue;
            const char *key = ds[k].name;
            char **hit = bsearch(&key, want.v, want.n, sizeof *want.v, cmp_str);
            if (hit)
                found[hit - want.v] = 1;
        }
    }
    struct strbuf a = STRBUF_INIT;
    for (size_t i = 0; i < want.n; i++) {
        if (found[i] || has(&res->problems, want.v[i]))
            continue;
        char *exp = expected_from(p, want.v[i]);
        cf_strvec_pushf(&res->problems, "undefined symbol %s in %s at import: nothing in its lookup scope (the "
                                        "program, the extension and its dependencies) defines it; %s",
                        want.v[i], shown(cf_elf_path(self), stage, &a), exp);
        free(exp);
    }
    cf_sb_release(&a);
    free(found);
    cf_strvec_clear(&want);
}

static void check_symbols(const struct cf_bridge_plan *p, const struct cf_ldso_result *r, long ext, long first_dlopen,
                          const char *output, const char *stage, struct cf_bridge_build_result *res)
{
    struct strbuf a = STRBUF_INIT;
    struct cf_elf **elves = cf_xcalloc(r->n_objects ? r->n_objects : 1, sizeof *elves);
    for (size_t i = 0; i < r->n_objects; i++) {
        cf_error err = CF_ERROR_INIT;
        if (cf_elf_open(r->objects[i].path, &elves[i], &err) != 0)
            elves[i] = NULL;
        cf_error_clear(&err);
    }
    struct cf_symcheck_result sc;
    cf_error err = CF_ERROR_INIT;
    if (cf_symcheck_run_opened(r, elves, &sc, &err) == 0) {
        size_t mine = 0;
        for (size_t i = 0; i < sc.n_problems; i++) {
            const struct cf_symcheck_problem *pr = &sc.problems[i];
            long obj = -1;
            for (size_t k = 0; k < r->n_objects && obj < 0; k++)
                if (!strcmp(r->objects[k].path, pr->object))
                    obj = (long)k;
            if (obj < 0 || !in_subtree(r, obj, ext))
                continue;
            mine++;
            if (pr->kind == CF_SYMCHECK_UNDEFINED) {
                char *exp = expected_from(p, pr->symbol);
                cf_strvec_pushf(&res->problems, "undefined symbol %s in %s at import: %s", pr->symbol,
                                shown(pr->object, stage, &a), exp);
                free(exp);
            } else {
                cf_strvec_pushf(&res->problems, "%s", pr->message);
            }
        }
        if (!mine)
            cf_strvec_pushf(&res->checks, "ok: every symbol the extension and the libraries it brings need is "
                                          "defined at import (%zu references checked)",
                            sc.n_references);
        cf_symcheck_result_release(&sc);
    } else {
        cf_strvec_pushf(&res->problems, "symbol check: %s", cf_error_message(&err));
    }
    cf_error_clear(&err);
    /* the references of the extension and of every library its dlopen maps
     * (all of them share its lookup scope; the symbol check above looks in
     * everything mapped, a superset); vendor symbols from the vendor library
     * that should define them. The extension is the last dlopen: the objects
     * after it are the ones its dlopen mapped. */
    long *scope;
    size_t n_scope = lookup_scope(r, ext, first_dlopen, &scope);
    struct cf_elf *self = elves[ext];
    for (size_t i = (size_t)ext; i < r->n_objects; i++)
        if (i == (size_t)ext || in_subtree(r, (long)i, ext))
            check_own_references(p, r, elves, scope, n_scope, elves[i], stage, res);
    const struct cf_elf_symbol *syms;
    size_t n;
    if (self && cf_elf_dynsyms(self, &syms, &n, &err) == 0) {
        for (size_t k = 0; k < n; k++) {
            int row = syms[k].defined ? -1 : provider_role(syms[k].name);
            if (row < 0)
                continue;
            const struct cf_bridge_lib *l = cf_bridge_lib_role(p, expected_provider[row].role);
            char *want = l ? soname_of(l->path) : NULL;
            const char *def = definer(r, elves, scope, n_scope, syms[k].name);
            char *got = def ? soname_of(def) : NULL;
            if (def && want && got && strcmp(want, got) != 0)
                cf_strvec_pushf(&res->problems, "%s (%s) is defined at import by %s, not by %s: the vendor library "
                                                "must provide it; a host whose torch is CPU-only has no %s",
                                syms[k].name, expected_provider[row].what, shown(def, stage, &a), want, got);
            else if (def && want)
                cf_strvec_pushf(&res->checks, "ok: %s from %s", syms[k].name, want);
            free(want);
            free(got);
        }
    }
    cf_error_clear(&err);
    free(scope);
    for (size_t i = 0; i < r->n_objects; i++)
        if (elves[i])
            cf_elf_close(elves[i]);
    free(elves);
    (void)output;
    cf_sb_release(&a);
}

/* GLIBC_2.X references above --max-glibc, by name. */
static void check_glibc(const struct cf_bridge_plan *p, const char *output, struct cf_bridge_build_result *res)
{
    struct cf_elf *elf;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open(output, &elf, &err) != 0) {
        /* --max-glibc asked for a check that cannot run: a failure, not a silent pass */
        if (p->max_glibc)
            cf_strvec_pushf(&res->problems, "--max-glibc %d.%d: the check did not run: %s", p->max_glibc / 1000,
                            p->max_glibc % 1000, cf_error_message(&err));
        cf_error_clear(&err);
        return;
    }
    const struct cf_elf_symbol *syms;
    size_t n;
    int max = 0;
    if (cf_elf_dynsyms(elf, &syms, &n, &err) < 0) {
        if (p->max_glibc)
            cf_strvec_pushf(&res->problems, "--max-glibc %d.%d: the check did not run: the extension's dynamic "
                                            "symbols cannot be read (%s)",
                            p->max_glibc / 1000, p->max_glibc % 1000, cf_error_message(&err));
        cf_error_clear(&err);
        cf_elf_close(elf);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        if (syms[k].defined || !syms[k].version || !cf_starts_with(syms[k].version, "GLIBC_2."))
            continue;
        int code = cf_elf_glibc_version_code(syms[k].version);
        if (code > max)
            max = code;
        if (p->max_glibc && code > p->max_glibc)
            cf_strvec_pushf(&res->glibc_symbols, "%s@%s", syms[k].name, syms[k].version);
    }
    cf_elf_close(elf);
    if (res->glibc_symbols.n) {
        struct strbuf list = STRBUF_INIT;
        for (size_t i = 0; i < res->glibc_symbols.n; i++)
            cf_sb_addf(&list, "%s%s", i ? ", " : "", res->glibc_symbols.v[i]);
        /* pypa's images: manylinux2014 is glibc 2.17, later ones say their glibc */
        char *image = p->max_glibc <= 2017 ? cf_strdup("quay.io/pypa/manylinux2014_x86_64")
                                           : cf_asprintf("quay.io/pypa/manylinux_2_%d_x86_64", p->max_glibc % 1000);
        cf_strvec_pushf(&res->problems, "the extension needs glibc %d.%d (%s) but --max-glibc is %d.%d: build on a "
                                        "host or in an image with glibc <= %d.%d (--docker %s, with its GCC toolset)",
                        max / 1000, max % 1000, list.buf, p->max_glibc / 1000, p->max_glibc % 1000,
                        p->max_glibc / 1000, p->max_glibc % 1000, image);
        free(image);
        cf_sb_release(&list);
    } else if (p->max_glibc) {
        cf_strvec_pushf(&res->checks, "ok: needs glibc %d.%d at most, within --max-glibc %d.%d", max / 1000,
                        max % 1000, p->max_glibc / 1000, p->max_glibc % 1000);
    }
}

static char *torch_c_extension(const struct cf_bridge_plan *p, const char *stage)
{
    (void)p;
    char *tdir = cf_path_join(stage, "torch");
    char *found = NULL;
    struct strvec so = STRVEC_INIT, paths = STRVEC_INIT;
    /* any _C.*.so in the staged torch */
    char *real = cf_realpath(tdir);
    if (real) {
        cf_bridge_sonames_in(real, &so, &paths);
        for (size_t i = 0; i < paths.n && !found; i++)
            if (cf_starts_with(cf_basename(paths.v[i]), "_C.") && cf_ends_with(paths.v[i], ".so"))
                found = cf_path_join(tdir, cf_basename(paths.v[i]));
    }
    cf_strvec_clear(&so);
    cf_strvec_clear(&paths);
    free(real);
    free(tdir);
    return found;
}

int cf_bridge_inspect_output(const struct cf_bridge_plan *p, const char *output, const char *stage,
                             struct cf_bridge_build_result *res, cf_error *err)
{
    struct elf_facts f;
    if (cf_elf_facts_read_file(output, &f, err) < 0)
        return -1;
    if (!f.is_elf) {
        cf_elf_facts_release(&f);
        return cf_error_set(err, CF_ERR_FAILED, "%s is not an ELF file", output);
    }
    for (size_t i = 0; i < f.needed.n; i++)
        cf_strvec_push(&res->needed, f.needed.v[i]);
    for (size_t i = 0; i < f.rpath.n; i++) {
        const char *e = f.rpath.v[i];
        cf_strvec_push(&res->rpath, e);
        int declared = 0;
        for (size_t k = 0; k < p->n_rpath; k++)
            declared |= !strcmp(p->rpath[k].value, e);
        if (cf_elf_rpath_is_origin_relative(e) && declared)
            cf_strvec_pushf(&res->checks, "ok: RPATH %s is $ORIGIN-relative and planned", e);
        else
            cf_strvec_pushf(&res->problems, "RPATH %s is %s: the installed wheel must not depend on the build "
                                            "machine's paths",
                            e, e[0] == '/' ? "an absolute path" : !declared ? "not planned" : "not $ORIGIN-relative");
    }
    char *want = cf_asprintf("PyInit_%s", p->module_name);
    if (cf_strvec_contains(&f.pyinit, want))
        cf_strvec_pushf(&res->checks, "ok: %s is exported", want);
    else
        cf_strvec_pushf(&res->problems, "%s is not exported: Python cannot import the module as %s", want,
                        p->module_name);
    free(want);
    cf_elf_facts_release(&f);
    check_glibc(p, output, res);

    char *ext = cf_bridge_stage_layout(p, output, stage, err);
    if (!ext)
        return -1;
    char *torch_c = torch_c_extension(p, stage);
    const char *pre[3] = { torch_c ? torch_c : ext, torch_c ? ext : NULL, NULL };
    struct cf_ldso_opts lo = { 0 };
    lo.dlopen = pre;
    /* the toolkit's libraries as a host with the toolkit finds them, before
     * this shell's own LD_LIBRARY_PATH */
    char *tk = cf_bridge_toolkit_search_path(p);
    const char *env = getenv("LD_LIBRARY_PATH");
    char *llp = tk && env && *env ? cf_asprintf("%s:%s", tk, env) : NULL;
    if (tk)
        lo.ld_library_path = llp ? llp : tk;
    struct cf_ldso_result r;
    int rc = p->python_exe ? cf_ldso_resolve(p->python_exe, &lo, &r, err) : cf_ldso_resolve(ext, NULL, &r, err);
    if (rc == 0) {
        long ext_obj = p->python_exe ? node_object(&r, ext) : 0;
        long torch_obj = torch_c ? node_object(&r, torch_c) : -1;
        if (ext_obj < 0) {
            cf_strvec_pushf(&res->problems, "the loader emulation could not map the staged extension %s", ext);
        } else {
            check_needed(p, &r, ext_obj, torch_obj, stage, res);
            check_duplicates(p, &r, stage, res);
            long first = torch_obj >= 0 ? torch_obj : ext_obj;
            check_symbols(p, &r, ext_obj, p->python_exe ? first : 0, output, stage, res);
        }
        cf_ldso_result_release(&r);
    }
    free(ext);
    free(torch_c);
    free(tk);
    free(llp);
    return rc;
}
