/* NCCL tags, version.mk, git tag discovery and build plans (validation, defaults,
 * exact commands). Nothing here compiles NCCL: see tests/cli/nccl_build.sh. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/nccl_build.h"
#include "cclforge/spawn.h"

#define MINI CCLFORGE_SOURCE_DIR "/tests/fixtures/nccl-mini"

static void test_tag_table(void **state)
{
    static const struct {
        const char *text;
        int ok, major, minor, patch, rev;
    } rows[] = {
        { "v2.28.9-1", 1, 2, 28, 9, 1 },  { "v2.18.1-12", 1, 2, 18, 1, 12 }, { "v3.0.0-1", 1, 3, 0, 0, 1 },
        { "2.28.9-1", 0, 0, 0, 0, 0 },    { "v2.28.9", 0, 0, 0, 0, 0 },      { "v2.28-1", 0, 0, 0, 0, 0 },
        { "v2.28.9-1x", 0, 0, 0, 0, 0 },  { "v2.28.9-", 0, 0, 0, 0, 0 },     { "", 0, 0, 0, 0, 0 },
        { "nccl-2.28.9-1", 0, 0, 0, 0, 0 }, { "v2.280.9-1", 0, 0, 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct cf_nccl_tag t;
        cf_error err = CF_ERROR_INIT;
        int rc = cf_nccl_tag_parse(rows[i].text, &t, &err);
        if ((rc == 0) != rows[i].ok)
            fail_msg("'%s': expected %s", rows[i].text, rows[i].ok ? "accepted" : "rejected");
        if (rc == 0) {
            assert_int_equal(t.major, rows[i].major);
            assert_int_equal(t.minor, rows[i].minor);
            assert_int_equal(t.patch, rows[i].patch);
            assert_int_equal(t.rev, rows[i].rev);
        } else {
            assert_int_equal(err.kind, CF_ERR_USAGE);
            assert_non_null(strstr(cf_error_message(&err), "vX.Y.Z-N"));
        }
        cf_error_clear(&err);
    }
}

static void test_version_code_and_format(void **state)
{
    struct cf_nccl_tag t;
    assert_int_equal(cf_nccl_version_parse("2.28.9", &t, NULL), 0);
    assert_int_equal(t.rev, -1);
    assert_int_equal(cf_nccl_tag_version_code(&t), 22809);
    t.rev = 3;
    struct strbuf s = STRBUF_INIT;
    cf_nccl_tag_format(&t, &s);
    assert_string_equal(cf_sb_str(&s), "v2.28.9-3");
    cf_sb_release(&s);
    assert_int_equal(cf_nccl_version_parse("2.8.4", &t, NULL), 0);
    assert_int_equal(cf_nccl_tag_version_code(&t), 2804); /* the pre-2.9 formula */
    assert_int_equal(cf_nccl_version_parse("two", &t, NULL), -1);
}

static void test_pick_newest_revision(void **state)
{
    const char *names[] = { "refs/tags/v2.28.9-1", "refs/tags/v2.28.9-3", "refs/tags/v2.28.9-2^{}",
                            "refs/tags/v2.28.7-1", "refs/tags/v2.28.9-10", "refs/tags/v2.27.9-4", "refs/tags/junk" };
    struct cf_nccl_tag want = { 2, 28, 9, -1 }, got;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_tag_pick_newest(names, 7, &want, &got, &err), 0);
    assert_int_equal(got.rev, 10); /* numeric, not lexical */
    struct cf_nccl_tag absent = { 2, 28, 8, -1 };
    assert_int_equal(cf_nccl_tag_pick_newest(names, 7, &absent, &got, &err), -1);
    assert_int_equal(err.kind, CF_ERR_NOTFOUND);
    assert_non_null(strstr(cf_error_message(&err), "v2.28.8-N"));
    assert_non_null(strstr(cf_error_message(&err), "v2.28.7-1")); /* names the neighbours */
    cf_error_clear(&err);
}

static void test_source_version_mk(void **state)
{
    struct cf_nccl_tag t;
    char *suffix = NULL;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_source_version(MINI, &t, &suffix, &err), 0);
    assert_int_equal(t.major, 2);
    assert_int_equal(t.minor, 28);
    assert_int_equal(t.patch, 9);
    assert_int_equal(t.rev, 1);
    assert_string_equal(suffix, "");
    free(suffix);
    char *dir = ts_tmpdir();
    ts_write(dir, "makefiles/version.mk", "NCCL_MAJOR := 2\nNCCL_MINOR := x\n");
    assert_int_equal(cf_nccl_source_version(dir, &t, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "NCCL_MINOR"));
    cf_error_clear(&err);
    assert_int_equal(cf_nccl_source_version("/nonexistent-dir", &t, NULL, &err), -1);
    cf_error_clear(&err);
    ts_cleanup();
}

/* A real git repository with several -N tags, listed by `git ls-remote`. */
static void test_git_tags_of_local_repo(void **state)
{
    if (!ts_have("git"))
        skip();
    char *dir = ts_tmpdir();
    char *repo = cf_path_join(dir, "repo");
    const char *init[] = { "git", "init", "-q", repo, NULL };
    ts_run_ok(init);
    ts_write(repo, "README", "x\n");
    const char *add[] = { "git", "-C", repo, "add", "README", NULL };
    ts_run_ok(add);
    const char *commit[] = { "git", "-C", repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm",
                             "x", NULL };
    ts_run_ok(commit);
    const char *tags[] = { "v2.28.9-1", "v2.28.9-2", "v2.28.3-1", NULL };
    for (size_t i = 0; tags[i]; i++) {
        const char *tag[] = { "git", "-C", repo, "tag", tags[i], NULL };
        ts_run_ok(tag);
    }
    struct strvec names = STRVEC_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_git_list_tags(repo, &names, &err), 0);
    assert_int_equal(names.n, 3);
    struct cf_nccl_tag want = { 2, 28, 9, -1 }, got;
    assert_int_equal(cf_nccl_tag_pick_newest((const char *const *)names.v, names.n, &want, &got, &err), 0);
    assert_int_equal(got.rev, 2);
    cf_strvec_clear(&names);
    char *missing = cf_path_join(dir, "missing");
    assert_int_equal(cf_git_list_tags(missing, &names, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "cannot list the tags"));
    cf_error_clear(&err);
    free(missing);
    free(repo);
    ts_cleanup();
}

static struct cf_nccl_build_opts base_opts(const char *root)
{
    struct cf_nccl_build_opts o;
    memset(&o, 0, sizeof o);
    o.ptx = 1;
    o.root = root;
    o.source = MINI;
    o.archs = "7.5;9.0";
    o.jobs = 2;
    return o;
}

/* this machine's toolkit, found as doctor finds it, with its nvcc */
static int have_nvcc(void)
{
    const char *root = ts_cuda_root();
    char *nvcc = root ? cf_path_join(root, "bin/nvcc") : NULL;
    int yes = nvcc && cf_is_file(nvcc);
    free(nvcc);
    return yes;
}

static void test_plan_dir_source(void **state)
{
    if (!have_nvcc())
        skip();
    char *root = ts_tmpdir();
    struct cf_nccl_build_opts o = base_opts(root);
    o.cuda_home = ts_cuda_root();
    struct cf_nccl_plan p;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_string_equal(p.tag_text, "v2.28.9-1");
    assert_string_equal(p.target_name, "v2.28.9-sm75-sm90");
    assert_int_equal(p.source_kind, CF_SRC_DIR);
    struct strvec cmds = STRVEC_INIT;
    cf_nccl_plan_commands(&p, &cmds);
    assert_int_equal(cmds.n, 1);
    char *want = cf_asprintf("make -C %s src.build 'NVCC_GENCODE=-gencode=arch=compute_75,code=sm_75 "
                             "-gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90' "
                             "BUILDDIR=%s/nccl/work/v2.28.9-sm75-sm90/build CUDA_HOME=%s -j2",
                             p.source, root, ts_cuda_root());
    assert_string_equal(cmds.v[0], want);
    free(want);
    cf_strvec_clear(&cmds);
    cf_nccl_plan_release(&p);

    /* --no-ptx and --only-funcs give distinct targets, and ONLY_FUNCS is passed through */
    o.ptx = 0;
    o.only_funcs = "AllReduce Sum f32 * *|SendRecv";
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_true(cf_starts_with(p.target_name, "v2.28.9-sm75-sm90-noptx-funcs"));
    cf_nccl_plan_commands(&p, &cmds);
    assert_non_null(strstr(cmds.v[0], "'ONLY_FUNCS=AllReduce Sum f32 * *|SendRecv'"));
    assert_null(strstr(cmds.v[0], "code=compute_90"));
    cf_strvec_clear(&cmds);
    cf_nccl_plan_release(&p);
    ts_cleanup();
}

static void expect_plan_error(struct cf_nccl_build_opts *o, enum cf_error_kind kind, const char *needle)
{
    struct cf_nccl_plan p;
    cf_error err = CF_ERROR_INIT;
    if (cf_nccl_plan_make(o, &p, &err) == 0) {
        cf_nccl_plan_release(&p);
        fail_msg("plan accepted; expected an error with '%s'", needle);
    }
    if (err.kind != kind || !strstr(cf_error_message(&err), needle))
        fail_msg("error '%s' (kind %d) lacks '%s' (kind %d)", cf_error_message(&err), err.kind, needle, kind);
    cf_error_clear(&err);
}

static void test_plan_rejects(void **state)
{
    if (!have_nvcc())
        skip();
    char *root = ts_tmpdir();
    struct cf_nccl_build_opts o = base_opts(root);
    o.archs = "gfx90a";
    o.vendor = "nvidia";
    expect_plan_error(&o, CF_ERR_USAGE, "--vendor rocm or dtk");
    o = base_opts(root);
    o.archs = "sm_75";
    o.vendor = "rocm";
    expect_plan_error(&o, CF_ERR_USAGE, "--vendor nvidia");
    o = base_opts(root);
    o.vendor = "intel";
    expect_plan_error(&o, CF_ERR_USAGE, "unknown --vendor");
    o = base_opts(root);
    o.archs = "6.1;12.0";
    o.cuda_home = ts_cuda_root();
    if (ts_cuda_version() >= 13000) /* CUDA 13 builds nothing below sm_75 */
        expect_plan_error(&o, CF_ERR_USAGE, "sm_61 cannot be targeted by CUDA");
    o = base_opts(root);
    o.tag = "v2.27.7-1";
    expect_plan_error(&o, CF_ERR_USAGE, "does not match the source");
    o = base_opts(root);
    o.tag = "2.28.9";
    expect_plan_error(&o, CF_ERR_USAGE, "vX.Y.Z-N");
    o = base_opts(root);
    o.source = "/nonexistent/nccl";
    expect_plan_error(&o, CF_ERR_USAGE, "does not exist");
    o = base_opts(root);
    o.cuda_home = "/nonexistent-cuda";
    expect_plan_error(&o, CF_ERR_NOTFOUND, "nvcc not found");
    o = base_opts(root);
    o.docker = 1;
    expect_plan_error(&o, CF_ERR_USAGE, "sends no build context");
    o = base_opts(root);
    o.source = NULL;
    o.tag = NULL;
    expect_plan_error(&o, CF_ERR_USAGE, "no NCCL version to build");
    char *file = ts_write(root, "notes.txt", "x");
    o = base_opts(root);
    o.source = file;
    expect_plan_error(&o, CF_ERR_USAGE, "not a tarball");
    ts_cleanup();
}

static void test_plan_defaults_from_env(void **state)
{
    if (!have_nvcc())
        skip();
    char *root = ts_tmpdir();
    struct cf_nccl_build_opts o = base_opts(root);
    o.archs = NULL;
    o.jobs = 0;
    unsetenv("PYTORCH_ROCM_ARCH");
    setenv("TORCH_CUDA_ARCH_LIST", "8.0;9.0+PTX", 1);
    setenv("MAX_JOBS", "3", 1);
    o.ptx = 0; /* "+PTX" in the list turns it on */
    struct cf_nccl_plan p;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_string_equal(p.archs_origin, "TORCH_CUDA_ARCH_LIST");
    assert_int_equal(p.jobs, 3);
    assert_int_equal(p.ptx, 1);
    assert_string_equal(p.target_name, "v2.28.9-sm80-sm90");
    cf_nccl_plan_release(&p);
    /* the survey's GPUs come before the environment */
    o.survey_archs = "sm_75";
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_string_equal(p.archs_origin, "GPU survey");
    assert_string_equal(p.target_name, "v2.28.9-sm75-noptx");
    cf_nccl_plan_release(&p);
    setenv("MAX_JOBS", "lots", 1);
    expect_plan_error(&o, CF_ERR_USAGE, "MAX_JOBS");
    unsetenv("MAX_JOBS");
    unsetenv("TORCH_CUDA_ARCH_LIST");
    o.survey_archs = NULL;
    expect_plan_error(&o, CF_ERR_USAGE, "no GPU archs");
    /* libtorch's NCCL differs from the source: warned, not refused */
    o.archs = "7.5";
    o.torch_nccl_version = "2.27.7";
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_int_equal(p.warnings.n, 1);
    assert_non_null(strstr(p.warnings.v[0], "Mismatched NCCL version"));
    cf_nccl_plan_release(&p);
    ts_cleanup();
}

static void test_plan_git_newest_revision(void **state)
{
    if (!have_nvcc() || !ts_have("git"))
        skip();
    char *dir = ts_tmpdir();
    char *repo = cf_path_join(dir, "nccl.git");
    const char *init[] = { "git", "init", "-q", "--bare", repo, NULL };
    ts_run_ok(init);
    char *work = cf_path_join(dir, "work");
    const char *clone[] = { "git", "clone", "-q", repo, work, NULL };
    ts_run_ok(clone);
    ts_write(work, "makefiles/version.mk", "NCCL_MAJOR := 2\nNCCL_MINOR := 28\nNCCL_PATCH := 9\n");
    const char *add[] = { "git", "-C", work, "add", "-A", NULL };
    ts_run_ok(add);
    const char *commit[] = { "git", "-C", work, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm",
                             "x", NULL };
    ts_run_ok(commit);
    const char *tags[] = { "v2.28.9-1", "v2.28.9-4", "v2.28.9-2", NULL };
    for (size_t i = 0; tags[i]; i++) {
        const char *tag[] = { "git", "-C", work, "tag", tags[i], NULL };
        ts_run_ok(tag);
    }
    const char *push[] = { "git", "-C", work, "push", "-q", "--tags", "origin", NULL };
    ts_run_ok(push);

    struct cf_nccl_build_opts o = base_opts(dir);
    o.source = repo; /* a bare repository is cloned like a URL */
    o.torch_nccl_version = "2.28.9";
    struct cf_nccl_plan p;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_int_equal(p.source_kind, CF_SRC_GIT);
    assert_string_equal(p.tag_text, "v2.28.9-4");
    struct strvec cmds = STRVEC_INIT;
    cf_nccl_plan_commands(&p, &cmds);
    char *want = cf_asprintf("git clone --depth 1 --branch v2.28.9-4 -c advice.detachedHead=false -- %s %s", p.source,
                             p.src_dir);
    assert_string_equal(cmds.v[0], want);
    free(want);
    cf_strvec_clear(&cmds);
    cf_nccl_plan_release(&p);
    o.torch_nccl_version = "2.28.3";
    expect_plan_error(&o, CF_ERR_NOTFOUND, "no tag v2.28.3-N");
    free(repo);
    free(work);
    ts_cleanup();
}

static void test_plan_docker(void **state)
{
    char *root = ts_tmpdir();
    struct cf_nccl_build_opts o = base_opts(root);
    o.source = NULL; /* upstream */
    o.tag = "v2.28.9-1";
    o.docker = 1;
    o.cuda_home = "/nonexistent-cuda"; /* Docker mode does not need a local toolkit */
    o.only_funcs = "AllGather * *|SendRecv";
    struct cf_nccl_plan p;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_non_null(strstr(p.dockerfile, "FROM nvidia/cuda:12.8.1-devel-ubuntu22.04\n"));
    /* exec-form RUN: the user's strings are JSON array items, never shell text */
    assert_non_null(strstr(p.dockerfile, "RUN [\"git\",\"clone\",\"--depth\",\"1\",\"--branch\",\"v2.28.9-1\""));
    assert_non_null(strstr(p.dockerfile, "\"ONLY_FUNCS=AllGather * *|SendRecv\"]"));
    assert_non_null(strstr(p.dockerfile, "\nENV GIT_ALLOW_PROTOCOL=https:ssh:git:file\n"));
    struct cf_nccl_steps steps;
    cf_nccl_plan_steps(&p, "/tmp/private", &steps);
    assert_int_equal(steps.n_build, 3);
    assert_int_equal(steps.fetch.n, 0);
    assert_string_equal(steps.build[0].v[0], "docker");
    assert_string_equal(steps.build[0].v[1], "build");
    assert_string_equal(steps.build[0].v[5], "/tmp/private/Dockerfile");
    assert_string_equal(steps.build[0].v[6], "/tmp/private/empty-context"); /* no build context sent */
    assert_true(cf_starts_with(steps.build[0].v[3], "cclforge-nccl-build:v2.28.9-sm75-sm90-"));
    assert_int_equal(steps.n_cleanup, 2);
    assert_string_equal(steps.cleanup[0].v[1], "rm");
    assert_string_equal(steps.cleanup[1].v[1], "rmi");
    assert_string_equal(steps.cleanup[1].v[3], steps.build[0].v[3]);
    cf_nccl_steps_release(&steps);
    /* two plans never share an image tag */
    struct cf_nccl_plan q;
    assert_int_equal(cf_nccl_plan_make(&o, &q, &err), 0);
    assert_string_not_equal(p.docker_tag, q.docker_tag);
    cf_nccl_plan_release(&q);
    cf_nccl_plan_release(&p);
    ts_cleanup();
}

/* Text that would reach make, sh, a Dockerfile or git's transports: refused
 * before anything is written, naming the character and the fix. */
static void test_plan_rejects_hostile_text(void **state)
{
    if (!have_nvcc())
        skip();
    char *root = ts_tmpdir();
    struct cf_nccl_build_opts o = base_opts(root);
    static const struct {
        const char *funcs, *needle;
    } funcs[] = {
        { "SendRecv\"; touch /tmp/x; echo \"", "contains '\"'" },
        { "SendRecv$(shell touch /tmp/x)", "contains '$'" },
        { "SendRecv`id`", "contains '`'" },
        { "SendRecv\ntouch", "contains a newline" },
        { "(AllReduce|SendRecv", "leaves a '(' group open" },
        { "SendRecv)", "closes a group it never opened" },
    };
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++) {
        o.only_funcs = funcs[i].funcs;
        expect_plan_error(&o, CF_ERR_USAGE, funcs[i].needle);
    }
    /* NCCL's own examples pass (src/device/generate.py) */
    static const char *const good[] = { "SendRecv", "AllGather * *|Broadcast * *|SendRecv", "AllReduce Sum f32 * *",
                                        "(AllGather|Broadcast) RING SIMPLE" };
    struct cf_nccl_plan p;
    cf_error err = CF_ERROR_INIT;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        o.only_funcs = good[i];
        if (cf_nccl_plan_make(&o, &p, &err) != 0)
            fail_msg("%s refused: %s", good[i], cf_error_message(&err));
        cf_nccl_plan_release(&p);
    }
    o.only_funcs = NULL;

    static const struct {
        const char *root, *needle;
    } roots[] = {
        { "/tmp/r$(shell touch /tmp/x)", "the install root /tmp/r$(shell touch /tmp/x) contains '$'" },
        { "/tmp/my root", "contains a space" },
        { "/tmp/a;b", "contains ';'" },
        { "/tmp/a'b", "contains '''" },
        { "/tmp/a:b", "contains ':'" },
        { "/tmp/a%b", "contains '%'" },
        { "/tmp/a\033]0;t\007", "the control character \\x1b" },
    };
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        o.root = roots[i].root;
        expect_plan_error(&o, CF_ERR_USAGE, roots[i].needle);
        assert_false(cf_path_exists(roots[i].root)); /* nothing written */
    }
    o.root = root;
    char *dotted = cf_asprintf("%s/bin/../", ts_cuda_root()); /* fine: only letters and / . */
    o.cuda_home = dotted;
    if (cf_nccl_plan_make(&o, &p, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    cf_nccl_plan_release(&p);
    /* a root reached through a link with a clean name, whose real path has a
     * space: make -C works in the real directory, so a git source is refused */
    char *spaced = cf_path_join(root, "real dir");
    assert_int_equal(cf_mkdir_p(spaced, 0755, NULL), 0);
    char *link = cf_path_join(root, "clean");
    assert_int_equal(symlink(spaced, link), 0);
    o = base_opts(link); /* a DIR source: only BUILDDIR is under the root */
    if (cf_nccl_plan_make(&o, &p, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    cf_nccl_plan_release(&p);
    o.source = "file:///nonexistent/nccl.git";
    o.tag = "v2.28.9-1";
    expect_plan_error(&o, CF_ERR_USAGE, "the source checkout (under the root's real path)");
    o = base_opts(root);

    static const struct {
        const char *url, *needle;
    } urls[] = {
        { "ext::sh -c touch% /tmp/x #://x", "contains a space" },
        { "ext::sh%20-c%20id://x", "only over https://" },
        { "http://example.com/nccl.git", "only over https://" },
        { "fd::7://", "only over https://" },
    };
    o.tag = "v2.28.9-1";
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        o.source = urls[i].url;
        expect_plan_error(&o, CF_ERR_USAGE, urls[i].needle);
    }
    o = base_opts(root);

    o.source = NULL;
    o.tag = "v2.28.9-1";
    o.docker = 1;
    static const char *const bad_images[] = { "ubuntu:22.04\nRUN touch /tmp/x", "Ubuntu", "ubuntu:", "a//b", "-x",
                                              "ubuntu@sha256:abc", "ubuntu:tag with space", "" };
    for (size_t i = 0; i < sizeof bad_images / sizeof bad_images[0]; i++) {
        o.docker_image = bad_images[i];
        expect_plan_error(&o, CF_ERR_USAGE, "is not an image reference");
    }
    static const char *const good_images[] = {
        "ubuntu", "nvidia/cuda:13.0.0-devel-ubuntu22.04", "localhost:5000/my_team/cuda__x:1.0",
        "registry.example.com/a/b-c.d:latest",
        "nvcr.io/nvidia/pytorch@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "[::1]:5000/cuda:12"
    };
    for (size_t i = 0; i < sizeof good_images / sizeof good_images[0]; i++) {
        o.docker_image = good_images[i];
        if (cf_nccl_plan_make(&o, &p, &err) != 0)
            fail_msg("%s refused: %s", good_images[i], cf_error_message(&err));
        cf_nccl_plan_release(&p);
    }
    free(spaced);
    free(link);
    free(dotted);
    ts_cleanup();
}

static void test_plan_rccl_cmake(void **state)
{
    char *root = ts_tmpdir();
    char *src = cf_path_join(root, "rccl");
    ts_write(src, "makefiles/version.mk", "NCCL_MAJOR := 2\nNCCL_MINOR := 22\nNCCL_PATCH := 3\n");
    ts_write(src, "CMakeLists.txt", "project(rccl)\n");
    char *rocm = cf_path_join(root, "dtk");
    ts_write(rocm, "bin/hipcc", "#!/bin/sh\necho 'HIP version: 6.2.41133'\n");
    char *hipcc = cf_path_join(rocm, "bin/hipcc");
    assert_int_equal(chmod(hipcc, 0755), 0);
    struct cf_nccl_build_opts o = base_opts(root);
    o.vendor = "dtk";
    o.archs = "gfx942;gfx90a";
    o.source = src;
    o.rocm_path = rocm;
    o.only_funcs = "SendRecv";
    struct cf_nccl_plan p;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_true(cf_starts_with(p.target_name, "v2.22.3-gfx90a-gfx942-funcs"));
    assert_int_equal(p.ptx, 0);
    assert_string_equal(p.compiler, "HIP version: 6.2.41133");
    struct strvec cmds = STRVEC_INIT;
    cf_nccl_plan_commands(&p, &cmds);
    assert_int_equal(cmds.n, 2);
    char *configure = cf_asprintf("cmake -S %s -B %s -DCMAKE_BUILD_TYPE=Release '-DGPU_TARGETS=gfx90a;gfx942' "
                                  "-DROCM_PATH=%s -DCMAKE_PREFIX_PATH=%s -DBUILD_TESTS=OFF -DCMAKE_CXX_COMPILER=%s "
                                  "-DONLY_FUNCS=SendRecv",
                                  p.src_dir, p.build_dir, rocm, rocm, hipcc);
    assert_string_equal(cmds.v[0], configure);
    char *build = cf_asprintf("cmake --build %s --parallel 2", p.build_dir);
    assert_string_equal(cmds.v[1], build);
    free(configure);
    free(build);
    cf_strvec_clear(&cmds);
    cf_nccl_plan_release(&p);
    /* RCCL has no default upstream source here */
    o.source = NULL;
    expect_plan_error(&o, CF_ERR_USAGE, "RCCL builds need --source");
    free(src);
    free(rocm);
    free(hipcc);
    ts_cleanup();
}

/* With use_survey the plan takes its defaults from doctor's survey itself (the
 * CLI only parses): archs from an injected host's GPUs, the torch NCCL from its
 * libtorch (a differing --tag is warned about); a broken survey file is an error. */
static void test_plan_defaults_from_survey(void **state)
{
    char *root = ts_tmpdir();
    char *src = cf_path_join(root, "rccl");
    ts_write(src, "makefiles/version.mk", "NCCL_MAJOR := 2\nNCCL_MINOR := 22\nNCCL_PATCH := 3\n");
    char *survey = ts_write(root, "host.json",
                            "{\"gpus\": [{\"vendor\": \"amd\", \"arch\": \"gfx942\"}, {\"vendor\": \"amd\", "
                            "\"arch\": \"gfx90a\"}], \"libtorch\": [{\"root\": \"/t\", \"flavour\": \"hip\", "
                            "\"loaded\": {\"kind\": \"rccl\", \"version\": \"2.20.5\"}}]}");
    struct cf_nccl_build_opts o = base_opts(root);
    o.vendor = "rocm";
    o.archs = NULL;
    o.source = src;
    o.rocm_path = root;
    o.use_survey = 1;
    o.survey_file = survey;
    struct cf_nccl_plan p;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    struct strbuf archs = STRBUF_INIT;
    cf_arch_list_join(&p.archs, ";", &archs);
    assert_string_equal(cf_sb_str(&archs), "gfx90a;gfx942");
    assert_string_equal(p.archs_origin, "GPU survey");
    assert_int_equal(p.warnings.n, 1); /* the source is 2.22.3, the host's libtorch loads 2.20.5 */
    assert_non_null(strstr(p.warnings.v[0], "2.20.5"));
    cf_sb_release(&archs);
    cf_nccl_plan_release(&p);
    o.archs = "gfx90a"; /* a flag beats the survey */
    assert_int_equal(cf_nccl_plan_make(&o, &p, &err), 0);
    assert_string_equal(p.archs_origin, "--archs");
    cf_nccl_plan_release(&p);
    o.survey_file = ts_write(root, "broken.json", "{\"gpus\": 7}");
    expect_plan_error(&o, CF_ERR_FORMAT, "gpus");
    free(src);
    ts_cleanup();
}

static void test_shell_quote(void **state)
{
    static const struct {
        const char *in, *out;
    } rows[] = {
        { "plain-word_1.2/x", "plain-word_1.2/x" }, { "a b", "'a b'" }, { "it's", "'it'\\''s'" },
        { "", "''" }, { "$(rm)", "'$(rm)'" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct strbuf s = STRBUF_INIT;
        cf_shell_quote(rows[i].in, &s);
        assert_string_equal(cf_sb_str(&s), rows[i].out);
        cf_sb_release(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_table),
        cmocka_unit_test(test_version_code_and_format),
        cmocka_unit_test(test_pick_newest_revision),
        cmocka_unit_test(test_source_version_mk),
        cmocka_unit_test(test_git_tags_of_local_repo),
        cmocka_unit_test(test_plan_dir_source),
        cmocka_unit_test(test_plan_rejects),
        cmocka_unit_test(test_plan_defaults_from_env),
        cmocka_unit_test(test_plan_git_newest_revision),
        cmocka_unit_test(test_plan_docker),
        cmocka_unit_test(test_plan_rejects_hostile_text),
        cmocka_unit_test(test_plan_rccl_cmake),
        cmocka_unit_test(test_plan_defaults_from_survey),
        cmocka_unit_test(test_shell_quote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
