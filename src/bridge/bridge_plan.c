/* `bridge plan`: every input of the bridge build resolved, each with where it
 * came from. Paths come only from flags, the environment (CUDA_HOME, ROCM_PATH,
 * LIBTORCH, NCCL_HOME, ...) and detection (the Python's torch, compilers on PATH):
 * there are no hard-coded install locations here. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/bridge.h"
#include "cclforge/fs.h"
#include "cclforge/share.h"
#include "cclforge/spawn.h"
#include "cclforge/survey.h"
#include "cclforge/vendor.h"
#include "pkg/elf_facts.h"

/* Every vendor fact comes from the vendor table (cclforge/vendor.h,
 * cf_vendor_get): the libraries to link, the comm header and library, the
 * root's variables. */

/* torch_gpu_link is {c10_<gpu>, torch_<gpu>}; the comm library is comm->link_name. */
enum { LINK_C10_GPU, LINK_TORCH_GPU };

/* "nccl.h" / "rccl.h": the file name of the profile's comm header. */
static const char *comm_header_name(const struct cf_vendor_profile *vp)
{
    return cf_basename(vp->comm->headers[0]);
}

/* Linked for every vendor: the CPU half of libtorch and the Python bindings. */
static const char *const common_libs[] = { "c10", "torch", "torch_cpu", "torch_python" };

static void item_set(struct cf_bridge_item *it, const char *value, const char *from)
{
    free(it->value);
    free(it->from);
    it->value = value ? cf_strdup(value) : NULL;
    it->from = from ? cf_strdup(from) : NULL;
}

static void item_push(struct cf_bridge_item **v, size_t *n, const char *value, const char *from)
{
    *v = cf_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[*n].value = cf_strdup(value);
    (*v)[*n].from = cf_strdup(from);
    (*n)++;
}

static void problem(struct cf_bridge_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct cf_bridge_plan *p, const char *fmt, ...)
{
    va_list ap;
    struct strbuf sb = STRBUF_INIT;
    va_start(ap, fmt);
    cf_sb_addvf(&sb, fmt, ap);
    va_end(ap);
    cf_strvec_push_nodup(&p->problems, cf_sb_detach(&sb));
}

static int file_contains(const char *path, const char *needle)
{
    struct strbuf sb = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    int found = cf_read_file(path, 8u << 20, &sb, &err) == 0 && strstr(cf_sb_str(&sb), needle) != NULL;
    cf_error_clear(&err);
    cf_sb_release(&sb);
    return found;
}

/* "#define NCCL_MAJOR 2" ... -> "2.30.7" */
static char *header_version(const char *path)
{
    static const char *const keys[] = { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" };
    struct strbuf sb = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    int v[3] = { -1, -1, -1 };
    if (cf_read_file(path, 8u << 20, &sb, &err) == 0) {
        for (int k = 0; k < 3; k++) {
            char *pat = cf_asprintf("#define %s ", keys[k]);
            const char *at = strstr(cf_sb_str(&sb), pat);
            if (at)
                v[k] = atoi(at + strlen(pat));
            free(pat);
        }
    }
    cf_error_clear(&err);
    cf_sb_release(&sb);
    if (v[0] < 0 || v[1] < 0)
        return NULL;
    return v[2] >= 0 ? cf_asprintf("%d.%d.%d", v[0], v[1], v[2]) : cf_asprintf("%d.%d", v[0], v[1]);
}

/* Asks the chosen Python about itself (and where its torch is, without importing it). */
static void probe_python(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, char **torch_from_python)
{
    const char *py = o->python ? o->python : "python3";
    const char *from = o->python ? "--python" : "default (python3 on PATH)";
    item_set(&p->python, py, from);
    char *path = cf_which(py);
    if (!path) {
        problem(p, "Python '%s' not found; pass --python PATH", py);
        return;
    }
    item_set(&p->python, path, from);
    free(path);
    /* isolated (-I): the build must not depend on the caller's PYTHONPATH or user site */
    struct cf_python_info info;
    cf_error err = CF_ERROR_INIT;
    if (cf_python_probe(p->python.value, NULL, 1, &info, &err) < 0) {
        problem(p, "cannot ask %s for its EXT_SUFFIX and include dir: %s", p->python.value, cf_error_message(&err));
        cf_error_clear(&err);
        cf_python_info_release(&info);
        return;
    }
    p->python_version = cf_strdup(info.version);
    p->python_tag = cf_strdup(info.tag);
    p->ext_suffix = cf_strdup(info.ext_suffix);
    if (info.include) {
        char *inc_from = cf_asprintf("sysconfig of %s", p->python.value);
        item_set(&p->python_include, info.include, inc_from);
        free(inc_from);
        char *h = cf_path_join(info.include, "Python.h");
        if (!cf_is_file(h))
            problem(p, "%s is missing: install the Python development headers for %s (e.g. python3-dev)", h,
                    p->python.value);
        free(h);
    }
    *torch_from_python = cf_strdup(info.torch_dir);
    if (!p->ext_suffix)
        problem(p, "%s reports no EXT_SUFFIX", p->python.value);
    cf_python_info_release(&info);
}

static void resolve_torch(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, char *torch_from_python)
{
    const char *dir = NULL, *from = NULL;
    const char *env = getenv("LIBTORCH");
    char *python_from = NULL;
    if (o->libtorch) {
        dir = o->libtorch;
        from = "--libtorch";
    } else if (env && *env) {
        dir = env;
        from = "LIBTORCH";
    } else if (torch_from_python) {
        dir = torch_from_python;
        python_from = cf_asprintf("detected: the torch package of %s", p->python.value ? p->python.value : "python");
        from = python_from;
    }
    if (!dir) {
        problem(p, "no libtorch: pass --libtorch DIR (a libtorch root or site-packages/torch), set LIBTORCH, or "
                   "install torch for %s",
                p->python.value ? p->python.value : "the Python");
        free(python_from);
        return;
    }
    char *abs = cf_realpath(dir);
    char *hdr = cf_asprintf("%s/include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp", abs ? abs : dir);
    char *lib = cf_asprintf("%s/lib", abs ? abs : dir);
    if (!abs || !cf_is_dir(lib) || !cf_is_file(hdr)) {
        problem(p, "no libtorch at %s (from %s): expected include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp "
                   "and lib/ under it",
                dir, from);
    } else {
        item_set(&p->torch_dir, abs, from);
        /* torch's own version: version.py (Python package) or build-version (libtorch zip) */
        char *vpy = cf_path_join(abs, "version.py"), *bv = cf_path_join(abs, "build-version");
        struct strbuf sb = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        if (cf_read_file(vpy, 1 << 16, &sb, &err) == 0) {
            const char *at = strstr(cf_sb_str(&sb), "\n__version__ =");
            const char *q = at ? strchr(at, '\'') : NULL;
            if (!q && at)
                q = strchr(at, '"');
            if (q) {
                const char *e = strchr(q + 1, *q);
                if (e)
                    p->torch_version = cf_strndup(q + 1, (size_t)(e - q - 1));
            }
        } else if (cf_read_file(bv, 4096, &sb, &err) == 0) {
            cf_sb_rtrim(&sb);
            p->torch_version = cf_strdup(cf_sb_str(&sb));
        }
        cf_error_clear(&err);
        cf_sb_release(&sb);
        free(vpy);
        free(bv);
        /* the C++ standard its headers require */
        char *aten = cf_asprintf("%s/include/ATen/ATen.h", abs);
        if (file_contains(aten, "C++20 or later"))
            p->cxx_std = cf_strdup("c++20");
        else
            p->cxx_std = cf_strdup("c++17");
        free(aten);
        /* the C++11 ABI: std::__cxx11 names in libc10's exported symbols */
        char *c10 = cf_asprintf("%s/libc10.so", lib);
        cf_error aerr = CF_ERROR_INIT;
        int has = cf_is_file(c10) ? cf_elf_file_defines_symbol(c10, "__cxx11", 0, &aerr) : -1;
        p->cxx11_abi = has < 0 ? -1 : has;
        p->cxx11_abi_from = cf_asprintf(has < 0 ? "unknown (%s unreadable); assuming the new ABI"
                                                : "std::__cxx11 symbols %s in %s",
                                        has < 0 ? c10 : (has ? "present" : "absent"), c10);
        cf_error_clear(&aerr);
        free(c10);
    }
    free(abs);
    free(hdr);
    free(lib);
    free(python_from);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first of the DTK profile's root variables (DTK_HOME, ROCM_PATH, ...)
 * naming a root with DTK's markers, NULL when none. */
static const char *dtk_root_from_env(void)
{
    const struct cf_vendor_profile *dtk = cf_vendor_get(CF_VENDOR_DTK);
    for (const char *const *e = dtk->root_env; *e; e++) {
        const char *v = getenv(*e);
        if (v && *v && cf_toolkit_has_markers(dtk, v))
            return *e;
    }
    return NULL;
}

static void resolve_toolkit_root(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, const struct cf_survey *sv)
{
    const struct cf_vendor_profile *vp = cf_vendor_get(p->vendor);
    if (o->toolkit_root) {
        item_set(&p->toolkit_root, o->toolkit_root, "--toolkit");
        return;
    }
    for (const char *const *e = vp->root_env; *e; e++) {
        const char *v = getenv(*e);
        if (v && *v) {
            item_set(&p->toolkit_root, v, *e);
            return;
        }
    }
    const struct cf_toolkit *tk = cf_survey_toolkit(sv, vp->id);
    if (tk) {
        char *from = cf_asprintf("doctor's survey (%s)", tk->found_by ? tk->found_by : "found");
        item_set(&p->toolkit_root, tk->root, from);
        free(from);
        return;
    }
    const char *compiler = vp->compiler;
    char *path = cf_which(compiler);
    if (path) {
        char *bin = cf_dirname(path), *root = cf_dirname(bin);
        char *from = cf_asprintf("detected: %s on PATH", compiler);
        item_set(&p->toolkit_root, root, from);
        free(from);
        free(bin);
        free(root);
        free(path);
    }
}

/* doctor's survey, toolkits only: which vendor toolkits this host has. */
static void survey_toolkits(struct cf_survey *sv)
{
    struct cf_survey_opts so = { 0 };
    so.skip = CF_SURVEY_SKIP_GPUS | CF_SURVEY_SKIP_TORCH | CF_SURVEY_SKIP_COMPILERS | CF_SURVEY_SKIP_COMM |
              CF_SURVEY_SKIP_PYTHON | CF_SURVEY_SKIP_NCCL_CONFIG | CF_SURVEY_SKIP_FABRIC;
    cf_error err = CF_ERROR_INIT;
    if (cf_survey_run(&so, sv, &err) < 0)
        cf_survey_release(sv); /* a broken injected survey file: plan without it */
    cf_error_clear(&err);
}

static void resolve_vendor(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, const struct cf_survey *sv)
{
    if (o->vendor) {
        const struct cf_vendor_profile *vp = cf_vendor_by_word(o->vendor);
        if (vp) {
            p->vendor = vp->vendor;
            item_set(&p->vendor_item, vp->word, "--vendor");
            return;
        }
        struct strbuf words = STRBUF_INIT;
        cf_vendor_words(&words);
        problem(p, "unknown vendor '%s': use %s", o->vendor, cf_sb_str(&words));
        cf_sb_release(&words);
        return;
    }
    /* the libtorch decides what can be linked; doctor's survey tells DTK from ROCm */
    if (p->torch_dir.value) {
        char *hip = cf_asprintf("%s/lib/%s", p->torch_dir.value, cf_vendor_get(CF_VENDOR_ROCM)->torch_gpu_lib);
        char *cuda = cf_asprintf("%s/lib/%s", p->torch_dir.value, cf_vendor_get(CF_VENDOR_NVIDIA)->torch_gpu_lib);
        if (cf_is_file(hip)) {
            const struct cf_toolkit *dtk = cf_survey_toolkit(sv, cf_vendor_get(CF_VENDOR_DTK)->id);
            const char *dtk_var = dtk ? NULL : dtk_root_from_env();
            p->vendor = dtk || dtk_var ? CF_VENDOR_DTK : CF_VENDOR_ROCM;
            char *from = dtk ? cf_asprintf("detected: %s and doctor's survey found DTK at %s", hip, dtk->root)
                         : dtk_var ? cf_asprintf("detected: %s and a DTK layout at %s", hip, dtk_var)
                                   : cf_asprintf("detected: %s", hip);
            item_set(&p->vendor_item, cf_vendor_get(p->vendor)->word, from);
            free(from);
        } else if (cf_is_file(cuda)) {
            p->vendor = CF_VENDOR_NVIDIA;
            char *from = cf_asprintf("detected: %s", cuda);
            item_set(&p->vendor_item, cf_vendor_get(p->vendor)->word, from);
            free(from);
        }
        free(hip);
        free(cuda);
    }
    /* the table's order: DTK before ROCm (a DTK root is ROCm-shaped too), then CUDA */
    size_t n;
    const struct cf_vendor_profile *profiles = cf_vendor_profiles(&n);
    for (size_t i = 0; !p->vendor_item.value && i < n; i++) {
        const struct cf_toolkit *tk = cf_survey_toolkit(sv, profiles[i].id);
        if (!tk)
            continue;
        p->vendor = profiles[i].vendor;
        char *from = cf_asprintf("doctor's survey: %s toolkit at %s (%s)", tk->vendor, tk->root,
                                 tk->found_by ? tk->found_by : "found");
        item_set(&p->vendor_item, profiles[i].word, from);
        free(from);
    }
    if (!p->vendor_item.value) {
        p->vendor = CF_VENDOR_NVIDIA;
        item_set(&p->vendor_item, cf_vendor_get(p->vendor)->word,
                 "default (no GPU libtorch and no toolkit found by the survey)");
    }
}

static void resolve_compiler(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    const char *cxx = o->cxx, *from = "--cxx";
    if (!cxx && getenv("CXX") && *getenv("CXX")) {
        cxx = getenv("CXX");
        from = "CXX";
    }
    if (!cxx) {
        cxx = "g++";
        from = "default (g++ on PATH)";
    }
    char *path = cf_which(cxx);
    if (!path) {
        problem(p, "C++ compiler '%s' (from %s) not found; install g++ >= %d or pass --cxx", cxx, from,
                CF_BRIDGE_MIN_GCC);
        return;
    }
    item_set(&p->cxx, path, from);
    free(path);
    struct cf_compiler c;
    cf_error perr = CF_ERROR_INIT;
    if (cf_compiler_probe(p->cxx.value, &c, &perr) < 0 && !c.banner) {
        problem(p, "%s", cf_error_message(&perr));
        cf_error_clear(&perr);
        cf_compiler_release(&c);
        return;
    }
    cf_error_clear(&perr);
    int is_clang = c.family && !strcmp(c.family, "clang");
    int major = c.version ? c.major : 0;
    p->cxx_major = major;
    p->cxx_version = cf_strdup(c.version);
    int cxx20 = p->cxx_std && !strcmp(p->cxx_std, "c++20");
    int need = is_clang ? (cxx20 ? 10 : 5) : (cxx20 ? CF_BRIDGE_MIN_GCC_CXX20 : CF_BRIDGE_MIN_GCC);
    p->cxx_gate = cf_asprintf("%s >= %d (%s for torch's headers%s)", is_clang ? "clang" : "GCC", need,
                              p->cxx_std ? p->cxx_std : "c++17",
                              is_clang ? "" : "; GCC 8 and older cannot compile torch's C++17 headers");
    if (major < need)
        problem(p, "compiler %s is %s %s (\"%s\"): too old, the bridge needs %s; install a newer one and pass --cxx "
                   "or set CXX",
                p->cxx.value, is_clang ? "clang" : "GCC", p->cxx_version ? p->cxx_version : "?", c.banner, p->cxx_gate);
    cf_compiler_release(&c);
}

/* The nccl.h that goes with the NCCL library that will be linked: one source gives both. */
struct comm_source {
    char *include;
    char *lib_dir;
    char *from;
    char *rpath; /* $ORIGIN-relative when the installed layout has it, else NULL */
};

static int comm_candidate(const char *inc, const char *libdir, const struct cf_comm_profile *comm, const char *from,
                          const char *rpath, struct comm_source *out, struct strvec *tried)
{
    char *h = cf_path_join(inc, cf_basename(comm->headers[0]));
    char *so = cf_path_join(libdir, comm->stem);
    char *so_major = cf_path_join(libdir, comm->soname);
    int ok = cf_is_file(h) && (cf_is_file(so) || cf_is_file(so_major));
    cf_strvec_pushf(tried, "%s (%s)", inc, from);
    if (ok) {
        out->include = cf_strdup(inc);
        out->lib_dir = cf_strdup(libdir);
        out->from = cf_strdup(from);
        out->rpath = rpath ? cf_strdup(rpath) : NULL;
    }
    free(h);
    free(so);
    free(so_major);
    return ok;
}

static void resolve_comm(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, struct comm_source *cs)
{
    const struct cf_vendor_profile *vp = cf_vendor_get(p->vendor);
    struct strvec tried = STRVEC_INIT;
    const char *nccl_home = o->nccl_home ? o->nccl_home : getenv("NCCL_HOME");
    const char *nh_from = o->nccl_home ? "--nccl-home" : "NCCL_HOME";
    int found = 0;
    if (p->vendor == CF_VENDOR_NVIDIA) {
        if (nccl_home && *nccl_home) {
            char *inc = cf_path_join(nccl_home, "include"), *lib = cf_path_join(nccl_home, "lib");
            found = comm_candidate(inc, lib, vp->comm, nh_from, NULL, cs, &tried);
            free(inc);
            free(lib);
        }
        /* pip's nvidia-nccl wheel beside torch: what torch itself was built and runs with */
        if (!found && p->torch_dir.value) {
            char *site = cf_dirname(p->torch_dir.value);
            char *inc = cf_asprintf("%s/nvidia/nccl/include", site), *lib = cf_asprintf("%s/nvidia/nccl/lib", site);
            found = comm_candidate(inc, lib, vp->comm, "pip's nvidia/nccl beside torch",
                                   "$ORIGIN/../nvidia/nccl/lib", cs, &tried);
            free(inc);
            free(lib);
            free(site);
        }
        if (!found && p->toolkit_root.value) {
            char *inc = cf_path_join(p->toolkit_root.value, "include");
            for (const char *const *d = vp->lib_dirs; !found && *d; d++) {
                char *lib = cf_path_join(p->toolkit_root.value, *d);
                char *from = cf_asprintf("the CUDA toolkit (%s)", p->toolkit_root.from);
                found = comm_candidate(inc, lib, vp->comm, from, NULL, cs, &tried);
                free(from);
                free(lib);
            }
            free(inc);
        }
    } else if (p->toolkit_root.value) {
        char *inc = cf_asprintf("%s/include/rccl", p->toolkit_root.value);
        char *lib = cf_path_join(p->toolkit_root.value, "lib");
        char *from = cf_asprintf("%s's rccl (%s)", vp->word, p->toolkit_root.from);
        found = comm_candidate(inc, lib, vp->comm, from, NULL, cs, &tried);
        free(inc);
        free(lib);
        free(from);
    }
    if (found) {
        char *h = cf_path_join(cs->include, comm_header_name(vp));
        item_set(&p->nccl_header, h, cs->from);
        p->nccl_header_version = header_version(h);
        free(h);
    } else {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < tried.n; i++)
            cf_sb_addf(&sb, "%s%s", i ? ", " : "", tried.v[i]);
        problem(p, "no %s with its %s found; searched: %s. Set %s", comm_header_name(vp), vp->comm->stem,
                tried.n ? sb.buf : "nothing (no toolkit root)",
                p->vendor == CF_VENDOR_NVIDIA ? "NCCL_HOME or CUDA_HOME" : "ROCM_PATH (the ROCm or DTK root)");
        cf_sb_release(&sb);
    }
    cf_strvec_clear(&tried);
}

static void resolve_includes(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, const struct comm_source *cs)
{
    if (p->torch_dir.value) {
        char *a = cf_path_join(p->torch_dir.value, "include");
        char *b = cf_asprintf("%s/include/torch/csrc/api/include", p->torch_dir.value);
        char *from = cf_asprintf("torch (%s)", p->torch_dir.from);
        item_push(&p->includes, &p->n_includes, a, from);
        item_push(&p->includes, &p->n_includes, b, from);
        free(a);
        free(b);
        free(from);
    }
    const char *root = p->toolkit_root.value;
    char *tk_from = root ? cf_asprintf("%s root (%s)", p->vendor == CF_VENDOR_NVIDIA ? "CUDA" : cf_vendor_get(p->vendor)->word,
                                       p->toolkit_root.from)
                         : NULL;
    if (p->vendor == CF_VENDOR_NVIDIA) {
        char *inc = root ? cf_path_join(root, "include") : NULL;
        char *rt = inc ? cf_path_join(inc, "cuda_runtime_api.h") : NULL;
        if (rt && cf_is_file(rt))
            item_push(&p->includes, &p->n_includes, inc, tk_from);
        else
            problem(p, "CUDA headers not found%s%s: set CUDA_HOME (or --toolkit) to the CUDA toolkit root",
                    inc ? " at " : "", inc ? inc : "");
        free(inc);
        free(rt);
    } else if (root) {
        char *inc = cf_path_join(root, "include"), *rccl = cf_asprintf("%s/include/rccl", root);
        char *hip = cf_asprintf("%s/hip/hip_runtime.h", inc);
        if (!cf_is_file(hip))
            problem(p, "%s is missing: %s does not look like a %s root", hip, root, cf_vendor_get(p->vendor)->word);
        item_push(&p->includes, &p->n_includes, inc, tk_from);
        if (cf_is_dir(rccl))
            item_push(&p->includes, &p->n_includes, rccl, tk_from);
        free(hip);
        free(inc);
        free(rccl);
        /* DTK ships CUDA-compatible headers in <root>/cuda/cuda-<ver>/include */
        if (p->vendor == CF_VENDOR_DTK) {
            char *cuda = cf_path_join(root, "cuda");
            DIR *d = opendir(cuda);
            struct strvec found = STRVEC_INIT;
            struct dirent *de;
            while (d && (de = readdir(d)))
                if (cf_starts_with(de->d_name, "cuda-")) {
                    char *ci = cf_asprintf("%s/%s/include", cuda, de->d_name);
                    if (cf_is_dir(ci))
                        cf_strvec_push(&found, ci);
                    free(ci);
                }
            if (d)
                closedir(d);
            qsort(found.v, found.n, sizeof *found.v, cmp_str);
            for (size_t i = found.n; i-- > 0;) /* newest (highest) first */
                item_push(&p->includes, &p->n_includes, found.v[i], tk_from);
            if (!found.n)
                problem(p, "no %s/cuda-*/include in the DTK root: DTK's CUDA-compatible headers are needed", cuda);
            cf_strvec_clear(&found);
            free(cuda);
        }
    } else {
        problem(p, "no %s root: set ROCM_PATH (or --toolkit) to the %s installation", cf_vendor_get(p->vendor)->word,
                p->vendor == CF_VENDOR_DTK ? "DTK" : "ROCm");
    }
    free(tk_from);
    for (size_t i = 0; i < o->n_extra_includes; i++) {
        if (!cf_is_dir(o->extra_includes[i]))
            problem(p, "--include %s: no such directory", o->extra_includes[i]);
        else
            item_push(&p->includes, &p->n_includes, o->extra_includes[i], "--include");
    }
    if (cs->include) {
        int dup = 0;
        for (size_t i = 0; i < p->n_includes; i++)
            dup |= !strcmp(p->includes[i].value, cs->include);
        if (!dup)
            item_push(&p->includes, &p->n_includes, cs->include, cs->from);
    }
    if (p->python_include.value)
        item_push(&p->includes, &p->n_includes, p->python_include.value, p->python_include.from);
}

/* Finds lib<name>.so, or a versioned file when only that exists (pip ships libnccl.so.2 alone). */
static void resolve_lib(struct cf_bridge_plan *p, const char *name, const char *dir, const char *from)
{
    p->libs = cf_xrealloc(p->libs, (p->n_libs + 1) * sizeof *p->libs);
    struct cf_bridge_lib *l = &p->libs[p->n_libs++];
    memset(l, 0, sizeof *l);
    l->name = cf_strdup(name);
    l->from = cf_strdup(from);
    if (!dir)
        return;
    cf_strvec_push(&l->searched, dir);
    char *plain = cf_asprintf("%s/lib%s.so", dir, name);
    if (cf_is_file(plain)) {
        l->path = plain;
        return;
    }
    free(plain);
    static const char *const majors[] = { "1", "2", "0" };
    for (size_t i = 0; i < 3 && !l->path; i++) {
        char *v = cf_asprintf("%s/lib%s.so.%s", dir, name, majors[i]);
        if (cf_is_file(v))
            l->path = v;
        else
            free(v);
    }
}

static void resolve_libs(struct cf_bridge_plan *p, const struct comm_source *cs)
{
    const struct cf_vendor_profile *vp = cf_vendor_get(p->vendor);
    char *tlib = p->torch_dir.value ? cf_path_join(p->torch_dir.value, "lib") : NULL;
    char *tfrom = cf_asprintf("torch (%s)", p->torch_dir.from ? p->torch_dir.from : "none");
    resolve_lib(p, vp->torch_gpu_link[LINK_C10_GPU], tlib, tfrom);
    resolve_lib(p, vp->torch_gpu_link[LINK_TORCH_GPU], tlib, tfrom);
    resolve_lib(p, vp->comm->link_name, cs->lib_dir, cs->from ? cs->from : "not found");
    for (size_t i = 0; i < sizeof common_libs / sizeof common_libs[0]; i++)
        resolve_lib(p, common_libs[i], tlib, tfrom);
    for (size_t i = 0; i < p->n_libs; i++) {
        struct cf_bridge_lib *l = &p->libs[i];
        if (l->path)
            continue;
        struct strbuf where = STRBUF_INIT;
        for (size_t k = 0; k < l->searched.n; k++)
            cf_sb_addf(&where, "%s%s", k ? ", " : "", l->searched.v[k]);
        if (!strcmp(l->name, vp->torch_gpu_link[LINK_TORCH_GPU]) && tlib)
            problem(p, "CPU-only libtorch: lib%s.so is not in %s, so this libtorch has no ProcessGroupNCCL; point "
                       "--libtorch at a %s build",
                    l->name, tlib, p->vendor == CF_VENDOR_NVIDIA ? "CUDA" : "ROCm/DTK");
        else
            problem(p, "library %s not found; searched: %s", l->name, where.len ? where.buf : "nothing");
        cf_sb_release(&where);
    }
    /* the GPU libtorch must really carry ProcessGroupNCCL (USE_C10D_NCCL at its build) */
    struct cf_bridge_lib *gpu = &p->libs[1];
    if (gpu->path) {
        cf_error err = CF_ERROR_INIT;
        int has = cf_elf_file_defines_symbol(gpu->path, "c10d16ProcessGroupNCCL", 0, &err);
        if (has == 0)
            problem(p, "%s exports no c10d::ProcessGroupNCCL: this libtorch was built without NCCL/RCCL "
                       "(USE_C10D_NCCL off), so there is nothing to bridge",
                    gpu->path);
        else if (has < 0)
            problem(p, "%s", cf_error_message(&err));
        cf_error_clear(&err);
    }
    free(tlib);
    free(tfrom);
}

static void resolve_defines(struct cf_bridge_plan *p)
{
    static const char *const always[][2] = {
        { "USE_C10D_NCCL", "makes torch's headers declare ProcessGroupNCCL" },
        { "C10_CUDA_NO_CMAKE_CONFIGURE_FILE", "torch's wheels ship no c10/cuda/impl/cuda_cmake_macros.h" },
    };
    for (size_t i = 0; i < 2; i++)
        item_push(&p->defines, &p->n_defines, always[i][0], always[i][1]);
    if (p->vendor != CF_VENDOR_NVIDIA) {
        item_push(&p->defines, &p->n_defines, "USE_ROCM", "HIP build of torch's headers");
        item_push(&p->defines, &p->n_defines, "__HIP_PLATFORM_AMD__=1", "HIP platform: AMD (ROCm, DTK)");
        if (p->vendor == CF_VENDOR_DTK)
            item_push(&p->defines, &p->n_defines, "__HIP_PLATFORM_HCC__=1", "older DTK HIP headers test this name");
    }
    char *abi = cf_asprintf("_GLIBCXX_USE_CXX11_ABI=%d", p->cxx11_abi == 0 ? 0 : 1);
    item_push(&p->defines, &p->n_defines, abi, p->cxx11_abi_from ? p->cxx11_abi_from : "default");
    free(abi);
    char *name = cf_asprintf("CCLFORGE_BRIDGE_NAME=%s", p->module_name);
    item_push(&p->defines, &p->n_defines, name, "the module name: PyInit_<name> follows it");
    free(name);
    name = cf_asprintf("TORCH_EXTENSION_NAME=%s", p->module_name);
    item_push(&p->defines, &p->n_defines, name, "as torch's cpp_extension sets it");
    free(name);
    name = cf_asprintf("CCLFORGE_BRIDGE_VENDOR=%s", cf_vendor_get(p->vendor)->word);
    item_push(&p->defines, &p->n_defines, name, "reported by the module");
    free(name);
}

static void resolve_rpath(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, const struct comm_source *cs)
{
    if (o->n_bundle_libs)
        item_push(&p->rpath, &p->n_rpath, "$ORIGIN/lib", "the package's bundled vendor libraries (--bundle)");
    item_push(&p->rpath, &p->n_rpath, "$ORIGIN/../torch/lib", "torch's libraries in site-packages (installed layout)");
    if (cs->rpath)
        item_push(&p->rpath, &p->n_rpath, cs->rpath, "the NCCL wheel beside torch in site-packages");
    for (size_t i = 0; i < o->n_external_rpath; i++) {
        if (o->external_rpath[i][0] != '/') {
            problem(p, "--external-rpath %s: an external directory must be absolute", o->external_rpath[i]);
            continue;
        }
        item_push(&p->rpath, &p->n_rpath, o->external_rpath[i], "--external-rpath (declared external)");
    }
    for (size_t i = 0; i < o->n_bundle_libs; i++) {
        const char *b = o->bundle_libs[i];
        if (cf_elf_is_gpu_driver_lib(cf_basename(b))) {
            problem(p, "--bundle %s: the GPU driver library comes with the driver on each host and is never bundled",
                    b);
            continue;
        }
        if (!cf_is_file(b)) {
            problem(p, "--bundle %s: no such file", b);
            continue;
        }
        char *abs = cf_realpath(b);
        cf_strvec_push(&p->bundle_libs, abs);
        free(abs);
    }
}

static void resolve_source(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    if (o->source) {
        item_set(&p->source, o->source, "--source");
    } else if (getenv("CCLFORGE_BRIDGE_SOURCE") && *getenv("CCLFORGE_BRIDGE_SOURCE")) {
        item_set(&p->source, getenv("CCLFORGE_BRIDGE_SOURCE"), "CCLFORGE_BRIDGE_SOURCE");
    } else {
        char *beside = cf_share_file("bridge/cclforge_nccl_bridge.cpp");
        if (beside)
            item_set(&p->source, beside, "beside the cclforge executable");
        free(beside);
    }
    if (!p->source.value || !cf_is_file(p->source.value))
        problem(p, "bridge source %s not found: pass --source FILE or set CCLFORGE_BRIDGE_SOURCE",
                p->source.value ? p->source.value : "cclforge_nccl_bridge.cpp");
}

static int valid_identifier(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

int cf_bridge_plan_make(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, cf_error *err)
{
    memset(p, 0, sizeof *p);
    p->cxx11_abi = -1;
    p->module_name = cf_strdup(o->module_name ? o->module_name : CF_BRIDGE_DEFAULT_MODULE);
    p->package = cf_strdup(o->package ? o->package : CF_BRIDGE_DEFAULT_PACKAGE);
    if (!valid_identifier(p->module_name))
        return cf_error_set(err, CF_ERR_USAGE, "module name '%s' is not a Python identifier", p->module_name);
    if (!valid_identifier(p->package))
        return cf_error_set(err, CF_ERR_USAGE, "package name '%s' is not a Python identifier", p->package);

    char *torch_from_python = NULL;
    struct comm_source cs = { 0 };
    probe_python(o, p, &torch_from_python);
    resolve_torch(o, p, torch_from_python);
    free(torch_from_python);
    struct cf_survey sv = CF_SURVEY_INIT;
    survey_toolkits(&sv);
    resolve_vendor(o, p, &sv);
    resolve_toolkit_root(o, p, &sv);
    cf_survey_release(&sv);
    resolve_compiler(o, p);
    resolve_comm(o, p, &cs);
    resolve_includes(o, p, &cs);
    if (p->torch_dir.value)
        resolve_libs(p, &cs);
    resolve_defines(p);
    resolve_rpath(o, p, &cs);
    resolve_source(o, p);
    if (p->ext_suffix)
        p->output_name = cf_asprintf("%s%s", p->module_name, p->ext_suffix);
    free(cs.include);
    free(cs.lib_dir);
    free(cs.from);
    free(cs.rpath);
    return 0;
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

void cf_bridge_plan_release(struct cf_bridge_plan *p)
{
    item_free(&p->vendor_item);
    item_free(&p->cxx);
    item_free(&p->python);
    item_free(&p->python_include);
    item_free(&p->torch_dir);
    item_free(&p->toolkit_root);
    item_free(&p->nccl_header);
    item_free(&p->source);
    free(p->cxx_version);
    free(p->cxx_std);
    free(p->cxx_gate);
    free(p->python_version);
    free(p->python_tag);
    free(p->ext_suffix);
    free(p->torch_version);
    free(p->cxx11_abi_from);
    free(p->nccl_header_version);
    items_free(p->includes, p->n_includes);
    items_free(p->defines, p->n_defines);
    items_free(p->rpath, p->n_rpath);
    for (size_t i = 0; i < p->n_libs; i++) {
        free(p->libs[i].name);
        free(p->libs[i].path);
        free(p->libs[i].from);
        cf_strvec_clear(&p->libs[i].searched);
    }
    free(p->libs);
    free(p->module_name);
    free(p->package);
    free(p->output_name);
    cf_strvec_clear(&p->bundle_libs);
    cf_strvec_clear(&p->problems);
    memset(p, 0, sizeof *p);
}
