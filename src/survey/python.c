/* Asking a Python interpreter about itself and where its packages are, without
 * importing them: importlib.util.find_spec locates a package from sys.path
 * without running its __init__ (importing torch takes seconds and may fail on a
 * broken install, which is what we are diagnosing). For a dotted name it
 * imports only the parent ("nvidia", a namespace package with no code). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/json.h"
#include "cclforge/spawn.h"
#include "survey/survey_internal.h"

static const char probe_code[] =
    "import importlib.util, json, sys, sysconfig\n"
    "def locate(name):\n"
    "    try:\n"
    "        spec = importlib.util.find_spec(name)\n"
    "    except Exception:\n"
    "        return None\n"
    "    locs = list(spec.submodule_search_locations or []) if spec else []\n"
    "    return locs[0] if locs else None\n"
    "print(json.dumps({'executable': sys.executable,\n"
    "  'version': '%d.%d' % sys.version_info[:2], 'tag': 'cp%d%d' % sys.version_info[:2],\n"
    "  'ext_suffix': sysconfig.get_config_var('EXT_SUFFIX'), 'include': sysconfig.get_paths().get('include'),\n"
    "  'torch': locate('torch'), 'nvidia.nccl': locate('nvidia.nccl')}))\n";

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

int cf_python_probe(const char *python, const char *const *env, int isolated, struct cf_python_info *out,
                    cf_error *err)
{
    memset(out, 0, sizeof *out);
    char *exe = cf_which(python);
    if (!exe)
        return cf_error_set(err, CF_ERR_NOTFOUND, "Python '%s' not found; pass its path", python);
    const char *argv[5];
    size_t n = 0;
    argv[n++] = exe;
    if (isolated)
        argv[n++] = "-I";
    argv[n++] = "-c";
    argv[n++] = probe_code;
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
        cJSON *doc = cJSON_ParseWithLength(cf_sb_str(&r.out), r.out.len);
        for (size_t i = 0; i < sizeof info_fields / sizeof info_fields[0]; i++) {
            const char *v = cf_json_str(doc, info_fields[i].key);
            if (v && v[0])
                *(char **)((char *)out + info_fields[i].field) = cf_strdup(v);
        }
        cJSON_Delete(doc);
        if (!out->executable)
            rc = cf_error_set(err, CF_ERR_FORMAT, "%s printed no description of itself: is it a Python 3?", exe);
    }
    cf_spawn_result_release(&r);
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
    if (cf_python_probe(ctx->opts->python ? ctx->opts->python : "python3", ctx->opts->env, 0, &ctx->py, NULL) < 0)
        cf_python_info_release(&ctx->py);
    return ctx->py.executable ? &ctx->py : NULL;
}
