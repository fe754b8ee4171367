/* The bridge's headers: which flavour torch's header tree is, the include
 * order, the define set chosen for them, and the proof: the chosen compiler's
 * preprocessor run over the bridge source with exactly the compile's flags,
 * which says which nccl.h / rccl.h / cuda.h / hip_runtime.h really resolves and
 * with which version macros. nccl.h must agree with the NCCL library linked
 * and with the NCCL libtorch's ProcessGroupNCCL was compiled with: Options
 * embeds ncclConfig_t, so another nccl.h gives another Options size. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/bridge_internal.h"
#include "cclforge/fs.h"
#include "cclforge/spawn.h"

enum { SET_CUDA_NAMED = 1u << CF_BRIDGE_CUDA_NAMED, SET_HIPIFIED = 1u << CF_BRIDGE_HIPIFIED };

/* The define sets, by torch header flavour. */
static const struct {
    const char *define;
    unsigned sets;
    const char *why;
} define_table[] = {
    { "USE_C10D_NCCL", SET_CUDA_NAMED | SET_HIPIFIED, "torch's headers declare ProcessGroupNCCL only with it" },
    { "C10_CUDA_NO_CMAKE_CONFIGURE_FILE", SET_CUDA_NAMED,
      "skips c10/cuda/impl/cuda_cmake_macros.h, which CPU and HIP builds of torch do not generate "
      "(c10/cuda/CUDAMacros.h); on Linux nothing else changes" },
    { "__HIP_PLATFORM_AMD__=1", SET_HIPIFIED, "torch's cpp_extension for ROCm (COMMON_HIP_FLAGS)" },
    { "USE_ROCM=1", SET_HIPIFIED, "torch's cpp_extension for ROCm (COMMON_HIP_FLAGS)" },
    { "HIPBLAS_V2", SET_HIPIFIED, "torch's cpp_extension for ROCm (COMMON_HIP_FLAGS)" },
};

/* The headers the proof reports: name, paths relative to an include root, and
 * the macros that make its version. */
static const struct {
    const char *name;
    const char *rel[2];    /* NULL none */
    const char *macros[3]; /* NULL none */
    int cuda_style; /* CUDA_VERSION 13000 -> 13.0 */
} proved[4] = {
    { "nccl.h", { "nccl.h" }, { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" }, 0 },
    { "rccl.h", { "rccl/rccl.h", "rccl.h" }, { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" }, 0 },
    { "cuda.h", { "cuda.h" }, { "CUDA_VERSION" }, 1 },
    { "hip/hip_runtime.h", { "hip/hip_runtime.h" }, { "HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH" }, 0 },
};

/* "cuda-9" < "cuda-12" < "cuda-12.4": numbers compared as numbers. */
static int cmp_numeric(const char *a, const char *b)
{
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            char *ea, *eb;
            unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
            if (x != y)
                return x < y ? -1 : 1;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int cmp_numeric_v(const void *a, const void *b)
{
    return cmp_numeric(*(char *const *)a, *(char *const *)b);
}

/* A vendor-table include entry with one '*' component ("cuda/cuda-*\/include"),
 * expanded under root, newest (numerically highest) first. */
static void expand_glob(const char *root, const char *pattern, struct strvec *out)
{
    const char *star = strchr(pattern, '*');
    const char *slash_before = star;
    while (slash_before > pattern && slash_before[-1] != '/')
        slash_before--;
    /* "cuda/" -> "cuda": the parent without its trailing slash */
    size_t plen = (size_t)(slash_before - pattern);
    char *parent_rel = cf_strndup(pattern, plen && pattern[plen - 1] == '/' ? plen - 1 : plen);
    char *prefix = cf_strndup(slash_before, (size_t)(star - slash_before));
    const char *after = star + 1; /* "/include" */
    size_t suffix_len = strcspn(after, "/");
    char *suffix = cf_strndup(after, suffix_len);
    const char *rest = after + suffix_len;
    char *parent = cf_path_join(root, parent_rel);
    DIR *d = opendir(parent);
    struct dirent *de;
    struct strvec found = STRVEC_INIT;
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.' && cf_starts_with(de->d_name, prefix) && cf_ends_with(de->d_name, suffix)) {
            char *dir = cf_asprintf("%s/%s%s", parent, de->d_name, rest);
            if (cf_is_dir(dir))
                cf_strvec_push(&found, dir);
            free(dir);
        }
    if (d)
        closedir(d);
    if (found.n)
        qsort(found.v, found.n, sizeof *found.v, cmp_numeric_v);
    for (size_t i = found.n; i-- > 0;)
        cf_strvec_push(out, found.v[i]);
    cf_strvec_clear(&found);
    free(parent_rel);
    free(prefix);
    free(suffix);
    free(parent);
}

static int has_include(const struct cf_bridge_plan *p, const char *dir)
{
    for (size_t i = 0; i < p->n_includes; i++)
        if (!strcmp(p->includes[i].value, dir))
            return 1;
    return 0;
}

static void push_include(struct cf_bridge_plan *p, const char *dir, const char *from)
{
    if (!has_include(p, dir))
        cf_bridge_item_push(&p->includes, &p->n_includes, dir, from);
}

/* --include, the comm headers, the vendor's compatibility roots (newest
 * first), the vendor root, torch's, Python's. */
static void plan_includes(const struct cf_bridge_opts *o, struct cf_bridge_plan *p,
                          const struct cf_bridge_comm_source *cs)
{
    for (size_t i = 0; i < o->n_extra_includes; i++) {
        char *abs = cf_realpath(o->extra_includes[i]);
        if (!abs || !cf_is_dir(abs))
            cf_bridge_problem(p, "--include %s: no such directory", o->extra_includes[i]);
        else
            push_include(p, abs, "--include: searched first");
        free(abs);
    }
    if (cs->include) {
        char *from = cf_asprintf("comm headers: %s", cs->from);
        push_include(p, cs->include, from);
        free(from);
    }
    const struct cf_vendor_profile *vp = cf_vendor_get(p->vendor);
    const char *root = p->toolkit_root.value;
    if (root) {
        struct strvec compat = STRVEC_INIT, plain = STRVEC_INIT;
        for (const char *const *d = vp->include_dirs; *d; d++) {
            if (strchr(*d, '*')) {
                expand_glob(root, *d, &compat);
            } else {
                char *dir = cf_path_join(root, *d);
                if (cf_is_dir(dir))
                    cf_strvec_push(&plain, dir);
                free(dir);
            }
        }
        char *cfrom = cf_asprintf("%s compatibility headers (newest first; %s)", vp->word, p->toolkit_root.from);
        char *rfrom = cf_asprintf("%s root (%s)", vp->word, p->toolkit_root.from);
        for (size_t i = 0; i < compat.n; i++)
            push_include(p, compat.v[i], cfrom);
        for (size_t i = 0; i < plain.n; i++)
            push_include(p, plain.v[i], rfrom);
        if (p->vendor == CF_VENDOR_DTK && !compat.n)
            cf_bridge_problem(p, "no %s/cuda/cuda-*/include in the DTK root: DTK's CUDA-compatible headers are needed",
                              root);
        free(cfrom);
        free(rfrom);
        cf_strvec_clear(&compat);
        cf_strvec_clear(&plain);
        char *marker = cf_path_join(root, p->vendor == CF_VENDOR_NVIDIA ? "include/cuda_runtime_api.h"
                                                                        : "include/hip/hip_runtime.h");
        if (!cf_is_file(marker))
            cf_bridge_problem(p, "%s is missing: %s does not look like a %s root; set %s (or --toolkit)", marker, root,
                              vp->display, vp->root_env[0]);
        free(marker);
    } else {
        cf_bridge_problem(p, "no %s root: set %s (or --toolkit) to the %s installation", vp->display, vp->root_env[0],
                          vp->display);
    }
    if (p->torch_dir.value) {
        char *a = cf_path_join(p->torch_dir.value, "include");
        char *b = cf_asprintf("%s/include/torch/csrc/api/include", p->torch_dir.value);
        char *from = cf_asprintf("torch's headers (%s)", p->torch_dir.from);
        push_include(p, a, from);
        push_include(p, b, from);
        free(a);
        free(b);
        free(from);
    }
    if (p->python_include.value)
        push_include(p, p->python_include.value, p->python_include.from);
}

static void detect_flavour(struct cf_bridge_plan *p)
{
    /* what hipify makes of c10/cuda/CUDAFunctions.h and ATen/cuda/CUDAContext.h; a
     * CUDA wheel ships ATen/hip/impl/HIPxxxMasqueradingAsCUDA.h headers too, so a directory is no sign */
    static const char *const hip_dirs[] = { "include/c10/hip/HIPFunctions.h", "include/ATen/hip/HIPContext.h" };
    p->flavour = CF_BRIDGE_CUDA_NAMED;
    for (size_t i = 0; p->torch_dir.value && i < 2; i++) {
        char *d = cf_path_join(p->torch_dir.value, hip_dirs[i]);
        if (cf_is_file(d)) {
            p->flavour = CF_BRIDGE_HIPIFIED;
            p->flavour_from = cf_asprintf("hipified: %s exists", d);
        }
        free(d);
        if (p->flavour == CF_BRIDGE_HIPIFIED)
            break;
    }
    if (!p->flavour_from)
        p->flavour_from = cf_strdup(p->torch_dir.value ? "CUDA-named: no include/c10/hip/HIPFunctions.h or "
                                                         "include/ATen/hip/HIPContext.h (a CPU or CUDA build of torch)"
                                                       : "CUDA-named (no torch headers to look at)");
}

/* The name of a NAME[=VALUE] define, its length. */
static size_t define_name_len(const char *d)
{
    return strcspn(d, "=");
}

static long find_define(const struct cf_bridge_plan *p, const char *name, size_t len)
{
    for (size_t i = 0; i < p->n_defines; i++)
        if (define_name_len(p->defines[i].value) == len && !strncmp(p->defines[i].value, name, len))
            return (long)i;
    return -1;
}

static void push_define(struct cf_bridge_plan *p, const char *define, const char *why)
{
    long at = find_define(p, define, define_name_len(define));
    if (at >= 0)
        cf_bridge_item_set(&p->defines[at], define, why);
    else
        cf_bridge_item_push(&p->defines, &p->n_defines, define, why);
}

static void plan_defines(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    unsigned set = 1u << p->flavour;
    if (p->flavour == CF_BRIDGE_HIPIFIED) {
        p->define_set = cf_strdup("torch's cpp_extension ROCm set");
        p->define_set_why = cf_asprintf("torch's headers are hipified (%s): they need the HIP platform defines "
                                        "torch's cpp_extension passes for ROCm, plus USE_C10D_NCCL",
                                        p->flavour_from);
    } else if (p->vendor == CF_VENDOR_NVIDIA) {
        p->define_set = cf_strdup("CUDA set");
        p->define_set_why = cf_strdup("CUDA-named torch headers over the CUDA toolkit");
    } else {
        p->define_set = cf_strdup("validated DCU set");
        p->define_set_why = cf_asprintf("CUDA-named torch headers (a CPU torch's) over the vendor's "
                                        "CUDA-compatible headers: the recipe that passed a two-DCU AllReduce "
                                        "(GCC 11.4, USE_C10D_NCCL and C10_CUDA_NO_CMAKE_CONFIGURE_FILE only); "
                                        "USE_ROCM or __HIP_PLATFORM_AMD__ would switch c10/cuda and ATen/cuda into "
                                        "their ROCm branches");
    }
    for (size_t i = 0; i < sizeof define_table / sizeof define_table[0]; i++)
        if (define_table[i].sets & set)
            push_define(p, define_table[i].define, define_table[i].why);
    /* the bridge's own */
    char *d = cf_asprintf("_GLIBCXX_USE_CXX11_ABI=%d", p->cxx11_abi == 0 ? 0 : 1);
    push_define(p, d, p->cxx11_abi_from ? p->cxx11_abi_from : "default");
    free(d);
    d = cf_asprintf("CCLFORGE_BRIDGE_NAME=%s", p->module_name);
    push_define(p, d, "the module name: PyInit_<name> follows it");
    free(d);
    d = cf_asprintf("TORCH_EXTENSION_NAME=%s", p->module_name);
    push_define(p, d, "as torch's cpp_extension sets it");
    free(d);
    d = cf_asprintf("CCLFORGE_BRIDGE_VENDOR=%s", cf_vendor_get(p->vendor)->word);
    push_define(p, d, "reported by the module");
    free(d);
    const struct cf_bridge_lib *gpu = cf_bridge_lib_role(p, CF_BRIDGE_LINK_TORCH_GPU);
    d = cf_asprintf("CCLFORGE_TORCH_GPU_LIB=\"%s\"", gpu && gpu->path ? cf_basename(gpu->path)
                                                                     : cf_vendor_get(p->vendor)->torch_gpu_lib);
    push_define(p, d, "the ABI guard's facts name the libtorch ProcessGroupNCCL is in");
    free(d);
    d = cf_asprintf("CCLFORGE_COMM_LIB=\"%s\"", cf_vendor_get(p->vendor)->comm->soname);
    push_define(p, d, "the ABI guard's facts name the comm library's soname");
    free(d);
    if (p->device_count.value && !strcmp(p->device_count.value, "hip"))
        push_define(p, "CCLFORGE_DEVICE_COUNT_HIP", p->device_count.from);
    if (p->flavour == CF_BRIDGE_HIPIFIED)
        push_define(p, "CCLFORGE_HIPIFIED_HEADERS", p->flavour_from);
    if (p->abi.options_size > 0 && p->abi.process_group_size > 0) {
        d = cf_asprintf("CCLFORGE_LIBTORCH_OPTIONS_SIZE=%ld", p->abi.options_size);
        push_define(p, d, p->abi.options_from);
        free(d);
        d = cf_asprintf("CCLFORGE_LIBTORCH_PG_SIZE=%ld", p->abi.process_group_size);
        push_define(p, d, p->abi.process_group_from);
        free(d);
    }
    if (p->nccl_libtorch.value) {
        d = cf_asprintf("CCLFORGE_LIBTORCH_NCCL=\"%s\"", p->nccl_libtorch.value);
        push_define(p, d, p->nccl_libtorch.from);
        free(d);
    }
    /* the user's word last */
    for (size_t i = 0; i < o->n_defines; i++) {
        if (!o->defines[i][0] || o->defines[i][0] == '=')
            cf_bridge_problem(p, "--define '%s': give NAME or NAME=VALUE", o->defines[i]);
        else
            push_define(p, o->defines[i], "--define");
    }
    for (size_t i = 0; i < o->n_undefines; i++) {
        long at = find_define(p, o->undefines[i], strlen(o->undefines[i]));
        if (at < 0) {
            cf_bridge_note(p, "--undefine %s: not in the planned set", o->undefines[i]);
            continue;
        }
        free(p->defines[at].value);
        free(p->defines[at].from);
        memmove(&p->defines[at], &p->defines[at + 1], (p->n_defines - (size_t)at - 1) * sizeof *p->defines);
        p->n_defines--;
    }
    if (o->n_defines || o->n_undefines) {
        char *why = cf_asprintf("%s; changed by --define/--undefine", p->define_set_why);
        free(p->define_set_why);
        p->define_set_why = why;
    }
}

void cf_bridge_plan_headers(const struct cf_bridge_opts *o, struct cf_bridge_plan *p,
                            const struct cf_bridge_comm_source *cs)
{
    plan_includes(o, p, cs);
    detect_flavour(p);
    plan_defines(o, p);
}

void cf_bridge_guard_flags(const struct cf_bridge_plan *p, struct strvec *argv)
{
    /* the guard's own facts: not the bridge's defines, so the bridge's object
     * stays the same whatever the host's toolkit is declared to provide */
    if (p->n_toolkit_libs) {
        struct strbuf libs = STRBUF_INIT;
        for (size_t i = 0; i < p->n_toolkit_libs; i++)
            cf_sb_addf(&libs, "%s%s", i ? " " : "", p->toolkit_libs[i].value);
        cf_strvec_pushf(argv, "-DCCLFORGE_TOOLKIT_LIBS=\"%.255s\"", libs.buf);
        cf_sb_release(&libs);
    }
    if (p->toolkit_version)
        cf_strvec_pushf(argv, "-DCCLFORGE_TOOLKIT_VERSION=\"%.31s\"", p->toolkit_version);
}

void cf_bridge_preprocessor_flags(const struct cf_bridge_plan *p, struct strvec *argv)
{
    cf_strvec_pushf(argv, "-std=%s", p->cxx_std ? p->cxx_std : "c++17");
    for (size_t i = 0; i < p->n_defines; i++)
        cf_strvec_pushf(argv, "-D%s", p->defines[i].value);
    for (size_t i = 0; i < p->n_includes; i++) {
        cf_strvec_push(argv, "-isystem");
        cf_strvec_push(argv, p->includes[i].value);
    }
}

/* The value of `#define NAME VALUE` in -dM output, NULL when not defined. */
static char *macro(const char *dm, const char *name)
{
    char *pat = cf_asprintf("#define %s ", name);
    const char *at = dm;
    char *value = NULL;
    while ((at = strstr(at, pat))) {
        if (at == dm || at[-1] == '\n') {
            const char *v = at + strlen(pat);
            value = cf_strndup(v, strcspn(v, "\n"));
            break;
        }
        at++;
    }
    free(pat);
    return value;
}

static char *header_version_from_macros(const char *dm, size_t k)
{
    char *v[3] = { NULL, NULL, NULL };
    for (size_t i = 0; i < 3 && proved[k].macros[i]; i++)
        v[i] = macro(dm, proved[k].macros[i]);
    char *out = NULL;
    if (proved[k].cuda_style && v[0]) {
        long code = strtol(v[0], NULL, 10);
        out = cf_asprintf("%ld.%ld", code / 1000, code % 1000 / 10);
    } else if (v[0] && v[1]) {
        out = v[2] ? cf_asprintf("%s.%s.%s", v[0], v[1], v[2]) : cf_asprintf("%s.%s", v[0], v[1]);
    }
    for (size_t i = 0; i < 3; i++)
        free(v[i]);
    return out;
}

/* The compiler prints a root as it resolved it (GCC folds "x/../y" away), so
 * a root given as NCCL_HOME=.../torch/../nvidia/nccl or through a symlink is
 * matched by what it names, not by its spelling. */
static int is_include_root(const struct cf_bridge_plan *p, const char *dir)
{
    for (size_t i = 0; i < p->n_includes; i++)
        if (cf_same_path(dir, p->includes[i].value))
            return 1;
    return 0;
}

/* The include root a -H path was found under, for one of the header's names. */
static int resolves_from_root(const struct cf_bridge_plan *p, const char *path, size_t k)
{
    for (size_t r = 0; r < 2 && proved[k].rel[r]; r++) {
        size_t pl = strlen(path), rl = strlen(proved[k].rel[r]);
        if (pl <= rl + 1 || path[pl - rl - 1] != '/' || strcmp(path + pl - rl, proved[k].rel[r]) != 0)
            continue;
        char *dir = cf_strndup(path, pl - rl - 1);
        int hit = has_include(p, dir) || is_include_root(p, dir);
        free(dir);
        if (hit)
            return 1;
    }
    return 0;
}

/* -H lines: ". /path" (one dot per nesting level). */
static void read_header_tree(struct cf_bridge_plan *p, const char *h)
{
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, h, "\n", 0);
    for (size_t i = 0; i < lines.n; i++) {
        const char *l = lines.v[i];
        size_t dots = strspn(l, ".");
        if (!dots || l[dots] != ' ')
            continue;
        const char *path = l + dots + 1;
        if (!cf_strvec_contains(&p->proof_files, path))
            cf_strvec_push(&p->proof_files, path);
        for (size_t k = 0; k < 4; k++)
            if (!p->headers[k].path && resolves_from_root(p, path, k))
                p->headers[k].path = cf_strdup(path);
    }
    cf_strvec_clear(&lines);
}

void cf_bridge_read_proof(struct cf_bridge_plan *p, const char *tree, const char *macros)
{
    read_header_tree(p, tree);
    for (size_t k = 0; macros && k < 4; k++)
        if (p->headers[k].path && !p->headers[k].version)
            p->headers[k].version = header_version_from_macros(macros, k);
}

static const char *first_error_line(const char *text, struct strbuf *out)
{
    const char *e = strstr(text, "error: ");
    if (!e)
        e = text;
    const char *start = e;
    while (start > text && start[-1] != '\n')
        start--;
    cf_sb_add(out, start, strcspn(start, "\n"));
    return cf_sb_str(out);
}

/* nccl.h, the library linked and libtorch's ProcessGroupNCCL must be one NCCL. */
static void check_versions(struct cf_bridge_plan *p)
{
    const struct cf_bridge_header *h = p->headers[0].path ? &p->headers[0] : &p->headers[1];
    const char *hv = h->version, *lv = p->nccl_library.value, *tv = p->nccl_libtorch.value;
    if (!hv)
        return;
    int bad_lib = lv && strcmp(hv, lv) != 0, bad_torch = tv && strcmp(hv, tv) != 0;
    if (!bad_lib && !bad_torch) {
        cf_bridge_note(p, "%s %s (%s) matches %s%s%s%s%s", h->name, hv, h->path, lv ? "the library linked " : "",
                       lv ? lv : "", lv && tv ? " and " : "", tv ? "libtorch's ProcessGroupNCCL " : "", tv ? tv : "");
        return;
    }
    const char *want = tv ? tv : lv;
    cf_bridge_problem(p, "three NCCL versions disagree: %s resolves to %s = NCCL %s, the library linked is %s (%s), "
                         "libtorch's ProcessGroupNCCL was compiled with %s (%s). ProcessGroupNCCL::Options embeds "
                         "ncclConfig_t, so this nccl.h gives Options another size than libtorch allocates. Fix: put "
                         "NCCL %s's headers first (--include DIR or --nccl-home DIR with include/ and lib/, e.g. "
                         "pip download nvidia-nccl-cu13==%s) and drop any --include holding NCCL %s",
                      h->name, h->path, hv, lv ? lv : "unknown", p->nccl_library.from ? p->nccl_library.from : "-",
                      tv ? tv : "unknown", p->nccl_libtorch.from ? p->nccl_libtorch.from : "-", want, want, hv);
}

void cf_bridge_prove_headers(struct cf_bridge_plan *p)
{
    for (size_t k = 0; k < 4; k++)
        p->headers[k].name = proved[k].name;
    /* other problems (a library not found) do not stop the proof; these do */
    if (!p->cxx_ok || !p->source.value || !cf_is_file(p->source.value) || !p->torch_dir.value) {
        p->proof = cf_strdup("not run: it needs a compiler that passes the gate, the source and torch's headers");
        return;
    }
    struct strvec argv = STRVEC_INIT;
    cf_strvec_push(&argv, p->cxx.value);
    cf_bridge_preprocessor_flags(p, &argv);
    cf_strvec_push(&argv, "-E");
    cf_strvec_push(&argv, "-dM");
    cf_strvec_push(&argv, "-H");
    cf_strvec_push(&argv, p->source.value);
    struct cf_spawn_opts so = cf_spawn_probe_opts(300);
    so.capture_limit = 64u << 20;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_spawn_run((const char *const *)argv.v, &so, &r, &err) < 0) {
        cf_bridge_problem(p, "cannot run the preprocessor: %s", cf_error_message(&err));
        p->proof = cf_strdup("failed to start");
    } else {
        int ok = cf_spawn_ok(&r);
        cf_bridge_read_proof(p, cf_sb_str(&r.err), ok ? cf_sb_str(&r.out) : NULL);
        cf_strvec_push(&p->proof_files, p->source.value);
        if (!ok) {
            struct strbuf line = STRBUF_INIT;
            char *how = cf_spawn_describe(&r);
            p->proof = cf_asprintf("%s -E failed (%s)", p->cxx.value, how);
            cf_bridge_problem(p, "the preprocessor cannot read %s with the planned include roots and defines: %s. "
                                 "Fix the include roots (--include DIR first, --toolkit, --torch-headers) or the "
                                 "defines (--define/--undefine)",
                              p->source.value, first_error_line(cf_sb_str(&r.err), &line));
            free(how);
            cf_sb_release(&line);
        } else {
            p->proof = cf_asprintf("%s -E -dM -H over %s with the compile's flags: %zu files read", p->cxx.value,
                                   cf_basename(p->source.value), p->proof_files.n);
            if (!p->headers[0].path && !p->headers[1].path)
                cf_bridge_problem(p, "%s includes no nccl.h or rccl.h from the planned include roots: this is not "
                                     "the bridge source",
                                  p->source.value);
            check_versions(p);
        }
    }
    cf_error_clear(&err);
    cf_spawn_result_release(&r);
    cf_strvec_clear(&argv);
}
