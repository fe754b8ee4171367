/* The bridge plan over libtorch / CUDA / ROCm / DTK trees built here in the
 * vendors' layouts (stub ELF libraries compiled by cc with the right names and
 * symbols), and the post-build inspection on compiled outputs. The real torch
 * compile is in tests/cli/bridge_torch.sh. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cclforge/bridge.h"
#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

static const char stub_src[] = "int cclforge_stub(void) { return 1; }\n";

static void stub_lib(const char *dir, const char *file, const char *soname, const char *extra_symbol)
{
    char *out = cf_asprintf("%s/%s", dir, file);
    char *so = cf_asprintf("-Wl,-soname,%s", soname);
    char *src = extra_symbol ? cf_asprintf("%sint %s(void) { return 2; }\n", stub_src, extra_symbol) : cf_strdup(stub_src);
    char *mk = cf_strdup(dir);
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_mkdir_p(mk, 0755, &err), 0);
    ts_cc(dir, out, src, "-shared", "-fPIC", so, NULL);
    free(out);
    free(so);
    free(src);
    free(mk);
}

/* A torch package dir: <site>/torch with include/ and lib/ as pip installs it. */
static char *fake_torch(const char *site, const char *gpu, int with_pg_symbol)
{
    char *t = cf_path_join(site, "torch");
    ts_write(t, "include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp", "#pragma once\n");
    ts_write(t, "include/ATen/ATen.h", "#error C++20 or later compatible compiler is required to use ATen.\n");
    ts_write(t, "version.py", "__all__ = ['__version__']\n__version__ = '9.9.0+test'\n");
    char *lib = cf_path_join(t, "lib");
    stub_lib(lib, "libc10.so", "libc10.so", "_ZN3c103fooERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
    static const char *const common[] = { "libtorch.so", "libtorch_cpu.so", "libtorch_python.so" };
    for (size_t i = 0; i < 3; i++)
        stub_lib(lib, common[i], common[i], NULL);
    if (gpu) {
        char *c10 = cf_asprintf("libc10_%s.so", gpu), *tg = cf_asprintf("libtorch_%s.so", gpu);
        stub_lib(lib, c10, c10, NULL);
        stub_lib(lib, tg, tg, with_pg_symbol ? "_ZN4c10d16ProcessGroupNCCLD0Ev" : NULL);
        free(c10);
        free(tg);
    }
    free(lib);
    return t;
}

static char *fake_cuda(const char *dir)
{
    char *c = cf_path_join(dir, "cuda");
    ts_write(c, "include/cuda_runtime_api.h", "#pragma once\n");
    return c;
}

static char *fake_nccl(const char *dir)
{
    char *n = cf_path_join(dir, "nccl");
    ts_write(n, "include/nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 27\n#define NCCL_PATCH 3\n");
    char *lib = cf_path_join(n, "lib");
    stub_lib(lib, "libnccl.so.2", "libnccl.so.2", "ncclCommInitRank");
    free(lib);
    return n;
}

/* <root>/include/hip, include/rccl, lib/librccl.so.1 (+ the cuda/cuda-VER/include dirs of a DTK). */
static char *fake_hip_root(const char *dir, const char *name, int dtk)
{
    char *r = cf_path_join(dir, name);
    ts_write(r, "include/hip/hip_runtime.h", "#pragma once\n");
    ts_write(r, "include/rccl/rccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 18\n#define NCCL_PATCH 3\n");
    char *lib = cf_path_join(r, "lib");
    stub_lib(lib, "librccl.so.1", "librccl.so.1", "ncclCommInitRank");
    free(lib);
    if (dtk) {
        ts_write(r, "cuda/cuda-11.8/include/cuda_runtime_api.h", "#pragma once\n");
        ts_write(r, "cuda/cuda-12.4/include/cuda_runtime_api.h", "#pragma once\n");
    }
    return r;
}

static int has_problem(const struct cf_bridge_plan *p, const char *needle)
{
    for (size_t i = 0; i < p->problems.n; i++)
        if (strstr(p->problems.v[i], needle))
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

static void plan(const struct cf_bridge_opts *o, struct cf_bridge_plan *p)
{
    cf_error err = CF_ERROR_INIT;
    if (cf_bridge_plan_make(o, p, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
}

static void test_nvidia_plan_with_nccl_home(void **state)
{
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    o.module_name = "mymod";
    struct cf_bridge_plan p;
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_int_equal(p.vendor, CF_VENDOR_NVIDIA);
    assert_non_null(strstr(p.vendor_item.from, "libtorch_cuda.so"));
    assert_string_equal(p.cxx_std, "c++20");
    assert_int_equal(p.cxx11_abi, 1);
    assert_string_equal(p.torch_version, "9.9.0+test");
    assert_string_equal(p.nccl_header_version, "2.27.3");
    assert_string_equal(p.nccl_header.from, "--nccl-home");
    /* include order: torch, CUDA, the nccl.h that matches the library, Python */
    char *ti = cf_path_join(torch, "include"), *ci = cf_path_join(cuda, "include"), *ni = cf_path_join(nccl, "include");
    assert_string_equal(p.includes[0].value, ti);
    assert_string_equal(p.includes[2].value, ci);
    assert_string_equal(p.includes[3].value, ni);
    assert_string_equal(p.includes[0].from, "torch (--libtorch)");
    static const char *const want_libs[] = { "c10_cuda", "torch_cuda", "nccl", "c10", "torch", "torch_cpu", "torch_python" };
    assert_int_equal(p.n_libs, 7);
    for (size_t i = 0; i < 7; i++) {
        assert_string_equal(p.libs[i].name, want_libs[i]);
        assert_non_null(p.libs[i].path);
    }
    assert_true(cf_ends_with(p.libs[2].path, "/nccl/lib/libnccl.so.2"));
    assert_non_null(find_item(p.defines, p.n_defines, "USE_C10D_NCCL"));
    assert_non_null(find_item(p.defines, p.n_defines, "C10_CUDA_NO_CMAKE_CONFIGURE_FILE"));
    assert_non_null(find_item(p.defines, p.n_defines, "_GLIBCXX_USE_CXX11_ABI=1"));
    assert_non_null(find_item(p.defines, p.n_defines, "CCLFORGE_BRIDGE_NAME=mymod"));
    assert_null(find_item(p.defines, p.n_defines, "USE_ROCM"));
    /* NCCL_HOME is a build machine path: never on the RPATH */
    assert_int_equal(p.n_rpath, 1);
    assert_string_equal(p.rpath[0].value, "$ORIGIN/../torch/lib");
    assert_true(cf_starts_with(p.output_name, "mymod.cpython-"));

    struct strvec argv = STRVEC_INIT;
    cf_bridge_compile_argv(&p, "x.o", &argv);
    assert_true(cf_strvec_contains(&argv, "-std=c++20"));
    assert_true(cf_strvec_contains(&argv, "-DUSE_C10D_NCCL"));
    assert_true(cf_strvec_contains(&argv, "-DCCLFORGE_BRIDGE_NAME=mymod"));
    cf_strvec_clear(&argv);
    cf_bridge_link_argv(&p, "x.o", "out.so", &argv);
    assert_true(cf_strvec_contains(&argv, "-l:libnccl.so.2"));
    assert_true(cf_strvec_contains(&argv, "-l:libtorch_cuda.so"));
    assert_true(cf_strvec_contains(&argv, "-Wl,-rpath,$ORIGIN/../torch/lib"));
    cf_strvec_clear(&argv);
    cf_bridge_plan_release(&p);
    free(ti);
    free(ci);
    free(ni);
    free(site);
    free(torch);
    free(cuda);
    free(nccl);
}

static void test_nvidia_plan_prefers_pip_nccl_beside_torch(void **state)
{
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1), *cuda = fake_cuda(dir);
    ts_write(site, "nvidia/nccl/include/nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 30\n#define NCCL_PATCH 7\n");
    char *nlib = cf_asprintf("%s/nvidia/nccl/lib", site);
    stub_lib(nlib, "libnccl.so.2", "libnccl.so.2", NULL);
    unsetenv("NCCL_HOME");
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    struct cf_bridge_plan p;
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_string_equal(p.nccl_header_version, "2.30.7");
    assert_string_equal(p.nccl_header.from, "pip's nvidia/nccl beside torch");
    assert_non_null(find_item(p.rpath, p.n_rpath, "$ORIGIN/../nvidia/nccl/lib"));
    assert_string_equal(p.module_name, CF_BRIDGE_DEFAULT_MODULE);
    cf_bridge_plan_release(&p);
    free(nlib);
    free(site);
    free(torch);
    free(cuda);
}

static void test_dtk_plan_from_rocm_path(void **state)
{
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "hip", 1), *dtk = fake_hip_root(dir, "dtk-24.04", 1);
    setenv("ROCM_PATH", dtk, 1);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    const char *bundle[] = { NULL };
    char *rccl = cf_asprintf("%s/lib/librccl.so.1", dtk);
    bundle[0] = rccl;
    o.bundle_libs = bundle;
    o.n_bundle_libs = 1;
    struct cf_bridge_plan p;
    plan(&o, &p);
    unsetenv("ROCM_PATH");
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_int_equal(p.vendor, CF_VENDOR_DTK);
    assert_non_null(strstr(p.vendor_item.from, "DTK"));
    assert_string_equal(p.toolkit_root.from, "ROCM_PATH");
    char *inc = cf_path_join(dtk, "include"), *rinc = cf_asprintf("%s/include/rccl", dtk),
         *c12 = cf_asprintf("%s/cuda/cuda-12.4/include", dtk), *c11 = cf_asprintf("%s/cuda/cuda-11.8/include", dtk);
    assert_string_equal(p.includes[2].value, inc);
    assert_string_equal(p.includes[3].value, rinc);
    assert_string_equal(p.includes[4].value, c12);
    assert_string_equal(p.includes[5].value, c11);
    static const char *const want_libs[] = { "c10_hip", "torch_hip", "rccl", "c10", "torch", "torch_cpu", "torch_python" };
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(p.libs[i].name, want_libs[i]);
    assert_true(cf_ends_with(p.libs[2].path, "/lib/librccl.so.1"));
    assert_non_null(find_item(p.defines, p.n_defines, "USE_ROCM"));
    assert_non_null(find_item(p.defines, p.n_defines, "__HIP_PLATFORM_AMD__=1"));
    assert_string_equal(p.rpath[0].value, "$ORIGIN/lib");
    assert_string_equal(p.rpath[1].value, "$ORIGIN/../torch/lib");
    assert_int_equal(p.n_rpath, 2);
    assert_int_equal(p.bundle_libs.n, 1);
    assert_string_equal(p.nccl_header_version, "2.18.3");
    cf_bridge_plan_release(&p);
    free(inc);
    free(rinc);
    free(c12);
    free(c11);
    free(rccl);
    free(site);
    free(torch);
    free(dtk);
}

static void test_rocm_plan(void **state)
{
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "hip", 1), *rocm = fake_hip_root(dir, "rocm-6.2", 0);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = rocm;
    o.vendor = "rocm";
    const char *ext[] = { "/opt/site-rocm/lib" };
    o.external_rpath = ext;
    o.n_external_rpath = 1;
    struct cf_bridge_plan p;
    plan(&o, &p);
    print_problems(&p);
    assert_int_equal(p.problems.n, 0);
    assert_int_equal(p.vendor, CF_VENDOR_ROCM);
    assert_null(find_item(p.defines, p.n_defines, "__HIP_PLATFORM_HCC__=1"));
    assert_non_null(find_item(p.defines, p.n_defines, "USE_ROCM"));
    const struct cf_bridge_item *e = find_item(p.rpath, p.n_rpath, "/opt/site-rocm/lib");
    assert_non_null(e);
    assert_non_null(strstr(e->from, "declared external"));
    cf_bridge_plan_release(&p);
    free(site);
    free(torch);
    free(rocm);
}

static void test_no_libtorch(void **state)
{
    char *dir = ts_tmpdir();
    char *missing = cf_path_join(dir, "nowhere");
    struct cf_bridge_opts o = { 0 };
    o.libtorch = missing;
    struct cf_bridge_plan p;
    plan(&o, &p);
    assert_true(has_problem(&p, "no libtorch at"));
    assert_true(has_problem(&p, "ProcessGroupNCCL.hpp"));
    cf_bridge_plan_release(&p);

    /* nothing given and a Python without torch */
    unsetenv("LIBTORCH");
    char *empty = cf_path_join(dir, "empty");
    ts_write(empty, "keep", "");
    setenv("PYTHONNOUSERSITE", "1", 1);
    o.libtorch = NULL;
    o.python = "python3";
    plan(&o, &p);
    if (!p.torch_dir.value) /* a machine whose python3 has torch gets a plan instead */
        assert_true(has_problem(&p, "no libtorch: pass --libtorch DIR"));
    cf_bridge_plan_release(&p);
    free(missing);
    free(empty);
}

static void test_cpu_only_libtorch(void **state)
{
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site"), *site2 = cf_path_join(dir, "site2");
    char *torch = fake_torch(site, NULL, 0), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    struct cf_bridge_plan p;
    plan(&o, &p);
    assert_int_equal(p.vendor, CF_VENDOR_NVIDIA);
    assert_true(has_problem(&p, "CPU-only libtorch: libtorch_cuda.so is not in"));
    cf_bridge_plan_release(&p);

    /* a libtorch_cuda.so built without NCCL */
    char *torch2 = fake_torch(site2, "cuda", 0);
    o.libtorch = torch2;
    plan(&o, &p);
    assert_true(has_problem(&p, "exports no c10d::ProcessGroupNCCL"));
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
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir);
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
    assert_true(has_problem(&p, "is GCC 8.5.0"));
    assert_true(has_problem(&p, "too old, the bridge needs GCC >= 10"));
    cf_bridge_plan_release(&p);
    free(site);
    free(torch);
    free(cuda);
    free(nccl);
}

static void test_driver_library_never_bundled_and_bad_names(void **state)
{
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir);
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
    assert_true(has_problem(&p, "is never bundled"));
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

static void test_inspect_output_finds_absolute_rpath_and_missing_init(void **state)
{
    char *dir = ts_tmpdir();
    char *site = cf_path_join(dir, "site");
    char *torch = fake_torch(site, "cuda", 1), *cuda = fake_cuda(dir), *nccl = fake_nccl(dir);
    struct cf_bridge_opts o = { 0 };
    o.libtorch = torch;
    o.toolkit_root = cuda;
    o.nccl_home = nccl;
    struct cf_bridge_plan p;
    plan(&o, &p);
    char *pkg = cf_path_join(dir, "out/pkg");
    ts_write(pkg, "keep", "");
    char *so = cf_path_join(pkg, "bad.so"), *lflag = cf_asprintf("-L%s/lib", torch),
         *nflag = cf_asprintf("-L%s/lib", nccl);
    ts_cc(pkg, so, "int PyInit_other(void) { return 0; }\n", "-shared", "-fPIC", lflag, nflag, "-Wl,--no-as-needed",
          "-ltorch_cuda", "-l:libnccl.so.2", "-Wl,-rpath,/home/builder/private/lib", "-Wl,-rpath,$ORIGIN/../torch/lib",
          NULL);
    struct cf_bridge_build_result r = { 0 };
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_bridge_inspect_output(&p, so, &r, &err), 0);
    int abs_rpath = 0, no_init = 0, nccl_missing = 0, torch_ok = 0;
    for (size_t i = 0; i < r.problems.n; i++) {
        abs_rpath |= strstr(r.problems.v[i], "RPATH /home/builder/private/lib is an absolute path") != NULL;
        no_init |= strstr(r.problems.v[i], "PyInit__cclforge_nccl is not exported") != NULL;
        nccl_missing |= strstr(r.problems.v[i], "NEEDED libnccl.so.2 is not resolvable") != NULL;
    }
    for (size_t i = 0; i < r.checks.n; i++)
        torch_ok |= strstr(r.checks.v[i], "NEEDED libtorch_cuda.so resolves through $ORIGIN/../torch/lib") != NULL;
    assert_true(abs_rpath);
    assert_true(no_init);
    assert_true(nccl_missing);
    assert_true(torch_ok);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvidia_plan_with_nccl_home),
        cmocka_unit_test(test_nvidia_plan_prefers_pip_nccl_beside_torch),
        cmocka_unit_test(test_dtk_plan_from_rocm_path),
        cmocka_unit_test(test_rocm_plan),
        cmocka_unit_test(test_no_libtorch),
        cmocka_unit_test(test_cpu_only_libtorch),
        cmocka_unit_test(test_old_compiler_is_refused),
        cmocka_unit_test(test_driver_library_never_bundled_and_bad_names),
        cmocka_unit_test(test_inspect_output_finds_absolute_rpath_and_missing_init),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
