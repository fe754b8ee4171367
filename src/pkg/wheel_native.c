/* The native code: which ELF members there are and which are extension
 * modules, their RPATH/RUNPATH entries in the installed layout, and their
 * GLIBC_ versions against the platform tag. Read from the copies the
 * streaming pass placed in the layout, never loaded or run. */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/dst.h"
#include "cclforge/fs.h"
#include "pkg/wheel_verify_internal.h"

/* The dotted module an installed file would be imported as, or NULL when it
 * is not under site-packages: pkg/sub/_m.cpython-311-x86_64-linux-gnu.so -> pkg.sub._m */
static char *module_of(const char *installed)
{
    static const char site[] = CF_WHEEL_SITE_REL "/";
    if (strncmp(installed, site, sizeof site - 1))
        return NULL;
    char *mod = cf_strdup(installed + sizeof site - 1);
    char *base = strrchr(mod, '/');
    char *dot = strchr(base ? base + 1 : mod, '.');
    if (dot)
        *dot = '\0';
    for (char *p = mod; *p; p++)
        if (*p == '/')
            *p = '.';
    return mod;
}

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
        char *mod = module_of(cf_wheel_installed_of(c, m));
        const char *leaf = mod ? (strrchr(mod, '.') ? strrchr(mod, '.') + 1 : mod) : NULL;
        char *want = leaf ? cf_asprintf("PyInit_%s", leaf) : NULL;
        if (want && cf_strvec_contains(&f->pyinit, want)) {
            m->is_extension = 1;
            cf_strvec_push(&c->res->extensions, m->shown);
            cf_strvec_push(&c->wf.modules, mod);
        }
        free(want);
        free(mod);
    }
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

/* One RPATH/RUNPATH entry of member m; a problem into bad, or nothing. */
static void check_entry(struct verify_ctx *c, const struct vmember *m, const char *entry, struct cf_wheel_problems *bad)
{
    static const char site[] = CF_WHEEL_SITE_REL;
    const char *name = m->shown;
    if (!*entry) {
        cf_wheel_problem(bad, "%s: an empty RPATH entry (a leading, trailing or doubled ':'): the loader searches the current "
                 "directory there, so any directory the program runs in can supply its libraries",
            name);
        return;
    }
    if (!cf_elf_rpath_is_origin_relative(entry)) {
        cf_wheel_problem(bad, "%s has RPATH entry '%s', %s (use a $ORIGIN-relative entry, or bundle the library)", name, entry,
            entry[0] == '/' ? "an absolute path of the build machine" : "relative to the current directory, not $ORIGIN");
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
               !(site_rel && declared(c, site_rel))) {
        char *where = cf_wheel_layout_display(rel);
        cf_wheel_problem(bad,
            "%s: RPATH '%s' resolves to %s, which is neither in the wheel nor a declared external (declare it with "
            "--external %s if a dependency provides it)",
            name, entry, where, site_rel ? site_rel : rel);
        free(where);
    }
    free(target);
    free(expanded);
    free(origin);
    free(dir);
}

void cf_wheel_check_rpath(struct verify_ctx *c)
{
    struct cf_wheel_problems bad = { STRBUF_INIT, 0 };
    size_t entries = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        for (size_t k = 0; m->elf && k < m->elf->rpath.n; k++, entries++)
            check_entry(c, m, m->elf->rpath.v[k], &bad);
    }
    cf_wheel_report(c->res, "rpath", &bad,
                    "%zu RPATH/RUNPATH entries, each $ORIGIN-relative, landing in the wheel or on a declared external",
                    entries);
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
