/* The static findings of a plugin's bridge wheel that installs yet loses its
 * tier (src/pkg/wheel_native.c, wheel_bridge.c, wheel_needed.c,
 * wheel_requires.c), on wheels written here around modules the compiler and
 * linker make here: stand-in libtorch_cuda.so and libnccl.so.2 in a
 * site-packages with torch's and the NCCL wheel's dist-info (torch's METADATA
 * requiring the NCCL wheel), and a module named as import takes it. The same
 * findings on real torch builds: tests/cli/plugin_tier_lost.sh. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"
#include "cclforge/wheel.h"

#define MOD "_flagos_nccl.cpython-311-x86_64-linux-gnu.so"
#define EXT "torch_fl/comm/_nccl_ext"

struct env {
    char *dir, *site;
};

static struct env E;

static void mkdirs(const char *path)
{
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_mkdir_p(path, 0755, &err), 0);
}

static int setup(void **state)
{
    (void)state;
    E.dir = ts_tmpdir();
    E.site = cf_asprintf("%s/site", E.dir);
    char *tl = cf_asprintf("%s/torch/lib", E.site), *nl = cf_asprintf("%s/nvidia/nccl/lib", E.site);
    mkdirs(tl);
    mkdirs(nl);
    char *t = cf_asprintf("%s/libtorch_cuda.so", tl), *n = cf_asprintf("%s/libnccl.so.2", nl);
    ts_cc(E.dir, t, "int torch_stub(void) { return 1; }\n", "-shared", "-fPIC", "-Wl,-soname,libtorch_cuda.so",
          NULL);
    ts_cc(E.dir, n, "int ncclGetVersion(int *v) { *v = 23007; return 0; }\n", "-shared", "-fPIC",
          "-Wl,-soname,libnccl.so.2", NULL);
    char *td = cf_asprintf("%s/torch-2.15.0.dist-info", E.site);
    char *nd = cf_asprintf("%s/nvidia_nccl_cu13-2.30.7.dist-info", E.site);
    mkdirs(td);
    mkdirs(nd);
    ts_write(td, "METADATA",
             "Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0\n"
             "Requires-Dist: nvidia-nccl-cu13==2.30.7; platform_system == \"Linux\"\n"
             "Requires-Dist: opt-einsum; extra == \"opt\"\n");
    ts_write(td, "RECORD", "torch/__init__.py,,\ntorch/lib/libtorch_cuda.so,,\n");
    ts_write(nd, "METADATA", "Metadata-Version: 2.1\nName: nvidia-nccl-cu13\nVersion: 2.30.7\n");
    ts_write(nd, "RECORD", "nvidia/nccl/lib/libnccl.so.2,,\n");
    free(t);
    free(n);
    free(td);
    free(nd);
    free(tl);
    free(nl);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(E.site);
    ts_cleanup();
    return 0;
}

/* A module exporting `init`, holding `factory` in its data, at `at` (a
 * site-packages relative dir), linked to the stand-ins with `rpath` (":"-joined). */
static char *module(const char *name, const char *init, const char *factory, const char *rpath)
{
    char *out = cf_asprintf("%s/%s", E.dir, name);
    char *src = cf_asprintf("const char factory_name[] = \"%s\";\nvoid *%s(void) { return (void *)factory_name; }\n",
                            factory, init);
    char *l1 = cf_asprintf("-L%s/torch/lib", E.site), *l2 = cf_asprintf("-L%s/nvidia/nccl/lib", E.site);
    char *r = cf_asprintf("-Wl,-rpath,%s", rpath);
    ts_cc(E.dir, out, src, "-shared", "-fPIC", "-Wl,--no-as-needed", l1, "-ltorch_cuda", l2, "-l:libnccl.so.2",
          "-Wl,--disable-new-dtags", *rpath ? r : "-Wl,--as-needed", NULL);
    free(src);
    free(l1);
    free(l2);
    free(r);
    return out;
}

/* The wheel torch_fl: its packages, the __init__.py importing make_nccl_backend, and the module at `at`. */
static void verify(const char *so, const char *at, struct cf_wheel_verify_result *r)
{
    char *member = cf_asprintf("%s/%s", at, MOD), *out = cf_asprintf("%s/dist-%s", E.dir, cf_basename(so));
    mkdirs(out);
    struct cf_wheel_member members[] = {
        { "torch_fl/__init__.py", NULL, "", 0 },
        { "torch_fl/comm/__init__.py", NULL, "", 0 },
        { EXT "/__init__.py", NULL,
          "import torch.distributed\ntry:\n    from ._flagos_nccl import make_nccl_backend\nexcept ImportError:\n"
          "    make_nccl_backend = None\n", 0 },
        { member, so, NULL, 0 },
    };
    members[2].len = strlen(members[2].data);
    const char *req[] = { "torch==2.15.*" };
    struct cf_wheel_spec spec = { 0 };
    spec.dist_name = "torch-fl";
    spec.version = "0.3.0";
    spec.python_tag = "cp311";
    spec.platform_tag = "linux_x86_64";
    spec.requires_dist = req;
    spec.n_requires_dist = 1;
    spec.members = members;
    spec.n_members = 4;
    char *path = NULL, *used = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_wheel_write(&spec, out, &path, &used, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    const char *sites[] = { E.site };
    struct cf_wheel_verify_opts o = { 0 };
    o.wheel = path;
    o.site_dirs = sites;
    o.n_site_dirs = 1;
    assert_int_equal(cf_wheel_verify(&o, r, &err), 0);
    free(path);
    free(used);
    free(member);
    free(out);
}

static const char *detail(const struct cf_wheel_verify_result *r, const char *check, int ok)
{
    for (size_t i = 0; i < r->n_checks; i++)
        if (!strcmp(r->checks[i].name, check) && r->checks[i].ok == ok)
            return r->checks[i].detail;
    fail_msg("no %s check with status %d", check, ok);
    return NULL;
}

#define ORIGIN3 "$ORIGIN/../../../torch/lib:$ORIGIN/../../../nvidia/nccl/lib"

static void test_correct(void **state)
{
    (void)state;
    char *so = module("good.so", "PyInit__flagos_nccl", "make_nccl_backend", ORIGIN3);
    struct cf_wheel_verify_result r;
    verify(so, EXT, &r);
    const char *d = detail(&r, "rpath", 1);
    assert_non_null(strstr(d, "torch/lib (owned by torch 2.15.0, installed in "));
    assert_non_null(strstr(d, "nvidia/nccl/lib (owned by nvidia-nccl-cu13 2.30.7, which torch requires"));
    assert_non_null(strstr(detail(&r, "bridge-module", 1),
                           "make_nccl_backend in torch_fl.comm._nccl_ext._flagos_nccl; 1 import(s)"));
    assert_int_equal(r.failed, 0);
    cf_wheel_verify_result_release(&r);
    free(so);
}

static void test_init_symbol(void **state)
{
    (void)state;
    char *so = module("noname.so", "PyInit_TORCH_EXTENSION_NAME", "make_nccl_backend", ORIGIN3);
    struct cf_wheel_verify_result r;
    verify(so, EXT, &r);
    const char *d = detail(&r, "extension", 0);
    assert_non_null(strstr(d, "init-symbol: " EXT "/" MOD " exports PyInit_TORCH_EXTENSION_NAME, but `import "
                              "torch_fl.comm._nccl_ext._flagos_nccl` calls PyInit__flagos_nccl"));
    assert_non_null(strstr(d, "-DTORCH_EXTENSION_NAME=_flagos_nccl"));
    cf_wheel_verify_result_release(&r);
    free(so);
}

static void test_bridge_path(void **state)
{
    (void)state;
    char *so = module("up.so", "PyInit__flagos_nccl", "make_nccl_backend",
                      "$ORIGIN/../../torch/lib:$ORIGIN/../../nvidia/nccl/lib");
    struct cf_wheel_verify_result r;
    verify(so, "torch_fl/comm", &r);
    assert_non_null(strstr(detail(&r, "bridge-module", 0),
                           "bridge-path: " EXT "/__init__.py (line 3) imports make_nccl_backend from "
                           "torch_fl.comm._nccl_ext._flagos_nccl, but the wheel has no module there; its bridge is "
                           "torch_fl.comm._flagos_nccl (torch_fl/comm/" MOD ")"));
    cf_wheel_verify_result_release(&r);
    free(so);
}

static void test_no_factory(void **state)
{
    (void)state;
    char *so = module("nofactory.so", "PyInit__flagos_nccl", "nccl_backend", ORIGIN3);
    struct cf_wheel_verify_result r;
    verify(so, EXT, &r);
    const char *d = detail(&r, "bridge-module", 0);
    assert_non_null(strstr(d, "no-factory: " EXT "/" MOD " holds no make_nccl_backend"));
    assert_non_null(strstr(d, "the wheel's Python imports make_nccl_backend from it"));
    cf_wheel_verify_result_release(&r);
    free(so);
}

static void test_vendor_lib(void **state)
{
    (void)state;
    char *so = module("nonccl.so", "PyInit__flagos_nccl", "make_nccl_backend", "$ORIGIN/../../../torch/lib");
    struct cf_wheel_verify_result r;
    verify(so, EXT, &r);
    const char *d = detail(&r, "needed", 0);
    assert_non_null(strstr(d, "vendor-lib: " EXT "/" MOD " needs libnccl.so.2 (the NCCL library)"));
    assert_non_null(strstr(d, "--toolkit-lib"));
    cf_wheel_verify_result_release(&r);
    free(so);
}

static void test_build_rpath(void **state)
{
    (void)state;
    char *abs = cf_asprintf("%s/torch/lib:%s/nvidia/nccl/lib", E.site, E.site);
    char *so = module("abs.so", "PyInit__flagos_nccl", "make_nccl_backend", abs);
    struct cf_wheel_verify_result r;
    verify(so, EXT, &r);
    const char *d = detail(&r, "rpath", 0);
    char *want = cf_asprintf("build-rpath: " EXT "/" MOD " has RPATH entry '%s/torch/lib', an absolute path into the "
                             "build machine's Python packages (torch/lib there)",
                             E.site);
    assert_non_null(strstr(d, want));
    assert_non_null(strstr(d, "Use '$ORIGIN/../../../torch/lib'"));
    cf_wheel_verify_result_release(&r);
    free(want);
    free(so);
    free(abs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_correct),    cmocka_unit_test(test_init_symbol), cmocka_unit_test(test_bridge_path),
        cmocka_unit_test(test_no_factory), cmocka_unit_test(test_vendor_lib),  cmocka_unit_test(test_build_rpath),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
