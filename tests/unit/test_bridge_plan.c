/* The bridge plan over libtorch / CUDA / ROCm / DTK trees built here in the
 * vendors' layouts (stub ELF libraries compiled by cc with the vendors'
 * sonames and the mangled names they export; headers that include what torch's
 * include), with the real compiler's preprocessor proving which nccl.h each
 * plan resolves; and the output check in the installed layout on compiled
 * outputs. The real torch compile is in tests/cli/bridge_torch.sh. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cclforge/bridge.h"
#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

static const char stub_src[] = "int cclforge_stub(void) { return 1; }\n";
/* what the plan's proof compiles: the header chain of the real bridge, no more */
static const char probe_src[] = "#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>\nvoid make_nccl_backend();\n";

static void stub_lib(const char *dir, const char *file, const char *soname, const char *extra_c)
{
    char *out = cf_asprintf("%s/%s", dir, file);
    char *so = cf_asprintf("-Wl,-soname,%s", soname);
    char *src = cf_asprintf("%s%s", stub_src, extra_c ? extra_c : "");
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_mkdir_p(dir, 0755, &err), 0);
    ts_cc(dir, out, src, "-shared", "-fPIC", so, NULL);
    free(out);
    free(so);
    free(src);
}

static char *fn(const char *name)
{
    return cf_asprintf("int %s(void) { return 2; }\n", name);
}

/* A torch package dir <site>/torch with include/ and lib/ as pip installs it.
 * gpu: "cuda", "hip" or NULL (CPU-only); hipified: c10/hip headers. */
static char *fake_torch(const char *site, const char *gpu, int with_pg_symbol, int hipified)
{
    char *t = cf_path_join(site, "torch");
    ts_write(t, "include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp",
             hipified ? "#pragma once\n#include <rccl/rccl.h>\n#include <hip/hip_runtime.h>\n"
                      : "#pragma once\n#include <nccl.h>\n#include <cuda_runtime_api.h>\n");
    ts_write(t, "include/ATen/ATen.h", "#error C++20 or later compatible compiler is required to use ATen.\n");
    if (hipified)
        ts_write(t, "include/c10/hip/HIPFunctions.h", "#pragma once\n");
    /* a CUDA wheel ships these too: no sign of a hipified tree */
    ts_write(t, "include/ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h", "#pragma once\n");
    ts_write(t, "version.py", "__all__ = ['__version__']\n__version__ = '9.9.0+test'\n");
    char *lib = cf_path_join(t, "lib");
    char *c10sym = fn("_ZN3c103fooERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
    stub_lib(lib, "libc10.so", "libc10.so", c10sym);
    free(c10sym);
    stub_lib(lib, "libtorch_cpu.so", "libtorch_cpu.so", NULL);
    char *c10 = gpu ? cf_asprintf("libc10_%s.so", gpu) : NULL;
    if (gpu) {
        char *tg = cf_asprintf("libtorch_%s.so", gpu);
        char *dc = cf_asprintf("_ZN3c10%s12device_countEv", !strcmp(gpu, "hip") ? "3hip" : "4cuda");
        char *dcf = fn(dc), *pg = fn("_ZN4c10d16ProcessGroupNCCLD0Ev");
        stub_lib(lib, c10, c10, dcf);
        stub_lib(lib, tg, tg, with_pg_symbol ? pg : NULL);
        free(tg);
        free(dc);
        free(dcf);
        free(pg);
    }
    /* libtorch, libtorch_python and torch/_C as the wheel links them: import
     * torch maps libc10 (and libc10_<gpu>) before any extension, and libtorch
     * brings the GPU half to whatever needs it */
    char *out = cf_path_join(lib, "libtorch_python.so"), *lflag = cf_asprintf("-L%s", lib);
    char *gflag = c10 ? cf_asprintf("-l:%s", c10) : cf_strdup("-lc10");
    char *lt = cf_path_join(lib, "libtorch.so");
    ts_cc(lib, lt, stub_src, "-shared", "-fPIC", "-Wl,-soname,libtorch.so", lflag, "-Wl,--no-as-needed", gflag,
          "-Wl,-rpath,$ORIGIN", NULL);
    free(lt);
    ts_cc(lib, out, stub_src, "-shared", "-fPIC", "-Wl,-soname,libtorch_python.so", lflag, "-Wl,--no-as-needed",
          "-lc10", gflag, "-Wl,-rpath,$ORIGIN", NULL);
    char *c_ext = cf_path_join(t, "_C.cpython-311-x86_64-linux-gnu.so");
    ts_cc(t, c_ext, "int PyInit__C(void) { return 0; }\n", "-shared", "-fPIC", lflag, "-Wl,--no-as-needed",
          "-ltorch_python", "-Wl,-rpath,$ORIGIN/lib", NULL);
    free(out);
    free(lflag);
    free(gflag);
    free(c_ext);
    free(c10);
    free(lib);
    return t;
}

static char *fake_cuda(const char *dir)
{
    char *c = cf_path_join(dir, "cuda");
    ts_write(c, "include/cuda_runtime_api.h", "#pragma once\n");
    return c;
}

static char *fake_nccl(const char *dir, const char *name, int minor)
{
    char *n = cf_path_join(dir, name);
    char *h = cf_asprintf("#define NCCL_MAJOR 2\n#define NCCL_MINOR %d\n#define NCCL_PATCH 3\n", minor);
    ts_write(n, "include/nccl.h", h);
    char *lib = cf_path_join(n, "lib");
    char *banner = cf_asprintf("__attribute__((used)) const char nccl_banner[] = \"NCCL version 2.%d.3+cuda13.0\";\n"
                               "int ncclCommInitRank(void) { return 0; }\n",
                               minor);
    stub_lib(lib, "libnccl.so.2", "libnccl.so.2", banner);
    free(banner);
    free(h);
    free(lib);
    return n;
}

/* <root>/include/hip, include/rccl, lib/librccl.so.1 (+ cuda/cuda-VER/include of a DTK). */
static char *fake_hip_root(const char *dir, const char *name, int dtk)
{
    char *r = cf_path_join(dir, name);
    ts_write(r, "include/hip/hip_runtime.h", "#pragma once\n#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 2\n"
                                             "#define HIP_VERSION_PATCH 41133\n");
    ts_write(r, "include/rccl/rccl.h", "#pragma once\n#define NCCL_MAJOR 2\n#define NCCL_MINOR 18\n#define NCCL_PATCH 3\n");
    ts_write(r, "include/rccl/nccl.h", "#pragma once\n#include \"rccl.h\"\n");
    char *lib = cf_path_join(r, "lib");
    stub_lib(lib, "librccl.so.1", "librccl.so.1",
             "__attribute__((used)) const char b[] = \"RCCL version 2.18.3+hip6.2\";\nint ncclGetVersion(int *v) { "
             "*v = 21803; return 0; }\n");
    free(lib);
    if (dtk) {
        static const char *const vers[] = { "9", "11.8", "12.4" };
        for (size_t i = 0; i < 3; i++) {
            char *rel = cf_asprintf("cuda/cuda-%s/include/cuda_runtime_api.h", vers[i]);
            ts_write(r, rel, "#pragma once\n");
            free(rel);
        }
    }
    return r;
}

static int has(const struct strvec *v, const char *needle)
{
    for (size_t i = 0; i < v->n; i++)
        if (strstr(v->v[i], needle))
            return 1;
    return 0;
}

static void print_problems(const struct cf_bridge_plan *p)
{
    for (size_t i = 0; i < p->problems.n; i++)
        print_message("problem: %s\n", p->problems.v[i]);
}

static const struct cf_bridge_item *find_item(const struct cf_bridge_item *v, size_t n, const char *value)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].value, value))
            return &v[i];
    return NULL;
}

static const char *probe(const char *dir)
{
    return ts_write(dir, "probe.cpp", probe_src);
}

static void plan(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    cf_error err = CF_ERROR_INIT;
    if (cf_bridge_plan_make(o, p, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
}

static void test_nvidia_plan_with_nccl_home(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1, 0), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir, "nccl", 27);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    o.module_name = "mymod";
    o.source = probe(dir);
    struct cf_bridge_plan p;
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_int_equal(p.vendor, CF_VENDOR_NVIDIA);
    assert_non_null(strstr(p.vendor_item.from, "libtorch_cuda.so"));
    assert_string_equal(p.cxx_std, "c++20");
    assert_int_equal(p.cxx11_abi, 1);
    assert_string_equal(p.torch_version, "9.9.0+test");
    assert_int_equal(p.flavour, CF_BRIDGE_CUDA_NAMED);
    assert_string_equal(p.nccl_header.from, "--nccl-home");
    /* include order: comm headers, the vendor root, torch's, Python's */
    char *ti = cf_path_join(torch, "include"), *ci = cf_path_join(cuda, "include"), *ni = cf_path_join(nccl, "include");
    assert_string_equal(p.includes[0].value, ni);
    assert_string_equal(p.includes[1].value, ci);
    assert_string_equal(p.includes[2].value, ti);
    assert_non_null(strstr(p.includes[0].from, "comm headers"));
    /* the preprocessor proved it: the nccl.h that resolves, its version, equal to the library's banner */
    char *nh = cf_path_join(ni, "nccl.h");
    assert_string_equal(p.headers[0].path, nh);
    assert_string_equal(p.headers[0].version, "2.27.3");
    assert_string_equal(p.nccl_library.value, "2.27.3");
    assert_null(p.headers[1].path); /* no rccl.h */
    assert_true(p.proof_files.n >= 3);
    static const char *const want_libs[] = { "c10_cuda", "torch_cuda", "nccl", "c10", "torch", "torch_cpu", "torch_python" };
    assert_int_equal(p.n_libs, 7);
    for (size_t i = 0; i < 7; i++) {
        assert_string_equal(p.libs[i].name, want_libs[i]);
        assert_non_null(p.libs[i].path);
    }
    assert_string_equal(p.device_count.value, "cuda");
    assert_string_equal(p.define_set, "CUDA set");
    assert_non_null(find_item(p.defines, p.n_defines, "USE_C10D_NCCL"));
    assert_non_null(find_item(p.defines, p.n_defines, "C10_CUDA_NO_CMAKE_CONFIGURE_FILE"));
    assert_non_null(find_item(p.defines, p.n_defines, "_GLIBCXX_USE_CXX11_ABI=1"));
    assert_non_null(find_item(p.defines, p.n_defines, "CCLFORGE_BRIDGE_NAME=mymod"));
    assert_null(find_item(p.defines, p.n_defines, "USE_ROCM=1"));
    assert_null(find_item(p.defines, p.n_defines, "CCLFORGE_DEVICE_COUNT_HIP"));
    /* NCCL_HOME is a build machine path: never on the RPATH */
    assert_int_equal(p.n_rpath, 1);
    assert_string_equal(p.rpath[0].value, "$ORIGIN/../torch/lib");
    assert_true(cf_starts_with(p.output_name, "mymod.cpython-"));

    struct strvec argv = STRVEC_INIT;
    cf_bridge_compile_argv(&p, p.source.value, "x.o", &argv);
    assert_true(cf_strvec_contains(&argv, "-std=c++20"));
    assert_true(cf_strvec_contains(&argv, "-DUSE_C10D_NCCL"));
    assert_true(cf_strvec_contains(&argv, "-DCCLFORGE_BRIDGE_NAME=mymod"));
    cf_strvec_clear(&argv);
    cf_bridge_link_argv(&p, "x.o", NULL, "g.o", "out.so", &argv);
    assert_true(cf_strvec_contains(&argv, "-l:libnccl.so.2"));
    assert_true(cf_strvec_contains(&argv, "-l:libtorch_cuda.so"));
    assert_true(cf_strvec_contains(&argv, "-Wl,-rpath,$ORIGIN/../torch/lib"));
    cf_strvec_clear(&argv);
    cf_bridge_plan_release(&p);
    free(nh);
    free(ti);
    free(ci);
    free(ni);
    free(site);
    free(torch);
    free(cuda);
    free(nccl);
}

/* The user's --include comes first; an older nccl.h there fails the plan with
 * the three versions named. */
static void test_older_nccl_h_first_fails_the_plan(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1, 0), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir, "nccl", 27);
    char *old = fake_nccl(dir, "old", 21);
    char *old_inc = cf_path_join(old, "include");
    const char *incs[] = { old_inc };
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    o.source = probe(dir);
    o.extra_includes = incs;
    o.n_extra_includes = 1;
    struct cf_bridge_plan p;
    plan(&o, &p);
    assert_string_equal(p.includes[0].value, old_inc);
    assert_string_equal(p.headers[0].version, "2.21.3");
    assert_true(has(&p.problems, "three NCCL versions disagree"));
    assert_true(has(&p.problems, "NCCL 2.21.3, the library linked is 2.27.3"));
    assert_true(has(&p.problems, "put NCCL 2.27.3's headers first"));
    cf_bridge_plan_release(&p);
    free(old_inc);
    free(old);
    free(site);
    free(torch);
    free(cuda);
    free(nccl);
}

static void test_nvidia_plan_prefers_pip_nccl_beside_torch(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1, 0), *cuda = fake_cuda(dir);
    ts_write(site, "nvidia/nccl/include/nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 30\n#define NCCL_PATCH 7\n");
    char *nlib = cf_asprintf("%s/nvidia/nccl/lib", site);
    stub_lib(nlib, "libnccl.so.2", "libnccl.so.2", NULL);
    unsetenv("NCCL_HOME");
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.package = "plug.comm._ext";
    o.source = probe(dir);
    struct cf_bridge_plan p;
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_string_equal(p.nccl_header_version, "2.30.7");
    assert_string_equal(p.headers[0].version, "2.30.7");
    assert_string_equal(p.nccl_header.from, "pip's nvidia/nccl beside torch");
    /* three package levels up to site-packages */
    assert_string_equal(p.package_dir, "plug/comm/_ext");
    assert_non_null(find_item(p.rpath, p.n_rpath, "$ORIGIN/../../../nvidia/nccl/lib"));
    assert_non_null(find_item(p.rpath, p.n_rpath, "$ORIGIN/../../../torch/lib"));
    cf_bridge_plan_release(&p);
    free(nlib);
    free(site);
    free(torch);
    free(cuda);
}

/* The validated DCU recipe: CUDA-named torch headers over DTK, only
 * USE_C10D_NCCL and C10_CUDA_NO_CMAKE_CONFIGURE_FILE, rccl first, then
 * cuda/cuda-N by number (12.4 > 11.8 > 9), then <root>/include, then torch. */
static void test_dtk_validated_recipe(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "hip", 1, 0), *dtk = fake_hip_root(dir, "dtk-24.04", 1);
    setenv("ROCM_PATH", dtk, 1);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.source = probe(dir);
    struct cf_bridge_plan p;
    plan(&o, &p);
    unsetenv("ROCM_PATH");
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_int_equal(p.vendor, CF_VENDOR_DTK);
    assert_string_equal(p.toolkit_root.from, "ROCM_PATH");
    const char *want[] = { "include/rccl", "cuda/cuda-12.4/include", "cuda/cuda-11.8/include", "cuda/cuda-9/include",
                           "include" };
    for (size_t i = 0; i < 5; i++) {
        char *d = cf_path_join(dtk, want[i]);
        assert_string_equal(p.includes[i].value, d);
        free(d);
    }
    char *ti = cf_path_join(torch, "include");
    assert_string_equal(p.includes[5].value, ti);
    free(ti);
    assert_string_equal(p.define_set, "validated DCU set");
    assert_non_null(find_item(p.defines, p.n_defines, "USE_C10D_NCCL"));
    assert_non_null(find_item(p.defines, p.n_defines, "C10_CUDA_NO_CMAKE_CONFIGURE_FILE"));
    assert_null(find_item(p.defines, p.n_defines, "USE_ROCM=1"));
    assert_null(find_item(p.defines, p.n_defines, "__HIP_PLATFORM_AMD__=1"));
    assert_null(find_item(p.defines, p.n_defines, "__HIP_PLATFORM_HCC__=1"));
    /* the device count by the vendor's exported name */
    assert_string_equal(p.device_count.value, "hip");
    assert_non_null(find_item(p.defines, p.n_defines, "CCLFORGE_DEVICE_COUNT_HIP"));
    static const char *const want_libs[] = { "c10_hip", "torch_hip", "rccl", "c10", "torch", "torch_cpu", "torch_python" };
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(p.libs[i].name, want_libs[i]);
    /* nccl.h resolves to DTK's include/rccl/nccl.h, which forwards to rccl.h 2.18.3 */
    char *nh = cf_asprintf("%s/include/rccl/nccl.h", dtk);
    assert_string_equal(p.headers[0].path, nh);
    assert_string_equal(p.headers[0].version, "2.18.3");
    assert_string_equal(p.nccl_library.value, "2.18.3");
    free(nh);
    cf_bridge_plan_release(&p);
    free(site);
    free(torch);
    free(dtk);
}

/* Hipified torch headers get torch's cpp_extension ROCm set; --define and
 * --undefine change it. */
static void test_hipified_headers_and_overrides(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "hip", 1, 1), *rocm = fake_hip_root(dir, "rocm-6.2", 0);
    const char *defs[] = { "CCLFORGE_TEST=1", "USE_ROCM=2" }, *undefs[] = { "HIPBLAS_V2" };
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = rocm;
    o.vendor = "rocm";
    o.source = probe(dir);
    o.defines = defs;
    o.n_defines = 2;
    o.undefines = undefs;
    o.n_undefines = 1;
    struct cf_bridge_plan p;
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_int_equal(p.vendor, CF_VENDOR_ROCM);
    assert_int_equal(p.flavour, CF_BRIDGE_HIPIFIED);
    assert_string_equal(p.define_set, "torch's cpp_extension ROCm set");
    assert_non_null(find_item(p.defines, p.n_defines, "__HIP_PLATFORM_AMD__=1"));
    assert_non_null(find_item(p.defines, p.n_defines, "USE_ROCM=2"));
    assert_null(find_item(p.defines, p.n_defines, "USE_ROCM=1"));
    assert_null(find_item(p.defines, p.n_defines, "HIPBLAS_V2"));
    assert_null(find_item(p.defines, p.n_defines, "C10_CUDA_NO_CMAKE_CONFIGURE_FILE"));
    assert_non_null(find_item(p.defines, p.n_defines, "CCLFORGE_TEST=1"));
    assert_non_null(find_item(p.defines, p.n_defines, "CCLFORGE_HIPIFIED_HEADERS"));
    assert_non_null(strstr(p.define_set_why, "--define/--undefine"));
    char *rh = cf_asprintf("%s/include/rccl/rccl.h", rocm);
    assert_string_equal(p.headers[1].path, rh);
    assert_string_equal(p.headers[3].version, "6.2.41133");
    free(rh);
    cf_bridge_plan_release(&p);
    free(site);
    free(torch);
    free(rocm);
}

/* --torch-headers (a CPU torch) and --vendor-libs apart: the GPU half linked
 * from the vendor directory, the CPU half from the torch imported; sonames
 * both provide are listed. --rpath is checked to stay in site-packages. */
static void test_separate_headers_vendor_libs_and_rpath(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site"), *vsite = cf_path_join(dir, "vendor-site");
    char *cpu = fake_torch(site, NULL, 0, 0), *vtorch = fake_torch(vsite, "hip", 1, 0);
    char *dtk = fake_hip_root(dir, "dtk", 1);
    char *vlib = cf_path_join(vtorch, "lib");
    const char *rp[] = { "$ORIGIN/../../lib_dcu" };
    struct cf_bridge_opts o = { 0 };
    o.torch_headers = cpu;
    o.vendor_libs = vlib;
    o.toolkit_root = dtk;
    o.vendor = "dtk";
    o.package = "torch_fl.comm._nccl_ext";
    o.module_name = "_flagos_nccl";
    o.rpath = rp;
    o.n_rpath = 1;
    o.source = probe(dir);
    struct cf_bridge_plan p;
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_string_equal(p.torch_import.value, cpu);
    assert_true(cf_starts_with(p.libs[0].path, vlib)); /* libc10_hip from the vendor */
    char *cpu_c10 = cf_asprintf("%s/lib/libc10.so", cpu);
    assert_string_equal(p.libs[3].path, cpu_c10); /* libc10 from the torch imported */
    free(cpu_c10);
    assert_string_equal(p.rpath[0].value, "$ORIGIN/../../lib_dcu");
    assert_non_null(strstr(p.rpath[0].from, "site-packages/torch_fl/lib_dcu (inside the package tree)"));
    assert_string_equal(p.rpath[1].value, "$ORIGIN/../../../torch/lib");
    int c10 = 0;
    for (size_t i = 0; i < p.n_duplicates; i++)
        c10 |= !strcmp(p.duplicates[i].soname, "libc10.so");
    assert_true(c10);
    /* librccl.so.1 is only in the toolkit's lib/: a toolkit library by default, no RPATH to it */
    assert_int_equal(p.n_toolkit_libs, 1);
    assert_string_equal(p.toolkit_libs[0].value, "librccl.so.1");
    assert_non_null(strstr(p.toolkit_libs[0].from, "default: the vendor's comm library"));
    for (size_t i = 0; i < p.n_rpath; i++)
        assert_true(cf_starts_with(p.rpath[i].value, "$ORIGIN"));
    struct strvec gargv = STRVEC_INIT, cargv = STRVEC_INIT;
    cf_bridge_compile_argv(&p, p.guard.value, "g.o", &gargv);
    cf_bridge_compile_argv(&p, p.source.value, "x.o", &cargv);
    assert_true(cf_strvec_contains(&gargv, "-DCCLFORGE_TOOLKIT_LIBS=\"librccl.so.1\""));
    assert_false(cf_strvec_contains(&cargv, "-DCCLFORGE_TOOLKIT_LIBS=\"librccl.so.1\"")); /* the bridge's object stays the same */
    cf_strvec_clear(&gargv);
    cf_strvec_clear(&cargv);
    cf_bridge_plan_release(&p);
    /* --toolkit-lib names a soname, never a path */
    const char *tl[] = { "/opt/dtk/lib/librccl.so.1" };
    o.toolkit_libs = tl;
    o.n_toolkit_libs = 1;
    plan(&o, &p);
    assert_true(has(&p.problems, "--toolkit-lib '/opt/dtk/lib/librccl.so.1': name a library by its soname"));
    cf_bridge_plan_release(&p);
    o.toolkit_libs = NULL;
    o.n_toolkit_libs = 0;

    static const char *const bad[] = { "/opt/dtk/lib", "lib_dcu", "$ORIGIN/../../../../escape", "$ORIGIN/$LIB" };
    for (size_t i = 0; i < 4; i++) {
        rp[0] = bad[i];
        plan(&o, &p);
        assert_true(has(&p.problems, "--rpath '"));
        cf_bridge_plan_release(&p);
    }
    o.package = "torch_fl..comm";
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_bridge_plan_make(&o, &p, &err), -1);
    assert_int_equal(err.kind, CF_ERR_USAGE);
    cf_error_clear(&err);
    cf_bridge_plan_release(&p);
    o.package = "ok";
    o.max_glibc = "glibc-2.x";
    assert_int_equal(cf_bridge_plan_make(&o, &p, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "--max-glibc"));
    cf_error_clear(&err);
    cf_bridge_plan_release(&p);
    o.max_glibc = "manylinux_2_28_x86_64";
    plan(&o, &p);
    assert_int_equal(p.max_glibc, 2028);
    cf_bridge_plan_release(&p);
    free(vlib);
    free(site);
    free(vsite);
    free(cpu);
    free(vtorch);
    free(dtk);
}

static void test_no_libtorch(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *missing = cf_path_join(dir, "nowhere");
    struct cf_bridge_opts o = { 0 };
    o.libtorch = missing;
    struct cf_bridge_plan p;
    plan(&o, &p);
    assert_true(has(&p.problems, "nowhere: no such directory"));
    cf_bridge_plan_release(&p);
    free(missing);
}

static void test_cpu_only_libtorch(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site"), *site2 = cf_path_join(dir, "site2");
    char *torch = fake_torch(site, NULL, 0, 0), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir, "nccl", 27);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    o.source = probe(dir);
    struct cf_bridge_plan p;
    plan(&o, &p);
    assert_int_equal(p.vendor, CF_VENDOR_NVIDIA);
    assert_true(has(&p.problems, "CPU-only libtorch: libtorch_cuda.so is not in"));
    cf_bridge_plan_release(&p);
    /* a libtorch_cuda.so built without NCCL */
    char *torch2 = fake_torch(site2, "cuda", 0, 0);
    o.libtorch = torch2;
    plan(&o, &p);
    assert_true(has(&p.problems, "exports no c10d::ProcessGroupNCCL"));
    cf_bridge_plan_release(&p);
    free(site);
    free(site2);
    free(torch);
    free(torch2);
    free(cuda);
    free(nccl);
}

static void test_old_compiler_is_refused(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1, 0), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir, "nccl", 27);
    char *gxx = ts_write(dir, "bin/g++-8", "#!/bin/sh\necho 'g++ (GCC) 8.5.0 20210514 (Red Hat 8.5.0-4)'\n");
    chmod(gxx, 0755);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    o.cxx = gxx;
    struct cf_bridge_plan p;
    plan(&o, &p);
    assert_int_equal(p.cxx_major, 8);
    assert_true(has(&p.problems, "is GCC 8.5.0"));
    assert_true(has(&p.problems, "too old, the bridge needs GCC >= 10"));
    assert_non_null(strstr(p.proof, "not run"));
    cf_bridge_plan_release(&p);
    free(site);
    free(torch);
    free(cuda);
    free(nccl);
}

static void test_driver_library_never_bundled_and_bad_names(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1, 0), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir, "nccl", 27);
    char *libcuda = cf_path_join(dir, "libcuda.so.1");
    ts_write(dir, "libcuda.so.1", "not really\n");
    const char *bundle[] = { libcuda };
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    o.bundle_libs = bundle;
    o.n_bundle_libs = 1;
    struct cf_bridge_plan p;
    plan(&o, &p);
    assert_true(has(&p.problems, "is never bundled"));
    cf_bridge_plan_release(&p);
    o.n_bundle_libs = 0;
    o.module_name = "bad-name";
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_bridge_plan_make(&o, &p, &err), -1);
    assert_int_equal(err.kind, CF_ERR_USAGE);
    cf_error_clear(&err);
    cf_bridge_plan_release(&p);
    free(libcuda);
    free(site);
    free(torch);
    free(cuda);
    free(nccl);
}

static int has_check(const struct cf_bridge_build_result *r, const char *needle)
{
    return has(&r->checks, needle);
}

/* Checks `so` in the installed layout under dir/stage; prints every problem. */
static void inspect(const struct cf_bridge_plan *p, const char *so, const char *dir, const char *label,
                    struct cf_bridge_build_result *r)
{
    char *stage = cf_path_join(dir, "stage");
    memset(r, 0, sizeof *r);
    cf_error err = CF_ERROR_INIT;
    if (cf_bridge_inspect_output(p, so, stage, r, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    for (size_t i = 0; i < r->problems.n; i++)
        print_message("%sproblem: %s\n", label, r->problems.v[i]);
    free(stage);
}

/* dir/lib_dcu as a plugin ships it: links to the named libraries of a vendor
 * torch's lib/. Returns the directory. */
static char *plugin_vendor_dir(const char *dir, const char *vtorch, const char *const *names, size_t n)
{
    char *vlib = cf_path_join(dir, "lib_dcu");
    for (size_t i = 0; i < n; i++) {
        char *from = cf_asprintf("%s/lib/%s", vtorch, names[i]), *to = cf_path_join(vlib, names[i]);
        ts_write(vlib, names[i], "");
        unlink(to);
        assert_int_equal(symlink(from, to), 0);
        free(from);
        free(to);
    }
    return vlib;
}

/* The options of a DTK plugin: CPU torch headers, the plugin's vendor
 * directory reached by $ORIGIN/../lib_vendor, module m in plug.ext. */
static void dtk_plugin_opts(struct cf_bridge_opts *o, const char *headers, const char *vlib, const char *dtk,
                            const char *dir)
{
    static const char *const rp[] = { "$ORIGIN/../lib_vendor" };
    memset(o, 0, sizeof *o);
    o->torch_headers = headers;
    o->vendor_libs = vlib;
    o->toolkit_root = dtk;
    o->vendor = "dtk";
    o->rpath = rp;
    o->n_rpath = 1;
    o->module_name = "m";
    o->package = "plug.ext";
    o->source = probe(dir);
}

static void test_inspect_output_in_the_installed_layout(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1, 0), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir, "nccl", 27);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    o.source = probe(dir);
    struct cf_bridge_plan p;
    plan(&o, &p);
    char *pkg = cf_path_join(dir, "out/pkg");
    ts_write(pkg, "keep", "");
    char *so = cf_path_join(pkg, "bad.so"), *lflag = cf_asprintf("-L%s/lib", torch),
         *nflag = cf_asprintf("-L%s/lib", nccl);
    ts_cc(pkg, so, "int PyInit_other(void) { return 0; }\n", "-shared", "-fPIC", lflag, nflag, "-Wl,--no-as-needed",
          "-ltorch_cuda", "-l:libnccl.so.2", "-Wl,-rpath,/home/builder/private/lib", "-Wl,-rpath,$ORIGIN/../torch/lib",
          NULL);
    struct cf_bridge_build_result r;
    inspect(&p, so, dir, "", &r);
    assert_true(has(&r.problems, "RPATH /home/builder/private/lib is an absolute path"));
    assert_true(has(&r.problems, "PyInit__cclforge_nccl is not exported"));
    /* NCCL_HOME is not part of the installed layout */
    assert_true(has(&r.problems, "NEEDED libnccl.so.2 is not in the installed layout"));
    assert_true(has_check(&r, "NEEDED libtorch_cuda.so -> site-packages/torch/lib/libtorch_cuda.so"));
    cf_bridge_build_result_release(&r);
    cf_bridge_plan_release(&p);
    free(so);
    free(lflag);
    free(nflag);
    free(pkg);
    free(site);
    free(torch);
    free(cuda);
    free(nccl);
}

/* A DTK bridge that asks for c10::cuda::device_count: with a CPU-only torch
 * at import it is undefined, named with the library it belongs to; with a
 * torch that has libc10_cuda it is defined by the wrong library. */
static void test_vendor_symbols_come_from_the_vendor(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site"), *site2 = cf_path_join(dir, "site2"), *vsite = cf_path_join(dir, "vsite");
    char *cpu = fake_torch(site, NULL, 0, 0), *cudatorch = fake_torch(site2, "cuda", 1, 0);
    char *vtorch = fake_torch(vsite, "hip", 1, 0), *dtk = fake_hip_root(dir, "dtk", 1);
    /* what a plugin's lib_dcu holds: the GPU half and the vendor's own libc10 */
    static const char *const shipped[] = { "libc10_hip.so", "libtorch_hip.so", "libc10.so" };
    char *vlib = plugin_vendor_dir(dir, vtorch, shipped, 3);
    struct cf_bridge_opts o;
    dtk_plugin_opts(&o, cpu, vlib, dtk, dir);
    const char *tops[] = { cpu, cudatorch };
    for (int round = 0; round < 2; round++) {
        o.torch_headers = tops[round];
        struct cf_bridge_plan p;
        plan(&o, &p);
        print_problems(&p);
        assert_int_equal(p.problems.n, 0);
        char *pkg = cf_path_join(dir, "out/plug/ext");
        char *so = cf_path_join(pkg, "m.so");
        char *l1 = cf_asprintf("-L%s", vlib), *l2 = cf_asprintf("-L%s/lib", tops[round]);
        ts_write(pkg, "keep", "");
        ts_cc(pkg, so,
              "int _ZN3c104cuda12device_countEv(void);\nint _ZN3c103hip12device_countEv(void);\n"
              "int PyInit_m(void) { return _ZN3c104cuda12device_countEv() + _ZN3c103hip12device_countEv(); }\n",
              "-shared", "-fPIC", l1, l2, "-Wl,--no-as-needed", "-lc10_hip", "-ltorch_hip", "-lc10", "-ltorch",
              "-Wl,-rpath,$ORIGIN/../lib_vendor", "-Wl,-rpath,$ORIGIN/../../torch/lib", NULL);
        struct cf_bridge_build_result r;
        inspect(&p, so, dir, round ? "round 1 " : "round 0 ", &r);
        assert_true(has_check(&r, "ok: _ZN3c103hip12device_countEv from libc10_hip.so"));
        if (round == 0)
            assert_true(has(&r.problems, "undefined symbol _ZN3c104cuda12device_countEv in site-packages/"
                                         "plug/ext/m.so at import: c10::cuda:: belongs to libc10_hip"));
        else
            assert_true(has(&r.problems, "_ZN3c104cuda12device_countEv (c10::cuda::) is defined at import by "
                                         "site-packages/torch/lib/libc10_cuda.so, not by libc10_hip.so"));
        /* libc10.so: both the vendor directory and the importing torch have it */
        assert_true(has_check(&r, "libc10.so is in both"));
        cf_bridge_build_result_release(&r);
        cf_bridge_plan_release(&p);
        free(pkg);
        free(so);
        free(l1);
        free(l2);
    }
    free(vlib);
    free(site);
    free(site2);
    free(vsite);
    free(cpu);
    free(cudatorch);
    free(vtorch);
    free(dtk);
}

/* A library the extension's dlopen maps (the plugin's own helper in lib_dcu)
 * is resolved in the extension's lookup scope: a symbol only torch/_C's
 * libtorch_python defines (mapped at import, but in _C's scope, not this one)
 * is undefined for it, named with the helper; the extension's own reference
 * to libc10 resolves. */
static void test_vendor_library_references_in_the_extensions_scope(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *cpu = fake_torch(site, NULL, 0, 0), *vsite = cf_path_join(dir, "vsite");
    char *vtorch = fake_torch(vsite, "hip", 1, 0), *dtk = fake_hip_root(dir, "dtk", 1);
    /* the CPU torch's libtorch_python defines what the helper wants */
    char *tlib = cf_path_join(cpu, "lib"), *tp = cf_path_join(tlib, "libtorch_python.so");
    char *tl = cf_asprintf("-L%s", tlib);
    ts_cc(tlib, tp, "int cclforge_only_in_torch_python(void) { return 3; }\n", "-shared", "-fPIC",
          "-Wl,-soname,libtorch_python.so", tl, "-Wl,--no-as-needed", "-lc10", "-Wl,-rpath,$ORIGIN", NULL);
    static const char *const shipped[] = { "libc10_hip.so", "libtorch_hip.so" };
    char *vlib = plugin_vendor_dir(dir, vtorch, shipped, 2);
    char *helper = cf_path_join(vlib, "libhelper.so");
    ts_cc(vlib, helper, "int cclforge_only_in_torch_python(void);\n"
                        "int helper(void) { return cclforge_only_in_torch_python(); }\n",
          "-shared", "-fPIC", "-Wl,-soname,libhelper.so", NULL);
    struct cf_bridge_opts o;
    dtk_plugin_opts(&o, cpu, vlib, dtk, dir);
    struct cf_bridge_plan p;
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    char *pkg = cf_path_join(dir, "out/plug/ext");
    char *so = cf_path_join(pkg, "m.so");
    char *l1 = cf_asprintf("-L%s", vlib);
    ts_write(pkg, "keep", "");
    ts_cc(pkg, so,
          "int _ZN3c103hip12device_countEv(void);\nint helper(void);\n"
          "int _ZN3c103fooERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE(void);\n"
          "int PyInit_m(void) { return _ZN3c103hip12device_countEv() + helper() + "
          "_ZN3c103fooERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE(); }\n",
          "-shared", "-fPIC", l1, tl, "-Wl,--no-as-needed", "-lc10_hip", "-lhelper", "-lc10",
          "-Wl,-rpath,$ORIGIN/../lib_vendor", "-Wl,-rpath,$ORIGIN/../../torch/lib", NULL);
    struct cf_bridge_build_result r;
    inspect(&p, so, dir, "", &r);
    assert_true(has(&r.problems, "undefined symbol cclforge_only_in_torch_python in site-packages/plug/lib_vendor/"
                                 "libhelper.so at import: nothing in its lookup scope"));
    assert_false(has(&r.problems, "_ZN3c103foo"));
    assert_true(has_check(&r, "ok: _ZN3c103hip12device_countEv from libc10_hip.so"));
    cf_bridge_build_result_release(&r);
    cf_bridge_plan_release(&p);
    free(pkg);
    free(so);
    free(l1);
    free(helper);
    free(vlib);
    free(tl);
    free(tp);
    free(tlib);
    free(site);
    free(vsite);
    free(cpu);
    free(vtorch);
    free(dtk);
}

/* A source without make_nccl_backend is named before anything compiles; a
 * bridge's plan carries its commands with absolute paths under -o. */
static void test_not_a_bridge_source_and_the_plan_commands(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1, 0), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir, "nccl", 27);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    o.source = ts_write(dir, "other.cpp", "#include <nccl.h>\nint f() { return 1; }\n");
    struct cf_bridge_plan p;
    plan(&o, &p);
    int named = 0;
    for (size_t i = 0; i < p.problems.n; i++)
        named |= strstr(p.problems.v[i], "other.cpp is not a bridge source: it defines no make_nccl_backend") != NULL;
    assert_true(named);
    cf_bridge_plan_release(&p);
    o.source = probe(dir);
    o.out_dir = "rel-out";
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    char *cwd = getcwd(NULL, 0);
    char *want = cf_asprintf("%s/rel-out/%s/%s", cwd, p.package_dir, p.output_name);
    assert_string_equal(p.output, want);
    assert_true(p.source.value[0] == '/' && p.guard.value[0] == '/');
    assert_true(cf_ends_with(p.guard.value, "/bridge/cclforge_abi_guard.cpp"));
    struct strvec argv = STRVEC_INIT;
    cf_bridge_link_argv(&p, p.object, &p.more_objects, p.guard_object, p.output, &argv);
    assert_true(cf_strvec_contains(&argv, p.object) && cf_strvec_contains(&argv, p.guard_object));
    cf_strvec_clear(&argv);
    free(want);
    free(cwd);
    cf_bridge_plan_release(&p);
    /* run as given into a directory nothing created: the mkdir step first
     * makes every directory a later command's -o writes into */
    char *fresh = cf_path_join(dir, "fresh/out");
    o.out_dir = fresh;
    plan(&o, &p);
    assert_int_equal(p.problems.n, 0);
    struct strvec mk = STRVEC_INIT;
    cf_bridge_mkdir_argv(&p, &mk);
    assert_string_equal(mk.v[0], "mkdir");
    size_t n;
    struct strvec *cmds = cf_bridge_plan_commands(&p, &n);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k + 1 < cmds[i].n; k++)
            if (!strcmp(cmds[i].v[k], "-o")) {
                char *d = cf_dirname(cmds[i].v[k + 1]);
                assert_false(cf_is_dir(d));
                free(d);
            }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execvp(mk.v[0], cf_strvec_argv(&mk));
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    size_t outputs = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k + 1 < cmds[i].n; k++)
            if (!strcmp(cmds[i].v[k], "-o")) {
                char *d = cf_dirname(cmds[i].v[k + 1]);
                assert_true(cf_is_dir(d));
                outputs++;
                free(d);
            }
    assert_int_equal(outputs, n); /* every compile and the link write somewhere, and each place exists */
    cf_bridge_commands_free(cmds, n);
    cf_strvec_clear(&mk);
    cf_bridge_plan_release(&p);
    free(fresh);
    free(torch);
    free(cuda);
    free(nccl);
    free(site);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvidia_plan_with_nccl_home),
        cmocka_unit_test(test_older_nccl_h_first_fails_the_plan),
        cmocka_unit_test(test_nvidia_plan_prefers_pip_nccl_beside_torch),
        cmocka_unit_test(test_dtk_validated_recipe),
        cmocka_unit_test(test_hipified_headers_and_overrides),
        cmocka_unit_test(test_separate_headers_vendor_libs_and_rpath),
        cmocka_unit_test(test_no_libtorch),
        cmocka_unit_test(test_cpu_only_libtorch),
        cmocka_unit_test(test_old_compiler_is_refused),
        cmocka_unit_test(test_driver_library_never_bundled_and_bad_names),
        cmocka_unit_test(test_inspect_output_in_the_installed_layout),
        cmocka_unit_test(test_vendor_symbols_come_from_the_vendor),
        cmocka_unit_test(test_vendor_library_references_in_the_extensions_scope),
        cmocka_unit_test(test_not_a_bridge_source_and_the_plan_commands),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
