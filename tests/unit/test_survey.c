/* The survey (src/survey): pure decoders, fake KFD trees, vendor toolkit roots,
 * libtorch trees of stub ELF libraries built by tests/fixtures/doctor_fixtures.sh,
 * the real CUDA toolkit and NCCL of this machine, and JSON injection. */
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/fs.h"
#include "cclforge/survey.h"
#include "cclforge/vendor.h"
#include "survey/survey_internal.h"

static char *fx; /* the fixture directory */

static int build_fixtures(void **state)
{
    (void)state;
    fx = ts_tmpdir();
    char *script = cf_asprintf("%s/tests/fixtures/doctor_fixtures.sh", CCLFORGE_SOURCE_DIR);
    const char *argv[] = { "bash", script, fx, NULL };
    int rc = ts_run(argv);
    free(script);
    return rc;
}

static int drop_fixtures(void **state)
{
    (void)state;
    ts_cleanup();
    return 0;
}

static char *fxp(const char *rel) /* fixture path; freed by the caller */
{
    return cf_path_join(fx, rel);
}

/* A survey of only what a test names: no default roots, no real GPUs, no Python. */
static void survey_only(struct cf_survey_opts *o, unsigned keep)
{
    memset(o, 0, sizeof *o);
    o->survey_file = "";
    o->no_default_roots = 1;
    o->no_nvidia_driver = 1;
    o->skip = (CF_SURVEY_SKIP_GPUS | CF_SURVEY_SKIP_TORCH | CF_SURVEY_SKIP_TOOLKITS | CF_SURVEY_SKIP_COMPILERS |
               CF_SURVEY_SKIP_COMM | CF_SURVEY_SKIP_PYTHON) &
              ~keep;
}

static void run_survey(const struct cf_survey_opts *o, struct cf_survey *s)
{
    cf_error err = CF_ERROR_INIT;
    if (cf_survey_run(o, s, &err) != 0)
        fail_msg("survey failed: %s", cf_error_message(&err));
}

/* ---- pure pieces ---- */

static void test_gfx_target_names(void **state)
{
    static const struct {
        unsigned v;
        const char *name;
    } table[] = {
        { 90010, "gfx90a" }, { 90402, "gfx942" }, { 90208, "gfx928" }, { 90006, "gfx906" },
        { 90008, "gfx908" }, { 110000, "gfx1100" }, { 100300, "gfx1030" }, { 90600, "gfx960" },
        { 120001, "gfx1201" }, { 0, "" },
    };
    char buf[32];
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        cf_gfx_target_name(table[i].v, buf, sizeof buf);
        assert_string_equal(buf, table[i].name);
    }
    cf_sm_name(6, 1, buf, sizeof buf);
    assert_string_equal(buf, "sm_61");
    cf_sm_name(12, 0, buf, sizeof buf);
    assert_string_equal(buf, "sm_120");
}

static void test_comm_version_code(void **state)
{
    assert_int_equal(cf_comm_version_code("2.28.9"), 22809);
    assert_int_equal(cf_comm_version_code("2.9.6"), 20906);
    assert_int_equal(cf_comm_version_code("2.8.4"), 2804);
    assert_int_equal(cf_comm_version_code("2.18.3"), 21803);
    assert_int_equal(cf_comm_version_code("nope"), 0);
    assert_int_equal(cf_comm_version_code(NULL), 0);
}

static void four_gpus(struct cf_gpu g[4])
{
    static const char *const uuids[] = { "GPU-aaaa1111-0000", "GPU-bbbb2222-0000", "GPU-cccc3333-0000",
                                         "GPU-aaaa4444-0000" };
    memset(g, 0, 4 * sizeof *g);
    for (int i = 0; i < 4; i++) {
        g[i].index = i;
        g[i].vendor = (char *)"nvidia";
        g[i].uuid = (char *)uuids[i];
    }
}

static void test_visible_devices(void **state)
{
    struct cf_gpu g[4];
    four_gpus(g);
    cf_apply_visible_devices(g, 4, "nvidia", NULL);
    for (int i = 0; i < 4; i++) {
        assert_true(g[i].visible);
        assert_int_equal(g[i].visible_index, i);
    }
    cf_apply_visible_devices(g, 4, "nvidia", "2,0");
    assert_true(g[2].visible);
    assert_int_equal(g[2].visible_index, 0);
    assert_int_equal(g[0].visible_index, 1);
    assert_false(g[1].visible);
    assert_false(g[3].visible);
    /* The list stops at the first entry that names no device. */
    cf_apply_visible_devices(g, 4, "nvidia", "1,7,2");
    assert_true(g[1].visible);
    assert_false(g[2].visible);
    /* UUIDs, with or without "GPU-", by unique prefix; an ambiguous prefix stops. */
    cf_apply_visible_devices(g, 4, "nvidia", "GPU-bbbb,cccc3333");
    assert_true(g[1].visible);
    assert_int_equal(g[2].visible_index, 1);
    cf_apply_visible_devices(g, 4, "nvidia", "aaaa");
    for (int i = 0; i < 4; i++)
        assert_false(g[i].visible);
    /* Empty hides everything; another vendor's GPUs are untouched. */
    cf_apply_visible_devices(g, 4, "nvidia", "");
    for (int i = 0; i < 4; i++)
        assert_false(g[i].visible);
    cf_apply_visible_devices(g, 4, "amd", "0");
    assert_false(g[0].visible);
}

static void test_arch_order(void **state)
{
    struct cf_survey s = CF_SURVEY_INIT;
    const char *archs[] = { "sm_120", "sm_61", "gfx1100", "gfx90a", "gfx906", "sm_61", "sm_75" };
    s.n_gpus = sizeof archs / sizeof archs[0];
    s.gpus = cf_xcalloc(s.n_gpus, sizeof *s.gpus);
    for (size_t i = 0; i < s.n_gpus; i++) {
        s.gpus[i].arch = cf_strdup(archs[i]);
        s.gpus[i].visible = i != 6; /* sm_75 hidden */
    }
    struct strvec out = STRVEC_INIT;
    cf_survey_gpu_archs(&s, 1, &out);
    assert_int_equal(out.n, 5);
    const char *want[] = { "sm_61", "sm_120", "gfx906", "gfx90a", "gfx1100" };
    /* sm_ and gfx sort apart; within each, numerically. */
    struct strvec sm = STRVEC_INIT, gfx = STRVEC_INIT;
    for (size_t i = 0; i < out.n; i++)
        cf_strvec_push(cf_starts_with(out.v[i], "sm_") ? &sm : &gfx, out.v[i]);
    assert_string_equal(sm.v[0], want[0]);
    assert_string_equal(sm.v[1], want[1]);
    assert_string_equal(gfx.v[0], want[2]);
    assert_string_equal(gfx.v[1], want[3]);
    assert_string_equal(gfx.v[2], want[4]);
    cf_strvec_clear(&out);
    cf_survey_gpu_archs(&s, 0, &out);
    assert_int_equal(out.n, 6);
    cf_strvec_clear(&out);
    cf_strvec_clear(&sm);
    cf_strvec_clear(&gfx);
    cf_survey_release(&s);
}

static void test_vendor_table(void **state)
{
    size_t n;
    const struct cf_vendor_profile *p = cf_vendor_profiles(&n);
    assert_true(n >= 3);
    assert_string_equal(p[0].id, "dtk"); /* most specific first */
    for (size_t i = 0; i < n; i++) {
        assert_non_null(p[i].compiler);
        assert_non_null(p[i].comm->soname);
        assert_true(p[i].version_sources[0].path[0]);
        assert_ptr_equal(cf_vendor_profile(p[i].id), &p[i]);
        assert_ptr_equal(cf_vendor_get(p[i].vendor), &p[i]);
        assert_ptr_equal(cf_vendor_by_word(p[i].word), &p[i]);
    }
    for (int v = 0; v < CF_VENDOR_COUNT; v++) /* one entry per vendor */
        assert_non_null(cf_vendor_get((enum cf_vendor)v));
    assert_string_equal(cf_vendor_profile_for_gpu("hygon")->id, "dtk");
    assert_string_equal(cf_vendor_profile_for_gpu("nvidia")->comm->kind, "nccl");
    assert_ptr_equal(cf_vendor_by_word("NVIDIA"), cf_vendor_profile("cuda"));
    assert_null(cf_vendor_by_word("cuda")); /* the --vendor word, not the toolkit id */
    assert_null(cf_vendor_profile("metal"));
    assert_ptr_equal(cf_vendor_for_arch_family(CF_ARCH_AMD), cf_vendor_profile("rocm")); /* gfx alone: ROCm */
    struct strbuf words = STRBUF_INIT;
    cf_vendor_words(&words);
    assert_string_equal(cf_sb_str(&words), "nvidia, rocm or dtk");
    cf_sb_release(&words);
    /* the sonames, spelled once, and what names they recognise */
    assert_string_equal(cf_comm_profile(CF_COMMLIB_NCCL)->soname, "libnccl.so.2");
    assert_string_equal(cf_comm_profile(CF_COMMLIB_RCCL)->soname, "librccl.so.1");
    assert_ptr_equal(cf_vendor_profile("dtk")->comm, cf_comm_profile(CF_COMMLIB_RCCL));
    assert_int_equal(cf_commlib_from_name("/x/lib/libnccl.so.2.28.9"), CF_COMMLIB_NCCL);
    assert_int_equal(cf_commlib_from_name("librccl.so"), CF_COMMLIB_RCCL);
    assert_int_equal(cf_commlib_from_name("libnccl-net.so"), CF_COMMLIB_NONE);
    assert_string_equal(cf_commlib_name(CF_COMMLIB_RCCL), "RCCL");
}

/* A vendor's default roots are globbed in order and the first with the
 * vendor's markers wins (what nccl build takes when no variable names a root):
 * the DTK profile with its /opt/dtk, /opt/dtk-* moved under a temp dir. */
static void test_toolkit_default_root_globs(void **state)
{
    char *dir = ts_tmpdir();
    struct cf_vendor_profile dtk = *cf_vendor_profile("dtk");
    char *plain = cf_asprintf("%s/opt/dtk", dir), *glob = cf_asprintf("%s/opt/dtk-*", dir);
    const char *roots[] = { plain, glob, NULL };
    dtk.default_roots = roots;
    assert_null(cf_toolkit_default_root(&dtk));
    ts_write(dir, "opt/dtk-23.10/include/hip/hip_version.h", "#define HIP_VERSION_MAJOR 5\n"); /* ROCm-shaped, not DTK */
    ts_write(dir, "opt/dtk-24.04/.info/version-dtk", "24.04\n");
    ts_write(dir, "opt/dtk-25.04/cuda/cuda-12/include/cuda.h", "\n");
    char *found = cf_toolkit_default_root(&dtk);
    char *want = cf_asprintf("%s/opt/dtk-24.04", dir);
    assert_non_null(found);
    assert_string_equal(found, want);
    free(found);
    free(want);
    ts_write(dir, "opt/dtk/.info/version-dtk", "24.10\n"); /* the plain /opt/dtk comes first */
    found = cf_toolkit_default_root(&dtk);
    assert_string_equal(found, plain);
    free(found);
    free(plain);
    free(glob);
    cf_rm_rf(dir, NULL); /* not ts_cleanup: the group's fixtures live on */
}

/* ---- GPUs ---- */

static void test_kfd_dcu(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_GPUS);
    char *root = fxp("kfd-dcu");
    o.sysfs_root = root;
    const char *env[] = { "HIP_VISIBLE_DEVICES=1", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    assert_int_equal(s.n_gpus, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(s.gpus[i].vendor, "hygon");
        assert_string_equal(s.gpus[i].arch, "gfx928");
        assert_string_equal(s.gpus[i].name, "K100_AI");
        assert_int_equal(s.gpus[i].memory_bytes, 68719476736ull);
        assert_int_equal(s.gpus[i].index, (int)i);
        assert_int_equal(s.gpus[i].cc_major, 0);
    }
    assert_false(s.gpus[0].visible);
    assert_true(s.gpus[1].visible);
    assert_int_equal(s.gpus[1].visible_index, 0);
    assert_string_equal(s.gpus[0].uuid, "GPU-123456789abcdef0");
    int found_probe = 0;
    for (size_t i = 0; i < s.n_probes; i++)
        if (!strcmp(s.probes[i].method, "kfd-sysfs")) {
            found_probe = 1;
            assert_true(s.probes[i].ok);
            assert_int_equal(s.probes[i].count, 2);
        }
    assert_true(found_probe);
    cf_survey_release(&s);
    free(root);
}

static void test_kfd_amd_and_absent(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_GPUS);
    char *root = fxp("kfd-amd");
    o.sysfs_root = root;
    const char *env[] = { "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    assert_int_equal(s.n_gpus, 2);
    assert_string_equal(s.gpus[0].arch, "gfx90a");
    assert_string_equal(s.gpus[1].arch, "gfx942");
    assert_string_equal(s.gpus[0].vendor, "amd");
    assert_true(s.gpus[0].visible && s.gpus[1].visible);
    assert_int_equal(s.gpus[1].memory_bytes, 206158430208ull);
    cf_survey_release(&s);
    free(root);

    root = fxp("kfd-none");
    o.sysfs_root = root;
    run_survey(&o, &s);
    assert_int_equal(s.n_gpus, 0);
    int noted = 0;
    for (size_t i = 0; i < s.n_probes; i++)
        if (!strcmp(s.probes[i].method, "kfd-sysfs")) {
            assert_false(s.probes[i].ok);
            noted = strstr(s.probes[i].note, "no KFD") != NULL;
        }
    assert_true(noted);
    cf_survey_release(&s);
    free(root);
}

static const char *nvidia_note(const struct cf_survey *s)
{
    for (size_t i = 0; i < s->n_probes; i++)
        if (!strcmp(s->probes[i].vendor, "nvidia"))
            return s->probes[i].note ? s->probes[i].note : "";
    return NULL;
}

static void test_nvidia_without_driver(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_GPUS);
    o.no_nvidia_driver = 0;
    char *root = fxp("kfd-none");
    o.sysfs_root = root;
    o.nvidia_driver_lib = "libcuda-cclforge-absent.so.1";
    const char *env[] = { "PATH=/nonexistent", NULL }; /* unused by the probe, harmless */
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const char *note = nvidia_note(&s);
    assert_non_null(note);
    /* Without nvidia-smi on PATH the driver API's note stands. */
    if (!ts_have("nvidia-smi"))
        assert_non_null(strstr(note, "no NVIDIA driver"));
    assert_int_equal(s.n_gpus, 0);
    cf_survey_release(&s);

    /* The toolkit's stub libcuda has every entry point but cuInit refuses (error 34). */
    const char *cuda = ts_cuda_root();
    char *stub = cuda ? cf_path_join(cuda, "lib64/stubs/libcuda.so") : NULL;
    if (!stub || !cf_is_file(stub)) {
        free(stub);
        free(root);
        skip();
    }
    o.nvidia_driver_lib = stub;
    run_survey(&o, &s);
    note = nvidia_note(&s);
    assert_non_null(note);
    if (!ts_have("nvidia-smi"))
        assert_non_null(strstr(note, "stub"));
    assert_int_equal(s.n_gpus, 0);
    cf_survey_release(&s);
    free(stub);
    free(root);
}

/* The driver API path against a fake libcuda.so.1 built by the fixture script,
 * and the nvidia-smi path against a fake nvidia-smi (no real GPU here). */
static void test_nvidia_fake_driver_and_smi(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_GPUS);
    o.no_nvidia_driver = 0;
    char *kfd = fxp("kfd-none"), *lib = fxp("fake-nvidia/libcuda.so.1"), *bin = fxp("fake-nvidia/bin");
    o.sysfs_root = kfd;
    o.nvidia_driver_lib = lib;
    const char *env[] = { "CUDA_VISIBLE_DEVICES", NULL };
    o.env = env;
    char *old_path = cf_strdup(getenv("PATH"));
    setenv("PATH", "/usr/bin:/bin", 1); /* no nvidia-smi */
    struct cf_survey s;
    run_survey(&o, &s);
    assert_int_equal(s.n_gpus, 2);
    assert_string_equal(s.gpus[0].arch, "sm_61");
    assert_string_equal(s.gpus[0].name, "NVIDIA GeForce GTX 1080, rev A");
    assert_string_equal(s.gpus[1].arch, "sm_120");
    assert_int_equal(s.gpus[1].cc_major, 12);
    assert_int_equal(s.gpus[1].memory_bytes, 96ull << 30);
    assert_string_equal(s.gpus[0].uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
    assert_true(s.gpus[0].visible && s.gpus[1].visible);
    assert_int_equal(s.driver.cuda_driver_version, 12040);
    assert_string_equal(s.probes[0].method, "driver-api");
    assert_true(s.probes[0].ok);
    cf_survey_release(&s);

    /* CUDA_VISIBLE_DEVICES hides devices from the driver API: nvidia-smi gives the
     * physical set and the mask (here by UUID prefix) marks the visible one. */
    char *path = cf_asprintf("%s:/usr/bin:/bin", bin);
    setenv("PATH", path, 1);
    const char *env2[] = { "CUDA_VISIBLE_DEVICES=GPU-1011", NULL };
    o.env = env2;
    run_survey(&o, &s);
    assert_int_equal(s.n_gpus, 2);
    assert_string_equal(s.probes[0].method, "nvidia-smi");
    assert_false(s.gpus[0].visible);
    assert_true(s.gpus[1].visible);
    assert_int_equal(s.gpus[1].visible_index, 0);
    assert_string_equal(s.gpus[0].name, "NVIDIA GeForce GTX 1080, rev A"); /* the name keeps its comma */
    assert_int_equal(s.gpus[0].memory_bytes, 8192ull << 20);
    assert_string_equal(s.driver.nvidia_version, "550.54.15");
    cf_survey_release(&s);

    /* No libcuda at all: nvidia-smi alone. */
    o.nvidia_driver_lib = "libcuda-cclforge-absent.so.1";
    o.env = env;
    run_survey(&o, &s);
    assert_int_equal(s.n_gpus, 2);
    assert_string_equal(s.probes[0].method, "nvidia-smi");
    assert_non_null(strstr(s.probes[0].note, "no NVIDIA driver"));
    assert_int_equal(s.driver.cuda_driver_version, 0);
    cf_survey_release(&s);

    /* End to end with this machine's toolkit and NCCL: a driver API of 12.4
     * cannot run the libraries of a newer CUDA, and an NCCL whose oldest SASS
     * is above sm_61 has nothing for the GTX 1080. */
    struct ts_nccl nccl;
    long cuda_version = ts_cuda_version();
    if (cuda_version > 0 && ts_find_nccl(&nccl) == 0) {
        survey_only(&o, CF_SURVEY_SKIP_GPUS | CF_SURVEY_SKIP_TOOLKITS | CF_SURVEY_SKIP_COMM);
        o.no_nvidia_driver = 0;
        o.sysfs_root = kfd;
        o.nvidia_driver_lib = lib;
        char *cuda_home = cf_asprintf("CUDA_HOME=%s", ts_cuda_root());
        const char *env3[] = { "CUDA_VISIBLE_DEVICES", cuda_home, "ROCM_PATH", "HIP_PATH", NULL };
        o.env = env3;
        setenv("PATH", "/usr/bin:/bin", 1);
        run_survey(&o, &s);
        struct cf_findings f = CF_FINDINGS_INIT;
        cf_doctor_diagnose(&s, &f);
        int driver = 0, arch = 0;
        for (size_t i = 0; i < f.n; i++) {
            driver |= !strcmp(f.v[i].id, "driver-too-old") && f.v[i].severity == CF_SEV_ERROR;
            arch |= !strcmp(f.v[i].id, "gpu-arch-not-covered") && strstr(f.v[i].why, "sm_61") != NULL;
        }
        unsigned oldest = 0;
        const struct cf_toolkit *t = cf_survey_toolkit(&s, "cuda");
        for (size_t i = 0; t && t->comm && i < t->comm->archs.n; i++) {
            unsigned sm;
            if (sscanf(t->comm->archs.v[i], "sm_%u", &sm) == 1 && (!oldest || sm < oldest))
                oldest = sm;
        }
        print_message("CUDA %ld, NCCL %s from sm_%u\n", cuda_version, nccl.version, oldest);
        assert_int_equal(driver, cuda_version > 12040);
        if (oldest > 61)
            assert_true(arch);
        cf_findings_release(&f);
        cf_survey_release(&s);
        free(cuda_home);
    }

    setenv("PATH", old_path, 1);
    free(old_path);
    free(path);
    free(kfd);
    free(lib);
    free(bin);
}

/* ---- toolkits ---- */

static void test_toolkit_dtk_and_rocm(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TOOLKITS);
    char *dtk = fxp("dtk-24.04"), *rocm = fxp("rocm-6.2.4");
    char *e1 = cf_asprintf("ROCM_PATH=%s", dtk), *e2 = cf_asprintf("HIP_PATH=%s", rocm);
    const char *env[] = { e1, e2, "CUDA_HOME", "CUDA_PATH", "DTK_HOME", "ROCM_HOME", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_toolkit *t = cf_survey_toolkit(&s, "dtk");
    assert_non_null(t);
    assert_string_equal(t->version, "24.04.1");
    assert_string_equal(t->version_source, ".info/version");
    assert_string_equal(t->found_by, "ROCM_PATH");
    int cuda_inc = 0, rccl_inc = 0;
    for (size_t i = 0; i < t->include_dirs.n; i++) {
        cuda_inc |= cf_ends_with(t->include_dirs.v[i], "cuda/cuda-12/include");
        rccl_inc |= cf_ends_with(t->include_dirs.v[i], "include/rccl");
    }
    assert_true(cuda_inc && rccl_inc);
    assert_non_null(t->comm);
    assert_string_equal(t->comm->kind, "rccl");
    assert_string_equal(t->comm->version, "2.18.3");
    assert_int_equal(t->comm->version_code, 21803);
    assert_string_equal(t->comm->hip_version, "5.7");
    assert_true(cf_ends_with(t->comm->header, "rccl/rccl.h"));

    /* A plain ROCm root is not claimed by the DTK profile. */
    t = cf_survey_toolkit(&s, "rocm");
    assert_non_null(t);
    assert_string_equal(t->version, "6.2.4");
    assert_string_equal(t->found_by, "HIP_PATH");
    assert_string_equal(t->comm->version, "2.20.5");
    cf_survey_release(&s);
    free(e1);
    free(e2);
    free(dtk);
    free(rocm);
}

static void test_toolkit_cuda_version_sources(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TOOLKITS);
    char *a = fxp("cuda-12.4"), *b = fxp("cuda-headers-only");
    char *e1 = cf_asprintf("CUDA_HOME=%s", a), *e2 = cf_asprintf("CUDA_PATH=%s", b);
    const char *env[] = { e1, e2, "ROCM_PATH", "ROCM_HOME", "HIP_PATH", "DTK_HOME", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    int seen = 0;
    for (size_t i = 0; i < s.n_toolkits; i++) {
        const struct cf_toolkit *t = &s.toolkits[i];
        if (!strcmp(t->found_by, "CUDA_HOME")) {
            assert_string_equal(t->version, "12.4.1");
            assert_string_equal(t->version_source, "version.json");
            assert_null(t->comm);
            seen |= 1;
        } else if (!strcmp(t->found_by, "CUDA_PATH")) {
            assert_string_equal(t->version, "11.8");
            assert_string_equal(t->version_source, "include/cuda.h");
            seen |= 2;
        }
    }
    assert_int_equal(seen, 3);
    cf_survey_release(&s);
    free(e1);
    free(e2);
    free(a);
    free(b);
}

static void test_real_cuda_toolkit_and_nccl(void **state)
{
    struct ts_nccl nccl;
    long cuda_version = ts_cuda_version();
    char *real = cuda_version > 0 ? cf_realpath(ts_cuda_root()) : NULL;
    int with_nccl = real && ts_find_nccl(&nccl) == 0 && cf_starts_with(nccl.dir, real);
    free(real);
    if (!with_nccl) {
        print_message("SKIP: no CUDA toolkit with its own NCCL here (set CUDA_HOME)\n");
        skip();
    }
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TOOLKITS | CF_SURVEY_SKIP_COMPILERS);
    char *cuda_home = cf_asprintf("CUDA_HOME=%s", ts_cuda_root());
    const char *env[] = { cuda_home, "ROCM_PATH", "ROCM_HOME", "HIP_PATH", "DTK_HOME", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_toolkit *t = cf_survey_toolkit(&s, "cuda");
    assert_non_null(t);
    assert_non_null(t->version);
    assert_non_null(t->comm);
    assert_string_equal(t->comm->kind, "nccl");
    assert_non_null(t->comm->version);
    assert_int_equal(t->comm->version_code, cf_comm_version_code(t->comm->version));
    assert_true(t->comm->archs_known);
    assert_true(t->comm->archs.n > 0);
    /* the version its nccl.h says, and the toolkit's own CUDA version */
    assert_string_equal(t->comm->version, nccl.version);
    assert_int_equal(t->comm->version_code, nccl.code);
    char *toolkit_cuda = cf_asprintf("%ld.%ld", cuda_version / 1000, cuda_version % 1000 / 10);
    assert_true(cf_starts_with(t->version, toolkit_cuda));
    free(toolkit_cuda);
    const struct cf_compiler *nvcc = cf_survey_compiler(&s, "nvcc");
    /* the newest GCC the toolkit's crt/host_config.h accepts ("#if __GNUC__ > N" refuses newer) */
    char *host_config = cf_path_join(ts_cuda_root(), "include/crt/host_config.h");
    struct strbuf hc = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    const char *gt = cf_read_file(host_config, 1 << 20, &hc, &err) == 0 ? strstr(hc.buf, "\n#if __GNUC__ > ") : NULL;
    int gcc_max = 0;
    if (nvcc && gt && sscanf(gt, "\n#if __GNUC__ > %d", &gcc_max) == 1)
        assert_int_equal(nvcc->host_gcc_max, gcc_max);
    cf_error_clear(&err);
    cf_sb_release(&hc);
    free(host_config);
    cf_survey_release(&s);
    free(cuda_home);
}

/* Debian's hipcc / libamdhip64-dev put HIP under /usr: a ROCm-shaped root found
 * through hipcc on PATH. Only where those packages are installed. */
static void test_debian_hip_packages(void **state)
{
    if (!cf_is_file("/usr/bin/hipcc") || !cf_is_file("/usr/include/hip/hip_version.h")) {
        print_message("skipped: Debian's hipcc and libamdhip64-dev are not installed\n");
        skip();
    }
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TOOLKITS);
    const char *env[] = { "ROCM_PATH", "ROCM_HOME", "HIP_PATH", "DTK_HOME", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_toolkit *t = cf_survey_toolkit(&s, "rocm");
    assert_non_null(t);
    assert_string_equal(t->root, "/usr");
    assert_non_null(strstr(t->found_by, "hipcc"));
    assert_non_null(t->version);
    assert_null(cf_survey_toolkit(&s, "dtk"));
    cf_survey_release(&s);
}

/* cf_compiler_probe: each family's --version wording, as real releases print it. */
static void test_compiler_probe_families(void **state)
{
    (void)state;
    static const struct {
        const char *file, *output, *family, *version, *banner;
    } cases[] = {
        { "g++-8", "g++ (GCC) 8.5.0 20210514 (Red Hat 8.5.0-4)\nCopyright (C) 2018", "gcc", "8.5.0",
          "g++ (GCC) 8.5.0 20210514 (Red Hat 8.5.0-4)" },
        { "c++", "c++ (Debian 12.2.0-14) 12.2.0", "gcc", "12.2.0", NULL },
        { "clang++", "Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu", "clang", "14.0.6",
          "Debian clang version 14.0.6" },
        { "nvcc", "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\nBuild x",
          "nvcc", "13.0.88", "Cuda compilation tools, release 13.0, V13.0.88" },
        { "hipcc", "HIP version: 6.2.41133-dd7f95766\nAMD clang version 18.0.0git", "hipcc", "6.2.41133",
          "HIP version: 6.2.41133-dd7f95766" },
    };
    char *dir = ts_tmpdir();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *script = cf_asprintf("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n", cases[i].output);
        char *path = ts_write(dir, cases[i].file, script);
        assert_int_equal(chmod(path, 0755), 0);
        struct cf_compiler c;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(cf_compiler_probe(path, &c, &err), 0);
        assert_string_equal(c.family, cases[i].family);
        assert_string_equal(c.version, cases[i].version);
        assert_string_equal(c.name, cases[i].file);
        if (cases[i].banner)
            assert_string_equal(c.banner, cases[i].banner);
        cf_compiler_release(&c);
        free(script);
    }
    /* one that prints no version, and one that fails, are errors that say so */
    char *mute = ts_write(dir, "cc-mute", "#!/bin/sh\necho hello\n");
    char *broken = ts_write(dir, "cc-broken", "#!/bin/sh\nexit 3\n");
    assert_int_equal(chmod(mute, 0755), 0);
    assert_int_equal(chmod(broken, 0755), 0);
    struct cf_compiler c;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_compiler_probe(mute, &c, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "no version"));
    assert_null(c.version);
    cf_error_clear(&err);
    cf_compiler_release(&c);
    assert_int_equal(cf_compiler_probe(broken, &c, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "--version failed"));
    cf_error_clear(&err);
    cf_compiler_release(&c);
}

/* cf_python_probe: one spawn answers the survey (PYTHONPATH honoured) and the
 * bridge (isolated -I: PYTHONPATH ignored). */
static void test_python_probe_isolation(void **state)
{
    (void)state;
    if (!ts_have("python3"))
        skip();
    char *dir = ts_tmpdir();
    ts_write(dir, "torch/__init__.py", "raise SystemExit('find_spec must not import torch')\n");
    char *pythonpath = cf_asprintf("PYTHONPATH=%s", dir);
    const char *env[] = { pythonpath, NULL };
    struct cf_python_info info;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_python_probe("python3", env, 0, &info, &err), 0);
    assert_non_null(info.executable);
    assert_true(cf_starts_with(info.tag, "cp3"));
    assert_non_null(info.ext_suffix);
    char *torch = cf_path_join(dir, "torch");
    assert_string_equal(info.torch_dir, torch);
    cf_python_info_release(&info);
    assert_int_equal(cf_python_probe("python3", env, 1, &info, &err), 0);
    assert_true(info.torch_dir == NULL || strcmp(info.torch_dir, torch) != 0);
    cf_python_info_release(&info);
    assert_int_equal(cf_python_probe("no-such-python-cclforge", NULL, 0, &info, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "not found"));
    cf_error_clear(&err);
    free(torch);
    free(pythonpath);
}

static void test_compilers_and_host_table(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_COMPILERS);
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_compiler *gcc = cf_survey_compiler(&s, "gcc");
    if (ts_have("gcc")) {
        assert_non_null(gcc);
        assert_true(gcc->major >= 4);
        assert_non_null(gcc->version);
    }
    cf_survey_release(&s);
    assert_int_equal(cf_nvcc_host_gcc_max(13, 0), 15);
    assert_int_equal(cf_nvcc_host_gcc_max(12, 4), 13);
    assert_int_equal(cf_nvcc_host_gcc_max(12, 5), 13);
    assert_int_equal(cf_nvcc_host_gcc_max(11, 8), 11);
    assert_int_equal(cf_nvcc_host_gcc_max(10, 2), 0);
}

/* ---- libtorch ---- */

static void test_libtorch_cxx_distribution(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TORCH);
    char *dir = fxp("libtorch-cu124");
    o.libtorch = dir;
    const char *env[] = { "LIBTORCH", "LD_LIBRARY_PATH", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_libtorch *t = cf_survey_torch(&s);
    assert_non_null(t);
    assert_null(t->problem);
    assert_string_equal(t->found_by, "--libtorch");
    assert_string_equal(t->version, "2.5.1+cu124");
    assert_string_equal(t->version_source, "build-version");
    assert_int_equal(t->flavour, CF_TORCH_CUDA);
    assert_string_equal(t->gpu_runtime_version, "12.4");
    assert_int_equal(t->cxx11_abi, 0);
    assert_string_equal(t->abi_source, "TorchConfig.cmake");
    assert_true(cf_ends_with(t->gpu_lib, "lib/libtorch_cuda.so"));
    /* Static NCCL inside, and a different libnccl.so.2 through RUNPATH. */
    assert_non_null(t->embedded);
    assert_string_equal(t->embedded->version, "2.21.5");
    assert_string_equal(t->embedded->cuda_version, "12.4");
    assert_string_equal(t->nccl_built_against, "2.21.5");
    assert_true(t->needs_comm_lib);
    assert_non_null(t->loaded);
    assert_string_equal(t->loaded->version, "2.20.3");
    assert_true(cf_ends_with(t->loaded->path, "libtorch-cu124/lib/libnccl.so.2"));
    assert_int_equal(t->missing_libs.n, 0);
    assert_int_equal(t->undefined_symbols.n, 0);
    if (ts_cuda_tool("nvcc")) {
        assert_true(t->archs_known);
        assert_true(cf_strvec_contains(&t->archs, "sm_80"));
        assert_true(cf_strvec_contains(&t->archs, "compute_80"));
    }
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_doctor_diagnose(&s, &f);
    int mismatch = 0;
    for (size_t i = 0; i < f.n; i++)
        mismatch |= !strcmp(f.v[i].id, "nccl-mismatch");
    assert_true(mismatch);
    cf_findings_release(&f);
    cf_survey_release(&s);

    /* The remedy applied: LD_PRELOAD of the NCCL libtorch was built against wins
     * over the RUNPATH copy, for libtorch and as the system's active library. */
    char *pre = fxp("nccl-2.21.5/lib/libnccl.so.2");
    char *pre_env = cf_asprintf("LD_PRELOAD=/nonexistent/libfoo.so %s", pre);
    const char *env2[] = { "LIBTORCH", pre_env, NULL };
    o.env = env2;
    o.skip &= ~(unsigned)CF_SURVEY_SKIP_COMM;
    run_survey(&o, &s);
    t = cf_survey_torch(&s);
    assert_string_equal(t->loaded->how, "LD_PRELOAD");
    assert_string_equal(t->loaded->version, "2.21.5");
    assert_string_equal(s.comm_libs[0].how, "LD_PRELOAD");
    cf_doctor_diagnose(&s, &f);
    for (size_t i = 0; i < f.n; i++)
        assert_string_not_equal(f.v[i].id, "nccl-mismatch");
    cf_findings_release(&f);
    cf_survey_release(&s);
    free(pre_env);
    free(pre);
    free(dir);
}

static void test_libtorch_python_not_imported(void **state)
{
    if (!ts_have("python3"))
        skip();
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TORCH | CF_SURVEY_SKIP_COMM | CF_SURVEY_SKIP_PYTHON);
    char *site = fxp("site");
    char *pp = cf_asprintf("PYTHONPATH=%s", site);
    const char *env[] = { pp, "LIBTORCH", "NCCL_HOME", "RCCL_HOME", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_libtorch *t = cf_survey_torch(&s);
    /* torch/__init__.py raises: finding it at all proves nothing imported it. */
    assert_non_null(t);
    assert_true(cf_starts_with(t->found_by, "python ("));
    assert_string_equal(t->version, "2.5.1+cu124");
    assert_string_equal(t->version_source, "torch/version.py");
    assert_string_equal(t->gpu_runtime_version, "12.4");
    assert_string_equal(t->nccl_built_against, "2.21.5");
    assert_int_equal(t->cxx11_abi, 0);
    assert_null(t->embedded);
    assert_non_null(t->loaded);
    assert_string_equal(t->loaded->version, "2.21.5");
    assert_true(cf_ends_with(t->loaded->path, "site/nvidia/nccl/lib/libnccl.so.2"));
    int pip = 0;
    for (size_t i = 0; i < s.n_comm_libs; i++)
        pip |= !strcmp(s.comm_libs[i].how, "pip (nvidia-nccl)");
    assert_true(pip);
    cf_survey_release(&s);

    /* LIBTORCH naming the same install does not list it twice. */
    char *lt = cf_asprintf("LIBTORCH=%s/torch", site);
    const char *env2[] = { pp, lt, NULL };
    o.env = env2;
    run_survey(&o, &s);
    assert_int_equal(s.n_torches, 1);
    assert_string_equal(s.torches[0].found_by, "LIBTORCH");
    cf_survey_release(&s);
    free(lt);
    free(pp);
    free(site);
}

static void test_libtorch_variants_root(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TORCH);
    char *dir = fxp("variants");
    char *lt = cf_asprintf("LIBTORCH=%s", dir);
    const char *env[] = { lt, NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_libtorch *t = cf_survey_torch(&s);
    assert_non_null(t);
    assert_null(t->problem);
    assert_string_equal(t->variant, "cu124-2.5.1");
    assert_non_null(strstr(t->found_by, ".active"));
    assert_true(cf_strvec_contains(&t->variant_meta, "cuda=12.4"));
    assert_true(cf_ends_with(t->root, "variants/cu124-2.5.1"));
    assert_int_equal(t->cxx11_abi, 1);
    assert_int_equal(t->flavour, CF_TORCH_CUDA);
    cf_survey_release(&s);

    /* Switching .active switches the libtorch. */
    ts_write(dir, ".active", "cpu-2.1.0\n");
    run_survey(&o, &s);
    t = cf_survey_torch(&s);
    assert_string_equal(t->variant, "cpu-2.1.0");
    assert_int_equal(t->flavour, CF_TORCH_CPU);
    /* No TorchConfig.cmake: the ABI comes from libc10's symbols (old ABI here). */
    assert_int_equal(t->cxx11_abi, 0);
    assert_string_equal(t->abi_source, "symbols of libc10.so");
    cf_survey_release(&s);

    /* An .active escaping the root is refused with a reason. */
    ts_write(dir, ".active", "../libtorch-cpu\n");
    run_survey(&o, &s);
    assert_non_null(s.torches[0].problem);
    assert_non_null(strstr(s.torches[0].problem, "relative variant path"));
    cf_survey_release(&s);
    ts_write(dir, ".active", "cu124-2.5.1\n");
    free(lt);
    free(dir);
}

static void test_libtorch_hip_broken_and_bad(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TORCH);
    char *dir = fxp("libtorch-dtk");
    o.libtorch = dir;
    const char *env[] = { "LIBTORCH", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_libtorch *t = cf_survey_torch(&s);
    assert_int_equal(t->flavour, CF_TORCH_HIP);
    assert_non_null(t->embedded);
    assert_string_equal(t->embedded->kind, "rccl");
    assert_string_equal(t->embedded->version, "2.18.3");
    assert_string_equal(t->embedded->hip_version, "5.7");
    assert_int_equal(t->cxx11_abi, 1);
    assert_string_equal(t->abi_source, "symbols of libc10.so");
    assert_false(t->needs_comm_lib);
    cf_survey_release(&s);
    free(dir);

    dir = fxp("libtorch-broken");
    o.libtorch = dir;
    run_survey(&o, &s);
    t = cf_survey_torch(&s);
    assert_int_equal(t->flavour, CF_TORCH_CPU);
    assert_true(cf_strvec_contains(&t->missing_libs, "libcudnn_gone.so.9"));
    cf_survey_release(&s);
    free(dir);

    dir = fxp("libtorch-undef");
    o.libtorch = dir;
    run_survey(&o, &s);
    t = cf_survey_torch(&s);
    assert_int_equal(t->missing_libs.n, 0);
    assert_int_equal(t->undefined_symbols.n, 1);
    assert_non_null(strstr(t->undefined_symbols.v[0], "undefined symbol: ncclCommRegister"));
    assert_string_equal(t->loaded->version, "2.20.3");
    cf_survey_release(&s);
    free(dir);

    /* A --libtorch that does not exist is the user's error; LIBTORCH naming a
     * non-libtorch directory is reported on the entry. */
    o.libtorch = "/nonexistent/libtorch";
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_survey_run(&o, &s, &err), -1);
    assert_int_equal(err.kind, CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(&err), "/nonexistent/libtorch"));
    cf_error_clear(&err);
    o.libtorch = NULL;
    char *lt = cf_asprintf("LIBTORCH=%s", fx);
    const char *env2[] = { lt, NULL };
    o.env = env2;
    run_survey(&o, &s);
    assert_int_equal(s.n_torches, 1);
    assert_non_null(strstr(s.torches[0].problem, "holds no libtorch"));
    cf_survey_release(&s);
    free(lt);
}

/* A real torch wheel unpacked by another part of the project (the bridge's
 * cache), or one named by CCLFORGE_TEST_TORCH_DIR (the torch package dir). */
static char *find_real_torch(void)
{
    const char *given = getenv("CCLFORGE_TEST_TORCH_DIR");
    if (given && *given)
        return cf_strdup(given);
    const char *home = getenv("HOME");
    if (!home)
        return NULL;
    char *pattern = cf_asprintf("%s/.cache/cclforge/torch/site-*/torch/lib/libtorch_cuda.so", home);
    struct strvec hits = STRVEC_INIT;
    cf_glob_paths(pattern, &hits);
    free(pattern);
    char *dir = NULL;
    if (hits.n) {
        char *lib = cf_dirname(hits.v[0]);
        dir = cf_dirname(lib);
        free(lib);
    }
    cf_strvec_clear(&hits);
    return dir;
}

static void test_real_torch_wheel(void **state)
{
    char *dir = find_real_torch();
    if (!dir) {
        print_message("skipped: no unpacked torch wheel (set CCLFORGE_TEST_TORCH_DIR to a torch package dir)\n");
        skip();
    }
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TORCH);
    o.libtorch = dir;
    const char *env[] = { "LIBTORCH", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    const struct cf_libtorch *t = cf_survey_torch(&s);
    assert_null(t->problem);
    assert_non_null(t->version);
    assert_string_equal(t->version_source, "torch/version.py");
    assert_int_equal(t->flavour, CF_TORCH_CUDA);
    assert_non_null(t->gpu_runtime_version);
    assert_int_equal(t->cxx11_abi, 1); /* torch >= 2.7 wheels use the new ABI only */
    /* Wheels load pip's libnccl.so.2; libtorch's own messages about NCCL versions
     * are not an embedded copy. */
    assert_null(t->embedded);
    assert_true(t->needs_comm_lib);
    assert_non_null(t->loaded);
    assert_non_null(t->nccl_built_against);
    assert_string_equal(t->loaded->version, t->nccl_built_against);
    assert_true(t->archs_known);
    assert_true(cf_strvec_contains(&t->archs, "sm_80"));
    assert_int_equal(t->missing_libs.n, 0);
    cf_survey_release(&s);
    free(dir);
}

/* The system's libnccl.so.2 as a program without RPATH gets it: LD_LIBRARY_PATH
 * first, then ld.so.cache; NCCL_HOME is listed too. */
static void test_system_comm_libs(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_COMM);
    char *dir = fxp("nccl-2.20.3/lib"), *home = fxp("nccl-2.21.5");
    char *llp = cf_asprintf("LD_LIBRARY_PATH=%s", dir), *nh = cf_asprintf("NCCL_HOME=%s", home);
    const char *env[] = { llp, nh, "LD_PRELOAD", "RCCL_HOME", NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    assert_true(s.n_comm_libs >= 2);
    assert_string_equal(s.comm_libs[0].how, "loaded");
    assert_string_equal(s.comm_libs[0].version, "2.20.3");
    assert_int_equal(s.comm_libs[0].version_code, 22003);
    assert_string_equal(s.comm_libs[1].how, "NCCL_HOME");
    assert_string_equal(s.comm_libs[1].version, "2.21.5");
    cf_survey_release(&s);
    free(llp);
    free(nh);
    free(dir);
    free(home);
}

/* ---- JSON ---- */

static char *print_survey(const struct cf_survey *s)
{
    cJSON *j = cf_survey_to_json(s);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "host"), "survey_seconds");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "host"), "injected_sections");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "host"), "injected_from");
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    return text;
}

static void test_json_round_trip(void **state)
{
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TORCH | CF_SURVEY_SKIP_GPUS | CF_SURVEY_SKIP_TOOLKITS);
    char *lt = fxp("libtorch-cu124"), *kfd = fxp("kfd-dcu"), *dtk = fxp("dtk-24.04");
    char *e1 = cf_asprintf("ROCM_PATH=%s", dtk);
    const char *env[] = { e1, "HIP_VISIBLE_DEVICES=1", "CUDA_HOME", "CUDA_PATH", NULL };
    o.env = env;
    o.libtorch = lt;
    o.sysfs_root = kfd;
    struct cf_survey s;
    run_survey(&o, &s);
    char *first = print_survey(&s);
    char *path = cf_path_join(fx, "roundtrip.json");
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_survey_save(&s, path, &err), 0);
    struct cf_survey back = CF_SURVEY_INIT;
    if (cf_survey_load(path, &back, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    for (int i = 0; i < CF_SEC_COUNT; i++)
        assert_true(back.injected[i]);
    char *second = print_survey(&back);
    assert_string_equal(first, second);
    free(first);
    free(second);
    cf_survey_release(&back);
    cf_survey_release(&s);
    free(path);
    free(e1);
    free(lt);
    free(kfd);
    free(dtk);
}

static void test_json_injection_partial(void **state)
{
    /* Only "gpus" injected (through CCLFORGE_SURVEY): toolkits are still probed. */
    char *file = ts_write(fx, "inject/gpus.json",
                          "{\"gpus\": [{\"arch\": \"sm_61\"}, {\"compute_capability\": \"12.0\", \"visible\": false}]}");
    struct cf_survey_opts o;
    survey_only(&o, CF_SURVEY_SKIP_TOOLKITS);
    o.survey_file = NULL;
    char *dtk = fxp("dtk-24.04");
    char *e1 = cf_asprintf("ROCM_PATH=%s", dtk), *e2 = cf_asprintf("CCLFORGE_SURVEY=%s", file);
    const char *env[] = { e1, e2, NULL };
    o.env = env;
    struct cf_survey s;
    run_survey(&o, &s);
    assert_true(s.injected[CF_SEC_GPUS]);
    assert_false(s.injected[CF_SEC_TOOLKITS]);
    assert_string_equal(s.injected_from, file);
    assert_int_equal(s.n_gpus, 2);
    assert_string_equal(s.gpus[0].vendor, "nvidia");
    assert_int_equal(s.gpus[0].cc_major, 6);
    assert_int_equal(s.gpus[0].cc_minor, 1);
    assert_string_equal(s.gpus[1].arch, "sm_120");
    assert_false(s.gpus[1].visible);
    assert_non_null(cf_survey_toolkit(&s, "dtk"));
    struct strvec archs = STRVEC_INIT;
    cf_survey_gpu_archs(&s, 1, &archs);
    assert_int_equal(archs.n, 1);
    cf_strvec_clear(&archs);
    cf_survey_release(&s);
    free(e1);
    free(e2);
    free(dtk);
}

static void test_json_errors_name_the_key(void **state)
{
    static const struct {
        const char *json;
        const char *needle;
    } cases[] = {
        { "{\"gpus\": [{\"arch\": 61}]}", "gpus[0].arch" },
        { "{\"gpus\": {}}", "gpus" },
        { "{\"gpus\": [{\"compute_capability\": \"six\"}]}", "compute_capability" },
        { "{\"libtorch\": [{\"archs\": [1]}]}", "libtorch[0].archs" },
        { "{\"toolkits\": [{\"root\": \"/x\"}]}", "toolkits[0].vendor" },
        { "[1, 2]", "must be an object" },
        { "{\"gpus\": [{\"arch\": \"sm_80\", \"memory_bytes\": 1e300}]}", "gpus[0].memory_bytes" },
        { "{\"driver\": {\"cuda_driver_version\": 1.5}}", "driver.cuda_driver_version" },
        { "{\"compilers\": [{\"name\": \"gcc\", \"major\": -1e12}]}", "compilers[0].major" },
        /* another command's report is not a survey */
        { "{\"schema\": \"cclforge.inspect/1\", \"gpus\": []}", "'cclforge.inspect/1' is not a survey" },
        { "{\"schema\": 3}", "(not a string) is not a survey" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *doc = cJSON_Parse(cases[i].json);
        assert_non_null(doc);
        struct cf_survey s = CF_SURVEY_INIT;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(cf_survey_from_json(doc, &s, &err), -1);
        if (!strstr(cf_error_message(&err), cases[i].needle))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, cf_error_message(&err), cases[i].needle);
        cf_error_clear(&err);
        cf_survey_release(&s);
        cJSON_Delete(doc);
    }
    /* An absurd arch is kept as given but gets no compute capability, so the
     * document still round-trips (found by fuzz_survey_json). */
    {
        cJSON *doc = cJSON_Parse("{\"gpus\": [{\"arch\": \"sm_77777777\"}]}");
        struct cf_survey odd = CF_SURVEY_INIT;
        cf_error e = CF_ERROR_INIT;
        assert_int_equal(cf_survey_from_json(doc, &odd, &e), 0);
        assert_int_equal(odd.gpus[0].cc_major, 0);
        cJSON *out = cf_survey_to_json(&odd);
        struct cf_survey back = CF_SURVEY_INIT;
        assert_int_equal(cf_survey_from_json(out, &back, &e), 0);
        cf_survey_release(&back);
        cf_survey_release(&odd);
        cJSON_Delete(out);
        cJSON_Delete(doc);
    }
    struct cf_survey s = CF_SURVEY_INIT;
    cf_error err = CF_ERROR_INIT;
    char *bad = ts_write(fx, "inject/bad.json", "{ not json");
    assert_int_equal(cf_survey_load(bad, &s, &err), -1);
    assert_int_equal(err.kind, CF_ERR_FORMAT);
    cf_error_clear(&err);
    assert_int_equal(cf_survey_load("/nonexistent/survey.json", &s, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "/nonexistent/survey.json"));
    cf_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gfx_target_names),
        cmocka_unit_test(test_comm_version_code),
        cmocka_unit_test(test_visible_devices),
        cmocka_unit_test(test_arch_order),
        cmocka_unit_test(test_vendor_table),
        cmocka_unit_test(test_toolkit_default_root_globs),
        cmocka_unit_test(test_kfd_dcu),
        cmocka_unit_test(test_kfd_amd_and_absent),
        cmocka_unit_test(test_nvidia_without_driver),
        cmocka_unit_test(test_nvidia_fake_driver_and_smi),
        cmocka_unit_test(test_toolkit_dtk_and_rocm),
        cmocka_unit_test(test_toolkit_cuda_version_sources),
        cmocka_unit_test(test_real_cuda_toolkit_and_nccl),
        cmocka_unit_test(test_debian_hip_packages),
        cmocka_unit_test(test_compilers_and_host_table),
        cmocka_unit_test(test_compiler_probe_families),
        cmocka_unit_test(test_python_probe_isolation),
        cmocka_unit_test(test_libtorch_cxx_distribution),
        cmocka_unit_test(test_libtorch_python_not_imported),
        cmocka_unit_test(test_libtorch_variants_root),
        cmocka_unit_test(test_libtorch_hip_broken_and_bad),
        cmocka_unit_test(test_real_torch_wheel),
        cmocka_unit_test(test_system_comm_libs),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_injection_partial),
        cmocka_unit_test(test_json_errors_name_the_key),
    };
    return cmocka_run_group_tests(tests, build_fixtures, drop_fixtures);
}
