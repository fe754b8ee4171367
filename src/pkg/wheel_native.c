/* The native code: which ELF members there are and which are extension
 * modules, their RPATH/RUNPATH entries in the installed layout, and their
 * GLIBC_ versions against the platform tag. Read from the copies the
 * streaming pass placed in the layout, never loaded or run. */
#include <elf.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/dst.h"
#include "cclforge/fs.h"
#include "cclforge/pymodule.h"
#include "cclforge/vendor.h"
#include "pkg/wheel_verify_internal.h"

void cf_wheel_read_elf_facts(struct verify_ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct vmember *m = &c->m[i];
        if (!m->is_elf || !m->placed || m->data != DATA_OK)
            continue;
        cf_name_index_add(&c->placed, m->placed, strlen(m->placed), i, NULL);
        cf_error err = CF_ERROR_INIT;
        struct elf_facts *f = cf_xcalloc(1, sizeof *f);
        if (cf_elf_facts_read_file(m->placed, f, &err) < 0 || !f->is_elf) {
            m->elf_error = cf_strdup(err.kind != CF_OK ? cf_error_message(&err) : "not an ELF file");
            cf_error_clear(&err);
            cf_elf_facts_release(f);
            free(f);
            continue;
        }
        m->elf = f;
        c->n_elf++;
        cf_strvec_push(&c->res->elf_members, m->shown);
        if (f->glibc_max > c->res->glibc_needed)
            c->res->glibc_needed = f->glibc_max;
        char *mod = cf_wheel_module_of(cf_wheel_installed_of(c, m));
        char leaf[256];
        int named = mod ? cf_pymodule_leaf(cf_basename(m->z->name), leaf, sizeof leaf) : 0;
        char *want = mod ? cf_asprintf("PyInit_%s", strrchr(mod, '.') ? strrchr(mod, '.') + 1 : mod) : NULL;
        int exports_want = want && cf_strvec_contains(&f->pyinit, want);
        /* import goes by the file name: a tagged name is a module whatever it
         * exports; <leaf>.so is one when it exports any init at all */
        if (exports_want || named == CF_PYMODULE_TAGGED || (named == CF_PYMODULE_PLAIN && f->pyinit.n)) {
            m->is_extension = 1;
            m->init_mismatch = !exports_want;
            cf_strvec_push(&c->res->extensions, m->shown);
            cf_strvec_push(&c->wf.modules, mod);
        }
        free(want);
        free(mod);
    }
}

/* An extension module whose init is not the one import calls: the symbol
 * found, the one needed, and the usual cause. */
static void init_symbol_problem(struct verify_ctx *c, const struct vmember *m, struct cf_wheel_problems *bad)
{
    char *mod = cf_wheel_module_of(cf_wheel_installed_of(c, m));
    const char *leaf = strrchr(mod, '.') ? strrchr(mod, '.') + 1 : mod;
    struct strbuf found = STRBUF_INIT;
    for (size_t k = 0; k < m->elf->pyinit.n && k < 3; k++)
        cf_sb_addf(&found, "%s%s", k ? ", " : "", m->elf->pyinit.v[k]);
    const char *cause;
    if (cf_strvec_contains(&m->elf->pyinit, "PyInit_TORCH_EXTENSION_NAME"))
        cause = "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) compiled with the macro undefined: torch's BuildExtension "
                "defines it, plain setuptools, CMake and the compiler do not";
    else if (m->elf->pyinit.n)
        cause = "the module was compiled under another name than its file's";
    else
        cause = "no PyInit_ function is exported (a library named like a module, or its init hidden by "
                "-fvisibility=hidden without PYBIND11_MODULE's export)";
    cf_wheel_problem(bad,
                     "init-symbol: %s exports %s, but `import %s` calls PyInit_%s, so the import fails: %s; build it "
                     "with -DTORCH_EXTENSION_NAME=%s (setuptools: define_macros=[(\"TORCH_EXTENSION_NAME\", \"%s\")]; "
                     "CMake: target_compile_definitions(<target> PRIVATE TORCH_EXTENSION_NAME=%s)) or name the file "
                     "after the module it is",
                     m->shown, found.len ? found.buf : "no PyInit_ symbol", mod, leaf, cause, leaf, leaf, leaf);
    cf_sb_release(&found);
    free(mod);
}

void cf_wheel_check_extension(struct verify_ctx *c)
{
    struct cf_wheel_verify_result *r = c->res;
    struct cf_wheel_problems bad = { STRBUF_INIT, 0 };
    size_t n_libs = 0, n_exec = 0;
    const char *first_lib = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        if (m->elf_error)
            cf_wheel_problem(&bad, "%s: %s", m->shown, m->elf_error);
        if (!m->elf)
            continue;
        const char *arch = cf_elf_machine_wheel_arch(m->elf->machine, m->elf->big_endian);
        if (c->arch && (!arch || strcmp(arch, c->arch)))
            cf_wheel_problem(&bad, "%s is %s code in a wheel tagged for %s", m->shown, arch ? arch : "unknown-machine", c->arch);
        if (m->init_mismatch)
            init_symbol_problem(c, m, &bad);
        if (m->is_extension)
            continue;
        if (m->elf->type == ET_DYN && m->elf->soname) {
            n_libs++;
            first_lib = first_lib ? first_lib : m->shown;
        } else {
            n_exec++;
        }
    }
    if (c->wf.bridge_module && !cf_strvec_contains(&c->wf.modules, c->wf.bridge_module))
        cf_wheel_problem(&bad, "the marker names module %s, but the wheel has no such extension", c->wf.bridge_module);
    cf_wheel_problems_finish(&bad);
    if (bad.n)
        cf_wheel_add_check(r, "extension", 0, "%s", bad.text.buf);
    else if (r->extensions.n)
        cf_wheel_add_check(r, "extension", 1, "%zu extension module(s): %s%s; %zu other ELF file(s)", r->extensions.n,
                           r->extensions.v[0], r->extensions.n > 1 ? ", ..." : "", n_libs + n_exec);
    else if (n_libs || n_exec)
        cf_wheel_add_check(r, "extension", 1,
                           "library-only wheel: %zu shared libraries (%s%s) and %zu other ELF file(s), no extension "
                           "module; another package loads them",
                           n_libs, first_lib ? first_lib : "", n_libs > 1 ? ", ..." : "", n_exec);
    else if (!c->arch)
        cf_wheel_add_check(r, "extension", -1, "no native code: a pure-Python wheel");
    else
        cf_wheel_add_check(r, "extension", 0, "tagged %s, yet the wheel holds no ELF file", r->platform_tag);
    cf_sb_release(&bad.text);
    cf_wheel_check_bridge_module(c); /* its own check, right after this one */
}

static int declared(const struct verify_ctx *c, const char *site_rel_dir)
{
    for (size_t i = 0; i < c->externals.n; i++) {
        const char *e = c->externals.v[i];
        size_t l = strlen(e);
        while (l && e[l - 1] == '/')
            l--;
        if (strlen(site_rel_dir) == l && !strncmp(e, site_rel_dir, l))
            return 1;
    }
    return 0;
}

/* What the RUNPATH check learns beyond its problems. */
struct rpath_walk {
    struct cf_wheel_problems bad;
    struct strvec requires; /* METADATA's Requires-Dist, canonical */
    struct strvec provided; /* externals a required distribution provides */
};

/* "../../../" from a module installed at site-packages relative `dir` back to site-packages. */
static void ups_to_site(const char *installed_dir, struct strbuf *out)
{
    static const char site[] = CF_WHEEL_SITE_REL;
    const char *d = installed_dir + sizeof site - 1;
    for (; *d; d++)
        if (*d == '/')
            cf_sb_adds(out, "../");
}

/* An absolute entry: where on the build machine it points, and what to write instead. */
static void build_rpath_problem(struct verify_ctx *c, const struct vmember *m, const char *entry, const char *kind,
                                struct cf_wheel_problems *bad)
{
    static const char *const site_words[] = { "/site-packages/", "/dist-packages/" };
    const char *tail = NULL;
    for (size_t k = 0; k < sizeof site_words / sizeof site_words[0]; k++) {
        const char *at = strstr(entry, site_words[k]);
        if (at)
            tail = at + strlen(site_words[k]);
    }
    /* a --site directory is a package directory too, whatever its name */
    for (size_t k = 0; !tail && k < c->opts->n_site_dirs; k++) {
        char *real = cf_realpath(c->opts->site_dirs[k]);
        const char *dirs[] = { c->opts->site_dirs[k], real };
        for (size_t d = 0; d < 2 && !tail; d++) {
            size_t n = dirs[d] ? strlen(dirs[d]) : 0;
            while (n > 1 && dirs[d][n - 1] == '/')
                n--;
            if (n && !strncmp(entry, dirs[d], n) && entry[n] == '/')
                tail = entry + n + 1;
        }
        free(real);
    }
    const char *installed = cf_wheel_installed_of(c, m);
    int in_site = cf_starts_with(installed, CF_WHEEL_SITE_REL "/");
    if (tail && *tail && in_site) {
        char *dir = cf_dirname(installed);
        struct strbuf rel = STRBUF_INIT;
        ups_to_site(dir, &rel);
        cf_wheel_problem(bad,
                         "build-rpath: %s has %s entry '%s', an absolute path into the build machine's Python "
                         "packages (%s there), which a host keeps elsewhere: the loader misses it there or finds "
                         "another copy. Use '$ORIGIN/%s%s' (setuptools: runtime_library_dirs, CMake: INSTALL_RPATH, "
                         "`cclforge bridge plan` gives it)",
                         m->shown, kind, entry, tail, cf_sb_str(&rel), tail);
        cf_sb_release(&rel);
        free(dir);
        return;
    }
    size_t nv;
    const struct cf_vendor_profile *v = cf_vendor_profiles(&nv);
    for (size_t i = 0; i < nv; i++)
        for (const char *const *r = v[i].default_roots; r && *r; r++) {
            size_t depth = 0, slashes = 0; /* compare as many components as the root has */
            for (const char *p = *r; *p; p++)
                depth += *p == '/';
            const char *end = entry;
            for (; *end && !(*end == '/' && slashes++ == depth); end++)
                ;
            char *head = cf_strndup(entry, (size_t)(end - entry));
            int hit = !fnmatch(*r, head, 0);
            free(head);
            if (hit) {
                cf_wheel_problem(bad,
                                 "build-rpath: %s has %s entry '%s', an absolute path into the build machine's "
                                 "%s toolkit: a host's loader finds the toolkit's libraries through ld.so.conf or "
                                 "LD_LIBRARY_PATH (the toolkit's environment script), wherever it is installed "
                                 "there. Drop the entry and declare those libraries the host's with --toolkit-lib "
                                 "at build",
                                 m->shown, kind, entry, v[i].display);
                return;
            }
        }
    cf_wheel_problem(bad, "build-rpath: %s has %s entry '%s', an absolute path of the build machine: the host will "
                          "not have it (use a $ORIGIN-relative entry, or bundle the library)",
                     m->shown, kind, entry);
}

/* One RPATH/RUNPATH entry of member m; a problem into w->bad, or nothing. */
static void check_entry(struct verify_ctx *c, const struct vmember *m, const char *entry, struct rpath_walk *w)
{
    static const char site[] = CF_WHEEL_SITE_REL;
    struct cf_wheel_problems *bad = &w->bad;
    const char *name = m->shown;
    const char *kind = m->elf->has_runpath ? "RUNPATH" : "RPATH";
    if (!*entry) {
        cf_wheel_problem(bad, "%s: an empty RPATH entry (a leading, trailing or doubled ':'): the loader searches the current "
                 "directory there, so any directory the program runs in can supply its libraries",
            name);
        return;
    }
    if (entry[0] == '/') {
        build_rpath_problem(c, m, entry, kind, bad);
        return;
    }
    if (!cf_elf_rpath_is_origin_relative(entry)) {
        cf_wheel_problem(bad, "%s has RPATH entry '%s', relative to the current directory, not $ORIGIN (use a "
                              "$ORIGIN-relative entry, or bundle the library)",
                         name, entry);
        return;
    }
    /* $ORIGIN expanded in the layout, "/" standing for the prefix */
    const char *installed = cf_wheel_installed_of(c, m);
    char *dir = cf_dirname(installed);
    char *origin = cf_asprintf("/%s", dir);
    char *expanded = cf_dst_expand(entry, origin, NULL, NULL);
    int escaped = 0;
    char *target = expanded ? cf_path_normalize(expanded, &escaped) : NULL;
    const char *rel = target ? target + 1 : "";
    int in_site = !strncmp(installed, site, sizeof site - 1);
    int target_in_site = !strncmp(rel, site, sizeof site - 1) && (rel[sizeof site - 1] == '/' || !rel[sizeof site - 1]);
    const char *site_rel = target_in_site ? rel + sizeof site - 1 + (rel[sizeof site - 1] == '/') : NULL;
    if (!target || escaped || (in_site && !target_in_site)) {
        cf_wheel_problem(bad, "%s: RPATH '%s' climbs above %s", name, entry, in_site ? "site-packages" : "the install prefix");
    } else if (!cf_name_index_find(&c->dirs, rel, strlen(rel), NULL) && strcmp(rel, site) &&
               !(site_rel && (declared(c, site_rel) || cf_wheel_external_from_requires(c, &w->requires, site_rel,
                                                                                       &w->provided)))) {
        char *where = cf_wheel_layout_display(rel);
        struct strbuf req = STRBUF_INIT;
        if (site_rel && w->requires.n)
            cf_sb_addf(&req, ", or give --site where the distributions its Requires-Dist names (%s%s) are installed, "
                             "when one of them provides it",
                       w->requires.v[0], w->requires.n > 1 ? ", ..." : "");
        else if (site_rel)
            cf_sb_adds(&req, "; a Requires-Dist on the distribution that provides it declares it too, with --site "
                             "where that is installed");
        cf_wheel_problem(bad,
            "%s: RPATH '%s' resolves to %s, which is neither in the wheel nor a declared external (declare it with "
            "--external %s if a dependency provides it%s)",
            name, entry, where, site_rel ? site_rel : rel, cf_sb_str(&req));
        cf_sb_release(&req);
        free(where);
    }
    free(target);
    free(expanded);
    free(origin);
    free(dir);
}

void cf_wheel_check_rpath(struct verify_ctx *c)
{
    struct rpath_walk w = { { STRBUF_INIT, 0 }, STRVEC_INIT, STRVEC_INIT };
    if (c->metadata >= 0 && c->m[c->metadata].data == DATA_OK)
        cf_wheel_requires_dist(c->metadata_text.buf, c->metadata_text.len, &w.requires);
    size_t entries = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        for (size_t k = 0; m->elf && k < m->elf->rpath.n; k++, entries++)
            check_entry(c, m, m->elf->rpath.v[k], &w);
    }
    struct strbuf from = STRBUF_INIT;
    for (size_t i = 0; i < w.provided.n; i++)
        cf_sb_addf(&from, "%s%s", i ? "; " : "; declared by a requirement: ", w.provided.v[i]);
    cf_wheel_report(c->res, "rpath", &w.bad,
                    "%zu RPATH/RUNPATH entries, each $ORIGIN-relative, landing in the wheel or on a declared "
                    "external%s",
                    entries, cf_sb_str(&from));
    cf_sb_release(&from);
    cf_strvec_clear(&w.requires);
    cf_strvec_clear(&w.provided);
}

void cf_wheel_check_glibc(struct verify_ctx *c)
{
    struct cf_wheel_verify_result *r = c->res;
    struct cf_wheel_problems bad = { STRBUF_INIT, 0 };
    for (size_t i = 0; r->glibc_ceiling && i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        if (!m->elf || m->elf->glibc_max <= r->glibc_ceiling)
            continue;
        char *version = cf_asprintf("GLIBC_%d.%d", m->elf->glibc_max / 1000, m->elf->glibc_max % 1000);
        struct strbuf syms = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        cf_elf_symbols_needing(m->placed, version, 3, &syms, &err);
        cf_error_clear(&err);
        cf_wheel_problem(&bad, "%s needs %s%s%s%s, but the tag %s promises glibc %d.%d: it needs manylinux_%d_%d", m->shown,
            version, syms.len ? " (" : "", cf_sb_str(&syms), syms.len ? ")" : "", r->platform_tag,
            r->glibc_ceiling / 1000, r->glibc_ceiling % 1000, m->elf->glibc_max / 1000, m->elf->glibc_max % 1000);
        cf_sb_release(&syms);
        free(version);
    }
    cf_wheel_problems_finish(&bad);
    if (bad.n)
        cf_wheel_add_check(r, "glibc", 0, "%s", bad.text.buf);
    else if (!c->n_elf)
        cf_wheel_add_check(r, "glibc", -1, "no native code");
    else if (r->glibc_ceiling)
        cf_wheel_add_check(r, "glibc", 1, "highest symbol version GLIBC_%d.%d is within %s", r->glibc_needed / 1000,
                           r->glibc_needed % 1000, r->platform_tag);
    else
        cf_wheel_add_check(r, "glibc", -1, "tag %s sets no glibc ceiling (highest needed: GLIBC_%d.%d)",
                           r->platform_tag, r->glibc_needed / 1000, r->glibc_needed % 1000);
    cf_sb_release(&bad.text);
}
