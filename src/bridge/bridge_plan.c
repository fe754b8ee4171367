/* `bridge plan`: every input of the bridge build resolved, each with where it
 * came from. Paths come only from flags, the environment (CUDA_HOME, ROCM_PATH,
 * LIBTORCH, NCCL_HOME, ...) and detection (the Python's torch, compilers on PATH):
 * there are no hard-coded install locations here. The headers, defines and their
 * proof are in bridge_headers.c, the installed layout in bridge_layout.c, the
 * plan's items, notes and release in bridge_plan_model.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge/bridge_internal.h"
#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/libtorch_abi.h"
#include "cclforge/share.h"
#include "cclforge/spawn.h"
#include "cclforge/survey.h"
#include "cclforge/vendor.h"
#include "cclforge/wheel.h"
#include "pkg/elf_facts.h"

/* Linked for every vendor: the CPU half of libtorch and the Python bindings. */
static const char *const common_libs[] = { "c10", "torch", "torch_cpu", "torch_python" };

/* The device-count function of each c10 GPU library flavour, by mangled name:
 * hipify turns c10/cuda into c10/hip (namespace c10::hip). */
static const struct {
    const char *symbol, *ns, *text;
} device_count_names[] = {
    { "_ZN3c103hip12device_countEv", "hip", "c10::hip::device_count()" },
    { "_ZN3c104cuda12device_countEv", "cuda", "c10::cuda::device_count()" },
};

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
    cf_bridge_item_set(&p->python, py, from);
    char *path = cf_which(py);
    if (!path) {
        cf_bridge_problem(p, "Python '%s' not found; pass --python PATH", py);
        return;
    }
    cf_bridge_item_set(&p->python, path, from);
    free(path);
    /* isolated (-I): the build must not depend on the caller's PYTHONPATH or user site */
    struct cf_python_info info;
    cf_error err = CF_ERROR_INIT;
    if (cf_python_probe(p->python.value, NULL, 1, &info, &err) < 0) {
        cf_bridge_problem(p, "cannot ask %s for its EXT_SUFFIX and include dir: %s", p->python.value,
                          cf_error_message(&err));
        cf_error_clear(&err);
        cf_python_info_release(&info);
        return;
    }
    p->python_exe = info.executable ? cf_realpath(info.executable) : NULL;
    p->python_version = cf_strdup(info.version);
    p->python_tag = cf_strdup(info.tag);
    p->ext_suffix = cf_strdup(info.ext_suffix);
    if (info.include) {
        char *inc_from = cf_asprintf("sysconfig of %s", p->python.value);
        cf_bridge_item_set(&p->python_include, info.include, inc_from);
        free(inc_from);
        char *h = cf_path_join(info.include, "Python.h");
        if (!cf_is_file(h))
            cf_bridge_problem(p, "%s is missing: install the Python development headers for %s (e.g. python3-dev)",
                              h, p->python.value);
        free(h);
    }
    *torch_from_python = cf_strdup(info.torch_dir);
    if (!p->ext_suffix)
        cf_bridge_problem(p, "%s reports no EXT_SUFFIX", p->python.value);
    cf_python_info_release(&info);
}

/* A torch Python package (site-packages/torch), not a bare libtorch root. */
static int is_torch_package(const char *dir)
{
    char *a = cf_path_join(dir, "__init__.py"), *b = cf_path_join(dir, "version.py");
    int yes = cf_is_file(a) || cf_is_file(b);
    free(a);
    free(b);
    return yes;
}

/* The root above torch's include/: DIR itself, or DIR's parent when DIR is the include dir. */
static char *headers_root(const char *dir)
{
    char *abs = cf_realpath(dir);
    if (!abs)
        return NULL;
    char *inside = cf_path_join(abs, "torch/csrc/distributed/c10d");
    if (cf_is_dir(inside)) {
        char *parent = cf_dirname(abs);
        free(inside);
        free(abs);
        return parent;
    }
    free(inside);
    return abs;
}

static void torch_facts(struct cf_bridge_plan *p)
{
    const char *root = p->torch_dir.value;
    /* torch's own version: version.py (Python package) or build-version (libtorch zip) */
    char *vpy = cf_path_join(root, "version.py"), *bv = cf_path_join(root, "build-version");
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
    char *aten = cf_asprintf("%s/include/ATen/ATen.h", root);
    p->cxx_std = cf_strdup(file_contains(aten, "C++20 or later") ? "c++20" : "c++17");
    free(aten);
    /* the C++11 ABI: std::__cxx11 names in the libc10 the extension will meet */
    const char *libdir = p->torch_import.value ? p->torch_import.value : p->vendor_libs.value;
    char *c10 = libdir ? cf_asprintf("%s%s/libc10.so", libdir, p->torch_import.value ? "/lib" : "") : NULL;
    cf_error aerr = CF_ERROR_INIT;
    int has = c10 && cf_is_file(c10) ? cf_elf_file_defines_symbol(c10, "__cxx11", 0, &aerr) : -1;
    p->cxx11_abi = has < 0 ? -1 : has;
    p->cxx11_abi_from = cf_asprintf(has < 0 ? "unknown (%s unreadable); assuming the new ABI"
                                            : "std::__cxx11 symbols %s in %s",
                                    has < 0 ? (c10 ? c10 : "no libc10.so") : (has ? "present" : "absent"), c10);
    cf_error_clear(&aerr);
    free(c10);
}

/* Where torch's headers, the vendor libraries and the importing torch come
 * from: --torch-headers / --vendor-libs apart, or --libtorch (LIBTORCH, the
 * Python's torch) for both. */
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
    char *both = dir ? cf_realpath(dir) : NULL;
    if (dir && !both)
        cf_bridge_problem(p, "%s %s: no such directory", from, dir);
    /* headers */
    const char *hdir = o->torch_headers ? o->torch_headers : both;
    const char *hfrom = o->torch_headers ? "--torch-headers" : from;
    char *hroot = hdir ? headers_root(hdir) : NULL;
    char *hdr = hroot ? cf_asprintf("%s/include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp", hroot) : NULL;
    if (!hdir)
        cf_bridge_problem(p, "no torch headers: pass --torch-headers DIR (a torch package or its include/), "
                             "--libtorch DIR (a libtorch root or site-packages/torch), set LIBTORCH, or install "
                             "torch for %s",
                          p->python.value ? p->python.value : "the Python");
    else if (!hdr || !cf_is_file(hdr))
        cf_bridge_problem(p, "no torch headers at %s (from %s): expected include/torch/csrc/distributed/c10d/"
                             "ProcessGroupNCCL.hpp under it",
                          hdir, hfrom);
    else
        cf_bridge_item_set(&p->torch_dir, hroot, hfrom);
    /* vendor libraries */
    if (o->vendor_libs) {
        char *v = cf_realpath(o->vendor_libs);
        if (!v || !cf_is_dir(v))
            cf_bridge_problem(p, "--vendor-libs %s: no such directory", o->vendor_libs);
        else
            cf_bridge_item_set(&p->vendor_libs, v, "--vendor-libs");
        free(v);
    } else if (both && !p->vendor_libs.value) {
        char *lib = cf_path_join(both, "lib");
        if (cf_is_dir(lib))
            cf_bridge_item_set(&p->vendor_libs, lib, from);
        else if (!o->torch_headers)
            cf_bridge_problem(p, "no libtorch at %s (from %s): expected lib/ under it", dir, from);
        free(lib);
    }
    /* the torch imported at run time: a torch package, never a bare libtorch root */
    const char *cands[][2] = { { hroot, hfrom }, { both, from }, { torch_from_python, "the torch package of the Python" } };
    for (size_t i = 0; i < 3 && !p->torch_import.value; i++)
        if (cands[i][0] && is_torch_package(cands[i][0])) {
            char *abs = cf_realpath(cands[i][0]);
            cf_bridge_item_set(&p->torch_import, abs, cands[i][1]);
            free(abs);
        }
    if (!p->torch_import.value)
        cf_bridge_note(p, "no torch package known to import at run time: the layout check cannot emulate "
                          "`import torch`; install torch for %s or pass --torch-headers SITE/torch",
                       p->python.value ? p->python.value : "the Python");
    if (p->torch_dir.value)
        torch_facts(p);
    free(both);
    free(hroot);
    free(hdr);
    free(python_from);
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
        cf_bridge_item_set(&p->toolkit_root, o->toolkit_root, "--toolkit");
        return;
    }
    for (const char *const *e = vp->root_env; *e; e++) {
        const char *v = getenv(*e);
        if (v && *v) {
            cf_bridge_item_set(&p->toolkit_root, v, *e);
            return;
        }
    }
    const struct cf_toolkit *tk = cf_survey_toolkit(sv, vp->id);
    if (tk) {
        char *from = cf_asprintf("doctor's survey (%s)", tk->found_by ? tk->found_by : "found");
        cf_bridge_item_set(&p->toolkit_root, tk->root, from);
        free(from);
        return;
    }
    const char *compiler = vp->compiler;
    char *path = cf_which(compiler);
    if (path) {
        char *bin = cf_dirname(path), *root = cf_dirname(bin);
        char *from = cf_asprintf("detected: %s on PATH", compiler);
        cf_bridge_item_set(&p->toolkit_root, root, from);
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
            cf_bridge_item_set(&p->vendor_item, vp->word, "--vendor");
            return;
        }
        struct strbuf words = STRBUF_INIT;
        cf_vendor_words(&words);
        cf_bridge_problem(p, "unknown vendor '%s': use %s", o->vendor, cf_sb_str(&words));
        cf_sb_release(&words);
        return;
    }
    /* the vendor libraries decide what can be linked; doctor's survey tells DTK from ROCm */
    if (p->vendor_libs.value) {
        char *hip = cf_path_join(p->vendor_libs.value, cf_vendor_get(CF_VENDOR_ROCM)->torch_gpu_lib);
        char *cuda = cf_path_join(p->vendor_libs.value, cf_vendor_get(CF_VENDOR_NVIDIA)->torch_gpu_lib);
        if (cf_is_file(hip)) {
            const struct cf_toolkit *dtk = cf_survey_toolkit(sv, cf_vendor_get(CF_VENDOR_DTK)->id);
            const char *dtk_var = dtk ? NULL : dtk_root_from_env();
            p->vendor = dtk || dtk_var ? CF_VENDOR_DTK : CF_VENDOR_ROCM;
            char *from = dtk ? cf_asprintf("detected: %s and doctor's survey found DTK at %s", hip, dtk->root)
                         : dtk_var ? cf_asprintf("detected: %s and a DTK layout at %s", hip, dtk_var)
                                   : cf_asprintf("detected: %s", hip);
            cf_bridge_item_set(&p->vendor_item, cf_vendor_get(p->vendor)->word, from);
            free(from);
        } else if (cf_is_file(cuda)) {
            p->vendor = CF_VENDOR_NVIDIA;
            char *from = cf_asprintf("detected: %s", cuda);
            cf_bridge_item_set(&p->vendor_item, cf_vendor_get(p->vendor)->word, from);
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
        cf_bridge_item_set(&p->vendor_item, profiles[i].word, from);
        free(from);
    }
    if (!p->vendor_item.value) {
        p->vendor = CF_VENDOR_NVIDIA;
        cf_bridge_item_set(&p->vendor_item, cf_vendor_get(p->vendor)->word,
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
        cf_bridge_problem(p, "C++ compiler '%s' (from %s) not found; install g++ >= %d or pass --cxx", cxx, from,
                CF_BRIDGE_MIN_GCC);
        return;
    }
    cf_bridge_item_set(&p->cxx, path, from);
    free(path);
    struct cf_compiler c;
    cf_error perr = CF_ERROR_INIT;
    if (cf_compiler_probe(p->cxx.value, &c, &perr) < 0 && !c.banner) {
        cf_bridge_problem(p, "%s", cf_error_message(&perr));
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
    p->cxx_ok = major >= need;
    if (major < need)
        cf_bridge_problem(p, "compiler %s is %s %s (\"%s\"): too old, the bridge needs %s; install a newer one and pass --cxx "
                   "or set CXX",
                p->cxx.value, is_clang ? "clang" : "GCC", p->cxx_version ? p->cxx_version : "?", c.banner, p->cxx_gate);
    cf_compiler_release(&c);
}

static int comm_candidate(const char *inc, const char *libdir, const struct cf_comm_profile *comm, const char *from,
                          const char *site_rel, struct cf_bridge_comm_source *out, struct strvec *tried)
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
        out->site_rel = site_rel ? cf_strdup(site_rel) : NULL;
    }
    free(h);
    free(so);
    free(so_major);
    return ok;
}

/* site-packages of a torch package dir (<site>/torch), or of its lib dir (<site>/torch/lib). */
static char *torch_site(const char *torch_path, int is_lib_dir)
{
    if (!is_lib_dir)
        return cf_dirname(torch_path);
    char *torch = cf_dirname(torch_path);
    char *site = cf_dirname(torch);
    free(torch);
    return site;
}

/* The nccl.h / rccl.h and the library that go together: --nccl-home /
 * NCCL_HOME, pip's nvidia/nccl beside the torch, the toolkit's. */
static void resolve_comm(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, struct cf_bridge_comm_source *cs)
{
    const struct cf_vendor_profile *vp = cf_vendor_get(p->vendor);
    struct strvec tried = STRVEC_INIT;
    const char *nccl_home = o->nccl_home ? o->nccl_home : getenv("NCCL_HOME");
    const char *nh_from = o->nccl_home ? "--nccl-home" : "NCCL_HOME";
    int found = 0;
    if (p->vendor == CF_VENDOR_NVIDIA) {
        /* pip's nvidia-nccl wheel beside torch: what torch itself was built and runs with */
        const char *torches[] = { p->torch_import.value, p->vendor_libs.value ? p->vendor_libs.value : NULL };
        char *pip_homes[2] = { NULL, NULL };
        for (size_t t = 0; t < 2; t++)
            if (torches[t]) {
                char *site = torch_site(torches[t], t == 1);
                pip_homes[t] = cf_asprintf("%s/nvidia/nccl", site);
                free(site);
            }
        if (nccl_home && *nccl_home) {
            /* NCCL_HOME may name that same wheel (through "..", a symlink): then
             * the extension reaches it as the wheel, by an $ORIGIN RPATH */
            int pip = cf_same_path(nccl_home, pip_homes[0]) || cf_same_path(nccl_home, pip_homes[1]);
            char *inc = cf_path_join(nccl_home, "include"), *lib = cf_path_join(nccl_home, "lib");
            char *from = pip ? cf_asprintf("%s: pip's nvidia/nccl beside torch", nh_from) : cf_strdup(nh_from);
            found = comm_candidate(inc, lib, vp->comm, from, pip ? "nvidia/nccl/lib" : NULL, cs, &tried);
            free(from);
            free(inc);
            free(lib);
        }
        for (size_t t = 0; t < 2 && !found; t++) {
            if (!pip_homes[t])
                continue;
            char *inc = cf_path_join(pip_homes[t], "include"), *lib = cf_path_join(pip_homes[t], "lib");
            found = comm_candidate(inc, lib, vp->comm, "pip's nvidia/nccl beside torch", "nvidia/nccl/lib", cs,
                                   &tried);
            free(inc);
            free(lib);
        }
        free(pip_homes[0]);
        free(pip_homes[1]);
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
    } else {
        /* the vendor directory first (the plugin bundles its librccl), then the toolkit's */
        char *tk_inc = p->toolkit_root.value ? cf_asprintf("%s/include/rccl", p->toolkit_root.value) : NULL;
        char *tk_lib = p->toolkit_root.value ? cf_path_join(p->toolkit_root.value, "lib") : NULL;
        char *from = cf_asprintf("%s's rccl (%s)", vp->word, p->toolkit_root.from ? p->toolkit_root.from : "none");
        if (tk_inc && p->vendor_libs.value)
            found = comm_candidate(tk_inc, p->vendor_libs.value, vp->comm, from, NULL, cs, &tried);
        if (!found && tk_inc)
            found = comm_candidate(tk_inc, tk_lib, vp->comm, from, NULL, cs, &tried);
        free(from);
        free(tk_inc);
        free(tk_lib);
    }
    if (found) {
        char *h = cf_path_join(cs->include, cf_basename(vp->comm->headers[0]));
        cf_bridge_item_set(&p->nccl_header, h, cs->from);
        p->nccl_header_version = header_version(h);
        free(h);
    } else {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < tried.n; i++)
            cf_sb_addf(&sb, "%s%s", i ? ", " : "", tried.v[i]);
        cf_bridge_problem(p, "no %s with its %s found; searched: %s. Set %s", cf_basename(vp->comm->headers[0]),
                          vp->comm->stem, tried.n ? sb.buf : "nothing (no toolkit root)",
                          p->vendor == CF_VENDOR_NVIDIA ? "NCCL_HOME or CUDA_HOME" : "ROCM_PATH (the ROCm or DTK root)");
        cf_sb_release(&sb);
    }
    cf_strvec_clear(&tried);
}

/* Finds lib<name>.so, or a versioned file when only that exists (pip ships libnccl.so.2 alone). */
static void resolve_lib(struct cf_bridge_plan *p, const char *name, const char *const *dirs, const char *const *froms)
{
    p->libs = cf_xrealloc(p->libs, (p->n_libs + 1) * sizeof *p->libs);
    struct cf_bridge_lib *l = &p->libs[p->n_libs++];
    memset(l, 0, sizeof *l);
    l->name = cf_strdup(name);
    static const char *const majors[] = { "", ".1", ".2", ".0" };
    for (size_t d = 0; dirs[d] && !l->path; d++) {
        cf_strvec_push(&l->searched, dirs[d]);
        for (size_t i = 0; i < 4 && !l->path; i++) {
            char *v = cf_asprintf("%s/lib%s.so%s", dirs[d], name, majors[i]);
            if (cf_is_file(v)) {
                l->path = v;
                l->from = cf_strdup(froms[d]);
            } else {
                free(v);
            }
        }
    }
    if (!l->from)
        l->from = cf_strdup(froms[0] ? froms[0] : "not found");
}

static void resolve_libs(struct cf_bridge_plan *p, const struct cf_bridge_comm_source *cs)
{
    const struct cf_vendor_profile *vp = cf_vendor_get(p->vendor);
    char *vfrom = cf_asprintf("vendor libraries (%s)", p->vendor_libs.from ? p->vendor_libs.from : "none");
    char *tlib = p->torch_import.value ? cf_path_join(p->torch_import.value, "lib") : NULL;
    char *tfrom = cf_asprintf("the importing torch (%s)", p->torch_import.from ? p->torch_import.from : "none");
    const char *gpu_dirs[] = { p->vendor_libs.value, NULL };
    const char *gpu_froms[] = { vfrom, NULL };
    resolve_lib(p, vp->torch_gpu_link[CF_BRIDGE_LINK_C10_GPU], gpu_dirs, gpu_froms);
    resolve_lib(p, vp->torch_gpu_link[CF_BRIDGE_LINK_TORCH_GPU], gpu_dirs, gpu_froms);
    const char *comm_dirs[] = { cs->lib_dir, NULL };
    const char *comm_froms[] = { cs->from ? cs->from : "not found", NULL };
    resolve_lib(p, vp->comm->link_name, comm_dirs, comm_froms);
    /* the CPU half: the copy loaded at import (the importing torch's), else the vendor's */
    const char *cpu_dirs[] = { tlib ? tlib : p->vendor_libs.value, tlib ? p->vendor_libs.value : NULL, NULL };
    const char *cpu_froms[] = { tlib ? tfrom : vfrom, vfrom, NULL };
    for (size_t i = 0; i < sizeof common_libs / sizeof common_libs[0]; i++)
        resolve_lib(p, common_libs[i], cpu_dirs, cpu_froms);
    for (size_t i = 0; i < p->n_libs; i++) {
        struct cf_bridge_lib *l = &p->libs[i];
        if (l->path)
            continue;
        struct strbuf where = STRBUF_INIT;
        for (size_t k = 0; k < l->searched.n; k++)
            cf_sb_addf(&where, "%s%s", k ? ", " : "", l->searched.v[k]);
        if (i == CF_BRIDGE_LINK_TORCH_GPU && p->vendor_libs.value)
            cf_bridge_problem(p, "CPU-only libtorch: lib%s.so is not in %s, so it has no ProcessGroupNCCL; point "
                                 "--vendor-libs (or --libtorch) at a %s build's libraries",
                              l->name, p->vendor_libs.value, p->vendor == CF_VENDOR_NVIDIA ? "CUDA" : "ROCm/DTK");
        else
            cf_bridge_problem(p, "library %s not found; searched: %s", l->name, where.len ? where.buf : "nothing");
        cf_sb_release(&where);
    }
    free(vfrom);
    free(tlib);
    free(tfrom);
}

/* What the vendor libtorch was compiled with, and what the bridge must call. */
static void read_vendor_facts(struct cf_bridge_plan *p)
{
    const struct cf_bridge_lib *gpu = cf_bridge_lib_role(p, CF_BRIDGE_LINK_TORCH_GPU);
    if (gpu && gpu->path) {
        /* the GPU libtorch must really carry ProcessGroupNCCL (USE_C10D_NCCL at its build) */
        cf_error err = CF_ERROR_INIT;
        int has = cf_elf_file_defines_symbol(gpu->path, "c10d16ProcessGroupNCCL", 0, &err);
        if (has == 0)
            cf_bridge_problem(p, "%s exports no c10d::ProcessGroupNCCL: this libtorch was built without NCCL/RCCL "
                                 "(USE_C10D_NCCL off), so there is nothing to bridge",
                              gpu->path);
        else if (has < 0)
            cf_bridge_problem(p, "%s", cf_error_message(&err));
        cf_error_clear(&err);
        /* the torch package holding it pins its NCCL in its dist-info */
        char *torch = cf_dirname(p->vendor_libs.value ? p->vendor_libs.value : gpu->path);
        if (cf_libtorch_abi_read(gpu->path, is_torch_package(torch) ? torch : NULL, &p->abi, &err) < 0)
            cf_bridge_problem(p, "%s", cf_error_message(&err));
        cf_error_clear(&err);
        free(torch);
        if (p->abi.nccl_version)
            cf_bridge_item_set(&p->nccl_libtorch, p->abi.nccl_version, p->abi.nccl_from);
        else
            cf_bridge_item_set(&p->nccl_libtorch, NULL, p->abi.nccl_from);
    }
    const struct cf_bridge_lib *comm = cf_bridge_lib_role(p, CF_BRIDGE_LINK_COMM);
    if (comm && comm->path) {
        struct cf_elf *elf;
        cf_error err = CF_ERROR_INIT;
        if (cf_elf_open(comm->path, &elf, &err) == 0) {
            struct cf_commlib_identity id;
            if (cf_commlib_identify(elf, &id, &err) == 0 && id.found) {
                char *v = cf_nccl_code_version(id.banner.version_code);
                char *from = cf_asprintf("the banner of %s (\"%s\")", comm->path, id.banner.text);
                cf_bridge_item_set(&p->nccl_library, v, from);
                free(v);
                free(from);
            } else {
                char *from = cf_asprintf("%s carries no NCCL/RCCL version banner", comm->path);
                cf_bridge_item_set(&p->nccl_library, NULL, from);
                free(from);
            }
            cf_elf_close(elf);
        }
        cf_error_clear(&err);
    }
    /* the device count by the name this vendor's c10 GPU library exports */
    const struct cf_bridge_lib *c10 = cf_bridge_lib_role(p, CF_BRIDGE_LINK_C10_GPU);
    for (size_t i = 0; c10 && c10->path && !p->device_count.value && i < 2; i++) {
        cf_error err = CF_ERROR_INIT;
        if (cf_elf_file_defines_symbol(c10->path, device_count_names[i].symbol, 1, &err) == 1) {
            char *from = cf_asprintf("%s exports %s (%s)", cf_basename(c10->path), device_count_names[i].text,
                                     device_count_names[i].symbol);
            cf_bridge_item_set(&p->device_count, device_count_names[i].ns, from);
            free(from);
        }
        cf_error_clear(&err);
    }
    if (c10 && c10->path && !p->device_count.value)
        cf_bridge_problem(p, "%s exports neither c10::hip::device_count() nor c10::cuda::device_count(): the bridge "
                             "cannot ask how many GPUs there are; is it the vendor's %s?",
                          c10->path, cf_vendor_get(p->vendor)->torch_gpu_link[CF_BRIDGE_LINK_C10_GPU]);
}

/* A bridge's sources define make_nccl_backend, in one of them; anything
 * else is named as such before it is compiled (no NCCL header is the proof's
 * to say). The source defining it becomes the bridge's source (the one the
 * proof reads), the others follow in the order given. */
static void check_is_bridge(struct cf_bridge_plan *p)
{
    if (!p->source.value || file_contains(p->source.value, "make_nccl_backend"))
        return;
    for (size_t i = 0; i < p->more_sources.n; i++)
        if (file_contains(p->more_sources.v[i], "make_nccl_backend")) {
            char *was = p->source.value;
            p->source.value = p->more_sources.v[i];
            p->more_sources.v[i] = was;
            return;
        }
    if (!p->more_sources.n) {
        cf_bridge_problem(p, "%s is not a bridge source: it defines no make_nccl_backend (a bridge defines "
                             "make_nccl_backend(store, rank, size, timeout_ms, high_priority_stream) in "
                             "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)); pass the plugin's nccl_backend.cpp as --source",
                          p->source.value);
        return;
    }
    struct strbuf all = STRBUF_INIT;
    cf_sb_addf(&all, "%s", p->source.value);
    for (size_t i = 0; i < p->more_sources.n; i++)
        cf_sb_addf(&all, ", %s", p->more_sources.v[i]);
    cf_bridge_problem(p, "these %zu sources are not a bridge: none of %s defines make_nccl_backend (one of a bridge's "
                         "sources defines make_nccl_backend(store, rank, size, timeout_ms, high_priority_stream) in "
                         "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)); add the plugin's nccl_backend.cpp as a --source",
                      p->more_sources.n + 1, all.buf);
    cf_sb_release(&all);
}

/* The bridge's other sources: each must exist; absolute, each once. */
static int resolve_more_sources(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    int ok = 1;
    for (size_t i = 0; i < o->n_more_sources; i++) {
        char *abs = cf_is_file(o->more_sources[i]) ? cf_realpath(o->more_sources[i]) : NULL;
        if (!abs) {
            cf_bridge_problem(p, "bridge source %s not found: each --source names an existing file",
                              o->more_sources[i]);
            ok = 0;
        } else if ((p->source.value && !strcmp(abs, p->source.value)) || cf_strvec_contains(&p->more_sources, abs)) {
            cf_bridge_problem(p, "bridge source %s is given twice: name each --source once", abs);
            ok = 0;
        } else {
            cf_strvec_push(&p->more_sources, abs);
        }
        free(abs);
    }
    return ok;
}

static void resolve_source(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    if (o->source) {
        cf_bridge_item_set(&p->source, o->source, "--source");
    } else if (getenv("CCLFORGE_BRIDGE_SOURCE") && *getenv("CCLFORGE_BRIDGE_SOURCE")) {
        cf_bridge_item_set(&p->source, getenv("CCLFORGE_BRIDGE_SOURCE"), "CCLFORGE_BRIDGE_SOURCE");
    } else {
        char *beside = cf_share_file("bridge/cclforge_nccl_bridge.cpp");
        if (beside)
            cf_bridge_item_set(&p->source, beside, "beside the cclforge executable");
        free(beside);
    }
    if (!p->source.value) {
        char *looked = cf_share_looked("bridge/cclforge_nccl_bridge.cpp");
        cf_bridge_problem(p, "cclforge's share directory is missing (looked at %s): reinstall cclforge (its wheel or "
                             "tarball carries share/cclforge), or pass --source FILE or set CCLFORGE_BRIDGE_SOURCE",
                          looked);
        free(looked);
    } else if (!cf_is_file(p->source.value)) {
        cf_bridge_problem(p, "bridge source %s not found: pass --source FILE or set CCLFORGE_BRIDGE_SOURCE",
                          p->source.value);
    } else {
        /* absolute: the plan's commands run from any directory */
        char *abs = cf_realpath(p->source.value);
        char *from = cf_strdup(p->source.from);
        cf_bridge_item_set(&p->source, abs, from);
        free(from);
        free(abs);
        if (resolve_more_sources(o, p))
            check_is_bridge(p);
    }
    char *guard = cf_share_file("bridge/cclforge_abi_guard.cpp");
    char *real = guard ? cf_realpath(guard) : NULL;
    if (real)
        cf_bridge_item_set(&p->guard, real, "cclforge's ABI guard, beside the cclforge executable");
    else
        cf_bridge_problem(p, "cclforge's ABI guard (share/cclforge/bridge/cclforge_abi_guard.cpp) is not beside the "
                             "cclforge executable: reinstall cclforge");
    free(guard);
    free(real);
}

/* Where the plan's commands write: absolute, not created by the plan. */
static void plan_outputs(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    const char *out = o->out_dir ? o->out_dir : "bridge-build";
    char *cwd = out[0] == '/' ? NULL : getcwd(NULL, 0);
    char *joined = cwd ? cf_path_join(cwd, out) : cf_strdup(out);
    int escaped = 0;
    p->out_dir = cf_path_normalize(joined, &escaped);
    free(joined);
    free(cwd);
    p->object = cf_asprintf("%s/%s.o", p->out_dir, p->module_name);
    /* numbered: two sources of one name (a/util.cpp, b/util.cpp) get two objects */
    for (size_t i = 0; i < p->more_sources.n; i++) {
        const char *base = cf_basename(p->more_sources.v[i]);
        cf_strvec_pushf(&p->more_objects, "%s/%s.%zu.%.*s.o", p->out_dir, p->module_name, i + 1,
                        (int)strcspn(base, "."), base);
    }
    p->guard_object = cf_asprintf("%s/%s.abi_guard.o", p->out_dir, p->module_name);
    if (p->output_name)
        p->output = cf_asprintf("%s/%s/%s", p->out_dir, p->package_dir, p->output_name);
}

static int valid_identifier(const char *s, size_t len)
{
    if (!len || (*s >= '0' && *s <= '9'))
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

/* "a.b.c": dotted Python identifiers. */
static int valid_package(const char *s)
{
    for (;;) {
        size_t n = strcspn(s, ".");
        if (!valid_identifier(s, n))
            return 0;
        if (!s[n])
            return 1;
        s += n + 1;
    }
}

int cf_bridge_plan_make(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, cf_error *err)
{
    memset(p, 0, sizeof *p);
    p->cxx11_abi = -1;
    p->abi.options_size = p->abi.process_group_size = -1;
    p->module_name = cf_strdup(o->module_name ? o->module_name : CF_BRIDGE_DEFAULT_MODULE);
    p->package = cf_strdup(o->package ? o->package : CF_BRIDGE_DEFAULT_PACKAGE);
    if (!valid_identifier(p->module_name, strlen(p->module_name)))
        return cf_error_set(err, CF_ERR_USAGE, "--name '%s' is not a Python identifier", p->module_name);
    if (!valid_package(p->package))
        return cf_error_set(err, CF_ERR_USAGE,
                            "--package '%s' is not a dotted Python package name (identifiers joined by '.')",
                            p->package);
    p->package_dir = cf_strdup(p->package);
    for (char *c = p->package_dir; *c; c++)
        if (*c == '.')
            *c = '/';
    if (o->max_glibc) {
        p->max_glibc = cf_platform_glibc_ceiling(o->max_glibc);
        unsigned a, b;
        char tail;
        if (!p->max_glibc && sscanf(o->max_glibc, "%u.%u%c", &a, &b, &tail) == 2 && a == 2 && b < 1000)
            p->max_glibc = 2000 + (int)b;
        if (!p->max_glibc)
            return cf_error_set(err, CF_ERR_USAGE, "--max-glibc '%s': give a glibc version (2.28) or a manylinux tag "
                                                   "(manylinux_2_28_x86_64, manylinux2014)",
                                o->max_glibc);
    }
    if (o->docker) {
        if (!*o->docker || o->docker[0] == '-')
            return cf_error_set(err, CF_ERR_USAGE, "--docker '%s': name an image (quay.io/pypa/manylinux_2_28_x86_64)",
                                o->docker);
        p->docker = cf_strdup(o->docker);
    }
    if (o->into) {
        p->into = cf_realpath(o->into);
        if (!p->into || !cf_is_dir(p->into))
            return cf_error_set(err, CF_ERR_USAGE, "--into %s: no such directory (the tree holding %s/)", o->into,
                                p->package_dir);
    }

    char *torch_from_python = NULL;
    struct cf_bridge_comm_source cs = { 0 };
    probe_python(o, p, &torch_from_python);
    /* the --rpath entries first: with --into they locate the vendor directory,
     * the default that --vendor-libs leaves (before the Python's torch/lib) */
    cf_bridge_plan_user_rpath(o, p);
    resolve_torch(o, p, torch_from_python);
    free(torch_from_python);
    struct cf_survey sv = CF_SURVEY_INIT;
    survey_toolkits(&sv);
    resolve_vendor(o, p, &sv);
    resolve_toolkit_root(o, p, &sv);
    resolve_compiler(o, p);
    resolve_comm(o, p, &cs);
    if (p->torch_dir.value || p->vendor_libs.value) {
        resolve_libs(p, &cs);
        read_vendor_facts(p);
    }
    cf_bridge_plan_toolkit_libs(o, p, &sv);
    cf_survey_release(&sv);
    if (p->ext_suffix)
        p->output_name = cf_asprintf("%s%s", p->module_name, p->ext_suffix);
    cf_bridge_plan_headers(o, p, &cs);
    cf_bridge_plan_layout(o, p, &cs);
    resolve_source(o, p);
    plan_outputs(o, p);
    cf_bridge_prove_headers(p);
    free(cs.include);
    free(cs.lib_dir);
    free(cs.from);
    free(cs.site_rel);
    return 0;
}
