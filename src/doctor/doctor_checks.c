/* Single-host checks: one function per finding family, run from a table. */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/arch.h"
#include "cclforge/doctor.h"
#include "cclforge/fs.h"
#include "cclforge/vendor.h"
#include "cclforge/numparse.h"
#include "cclforge/pymodule.h"
#include "doctor/doctor_internal.h"

/* Injected surveys may leave any string null: print a placeholder instead. */
static const char *str_or(const char *s, const char *fallback)
{
    return s ? s : fallback;
}

/* ---- GPU code coverage ---- */

static const char *comm_kind_for_gpu(const char *gpu_vendor)
{
    const struct cf_vendor_profile *p = cf_vendor_profile_for_gpu(gpu_vendor);
    return p ? p->comm->kind : NULL;
}

/* Sorted archs of the visible GPUs that a library of `kind` ("nccl"/"rccl") serves. */
static void gpu_archs_for_kind(const struct cf_survey *s, const char *kind, struct strvec *out)
{
    /* The archs of this kind's GPUs, sorted for bsearch: linear-logarithmic in the GPUs. */
    const char **mine = cf_xcalloc(s->n_gpus ? s->n_gpus : 1, sizeof *mine);
    size_t n = 0;
    for (size_t g = 0; g < s->n_gpus; g++) {
        const struct cf_gpu *gpu = &s->gpus[g];
        const char *k = gpu->visible && gpu->arch ? comm_kind_for_gpu(gpu->vendor) : NULL;
        if (k && kind && !strcmp(k, kind))
            mine[n++] = gpu->arch;
    }
    if (n)
        qsort(mine, n, sizeof *mine, cf_str_ptr_cmp);
    struct strvec all = STRVEC_INIT;
    cf_survey_gpu_archs(s, 1, &all);
    for (size_t i = 0; n && i < all.n; i++)
        if (bsearch(&all.v[i], mine, n, sizeof *mine, cf_str_ptr_cmp))
            cf_strvec_push(out, all.v[i]);
    cf_strvec_clear(&all);
    free(mine);
}

static void join(const struct strvec *sv, const char *sep, struct strbuf *out)
{
    for (size_t i = 0; i < sv->n; i++) {
        if (i)
            cf_sb_adds(out, sep);
        cf_sb_adds(out, sv->v[i]);
    }
}

/* A library of `kind` lacks code for some GPUs: returns the missing archs (and all wanted). */
static int uncovered(const struct cf_survey *s, const char *kind, const struct strvec *archs, struct strvec *want,
                     struct strvec *missing)
{
    gpu_archs_for_kind(s, kind, want);
    for (size_t i = 0; i < want->n; i++)
        if (!cf_arch_covered(archs, want->v[i]))
            cf_strvec_push(missing, want->v[i]);
    return missing->n > 0;
}

/* "cclforge nccl build [--vendor rocm|dtk] [--tag vX.Y.Z-1] --archs a,b": the same
 * release as `c` (upstream NCCL tags are vX.Y.Z-N, nearly always -1) for `archs`. */
void cf_nccl_build_command(const struct cf_survey *s, const struct cf_comm_lib *c, const struct strvec *archs,
                        struct strbuf *out)
{
    cf_sb_adds(out, "cclforge nccl build");
    if (c && cf_comm_lib_profile(c)->lib == CF_COMMLIB_RCCL) {
        const char *vendor = cf_vendor_get(CF_VENDOR_ROCM)->word;
        for (size_t i = 0; s && i < s->n_gpus; i++) {
            const struct cf_vendor_profile *p = cf_vendor_profile_for_gpu(s->gpus[i].vendor);
            if (p && p->comm->lib == CF_COMMLIB_RCCL) {
                vendor = p->word;
                break;
            }
        }
        cf_sb_addf(out, " --vendor %s", vendor);
    } else if (c && c->version && c->version[strspn(c->version, "0123456789.")] == '\0') {
        cf_sb_addf(out, " --tag v%s-1", c->version);
    }
    cf_sb_adds(out, " --archs ");
    size_t archs_at = out->len;
    join(archs, ",", out);
    /* The remedy must be runnable: CUDA 13 cannot target sm_61, say which toolkit can. */
    const struct cf_toolkit *cuda = NULL;
    for (size_t i = 0; s && i < s->n_toolkits && !cuda; i++)
        if (s->toolkits[i].vendor && !strcmp(s->toolkits[i].vendor, "cuda") && s->toolkits[i].version)
            cuda = &s->toolkits[i];
    struct cf_arch_list list = CF_ARCH_LIST_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cuda && cf_arch_list_parse(&list, out->buf + archs_at, NULL) == 0 &&
        cf_arch_list_family(&list) == CF_ARCH_NVIDIA &&
        cf_arch_check_cuda(&list, cuda->version, NULL, &err) != 0)
        cf_sb_addf(out, " (with CUDA_HOME at another toolkit: %s)", cf_error_message(&err));
    cf_error_clear(&err);
    cf_arch_list_release(&list);
}

static void check_comm_lib_archs(const struct cf_survey *s, const struct cf_comm_lib *c, enum cf_severity sev,
                                 struct cf_findings *out)
{
    if (!c || !c->archs_known || !c->path)
        return;
    struct strvec want = STRVEC_INIT, missing = STRVEC_INIT;
    if (uncovered(s, c->kind, &c->archs, &want, &missing)) {
        struct strbuf remedy = STRBUF_INIT, have = STRBUF_INIT, miss = STRBUF_INIT;
        join(&c->archs, " ", &have);
        join(&missing, ", ", &miss);
        int is_rccl = cf_comm_lib_profile(c)->lib == CF_COMMLIB_RCCL;
        cf_nccl_build_command(s, c, &want, &remedy);
        cf_sb_adds(&remedy, " (then LD_PRELOAD the result)");
        cf_findings_add(out, sev, "gpu-arch-not-covered", c->path, remedy.buf,
                        "%s %s has %s for %s (it has: %s): collectives fail with %s", cf_comm_lib_profile(c)->display,
                        c->version ? c->version : "(version unknown)",
                        is_rccl ? "no code object" : "neither SASS nor PTX", miss.buf,
                        have.len ? have.buf : "no GPU code",
                        is_rccl ? "\"no binary for GPU\" (hipErrorNoBinaryForGpu)"
                                : "\"no kernel image is available\"");
        cf_sb_release(&remedy);
        cf_sb_release(&have);
        cf_sb_release(&miss);
    }
    cf_strvec_clear(&want);
    cf_strvec_clear(&missing);
}

static void check_arch_coverage(const struct cf_survey *s, struct cf_findings *out)
{
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (t && t->gpu_lib && t->archs_known) {
        const char *kind = cf_comm_profile(t->flavour == CF_TORCH_HIP ? CF_COMMLIB_RCCL : CF_COMMLIB_NCCL)->kind;
        struct strvec want = STRVEC_INIT, missing = STRVEC_INIT;
        if (uncovered(s, kind, &t->archs, &want, &missing)) {
            struct strbuf have = STRBUF_INIT, miss = STRBUF_INIT, remedy = STRBUF_INIT;
            join(&t->archs, " ", &have);
            join(&missing, ", ", &miss);
            const struct cf_vendor_profile *p = cf_vendor_profile(t->flavour == CF_TORCH_HIP ? "rocm" : "cuda");
            cf_sb_addf(&remedy, "use a torch built for these GPUs (%s=\"", p->arch_list_env);
            for (size_t i = 0; i < want.n; i++) {
                /* TORCH_CUDA_ARCH_LIST spells sm_61 as 6.1; PYTORCH_ROCM_ARCH keeps gfx names. */
                struct cf_arch a;
                if (cf_arch_parse(want.v[i], &a, NULL) == 0 && a.family == CF_ARCH_NVIDIA)
                    cf_sb_addf(&remedy, "%s%u.%u", i ? ";" : "", a.sm / 10, a.sm % 10);
                else
                    cf_sb_addf(&remedy, "%s%s", i ? ";" : "", want.v[i]);
            }
            cf_sb_adds(&remedy, "\")");
            cf_findings_add(out, CF_SEV_ERROR, "torch-arch-not-covered", t->gpu_lib, remedy.buf,
                            "libtorch %s has no kernels (SASS or PTX) for %s (it has: %s)",
                            t->version ? t->version : "", miss.buf, have.len ? have.buf : "no GPU code");
            cf_sb_release(&have);
            cf_sb_release(&miss);
            cf_sb_release(&remedy);
        }
        cf_strvec_clear(&want);
        cf_strvec_clear(&missing);
    }
    /* The libraries collectives will run on are errors; other copies on disk warnings. */
    if (t) {
        check_comm_lib_archs(s, t->embedded, CF_SEV_ERROR, out);
        check_comm_lib_archs(s, t->loaded, CF_SEV_ERROR, out);
    }
    const struct cf_comm_lib *active = cf_survey_active_comm(s);
    check_comm_lib_archs(s, active, CF_SEV_ERROR, out);
    for (size_t i = 0; i < s->n_comm_libs; i++)
        check_comm_lib_archs(s, &s->comm_libs[i], CF_SEV_WARNING, out);
    for (size_t i = 0; i < s->n_toolkits; i++)
        check_comm_lib_archs(s, s->toolkits[i].comm, CF_SEV_WARNING, out);
}

/* ---- which NCCL is used ---- */

static void check_nccl_mismatch(const struct cf_survey *s, struct cf_findings *out)
{
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (!t || !t->nccl_built_against || !t->loaded || !t->loaded->version)
        return;
    int built = cf_comm_version_code(t->nccl_built_against);
    int loaded = t->loaded->version_code ? t->loaded->version_code : cf_comm_version_code(t->loaded->version);
    if (!built || !loaded || built == loaded)
        return;
    struct strbuf remedy = STRBUF_INIT;
    if (t->gpu_runtime_version && t->flavour == CF_TORCH_CUDA)
        cf_sb_addf(&remedy, "pip install nvidia-nccl-cu%d==%s, or put that NCCL first (LD_PRELOAD)",
                cf_parse_small(t->gpu_runtime_version, 1000), t->nccl_built_against);
    else
        cf_sb_addf(&remedy, "make the loader find NCCL %s first (LD_LIBRARY_PATH or LD_PRELOAD)", t->nccl_built_against);
    cf_findings_add(out, loaded < built ? CF_SEV_ERROR : CF_SEV_WARNING, "nccl-mismatch", t->loaded->path,
                    remedy.buf,
                    "libtorch %s was built against NCCL %s but the loader would load %s %s%s",
                    t->version ? t->version : "", t->nccl_built_against, cf_comm_lib_profile(t->loaded)->display, t->loaded->version,
                    loaded < built ? ": an older NCCL may lack symbols libtorch calls"
                                   : ": ranks on other hosts with the pinned NCCL will refuse to connect");
    cf_sb_release(&remedy);
}

static void check_two_copies(const struct cf_survey *s, struct cf_findings *out)
{
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (!t || !t->embedded || !t->needs_comm_lib)
        return;
    const char *lib = t->gpu_lib ? t->gpu_lib : str_or(t->embedded->path, "libtorch");
    cf_findings_add(out, CF_SEV_WARNING, "two-nccl-copies", lib,
                    "keep one copy: preload the same version as the embedded one, or remove the DT_NEEDED "
                    "library from the search path",
                    "%s embeds %s %s and its closure also loads %s%s%s: two copies in one process do not "
                    "share state",
                    cf_basename(lib), cf_comm_lib_profile(t->embedded)->display, t->embedded->version ? t->embedded->version : "",
                    t->loaded ? str_or(t->loaded->path, "a separate library") : "a separate library", t->loaded && t->loaded->version ? " " : "",
                    t->loaded && t->loaded->version ? t->loaded->version : "");
}

/* ---- closure ---- */

static void report_closure(const char *subject, const struct strvec *missing, const struct strvec *undefined,
                           struct cf_findings *out)
{
    if (missing->n) {
        struct strbuf list = STRBUF_INIT;
        join(missing, ", ", &list);
        cf_findings_add(out, CF_SEV_ERROR, "missing-libraries", subject,
                        "install the package that provides them or add its directory to LD_LIBRARY_PATH; "
                        "`cclforge inspect` shows the paths considered",
                        "the loader would not find %s", list.buf);
        cf_sb_release(&list);
    }
    if (undefined->n) {
        struct strbuf list = STRBUF_INIT;
        for (size_t i = 0; i < undefined->n && i < 5; i++)
            cf_sb_addf(&list, "%s%s", i ? ", " : "", undefined->v[i]);
        if (undefined->n > 5)
            cf_sb_addf(&list, " and %zu more", undefined->n - 5);
        cf_findings_add(out, CF_SEV_ERROR, "undefined-symbols", subject,
                        "a library in the closure is older than the one it was linked against: "
                        "`cclforge inspect` names which",
                        "the loader would stop with: %s", list.buf);
        cf_sb_release(&list);
    }
}

static void check_closures(const struct cf_survey *s, struct cf_findings *out)
{
    for (size_t i = 0; i < s->n_torches; i++) {
        const struct cf_libtorch *t = &s->torches[i];
        report_closure(t->gpu_lib ? t->gpu_lib : t->lib_dir ? t->lib_dir : t->root, &t->missing_libs,
                       &t->undefined_symbols, out);
        if (t->loaded)
            report_closure(t->loaded->path, &t->loaded->missing_libs, &t->loaded->undefined_symbols, out);
    }
    for (size_t i = 0; i < s->n_comm_libs; i++)
        report_closure(s->comm_libs[i].path, &s->comm_libs[i].missing_libs, &s->comm_libs[i].undefined_symbols, out);
}

/* ---- compilers ---- */

static const struct cf_compiler *host_cxx(const struct cf_survey *s)
{
    const struct cf_compiler *c = cf_survey_compiler(s, "g++");
    return c && c->major ? c : cf_survey_compiler(s, "gcc");
}

enum { TORCH_MIN_GCC = 9 }; /* C++17 headers of torch >= 2.1 (docs/doctor.md) */

static void check_gcc_for_torch(const struct cf_survey *s, struct cf_findings *out)
{
    const struct cf_compiler *c = host_cxx(s);
    if (!c || !c->major || c->major >= TORCH_MIN_GCC)
        return;
    int have_torch = s->n_torches > 0;
    cf_findings_add(out, have_torch ? CF_SEV_ERROR : CF_SEV_WARNING, "gcc-too-old", c->path,
                    "install g++ 9 or newer (e.g. apt-get install g++-12) and point CXX at it",
                    "%s %s cannot compile the torch C++ headers (they need C++17 and GCC >= %d)%s", str_or(c->name, "gcc"),
                    c->version ? c->version : "", TORCH_MIN_GCC,
                    have_torch ? ": building against this libtorch will fail" : "");
}

static void check_nvcc_host(const struct cf_survey *s, struct cf_findings *out)
{
    const struct cf_compiler *nvcc = cf_survey_compiler(s, "nvcc");
    const struct cf_compiler *c = host_cxx(s);
    if (!nvcc || !c || !c->major || nvcc->host_gcc_max <= 0 || c->major <= nvcc->host_gcc_max)
        return;
    char remedy[256];
    snprintf(remedy, sizeof remedy, "install g++-%d and pass it as the host compiler (nvcc -ccbin g++-%d, "
             "CUDAHOSTCXX=g++-%d)", nvcc->host_gcc_max, nvcc->host_gcc_max, nvcc->host_gcc_max);
    cf_findings_add(out, CF_SEV_WARNING, "host-compiler-unsupported", c->path, remedy,
                    "nvcc %s accepts GCC up to %d (%s) but %s is %s: nvcc stops with \"unsupported GNU version\"",
                    nvcc->version ? nvcc->version : "", nvcc->host_gcc_max,
                    nvcc->host_range_source ? nvcc->host_range_source : "table", str_or(c->name, "g++"),
                    str_or(c->version, "?"));
}

/* ---- driver vs runtime ---- */

/* Minimum Linux x86_64 driver per CUDA release: CUDA Toolkit Release Notes,
 * "CUDA Toolkit and Corresponding Driver Versions". */
static const struct {
    int major, minor;
    const char *driver;
} cuda_driver_table[] = {
    { 11, 0, "450.36.06" }, { 11, 1, "455.23" },    { 11, 2, "460.27.03" }, { 11, 3, "465.19.01" },
    { 11, 4, "470.42.01" }, { 11, 5, "495.29.05" }, { 11, 6, "510.39.01" }, { 11, 7, "515.43.04" },
    { 11, 8, "520.61.05" }, { 12, 0, "525.60.13" }, { 12, 1, "530.30.02" }, { 12, 2, "535.54.03" },
    { 12, 3, "545.23.06" }, { 12, 4, "550.54.14" }, { 12, 5, "555.42.02" }, { 12, 6, "560.28.03" },
    { 12, 8, "570.26" },    { 12, 9, "575.51.03" }, { 13, 0, "580.65.06" },
};
enum { N_DRIVER_ROWS = sizeof cuda_driver_table / sizeof cuda_driver_table[0] };

/* Compares dotted numbers numerically: "580.65.06" vs "575.51.03". */
static int dotted_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        long x = strtol(a, (char **)&a, 10), y = strtol(b, (char **)&b, 10);
        if (x != y)
            return x < y ? -1 : 1;
        if (*a == '.')
            a++;
        if (*b == '.')
            b++;
        if (!*a && !*b)
            break;
        if (!*a || !*b)
            return *a ? 1 : -1;
    }
    return 0;
}

const char *cf_cuda_min_driver(int cuda_major, int cuda_minor)
{
    const char *best = NULL;
    for (int i = 0; i < N_DRIVER_ROWS; i++) {
        if (cuda_driver_table[i].major == cuda_major && cuda_driver_table[i].minor <= cuda_minor)
            best = cuda_driver_table[i].driver;
    }
    return best;
}

int cf_driver_max_cuda(const char *driver)
{
    int best = 0;
    for (int i = 0; driver && i < N_DRIVER_ROWS; i++)
        if (dotted_cmp(driver, cuda_driver_table[i].driver) >= 0)
            best = cuda_driver_table[i].major * 1000 + cuda_driver_table[i].minor * 10;
    return best;
}

static void need_driver(const struct cf_survey *s, int driver_cuda, const char *what, const char *cuda_version,
                        struct cf_findings *out)
{
    int need = cf_cuda_version_code(cuda_version);
    if (!need || driver_cuda >= need)
        return;
    int same_major = driver_cuda / 1000 == need / 1000;
    const char *min = cf_cuda_min_driver(need / 1000, (need % 1000) / 10);
    char remedy[160];
    snprintf(remedy, sizeof remedy, "upgrade the NVIDIA driver to %s or newer (CUDA %d.%d)", min ? min : "a release",
             need / 1000, (need % 1000) / 10);
    cf_findings_add(out, same_major ? CF_SEV_WARNING : CF_SEV_ERROR, "driver-too-old", what, remedy,
                    "the driver supports CUDA %d.%d (%s) but %s needs CUDA %s%s", driver_cuda / 1000,
                    (driver_cuda % 1000) / 10, s->driver.nvidia_version ? s->driver.nvidia_version : "driver API",
                    what, cuda_version,
                    same_major ? ": runs only through minor-version compatibility (no PTX JIT, newer APIs fail)"
                               : ": CUDA calls fail with \"driver version is insufficient\"");
}

static void check_driver(const struct cf_survey *s, struct cf_findings *out)
{
    int driver_cuda = s->driver.cuda_driver_version;
    if (!driver_cuda)
        driver_cuda = cf_driver_max_cuda(s->driver.nvidia_version);
    if (!driver_cuda)
        return; /* no NVIDIA driver: reported as information elsewhere */
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (t && t->flavour == CF_TORCH_CUDA) {
        need_driver(s, driver_cuda, t->gpu_lib ? t->gpu_lib : "libtorch", t->gpu_runtime_version, out);
        if (t->loaded)
            need_driver(s, driver_cuda, str_or(t->loaded->path, cf_comm_profile(CF_COMMLIB_NCCL)->soname), t->loaded->cuda_version, out);
    }
    const struct cf_comm_lib *active = cf_survey_active_comm(s);
    if (active && active->path)
        need_driver(s, driver_cuda, active->path, active->cuda_version, out);
    const struct cf_toolkit *cuda = cf_survey_toolkit(s, "cuda");
    if (cuda)
        need_driver(s, driver_cuda, str_or(cuda->root, "the CUDA toolkit"), cuda->version, out);
}

/* ---- what is there at all ---- */

static void check_gpus_present(const struct cf_survey *s, struct cf_findings *out)
{
    if (s->n_gpus == 0) {
        struct strbuf notes = STRBUF_INIT;
        for (size_t i = 0; i < s->n_probes; i++)
            if (s->probes[i].note)
                cf_sb_addf(&notes, "%s%s: %s", notes.len ? "; " : "", s->probes[i].vendor ? s->probes[i].vendor : "?",
                        s->probes[i].note);
        cf_findings_add(out, CF_SEV_INFO, "no-gpu", "GPUs",
                        "expected on a build or login node; `--survey HOST.json` checks against another host's GPUs",
                        "no GPU or DCU found, so GPU archs are not checked here%s%s%s", notes.len ? " (" : "",
                        cf_sb_str(&notes), notes.len ? ")" : "");
        cf_sb_release(&notes);
        return;
    }
    size_t visible = 0;
    for (size_t i = 0; i < s->n_gpus; i++)
        visible += s->gpus[i].visible;
    if (!visible)
        cf_findings_add(out, CF_SEV_WARNING, "no-visible-gpu", "GPUs",
                        "check CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES",
                        "%zu GPU(s) present but the *_VISIBLE_DEVICES setting hides all of them", s->n_gpus);
}

static void check_torch_present(const struct cf_survey *s, struct cf_findings *out)
{
    for (size_t i = 0; i < s->n_torches; i++)
        if (s->torches[i].problem)
            cf_findings_add(out, CF_SEV_WARNING, "libtorch-unusable", s->torches[i].root,
                            "point --libtorch or LIBTORCH at a libtorch root (the directory holding lib/)",
                            "%s: %s", s->torches[i].found_by ? s->torches[i].found_by : "libtorch",
                            s->torches[i].problem);
    if (s->n_torches == 0)
        cf_findings_add(out, CF_SEV_INFO, "no-libtorch", "libtorch", "pass --libtorch DIR or set LIBTORCH",
                        "no libtorch found (looked at --libtorch, LIBTORCH and Python's torch package)");
    /* A GPU libtorch beside a CPU-only Python torch: nothing exposes ProcessGroupNCCL. */
    const struct cf_libtorch *cpu = NULL, *gpu = NULL;
    for (size_t i = 0; i < s->n_torches; i++) {
        if (s->torches[i].flavour == CF_TORCH_CPU && !cpu)
            cpu = &s->torches[i];
        if ((s->torches[i].flavour == CF_TORCH_HIP || s->torches[i].flavour == CF_TORCH_CUDA) && !gpu)
            gpu = &s->torches[i];
    }
    if (cpu && gpu && s->n_gpus) {
        char remedy[512];
        snprintf(remedy, sizeof remedy, "cclforge bridge build --libtorch %s", str_or(gpu->root, "DIR"));
        cf_findings_add(out, CF_SEV_WARNING, "cpu-torch-beside-gpu-libtorch", cpu->root, remedy,
                        "torch at %s is CPU-only while %s has ProcessGroupNCCL over %s: a bridge exposes it",
                        str_or(cpu->root, "?"), str_or(gpu->root, "?"), gpu->flavour == CF_TORCH_HIP ? "RCCL" : "NCCL");
    }
}

static void check_comm_present(const struct cf_survey *s, struct cf_findings *out)
{
    if (cf_survey_active_comm(s))
        return;
    if (!s->n_toolkits && !s->n_gpus)
        return;
    cf_findings_add(out, CF_SEV_INFO, "no-comm-library", "NCCL/RCCL", "cclforge nccl build",
                    "no NCCL or RCCL library found (loader search path, NCCL_HOME/RCCL_HOME, toolkits, pip)");
}

/* A bridge installed beside the torch in use that needs a library of the
 * host's toolkit (its --toolkit-lib, from its wheel's marker or the module's
 * own ABI facts) this host's loader cannot find: the import will fail here,
 * on this host only. The same for a plugin's own bridge module without
 * cclforge's facts, each NEEDED as the loader resolves it after `import
 * torch`. And a module that cannot be read as a bridge: what it
 * needs from the toolkit is not known. One finding per survey line, the
 * line's first word its subject. */
static const struct {
    size_t offset; /* of the struct strvec in struct cf_libtorch */
    enum cf_severity sev;
    const char *id, *remedy, *lead;
} bridge_lines[] = {
    { offsetof(struct cf_libtorch, bridge_toolkit_missing), CF_SEV_WARNING, "bridge-toolkit-lib-missing",
      "install the toolkit the bridge was built with and put its lib dir on LD_LIBRARY_PATH (its environment script "
      "does), or in ld.so.conf",
      "a library an installed bridge needs from the host's toolkit is missing" },
    { offsetof(struct cf_libtorch, bridge_plugin_missing), CF_SEV_WARNING, "bridge-plugin-lib-missing",
      "install what provides the library (the toolkit the plugin was built for) and put its lib dir on "
      "LD_LIBRARY_PATH or in ld.so.conf; or rebuild the plugin against this host's",
      "a plugin's bridge module beside torch (it defines " CF_BRIDGE_FACTORY ", no cclforge marker) needs a "
      "library this host's loader does not find: its import fails here" },
    { offsetof(struct cf_libtorch, bridge_unreadable), CF_SEV_INFO, "bridge-facts-unreadable",
      "rebuild the module with this cclforge (cclforge bridge build, cclforge.build) or reinstall its wheel",
      "an extension module beside torch cannot be read (truncated, not ELF, or cclforge ABI facts in a format this "
      "cclforge does not read), so what it needs from the host's toolkit is not checked" },
    { offsetof(struct cf_libtorch, bridge_walk_bounded), CF_SEV_INFO, "bridge-walk-bounded",
      "check a plugin's bridge directly: cclforge wheel verify --install PLUGIN.whl, or cclforge inspect -u "
      "<its extension module>",
      "the search for cclforge-built bridges beside torch stopped at its bound, so bridges in the packages past it "
      "are not checked" },
};

static void check_bridge_toolkit_libs(const struct cf_survey *s, struct cf_findings *out)
{
    for (size_t k = 0; s->n_torches && k < sizeof bridge_lines / sizeof bridge_lines[0]; k++) {
        const struct strvec *lines = (const struct strvec *)((const char *)&s->torches[0] + bridge_lines[k].offset);
        for (size_t i = 0; i < lines->n; i++) {
            char *subject = cf_strndup(lines->v[i], strcspn(lines->v[i], " "));
            cf_findings_add(out, bridge_lines[k].sev, bridge_lines[k].id, subject, bridge_lines[k].remedy, "%s: %s",
                            bridge_lines[k].lead, lines->v[i]);
            free(subject);
        }
    }
}

/* Without GPUs nothing can be checked, but the active library's oldest arch tells
 * which hosts it cannot serve (CUDA 13 NCCL starts at sm_75: no Pascal, no Volta). */
static void check_arch_floor(const struct cf_survey *s, struct cf_findings *out)
{
    if (s->n_gpus)
        return;
    const struct cf_comm_lib *c = cf_survey_active_comm(s);
    if (!c || !c->archs_known || !c->path || cf_comm_lib_profile(c)->lib != CF_COMMLIB_NCCL)
        return;
    unsigned oldest = 0;
    int ptx = 0;
    for (size_t i = 0; i < c->archs.n; i++) {
        struct cf_arch a;
        if (cf_arch_parse(c->archs.v[i], &a, NULL) < 0 || a.family != CF_ARCH_NVIDIA || a.variant == 'a')
            continue;
        if (a.code == CF_CODE_SASS && (!oldest || a.sm < oldest))
            oldest = a.sm;
        ptx |= a.code == CF_CODE_PTX;
    }
    if (!oldest)
        return;
    struct strvec pascal = STRVEC_INIT;
    cf_strvec_push(&pascal, "sm_61");
    struct strbuf floor_remedy = STRBUF_INIT;
    cf_sb_adds(&floor_remedy, "on a host with such GPUs (e.g. Pascal): ");
    cf_nccl_build_command(s, c, &pascal, &floor_remedy);
    cf_strvec_clear(&pascal);
    cf_findings_add(out, CF_SEV_INFO, "comm-arch-floor", c->path,
                    oldest > 61 ? floor_remedy.buf : NULL,
                    "%s %s has kernels for sm_%u and newer%s; GPUs older than sm_%u (e.g. Pascal sm_61%s) need a "
                    "source build",
                    cf_comm_lib_profile(c)->display, c->version ? c->version : "", oldest, ptx ? " (PTX lets the driver JIT for newer)" : "",
                    oldest, oldest > 70 ? ", Volta sm_70" : "");
    cf_sb_release(&floor_remedy);
}

/* ---- the table ---- */

typedef void (*check_fn)(const struct cf_survey *s, struct cf_findings *out);

static const struct {
    const char *name;
    check_fn fn;
} checks[] = {
    { "gpus present", check_gpus_present },
    { "libtorch present", check_torch_present },
    { "comm library present", check_comm_present },
    { "bridge toolkit libraries", check_bridge_toolkit_libs },
    { "GPU code coverage", check_arch_coverage },
    { "oldest arch served (no GPU here)", check_arch_floor },
    { "NCCL libtorch was built against vs loaded", check_nccl_mismatch },
    { "two NCCL copies", check_two_copies },
    { "library closure", check_closures },
    { "GCC for torch headers", check_gcc_for_torch },
    { "nvcc host compiler", check_nvcc_host },
    { "driver vs CUDA runtime", check_driver },
    { "NCCL configuration", cf_check_nccl_config },
    { "fabric and limits", cf_check_fabric },
};

static int by_severity_desc(const void *a, const void *b)
{
    const struct cf_finding *x = a, *y = b;
    return (int)y->severity - (int)x->severity;
}

void cf_sort_findings(struct cf_findings *out)
{
    /* qsort is not stable: a stable insertion sort keeps check order within a severity. */
    for (size_t i = 1; i < out->n; i++) {
        struct cf_finding x = out->v[i];
        size_t j = i;
        while (j > 0 && by_severity_desc(&out->v[j - 1], &x) > 0) {
            out->v[j] = out->v[j - 1];
            j--;
        }
        out->v[j] = x;
    }
}

void cf_doctor_diagnose(const struct cf_survey *s, struct cf_findings *out)
{
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
        checks[i].fn(s, out);
    cf_sort_findings(out);
}
