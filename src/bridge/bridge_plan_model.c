/* The bridge plan's model: items with where they came from, notes and
 * problems, the link roles, the sonames a directory offers, and release.
 * Shared by the plan (bridge_plan.c), its headers (bridge_headers.c), its
 * installed layout (bridge_layout.c) and the output check (bridge_inspect.c). */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/bridge_internal.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"

void cf_bridge_item_set(struct cf_bridge_item *it, const char *value, const char *from)
{
    free(it->value);
    free(it->from);
    it->value = value ? cf_strdup(value) : NULL;
    it->from = from ? cf_strdup(from) : NULL;
}

void cf_bridge_item_push(struct cf_bridge_item **v, size_t *n, const char *value, const char *from)
{
    *v = cf_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[*n].value = cf_strdup(value);
    (*v)[*n].from = cf_strdup(from);
    (*n)++;
}

static void push_sentence(struct strvec *to, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void push_sentence(struct strvec *to, const char *fmt, va_list ap)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addvf(&sb, fmt, ap);
    cf_strvec_push_nodup(to, cf_sb_detach(&sb));
}

void cf_bridge_problem(struct cf_bridge_plan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    push_sentence(&p->problems, fmt, ap);
    va_end(ap);
}

void cf_bridge_note(struct cf_bridge_plan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    push_sentence(&p->notes, fmt, ap);
    va_end(ap);
}

const struct cf_bridge_lib *cf_bridge_lib_role(const struct cf_bridge_plan *p, int role)
{
    /* resolve_libs pushes the roles first, in CF_BRIDGE_LINK_* order */
    return role >= 0 && (size_t)role < p->n_libs ? &p->libs[role] : NULL;
}

void cf_bridge_sonames_in(const char *dir, struct strvec *sonames, struct strvec *paths)
{
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!strstr(de->d_name, ".so"))
            continue;
        char *path = cf_path_join(dir, de->d_name);
        struct cf_elf *elf;
        cf_error err = CF_ERROR_INIT;
        if (cf_is_file(path) && cf_elf_open(path, &elf, &err) == 0) {
            const char *so = cf_elf_get_dynamic(elf)->soname;
            const char *name = so ? so : de->d_name;
            if (!cf_strvec_contains(sonames, name)) {
                cf_strvec_push(sonames, name);
                cf_strvec_push(paths, path);
            }
            cf_elf_close(elf);
        }
        cf_error_clear(&err);
        free(path);
    }
    if (d)
        closedir(d);
}

static void item_free(struct cf_bridge_item *it)
{
    free(it->value);
    free(it->from);
}

static void items_free(struct cf_bridge_item *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        item_free(&v[i]);
    free(v);
}

void cf_bridge_duplicates_free(struct cf_bridge_duplicate *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].soname);
        free(v[i].vendor_path);
        free(v[i].torch_path);
        free(v[i].used);
        free(v[i].why);
    }
    free(v);
}

void cf_bridge_plan_release(struct cf_bridge_plan *p)
{
    struct cf_bridge_item *singles[] = { &p->vendor_item, &p->cxx, &p->python, &p->python_include, &p->torch_dir,
                                         &p->vendor_libs, &p->torch_import, &p->toolkit_root, &p->nccl_header,
                                         &p->nccl_library, &p->nccl_libtorch, &p->device_count, &p->source,
                                         &p->guard };
    for (size_t i = 0; i < sizeof singles / sizeof singles[0]; i++)
        item_free(singles[i]);
    char *strings[] = { p->cxx_version, p->cxx_std, p->cxx_gate, p->python_exe, p->python_version, p->python_tag,
                        p->ext_suffix, p->torch_version, p->cxx11_abi_from, p->flavour_from, p->define_set,
                        p->define_set_why, p->nccl_header_version, p->proof, p->module_name, p->package,
                        p->package_dir, p->output_name, p->into, p->docker, p->out_dir, p->object,
                        p->guard_object, p->output, p->toolkit_version };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        free(strings[i]);
    for (size_t i = 0; i < sizeof p->headers / sizeof p->headers[0]; i++) {
        free(p->headers[i].path);
        free(p->headers[i].version);
    }
    cf_strvec_clear(&p->proof_files);
    cf_strvec_clear(&p->more_sources);
    cf_strvec_clear(&p->more_objects);
    cf_libtorch_abi_release(&p->abi);
    items_free(p->includes, p->n_includes);
    items_free(p->defines, p->n_defines);
    items_free(p->rpath, p->n_rpath);
    items_free(p->toolkit_libs, p->n_toolkit_libs);
    cf_bridge_duplicates_free(p->duplicates, p->n_duplicates);
    for (size_t i = 0; i < p->n_libs; i++) {
        free(p->libs[i].name);
        free(p->libs[i].path);
        free(p->libs[i].from);
        cf_strvec_clear(&p->libs[i].searched);
    }
    free(p->libs);
    cf_strvec_clear(&p->bundle_libs);
    cf_strvec_clear(&p->notes);
    cf_strvec_clear(&p->problems);
    memset(p, 0, sizeof *p);
}
