/* Turning `nccl build` inputs into a checked plan: vendor, tag, archs, source,
 * toolkit, jobs, install target and the exact commands. Nothing is built here. */
#include "cclforge/nccl_build.h"
#include "nccl_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "cclforge/survey.h"
#include "cclforge/vendor.h"

static const char *const tarball_suffixes[] = { ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2",
                                                ".tar.zst", ".tar" };

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int is_tarball_name(const char *path)
{
    for (size_t i = 0; i < sizeof tarball_suffixes / sizeof tarball_suffixes[0]; i++)
        if (cf_ends_with(path, tarball_suffixes[i]))
            return 1;
    return 0;
}

/* A bare repository (HEAD + objects/ + refs/) is cloned like a URL; a work
 * tree is built as it is. */
static int is_bare_repo(const char *dir)
{
    char *head = cf_path_join(dir, "HEAD"), *objects = cf_path_join(dir, "objects"), *refs = cf_path_join(dir, "refs");
    int bare = cf_is_file(head) && cf_is_dir(objects) && cf_is_dir(refs);
    free(head);
    free(objects);
    free(refs);
    return bare;
}

static int classify_source(const char *source, struct cf_nccl_plan *plan, cf_error *err)
{
    if (!source) {
        plan->source_kind = CF_SRC_UPSTREAM;
        plan->source = cf_strdup(CF_NCCL_UPSTREAM_URL);
        return 0;
    }
    if (cf_nccl_is_git_url(source)) {
        if (cf_nccl_check_git_url(source, err) < 0)
            return -1;
        plan->source_kind = CF_SRC_GIT;
        plan->source = cf_strdup(source);
        return 0;
    }
    if (cf_is_dir(source)) {
        plan->source_kind = is_bare_repo(source) ? CF_SRC_GIT : CF_SRC_DIR;
        plan->source = cf_realpath(source);
        return 0;
    }
    if (cf_is_file(source)) {
        if (!is_tarball_name(source))
            return cf_error_set(err, CF_ERR_USAGE,
                                "source %s is a file but not a tarball (.tar.gz, .tgz, .tar.xz, .tar.bz2, .tar): "
                                "pass a directory, a tarball or a git URL",
                                source);
        plan->source_kind = CF_SRC_TARBALL;
        plan->source = cf_realpath(source);
        return 0;
    }
    if (cf_ends_with(source, ".git"))
        return cf_error_set(err, CF_ERR_USAGE, "source %s does not exist (for a remote repository write its URL)",
                            source);
    return cf_error_set(err, CF_ERR_USAGE, "source %s does not exist: pass a directory, a tarball or a git URL",
                        source);
}

/* The toolkit root as the vendor table says to find it, the way doctor does:
 * the flag, the vendor's root variables in order (DTK_HOME, ROCM_PATH, ...),
 * the first default root holding the vendor's markers (/opt/dtk, /opt/dtk-*),
 * else the first default root, where the compiler is then looked for. */
static void resolve_toolkit_home(const struct cf_nccl_build_opts *opts, struct cf_nccl_plan *plan)
{
    const struct cf_vendor_profile *p = plan->vendor;
    const char *given = p->arch_family == CF_ARCH_AMD ? opts->rocm_path : opts->cuda_home;
    if (given) {
        plan->toolkit_home = cf_path_absolute(given);
        plan->toolkit_origin = cf_strdup(p->arch_family == CF_ARCH_AMD ? "--rocm-path" : "--cuda-home");
        return;
    }
    for (const char *const *e = p->root_env; *e; e++)
        if (env_nonempty(*e)) {
            plan->toolkit_home = cf_path_absolute(getenv(*e));
            plan->toolkit_origin = cf_strdup(*e);
            return;
        }
    char *found = cf_toolkit_default_root(p);
    plan->toolkit_home = cf_path_absolute(found ? found : p->default_roots[0]);
    plan->toolkit_origin = cf_asprintf("default %s%s", found ? found : p->default_roots[0],
                                       found ? "" : " (no root with the toolkit's files found)");
    free(found);
}

/* <toolkit>/bin/<the vendor's compiler>: nvcc, hipcc */
static char *toolkit_compiler(const struct cf_nccl_plan *plan)
{
    return cf_asprintf("%s/bin/%s", plan->toolkit_home, plan->vendor->compiler);
}

static int resolve_toolkit(const struct cf_nccl_build_opts *opts, struct cf_nccl_plan *plan, char **nvcc_archs,
                           cf_error *err)
{
    resolve_toolkit_home(opts, plan);
    if (plan->vendor->arch_family == CF_ARCH_AMD) {
        char *hipcc = toolkit_compiler(plan);
        struct cf_compiler c = { 0 };
        if (cf_is_file(hipcc) && cf_compiler_probe(hipcc, &c, NULL) == 0)
            plan->compiler = cf_strdup(c.banner);
        else
            plan->compiler = cf_asprintf("cmake default C++ compiler (no working %s)", hipcc);
        cf_compiler_release(&c);
        free(hipcc);
        return 0;
    }
    char *nvcc = toolkit_compiler(plan);
    struct cf_compiler c = { 0 };
    if (cf_is_file(nvcc) && cf_compiler_probe(nvcc, &c, NULL) == 0 && c.family &&
        !strcmp(c.family, plan->vendor->compiler)) {
        plan->cuda_version = cf_asprintf("%d.%d", c.major, c.minor); /* the release: "13.0" of V13.0.88 */
        plan->compiler = cf_strdup(c.banner);
        const char *argv[] = { nvcc, "--list-gpu-arch", NULL };
        *nvcc_archs = cf_capture(argv, 30);
    } else {
        if (!opts->docker) {
            cf_compiler_release(&c);
            int rc = cf_error_set(err, CF_ERR_NOTFOUND,
                                  "nvcc not found or not working at %s: set CUDA_HOME (or --cuda-home) to a CUDA "
                                  "toolkit, or build with --docker",
                                  nvcc);
            free(nvcc);
            return rc;
        }
        plan->compiler = cf_strdup("nvcc in the Docker image");
    }
    cf_compiler_release(&c);
    free(nvcc);
    return 0;
}

static int resolve_archs(const struct cf_nccl_build_opts *opts, int vendor_given, struct cf_nccl_plan *plan,
                         cf_error *err)
{
    const char *text = opts->archs, *origin = "--archs";
    if (!text && opts->survey_archs && *opts->survey_archs) {
        text = opts->survey_archs;
        origin = "GPU survey";
    }
    /* Where PyTorch users keep their arch list: the vendor's variable
     * (TORCH_CUDA_ARCH_LIST, PYTORCH_ROCM_ARCH); with no --vendor, any vendor's. */
    for (int v = 0; !text && v < CF_VENDOR_COUNT; v++) {
        const struct cf_vendor_profile *p = vendor_given ? plan->vendor : cf_vendor_get((enum cf_vendor)v);
        if (env_nonempty(p->arch_list_env)) {
            text = getenv(p->arch_list_env);
            origin = p->arch_list_env;
        }
        if (vendor_given)
            break;
    }
    if (!text)
        return cf_error_set(err, CF_ERR_USAGE,
                            "no GPU archs: no GPU was found on this host; pass --archs (e.g. \"7.5;9.0\" or "
                            "\"gfx90a\") or set %s",
                            plan->vendor->arch_list_env);
    if (cf_arch_list_parse(&plan->archs, text, err) < 0)
        return cf_error_prefix(err, "%s", origin);
    plan->archs_origin = cf_strdup(origin);
    return 0;
}

/* Reads makefiles/version.mk out of a tarball without extracting the rest. */
static int tarball_version(const char *tarball, struct cf_nccl_tag *tag, cf_error *err)
{
    const char *argv[] = { "tar", "-xOf", tarball, "--wildcards", "--no-anchored", "makefiles/version.mk", NULL };
    struct cf_spawn_opts o = cf_spawn_probe_opts(120);
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    if (cf_spawn_run(argv, &o, &r, err) < 0)
        return -1;
    int rc = 0;
    if (!cf_spawn_ok(&r) || r.out.len == 0) {
        rc = cf_error_set(err, CF_ERR_FORMAT, "%s holds no makefiles/version.mk: is it an NCCL source tarball?",
                          tarball);
    } else {
        char *dir = cf_mkdtemp(NULL, "cclforge-ver-", err);
        if (!dir) {
            rc = -1;
        } else {
            char *mk = cf_path_join(dir, "makefiles");
            char *file = cf_path_join(mk, "version.mk");
            rc = cf_mkdir_p(mk, 0700, err);
            if (rc == 0)
                rc = cf_write_file_atomic(file, r.out.buf, r.out.len, err);
            if (rc == 0)
                rc = cf_nccl_source_version(dir, tag, NULL, err);
            cf_rm_rf(dir, NULL);
            free(mk);
            free(file);
            free(dir);
        }
    }
    cf_spawn_result_release(&r);
    return rc;
}

static int same_version(const struct cf_nccl_tag *a, const struct cf_nccl_tag *b)
{
    return a->major == b->major && a->minor == b->minor && a->patch == b->patch;
}

static int resolve_tag(const struct cf_nccl_build_opts *opts, struct cf_nccl_plan *plan, cf_error *err)
{
    struct cf_nccl_tag given = { 0, 0, 0, -1 };
    if (opts->tag && cf_nccl_tag_parse(opts->tag, &given, err) < 0)
        return -1;
    struct cf_nccl_tag torch = { 0, 0, 0, -1 };
    int have_torch = opts->torch_nccl_version && *opts->torch_nccl_version &&
                     cf_nccl_version_parse(opts->torch_nccl_version, &torch, NULL) == 0;

    if (plan->source_kind == CF_SRC_DIR || plan->source_kind == CF_SRC_TARBALL) {
        struct cf_nccl_tag in_source;
        int rc = plan->source_kind == CF_SRC_DIR ? cf_nccl_source_version(plan->source, &in_source, NULL, err)
                                                 : tarball_version(plan->source, &in_source, err);
        if (rc < 0)
            return -1;
        if (opts->tag && (!same_version(&given, &in_source) || (in_source.rev >= 0 && in_source.rev != given.rev))) {
            struct strbuf s = STRBUF_INIT;
            cf_nccl_tag_format(&in_source, &s);
            cf_error_set(err, CF_ERR_USAGE, "--tag %s does not match the source %s, which is %s (makefiles/version.mk)",
                         opts->tag, plan->source, cf_sb_str(&s));
            cf_sb_release(&s);
            return -1;
        }
        plan->tag = opts->tag ? given : in_source;
        if (plan->tag.rev < 0)
            plan->tag.rev = 1;
        plan->tag_origin = cf_strdup(opts->tag ? "--tag" : "source makefiles/version.mk");
    } else if (opts->tag) {
        plan->tag = given;
        plan->tag_origin = cf_strdup("--tag");
    } else if (have_torch) {
        struct strvec names = STRVEC_INIT;
        if (cf_git_list_tags(plan->source, &names, err) < 0) {
            cf_strvec_clear(&names);
            return cf_error_prefix(err, "finding the newest release of libtorch's NCCL %s", opts->torch_nccl_version);
        }
        int rc = cf_nccl_tag_pick_newest((const char *const *)names.v, names.n, &torch, &plan->tag, err);
        cf_strvec_clear(&names);
        if (rc < 0)
            return cf_error_prefix(err, "%s", plan->source);
        plan->tag_origin = cf_asprintf("libtorch's NCCL %s, newest revision in the source", opts->torch_nccl_version);
    } else {
        return cf_error_set(err, CF_ERR_USAGE,
                            "no NCCL version to build: no libtorch NCCL was found on this host; pass --tag "
                            "vX.Y.Z-N (e.g. v2.28.9-1) or a --source directory");
    }
    if (have_torch && !same_version(&torch, &plan->tag)) {
        struct strbuf s = STRBUF_INIT;
        cf_nccl_version_format(&plan->tag, &s);
        cf_strvec_pushf(&plan->warnings,
                     "building NCCL %s but the active libtorch uses %s: ranks that mix them fail with "
                     "\"Mismatched NCCL version detected\"",
                     cf_sb_str(&s), opts->torch_nccl_version);
        cf_sb_release(&s);
    }
    struct strbuf t = STRBUF_INIT;
    cf_nccl_tag_format(&plan->tag, &t);
    plan->tag_text = cf_sb_detach(&t);
    return 0;
}

static int resolve_jobs(const struct cf_nccl_build_opts *opts, struct cf_nccl_plan *plan, cf_error *err)
{
    if (opts->jobs > 0) {
        plan->jobs = opts->jobs;
        return 0;
    }
    const char *max_jobs = env_nonempty("MAX_JOBS");
    if (max_jobs) {
        char *end = NULL;
        long n = strtol(max_jobs, &end, 10);
        if (*end || n <= 0 || n > 4096)
            return cf_error_set(err, CF_ERR_USAGE, "MAX_JOBS=%s is not a positive number of jobs", max_jobs);
        plan->jobs = (int)n;
        return 0;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    plan->jobs = cores > 0 ? (int)cores : 1;
    return 0;
}

/* The cache key part for the source: what makes two builds of one tag differ. */
static void source_identity(struct cf_nccl_plan *plan)
{
    if (plan->source_kind == CF_SRC_TARBALL) {
        char hex[65];
        if (cf_sha256_file(plan->source, hex, NULL) == 0) {
            plan->source_id = cf_asprintf("sha256:%s", hex);
            return;
        }
    }
    if (plan->source_kind == CF_SRC_DIR) {
        /* The committed tree of this directory: unrelated commits elsewhere in
         * an enclosing repository do not invalidate the cache. */
        const char *argv[] = { "git", "-C", plan->source, "rev-parse", "HEAD:./", NULL };
        char *tree = cf_capture(argv, 10);
        if (tree && strlen(tree) == 40) {
            plan->source_id = cf_asprintf("dir:%s@tree:%s", plan->source, tree);
            free(tree);
            return;
        }
        free(tree);
        plan->source_id = cf_asprintf("dir:%s", plan->source);
        return;
    }
    plan->source_id = cf_asprintf("git:%s#%s", plan->source, plan->tag_text);
}

static void make_target(struct cf_nccl_plan *plan)
{
    struct strbuf name = STRBUF_INIT;
    cf_sb_adds(&name, "v");
    cf_nccl_version_format(&plan->tag, &name);
    cf_sb_addc(&name, '-');
    cf_arch_list_dirname(&plan->archs, &name);
    if (plan->vendor->arch_family == CF_ARCH_NVIDIA && !plan->ptx)
        cf_sb_adds(&name, "-noptx");
    if (plan->only_funcs) {
        char hex[65];
        cf_sha256_hex(plan->only_funcs, strlen(plan->only_funcs), hex);
        cf_sb_addf(&name, "-funcs%.8s", hex);
    }
    plan->target_name = cf_sb_detach(&name);
    char *nccl = cf_path_join(plan->root, "nccl");
    char *builds = cf_path_join(nccl, "builds"), *work = cf_path_join(nccl, "work"), *locks = cf_path_join(nccl, "locks");
    plan->target_dir = cf_path_join(builds, plan->target_name);
    plan->work_dir = cf_path_join(work, plan->target_name);
    plan->build_dir = cf_path_join(plan->work_dir, "build");
    plan->log_path = cf_path_join(plan->work_dir, "build.log");
    plan->src_dir = plan->source_kind == CF_SRC_DIR ? cf_strdup(plan->source) : cf_path_join(plan->work_dir, "src");
    plan->lock_path = cf_asprintf("%s/%s.lock", locks, plan->target_name);
    free(nccl);
    free(builds);
    free(work);
    free(locks);
}

static char *random_hex(void)
{
    unsigned char bytes[4] = { 0 };
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(bytes, 1, sizeof bytes, f) != sizeof bytes)
            memset(bytes, 0, sizeof bytes);
        fclose(f);
    }
    return cf_asprintf("%02x%02x%02x%02x", bytes[0], bytes[1], bytes[2], bytes[3]);
}

/* A Dockerfile with exec-form RUN lines (JSON arrays): no shell inside the
 * container ever sees the tag, URL or ONLY_FUNCS either. */
static void make_dockerfile(struct cf_nccl_plan *plan)
{
    struct strbuf df = STRBUF_INIT;
    cf_sb_addf(&df, "# Generated by cclforge nccl build --docker for %s\n", plan->target_name);
    cf_sb_addf(&df, "FROM %s\n", plan->docker_image);
    cf_sb_adds(&df, "ENV " CF_NCCL_GIT_ALLOW_PROTOCOL "\n"); /* in the container too */
    cf_sb_adds(&df, "RUN apt-get update && apt-get install -y --no-install-recommends git python3 make ca-certificates "
                 "&& rm -rf /var/lib/apt/lists/*\n");
    cJSON *clone = cJSON_CreateArray();
    const char *clone_args[] = { "git", "clone", "--depth", "1", "--branch", plan->tag_text, "-c",
                                 "advice.detachedHead=false", "--", plan->source, "/nccl-src" };
    for (size_t i = 0; i < sizeof clone_args / sizeof clone_args[0]; i++)
        cJSON_AddItemToArray(clone, cJSON_CreateString(clone_args[i]));
    char *clone_json = cJSON_PrintUnformatted(clone);
    cf_sb_addf(&df, "RUN %s\n", clone_json);
    cJSON *make = cJSON_CreateArray();
    struct strvec margs = STRVEC_INIT;
    cf_strvec_push(&margs, "make");
    cf_strvec_push(&margs, "-C");
    cf_strvec_push(&margs, "/nccl-src");
    cf_strvec_push(&margs, "src.build");
    cf_strvec_pushf(&margs, "NVCC_GENCODE=%s", plan->gencode);
    cf_strvec_push(&margs, "BUILDDIR=/nccl-build");
    cf_strvec_push(&margs, "CUDA_HOME=/usr/local/cuda");
    cf_strvec_pushf(&margs, "-j%d", plan->jobs);
    if (plan->only_funcs)
        cf_strvec_pushf(&margs, "ONLY_FUNCS=%s", plan->only_funcs);
    for (size_t i = 0; i < margs.n; i++)
        cJSON_AddItemToArray(make, cJSON_CreateString(margs.v[i]));
    char *make_json = cJSON_PrintUnformatted(make);
    cf_sb_addf(&df, "RUN %s\n", make_json);
    free(clone_json);
    free(make_json);
    cJSON_Delete(clone);
    cJSON_Delete(make);
    cf_strvec_clear(&margs);
    plan->dockerfile = cf_sb_detach(&df);
}

/* The paths make (or cmake) receives, and the one `nccl env` will hand to
 * ld.so: refused before anything is written when make, sh or ld.so would
 * split or expand them (cf_nccl_check_make_path). */
static int check_build_paths(const struct cf_nccl_plan *plan, int docker, cf_error *err)
{
    static const char root_fix[] = "use a root without spaces or shell/make metacharacters (--root or CCLFORGE_HOME)";
    if (cf_nccl_check_make_path("the install root", plan->root, root_fix, err) < 0)
        return -1;
    if (docker)
        return 0; /* nothing of the host's but the output directory reaches the container */
    /* make's CURDIR (in NCCL's $(abspath ...)) is the physical directory. */
    char *src = cf_nccl_physical_path(plan->src_dir);
    int rc = cf_nccl_check_make_path(
        plan->source_kind == CF_SRC_DIR ? "the source directory" : "the source checkout (under the root's real path)",
        src,
        plan->source_kind == CF_SRC_DIR ? "copy it to a path without them, or pass it as a tarball or git URL"
                                        : root_fix,
        err);
    free(src);
    if (rc == 0)
        rc = cf_nccl_check_make_path(plan->vendor->arch_family == CF_ARCH_AMD ? "the ROCm/DTK root" : "the CUDA toolkit",
                                     plan->toolkit_home,
                                     "use a toolkit path without them (a symlink to it works: only the path you give "
                                     "is passed on)",
                                     err);
    return rc;
}

/* The archs' family decides the vendor when none was given (gfx archs alone:
 * ROCm); one given that cannot build them is refused, naming the one that
 * can. PTX: asked for with an arch's "+PTX", never for AMD. */
static int fit_vendor_to_archs(struct cf_nccl_plan *plan, int vendor_given, cf_error *err)
{
    enum cf_arch_family family = cf_arch_list_family(&plan->archs);
    if (family != plan->vendor->arch_family) {
        if (vendor_given) {
            struct strbuf fits = STRBUF_INIT;
            for (int v = 0; v < CF_VENDOR_COUNT; v++)
                if (cf_vendor_get((enum cf_vendor)v)->arch_family == family)
                    cf_sb_addf(&fits, "%s%s", fits.len ? " or " : "--vendor ", cf_vendor_get((enum cf_vendor)v)->word);
            cf_error_set(err, CF_ERR_USAGE, "%s archs (%s) cannot be built with --vendor %s: use %s",
                         family == CF_ARCH_AMD ? "AMD" : "NVIDIA", plan->archs.v[0].name, plan->vendor->word,
                         cf_sb_str(&fits));
            cf_sb_release(&fits);
            return -1;
        }
        plan->vendor = cf_vendor_for_arch_family(family);
    }
    if (plan->vendor->arch_family == CF_ARCH_NVIDIA && plan->archs.ptx_requested)
        plan->ptx = 1;
    if (plan->vendor->arch_family == CF_ARCH_AMD)
        plan->ptx = 0;
    return 0;
}

/* RCCL has no default source; --docker builds NCCL only, from a git URL the
 * container clones itself (no build context is sent). */
static int check_source_fits(const struct cf_nccl_build_opts *opts, const struct cf_nccl_plan *plan, cf_error *err)
{
    if (plan->vendor->comm->lib == CF_COMMLIB_RCCL && plan->source_kind == CF_SRC_UPSTREAM)
        return cf_error_set(err, CF_ERR_USAGE, "RCCL builds need --source (a ROCm/rccl checkout, tarball or git URL)");
    if (!opts->docker)
        return 0;
    if (plan->vendor->comm->lib != CF_COMMLIB_NCCL)
        return cf_error_set(err, CF_ERR_USAGE, "--docker builds NCCL only; build RCCL natively against ROCm/DTK");
    if (plan->source_kind != CF_SRC_UPSTREAM && plan->source_kind != CF_SRC_GIT)
        return cf_error_set(err, CF_ERR_USAGE,
                            "--docker clones the source inside the container and sends no build context: use a git "
                            "URL or the default upstream source, not %s",
                            plan->source);
    if (strncmp(plan->source, "http", 4) && strncmp(plan->source, "git", 3))
        return cf_error_set(err, CF_ERR_USAGE, "--docker needs a network git URL the container can reach, not %s",
                            plan->source);
    return 0;
}

/* The image (given, else a CUDA devel image of the toolkit's major), and an
 * image tag and container name no other build shares. */
static void plan_docker(const char *image, struct cf_nccl_plan *plan)
{
    plan->docker = 1;
    plan->docker_image = image ? cf_strdup(image)
                               : cf_asprintf("nvidia/cuda:%s-devel-ubuntu22.04",
                                             plan->cuda_version && cf_cuda_version_code(plan->cuda_version) >= 13000
                                                 ? "13.0.0"
                                                 : "12.8.1");
    char *rnd = random_hex();
    plan->docker_tag = cf_asprintf("cclforge-nccl-build:%s-%d-%s", plan->target_name, (int)getpid(), rnd);
    plan->docker_container = cf_asprintf("cclforge-nccl-%s-%d-%s", plan->target_name, (int)getpid(), rnd);
    free(rnd);
    make_dockerfile(plan);
}

int cf_nccl_plan_make(const struct cf_nccl_build_opts *opts_in, struct cf_nccl_plan *plan, cf_error *err)
{
    memset(plan, 0, sizeof *plan);
    char *nvcc_archs = NULL, *torch_nccl = NULL, *survey_archs = NULL;
    int rc = -1;
    struct cf_nccl_build_opts filled = *opts_in; /* plus what the survey supplies */
    const struct cf_nccl_build_opts *opts = &filled;

    /* vendor: given, else inferred from gfx archs, else NVIDIA */
    int vendor_given = opts->vendor != NULL;
    plan->vendor = vendor_given ? cf_vendor_by_word(opts->vendor) : cf_vendor_get(CF_VENDOR_NVIDIA);
    if (!plan->vendor) {
        struct strbuf words = STRBUF_INIT;
        cf_vendor_words(&words);
        cf_error_set(err, CF_ERR_USAGE, "unknown --vendor '%s': use %s", opts->vendor, cf_sb_str(&words));
        cf_sb_release(&words);
        goto out;
    }
    plan->ptx = opts->ptx;
    if (opts->only_funcs && *opts->only_funcs) {
        if (cf_nccl_check_only_funcs(opts->only_funcs, err) < 0)
            goto out;
        plan->only_funcs = cf_strdup(opts->only_funcs);
    }
    if (opts->docker_image && cf_docker_reference_check(opts->docker_image, err) < 0)
        goto out;

    /* A malformed --tag is the user's mistake: say so before inferring defaults
     * (archs from the GPUs) whose absence would hide it. */
    struct cf_nccl_tag given_tag;
    if (opts->tag && cf_nccl_tag_parse(opts->tag, &given_tag, err) < 0)
        goto out;
    /* The survey only when a default needs it: a cache hit with --tag and --archs stays fast. */
    int need_torch = !opts->tag && !opts->torch_nccl_version, need_gpus = !opts->archs && !opts->survey_archs;
    if (opts->use_survey && (need_torch || need_gpus || opts->survey_file)) {
        if (cf_nccl_survey_defaults(opts->survey_file, need_torch || opts->survey_file, need_gpus, &torch_nccl,
                                    &survey_archs, err) < 0)
            goto out;
        if (torch_nccl && !filled.torch_nccl_version)
            filled.torch_nccl_version = torch_nccl;
        if (survey_archs && !filled.survey_archs)
            filled.survey_archs = survey_archs;
    }
    if (resolve_archs(opts, vendor_given, plan, err) < 0)
        goto out;
    if (fit_vendor_to_archs(plan, vendor_given, err) < 0 || classify_source(opts->source, plan, err) < 0 ||
        check_source_fits(opts, plan, err) < 0)
        goto out;
    if (resolve_toolkit(opts, plan, &nvcc_archs, err) < 0)
        goto out;
    if (plan->vendor->arch_family == CF_ARCH_NVIDIA &&
        cf_arch_check_cuda(&plan->archs, plan->cuda_version, nvcc_archs, err) < 0)
        goto out;
    if (resolve_tag(opts, plan, err) < 0 || resolve_jobs(opts, plan, err) < 0)
        goto out;

    struct strbuf gencode = STRBUF_INIT;
    if (plan->vendor->arch_family == CF_ARCH_NVIDIA)
        cf_arch_nvcc_gencode(&plan->archs, plan->ptx, &gencode);
    else
        cf_arch_list_join(&plan->archs, ";", &gencode);
    plan->gencode = cf_sb_detach(&gencode);

    char *root = opts->root ? cf_strdup(opts->root) : cf_nccl_default_root(err);
    if (!root)
        goto out;
    plan->root = cf_path_absolute(root);
    free(root);
    source_identity(plan);
    make_target(plan);
    if (check_build_paths(plan, opts->docker, err) < 0)
        goto out;

    if (opts->docker)
        plan_docker(opts->docker_image, plan);
    rc = 0;
out:
    free(nvcc_archs);
    free(torch_nccl);
    free(survey_archs);
    if (rc < 0)
        cf_nccl_plan_release(plan);
    return rc;
}

void cf_nccl_plan_steps(const struct cf_nccl_plan *plan, const char *docker_dir, struct cf_nccl_steps *steps)
{
    memset(steps, 0, sizeof *steps);
    if (plan->docker) {
        char *dockerfile = cf_path_join(docker_dir, "Dockerfile"), *context = cf_path_join(docker_dir, "empty-context");
        const char *build[] = { "docker", "build", "--tag", plan->docker_tag, "--file", dockerfile, context, NULL };
        const char *create[] = { "docker", "create", "--name", plan->docker_container, plan->docker_tag, NULL };
        const char *rm[] = { "docker", "rm", "--force", plan->docker_container, NULL };
        const char *rmi[] = { "docker", "rmi", "--force", plan->docker_tag, NULL };
        cf_strvec_push_all(&steps->build[0], build);
        cf_strvec_push_all(&steps->build[1], create);
        cf_strvec_push_all(&steps->build[2], (const char *[]){ "docker", "cp", NULL });
        cf_strvec_pushf(&steps->build[2], "%s:/nccl-build/.", plan->docker_container);
        cf_strvec_push(&steps->build[2], plan->build_dir);
        steps->n_build = 3;
        cf_strvec_push_all(&steps->cleanup[0], rm);
        cf_strvec_push_all(&steps->cleanup[1], rmi);
        steps->n_cleanup = 2;
        free(dockerfile);
        free(context);
        return;
    }
    if (plan->source_kind == CF_SRC_TARBALL) {
        const char *t[] = { "tar", "-xf", plan->source, "-C", plan->src_dir, "--strip-components=1", NULL };
        cf_strvec_push_all(&steps->fetch, t);
    } else if (plan->source_kind == CF_SRC_GIT || plan->source_kind == CF_SRC_UPSTREAM) {
        const char *g[] = { "git", "clone", "--depth", "1", "--branch", plan->tag_text, "-c", "advice.detachedHead=false",
                            "--", plan->source, plan->src_dir, NULL };
        cf_strvec_push_all(&steps->fetch, g);
    }
    if (plan->vendor->comm->lib == CF_COMMLIB_NCCL) { /* NCCL's makefiles; RCCL below builds with CMake */
        struct strvec *m = &steps->build[0];
        cf_strvec_push_all(m, (const char *[]){ "make", "-C", plan->src_dir, "src.build", NULL });
        cf_strvec_pushf(m, "NVCC_GENCODE=%s", plan->gencode);
        cf_strvec_pushf(m, "BUILDDIR=%s", plan->build_dir);
        cf_strvec_pushf(m, "CUDA_HOME=%s", plan->toolkit_home);
        cf_strvec_pushf(m, "-j%d", plan->jobs);
        if (plan->only_funcs)
            cf_strvec_pushf(m, "ONLY_FUNCS=%s", plan->only_funcs);
        steps->n_build = 1;
        return;
    }
    /* RCCL: its CMake build. hipcc is the compiler when the toolkit has one. */
    struct strvec *c = &steps->build[0];
    const char *configure[] = { "cmake", "-S", plan->src_dir, "-B", plan->build_dir, "-DCMAKE_BUILD_TYPE=Release", NULL };
    cf_strvec_push_all(c, configure);
    cf_strvec_pushf(c, "-DGPU_TARGETS=%s", plan->gencode);
    cf_strvec_pushf(c, "-DROCM_PATH=%s", plan->toolkit_home);
    cf_strvec_pushf(c, "-DCMAKE_PREFIX_PATH=%s", plan->toolkit_home);
    cf_strvec_push(c, "-DBUILD_TESTS=OFF");
    char *hipcc = toolkit_compiler(plan);
    if (cf_is_file(hipcc))
        cf_strvec_pushf(c, "-DCMAKE_CXX_COMPILER=%s", hipcc);
    free(hipcc);
    if (plan->only_funcs)
        cf_strvec_pushf(c, "-DONLY_FUNCS=%s", plan->only_funcs);
    cf_strvec_push_all(&steps->build[1], (const char *[]){ "cmake", "--build", plan->build_dir, "--parallel", NULL });
    cf_strvec_pushf(&steps->build[1], "%d", plan->jobs);
    steps->n_build = 2;
}

void cf_nccl_steps_release(struct cf_nccl_steps *steps)
{
    cf_strvec_clear(&steps->fetch);
    for (size_t i = 0; i < 4; i++)
        cf_strvec_clear(&steps->build[i]);
    for (size_t i = 0; i < 2; i++)
        cf_strvec_clear(&steps->cleanup[i]);
}

void cf_shell_quote(const char *word, struct strbuf *out)
{
    int plain = *word != 0;
    for (const char *p = word; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("@%+=:,./_-", *p))
            plain = 0;
    if (plain) {
        cf_sb_adds(out, word);
        return;
    }
    cf_sb_addc(out, '\'');
    for (const char *p = word; *p; p++) {
        if (*p == '\'')
            cf_sb_adds(out, "'\\''");
        else
            cf_sb_addc(out, *p);
    }
    cf_sb_addc(out, '\'');
}

static void push_line(struct strvec *lines, const struct strvec *argv)
{
    if (argv->n == 0)
        return;
    struct strbuf line = STRBUF_INIT;
    for (size_t i = 0; i < argv->n; i++) {
        if (i)
            cf_sb_addc(&line, ' ');
        cf_shell_quote(argv->v[i], &line);
    }
    cf_strvec_push_nodup(lines, cf_sb_detach(&line));
}

void cf_nccl_plan_commands(const struct cf_nccl_plan *plan, struct strvec *lines)
{
    struct cf_nccl_steps steps;
    cf_nccl_plan_steps(plan, "$DOCKER_DIR", &steps);
    push_line(lines, &steps.fetch);
    for (size_t i = 0; i < steps.n_build; i++)
        push_line(lines, &steps.build[i]);
    for (size_t i = 0; i < steps.n_cleanup; i++)
        push_line(lines, &steps.cleanup[i]);
    cf_nccl_steps_release(&steps);
}

void cf_nccl_plan_release(struct cf_nccl_plan *plan)
{
    char **strings[] = { &plan->toolkit_origin, &plan->tag_text, &plan->tag_origin, &plan->archs_origin, &plan->gencode,
                         &plan->source, &plan->source_id, &plan->only_funcs, &plan->root, &plan->target_name,
                         &plan->target_dir, &plan->work_dir, &plan->build_dir, &plan->src_dir, &plan->log_path,
                         &plan->lock_path, &plan->toolkit_home, &plan->cuda_version, &plan->compiler,
                         &plan->docker_image, &plan->docker_tag, &plan->docker_container, &plan->dockerfile };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        free(*strings[i]);
        *strings[i] = NULL;
    }
    cf_arch_list_release(&plan->archs);
    cf_strvec_clear(&plan->warnings);
}
