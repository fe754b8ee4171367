/* libtorch discovery and facts: where it is, which version and flavour, the C++
 * ABI it was built with, and the NCCL/RCCL it carries or loads. Nothing is
 * loaded or imported; files are read with the inspection engine. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/scancache.h"
#include "survey/survey_internal.h"

/* ---- small readers ---- */

static char *read_small(const char *path, size_t max)
{
    struct strbuf sb = STRBUF_INIT;
    if (cf_read_file(path, max, &sb, NULL) < 0) {
        cf_sb_release(&sb);
        return NULL;
    }
    return cf_sb_detach(&sb);
}

/* The quoted value of `name = '...'` / `name: Optional[str] = '...'` in version.py;
 * NULL for None or absent. */
static char *py_assignment(const char *text, const char *name)
{
    size_t nlen = strlen(name);
    for (const char *line = text; line && *line;) {
        if (!strncmp(line, name, nlen) && (line[nlen] == ' ' || line[nlen] == ':' || line[nlen] == '=')) {
            const char *eq = strchr(line, '=');
            const char *eol = strchr(line, '\n');
            if (eq && (!eol || eq < eol)) {
                const char *q = eq + 1;
                while (*q == ' ')
                    q++;
                if (*q == '\'' || *q == '"') {
                    const char *end = strchr(q + 1, *q);
                    if (end && (!eol || end < eol))
                        return cf_strndup(q + 1, (size_t)(end - q - 1));
                }
                return NULL;
            }
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return NULL;
}

/* "2.5.1+cu124" -> "12.4"; "2.4.0+rocm6.1" -> "6.1"; NULL otherwise. */
static char *runtime_from_local_version(const char *version)
{
    const char *plus = version ? strchr(version, '+') : NULL;
    if (!plus)
        return NULL;
    if (cf_starts_with(plus, "+cu")) {
        const char *d = plus + 3;
        size_t n = strspn(d, "0123456789");
        if (n >= 3)
            return cf_asprintf("%.*s.%c", (int)(n - 1), d, d[n - 1]);
        return NULL;
    }
    if (cf_starts_with(plus, "+rocm")) {
        return cf_version_at(plus + 5);
    }
    return NULL;
}

/* The torch-*.dist-info next to a torch package directory. */
static char *find_dist_info(const char *torch_dir)
{
    char *parent = cf_dirname(torch_dir);
    DIR *d = opendir(parent);
    char *found = NULL;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) && !found)
            if (cf_starts_with(de->d_name, "torch-") && cf_ends_with(de->d_name, ".dist-info"))
                found = cf_path_join(parent, de->d_name);
        closedir(d);
    }
    free(parent);
    return found;
}

/* METADATA header value ("Version: 2.9.1") and the nvidia-nccl pin
 * ("Requires-Dist: nvidia-nccl-cu13==2.27.7; platform_system == ..."). */
static void read_metadata(const char *dist_info, char **version, char **nccl_pin)
{
    char *path = cf_path_join(dist_info, "METADATA");
    char *text = read_small(path, 4 << 20);
    free(path);
    if (!text)
        return;
    for (char *line = text; line && *line;) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = 0;
        if (!*version && cf_starts_with(line, "Version: "))
            *version = cf_strdup(line + 9);
        if (!*nccl_pin && cf_starts_with(line, "Requires-Dist: nvidia-nccl-")) {
            const char *eqeq = strstr(line, "==");
            if (eqeq)
                *nccl_pin = cf_version_at(eqeq + 2);
        }
        line = eol ? eol + 1 : NULL;
    }
    free(text);
}

char *cf_torch_nccl_pin(const char *torch_dir)
{
    char *dist = find_dist_info(torch_dir);
    char *version = NULL, *pin = NULL;
    if (dist)
        read_metadata(dist, &version, &pin);
    free(version);
    free(dist);
    return pin;
}

/* ---- facts ---- */

static void detect_version(struct cf_libtorch *t)
{
    /* A torch package (version.py), a C++ distribution (build-version), a wheel's
     * dist-info, and the C++ header as the last resort. */
    char *vp = cf_path_join(t->root, "version.py");
    char *text = read_small(vp, 1 << 20);
    free(vp);
    if (text) {
        t->version = py_assignment(text, "__version__");
        if (t->version)
            t->version_source = cf_strdup("torch/version.py");
        char *cuda = py_assignment(text, "cuda"), *hip = py_assignment(text, "hip");
        if (cuda)
            t->gpu_runtime_version = cuda;
        else if (hip) /* "6.2.41133-dd7f95766": keep the dotted release */
            t->gpu_runtime_version = cf_version_at(hip);
        free(hip);
        free(text);
    }
    if (!t->version) {
        char *bv = cf_path_join(t->root, "build-version");
        text = read_small(bv, 4096);
        free(bv);
        if (text) {
            struct strbuf sb = STRBUF_INIT;
            cf_sb_adds(&sb, text);
            cf_sb_rtrim(&sb);
            if (sb.len) {
                t->version = cf_sb_detach(&sb);
                t->version_source = cf_strdup("build-version");
            }
            cf_sb_release(&sb);
            free(text);
        }
    }
    char *dist = find_dist_info(t->root);
    if (dist) {
        char *mv = NULL;
        read_metadata(dist, &mv, &t->nccl_built_against);
        if (!t->version && mv) {
            t->version = mv;
            t->version_source = cf_strdup(cf_basename(dist));
            mv = NULL;
        }
        free(mv);
        free(dist);
    }
    if (!t->version) {
        char *vh = cf_path_join(t->root, "include/torch/csrc/api/include/torch/version.h");
        text = read_small(vh, 1 << 16);
        free(vh);
        const char *p = text ? strstr(text, "#define TORCH_VERSION \"") : NULL;
        if (p) {
            p += strlen("#define TORCH_VERSION \"");
            const char *end = strchr(p, '"');
            if (end) {
                t->version = cf_strndup(p, (size_t)(end - p));
                t->version_source = cf_strdup("include/torch/version.h");
            }
        }
        free(text);
    }
    if (!t->gpu_runtime_version)
        t->gpu_runtime_version = runtime_from_local_version(t->version);
}

/* The C++11 ABI flag: TorchConfig.cmake records the flag the build used
 * (TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=N"); without it, libc10's exported
 * symbols tell: the new ABI mangles std::string as std::__cxx11::basic_string. */
static void detect_abi(struct cf_libtorch *t)
{
    static const char *const configs[] = { "share/cmake/Torch/TorchConfig.cmake", NULL };
    for (const char *const *c = configs; *c && t->cxx11_abi < 0; c++) {
        char *path = cf_path_join(t->root, *c);
        char *text = read_small(path, 1 << 20);
        free(path);
        const char *p = text ? strstr(text, "_GLIBCXX_USE_CXX11_ABI=") : NULL;
        if (p) {
            int v = p[strlen("_GLIBCXX_USE_CXX11_ABI=")] - '0';
            if (v == 0 || v == 1) {
                t->cxx11_abi = v;
                t->abi_source = cf_strdup("TorchConfig.cmake");
            }
        }
        free(text);
    }
    if (t->cxx11_abi >= 0)
        return;
    char *c10 = cf_path_join(t->lib_dir, "libc10.so");
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open(c10, &elf, &err) == 0) {
        const struct cf_elf_symbol *syms;
        size_t n = 0, strings = 0, cxx11 = 0;
        if (cf_elf_dynsyms(elf, &syms, &n, &err) == 0) {
            for (size_t i = 0; i < n; i++) {
                if (!syms[i].defined || !syms[i].name || !cf_starts_with(syms[i].name, "_ZN3c10"))
                    continue;
                if (strstr(syms[i].name, "__cxx11"))
                    cxx11++;
                else if (strstr(syms[i].name, "Ss") || strstr(syms[i].name, "basic_string"))
                    strings++;
            }
        }
        if (cxx11 || strings) {
            t->cxx11_abi = cxx11 > 0;
            t->abi_source = cf_strdup("symbols of libc10.so");
        }
        cf_elf_close(elf);
    }
    cf_error_clear(&err);
    free(c10);
}

static void detect_gpu_lib(const struct cf_survey_opts *opts, struct cf_libtorch *t)
{
    size_t n;
    const struct cf_vendor_profile *profiles = cf_vendor_profiles(&n);
    const struct cf_vendor_profile *p = NULL;
    for (size_t i = 0; i < n && !t->gpu_lib; i++) {
        char *lib = cf_path_join(t->lib_dir, profiles[i].torch_gpu_lib);
        if (cf_is_file(lib)) {
            t->gpu_lib = lib;
            p = &profiles[i];
        } else {
            free(lib);
        }
    }
    char *cpu = cf_path_join(t->lib_dir, "libtorch_cpu.so");
    if (p)
        t->flavour = p->comm->lib == CF_COMMLIB_RCCL ? CF_TORCH_HIP : CF_TORCH_CUDA;
    else if (cf_is_file(cpu))
        t->flavour = CF_TORCH_CPU;
    if (!p) {
        cf_closure_check(opts, cpu, NULL, NULL, NULL, &t->missing_libs, &t->undefined_symbols);
        free(cpu);
        return;
    }
    free(cpu);

    /* One open of the (possibly 1 GB) library: banner from read-only data, GPU
     * archs from fatbin / offload-bundle headers only. */
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open(t->gpu_lib, &elf, &err) == 0) {
        struct cf_scan_facts facts;
        int scanned = cf_survey_scan(opts, elf, &facts) == 0;
        const struct cf_commlib_banner *banner = scanned && facts.id.found ? &facts.id.banner : NULL;
        if (banner) {
            t->embedded = cf_xcalloc(1, sizeof *t->embedded);
            t->embedded->kind = cf_strdup(p->comm->kind);
            t->embedded->path = cf_strdup(t->gpu_lib);
            t->embedded->how = cf_strdup("embedded");
            cf_comm_from_banner(t->embedded, banner);
        }
        t->archs_known = scanned && cf_gpu_archs_of(&facts.gpu, &t->archs);
        if (scanned)
            cf_scan_facts_release(&facts);
        if (t->embedded) {
            t->embedded->archs_known = t->archs_known;
            for (size_t i = 0; i < t->archs.n; i++)
                cf_strvec_push(&t->embedded->archs, t->archs.v[i]);
        }
        cf_elf_close(elf);
    } else {
        t->problem = cf_asprintf("%s", cf_error_message(&err));
    }
    cf_error_clear(&err);

    int needed = 0;
    char *loaded = NULL;
    cf_closure_check(opts, t->gpu_lib, p->comm->soname, &needed, &loaded, &t->missing_libs, &t->undefined_symbols);
    t->needs_comm_lib = needed;
    /* LD_PRELOAD puts its libnccl first in the process: DT_NEEDED lookups by
     * soname then match it instead of the search path's copy. */
    char *pre = needed ? cf_preloaded_comm_lib(opts, p->comm->soname) : NULL;
    if (pre) {
        t->loaded = cf_comm_lib_examine(opts, pre, p->comm->kind, "LD_PRELOAD", 0);
        free(pre);
    } else if (loaded) {
        t->loaded = cf_comm_lib_examine(opts, loaded, p->comm->kind, "loaded", 0);
    }
    free(loaded);
    if (!t->nccl_built_against && t->embedded && t->embedded->version)
        t->nccl_built_against = cf_strdup(t->embedded->version);
}

/* ---- locating ---- */

/* A directory is a libtorch root when lib/ holds libtorch_cpu.so or libtorch.so. */
static int is_torch_lib_dir(const char *dir)
{
    static const char *const libs[] = { "libtorch_cpu.so", "libtorch.so", NULL };
    for (const char *const *l = libs; *l; l++) {
        char *p = cf_path_join(dir, *l);
        int ok = cf_is_file(p);
        free(p);
        if (ok)
            return 1;
    }
    return 0;
}

static void read_variant(struct cf_libtorch *t, const char *variants_root, char **dir)
{
    char *active = cf_path_join(variants_root, ".active");
    char *text = read_small(active, 4096);
    free(active);
    struct strbuf rel = STRBUF_INIT;
    if (text)
        cf_sb_adds(&rel, text);
    cf_sb_rtrim(&rel);
    free(text);
    if (!rel.len || rel.buf[0] == '/' || strstr(rel.buf, "..")) {
        t->problem = cf_asprintf("%s/.active must hold a relative variant path (found \"%s\")", variants_root,
                                 cf_sb_str(&rel));
        cf_sb_release(&rel);
        return;
    }
    t->variant = cf_strdup(rel.buf);
    char *variant_dir = cf_path_join(variants_root, rel.buf);
    free(*dir); /* variants_root may be *dir: not used below */
    *dir = variant_dir;
    char *arch = cf_path_join(*dir, ".arch");
    text = read_small(arch, 1 << 16);
    free(arch);
    if (text) {
        struct strvec lines = STRVEC_INIT;
        cf_strvec_split(&lines, text, "\n", 0);
        for (size_t i = 0; i < lines.n; i++)
            if (strchr(lines.v[i], '=') && lines.v[i][0] != '#')
                cf_strvec_push(&t->variant_meta, lines.v[i]);
        cf_strvec_clear(&lines);
        free(text);
    }
    cf_sb_release(&rel);
}

static int same_root(const struct cf_survey *s, const char *root)
{
    for (size_t i = 0; i + 1 < s->n_torches; i++)
        if (s->torches[i].root && !strcmp(s->torches[i].root, root))
            return 1;
    return 0;
}

static void add_candidate(const struct cf_survey_opts *opts, struct cf_survey *s, const char *given,
                          const char *found_by)
{
    struct cf_libtorch *t = cf_survey_add_torch(s);
    t->found_by = cf_strdup(found_by);
    /* a torch package's site-packages as named (a venv links torch in): its bridges */
    if (!strcmp(cf_basename(given), "torch")) {
        char *site = cf_dirname(given);
        cf_survey_bridge_needs(site, opts->no_cache, t);
        free(site);
    }
    char *dir = cf_realpath(given);
    if (!dir) {
        t->root = cf_strdup(given);
        t->problem = cf_asprintf("%s does not exist", given);
        return;
    }
    char *active = cf_path_join(dir, ".active");
    int variants = cf_is_file(active);
    free(active);
    if (variants) {
        char *how = cf_asprintf("%s (variants root %s, .active)", found_by, dir);
        free(t->found_by);
        t->found_by = how;
        read_variant(t, dir, &dir);
        if (t->problem) {
            t->root = dir;
            return;
        }
    }
    char *lib = cf_path_join(dir, "lib");
    if (is_torch_lib_dir(lib)) {
        t->root = dir;
        t->lib_dir = lib;
    } else if (is_torch_lib_dir(dir)) {
        free(lib);
        t->lib_dir = dir;
        t->root = cf_dirname(dir);
    } else {
        free(lib);
        t->root = dir;
        t->problem = cf_asprintf("%s holds no libtorch (no lib/libtorch_cpu.so or lib/libtorch.so)", dir);
        return;
    }
    if (same_root(s, t->root)) { /* LIBTORCH and Python pointing at one install */
        free(t->found_by);
        free(t->root);
        free(t->lib_dir);
        free(t->variant);
        cf_strvec_clear(&t->variant_meta);
        s->n_torches--;
        return;
    }
    detect_version(t);
    detect_abi(t);
    detect_gpu_lib(opts, t);
}

int cf_probe_libtorch(struct probe_ctx *ctx, struct cf_survey *s, cf_error *err)
{
    const struct cf_survey_opts *opts = ctx->opts;
    if (opts->libtorch) {
        add_candidate(opts, s, opts->libtorch, "--libtorch");
        /* What the user named must be a libtorch: say so instead of a silent survey. */
        if (s->n_torches && s->torches[s->n_torches - 1].problem)
            return cf_error_set(err, CF_ERR_USAGE, "--libtorch %s: %s", opts->libtorch,
                                s->torches[s->n_torches - 1].problem);
    }
    const char *env = cf_env_get(opts, "LIBTORCH");
    if (env)
        add_candidate(opts, s, env, "LIBTORCH");
    const struct cf_python_info *py = cf_python_locate(ctx);
    if (py && py->torch_dir) {
        char *how = cf_asprintf("python (%s)", py->executable);
        add_candidate(opts, s, py->torch_dir, how);
        free(how);
    }
    return 0;
}
