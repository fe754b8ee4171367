/* The libraries the host's toolkit must provide to the bridges installed
 * beside a torch, each looked up as this host's loader would (host_lib.c):
 *  - each bridge wheel's .dist-info/cclforge.json (`bridge wheel`'s marker:
 *    module, toolkit_libs, toolkit) in that site-packages;
 *  - each cclforge-built extension module of the packages there (a plugin's
 *    own pip or CMake wheel has no marker): the module is its own record, the
 *    ABI facts its guard exports (cclforge_abi_info, read from the file by
 *    bridge_facts.c, nothing loaded);
 *  - each plugin bridge there without those facts (a plugin's own build,
 *    Torch-FL's _flagos_nccl): an extension module whose read-only data holds
 *    CF_BRIDGE_FACTORY; its NEEDED resolved by the loader emulation as a
 *    process that imported torch first maps them (torch/_C's closure, then
 *    the module: its RUNPATH, LD_LIBRARY_PATH, ld.so.cache, the default
 *    directories; a soname torch already mapped is reused).
 * The module walk is bounded (Python packages only, torch's own tree
 * skipped, so many directories and modules at most) and remembered in the
 * probe cache while every directory walked and every bridge found is
 * unchanged; only the loader lookups run on a warm run, since they depend on
 * this process's environment. Untrusted input: sonames with a '/' are
 * ignored; a module whose facts cannot be read is reported, not trusted. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cclforge/bridge_facts.h"
#include "cclforge/depcache.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/ldso.h"
#include "cclforge/pymodule.h"
#include "survey/survey_internal.h"

enum { MAX_MARKERS = 256, MAX_DEPTH = 8, MAX_DIRS = 2048, MAX_MODULES = 1024 };

/* Top-level entries of site-packages that hold no plugin bridge: torch's own
 * tree (thousands of headers and its libraries) and what pip keeps beside
 * packages. Matched as a name or, with a leading '*', as a suffix. */
static const char *const skipped[] = { "torch", "__pycache__", "*.dist-info", "*.egg-info", "*.libs", "*.data" };

static int skip_top(const char *name)
{
    if (name[0] == '.')
        return 1;
    for (size_t i = 0; i < sizeof skipped / sizeof *skipped; i++)
        if (skipped[i][0] == '*' ? cf_ends_with(name, skipped[i] + 1) : !strcmp(name, skipped[i]))
            return 1;
    return 0;
}

/* One library a bridge needs from the host's toolkit, looked up here. */
static void need_lib(struct cf_libtorch *t, const char *so, const char *vendor, const char *version,
                     const char *module)
{
    if (!*so || strchr(so, '/'))
        return;
    struct cf_host_lib h;
    cf_error err = CF_ERROR_INIT;
    if (cf_host_lib_locate(so, vendor, &h, &err) < 0) {
        cf_error_clear(&err);
        return;
    }
    char *built = cf_asprintf("%s toolkit %s at build", vendor && *vendor ? vendor : "the vendor's",
                              version && *version ? version : "(version ?)");
    if (h.path)
        cf_strvec_pushf(&t->bridge_toolkit_found, "%s -> %s (%s) for %s (%s)", so, h.path, h.how, module, built);
    else if (h.in_toolkit)
        cf_strvec_pushf(&t->bridge_toolkit_missing,
                        "%s for %s (%s): in the toolkit %s names (%s) but not where the loader looks (%s)", so, module,
                        built, h.toolkit_var, h.in_toolkit, h.considered);
    else
        cf_strvec_pushf(&t->bridge_toolkit_missing, "%s for %s (%s): not on this host (the loader looked in: %s)", so,
                        module, built, h.considered && *h.considered ? h.considered : "nothing");
    free(built);
    cf_host_lib_release(&h);
}

static void one_marker(const char *path, struct cf_libtorch *t, struct strvec *modules)
{
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(path, 1 << 20, &text, &err) < 0) {
        cf_error_clear(&err);
        return;
    }
    cJSON *doc = cJSON_Parse(cf_sb_str(&text));
    cf_sb_release(&text);
    const char *module = cf_json_str(doc, "module");
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(doc, "toolkit");
    const char *vendor = cf_json_str(tk, "vendor"), *version = cf_json_str(tk, "version");
    if (module)
        cf_strvec_push(modules, module);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "toolkit_libs"))
    {
        if (cJSON_IsString(it))
            need_lib(t, it->valuestring, vendor, version, module ? module : path);
    }
    cJSON_Delete(doc);
}

/* ---- the modules' own records ------------------------------------------------ */

/* The probe cache's kind names the record format below: a new record
 * letter takes a new kind, so an answer remembered without it is not read. */
#define WALK_CACHE_KIND "bridge-walk"

struct walk {
    const char *site;
    struct strbuf found;  /* the cached answer: "B\t<rel>\t<vendor>\t<version>\t<libs>\n", "U\t<rel>\t<why>\n",
                           * "P\t<rel>\n" a plugin bridge without cclforge's facts,
                           * "L\n" when a bound stopped the walk */
    struct strvec deps;   /* the directories walked and the bridges found */
    size_t dirs, modules;
    int complete;         /* 0: a bound was reached */
};

/* Tabs and newlines cannot occur in the fields (bridge_facts.c keeps them
 * printable; a path with either is skipped). */
/* A module without cclforge's facts whose file name import takes and whose
 * read-only data holds the factory's name is a plugin's bridge. */
static int plugin_bridge(struct cf_elf *elf, const char *name)
{
    char leaf[256];
    cf_error err = CF_ERROR_INIT;
    int holds = cf_pymodule_leaf(name, leaf, sizeof leaf) && cf_elf_holds_string(elf, CF_BRIDGE_FACTORY, &err) == 1;
    cf_error_clear(&err);
    return holds;
}

static void module_facts(struct walk *w, const char *path, const char *rel, const char *name)
{
    struct cf_bridge_facts f;
    const char *why = NULL;
    cf_error err = CF_ERROR_INIT;
    struct cf_elf *elf = NULL;
    if (cf_elf_open(path, &elf, &err) < 0 || cf_bridge_facts_read(elf, &f, &why, &err) < 0) {
        cf_sb_addf(&w->found, "U\t%s\tnot a readable ELF file (%s)\n", rel, cf_error_message(&err));
        cf_error_clear(&err);
        cf_strvec_push(&w->deps, path);
        if (elf)
            cf_elf_close(elf);
        return;
    }
    if (f.found) {
        if (f.toolkit_libs[0])
            cf_sb_addf(&w->found, "B\t%s\t%s\t%s\t%s\n", rel, f.vendor, f.toolkit_version, f.toolkit_libs);
        cf_strvec_push(&w->deps, path);
    } else if (why && strcmp(why, CF_BRIDGE_FACTS_ABSENT) != 0) {
        cf_sb_addf(&w->found, "U\t%s\t%s\n", rel, why);
        cf_strvec_push(&w->deps, path);
    } else if (plugin_bridge(elf, name)) {
        cf_sb_addf(&w->found, "P\t%s\n", rel);
        cf_strvec_push(&w->deps, path);
    }
    cf_elf_close(elf);
}

static void walk_dir(struct walk *w, const char *rel, int depth)
{
    char *dir = *rel ? cf_path_join(w->site, rel) : cf_strdup(w->site);
    if (++w->dirs > MAX_DIRS) {
        w->complete = 0;
        free(dir);
        return;
    }
    cf_strvec_push(&w->deps, dir);
    DIR *d = opendir(dir);
    struct dirent *de;
    struct strvec names = STRVEC_INIT;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && !strpbrk(de->d_name, "\t\n"))
            cf_strvec_push(&names, de->d_name);
    if (d)
        closedir(d);
    qsort(names.v, names.n, sizeof *names.v, cf_str_ptr_cmp); /* the same answer, whatever order readdir gives */
    for (size_t i = 0; i < names.n && w->complete; i++) {
        const char *name = names.v[i];
        if (!*rel && skip_top(name))
            continue;
        char *sub = *rel ? cf_asprintf("%s/%s", rel, name) : cf_strdup(name);
        char *path = cf_path_join(w->site, sub);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && name[0] != '.' && strcmp(name, "__pycache__")) {
            /* only Python packages hold importable modules */
            char *init = cf_path_join(path, "__init__.py");
            if (depth < MAX_DEPTH && cf_is_file(init))
                walk_dir(w, sub, depth + 1);
            free(init);
        } else if (S_ISREG(st.st_mode) && cf_ends_with(name, ".so")) {
            if (++w->modules > MAX_MODULES)
                w->complete = 0;
            else
                module_facts(w, path, sub, name);
        }
        free(path);
        free(sub);
    }
    cf_strvec_clear(&names);
    free(dir);
}

/* torch_fl/comm/_nccl_ext/_flagos_nccl.cpython-312-x86_64-linux-gnu.so -> torch_fl.comm._nccl_ext._flagos_nccl */
static char *dotted(const char *rel)
{
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    char *m = cf_strndup(rel, (size_t)(base - rel) + strcspn(base, "."));
    for (char *p = m; *p; p++)
        if (*p == '/')
            *p = '.';
    return m;
}

/* torch/_C*.so in site: what `import torch` maps first; NULL when absent. */
static char *torch_c_extension(const char *site)
{
    char *pkg = cf_path_join(site, "torch");
    DIR *d = opendir(pkg);
    struct dirent *de;
    char *c_ext = NULL;
    while (d && !c_ext && (de = readdir(d)))
        if (cf_starts_with(de->d_name, "_C.") && cf_ends_with(de->d_name, ".so"))
            c_ext = cf_path_join(pkg, de->d_name);
    if (d)
        closedir(d);
    free(pkg);
    return c_ext;
}

enum { SHOWN_DIRS = 8 };

/* One plugin bridge's NEEDED, resolved as a process that imported torch maps
 * them: every one the loader does not find, and where it looked. */
static void plugin_needs(const char *site, const char *rel, struct cf_libtorch *t)
{
    char *path = cf_path_join(site, rel), *module = dotted(rel);
    char *torch_c = torch_c_extension(site);
    const char *pre[] = { path, NULL };
    struct cf_ldso_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.explain = 1;
    lo.dlopen = torch_c ? pre : NULL;
    struct cf_ldso_result r;
    cf_error err = CF_ERROR_INIT;
    cf_strvec_pushf(&t->bridge_plugins, "%s (%s)", module, path);
    if (cf_ldso_resolve(torch_c ? torch_c : path, &lo, &r, &err) < 0) {
        cf_strvec_pushf(&t->bridge_plugin_missing, "%s (%s): the loader emulation cannot map it: %s", module, path,
                        cf_error_message(&err));
        cf_error_clear(&err);
        goto out;
    }
    long ext = -1;
    for (size_t i = 0; i < r.n_nodes && ext < 0; i++)
        if (r.nodes[i].needed && !strcmp(r.nodes[i].needed, path))
            ext = r.nodes[i].object;
    if (ext < 0)
        cf_strvec_pushf(&t->bridge_plugin_missing, "%s (%s): the loader emulation could not map the module", module,
                        path);
    /* the module is dlopen'ed last: every object from it on is its closure */
    for (size_t i = 0; ext >= 0 && i < r.n_nodes; i++) {
        const struct cf_ldso_node *n = &r.nodes[i];
        if (n->path || n->parent < ext || !n->needed)
            continue;
        struct strbuf tried = STRBUF_INIT;
        for (size_t k = 0; k < n->n_considered && k < SHOWN_DIRS; k++)
            cf_sb_addf(&tried, "%s%s", k ? ", " : "", n->considered[k].path);
        if (n->n_considered > SHOWN_DIRS)
            cf_sb_addf(&tried, " +%zu more", n->n_considered - SHOWN_DIRS);
        const char *by = n->parent == ext ? module : r.objects[n->parent].path;
        struct cf_host_lib h;
        cf_error herr = CF_ERROR_INIT;
        int in_tk = !strchr(n->needed, '/') && cf_host_lib_locate(n->needed, NULL, &h, &herr) == 0;
        cf_error_clear(&herr);
        char *toolkit = in_tk && h.in_toolkit ? cf_asprintf("; the toolkit %s names has it (%s), off the loader's "
                                                            "path", h.toolkit_var, h.in_toolkit)
                                              : cf_strdup("");
        cf_strvec_pushf(&t->bridge_plugin_missing, "%s (%s) needs %s%s%s, which this host's loader does not find "
                                                    "(it looked in: %s)%s",
                        module, path, n->needed, by == module ? "" : " through ", by == module ? "" : by,
                        tried.len ? tried.buf : "nothing", toolkit);
        free(toolkit);
        if (in_tk)
            cf_host_lib_release(&h);
        cf_sb_release(&tried);
    }
    cf_ldso_result_release(&r);
out:
    free(torch_c);
    free(module);
    free(path);
}

static void use_found(const char *site, const char *found, struct cf_libtorch *t, const struct strvec *markers)
{
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, found, "\n", 0);
    for (size_t i = 0; i < lines.n; i++) {
        struct strvec f = STRVEC_INIT;
        cf_strvec_split(&f, lines.v[i], "\t", 1);
        if (f.n == 1 && !strcmp(f.v[0], "L"))
            cf_strvec_pushf(&t->bridge_walk_bounded, "%s: more than %d package directories or %d extension modules "
                                                     "(names in sorted order; the rest were not looked at)",
                            site, MAX_DIRS, MAX_MODULES);
        char *module = f.n >= 2 ? dotted(f.v[1]) : NULL;
        if (module && f.n == 5 && !strcmp(f.v[0], "B") && !cf_strvec_contains(markers, module)) {
            struct strvec libs = STRVEC_INIT;
            cf_strvec_split(&libs, f.v[4], " ", 0);
            for (size_t k = 0; k < libs.n; k++)
                need_lib(t, libs.v[k], f.v[2], f.v[3], module);
            cf_strvec_clear(&libs);
        } else if (module && f.n == 2 && !strcmp(f.v[0], "P")) {
            plugin_needs(site, f.v[1], t);
        } else if (module && f.n == 3 && !strcmp(f.v[0], "U")) {
            cf_strvec_pushf(&t->bridge_unreadable, "%s (%s): %s", module, f.v[1], f.v[2]);
        }
        free(module);
        cf_strvec_clear(&f);
    }
    cf_strvec_clear(&lines);
}

static void bridge_modules(const char *site, int no_cache, struct cf_libtorch *t, const struct strvec *markers)
{
    struct strbuf cached = STRBUF_INIT;
    if (!no_cache && cf_depcache_get(WALK_CACHE_KIND, site, strlen(site), &cached)) {
        use_found(site, cf_sb_str(&cached), t, markers);
        cf_sb_release(&cached);
        return;
    }
    struct walk w = { .site = site, .found = STRBUF_INIT, .deps = STRVEC_INIT, .complete = 1 };
    walk_dir(&w, "", 0);
    /* a walk stopped at a bound is remembered too: it visits names in sorted
     * order, so the same directories give the same stop (a large ML
     * environment re-walked 2,048 directories on every warm run) */
    if (!w.complete)
        cf_sb_adds(&w.found, "L\n");
    if (!no_cache)
        cf_depcache_put(WALK_CACHE_KIND, site, strlen(site), cf_sb_str(&w.found), w.found.len,
                        (const char *const *)cf_strvec_argv(&w.deps));
    use_found(site, cf_sb_str(&w.found), t, markers);
    cf_sb_release(&w.found);
    cf_strvec_clear(&w.deps);
}

void cf_survey_bridge_needs(const char *site, int no_cache, struct cf_libtorch *t)
{
    DIR *d = opendir(site);
    struct dirent *de;
    int n = 0;
    struct strvec markers = STRVEC_INIT;
    while (d && n < MAX_MARKERS && (de = readdir(d))) {
        if (!cf_ends_with(de->d_name, ".dist-info"))
            continue;
        char *marker = cf_asprintf("%s/%s/cclforge.json", site, de->d_name);
        if (cf_is_file(marker)) {
            one_marker(marker, t, &markers);
            n++;
        }
        free(marker);
    }
    if (d) {
        closedir(d);
        bridge_modules(site, no_cache, t, &markers);
    }
    cf_strvec_clear(&markers);
}
