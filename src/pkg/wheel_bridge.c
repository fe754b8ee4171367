/* The ways a plugin's bridge wheel installs cleanly and still loses its
 * native tier, found without installing it: the wheel's own Python imports
 * the bridge from a package path where the wheel has no such module (an
 * __init__.py that tolerates a missing module hides that at run time), or
 * imports make_nccl_backend from a module that has no such function. A
 * module holds make_nccl_backend when its read-only data holds the name
 * (pybind11 keeps a def's name there: cclforge/pymodule.h); one that links
 * libtorch and a communication library is taken for a bridge too. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/pymodule.h"
#include "cclforge/vendor.h"
#include "pkg/py_imports.h"
#include "pkg/wheel_verify_internal.h"

#define MAX_PY ((size_t)1 << 20) /* a package's own .py; larger ones are generated tables */

/* 1 when NEEDED names a libtorch library and a communication library. */
static int links_like_bridge(const struct elf_facts *f)
{
    int torch = 0, comm = 0;
    const enum cf_commlib libs[] = { CF_COMMLIB_NCCL, CF_COMMLIB_RCCL };
    for (size_t i = 0; i < f->needed.n; i++) {
        const char *n = f->needed.v[i];
        torch |= cf_starts_with(n, "libtorch");
        for (size_t k = 0; k < sizeof libs / sizeof libs[0]; k++)
            comm |= cf_starts_with(n, cf_comm_profile(libs[k])->stem);
    }
    return torch && comm;
}

struct bridge_scan {
    struct verify_ctx *c;
    struct cf_wheel_problems bad;
    struct strvec reported;  /* modules a finding was made of, once each */
    struct strvec mods;      /* dotted module of each extension member ... */
    struct strvec mod_shown; /* ... and its shown name */
    struct strvec factories; /* dotted modules holding make_nccl_backend */
    struct strvec imported;  /* extension modules the Python imports make_nccl_backend from */
    const char *py;          /* the .py being read: its shown name */
    const char *package;     /* and its package */
    size_t imports_seen;
};

static const char *leaf_of(const char *dotted)
{
    const char *dot = strrchr(dotted, '.');
    return dot ? dot + 1 : dotted;
}

/* The extension member of a dotted module, -1 when none. */
static long ext_index(const struct bridge_scan *s, const char *mod)
{
    for (size_t i = 0; i < s->mods.n; i++)
        if (!strcmp(s->mods.v[i], mod))
            return (long)i;
    return -1;
}

/* 1 when the wheel has mod as Python source or a package (its archive root). */
static int py_module_exists(struct verify_ctx *c, const char *mod)
{
    char *path = cf_strdup(mod);
    for (char *p = path; *p; p++)
        if (*p == '.')
            *p = '/';
    char *file = cf_asprintf("%s.py", path), *init = cf_asprintf("%s/__init__.py", path);
    int yes = cf_name_index_find(&c->by_name, file, strlen(file), NULL) ||
              cf_name_index_find(&c->by_name, init, strlen(init), NULL);
    free(file);
    free(init);
    free(path);
    return yes;
}

/* The first extension module of the given leaf, preferring one holding the factory; -1 none. */
static long module_with_leaf(const struct bridge_scan *s, const char *leaf)
{
    long any = -1;
    for (size_t i = 0; i < s->mods.n; i++)
        if (!strcmp(leaf_of(s->mods.v[i]), leaf)) {
            if (cf_strvec_contains(&s->factories, s->mods.v[i]))
                return (long)i;
            any = any < 0 ? (long)i : any;
        }
    return any;
}

static int once(struct bridge_scan *s, const char *key)
{
    if (cf_strvec_contains(&s->reported, key))
        return 0;
    cf_strvec_push(&s->reported, key);
    return 1;
}

static int on_import(void *ctx, const struct cf_py_import *imp)
{
    struct bridge_scan *s = ctx;
    char *base = cf_py_import_resolve(s->package, imp->module, imp->module_len);
    if (!base)
        return 0;
    int wants_factory = imp->names && cf_py_import_names_has(imp->names, imp->names_len, CF_BRIDGE_FACTORY);
    char *target = NULL;
    if (wants_factory || module_with_leaf(s, leaf_of(base)) >= 0) {
        target = cf_strdup(base);
    } else if (imp->names) { /* from pkg import _flagos_nccl */
        for (size_t i = 0; i < s->mods.n && !target; i++) {
            const char *leaf = leaf_of(s->mods.v[i]);
            if (cf_strvec_contains(&s->factories, s->mods.v[i]) &&
                cf_py_import_names_has(imp->names, imp->names_len, leaf))
                target = cf_asprintf("%s.%s", base, leaf);
        }
    }
    free(base);
    if (!target)
        return 0;
    s->imports_seen++;
    long at = ext_index(s, target);
    if (at >= 0) {
        if (wants_factory)
            cf_strvec_push(&s->imported, target);
    } else if (!py_module_exists(s->c, target)) {
        long other = module_with_leaf(s, leaf_of(target));
        if (other < 0 && wants_factory && s->factories.n)
            other = ext_index(s, s->factories.v[0]);
        if (other >= 0 && once(s, target)) {
            char *want_dir = cf_strdup(target);
            for (char *p = want_dir; *p; p++)
                if (*p == '.')
                    *p = '/';
            char *slash = strrchr(want_dir, '/');
            if (slash)
                *slash = '\0';
            cf_wheel_problem(&s->bad,
                             "bridge-path: %s (line %zu) imports %s%s, but the wheel has no module there; its "
                             "bridge is %s (%s), so the import fails and the plugin runs without its native tier "
                             "(a try/except ImportError hides it); build the module as %s (setuptools: "
                             "Extension(\"%s\", ...); CMake: install it into %s/)",
                             s->py, imp->line, wants_factory ? "make_nccl_backend from " : "", target,
                             s->mods.v[other], s->mod_shown.v[other], target, target,
                             slash ? want_dir : "site-packages");
            free(want_dir);
        }
    }
    free(target);
    return 0;
}

static void scan_python(struct bridge_scan *s)
{
    struct verify_ctx *c = s->c;
    static const char site[] = CF_WHEEL_SITE_REL "/";
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        if (m->z->is_dir || m->data != DATA_OK || !cf_ends_with(m->z->name, ".py") || m->size_read > MAX_PY)
            continue;
        char *installed = cf_wheel_installed_path(c->stem, m->z->name);
        if (!installed || strncmp(installed, site, sizeof site - 1)) {
            free(installed);
            continue;
        }
        struct strbuf text = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        if (cf_wheel_member_read_all(c, i, MAX_PY, &text, &err) == 0) {
            char *dir = cf_dirname(installed);
            char *package = cf_wheel_module_of(cf_starts_with(dir, CF_WHEEL_SITE_REL "/") ? dir : site);
            s->py = m->shown;
            s->package = package ? package : "";
            cf_py_imports_scan(cf_sb_str(&text), text.len, on_import, s);
            free(package);
            free(dir);
        }
        cf_error_clear(&err);
        cf_sb_release(&text);
        free(installed);
    }
}

void cf_wheel_check_bridge_module(struct verify_ctx *c)
{
    struct bridge_scan s;
    memset(&s, 0, sizeof s);
    s.c = c;
    struct strvec like = STRVEC_INIT; /* modules linked like a bridge */
    for (size_t i = 0; i < c->n; i++) {
        struct vmember *m = &c->m[i];
        if (!m->elf || !m->is_extension)
            continue;
        char *mod = cf_wheel_module_of(cf_wheel_installed_of(c, m));
        if (!mod)
            continue;
        struct cf_elf *elf;
        cf_error err = CF_ERROR_INIT;
        if (cf_elf_open(m->placed, &elf, &err) == 0) {
            m->factory = cf_elf_holds_string(elf, CF_BRIDGE_FACTORY, &err) > 0;
            cf_elf_close(elf);
        }
        cf_error_clear(&err);
        cf_strvec_push(&s.mods, mod);
        cf_strvec_push(&s.mod_shown, m->shown);
        if (m->factory)
            cf_strvec_push(&s.factories, mod);
        else if (links_like_bridge(m->elf))
            cf_strvec_push(&like, mod);
        free(mod);
    }
    if (!s.factories.n && !like.n) {
        cf_strvec_clear(&s.mods);
        cf_strvec_clear(&s.mod_shown);
        return; /* no bridge in sight: not a plugin's bridge wheel */
    }
    scan_python(&s);
    for (size_t i = 0; i < s.mods.n; i++) {
        const char *mod = s.mods.v[i];
        if (cf_strvec_contains(&s.factories, mod))
            continue;
        int imported = cf_strvec_contains(&s.imported, mod);
        int linked = cf_strvec_contains(&like, mod) && !s.factories.n;
        if ((imported || linked) && once(&s, mod))
            cf_wheel_problem(&s.bad,
                             "no-factory: %s holds no make_nccl_backend (no pybind11 def of that name in its data), "
                             "yet %s: the backend cannot be created from it; compile the bridge source that defines "
                             "it (m.def(\"make_nccl_backend\", ...) in PYBIND11_MODULE) into this module",
                             s.mod_shown.v[i],
                             imported ? "the wheel's Python imports make_nccl_backend from it"
                                      : "it links libtorch and the communication library as a bridge does");
    }
    struct strbuf list = STRBUF_INIT;
    for (size_t i = 0; i < s.factories.n && i < 3; i++)
        cf_sb_addf(&list, "%s%s", i ? ", " : "", s.factories.v[i]);
    cf_wheel_report(c->res, "bridge-module", &s.bad,
                    "make_nccl_backend in %s; %zu import(s) of it in the wheel's Python find it where it is",
                    list.len ? list.buf : "(none)", s.imports_seen);
    cf_sb_release(&list);
    cf_strvec_clear(&s.reported);
    cf_strvec_clear(&s.mods);
    cf_strvec_clear(&s.mod_shown);
    cf_strvec_clear(&s.factories);
    cf_strvec_clear(&s.imported);
    cf_strvec_clear(&like);
}
