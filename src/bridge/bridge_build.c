/* `bridge build`: compile and link the bridge with argv spawns, lay it out as it
 * will be installed (<package>/<module><EXT_SUFFIX>, bundled libraries in
 * <package>/lib), then inspect the result without loading it. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/atomic_file.h"
#include "cclforge/bridge.h"
#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "cclforge/clock.h"
#include "pkg/elf_facts.h"

void cf_bridge_compile_argv(const struct cf_bridge_plan *p, const char *object, struct strvec *argv)
{
    cf_strvec_push(argv, p->cxx.value ? p->cxx.value : "g++");
    cf_strvec_pushf(argv, "-std=%s", p->cxx_std ? p->cxx_std : "c++17");
    cf_strvec_push(argv, "-O2");
    cf_strvec_push(argv, "-fPIC");
    /* only PyInit_<name> needs to be visible */
    cf_strvec_push(argv, "-fvisibility=hidden");
    for (size_t i = 0; i < p->n_defines; i++)
        cf_strvec_pushf(argv, "-D%s", p->defines[i].value);
    for (size_t i = 0; i < p->n_includes; i++) {
        cf_strvec_push(argv, "-isystem");
        cf_strvec_push(argv, p->includes[i].value);
    }
    cf_strvec_push(argv, "-c");
    cf_strvec_push(argv, p->source.value ? p->source.value : "cclforge_nccl_bridge.cpp");
    cf_strvec_push(argv, "-o");
    cf_strvec_push(argv, object);
}

void cf_bridge_link_argv(const struct cf_bridge_plan *p, const char *object, const char *output, struct strvec *argv)
{
    cf_strvec_push(argv, p->cxx.value ? p->cxx.value : "g++");
    cf_strvec_push(argv, "-shared");
    cf_strvec_push(argv, "-o");
    cf_strvec_push(argv, output);
    cf_strvec_push(argv, object);
    /* exactly the planned libraries become NEEDED, by their file names */
    cf_strvec_push(argv, "-Wl,--no-as-needed");
    for (size_t i = 0; i < p->n_libs; i++) {
        if (!p->libs[i].path)
            continue;
        char *dir = cf_dirname(p->libs[i].path);
        cf_strvec_pushf(argv, "-L%s", dir);
        cf_strvec_pushf(argv, "-l:%s", cf_basename(p->libs[i].path));
        free(dir);
    }
    cf_strvec_push(argv, "-Wl,--as-needed");
    for (size_t i = 0; i < p->n_rpath; i++)
        cf_strvec_pushf(argv, "-Wl,-rpath,%s", p->rpath[i].value);
}

/* Where an RPATH entry of the installed layout points on this machine. */
static char *layout_dir(const struct cf_bridge_plan *p, const char *entry, const char *pkg_dir)
{
    if (!strcmp(entry, "$ORIGIN/lib"))
        return cf_path_join(pkg_dir, "lib");
    if (!strcmp(entry, "$ORIGIN/../torch/lib") && p->torch_dir.value)
        return cf_path_join(p->torch_dir.value, "lib");
    if (!strcmp(entry, "$ORIGIN/../nvidia/nccl/lib") && p->torch_dir.value) {
        char *site = cf_dirname(p->torch_dir.value);
        char *d = cf_asprintf("%s/nvidia/nccl/lib", site);
        free(site);
        return d;
    }
    if (entry[0] == '/')
        return cf_strdup(entry);
    return NULL;
}

int cf_bridge_inspect_output(const struct cf_bridge_plan *p, const char *output, struct cf_bridge_build_result *res,
                             cf_error *err)
{
    struct elf_facts f;
    if (cf_elf_facts_read_file(output, &f, err) < 0)
        return -1;
    if (!f.is_elf)
        return cf_error_set(err, CF_ERR_FAILED, "%s is not an ELF file", output);
    char *pkg_dir = cf_dirname(output);
    for (size_t i = 0; i < f.needed.n; i++)
        cf_strvec_push(&res->needed, f.needed.v[i]);
    for (size_t i = 0; i < f.rpath.n; i++) {
        const char *e = f.rpath.v[i];
        cf_strvec_push(&res->rpath, e);
        int declared = 0;
        for (size_t k = 0; k < p->n_rpath; k++)
            declared |= !strcmp(p->rpath[k].value, e);
        if (cf_elf_rpath_is_origin_relative(e))
            cf_strvec_pushf(&res->checks, "ok: RPATH %s is $ORIGIN-relative", e);
        else if (e[0] == '/' && declared)
            cf_strvec_pushf(&res->checks, "ok: RPATH %s is a declared external (--external-rpath)", e);
        else
            cf_strvec_pushf(&res->problems, "RPATH %s is %s: the installed wheel must not depend on the build machine's "
                                         "paths",
                         e, e[0] == '/' ? "an absolute path" : "not $ORIGIN-relative");
    }
    char *want = cf_asprintf("PyInit_%s", p->module_name);
    if (cf_strvec_contains(&f.pyinit, want))
        cf_strvec_pushf(&res->checks, "ok: %s is exported", want);
    else
        cf_strvec_pushf(&res->problems, "%s is not exported: Python cannot import the module as %s", want, p->module_name);
    free(want);
    for (size_t i = 0; i < f.needed.n; i++) {
        const char *lib = f.needed.v[i];
        if (cf_elf_is_manylinux_system_lib(lib)) {
            cf_strvec_pushf(&res->checks, "ok: NEEDED %s is a system library", lib);
            continue;
        }
        struct strbuf tried = STRBUF_INIT;
        const char *hit = NULL;
        for (size_t r = 0; r < f.rpath.n && !hit; r++) {
            char *dir = layout_dir(p, f.rpath.v[r], pkg_dir);
            if (!dir)
                continue;
            char *cand = cf_path_join(dir, lib);
            cf_sb_addf(&tried, "%s%s (%s)", tried.len ? ", " : "", dir, f.rpath.v[r]);
            if (cf_is_file(cand))
                hit = f.rpath.v[r];
            free(cand);
            free(dir);
        }
        if (hit)
            cf_strvec_pushf(&res->checks, "ok: NEEDED %s resolves through %s", lib, hit);
        else
            cf_strvec_pushf(&res->problems, "NEEDED %s is not resolvable in the installed layout; looked in: %s. Bundle it "
                                         "(--bundle FILE) or declare its directory (--external-rpath DIR)",
                         lib, tried.len ? tried.buf : "no RPATH entries");
        cf_sb_release(&tried);
    }
    free(pkg_dir);
    cf_elf_facts_release(&f);
    return 0;
}

static int copy_file(const char *from, const char *to, unsigned mode, cf_error *err)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = cf_read_file(from, (size_t)4 << 30, &sb, err);
    if (rc == 0)
        rc = cf_write_file_at(AT_FDCWD, to, sb.buf ? sb.buf : "", sb.len, mode, err);
    cf_sb_release(&sb);
    return rc;
}

static int run_logged(const struct strvec *argv, const char *log, double *seconds, const char *what, cf_error *err)
{
    struct cf_spawn_opts so = { 0 };
    so.merge_stderr = 1;
    so.capture_stdout = 1;
    so.capture_limit = 64 * 1024;
    so.log_path = log;
    so.null_stdin = 1;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    double t0 = cf_now_seconds();
    int rc = cf_spawn_run((const char *const *)argv->v, &so, &r, err);
    *seconds = cf_now_seconds() - t0;
    if (rc == 0 && !cf_spawn_ok(&r)) {
        char *how = cf_spawn_describe(&r);
        const char *out = cf_sb_str(&r.out);
        size_t len = strlen(out);
        cf_error_set(err, CF_ERR_FAILED, "%s failed (%s); full log: %s\n%s", what, how, log,
                     len > 3000 ? out + len - 3000 : out);
        free(how);
        rc = -1;
    }
    cf_spawn_result_release(&r);
    return rc;
}

static int write_text(const char *path, const char *text, cf_error *err)
{
    return cf_write_file_atomic(path, text, strlen(text), err);
}

int cf_bridge_build(const struct cf_bridge_plan *p, const char *out_dir, struct cf_bridge_build_result *res,
                    cf_error *err)
{
    memset(res, 0, sizeof *res);
    if (p->problems.n)
        return cf_error_set(err, CF_ERR_FAILED, "the plan has %zu problem(s); the first: %s", p->problems.n,
                            p->problems.v[0]);
    if (cf_mkdir_p(out_dir, 0755, err) < 0)
        return -1;
    char *abs_out = cf_realpath(out_dir);
    char *pkg_dir = cf_path_join(abs_out, p->package);
    char *lib_dir = cf_path_join(pkg_dir, "lib");
    char *object_name = cf_asprintf("%s/%s.o", abs_out, p->module_name);
    char *output = cf_path_join(pkg_dir, p->output_name);
    /* The compiler and the linker write to unpredictable temporaries (nothing
     * planted at a known name is written through); only the linked output is
     * renamed into place. */
    struct cf_atomic_file object = { .fd = -1, .dir_fd = -1 }, linked = { .fd = -1, .dir_fd = -1 };
    res->log_path = cf_path_join(abs_out, "build.log");
    struct strvec cargv = STRVEC_INIT, largv = STRVEC_INIT;
    int rc = -1;
    unlink(res->log_path);
    if (cf_mkdir_p(pkg_dir, 0755, err) < 0 || cf_atomic_begin(&object, AT_FDCWD, object_name, 0644, err) < 0 ||
        cf_atomic_begin(&linked, AT_FDCWD, output, 0755, err) < 0)
        goto out;

    cf_bridge_compile_argv(p, object.tmp_path, &cargv);
    if (run_logged(&cargv, res->log_path, &res->compile_seconds, "compiling the bridge", err) < 0)
        goto out;
    cf_bridge_link_argv(p, object.tmp_path, linked.tmp_path, &largv);
    if (run_logged(&largv, res->log_path, &res->link_seconds, "linking the bridge", err) < 0)
        goto out;
    if (cf_atomic_commit(&linked, err) < 0)
        goto out;
    res->output = cf_strdup(output);

    /* the package around it, as it will be installed */
    char *init = cf_asprintf("\"\"\"cclforge bridge (%s): c10d::ProcessGroupNCCL of the vendor libtorch.\"\"\"\n"
                             "import torch.distributed  # registers Store and Backend before the extension loads\n"
                             "from .%s import make_nccl_backend  # noqa: F401\n",
                             cf_vendor_get(p->vendor)->word, p->module_name);
    char *init_path = cf_path_join(pkg_dir, "__init__.py");
    int wrc = write_text(init_path, init, err);
    free(init);
    free(init_path);
    if (wrc < 0)
        goto out;
    if (p->bundle_libs.n && cf_mkdir_p(lib_dir, 0755, err) < 0)
        goto out;
    for (size_t i = 0; i < p->bundle_libs.n; i++) {
        char *to = cf_path_join(lib_dir, cf_basename(p->bundle_libs.v[i]));
        int crc = copy_file(p->bundle_libs.v[i], to, 0755, err);
        free(to);
        if (crc < 0)
            goto out;
    }

    /* what `bridge wheel` needs to package this build without rebuilding it */
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.bridge-build/1");
    cJSON_AddStringToObject(doc, "module", p->module_name);
    cJSON_AddStringToObject(doc, "package", p->package);
    cJSON_AddStringToObject(doc, "vendor", cf_vendor_get(p->vendor)->word);
    cJSON_AddStringToObject(doc, "python_tag", p->python_tag ? p->python_tag : "");
    cJSON_AddStringToObject(doc, "extension", p->output_name);
    if (p->torch_version)
        cJSON_AddStringToObject(doc, "torch_version", p->torch_version);
    cJSON *ext = cJSON_AddArrayToObject(doc, "externals");
    for (size_t i = 0; i < p->n_rpath; i++) {
        const char *e = p->rpath[i].value;
        if (cf_starts_with(e, "$ORIGIN/../"))
            cJSON_AddItemToArray(ext, cJSON_CreateString(e + strlen("$ORIGIN/../")));
        else if (e[0] == '/')
            cJSON_AddItemToArray(ext, cJSON_CreateString(e));
    }
    cJSON *bundled = cJSON_AddArrayToObject(doc, "bundled");
    for (size_t i = 0; i < p->bundle_libs.n; i++)
        cJSON_AddItemToArray(bundled, cJSON_CreateString(cf_basename(p->bundle_libs.v[i])));
    char *json = cJSON_Print(doc);
    cJSON_Delete(doc);
    char *json_path = cf_path_join(abs_out, "cclforge-build.json");
    wrc = write_text(json_path, json, err);
    free(json);
    free(json_path);
    if (wrc < 0)
        goto out;

    if (cf_bridge_inspect_output(p, output, res, err) < 0)
        goto out;
    if (res->problems.n) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < res->problems.n; i++)
            cf_sb_addf(&sb, "\n  - %s", res->problems.v[i]);
        cf_error_set(err, CF_ERR_FAILED, "%s was built but fails inspection:%s", output, sb.buf);
        cf_sb_release(&sb);
        goto out;
    }
    rc = 0;
out:
    cf_atomic_abort(&linked);
    cf_atomic_abort(&object);
    cf_strvec_clear(&cargv);
    cf_strvec_clear(&largv);
    free(abs_out);
    free(pkg_dir);
    free(lib_dir);
    free(object_name);
    free(output);
    return rc;
}

void cf_bridge_build_result_release(struct cf_bridge_build_result *res)
{
    free(res->output);
    free(res->log_path);
    cf_strvec_clear(&res->needed);
    cf_strvec_clear(&res->rpath);
    cf_strvec_clear(&res->checks);
    cf_strvec_clear(&res->problems);
    memset(res, 0, sizeof *res);
}
