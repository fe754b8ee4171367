/* The plugins NCCL will dlopen, found as the loader would find them: for each
 * name, openPluginLib's candidates (the value as given, then libnccl-<kind>-<value>.so
 * unless the value is a path or already "lib*.so"; unset: libnccl-<kind>.so), and
 * the plugin entry points the library that resolves exports. The dlopen is NCCL's
 * own, so glibc searches from the library NCCL's code is in (libnccl.so.2, or
 * libtorch_cuda.so when NCCL is linked into it): that library's RPATH and the
 * RPATHs up the chain of objects that loaded it (unless it has a RUNPATH), then
 * LD_LIBRARY_PATH, then its RUNPATH, then ld.so.cache and the system dirs. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/ncclconf.h"
#include "survey/survey_internal.h"

static const struct {
    const char *kind, *variable, *prefix;
    int list; /* NCCL_NET_PLUGIN is a comma-separated list (2.24+) */
} plugin_kinds[] = {
    { "net", "NCCL_NET_PLUGIN", "libnccl-net", 1 },
    { "tuner", "NCCL_TUNER_PLUGIN", "libnccl-tuner", 0 },
    { "profiler", "NCCL_PROFILER_PLUGIN", "libnccl-profiler", 0 },
};

static const char *const entry_prefixes[] = {
    "ncclNetPlugin_v", "ncclCollNetPlugin_v", "ncclGinPlugin_v", "ncclTunerPlugin_v", "ncclProfiler_v",
};

static void exported_entries(const char *path, struct strvec *out)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    const struct cf_elf_symbol *syms = NULL;
    size_t n = 0;
    if (cf_elf_open(path, &elf, &err) == 0 && cf_elf_dynsyms(elf, &syms, &n, &err) == 0)
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; syms[i].defined && k < sizeof entry_prefixes / sizeof entry_prefixes[0]; k++)
                if (syms[i].name && cf_starts_with(syms[i].name, entry_prefixes[k]) &&
                    !cf_strvec_contains(out, syms[i].name))
                    cf_strvec_push(out, syms[i].name);
    if (elf)
        cf_elf_close(elf);
    cf_error_clear(&err);
}

/* Whose dlopen it is: the library NCCL's code is in, and the program whose closure
 * loads it (libtorch's GPU library stands for the program: it is what pulls
 * libnccl.so.2 in). Both NULL when no NCCL library is known here. */
struct caller {
    const char *root, *lib;
    struct cf_ldso_facts *facts; /* the loader's facts, worked out by the first lookup, shared by the rest */
};

static struct caller caller_of(const struct cf_survey *host)
{
    struct caller c = { NULL, NULL, NULL };
    const struct cf_comm_lib *lib = cf_survey_active_comm(host);
    if (!lib || !lib->path || !cf_is_file(lib->path))
        return c;
    c.lib = c.root = lib->path;
    const struct cf_libtorch *t = cf_survey_torch(host);
    if (t && t->gpu_lib && lib == t->loaded && lib->how && !strcmp(lib->how, "loaded"))
        c.root = t->gpu_lib;
    return c;
}

static char *resolve(const struct cf_survey_opts *opts, const struct caller *from, const char *name, char **why)
{
    *why = NULL;
    if (strchr(name, '/') && !strchr(name, '$')) /* dlopen takes a path as it is */
        return cf_is_file(name) ? cf_strdup(name) : NULL;
    if (from->lib)
        return cf_loader_dlopen_from(opts, from->facts, from->root, from->lib, name, why);
    char *path = cf_loader_resolve_default(opts, from->facts, name);
    if (path)
        *why = cf_strdup("a program without RPATH or RUNPATH (no NCCL library known here)");
    return path;
}

static void add_plugin(const struct cf_survey_opts *opts, const struct caller *from, struct cf_nccl_config *c,
                       size_t kind, const char *value)
{
    const char *prefix = plugin_kinds[kind].prefix;
    struct cf_nccl_plugin p;
    memset(&p, 0, sizeof p);
    p.kind = cf_strdup(plugin_kinds[kind].kind);
    p.variable = value ? cf_strdup(plugin_kinds[kind].variable) : NULL;
    if (value && *value) {
        p.requested = cf_strdup(value);
        cf_strvec_push(&p.tried, value);
        size_t n = strlen(value);
        int libso = !strncmp(value, "lib", 3) && n >= 3 && !strcmp(value + n - 3, ".so");
        if (!strchr(value, '/') && !libso)
            cf_strvec_pushf(&p.tried, "%s-%s.so", prefix, value);
    } else {
        p.requested = cf_asprintf("%s.so", prefix);
        cf_strvec_push(&p.tried, p.requested);
    }
    p.loader = from->lib ? cf_strdup(from->lib) : NULL;
    for (size_t i = 0; i < p.tried.n && !p.path; i++)
        p.path = resolve(opts, from, p.tried.v[i], &p.found_by);
    if (p.path)
        exported_entries(p.path, &p.symbols);
    if (!value && !p.path) { /* NCCL's default name, absent: nothing to report */
        free(p.kind);
        free(p.requested);
        free(p.loader);
        cf_strvec_clear(&p.tried);
        return;
    }
    c->plugins = cf_xrealloc(c->plugins, (c->n_plugins + 1) * sizeof *c->plugins);
    c->plugins[c->n_plugins++] = p;
}

void cf_nccl_config_find_plugins(const struct cf_survey_opts *opts, const struct cf_survey *host,
                                 struct cf_nccl_config *c)
{
    struct caller from = caller_of(host);
    struct cf_ldso_facts facts;
    memset(&facts, 0, sizeof facts);
    from.facts = &facts;
    for (size_t k = 0; k < sizeof plugin_kinds / sizeof plugin_kinds[0]; k++) {
        const struct cf_nccl_setting *s = cf_nccl_config_get(c, plugin_kinds[k].variable);
        const char *v = s ? s->value : NULL;
        if (v && !strcasecmp(v, "none"))
            continue;
        if (!v || !plugin_kinds[k].list) {
            add_plugin(opts, &from, c, k, v);
            continue;
        }
        struct strvec names = STRVEC_INIT;
        cf_strvec_split(&names, v, ",", 0);
        for (size_t i = 0; i < names.n; i++)
            add_plugin(opts, &from, c, k, names.v[i]);
        cf_strvec_clear(&names);
    }
}
