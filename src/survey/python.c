/* Asking a Python interpreter about itself and where its packages are, without
 * importing them: share/cclforge/python/python_probe.py, which says how. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cclforge/depcache.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/share.h"
#include "cclforge/spawn.h"
#include "survey/survey_internal.h"

/* The JSON keys and where each goes. */
static const struct {
    const char *key;
    size_t field;
} info_fields[] = {
    { "executable", offsetof(struct cf_python_info, executable) },
    { "version", offsetof(struct cf_python_info, version) },
    { "tag", offsetof(struct cf_python_info, tag) },
    { "ext_suffix", offsetof(struct cf_python_info, ext_suffix) },
    { "include", offsetof(struct cf_python_info, include) },
    { "torch", offsetof(struct cf_python_info, torch_dir) },
    { "nvidia.nccl", offsetof(struct cf_python_info, nccl_dir) },
};

/* Runs the probe: its JSON on *json. */
static int run_probe(const char *exe, const char *const *env, int isolated, struct strbuf *json, cf_error *err)
{
    char *probe = cf_share_need("python/python_probe.py", err);
    if (!probe)
        return -1;
    const char *argv[4];
    size_t n = 0;
    argv[n++] = exe;
    if (isolated)
        argv[n++] = "-I";
    argv[n++] = probe;
    argv[n] = NULL;
    struct cf_spawn_opts so = cf_spawn_probe_opts(60);
    so.env_set = env;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    int rc = 0;
    if (cf_spawn_run(argv, &so, &r, err) < 0) {
        rc = -1;
    } else if (!cf_spawn_ok(&r)) {
        char *how = cf_spawn_describe(&r);
        cf_sb_rtrim(&r.err);
        rc = cf_error_set(err, CF_ERR_FAILED, "%s could not describe itself (%s): %s", exe, how, cf_sb_str(&r.err));
        free(how);
    } else {
        cf_sb_add(json, r.out.buf, r.out.len);
    }
    cf_spawn_result_release(&r);
    free(probe);
    return rc;
}

/* The probe's JSON into out; the directories it depends on (its real
 * executable, sys.path, the packages found) into deps when deps is not NULL. */
static int parse_probe(const char *exe, const struct strbuf *json, struct cf_python_info *out, struct strvec *deps,
                       cf_error *err)
{
    cJSON *doc = cJSON_ParseWithLength(cf_sb_str(json), json->len);
    for (size_t i = 0; i < sizeof info_fields / sizeof info_fields[0]; i++) {
        const char *v = cf_json_str(doc, info_fields[i].key);
        if (v && v[0])
            *(char **)((char *)out + info_fields[i].field) = cf_strdup(v);
    }
    if (deps) {
        const char *real = cf_json_str(doc, "real_executable");
        if (real)
            cf_strvec_push(deps, real);
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(doc, "path"))
            if (cJSON_IsString(p) && p->valuestring[0] == '/' && !cf_strvec_contains(deps, p->valuestring))
                cf_strvec_push(deps, p->valuestring);
        if (out->torch_dir)
            cf_strvec_push(deps, out->torch_dir);
        if (out->nccl_dir)
            cf_strvec_push(deps, out->nccl_dir);
    }
    cJSON_Delete(doc);
    if (!out->executable)
        return cf_error_set(err, CF_ERR_FORMAT, "%s printed no description of itself: is it a Python 3?", exe);
    return 0;
}

int cf_python_probe(const char *python, const char *const *env, int isolated, struct cf_python_info *out,
                    cf_error *err)
{
    memset(out, 0, sizeof *out);
    char *exe = cf_which(python);
    if (!exe)
        return cf_error_set(err, CF_ERR_NOTFOUND, "Python '%s' not found; pass its path", python);
    struct strbuf json = STRBUF_INIT;
    int rc = run_probe(exe, env, isolated, &json, err);
    if (rc == 0)
        rc = parse_probe(exe, &json, out, NULL, err);
    cf_sb_release(&json);
    free(exe);
    return rc;
}

/* What decides a probe's answer besides the files it depends on: the
 * command, where it runs, and the variables Python and its launchers read. */
static void probe_key(const struct probe_ctx *ctx, const char *exe, struct strbuf *key)
{
    static const char *const vars[] = { "PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONUSERBASE",
                                        "PYTHONSAFEPATH", "PYTHONPLATLIBDIR", "VIRTUAL_ENV", "CONDA_PREFIX",
                                        "PYENV_VERSION", "PYENV_ROOT", "HOME" };
    char cwd[4096];
    cf_sb_addf(key, "exe=%s\ncwd=%s\n", exe, getcwd(cwd, sizeof cwd) ? cwd : "?");
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = cf_env_get(ctx->opts, vars[i]);
        cf_sb_addf(key, "%s%s%s\n", vars[i], v ? "=" : " unset", v ? v : "");
    }
}

/* A launcher script (pyenv's shim) picks the interpreter from a
 * .python-version in the working directory or a parent, else its global
 * version file: each of those is part of the answer, present or absent. */
static void launcher_deps(const char *exe, struct strvec *deps)
{
    struct strbuf head = STRBUF_INIT;
    int script = cf_read_file(exe, 1 << 16, &head, NULL) == 0 && head.len > 2 && head.buf[0] == '#' && head.buf[1] == '!';
    cf_sb_release(&head);
    if (!script)
        return;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return;
    for (char *dir = cf_strdup(cwd);; ) {
        cf_strvec_pushf(deps, "?%s/.python-version", strcmp(dir, "/") == 0 ? "" : dir);
        char *up = cf_dirname(dir);
        int top = strcmp(up, dir) == 0;
        free(dir);
        dir = up;
        if (top) {
            free(dir);
            break;
        }
    }
    const char *home = getenv("HOME");
    const char *root = getenv("PYENV_ROOT");
    char *version = root ? cf_path_join(root, "version") : home ? cf_asprintf("%s/.pyenv/version", home) : NULL;
    if (version)
        cf_strvec_pushf(deps, "?%s", version);
    free(version);
}

/* cf_python_probe for the survey, through the probe cache (unless --no-cache). */
static int probe_cached(struct probe_ctx *ctx, const char *python, struct cf_python_info *out)
{
    memset(out, 0, sizeof *out);
    char *exe = cf_which(python);
    if (!exe)
        return -1;
    struct strbuf key = STRBUF_INIT, json = STRBUF_INIT;
    probe_key(ctx, exe, &key);
    int rc = 0;
    if (!ctx->opts->no_cache && cf_depcache_get("python", key.buf, key.len, &json)) {
        rc = parse_probe(exe, &json, out, NULL, NULL);
    } else if ((rc = run_probe(exe, ctx->opts->env, 0, &json, NULL)) == 0) {
        struct strvec deps = STRVEC_INIT;
        cf_strvec_push(&deps, exe);
        char *real = cf_realpath(exe);
        if (real && strcmp(real, exe) != 0)
            cf_strvec_push(&deps, real);
        free(real);
        launcher_deps(exe, &deps);
        rc = parse_probe(exe, &json, out, &deps, NULL);
        if (rc == 0 && !ctx->opts->no_cache)
            cf_depcache_put("python", key.buf, key.len, json.buf, json.len, (const char *const *)cf_strvec_argv(&deps));
        cf_strvec_clear(&deps);
    }
    cf_sb_release(&key);
    cf_sb_release(&json);
    free(exe);
    return rc;
}

void cf_python_info_release(struct cf_python_info *info)
{
    for (size_t i = 0; i < sizeof info_fields / sizeof info_fields[0]; i++)
        free(*(char **)((char *)info + info_fields[i].field));
    memset(info, 0, sizeof *info);
}

const struct cf_python_info *cf_python_locate(struct probe_ctx *ctx)
{
    if (ctx->python_tried)
        return ctx->py.executable ? &ctx->py : NULL;
    ctx->python_tried = 1;
    if (ctx->opts->skip & CF_SURVEY_SKIP_PYTHON)
        return NULL;
    /* PYTHONPATH and friends as the caller sees them */
    if (probe_cached(ctx, ctx->opts->python ? ctx->opts->python : "python3", &ctx->py) < 0)
        cf_python_info_release(&ctx->py);
    return ctx->py.executable ? &ctx->py : NULL;
}
